// Both steps of stage 05 (kernel_1cta.cuh, kernel.cuh) against the CPU reference: the common NVFP4
// cases, every boundary of the 128 x 128 tile of step 1 and the 256 x 256 pair tile of step 2, K from
// half an MMA step to many times around the ring, and scale padding filled with arbitrary values. On
// Hopper every tcgen05 instruction runs through the emulator in strict mode
// (common/harness/test_main.cpp), so a barrier-protocol hazard fails these tests with its message;
// on a B200 they run natively. The exact tier must match bit for bit; the realistic tier is held to
// an error bound valid for any FP32 accumulation order (common/harness/compare.h), so the same tests
// hold for the tensor core's own order.
#include "kernel_1cta.cuh"
#include "kernel.cuh"

#include <random>
#include <vector>

#include "common/device_buffer.h"
#include "common/emu/tcgen05_emu_state.h"
#include "common/harness/compare.h"
#include "common/harness/gemm_tests.h"
#include "common/reference.h"

namespace {

using gemm::DeviceBuffer;
using gemm::Tier;
using gemm::testing::GemmCase;
constexpr gemm::testing::Tile kTile1Cta{stage05_1cta::kBM, stage05_1cta::kBN, stage05_1cta::kTileK};
constexpr gemm::testing::Tile kTile{stage05::kBM, stage05::kBN, stage05::kTileK};

using gemm::testing::make_case;

// The common cases, plus the tiles' boundaries and the pipeline's K sweep.
std::vector<GemmCase> cases(gemm::testing::Tile tile, int slots) {
  auto c = gemm::testing::kind_cases(stage05::kStage, tile);
  // Every boundary of both steps' tiles: one row short of 128 (step 1's tile, the pair's leader
  // half), one past it (the peer's first row, step 1's next tile), one past 256 (the next pair);
  // N inside one MMA step of 16, one past, past 128 (step 1's next tile, the pair's peer half of B),
  // past 256. Exact tier: any wrong element shows.
  for (int M : {1, 127, 128, 129, 255, 256, 257})
    for (int N : {1, 16, 17, 127, 128, 129, 255, 257}) c.push_back(make_case("tail", Tier::kExact, M, N, 160));
  // K: half an MMA step, one step, a partial k-tile, one k-tile, exactly the ring, one more, and
  // many times around it (odd multiples of 32 leave a half step at the end).
  const int T = tile.k;
  for (int K : {32, 64, 96, T, slots * T, (slots + 1) * T + 32, 4 * slots * T + 96})
    for (Tier tier : {Tier::kExact, Tier::kRealistic}) c.push_back(make_case("pipeline", tier, 130, 260, K));
  return c;
}

// Step 1: one CTA.
GEMM_STAGE_TESTS(Nvfp4Tcgen05OneCta, stage05_1cta::kStage, stage05_1cta::launch,
                         cases(kTile1Cta, stage05_1cta::kSlots), kTile1Cta)
// Step 2: the CTA pair.
GEMM_STAGE_TESTS(Nvfp4Tcgen05, stage05::kStage, stage05::launch, cases(kTile, stage05::kSlots), kTile)

TEST(Tcgen05Steps, StepsAreRegisteredInTeachingOrder) {
  EXPECT_STREQ(stage05_1cta::kStage.id, "05_tcgen05_1cta");
  EXPECT_STREQ(stage05::kStage.id, GEMM_STAGE_ID);
  EXPECT_LT(std::string(stage05_1cta::kStage.id), std::string(stage05::kStage.id));  // the registry sorts by id
}

// ---- Scale padding is never read into C -------------------------------------------------------------

// Rows past M (N) and scale columns past K/16 exist in the blocked layout as padding. A kernel may
// load them (whole atoms travel), but they multiply zeros (TMA fills A and B past K with zeros) or
// land in rows nobody stores. Fill them with arbitrary finite scales: C must not change.
void fill_padding(gemm::Nvfp4Tensor& t, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> finite(0x01, 0x7E);  // every positive finite E4M3 code
  const int64_t rows = gemm::sf_padded_rows(t.rows), cols = gemm::sf_padded_cols(t.K);
  for (int l = 0; l < t.L; ++l)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k16 = 0; k16 < cols; ++k16)
        if (r >= t.rows || k16 >= t.K / gemm::kSfVector)
          t.sf[l * gemm::sf_batch_bytes(t.rows, t.K) + gemm::sf_offset(r, k16, t.K)] = uint8_t(finite(rng));
}

class GpuNvfp4Tcgen05Padding : public ::testing::TestWithParam<GemmCase> {};
void expect_padding_ignored(void (*launch)(const gemm::Nvfp4GemmArgs&, cudaStream_t), const GemmCase& c,
                            gemm::testing::Tile tile) {
  const gemm::Shape& s = c.shape;
  gemm::HostNvfp4Problem p = gemm::make_nvfp4_problem(s.M, s.N, s.K, s.L, c.tier, gemm::seed_for(c.name));
  std::mt19937_64 rng(gemm::seed_for(c.name + "padding"));
  fill_padding(p.a, rng);
  fill_padding(p.b, rng);
  DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
  DeviceBuffer<uint16_t> C(size_t(s.M) * s.N * s.L);
  C.fill_bytes(0xFF);
  launch({s.M, s.N, s.K, s.L, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha, reinterpret_cast<__half*>(C.get())},
         nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const gemm::CompareResult r = gemm::compare_fp16(C.download(), gemm::reference_gemm(p.host_args()),
                                                   {s.M, s.N, s.K, s.L, tile.m, tile.n}, c.tier);
  EXPECT_TRUE(r.ok()) << r.describe();
}
TEST_P(GpuNvfp4Tcgen05Padding, ArbitraryPaddingScalesDoNotChangeC) {
  GEMM_REQUIRE_GPU();
  expect_padding_ignored(stage05_1cta::launch, GetParam(), kTile1Cta);
  expect_padding_ignored(stage05::launch, GetParam(), kTile);
}
INSTANTIATE_TEST_SUITE_P(Shapes, GpuNvfp4Tcgen05Padding,
                         ::testing::Values(make_case("padding", Tier::kExact, 100, 70, 96),
                                           make_case("padding", Tier::kExact, 129, 200, 32, 2),
                                           make_case("padding", Tier::kRealistic, 257, 129, 544)),
                         gemm::testing::case_name);

// ---- What the kernel leaves behind ----------------------------------------------------------------------

TEST(GpuNvfp4Tcgen05Teardown, EveryRunFreesItsTensorMemory) {
  GEMM_REQUIRE_GPU();
  for (auto [launch, tile] : {std::pair{stage05_1cta::launch, kTile1Cta}, std::pair{stage05::launch, kTile}}) {
    gemm::testing::run_case(launch, make_case("teardown", Tier::kExact, 300, 300, 512), tile);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(gemm::emu::allocated_units(), 0) << "Tensor Memory left allocated (emulator)";
  }
}

// ---- The layout arithmetic the walkthrough prints ------------------------------------------------------

TEST(Tcgen05StageLayout, BudgetsFitAndSlotsFollowFromThem) {
  EXPECT_EQ(sizeof(stage05_1cta::Slot), 36864u);  // 16 KB A + 16 KB B + 2 KB SFA + 2 KB SFB
  EXPECT_EQ(sizeof(stage05::Slot), 38912u);       // 16 KB A + 16 KB B (half of 256 rows) + 2 KB SFA + 4 KB SFB
  EXPECT_EQ(stage05_1cta::kSlots, 6);
  EXPECT_EQ(stage05::kSlots, 5);
  EXPECT_LE(stage05_1cta::kTmemColumnsUsed, 512);
  EXPECT_LE(stage05::kTmemColumnsUsed, 512);
  // Dynamic shared memory plus the margin for static shared memory within the 227 KB of a block.
  EXPECT_LE(stage05_1cta::kSmemBytes + stage05_1cta::kStaticSmemMargin, 232448);
  EXPECT_LE(stage05::kSmemBytes + stage05::kStaticSmemMargin, 232448);
}

template <class ColumnOf>
void expect_columns_never_overlap(int d_columns, int slots, int sfb_atoms, ColumnOf sfa_column, ColumnOf sfb_column) {
  std::vector<int> owner(512, -1);
  auto claim = [&](uint32_t first, int count, int who) {
    for (int c = 0; c < count; ++c) {
      ASSERT_LT(first + c, 512u);
      ASSERT_EQ(owner[first + c], -1) << "column " << first + c << " used twice";
      owner[first + c] = who;
    }
  };
  claim(0, d_columns, 0);
  for (int s = 0; s < slots; ++s)
    for (int j = 0; j < stage05::kStepsPerTile; ++j) {
      ASSERT_EQ(sfa_column(s, j) % 2, 0u) << "scale columns must be even";
      ASSERT_EQ(sfb_column(s, j) % 2, 0u) << "scale columns must be even";
      claim(sfa_column(s, j), 4, 1 + s);
      claim(sfb_column(s, j), 4 * sfb_atoms, 1 + s);
    }
}
TEST(Tcgen05StageLayout, TmemColumnsOfSlotsAndStepsNeverOverlap) {
  expect_columns_never_overlap(stage05_1cta::kBN, stage05_1cta::kSlots, stage05_1cta::kSfbAtoms,
                               &stage05_1cta::sfa_column, &stage05_1cta::sfb_column);
  expect_columns_never_overlap(stage05::kBN, stage05::kSlots, stage05::kSfbAtoms, &stage05::sfa_column,
                               &stage05::sfb_column);
}

TEST(Tcgen05StageLayout, InstructionDescriptorsAreTheStepShapes) {
  EXPECT_EQ(stage05::instr_descriptor(), 0x10400480u);  // M 256, N 256 (FACTS 2.4)
  const auto d = gemm::tcgen05::decode_instr_descriptor(stage05_1cta::instr_descriptor());
  EXPECT_EQ(d.m, 128u);
  EXPECT_EQ(d.n, 128u);
}

}  // namespace
