// Stage 04 against stage 03 and the BF16 peer, at the M = 128 shapes and the squares.
#include "kernel.cuh"

#include "common/harness/bench.h"

int main(int argc, char** argv) {
  return gemm::bench::run(argc, argv, stage04::kStage, GEMM_PREDECESSOR_ID);  // the kind's shapes
}
