// stage06: the persistent schedule of the problem (on this GPU and on a B200) and the order of tiles on
// a small grid, the barrier protocol role by role, the Tensor Memory and shared-memory budgets with two
// accumulators; then the kernel run, checked and timed (EMULATED on Hopper), and with --trace FILE a
// timeline of one run for docs/timeline.py.  ./stage06 --help for options.
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

void print_schedule(int M, int N, int K, int L, int pairs, const std::string& gpu) {
  auto* base = reinterpret_cast<const uint8_t*>(0x10000);
  const gemm::Nvfp4GemmArgs a{M, N, K, L, base, base, base, base, 1.0f, nullptr};
  const stage06::Schedule s = stage06::make_schedule(a, pairs);
  gemm::program::print_schedule({M, N, K, L, stage06::kBM, stage06::kBN, stage06::kTileK, s.tiles_m, s.tiles_n,
                                 1, s.units, s.pairs},
                                pairs, gpu);
}

void walkthrough(const gemm::program::Options& o) {
  const gemm::GpuInfo& g = gemm::gpu_info();
  const int b200_pairs = gemm::program::kB200Sms / stage06::kCtaGroup;
  section("The schedule (static: unit u runs on pair u mod P; the same sequence in both CTAs of a pair)");
  const int shapes[4][4] = {{o.M, o.N, o.K, o.L}, {128, 7168, 16384, 1}, {128, 4096, 7168, 1}, {128, 7168, 2048, 1}};
  for (const auto& e : shapes) {
    if (g.usable) print_schedule(e[0], e[1], e[2], e[3], stage06::resident_pairs(), g.name);
    print_schedule(e[0], e[1], e[2], e[3], b200_pairs, "a B200 (148 SMs)");
  }
  std::printf("  At M = 128 a tile-row holds N / %d tiles: fewer units than pairs, most pairs idle (stage 08).\n",
              stage06::kBN);

  section("The order of tiles (unit numbers on a 10 x 6 grid of tiles, groups of 8 tile-rows)");
  stage06::Schedule grid{};
  grid.tiles_m = 10, grid.tiles_n = 6, grid.L = 1, grid.units = 60;
  gemm::program::print_tile_order(grid.tiles_m, grid.tiles_n, stage06::kGroupM, [&](int u, int& tm, int& tn) {
    const stage06::Unit w = stage06::unit_at(grid, u);
    tm = w.m0 / stage06::kBM, tn = w.n0 / stage06::kBN;
  });

  section("Roles and barriers (the i-th use of a ring of R: slot or accumulator i mod R, parity (i / R) & 1)");
  std::printf("  warps: producer %d, MMA %d (the leader's issues for the pair), epilogue %d..%d (warp %d also allocates\n"
              "  Tensor Memory); %d threads per CTA\n",
              stage06::kProducerWarp, stage06::kMmaWarp, stage06::kFirstEpilogueWarp,
              stage06::kFirstEpilogueWarp + stage06::kEpilogueWarps - 1, stage06::kAllocWarp, stage06::kThreads);
  std::printf("  barrier        n  where     count         arrives                                waits\n");
  std::printf("  full[slot]    %2d  leader    1 + %6d B  leader's expect_tx; TMA bytes of both   MMA warp (parity from 0)\n"
              "                                            CTAs (.cta_group::2)\n",
              stage06::kSlots, stage06::kCtaGroup * int(sizeof(stage06::Slot)));
  std::printf("  empty[slot]   %2d  each CTA  1             MMA warp's multicast commit            producer (from 1)\n",
              stage06::kSlots);
  std::printf("  acc_full[acc] %2d  each CTA  1             MMA warp's multicast commit            epilogue warps (from 0)\n",
              stage06::kAccBuffers);
  std::printf("  acc_empty[acc]%2d  leader    %-12d  each epilogue warp of both CTAs, after  MMA warp (from 1)\n"
              "                                            tcgen05.ld + wait::ld + fence\n",
              stage06::kAccBuffers, stage06::kCtaGroup * stage06::kEpilogueWarps);

  section("Tensor Memory (each CTA; 512 columns) and shared memory");
  for (int acc = 0; acc < stage06::kAccBuffers; ++acc)
    std::printf("  accumulator %d: columns %u..%u (%d x %d FP32 per pair)\n", acc, stage06::d_column(acc),
                stage06::d_column(acc) + stage06::kBN - 1, stage06::kBM, stage06::kBN);
  std::printf("  scales: %d slots x %d columns from column %u = %d columns; used %d of %u\n", stage06::kSlots,
              stage06::kSfColumnsPerSlot, stage06::sfa_column(0, 0), stage06::kSlots * stage06::kSfColumnsPerSlot,
              stage06::kTmemColumnsUsed, stage06::kTmemColumns);
  std::printf("  slots: %d by shared memory, %d by Tensor Memory -> %d\n", stage06::kSlotsBySmem, stage06::kSlotsByTmem,
              stage06::kSlots);
  std::printf("  shared memory: %d slots x %d B = %d B, %d B with barriers and alignment; + %d B kept for static\n"
              "  shared memory (kStaticSmemMargin) = %d B of the %d B a block may use\n",
              stage06::kSlots, int(sizeof(stage06::Slot)), stage06::kSlots * int(sizeof(stage06::Slot)),
              stage06::kSmemBytes, stage06::kStaticSmemMargin, stage06::kSmemBytes + stage06::kStaticSmemMargin,
              stage06::kSmemPerBlock);
  gemm::program::print_resources("nvfp4_tcgen05_gemm", reinterpret_cast<const void*>(&stage06::nvfp4_tcgen05_gemm),
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
  stage06::launch(args, nullptr);  // warm-up: module load
  stage06::launch_with(args, nullptr, lo);
  CUDA_CHECK(cudaDeviceSynchronize());
  const stage06::Schedule s = stage06::make_schedule(args, stage06::resident_pairs(), lo);
  rec.write_json(path, {{"stage", "06_persistent_ws"},
                        {"gpu", g.name},
                        {"tcgen05", g.tcgen05_native() ? "native" : "EMULATED (order and overlap only, not speed)"},
                        {"shape", std::to_string(o.M) + "x" + std::to_string(o.N) + "x" + std::to_string(o.K)},
                        {"pairs", std::to_string(s.pairs)},
                        {"units", std::to_string(s.units)},
                        {"splits", "1"}});
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
