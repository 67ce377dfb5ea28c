// Both steps of stage 10 (kernel_table.cuh, kernel.cuh) against the CPU reference: the group kind's cases (GPU MODE's four benchmark problems,
// random groups, empty groups first, last and between, M_g = 1, tails in M, N and K, groups of different
// N and K in one call, more groups than one launch's table holds, scale padding filled with random
// non-zero codes that must not reach C), forced schedules that carry the ring and the accumulators
// across groups, both epilogue paths with C's neighbourhood guarded, and the host-side cache. On
// Hopper the tcgen05 instructions run through the emulator, under the protocol checker.
#include "kernel_table.cuh"
#include "kernel.cuh"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/bank_model.h"
#include "common/harness/gemm_tests.h"
#include "common/swizzle.h"

namespace {

using gemm::Tier;
using gemm::testing::GemmCase;
// Step 1's tile is 256 tokens x 128 weight rows; step 2's 128 tokens x 256 weight rows (rows x columns of C).
constexpr gemm::testing::Tile kTileTable{stage10_table::kBM, stage10_table::kBN, stage10_table::kTileK};
constexpr gemm::testing::Tile kTile{stage10::kBN, stage10::kBM, stage10::kTileK};

// A case of the group kind from its groups' (M, N, K); the name seeds the data.
GemmCase group_case(const std::string& label, Tier tier, const std::vector<gemm::GroupSize>& groups) {
  return {std::string(gemm::tier_name(tier)) + "_stage10_" + label, gemm::group_shape(label, groups), tier};
}

std::vector<GemmCase> cases(gemm::testing::Tile tile) {
  auto c = gemm::testing::kind_cases(stage10::kStage, tile);
  // Every group a different K, so the ring's k-tile count changes from unit to unit of one pair.
  for (Tier tier : {Tier::kExact, Tier::kRealistic})
    c.push_back(group_case("k_changes", tier, {{300, 256, 32}, {129, 136, 1056}, {1, 8, 96}, {257, 384, 2048}}));
  return c;
}

GEMM_STAGE_TESTS(Nvfp4GroupTable, stage10_table::kStage, stage10_table::launch, cases(kTileTable), kTileTable)
GEMM_STAGE_TESTS(Nvfp4GroupGemm, stage10::kStage, stage10::launch, cases(kTile), kTile)

// ---- Forced schedules ---------------------------------------------------------------------------------

template <int kPairs>
void table_pairs(const gemm::Nvfp4GroupGemmArgs& a, cudaStream_t s) { stage10_table::launch_with(a, s, {kPairs, {}}); }
template <int kPairs>
void swap_pairs(const gemm::Nvfp4GroupGemmArgs& a, cudaStream_t s) { stage10::launch_with(a, s, {kPairs, {}}); }

struct ForcedCase {
  const char* name;
  gemm::Launcher launch;
  GemmCase shape;
};
class GpuNvfp4GroupGemmSchedule : public ::testing::TestWithParam<ForcedCase> {};
TEST_P(GpuNvfp4GroupGemmSchedule, MatchesCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(GetParam().launch, GetParam().shape, kTile);
}
INSTANTIATE_TEST_SUITE_P(
    Forced, GpuNvfp4GroupGemmSchedule,
    ::testing::Values(
        // One pair does every unit of every group: the ring's phases and both accumulators carried
        // across group boundaries, an empty group in between.
        ForcedCase{"table_one_pair_across_groups", table_pairs<1>,
                   group_case("one_pair", Tier::kExact, {{300, 200, 512}, {0, 64, 64}, {513, 136, 288}, {17, 300, 96}})},
        ForcedCase{"table_two_pairs_across_groups", table_pairs<2>,
                   group_case("two_pairs", Tier::kRealistic, {{777, 255, 800}, {64, 512, 256}, {200, 129, 32}})},
        ForcedCase{"table_five_pairs_one_tile_groups", table_pairs<5>,
                   group_case("five_pairs", Tier::kExact,
                              {{1, 1, 32}, {256, 128, 256}, {5, 7, 64}, {0, 1, 32}, {250, 120, 160}, {3, 130, 64}})},
        ForcedCase{"swap_one_pair_across_groups", swap_pairs<1>,
                   group_case("one_pair", Tier::kExact, {{300, 200, 512}, {0, 64, 64}, {513, 136, 288}, {17, 300, 96}})},
        ForcedCase{"swap_two_pairs_across_groups", swap_pairs<2>,
                   group_case("two_pairs", Tier::kRealistic, {{777, 255, 800}, {64, 512, 256}, {200, 129, 32}})},
        // Many token tiles per weight tile: the raster's second column of a group of weight tiles.
        ForcedCase{"swap_five_pairs_many_token_tiles", swap_pairs<5>,
                   group_case("token_tiles", Tier::kExact, {{700, 600, 256}, {5, 7, 64}, {0, 1, 32}, {129, 1000, 96}})}),
    [](const ::testing::TestParamInfo<ForcedCase>& i) { return std::string(i.param.name); });

// ---- Both epilogue paths, with C's neighbourhood guarded -------------------------------------------------

struct GuardCase {
  const char* name;
  GemmCase shape;
  int c_offset;
};
class GpuNvfp4GroupGemmGuards : public ::testing::TestWithParam<GuardCase> {};
TEST_P(GpuNvfp4GroupGemmGuards, WritesCAndNothingElse) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case_with_guards(stage10_table::launch, GetParam().shape, kTileTable, GetParam().c_offset);
  gemm::testing::run_case_with_guards(stage10::launch, GetParam().shape, kTile, GetParam().c_offset);
}
INSTANTIATE_TEST_SUITE_P(
    Paths, GpuNvfp4GroupGemmGuards,
    ::testing::Values(
        // TMA stores (every N a multiple of 8, every C_g 16-byte aligned), tails clipped in M and N.
        GuardCase{"tma", group_case("guard_tma", Tier::kExact, {{129, 136, 288}, {0, 8, 32}, {300, 64, 512}}), 0},
        GuardCase{"tma_tails", group_case("guard_tma_tails", Tier::kRealistic, {{33, 264, 96}, {1, 8, 32}, {257, 520, 64}}),
                  0},
        // Direct stores: one group's N is odd, so no group uses TMA stores; then C one element off.
        GuardCase{"direct_odd_n", group_case("guard_direct", Tier::kExact, {{129, 136, 288}, {40, 131, 64}}), 0},
        GuardCase{"direct_misaligned_c", group_case("guard_direct_c", Tier::kExact, {{200, 64, 256}, {7, 64, 32}}), 1}),
    [](const ::testing::TestParamInfo<GuardCase>& i) { return std::string(i.param.name); });

// ---- The cache ---------------------------------------------------------------------------------------------

// A second call with the same table reuses the cached one; a changed field (here alpha) is a new
// problem, whose result must reflect the change.
TEST(GpuNvfp4GroupGemmCache, RepeatedCallsHitAndChangedTablesMiss) {
  GEMM_REQUIRE_GPU();
  const GemmCase c = group_case("cache", Tier::kExact, {{100, 64, 128}, {0, 64, 64}, {40, 136, 96}});
  const gemm::Kind& kind = stage10::kStage.kind();
  const auto problem = kind.make_problem(c.shape, c.tier, 7);
  const auto in = problem->upload();
  gemm::DeviceBuffer<uint8_t> C(size_t(kind.output_bytes(c.shape)));
  gemm::AnyArgs args = in->args(0, C.get());
  stage10::table_cache().clear();
  const auto before = stage10::table_cache().stats();
  for (int i = 0; i < 3; ++i) stage10::launch(args.as<gemm::Nvfp4GroupGemmArgs>(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  auto after = stage10::table_cache().stats();
  EXPECT_EQ(after.misses - before.misses, 1);
  EXPECT_EQ(after.hits - before.hits, 2);
  // Doubling alpha doubles every output exactly where the output is a normal FP16 with room to double.
  gemm::AnyArgs doubled = args.clone();
  for (auto& g : doubled.as<gemm::Nvfp4GroupGemmArgs>().groups) g.alpha *= 2;
  const std::vector<uint8_t> once = [&] {
    C.fill_bytes(0xFF);
    stage10::launch(args.as<gemm::Nvfp4GroupGemmArgs>(), nullptr);
    return C.download();
  }();
  C.fill_bytes(0xFF);
  stage10::launch(doubled.as<gemm::Nvfp4GroupGemmArgs>(), nullptr);
  const std::vector<uint8_t> twice = C.download();
  EXPECT_EQ(stage10::table_cache().stats().misses - after.misses, 1);
  size_t compared = 0, wrong = 0;
  for (size_t i = 0; i + 1 < once.size(); i += 2) {
    __half a, b;
    std::memcpy(&a, &once[i], 2);
    std::memcpy(&b, &twice[i], 2);
    if (once[i] == 0xFF && once[i + 1] == 0xFF) continue;  // a gap between groups
    const float x = __half2float(a);
    if (!(std::fabs(x) >= 0x1p-13f && std::fabs(x) <= 16384.0f)) continue;
    ++compared;
    wrong += __half2float(b) != 2.0f * x;
  }
  EXPECT_GT(compared, 0u);
  EXPECT_EQ(wrong, 0u);
}

// ---- The schedule and the table (CPU) ---------------------------------------------------------------------

// Groups on placeholder addresses (never dereferenced: nothing is encoded or launched): inputs shared
// at one address, each C_g in a range of its own.
std::vector<gemm::Nvfp4Group> fake_groups(const std::vector<gemm::GroupSize>& sizes) {
  std::vector<gemm::Nvfp4Group> v;
  auto* p = reinterpret_cast<const uint8_t*>(0x10000);
  for (const auto& s : sizes)
    v.push_back({s.M, s.N, s.K, p, p, p, p, 1.0f, reinterpret_cast<__half*>(uintptr_t(0x10000000) * (v.size() + 1))});
  return v;
}

// Every tile of every group exactly once, whatever the number of pairs; a role's group never goes
// back; empty groups have no units. `tile_m` / `tile_n`: a step's tile in rows / columns of C.
template <class Table, class UnitAt>
void expect_every_tile_once(const std::vector<gemm::Nvfp4Group>& groups, const Table& t, UnitAt unit_at, int tile_m,
                            int tile_n) {
  for (int pairs : {1, 3, 7, 74}) {
    std::vector<std::vector<int>> covered(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) covered[g].assign(size_t(t.info[g].tiles_m * t.info[g].tiles_n), 0);
    for (int p = 0; p < std::min(pairs, t.units); ++p) {
      int cursor = 0, last = -1;
      for (int u = p; u < t.units; u += pairs) {
        const auto w = unit_at(t, u, cursor);
        ASSERT_GE(w.group, last) << "a role's group never goes back";
        last = w.group;
        ASSERT_GT(groups[size_t(w.group)].M, 0) << "an empty group has no units";
        ASSERT_EQ(w.m0 % tile_m, 0);
        ASSERT_EQ(w.n0 % tile_n, 0);
        ++covered[size_t(w.group)][size_t((w.m0 / tile_m) * t.info[w.group].tiles_n + w.n0 / tile_n)];
      }
    }
    for (const auto& g : covered)
      for (int n : g) ASSERT_EQ(n, 1) << "pairs " << pairs;
  }
}

TEST(GroupGemmSchedule, EveryTileOfEveryGroupIsCoveredExactlyOnce) {
  const auto groups = fake_groups({{0, 64, 64}, {1000, 900, 512}, {1, 1, 32}, {0, 5, 32}, {257, 129, 96}, {0, 8, 32}});
  const int G = int(groups.size());
  const auto t1 = stage10_table::make_table<stage10_table::kSmallTable>(groups, 0, G, false, false);
  ASSERT_EQ(t1.units, 4 * 8 + 1 + 2 * 2);  // tiles of 256 tokens x 128 weight rows
  expect_every_tile_once(groups, t1, [](const auto& t, int u, int& g) { return stage10_table::unit_at(t, u, g); },
                         stage10_table::kBM, stage10_table::kBN);
  const auto t2 = stage10::make_table<stage10::kSmallTable>(groups, 0, G, false, false);
  ASSERT_EQ(t2.units, 8 * 4 + 1 + 3 * 1);  // tiles of 128 tokens x 256 weight rows
  expect_every_tile_once(groups, t2, [](const auto& t, int u, int& g) { return stage10::unit_at(t, u, g); },
                         stage10::kBN, stage10::kBM);
}

// Step 2's raster: the first kGroupM units of a group walk down its weight tiles at token tile 0, so a
// weight tile's next token tile comes kGroupM units later, while it is still in L2.
TEST(GroupGemmSchedule, SwapWalksWeightTilesFirst) {
  const auto groups = fake_groups({{300, 4096, 256}});
  const auto t = stage10::make_table<stage10::kSmallTable>(groups, 0, 1, false, false);
  ASSERT_EQ(t.info[0].tiles_n, 16);
  ASSERT_EQ(t.info[0].tiles_m, 3);
  int g = 0;
  for (int u = 0; u < stage10::kGroupM; ++u) {
    const stage10::Unit w = stage10::unit_at(t, u, g);
    EXPECT_EQ(w.m0, 0);
    EXPECT_EQ(w.n0, u * stage10::kBM);
  }
  EXPECT_EQ(stage10::unit_at(t, stage10::kGroupM, g).m0, stage10::kBN);
  EXPECT_EQ(stage10::unit_at(t, stage10::kGroupM, g).n0, 0);
}

// Step 2's staging write: lane l writes column l of row i (2 bytes each); with the 64-byte swizzle a
// warp's store touches one 64-byte row: no bank conflict.
TEST(GroupGemmStaging, TransposedStagingStoresAreBankConflictFree) {
  for (uint32_t i = 0; i < 32; ++i) {
    std::vector<uint32_t> addr(32);
    for (uint32_t lane = 0; lane < 32; ++lane) addr[lane] = gemm::swizzle_64b(i, 2 * lane);
    // A 2-byte access occupies its 4-byte word's bank: modelled as a 4-byte access to that word.
    EXPECT_EQ(gemm::bank_conflicts(addr, 4).degree(), 1) << "row " << i;
  }
}

TEST(GroupGemmTable, FitsTheKernelParameterLimit) {
  EXPECT_EQ(sizeof(stage10::GroupMaps), 5u * 128u);
  EXPECT_EQ(sizeof(stage10_table::GroupTable<stage10_table::kGroupsPerLaunch>),
            sizeof(stage10::GroupTable<stage10::kGroupsPerLaunch>));
  EXPECT_LE(sizeof(stage10::GroupTable<stage10::kGroupsPerLaunch>) + stage10::kOtherParamBytes,
            size_t(stage10::kParamBytes));
  EXPECT_GT(sizeof(stage10::GroupTable<stage10::kGroupsPerLaunch + 1>) + stage10::kOtherParamBytes,
            size_t(stage10::kParamBytes - stage10::kTableAlignmentSlack))
      << "kGroupsPerLaunch could be larger";
  EXPECT_EQ(stage10::kGroupsPerLaunch, 47);
}

TEST(GroupGemmTable, MoreGroupsThanOneTableAreSplitOverLaunches) {
  const auto few = stage10::make_tables({fake_groups({{130, 64, 64}, {0, 64, 64}, {1, 8, 32}})}, false);
  ASSERT_EQ(few.small.size(), 1u);
  EXPECT_TRUE(few.large.empty());
  EXPECT_EQ(few.small[0].groups, 3);
  EXPECT_EQ(few.small[0].units, 3);  // 130 tokens: two token tiles of 128; 1 token: one
  EXPECT_TRUE(few.tma_store);
  const int G = 2 * stage10::kGroupsPerLaunch + 3;
  const auto many = stage10::make_tables({fake_groups(std::vector<gemm::GroupSize>(size_t(G), {130, 64, 64}))}, false);
  EXPECT_TRUE(many.small.empty());
  ASSERT_EQ(many.large.size(), 3u);
  EXPECT_EQ(many.large[0].groups, stage10::kGroupsPerLaunch);
  EXPECT_EQ(many.large[2].groups, 3);
  EXPECT_EQ(many.large[2].units, 3 * 2);
  EXPECT_EQ(many.large[1].info[1].first_unit, 2);  // each launch's prefix sum starts at 0
  EXPECT_EQ(stage10_table::make_tables({fake_groups({{130, 64, 64}, {0, 64, 64}, {1, 8, 32}})}, false).small[0].units,
            2);  // step 1: 130 tokens in one tile of 256 rows, 1 token in another
  // One group with N % 8 != 0 sends every group to the direct-store epilogue.
  EXPECT_FALSE(stage10::make_tables({fake_groups({{130, 64, 64}, {5, 9, 32}})}, false).tma_store);
  EXPECT_TRUE(stage10::make_tables({fake_groups({{130, 64, 64}, {0, 9, 32}})}, false).tma_store);  // empty: no C
}

TEST(GroupGemmTable, InvalidTablesThrowEveryTimeAndAreNeverCached) {
  auto groups = fake_groups({{100, 64, 64}, {50, 64, 48}});  // groups[1].K is not a multiple of 32
  const gemm::Nvfp4GroupGemmArgs bad{groups};
  stage10::table_cache().clear();
  for (int i = 0; i < 2; ++i) {
    try {
      stage10::launch(bad, nullptr);
      ADD_FAILURE() << "accepted an invalid table";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("groups[1].K"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(stage10::table_cache().stats().hits, 0);
}

TEST(ProblemCache, KeepsTheMostRecentlyUsedAndCachesNothingThatThrew) {
  gemm::ProblemCache<int, int> cache(2);
  int made = 0;
  auto make = [&](int v) { return [&made, v] { ++made; return v * 10; }; };
  EXPECT_EQ(*cache.get(1, make(1)), 10);
  EXPECT_EQ(*cache.get(2, make(2)), 20);
  EXPECT_EQ(*cache.get(1, make(1)), 10);  // hit: 1 is now the most recent
  EXPECT_EQ(*cache.get(3, make(3)), 30);  // evicts 2
  EXPECT_EQ(made, 3);
  EXPECT_EQ(*cache.get(1, make(1)), 10);
  EXPECT_EQ(made, 3);
  EXPECT_EQ(*cache.get(2, make(2)), 20);  // made again
  EXPECT_EQ(made, 4);
  EXPECT_THROW(cache.get(9, [] () -> int { throw std::invalid_argument("no"); }), std::invalid_argument);
  EXPECT_EQ(cache.stats().misses, 4);
  EXPECT_EQ(cache.stats().hits, 2);
}

}  // namespace
