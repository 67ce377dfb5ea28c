// Stage 12 against stage 07 (its base: the NVFP4 GEMM of the same A, B, scales and alpha, without the
// low-rank term and the affine epilogue: the difference is what the low-rank branch costs) at the
// kind's shapes (FLUX.1 layers at R = 32 and 128, the worklog's). No library computes this kind, so
// there is no peer. On Hopper the tcgen05 rows run EMULATED at small shapes only: their times measure
// the emulator, not the kernel.
#include "kernel.cuh"

#include "common/harness/bench.h"

int main(int argc, char** argv) {
  gemm::bench::Plan plan;  // the kind's shapes
  plan.emulated_shapes = {gemm::svdquant_shape(256, 256, 512, 1, {}), gemm::svdquant_shape(512, 512, 512, 1, {}),
                          gemm::svdquant_shape(512, 512, 512, 1, {128, gemm::Format16::kBf16, gemm::Format16::kBf16})};
  return gemm::bench::run(argc, argv, stage12::kStage, GEMM_PREDECESSOR_ID, plan);
}
