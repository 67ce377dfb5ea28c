// Stage 12 (step 1) and its step 2 (the interleave, as a variant) against stage 07 (its base: the NVFP4
// GEMM of the same A, B, scales and alpha, without the low-rank term and the affine epilogue: the
// difference is what the low-rank branch costs) and the unfused baseline (the kind's peer: dequantize
// + cuBLAS into FP32, cuBLAS's low-rank GEMM added, an affine kernel) at the kind's shapes (FLUX.1
// layers at R = 32 and 128, the worklog's). On Hopper the tcgen05 rows run EMULATED at small shapes
// only: their times measure the emulator, not the kernel; the baseline's are real.
#include "kernel.cuh"

#include "common/harness/bench.h"

int main(int argc, char** argv) {
  gemm::bench::Plan plan;  // the kind's shapes
  plan.variants = {gemm::bench::registered_variant("12_svdquant_interleaved")};  // step 2
  plan.emulated_shapes = {gemm::svdquant_shape(256, 256, 512, 1, {}), gemm::svdquant_shape(512, 512, 512, 1, {}),
                          gemm::svdquant_shape(512, 512, 512, 1, {128, gemm::Format16::kBf16, gemm::Format16::kBf16})};
  return gemm::bench::run(argc, argv, stage12::kStage, GEMM_PREDECESSOR_ID, plan);
}
