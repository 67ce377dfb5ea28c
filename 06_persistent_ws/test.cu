// Stage 06 against the CPU reference: stage 05's cases (the common NVFP4 cases, every boundary of the
// 256 x 128 tile, the K sweep), plus what the persistent schedule adds: many units per pair (grids of
// one and two pairs, both accumulators reused many times), batches crossed by the schedule, C's
// neighbourhood untouched; and the schedule itself on the CPU. On Hopper the tcgen05 instructions run
// through the emulator in strict mode.
#include "kernel.cuh"

#include <vector>

#include "common/harness/gemm_tests.h"

namespace {

using gemm::Tier;
using gemm::testing::GemmCase;
constexpr gemm::testing::Tile kTile{stage06::kBM, stage06::kBN, stage06::kTileK};

using gemm::testing::make_case;

std::vector<GemmCase> cases() {
  auto c = gemm::testing::kind_cases(stage06::kStage, kTile);
  for (int M : {1, 127, 128, 129, 255, 256, 257})
    for (int N : {1, 16, 17, 127, 128, 129, 255, 257}) c.push_back(make_case("tail", Tier::kExact, M, N, 160));
  const int T = stage06::kTileK, S = stage06::kSlots;
  for (int K : {32, 64, 96, T, S * T, (S + 1) * T + 32, 4 * S * T + 96})
    for (Tier tier : {Tier::kExact, Tier::kRealistic}) c.push_back(make_case("pipeline", tier, 130, 260, K));
  // An M = 128 benchmark shape: 32 tiles, fewer than the pairs of a B200 or an H100.
  for (Tier tier : {Tier::kExact, Tier::kRealistic}) c.push_back(make_case("small_m", tier, 128, 4096, 7168));
  return c;
}

GEMM_STAGE_TESTS(Nvfp4Persistent, stage06::kStage, stage06::launch, cases(), kTile)

// ---- Forced schedules ---------------------------------------------------------------------------------

void one_pair(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage06::launch_with(a, s, {1, {}}); }
void two_pairs(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage06::launch_with(a, s, {2, {}}); }
void five_pairs(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage06::launch_with(a, s, {5, {}}); }

struct ForcedCase {
  const char* name;
  gemm::Launcher launch;
  GemmCase shape;
};

class GpuNvfp4PersistentSchedule : public ::testing::TestWithParam<ForcedCase> {};
TEST_P(GpuNvfp4PersistentSchedule, MatchesCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(GetParam().launch, GetParam().shape, kTile);
}
INSTANTIATE_TEST_SUITE_P(
    Forced, GpuNvfp4PersistentSchedule,
    ::testing::Values(
        // One pair does every unit: 4 x 6 tiles, both accumulators reused many times, the ring's
        // phases carried from unit to unit.
        ForcedCase{"one_pair_many_units", one_pair, make_case("one_pair", Tier::kExact, 1000, 700, 512)},
        ForcedCase{"two_pairs_many_units", two_pairs, make_case("two_pairs", Tier::kRealistic, 777, 555, 800)},
        // The schedule crosses batches: 3 batches of 2 x 2 tiles over 5 pairs.
        ForcedCase{"batches_crossed", five_pairs, make_case("batches", Tier::kExact, 300, 200, 288, 3)}),
    [](const ::testing::TestParamInfo<ForcedCase>& i) { return std::string(i.param.name); });

// C inside guard bytes: the tails of M and N, and an element-aligned C.
TEST(GpuNvfp4PersistentGuards, WritesCAndNothingElse) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case_with_guards(stage06::launch, make_case("guard", Tier::kExact, 129, 131, 288, 2), kTile);
  gemm::testing::run_case_with_guards(stage06::launch, make_case("guard_c", Tier::kExact, 200, 64, 256), kTile, 1);
}

// ---- The schedule itself (CPU) --------------------------------------------------------------------------

TEST(PersistentSchedule, EveryTileIsCoveredExactlyOnce) {
  for (int pairs : {1, 7, 74}) {
    auto* base = reinterpret_cast<const uint8_t*>(0x10000);
    const gemm::Nvfp4GemmArgs a{1000, 900, 512, 2, base, base, base, base, 1.0f, nullptr};
    const stage06::Schedule s = stage06::make_schedule(a, pairs);
    ASSERT_EQ(s.units, 4 * 8 * 2);
    ASSERT_EQ(s.pairs, std::min(pairs, s.units));
    std::vector<int> covered(size_t(s.units), 0);
    for (int p = 0; p < s.pairs; ++p)
      for (int u = p; u < s.units; u += s.pairs) {
        const stage06::Unit w = stage06::unit_at(s, u);
        ++covered[(size_t(w.batch) * s.tiles_m + w.m0 / 256) * s.tiles_n + w.n0 / 128];
      }
    for (int c : covered) ASSERT_EQ(c, 1) << "pairs " << pairs;
  }
}

TEST(PersistentSchedule, TileOrderGroupsRowsForL2Reuse) {
  stage06::Schedule s{};
  s.tiles_m = 10, s.tiles_n = 3, s.L = 1, s.units = 30;
  // The first kGroupM tiles walk down one column of the first group of rows.
  for (int u = 0; u < stage06::kGroupM; ++u) {
    EXPECT_EQ(stage06::unit_at(s, u).n0, 0);
    EXPECT_EQ(stage06::unit_at(s, u).m0, u * 256);
  }
  // The last group (rows 8, 9) is narrower.
  EXPECT_EQ(stage06::unit_at(s, 24).m0, 8 * 256);
  EXPECT_EQ(stage06::unit_at(s, 25).m0, 9 * 256);
  EXPECT_EQ(stage06::unit_at(s, 26).n0, 128);
}

TEST(PersistentSchedule, MaxPairsLimitsTheGrid) {
  auto* base = reinterpret_cast<const uint8_t*>(0x10000);
  const gemm::Nvfp4GemmArgs a{4096, 4096, 256, 1, base, base, base, base, 1.0f, nullptr};
  EXPECT_EQ(stage06::make_schedule(a, 74).pairs, 74);
  EXPECT_EQ(stage06::make_schedule(a, 74, {3, {}}).pairs, 3);
  const gemm::Nvfp4GemmArgs small{100, 100, 256, 1, base, base, base, base, 1.0f, nullptr};
  EXPECT_EQ(stage06::make_schedule(small, 74).pairs, 1);  // never more pairs than units
}

TEST(PersistentLayout, BudgetsFit) {
  EXPECT_EQ(sizeof(stage06::Slot), 28672u);
  EXPECT_EQ(stage06::kSlots, 7);  // 8 would leave less than kStaticSmemMargin for static shared memory
  EXPECT_LE(stage06::kTmemColumnsUsed, 512);
  EXPECT_LE(stage06::kSmemBytes + stage06::kStaticSmemMargin, stage06::kSmemPerBlock);
  EXPECT_EQ(stage06::d_column(1), 128u);
  EXPECT_GE(stage06::sfa_column(0, 0), 256u);
}

}  // namespace
