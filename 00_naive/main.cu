// stage00: the naive GEMM, explained with the numbers of the problem it runs, then run, checked and
// timed.  ./stage00 --help for options.
#include <cstdio>
#include <set>

#include "kernel.cuh"

#include "common/device_info.h"
#include "common/harness/stage_program.h"

namespace {

void walkthrough(const gemm::program::Options& o) {
  using gemm::program::section;
  const double M = o.M, N = o.N, K = o.K, L = o.L;

  section("What one thread does");
  std::printf("  C[m][n] = sum_k A[m][k] * B[n][k] over K = %d:\n", o.K);
  std::printf("  %.0f FLOPs, reading %.0f floats = %.0f bytes: 0.25 FLOP per byte if every load went to memory\n",
              2 * K, 2 * K, 8 * K);

  section("What the whole problem needs at least");
  const double flops = 2 * M * N * K * L, min_bytes = 4 * L * (M * K + N * K + M * N);
  std::printf("  %.1f GFLOP; reading A and B once and writing C once is %.1f MB: %.0f FLOP per byte\n", flops * 1e-9,
              min_bytes * 1e-6, flops / min_bytes);
  std::printf("  without reuse the threads would load %.1f GB: %.0fx more than needed; caches decide the speed\n",
              8 * M * N * K * L * 1e-9, 8 * M * N * K * L / min_bytes);

  const gemm::GpuInfo& g = gemm::gpu_info();
  if (g.usable) {
    section("Ceilings on this GPU");
    std::printf("  DRAM %.0f GB/s, FP32 FMA peak %.1f TFLOP/s\n", g.dram_peak_gbps(), g.fp32_peak_tflops());
    std::printf("  every load from DRAM:   0.25 FLOP/B x %.0f GB/s = %.2f TFLOP/s\n", g.dram_peak_gbps(),
                0.25 * g.dram_peak_gbps() * 1e-3);
    std::printf("  every byte moved once:  min(%.1f, %.0f FLOP/B x %.0f GB/s) = %.1f TFLOP/s (compute-bound)\n",
                g.fp32_peak_tflops(), flops / min_bytes, g.dram_peak_gbps(),
                std::min(g.fp32_peak_tflops(), flops / min_bytes * g.dram_peak_gbps() * 1e-3));
  }

  section("One warp's loads at k = 0 (block 0, warp 0)");
  std::printf("  a warp is 32 threads with consecutive threadIdx.x: the same m, n = 0..31\n");
  std::printf("  lane   m   n   A byte offset   B byte offset   B 32-byte sector\n");
  std::set<long long> a_addr, b_sectors;
  for (int lane = 0; lane < 32; ++lane) {
    const int m = 0, n = lane % stage00::kBlockN;  // threadIdx.y = 0 for warp 0
    const long long a = 4LL * m * o.K, b = 4LL * n * o.K;
    a_addr.insert(a);
    b_sectors.insert(b / 32);
    if (lane < 4 || lane == 31) std::printf("  %4d %3d %3d %15lld %15lld %18lld\n", lane, m, n, a, b, b / 32);
    if (lane == 4) std::printf("   ...\n");
  }
  std::printf("  A: %zu distinct address (a broadcast). B: %zu distinct sectors for 128 useful bytes (%.0f%% of the\n"
              "  fetched bytes used now; the next 7 values of k reuse them only if they stay in L1).\n"
              "  C: lanes store 32 consecutive floats, one 128-byte line: coalesced.\n",
              a_addr.size(), b_sectors.size(), 100.0 * 128 / (32.0 * b_sectors.size()));
}

}  // namespace

int main(int argc, char** argv) {
  const auto opts = gemm::program::parse(argc, argv, stage00::kStage, {});
  gemm::program::banner(stage00::kStage);
  walkthrough(opts);
  gemm::program::section("Run, check, time");
  const auto result = gemm::program::run_and_check(stage00::kStage, opts);
  return gemm::program::finish(stage00::kStage, opts, result);
}
