// stage08: what split-K adds: the schedule of the problem and of the M = 128 shapes with and without
// split K (on this GPU and on a B200), the model's bound for every allowed split of those shapes (the
// choice common/split_k.h makes), and the workspace the splits meet in; then the kernel run, checked
// and timed (EMULATED on Hopper), and with --trace FILE a timeline of one run for docs/timeline.py.
// ./stage08 --help for options.
#include <cstdio>
#include <string>

#include "kernel.cuh"

#include "common/device_buffer.h"
#include "common/device_info.h"
#include "common/harness/problems.h"
#include "common/harness/schedule_print.h"
#include "common/harness/stage_program.h"
#include "common/timeline.h"

namespace {

using gemm::program::section;

gemm::Nvfp4GemmArgs shape_only(int M, int N, int K, int L) {
  auto* base = reinterpret_cast<const uint8_t*>(0x10000);
  return {M, N, K, L, base, base, base, base, 1.0f, nullptr};
}

void print_schedule(int M, int N, int K, int L, int pairs, const std::string& gpu, int splits = 0) {
  const stage08::Schedule s = stage08::make_schedule(shape_only(M, N, K, L), pairs, {0, splits, {}});
  gemm::program::print_schedule({M, N, K, L, stage08::kBM, stage08::kBN, stage08::kTileK, s.tiles_m, s.tiles_n,
                                 s.splits, s.units, s.pairs},
                                pairs, gpu);
}

// The bound of every allowed s for one shape on `pairs` pairs: what choose() minimises.
void print_split_choice(int M, int N, int K, int pairs) {
  const gemm::Nvfp4GemmArgs a = shape_only(M, N, K, 1);
  const stage08::Schedule s = stage08::make_schedule(a, pairs);
  const gemm::split_k::Problem p{s.units / s.splits, s.k_tiles, pairs, gemm::min_bytes(a),
                                 double(std::min(M, stage08::kBM)), double(std::min(N, stage08::kBN)),
                                 stage08::kBM, stage08::kBN, stage08::kTileK, stage08::kCtaGroup};
  std::printf("  %d x %d x %d, %d tiles, %d k-tiles, %d pairs: B200 bound (us) by s:", M, N, K, p.tiles, p.k_tiles,
              pairs);
  for (int t = 1; t <= gemm::split_k::max_splits(p.k_tiles); ++t)
    std::printf(" %s%d:%.1f", t == s.splits ? "*" : "", t, 1e6 * gemm::split_k::bound_seconds(p, t));
  std::printf("\n");
}

void walkthrough(const gemm::program::Options& o) {
  const gemm::GpuInfo& g = gemm::gpu_info();
  const int b200_pairs = gemm::program::kB200Sms / stage08::kCtaGroup;
  const int shapes[4][4] = {{o.M, o.N, o.K, o.L}, {128, 7168, 16384, 1}, {128, 4096, 7168, 1}, {128, 7168, 2048, 1}};
  section("The schedule: K split where there are fewer tiles than pairs (stage 07's schedule: K not split)");
  for (int i = 0; i < 4; ++i) {
    const auto& e = shapes[i];
    if (i > 0 && e[0] == o.M && e[1] == o.N && e[2] == o.K && e[3] == o.L) continue;  // the options' shape, above
    print_schedule(e[0], e[1], e[2], e[3], b200_pairs, "a B200 (148 SMs), stage 07", 1);
    print_schedule(e[0], e[1], e[2], e[3], b200_pairs, "a B200 (148 SMs), stage 08");
    if (g.usable) print_schedule(e[0], e[1], e[2], e[3], stage08::resident_pairs(), g.name + ", stage 08");
  }

  section("The choice (common/split_k.h): the s with the smallest model bound on a B200; * = chosen");
  std::printf("  bound = max(tensor time of the longest K range's waves, DRAM time of the GEMM's bytes + (s - 1)\n"
              "  FP32 partials per tile); s <= %d, each K range at least %d k-tiles; ties within %.0f%% go to the smaller s\n",
              gemm::split_k::kMaxSplits, gemm::split_k::kMinKTilesPerSplit, 100 * gemm::split_k::kTie);
  for (int i = 1; i < 4; ++i) print_split_choice(shapes[i][0], shapes[i][1], shapes[i][2], b200_pairs);

  section("The reduction (per tile and CTA: 128 rows x 128 columns of FP32)");
  const stage08::Schedule s = stage08::make_schedule(shape_only(128, 4096, 7168, 1), b200_pairs);
  const int tiles = s.units / s.splits;
  const size_t counter_bytes = size_t(tiles) * stage08::kCtaGroup * 2 * sizeof(int);
  const size_t partial_bytes = size_t(s.units) * stage08::kBM * stage08::kBN * sizeof(float);
  std::printf("  128 x 4096 x 7168 on a B200: %d tiles x %d splits; workspace %zu B of counters (arrived, written per\n"
              "  tile and CTA) + %zu B of partials ([tile][split][%d rows][%d columns] FP32), one per stream\n",
              tiles, s.splits, counter_bytes, partial_bytes, stage08::kBM, stage08::kBN);
  std::printf("  a split that arrives early: writes its partial (rows < M), CTA barrier, red.release.gpu on 'written'\n"
              "  the last to arrive: ld.acquire.gpu until 'written' = s - 1, CTA barrier, adds splits 0..s-1 in\n"
              "  order (its own from registers), resets both counters, stores C as stage 07 does\n");
  gemm::program::print_resources("nvfp4_tcgen05_gemm", reinterpret_cast<const void*>(&stage08::nvfp4_tcgen05_gemm<true>),
                                 stage08::kThreads, stage08::kSmemBytes);
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
  stage08::LaunchOptions lo;
  lo.trace = rec.buffer();
  lo.max_pairs = max_pairs;
  stage08::launch(args, nullptr);  // warm-up: module load, workspace
  stage08::launch_with(args, nullptr, lo);
  CUDA_CHECK(cudaDeviceSynchronize());
  const stage08::Schedule s = stage08::make_schedule(args, stage08::resident_pairs(), lo);
  rec.write_json(path, {{"stage", "08_split_k"},
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
  defaults.M = 128, defaults.N = 4096, defaults.K = 7168;  // an M = 128 benchmark shape: split K
  if (emulated) {
    defaults.N = 1024, defaults.K = 4096;
    defaults.iters = 3;
  }
  // --trace FILE: also record one run's timeline; --pairs P: in that run, use P pairs.
  using Flag = gemm::program::Flag;
  const Flag trace_flag{"--trace", "FILE", "after a passing run, run once more recording every role's steps and write\n"
                        "                 the timeline as JSON (docs/timeline.py draws it)", Flag::Kind::kOutputFile};
  Flag pairs_flag{"--pairs", "P", "in the --trace run, use at most P CTA pairs (default: all that fit)"};
  pairs_flag.requires_flag = "--trace";
  const auto opts = gemm::program::parse(argc, argv, stage08::kStage, defaults, {trace_flag, pairs_flag});
  gemm::program::banner(stage08::kStage);
  if (emulated)
    std::printf("\n  tcgen05 is EMULATED on this GPU (%s): the default problem is %d x %d x %d and %d timed runs;\n"
                "  the time measures the emulator, not the kernel.\n",
                g.name.c_str(), defaults.M, defaults.N, defaults.K, defaults.iters);
  walkthrough(opts);
  gemm::program::section("Run, check, time");
  const auto result = gemm::program::run_and_check(stage08::kStage, opts);
  if (opts.extra.count("--trace") && result.status == "PASSED")
    trace(opts, opts.extra.at("--trace"), gemm::program::flag_int(opts, "--pairs", 0));
  return gemm::program::finish(stage08::kStage, opts, result);
}
