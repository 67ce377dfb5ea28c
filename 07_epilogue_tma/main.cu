// stage07: what the TMA-store epilogue adds (C's tensor map, the swizzled staging sub-tile and its
// bank map, the rule that picks the epilogue path), then stage 06's schedule, protocol and budgets
// with the staging's share of shared memory; then the kernel run, checked and timed (EMULATED on
// Hopper), and with --trace FILE a timeline of one run for docs/timeline.py.  ./stage07 --help for options.
#include <cstdio>
#include <string>

#include "kernel.cuh"

#include "common/device_buffer.h"
#include "common/device_info.h"
#include "common/harness/problems.h"
#include "common/harness/schedule_print.h"
#include "common/harness/stage_program.h"
#include "common/swizzle.h"
#include "common/timeline.h"

namespace {

using gemm::program::section;

void print_schedule(int M, int N, int K, int L, int pairs, const std::string& gpu) {
  auto* base = reinterpret_cast<const uint8_t*>(0x10000);
  const gemm::Nvfp4GemmArgs a{M, N, K, L, base, base, base, base, 1.0f, nullptr};
  const stage07::Schedule s = stage07::make_schedule(a, pairs);
  gemm::program::print_schedule({M, N, K, L, stage07::kBM, stage07::kBN, stage07::kTileK, s.tiles_m, s.tiles_n,
                                 1, s.units, s.pairs},
                                pairs, gpu);
}

void epilogue_walkthrough(const gemm::program::Options& o) {
  section("The epilogue: TMEM -> registers -> swizzled shared memory -> TMA store");
  auto* base = reinterpret_cast<const uint8_t*>(0x10000);
  gemm::Nvfp4GemmArgs a{o.M, o.N, o.K, o.L, base, base, base, base, 1.0f, reinterpret_cast<__half*>(0x20000)};
  if (stage07::uses_tma_store(a))
    std::printf("  C's tensor map: %s\n", stage07::plan_c(a).describe().c_str());
  else
    std::printf("  N = %d: rows of 2N bytes do not start on 16-byte boundaries, so C has no tensor map and the\n"
                "  kernel stores rows directly (stage 06's epilogue)\n", o.N);
  std::printf("  per unit and epilogue warp: %d x tcgen05.ld .32x32b.x32 (32 rows x %d columns), one wait::ld,\n"
              "  release to the MMA warp; then %d sub-tiles of 32 x %d: alpha, FP16, staging (%d B), fence.proxy.async,\n"
              "  lane 0: cp.async.bulk.tensor shared -> global + commit; %d staging buffers per warp alternate\n",
              stage07::kBN / 32, stage07::kBN, stage07::kBN / stage07::kSubTileCols, stage07::kSubTileCols,
              stage07::kStagingBytes, stage07::kStagingBuffers);
  std::printf("\n  staging sub-tile (64-byte swizzle): the 16-byte chunk each lane writes, by bank group\n"
              "  (a warp store of chunk q: lane r -> row r; 8 lanes per 128-byte wavefront):\n");
  for (uint32_t r = 0; r < 8; ++r) {
    std::printf("    row %u:", r);
    for (uint32_t q = 0; q < 4; ++q) {
      const uint32_t addr = gemm::swizzle_64b(r, 16 * q);
      std::printf("  chunk %u -> bytes %3u..%3u (banks %2u..%2u)", q, addr % 128, addr % 128 + 15, (addr % 128) / 4,
                  (addr % 128) / 4 + 3);
    }
    std::printf("\n");
  }
  std::printf("  lanes 0..7 of one store cover all 32 banks once: no conflict (without the swizzle, rows 0, 2, 4, 6\n"
              "  would share banks: 4 times the wavefronts)\n");
}

void walkthrough(const gemm::program::Options& o) {
  epilogue_walkthrough(o);
  const gemm::GpuInfo& g = gemm::gpu_info();
  const int b200_pairs = gemm::program::kB200Sms / stage07::kCtaGroup;
  section("The schedule (static: unit u runs on pair u mod P; the same sequence in both CTAs of a pair)");
  const int shapes[4][4] = {{o.M, o.N, o.K, o.L}, {128, 7168, 16384, 1}, {128, 4096, 7168, 1}, {128, 7168, 2048, 1}};
  for (const auto& e : shapes) {
    if (g.usable) print_schedule(e[0], e[1], e[2], e[3], stage07::resident_pairs(), g.name);
    print_schedule(e[0], e[1], e[2], e[3], b200_pairs, "a B200 (148 SMs)");
  }

  section("The order of tiles (unit numbers on a 10 x 6 grid of tiles, groups of 8 tile-rows)");
  stage07::Schedule grid{};
  grid.tiles_m = 10, grid.tiles_n = 6, grid.L = 1, grid.units = 60;
  gemm::program::print_tile_order(grid.tiles_m, grid.tiles_n, stage07::kGroupM, [&](int u, int& tm, int& tn) {
    const stage07::Unit w = stage07::unit_at(grid, u);
    tm = w.m0 / stage07::kBM, tn = w.n0 / stage07::kBN;
  });

  section("Roles and barriers (the i-th use of a ring of R: slot or accumulator i mod R, parity (i / R) & 1)");
  std::printf("  warps: producer %d, MMA %d (the leader's issues for the pair), epilogue %d..%d (warp %d also allocates\n"
              "  Tensor Memory); %d threads per CTA\n",
              stage07::kProducerWarp, stage07::kMmaWarp, stage07::kFirstEpilogueWarp,
              stage07::kFirstEpilogueWarp + stage07::kEpilogueWarps - 1, stage07::kAllocWarp, stage07::kThreads);
  std::printf("  barrier        n  where     count         arrives                                waits\n");
  std::printf("  full[slot]    %2d  leader    1 + %6d B  leader's expect_tx; TMA bytes of both   MMA warp (parity from 0)\n"
              "                                            CTAs (.cta_group::2)\n",
              stage07::kSlots, stage07::kCtaGroup * int(sizeof(stage07::Slot)));
  std::printf("  empty[slot]   %2d  each CTA  1             MMA warp's multicast commit            producer (from 1)\n",
              stage07::kSlots);
  std::printf("  acc_full[acc] %2d  each CTA  1             MMA warp's multicast commit            epilogue warps (from 0)\n",
              stage07::kAccBuffers);
  std::printf("  acc_empty[acc]%2d  leader    %-12d  each epilogue warp of both CTAs, after  MMA warp (from 1)\n"
              "                                            tcgen05.ld + wait::ld + fence\n",
              stage07::kAccBuffers, stage07::kCtaGroup * stage07::kEpilogueWarps);

  section("Tensor Memory (each CTA; 512 columns) and shared memory");
  for (int acc = 0; acc < stage07::kAccBuffers; ++acc)
    std::printf("  accumulator %d: columns %u..%u (%d x %d FP32 per pair)\n", acc, stage07::d_column(acc),
                stage07::d_column(acc) + stage07::kBN - 1, stage07::kBM, stage07::kBN);
  std::printf("  scales: %d slots x %d columns from column %u = %d columns; used %d of %u\n", stage07::kSlots,
              stage07::kSfColumnsPerSlot, stage07::sfa_column(0, 0), stage07::kSlots * stage07::kSfColumnsPerSlot,
              stage07::kTmemColumnsUsed, stage07::kTmemColumns);
  std::printf("  slots: %d by shared memory, %d by Tensor Memory -> %d\n", stage07::kSlotsBySmem, stage07::kSlotsByTmem,
              stage07::kSlots);
  std::printf("  shared memory: %d slots x %d B = %d B, + staging %d warps x %d x %d B, %d B with barriers and\n"
              "  alignment; + %d B kept for static shared memory (kStaticSmemMargin) = %d B of the %d B a block may use\n",
              stage07::kSlots, int(sizeof(stage07::Slot)), stage07::kSlots * int(sizeof(stage07::Slot)),
              stage07::kEpilogueWarps, stage07::kStagingBuffers, stage07::kStagingBytes, stage07::kSmemBytes, stage07::kStaticSmemMargin, stage07::kSmemBytes + stage07::kStaticSmemMargin,
              stage07::kSmemPerBlock);
  gemm::program::print_resources("nvfp4_tcgen05_gemm", reinterpret_cast<const void*>(&stage07::nvfp4_tcgen05_gemm<true>),
                                 stage07::kThreads, stage07::kSmemBytes);
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
  stage07::LaunchOptions lo;
  lo.trace = rec.buffer();
  lo.max_pairs = max_pairs;
  stage07::launch(args, nullptr);  // warm-up: module load
  stage07::launch_with(args, nullptr, lo);
  CUDA_CHECK(cudaDeviceSynchronize());
  const stage07::Schedule s = stage07::make_schedule(args, stage07::resident_pairs(), lo);
  rec.write_json(path, {{"stage", "07_epilogue_tma"},
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
  const auto opts = gemm::program::parse(argc, argv, stage07::kStage, defaults, {trace_flag, pairs_flag});
  gemm::program::banner(stage07::kStage);
  if (emulated)
    std::printf("\n  tcgen05 is EMULATED on this GPU (%s): the default problem is %d x %d x %d and %d timed runs;\n"
                "  the time measures the emulator, not the kernel.\n",
                g.name.c_str(), defaults.M, defaults.N, defaults.K, defaults.iters);
  walkthrough(opts);
  gemm::program::section("Run, check, time");
  const auto result = gemm::program::run_and_check(stage07::kStage, opts);
  if (opts.extra.count("--trace")) {
    if (result.status == "PASSED")
      trace(opts, opts.extra.at("--trace"), gemm::program::flag_int(opts, "--pairs", 0));
    else
      std::printf("  --trace: no timeline written (the run did not pass)\n");
  }
  return gemm::program::finish(stage07::kStage, opts, result);
}
