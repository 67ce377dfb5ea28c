// Stage 05's two steps against stage 04 and the library peer, at the M = 128 shapes and the squares:
// the CTA pair (kernel.cuh, the stage) and the one-CTA step (kernel_1cta.cuh, label "variant", through
// the registry). On a
// B200 the peer is cuBLASLt's NVFP4 GEMM. On Hopper the peer is dequantize-to-BF16 + cuBLAS, and both
// steps run EMULATED at small shapes only: their times measure the emulator, not the kernel
// (docs/plot.py keeps them out of every performance plot).
#include "kernel.cuh"

#include "common/harness/bench.h"

int main(int argc, char** argv) {
  gemm::bench::Plan plan;  // the kind's shapes: M = 128 decode-like ones, then the squares
  plan.emulated_shapes = {{128, 512, 1024}, {256, 256, 512}, {512, 512, 512}};
  plan.variants = {gemm::bench::registered_variant("05_tcgen05_1cta")};
  return gemm::bench::run(argc, argv, stage05::kStage, GEMM_PREDECESSOR_ID, plan);
}
