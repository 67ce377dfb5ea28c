// Stage 07 against the CPU reference: stage 06's cases (the common NVFP4 cases, every boundary of the
// 256 x 128 tile, the K sweep, forced schedules), plus what the TMA-store epilogue adds: both epilogue
// paths (N % 8 == 0 and not, C aligned and not), tails clipped by the store, C's neighbourhood
// untouched (guard bytes), staging buffers reused over many sub-tiles, and a bank-conflict-free
// staging layout. On Hopper the tcgen05 instructions run through the emulator.
#include "kernel.cuh"

#include <vector>

#include "common/bank_model.h"
#include "common/harness/gemm_tests.h"
#include "common/swizzle.h"

namespace {

using gemm::Tier;
using gemm::testing::GemmCase;
constexpr gemm::testing::Tile kTile{stage07::kBM, stage07::kBN, stage07::kTileK};

using gemm::testing::make_case;

std::vector<GemmCase> cases() {
  auto c = gemm::testing::kind_cases(stage07::kStage, kTile);
  for (int M : {1, 127, 128, 129, 255, 256, 257})
    for (int N : {1, 16, 17, 127, 128, 129, 255, 257}) c.push_back(make_case("tail", Tier::kExact, M, N, 160));
  const int T = stage07::kTileK, S = stage07::kSlots;
  for (int K : {32, 64, 96, T, S * T, (S + 1) * T + 32, 4 * S * T + 96})
    for (Tier tier : {Tier::kExact, Tier::kRealistic}) c.push_back(make_case("pipeline", tier, 130, 260, K));
  // An M = 128 benchmark shape: 32 tiles, fewer than the pairs of a B200 or an H100.
  for (Tier tier : {Tier::kExact, Tier::kRealistic}) c.push_back(make_case("small_m", tier, 128, 4096, 7168));
  return c;
}

GEMM_STAGE_TESTS(Nvfp4EpilogueTma, stage07::kStage, stage07::launch, cases(), kTile)

// ---- Forced schedules ---------------------------------------------------------------------------------

void one_pair(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage07::launch_with(a, s, {1, {}}); }
void two_pairs(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage07::launch_with(a, s, {2, {}}); }
void five_pairs(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage07::launch_with(a, s, {5, {}}); }

struct ForcedCase {
  const char* name;
  gemm::Launcher launch;
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
        // One pair does every unit: 4 x 6 tiles, both accumulators reused many times, the ring's
        // phases carried from unit to unit.
        ForcedCase{"one_pair_many_units", one_pair, make_case("one_pair", Tier::kExact, 1000, 700, 512)},
        ForcedCase{"two_pairs_many_units", two_pairs, make_case("two_pairs", Tier::kRealistic, 777, 555, 800)},
        // The schedule crosses batches: 3 batches of 2 x 2 tiles over 5 pairs.
        ForcedCase{"batches_crossed", five_pairs, make_case("batches", Tier::kExact, 300, 200, 288, 3)}),
    [](const ::testing::TestParamInfo<ForcedCase>& i) { return std::string(i.param.name); });

// ---- The schedule itself (CPU) --------------------------------------------------------------------------

TEST(EpilogueTmaSchedule, EveryTileIsCoveredExactlyOnce) {
  for (int pairs : {1, 7, 74}) {
    auto* base = reinterpret_cast<const uint8_t*>(0x10000);
    const gemm::Nvfp4GemmArgs a{1000, 900, 512, 2, base, base, base, base, 1.0f, nullptr};
    const stage07::Schedule s = stage07::make_schedule(a, pairs);
    ASSERT_EQ(s.units, 4 * 8 * 2);
    ASSERT_EQ(s.pairs, std::min(pairs, s.units));
    std::vector<int> covered(size_t(s.units), 0);
    for (int p = 0; p < s.pairs; ++p)
      for (int u = p; u < s.units; u += s.pairs) {
        const stage07::Unit w = stage07::unit_at(s, u);
        ++covered[(size_t(w.batch) * s.tiles_m + w.m0 / 256) * s.tiles_n + w.n0 / 128];
      }
    for (int c : covered) ASSERT_EQ(c, 1) << "pairs " << pairs;
  }
}

TEST(EpilogueTmaSchedule, TileOrderGroupsRowsForL2Reuse) {
  stage07::Schedule s{};
  s.tiles_m = 10, s.tiles_n = 3, s.L = 1, s.units = 30;
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

TEST(EpilogueTmaSchedule, MaxPairsLimitsTheGrid) {
  auto* base = reinterpret_cast<const uint8_t*>(0x10000);
  const gemm::Nvfp4GemmArgs a{4096, 4096, 256, 1, base, base, base, base, 1.0f, nullptr};
  EXPECT_EQ(stage07::make_schedule(a, 74).pairs, 74);
  EXPECT_EQ(stage07::make_schedule(a, 74, {3, {}}).pairs, 3);
  const gemm::Nvfp4GemmArgs small{100, 100, 256, 1, base, base, base, base, 1.0f, nullptr};
  EXPECT_EQ(stage07::make_schedule(small, 74).pairs, 1);  // never more pairs than units
}

TEST(EpilogueTmaLayout, BudgetsFit) {
  EXPECT_EQ(sizeof(stage07::Slot), 28672u);
  EXPECT_EQ(stage07::kSlots, 7);  // the staging's 16 KB fit beside stage 06's 7 slots
  EXPECT_LE(stage07::kTmemColumnsUsed, 512);
  EXPECT_LE(stage07::kSmemBytes + stage07::kStaticSmemMargin, stage07::kSmemPerBlock);
  EXPECT_EQ(stage07::d_column(1), 128u);
  EXPECT_GE(stage07::sfa_column(0, 0), 256u);
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

struct GuardCase {
  const char* name;
  GemmCase shape;
  int c_offset;
};
class GpuNvfp4EpilogueTmaGuards : public ::testing::TestWithParam<GuardCase> {};
TEST_P(GpuNvfp4EpilogueTmaGuards, WritesCAndNothingElse) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case_with_guards(stage07::launch, GetParam().shape, kTile, GetParam().c_offset);
}
INSTANTIATE_TEST_SUITE_P(
    Paths, GpuNvfp4EpilogueTmaGuards,
    ::testing::Values(
        // TMA path: tails clipped by the store in M and N (N % 8 == 0), one CTA of the pair past M.
        GuardCase{"tma_tails", make_case("guard_tma", Tier::kExact, 129, 136, 288), 0},
        GuardCase{"tma_small", make_case("guard_tma_small", Tier::kExact, 1, 8, 32), 0},
        GuardCase{"tma_batches", make_case("guard_tma_l3", Tier::kRealistic, 300, 200, 512, 3), 0},
        GuardCase{"tma_many_units", make_case("guard_tma_many", Tier::kRealistic, 600, 1000, 256), 0},
        // Direct path: N % 8 != 0, and C not 16-byte aligned.
        GuardCase{"direct_odd_n", make_case("guard_direct", Tier::kExact, 129, 131, 288), 0},
        GuardCase{"direct_misaligned_c", make_case("guard_direct_c", Tier::kExact, 200, 64, 256), 1}),
    [](const ::testing::TestParamInfo<GuardCase>& i) { return std::string(i.param.name); });

}  // namespace
