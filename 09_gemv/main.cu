// stage09: the launch plan and the bytes-in-flight budget of the GEMV at the chosen shape, then the
// kernel run, checked and timed, and the base (stage 04 at N = 1) timed at the same shape.
// ./stage09 --help for options; the default shape is the largest public GEMV benchmark shape.
#include <cstdio>

#include "kernel.cuh"

#include "common/harness/stage_program.h"

namespace {

void walkthrough(const gemm::program::Options& o) {
  using gemm::program::section;
  using namespace stage09;
  const gemm::GpuInfo& gpu = gemm::gpu_info();
  const int sms = gpu.usable ? gpu.sm_count : kSmsWithoutGpu;
  const bool blackwell = sm100_paths(gpu);

  section("The bytes (N = 1: each weight byte feeds exactly one multiply-add)");
  gemm::Nvfp4GemmArgs a;
  a.M = o.M, a.N = 1, a.K = o.K, a.L = o.L;
  const double bytes = gemm::gemv_min_bytes(a);
  std::printf("  A %.1f MB + its scales %.1f MB + vector and scales %.1f KB + C %.1f KB = %.1f MB per call\n",
              double(gemm::packed_bytes(o.M, o.K, o.L)) / 1e6, double(o.M) * (o.K / 16) * o.L / 1e6,
              (o.K / 2 + o.K / 16) * o.L / 1e3, 2.0 * o.M * o.L / 1e3, bytes / 1e6);
  std::printf("  FLOP per byte: %.2f -- a GPU needs hundreds to be compute-bound, so time = bytes / bandwidth\n",
              gemm::flops(o.M, 1, o.K, o.L) / bytes);

  section("Launch plan");
  // The configuration launch() takes for this shape (kernel.cuh: Blackwell, Hopper16Rows or Hopper).
  const bool rows16 = !blackwell && sixteen_rows(a, sms);
  const LaunchPlan p = blackwell ? plan<Blackwell>(o.M, o.K, o.L, sms)
                       : rows16  ? plan<Hopper16Rows>(o.M, o.K, o.L, sms)
                                 : plan<Hopper>(o.M, o.K, o.L, sms);
  const int chunk = blackwell ? Blackwell::kChunk : Hopper::kChunk, rows = rows16 ? 16 : 8;
  std::printf("  %s, x %d batches\n", p.describe().c_str(), o.L);
  std::printf("  a CTA owns %d rows (8 rows share one 32-byte sector of scales per 64 values of k); a lane reads\n"
              "  %d bytes of each row per step (%s), a warp %d contiguous bytes per row\n",
              rows, chunk, blackwell ? "one 256-bit load" : "one 128-bit load", chunk * kLanes);
  std::printf("  products: %s\n", blackwell ? "cvt.rn.f16x2.e2m1x2 to FP16, summed exactly in FP16"
                                            : "twice each E2M1 value as an 8-bit integer (prmt lookup), dp4a");

  section("Bytes in flight (Little's law: bytes in flight = bandwidth x latency)");
  if (gpu.usable) {
    const double bw = gpu.dram_peak_gbps() * 1e9, latency = 800e-9;  // an assumed loaded DRAM latency; README measures it
    std::printf("  DRAM peak %.0f GB/s x ~%.0f ns loaded latency = %.1f MB in flight, %.1f KB per SM\n", bw / 1e9,
                latency * 1e9, bw * latency / 1e6, bw * latency / sms / 1e3);
  }
  std::printf("  per lane and step: %d rows x %d bytes = %d bytes of A in flight before any arithmetic\n", rows, chunk,
              rows * chunk);
  if (blackwell)
    gemm::program::print_resources("nvfp4_gemv<Blackwell>", reinterpret_cast<const void*>(&nvfp4_gemv<Blackwell>),
                                   p.warps * kLanes);
  else if (rows16)
    gemm::program::print_resources("nvfp4_gemv<Hopper16Rows>", reinterpret_cast<const void*>(&nvfp4_gemv<Hopper16Rows>),
                                   p.warps * kLanes);
  else
    gemm::program::print_resources("nvfp4_gemv<Hopper>", reinterpret_cast<const void*>(&nvfp4_gemv<Hopper>),
                                   p.warps * kLanes);
}

}  // namespace

int main(int argc, char** argv) {
  gemm::program::Options defaults;
  defaults.M = 7168, defaults.N = 1, defaults.K = 16384, defaults.L = 1;
  const auto opts = gemm::program::parse(argc, argv, stage09::kStage, defaults);  // --n other than 1: refused there
  gemm::program::banner(stage09::kStage);
  walkthrough(opts);
  gemm::program::section("Run, check, time");
  const auto result = gemm::program::run_and_check(stage09::kStage, opts);
  // The base this stage branches from, at the same N = 1 shape (fewer launches: it is far slower).
  if (const gemm::Stage* base = gemm::find_stage(GEMM_PREDECESSOR_ID); base && result.status == "PASSED") {
    gemm::program::section("The base at the same shape");
    auto o = opts;
    o.iters = 3;
    const auto b = gemm::program::run_and_check(*base, o);
    if (b.status == "PASSED" && result.ms > 0)
      std::printf("  %s: %.3f ms; %s: %.3f ms -> %.1fx faster\n", base->id, b.ms, stage09::kStage.id, result.ms,
                  b.ms / result.ms);
  }
  return gemm::program::finish(stage09::kStage, opts, result);
}
