// stage06: the persistent schedule (pairs, units, K splits) of the problem and the order of tiles on
// a small grid, the barrier protocol role by role, the Tensor Memory budget with two accumulators;
// then the kernel run, checked and timed (EMULATED on Hopper), and with --trace FILE a timeline of one
// run for docs/timeline.py.  ./stage06 --help for options.
#include <cstdio>
#include <string>
#include <vector>

#include "kernel.cuh"

#include "common/device_buffer.h"
#include "common/device_info.h"
#include "common/harness/problems.h"
#include "common/harness/stage_program.h"
#include "common/timeline.h"

namespace {

using gemm::program::section;

void print_schedule(const gemm::program::Options& o, int pairs) {
  auto* base = reinterpret_cast<const uint8_t*>(0x10000);
  const gemm::Nvfp4GemmArgs a{o.M, o.N, o.K, o.L, base, base, base, base, 1.0f, nullptr};
  const stage06::Schedule s = stage06::make_schedule(a, pairs, {});
  const int tiles = s.units / s.splits, waves = (s.units + s.pairs - 1) / s.pairs;
  std::printf("  %d x %d x %d (L = %d): %d x %d tiles of 256 x 128 per batch = %d tiles; %d k-tiles of 256\n", o.M,
              o.N, o.K, o.L, s.tiles_m, s.tiles_n, tiles, s.k_tiles);
  const std::string split = s.splits > 1 ? "K split in " + std::to_string(s.splits) : "no K split";
  std::printf("  %d pairs %s -> %s: %d units on %d pairs (pair p: units p, p + %d, ...), %d wave%s: %.0f%% of "
              "the %d pairs busy on average\n",
              pairs, pairs == 74 ? "(a B200)" : "resident here", split.c_str(), s.units, s.pairs, s.pairs, waves,
              waves == 1 ? "" : "s", 100.0 * s.units / (double(waves) * pairs), pairs);
}

void walkthrough(const gemm::program::Options& o) {
  using C = stage06::Config;
  section("The schedule (static: unit u runs on pair u mod P; the same sequence in both CTAs of a pair)");
  const gemm::GpuInfo& g = gemm::gpu_info();
  if (g.usable) print_schedule(o, stage06::resident_pairs());
  print_schedule(o, 74);
  const int m128_shapes[3][3] = {{128, 7168, 16384}, {128, 4096, 7168}, {128, 7168, 2048}};
  for (const auto& shape : m128_shapes) {
    gemm::program::Options b = o;
    b.M = shape[0];
    b.N = shape[1];
    b.K = shape[2];
    b.L = 1;
    print_schedule(b, 74);
  }

  section("The order of tiles (unit numbers on a 10 x 6 grid of tiles, groups of 8 tile-rows)");
  stage06::Schedule s{};
  s.tiles_m = 10, s.tiles_n = 6, s.k_tiles = 1, s.splits = 1, s.L = 1, s.units = 60;
  std::vector<int> order(60);
  for (int u = 0; u < 60; ++u) {
    const stage06::Unit w = stage06::unit_at(s, u);
    order[size_t(w.m0 / 256) * 6 + size_t(w.n0 / 128)] = u;
  }
  std::printf("           ");
  for (int n = 0; n < 6; ++n) std::printf(" n%-3d", n);
  std::printf("\n");
  for (int m = 0; m < 10; ++m) {
    std::printf("  tile m%-2d ", m);
    for (int n = 0; n < 6; ++n) std::printf(" %3d ", order[size_t(m) * 6 + n]);
    std::printf("%s\n", m == 7 ? "   <- end of the first group of 8 rows" : "");
  }
  std::printf("  Pairs busy at the same time work on neighbouring units: a few rows of A, a few columns of B.\n");

  section("Roles and barriers (PipelineState: producers of a resource start on phase 1)");
  std::printf(
      "  barrier          where      count  arrives                              waits\n"
      "  full[s]          even CTA   1+tx   even producer expect_tx; TMA bytes    MMA warp (phase from 0)\n"
      "                                     of both CTAs (.cta_group::2)\n"
      "  empty[s]         each CTA   1      MMA warp's multicast commit           producer (phase from 1, wait_commit)\n"
      "  acc_full[b]      each CTA   1      MMA warp's multicast commit           epilogue warps (from 0, wait_commit)\n"
      "  acc_empty[b]     even CTA   8      each epilogue warp of both CTAs,      MMA warp (phase from 1)\n"
      "                                     after tcgen05.ld + wait::ld + fence\n");

  section("Tensor Memory (each CTA; 512 columns)");
  std::printf("  accumulators: buffer 0 columns 0..127, buffer 1 columns 128..255 (256 x 128 FP32 tiles)\n");
  std::printf("  scales: %d stages x %d columns (SFA 16 + SFB 16) from column %d = %d columns; used %d of 512\n",
              C::kStages, C::kSfColumnsPerStage, C::kAccColumns, C::kStages * C::kSfColumnsPerStage,
              C::kTmemColumnsUsed);
  std::printf("  the other way, one 256-column accumulator released in parts: 256 + 5 stages x 48 = 496 columns\n");
  std::printf("  shared memory: %d stages x %d bytes = %d bytes (+ barriers), %d bytes in all\n", C::kStages,
              C::kStageBytes, C::kStages * C::kStageBytes, stage06::kSmemBytes);
  gemm::program::print_resources("nvfp4_persistent_gemm", reinterpret_cast<const void*>(&stage06::nvfp4_persistent_gemm),
                                 stage06::kThreads, stage06::kSmemBytes);
}

// --trace FILE: one run of the options' shape with the timeline recording on.
void trace(const gemm::program::Options& o, const std::string& path, int max_pairs) {
  const gemm::GpuInfo& g = gemm::gpu_info();
  if (!g.usable) return;
  const gemm::HostNvfp4Problem p = gemm::make_nvfp4_problem(o.M, o.N, o.K, o.L, gemm::Tier::kRealistic, o.seed);
  gemm::DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
  gemm::DeviceBuffer<uint16_t> Cbuf(size_t(o.M) * o.N * o.L);
  const gemm::Nvfp4GemmArgs args{o.M, o.N, o.K, o.L, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha,
                                 reinterpret_cast<__half*>(Cbuf.get())};
  gemm::timeline::Recorder rec(1u << 16);
  stage06::LaunchOptions lo;
  lo.trace = rec.buffer();
  lo.max_pairs = max_pairs;
  stage06::launch(args, nullptr);  // warm-up: module load, workspace
  stage06::launch_with(args, nullptr, lo);
  CUDA_CHECK(cudaDeviceSynchronize());
  const stage06::Schedule s = stage06::make_schedule(args, stage06::resident_pairs(), lo);
  rec.write_json(path, {{"stage", "06_persistent_ws"},
                        {"gpu", g.name},
                        {"tcgen05", g.tcgen05_native() ? "native" : "EMULATED (order and overlap only, not speed)"},
                        {"shape", std::to_string(o.M) + "x" + std::to_string(o.N) + "x" + std::to_string(o.K)},
                        {"pairs", std::to_string(s.pairs)},
                        {"units", std::to_string(s.units)},
                        {"splits", std::to_string(s.splits)}});
  std::printf("  timeline of one run written to %s (docs/timeline.py draws it)\n", path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const gemm::GpuInfo& g = gemm::gpu_info();
  const bool emulated = g.usable && !g.tcgen05_native();
  gemm::program::Options defaults;
  if (emulated) {
    defaults.M = defaults.N = defaults.K = 1024;
    defaults.iters = 3;
  }
  // --trace FILE: also record one run's timeline; --pairs P: in that run, use P pairs (a few pairs
  // with many units each show the overlap of the roles best).
  using Flag = gemm::program::Flag;
  const Flag trace_flag{"--trace", "FILE", "after a passing run, run once more recording every role's steps and write\n"
                        "                 the timeline as JSON (docs/timeline.py draws it)", Flag::Kind::kOutputFile};
  Flag pairs_flag{"--pairs", "P", "in the --trace run, use at most P CTA pairs (default: all that fit)"};
  pairs_flag.requires_flag = "--trace";
  const auto opts = gemm::program::parse(argc, argv, stage06::kStage, defaults, {trace_flag, pairs_flag});
  gemm::program::banner(stage06::kStage);
  if (emulated)
    std::printf("\n  tcgen05 is EMULATED on this GPU (%s): the default problem is %d x %d x %d and %d timed runs;\n"
                "  the time measures the emulator, not the kernel.\n",
                g.name.c_str(), defaults.M, defaults.N, defaults.K, defaults.iters);
  walkthrough(opts);
  gemm::program::section("Run, check, time");
  const auto result = gemm::program::run_and_check(stage06::kStage, opts);
  if (opts.extra.count("--trace")) {
    if (result.status == "PASSED")
      trace(opts, opts.extra.at("--trace"), gemm::program::flag_int(opts, "--pairs", 0));
    else
      std::printf("  --trace: no timeline written (the run did not pass)\n");
  }
  return gemm::program::finish(stage06::kStage, opts, result);
}
