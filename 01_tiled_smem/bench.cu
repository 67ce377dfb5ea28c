// Stage 01 against stage 00 and cuBLAS SGEMM (FP32, TF32 off) on square problems, in one run.
#include "kernel.cuh"

#include "common/harness/bench.h"

int main(int argc, char** argv) {
  return gemm::bench::run(argc, argv, stage01::kStage, GEMM_PREDECESSOR_ID);  // the kind's squares, 1024-8192
}
