// Stage 07 against stage 06 and the library peer, at the M = 128 shapes and the squares. On a B200
// the peer is cuBLASLt's NVFP4 GEMM. On Hopper the peer is dequantize-to-BF16 + cuBLAS, and the
// tcgen05 stages' rows run EMULATED at small shapes only: their times measure the emulator.
#include "kernel.cuh"

#include "common/harness/bench.h"

int main(int argc, char** argv) {
  gemm::bench::Plan plan;  // the kind's shapes: M = 128 decode-like ones, then the squares
  plan.emulated_shapes = {{128, 512, 1024}, {256, 256, 512}, {512, 512, 512}};
  return gemm::bench::run(argc, argv, stage07::kStage, GEMM_PREDECESSOR_ID, plan);
}
