// Stage 09 against the streaming-read ceiling (read with 1 and 2 chunks per thread: the kind's rows),
// its base (stage 04 at N = 1) and the peers, at the public GEMV shapes (M x K x L = 7168 x 16384 x 1,
// 4096 x 7168 x 8, 7168 x 2048 x 4), a sweep of M and K, and small M (K split across a cluster). The variants are the steps docs/design_measurements.md
// records: cache policy of A, rows per CTA, chunk size, registers, FP16 against integer products.
#include "kernel.cuh"

#include "common/harness/bench.h"

int main(int argc, char** argv) {
  using namespace stage09;
  gemm::bench::Plan plan;
  plan.shapes = {{7168, 1, 16384, 1}, {4096, 1, 7168, 8}, {7168, 1, 2048, 4}};  // the public GEMV shapes
  for (int m : {1024, 4096, 16384}) plan.shapes.push_back({m, 1, 8192, 1});    // M sweep
  for (int k : {1024, 4096, 32768}) plan.shapes.push_back({4096, 1, k, 1});    // K sweep
  plan.shapes.push_back({128, 1, 16384, 1});                                    // small M: K split over a cluster
  plan.variants = {
      {"09 without the one-wave rule", &launch_config<Config<16, 1, ALoad::kNoAllocate, 6, false>>},
      {"09 no register cap", &launch_config<Config<16, 1, ALoad::kNoAllocate, 1, false>>},
      {"09 at most 72 registers", &launch_config<Config<16, 1, ALoad::kNoAllocate, 7, false>>},
      {"09 A cached in L1", &launch_config<Config<16, 1, ALoad::kCached, 6>>},
      {"09 A L2::256B prefetch", &launch_config<Config<16, 1, ALoad::kNoAllocatePrefetch256, 6>>},
      {"09 16 rows per CTA, no register cap", &launch_config<Config<16, 2, ALoad::kNoAllocate>>},
      {"09 32-byte chunks", &launch_config<Config<32, 1, ALoad::kNoAllocate, 4>>},
      {"09 FP16 products (bit-arithmetic decode, HFMA2)", &launch_config<Config<16, 1, ALoad::kNoAllocate, 6, true, Products::kHalf2>>},
      {"09 FP16 products, no register cap", &launch_config<Config<16, 1, ALoad::kNoAllocate, 1, true, Products::kHalf2>>},
      {"09 at most 96 registers", &launch_config<Config<16, 1, ALoad::kNoAllocate, 5>>},
      {"09 at most 64 registers", &launch_config<Config<16, 1, ALoad::kNoAllocate, 8>>},
      {"09 always 8 rows per CTA (80 registers)", &launch_config<Hopper>},
      {"09 always 16 rows per CTA (128 registers)", &launch_config<Hopper16Rows>},
      {"09 own rows, 16-row warps over all of K, 4 per CTA (128 registers)", &launch_config<HopperOwnRows>},
      {"09 own rows, 16-row warps over all of K, 2 per CTA (128 registers)", &launch_config<HopperOwnRows2Warps>},
      {"09 own rows, 8-row warps over all of K, 4 per CTA (80 registers)", &launch_config<HopperOwnRows8>},
      {"09 balanced K, 16 rows per CTA, warps dividing the K steps, up to 8 (128 registers)", &launch_config<HopperBalanced16Rows>},
      {"09 balanced K, 8 rows per CTA, warps dividing the K steps, up to 7 (72 registers)", &launch_config<HopperBalanced>},
      {"09 tensor cores (mma.sync s8), 64-row CTAs of up to 8 warps", &launch_mma<HopperMma>},
      {"09 tensor cores (mma.sync s8), 64-row CTAs of up to 4 warps", &launch_mma<HopperMma4Warps>},
  };
  return gemm::bench::run(argc, argv, kStage, GEMM_PREDECESSOR_ID, plan);
}
