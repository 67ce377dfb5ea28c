// Stage 07 against the CPU reference: stage 06's cases (the common NVFP4 cases, every boundary of the
// 256 x 128 tile, the K sweep, forced schedules, split K, determinism), plus what the TMA-store
// epilogue adds: both epilogue paths (N % 8 == 0 and not, C aligned and not), tails clipped by the
// store, C's neighbourhood untouched (guard bytes), staging buffers reused over many sub-tiles, and a
// bank-conflict-free staging layout. On Hopper the tcgen05 instructions run through the emulator.
#include "kernel.cuh"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/device_buffer.h"
#include "common/emu/tcgen05_emu_state.h"
#include "common/bank_model.h"
#include "common/harness/compare.h"
#include "common/harness/gemm_tests.h"
#include "common/reference.h"
#include "common/swizzle.h"

namespace {

using gemm::Tier;
using gemm::testing::GemmCase;
constexpr gemm::testing::Tile kTile{stage07::kPairM, stage07::kBN, stage07::kTileK};

GemmCase make_case(const std::string& what, Tier tier, int M, int N, int K, int L = 1) {
  return {what + "_" + gemm::tier_name(tier) + "_M" + std::to_string(M) + "_N" + std::to_string(N) + "_K" +
              std::to_string(K) + "_L" + std::to_string(L),
          M, N, K, L, tier};
}

std::vector<GemmCase> cases() {
  auto c = gemm::testing::nvfp4_cases(kTile);
  for (int M : {1, 127, 128, 129, 255, 256, 257})
    for (int N : {1, 16, 17, 127, 128, 129, 255, 257}) c.push_back(make_case("tail", Tier::kExact, M, N, 160));
  const int T = stage07::kTileK, S = stage07::Config::kStages;
  for (int K : {32, 64, 96, T, S * T, (S + 1) * T + 32, 4 * S * T + 96})
    for (Tier tier : {Tier::kExact, Tier::kRealistic}) c.push_back(make_case("pipeline", tier, 130, 260, K));
  // Fewer tiles than pairs: the scheduler splits K (32 tiles, 28 k-tiles).
  for (Tier tier : {Tier::kExact, Tier::kRealistic}) c.push_back(make_case("split", tier, 128, 4096, 7168));
  return c;
}

GEMM_STANDARD_STAGE_TESTS(Nvfp4EpilogueTma, stage07::kStage, stage07::launch, cases(), kTile)

// ---- Forced schedules ---------------------------------------------------------------------------------

void one_pair(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage07::launch_with(a, s, {1, 0, {}}); }
void two_pairs(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage07::launch_with(a, s, {2, 0, {}}); }
void five_pairs(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage07::launch_with(a, s, {5, 0, {}}); }
void split3(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage07::launch_with(a, s, {0, 3, {}}); }
void split3_two_pairs(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage07::launch_with(a, s, {2, 3, {}}); }

struct ForcedCase {
  const char* name;
  gemm::Nvfp4Launcher launch;
  GemmCase shape;
};

class GpuNvfp4EpilogueTmaSchedule : public ::testing::TestWithParam<ForcedCase> {};
TEST_P(GpuNvfp4EpilogueTmaSchedule, MatchesCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(GetParam().launch, GetParam().shape, kTile);
}
INSTANTIATE_TEST_SUITE_P(
    Forced, GpuNvfp4EpilogueTmaSchedule,
    ::testing::Values(
        // One pair does every unit: 4 x 6 tiles, both accumulators reused many times.
        ForcedCase{"one_pair_many_units", one_pair, make_case("one_pair", Tier::kExact, 1000, 700, 512)},
        ForcedCase{"two_pairs_many_units", two_pairs, make_case("two_pairs", Tier::kRealistic, 777, 555, 800)},
        // The schedule crosses batches: 3 batches of 2 x 2 tiles over 5 pairs.
        ForcedCase{"batches_crossed", five_pairs, make_case("batches", Tier::kExact, 300, 200, 288, 3)},
        // K split in 3 uneven parts (7 k-tiles: 2, 2, 3), with the tiles' splits on different pairs
        // and, with two pairs, one pair doing several splits of a tile.
        ForcedCase{"split_uneven", split3, make_case("split3", Tier::kExact, 129, 300, 7 * 256)},
        ForcedCase{"split_uneven_two_pairs", split3_two_pairs,
                   make_case("split3_2p", Tier::kRealistic, 257, 257, 7 * 256 - 32, 2)}),
    [](const ::testing::TestParamInfo<ForcedCase>& i) { return std::string(i.param.name); });

// ---- Determinism of the split-K reduction -------------------------------------------------------------

TEST(GpuNvfp4EpilogueTmaDeterminism, SplitKGivesTheSameBitsEveryRun) {
  GEMM_REQUIRE_GPU();
  const int M = 128, N = 4096, K = 7168;  // the benchmark shape the model splits
  const gemm::HostNvfp4Problem p = gemm::make_nvfp4_problem(M, N, K, 1, Tier::kRealistic, gemm::seed_for("determinism"));
  gemm::DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
  gemm::DeviceBuffer<uint16_t> C(size_t(M) * N);
  const gemm::Nvfp4GemmArgs args{M, N, K, 1, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha,
                                 reinterpret_cast<__half*>(C.get())};
  const stage07::Schedule s = stage07::make_schedule(args, stage07::resident_pairs(), {});
  ASSERT_GT(s.splits, 1) << "this shape must split K";
  std::vector<uint16_t> first;
  for (int run = 0; run < 4; ++run) {
    C.fill_bytes(0xFF);
    stage07::launch(args, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    if (run == 0) first = C.download();
    else EXPECT_EQ(C.download(), first) << "run " << run << " differs from run 0";
  }
  EXPECT_EQ(gemm::emu::allocated_units(), 0);
}

// ---- The schedule itself (CPU) --------------------------------------------------------------------------

TEST(EpilogueTmaSchedule, EveryTileAndKTileIsCoveredExactlyOnce) {
  for (int splits : {1, 3, 5})
    for (int pairs : {1, 7, 74}) {
      stage07::Schedule s{};
      s.M = 1000, s.N = 900, s.K = 7 * 256 + 64, s.L = 2;
      s.tiles_m = 4, s.tiles_n = 8, s.k_tiles = 8, s.splits = splits;
      s.units = s.tiles_m * s.tiles_n * s.L * splits;
      s.pairs = pairs;
      std::vector<int> covered(size_t(s.tiles_m) * s.tiles_n * s.L * s.k_tiles, 0);
      for (int p = 0; p < pairs; ++p)
        for (int u = p; u < s.units; u += pairs) {
          const stage07::Unit w = stage07::unit_at(s, u);
          ASSERT_GE(w.kt_end, w.kt_begin + 1) << "empty K range";
          for (int kt = w.kt_begin; kt < w.kt_end; ++kt)
            ++covered[((size_t(w.batch) * s.tiles_m + w.m0 / 256) * s.tiles_n + w.n0 / 128) * s.k_tiles + kt];
        }
      for (int c : covered) ASSERT_EQ(c, 1) << "splits " << splits << ", pairs " << pairs;
    }
}

TEST(EpilogueTmaSchedule, SplitsMinimiseTheModelBoundOfTheBenchmarkShapes) {
  // 74 pairs (a B200). The chosen split must be the best of all allowed ones under the model, and
  // on the M = 128 shapes the bound must be within 1.5x of the speed of light (max of the tensor
  // time on all 148 SMs and the DRAM time of the bytes the GEMM must move).
  struct Shape { int M, N, K; };
  for (const Shape e : {Shape{128, 7168, 16384}, Shape{128, 4096, 7168}, Shape{128, 7168, 2048},
                        Shape{1024, 1024, 1024}, Shape{2048, 2048, 2048}, Shape{8192, 8192, 8192}}) {
    auto* base = reinterpret_cast<const uint8_t*>(0x10000);
    const gemm::Nvfp4GemmArgs a{e.M, e.N, e.K, 1, base, base, base, base, 1.0f, nullptr};
    const stage07::Schedule s = stage07::make_schedule(a, 74, {});
    const int tiles = s.units / s.splits;
    const double rows = std::min(e.M, 256), cols = std::min(e.N, 128), bytes = gemm::min_bytes(a);
    const double chosen = stage07::split_bound_seconds(s.splits, tiles, s.k_tiles, 74, bytes, rows, cols);
    for (int t = 1; t <= 16 && t <= s.k_tiles / 2; ++t)
      if (tiles < 74) EXPECT_LE(chosen, 1.0101 * stage07::split_bound_seconds(t, tiles, s.k_tiles, 74, bytes, rows, cols));
    const double sol = std::max(2.0 * e.M * e.N * double(e.K) / (148 * stage07::kModelSmFlops),
                                bytes / stage07::kModelDramBytesPerSecond);
    if (e.M == 128) EXPECT_LE(chosen, 1.5 * sol) << e.M << "x" << e.N << "x" << e.K << ", " << s.splits << " splits";
    if (tiles >= 74) EXPECT_EQ(s.splits, 1);
  }
}

TEST(EpilogueTmaSchedule, TileOrderGroupsRowsForL2Reuse) {
  stage07::Schedule s{};
  s.tiles_m = 10, s.tiles_n = 3, s.k_tiles = 1, s.splits = 1, s.L = 1, s.units = 30;
  // The first kGroupM tiles walk down one column of the first group of rows.
  for (int u = 0; u < stage07::kGroupM; ++u) {
    EXPECT_EQ(stage07::unit_at(s, u).n0, 0);
    EXPECT_EQ(stage07::unit_at(s, u).m0, u * 256);
  }
  // The last group (rows 8, 9) is narrower.
  EXPECT_EQ(stage07::unit_at(s, 24).m0, 8 * 256);
  EXPECT_EQ(stage07::unit_at(s, 25).m0, 9 * 256);
  EXPECT_EQ(stage07::unit_at(s, 26).n0, 128);
}

TEST(EpilogueTmaLayout, BudgetsFit) {
  using C = stage07::Config;
  EXPECT_EQ(C::kStageBytes, 28672);
  EXPECT_EQ(C::kStages, 7);  // stage 06's 8, less the 16 KB of staging buffers
  EXPECT_LE(C::kTmemColumnsUsed, 512);
  EXPECT_LE(stage07::kSmemBytes, 232448);
  EXPECT_EQ(C::d_column(1), 128u);
  EXPECT_GE(C::sfa_column(0, 0), 256u);
}

// ---- The TMA-store epilogue ----------------------------------------------------------------------------

TEST(EpilogueTmaRule, TmaStoresNeedRowsOn16ByteBoundaries) {
  auto* c = reinterpret_cast<__half*>(0x100000);
  gemm::Nvfp4GemmArgs a{};
  a.M = 100, a.N = 64, a.C = c;
  EXPECT_TRUE(stage07::uses_tma_store(a));
  a.N = 100;  // 200-byte rows
  EXPECT_FALSE(stage07::uses_tma_store(a));
  a.N = 64, a.C = c + 1;  // rows 16-byte aligned, but the base is not
  EXPECT_FALSE(stage07::uses_tma_store(a));
  EXPECT_THROW(gemm::plan_fp16_output(c, 10, 12, 1, 32, 32), std::invalid_argument);  // 24-byte rows
  EXPECT_NO_THROW(gemm::plan_fp16_output(c, 10, 16, 1, 32, 32));
}

// Lane r of an epilogue warp writes row r of a 32 x 64-byte staging sub-tile, 16 bytes at a time.
// With the 64-byte swizzle each 16-byte store of the warp takes the minimum of 4 wavefronts; with
// plain rows, lanes 2 apart (128 bytes) hit the same banks: 4 times as many.
TEST(EpilogueTmaStaging, SwizzledSubTileStoresAreBankConflictFree) {
  for (uint32_t q = 0; q < 4; ++q) {
    std::vector<uint32_t> swizzled(32), plain(32);
    for (uint32_t lane = 0; lane < 32; ++lane) {
      swizzled[lane] = gemm::swizzle_64b(lane, 16 * q);
      plain[lane] = lane * 64 + 16 * q;
    }
    EXPECT_EQ(gemm::bank_conflicts(swizzled, 16).degree(), 1) << "chunk " << q;
    EXPECT_EQ(gemm::bank_conflicts(plain, 16).degree(), 4) << "chunk " << q;
  }
  // And the swizzle is a permutation of the sub-tile's chunks.
  std::vector<int> seen(2048 / 16, 0);
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t q = 0; q < 4; ++q) ++seen[gemm::swizzle_64b(r, 16 * q) / 16];
  for (int n : seen) EXPECT_EQ(n, 1);
}

// C sits inside a larger buffer whose bytes before and after it hold a pattern: the kernel must write
// every element of C and nothing else. `c_offset` halves from a 16-byte boundary (0: TMA path if N %
// 8 == 0; 1: the direct path).
void expect_c_written_and_guards_intact(const GemmCase& c, int c_offset) {
  const gemm::HostNvfp4Problem p = gemm::make_nvfp4_problem(c.M, c.N, c.K, c.L, c.tier, gemm::seed_for(c.name));
  gemm::DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
  const size_t count = size_t(c.M) * c.N * c.L, guard = 4096;  // halves of guard on each side
  gemm::DeviceBuffer<uint16_t> buf(guard + count + guard + 8);
  std::vector<uint16_t> pattern(buf.size());
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = uint16_t(0xA5A5u ^ (i * 40503u));
  buf.upload(pattern);
  uint16_t* C = buf.get() + guard + c_offset;
  // C itself starts poisoned (NaN), so an output the kernel forgets cannot pass.
  CUDA_CHECK(cudaMemset(C, 0xFF, count * 2));
  const gemm::Nvfp4GemmArgs args{c.M, c.N, c.K, c.L, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha,
                                 reinterpret_cast<__half*>(C)};
  stage07::launch(args, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<uint16_t> got = buf.download();
  size_t touched = 0;
  for (size_t i = 0; i < guard + size_t(c_offset); ++i) touched += got[i] != pattern[i];
  for (size_t i = guard + c_offset + count; i < got.size(); ++i) touched += got[i] != pattern[i];
  EXPECT_EQ(touched, 0u) << "bytes outside C were written";
  const std::vector<uint16_t> out(got.begin() + long(guard + c_offset), got.begin() + long(guard + c_offset + count));
  const gemm::CompareResult r = gemm::compare_fp16(out, gemm::reference_gemm(p.host_args()),
                                                   {c.M, c.N, c.K, c.L, kTile.m, kTile.n}, c.tier);
  EXPECT_TRUE(r.ok()) << r.describe();
}

struct GuardCase {
  const char* name;
  GemmCase shape;
  int c_offset;
};
class GpuNvfp4EpilogueTmaGuards : public ::testing::TestWithParam<GuardCase> {};
TEST_P(GpuNvfp4EpilogueTmaGuards, WritesCAndNothingElse) {
  GEMM_REQUIRE_GPU();
  expect_c_written_and_guards_intact(GetParam().shape, GetParam().c_offset);
}
INSTANTIATE_TEST_SUITE_P(
    Paths, GpuNvfp4EpilogueTmaGuards,
    ::testing::Values(
        // TMA path: tails clipped by the store in M and N (N % 8 == 0), one CTA of the pair past M.
        GuardCase{"tma_tails", make_case("guard_tma", Tier::kExact, 129, 136, 288), 0},
        GuardCase{"tma_small", make_case("guard_tma_small", Tier::kExact, 1, 8, 32), 0},
        GuardCase{"tma_batches", make_case("guard_tma_l3", Tier::kRealistic, 300, 200, 512, 3), 0},
        GuardCase{"tma_split_k", make_case("guard_tma_split", Tier::kRealistic, 128, 4096, 7168), 0},
        // Direct path: N % 8 != 0, and C not 16-byte aligned.
        GuardCase{"direct_odd_n", make_case("guard_direct", Tier::kExact, 129, 131, 288), 0},
        GuardCase{"direct_misaligned_c", make_case("guard_direct_c", Tier::kExact, 200, 64, 256), 1}),
    [](const ::testing::TestParamInfo<GuardCase>& i) { return std::string(i.param.name); });

}  // namespace
