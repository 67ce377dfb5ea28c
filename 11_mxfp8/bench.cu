// Stage 11 (step 3, kernel.cuh) and its steps 1 and 2 (as variants, through the registry) against stage
// 07 (its base: the NVFP4 GEMM at the same shape, on its own inputs) and the library peer, at the seed's
// squares (FP32 C) and one BF16-output shape. On a B200 the peer is cuBLASLt's MXFP8 GEMM; on Hopper it
// is dequantize-to-BF16 + cuBLAS, and the tcgen05 rows run EMULATED at small shapes only: their times
// measure the emulator, not the kernel.
#include "kernel.cuh"

#include "common/harness/bench.h"

int main(int argc, char** argv) {
  gemm::bench::Plan plan;  // the kind's shapes: 2048^3 .. 16384^3 FP32 out, 8192 x 8192 x 4096 BF16 out
  plan.variants = {gemm::bench::registered_variant("11_mxfp8_format"), gemm::bench::registered_variant("11_mxfp8_n256")};
  plan.emulated_shapes = {{256, 256, 512},
                          {512, 512, 512},
                          gemm::mxfp8_shape(512, 512, 512, 1, {gemm::Mxfp8Output::kBf16, gemm::Mxfp8Element::kE4M3,
                                                               gemm::Mxfp8Element::kE4M3})};
  return gemm::bench::run(argc, argv, stage11::kStage, GEMM_PREDECESSOR_ID, plan);
}
