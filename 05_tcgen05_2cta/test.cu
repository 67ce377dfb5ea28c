// Stage 05 against the CPU reference: the common NVFP4 cases, every boundary of the 256 x BN pair
// tile, K from half an MMA step to many times around the ring, both BN configurations, and scale
// padding filled with arbitrary values. On Hopper every tcgen05 instruction runs through the emulator
// in strict mode (common/harness/test_main.cpp), so a barrier-protocol hazard fails these tests
// with its message; on a B200 they run natively. The exact tier must match bit for bit; the
// realistic tier is held to an error bound valid for any FP32 accumulation order
// (common/harness/compare.h), so the same tests hold for the tensor core's own order.
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
constexpr gemm::testing::Tile kTile{stage05::kPairM, 256, stage05::kTileK};
constexpr gemm::testing::Tile kTile128{stage05::kPairM, 128, stage05::kTileK};

GemmCase make_case(const std::string& what, Tier tier, int M, int N, int K, int L = 1) {
  return {what + "_" + gemm::tier_name(tier) + "_M" + std::to_string(M) + "_N" + std::to_string(N) + "_K" +
              std::to_string(K) + "_L" + std::to_string(L),
          M, N, K, L, tier};
}

// The common cases, plus the pair tile's boundaries and the pipeline's K sweep.
std::vector<GemmCase> cases(gemm::testing::Tile tile, int stages) {
  auto c = gemm::testing::nvfp4_cases(tile);
  // Every boundary of the 256 x BN tile: one CTA of the pair past M (M <= 128), one row into the
  // odd CTA, one row into the next pair; N inside one MMA step of 16, one past, past BN/2 (the odd
  // CTA's half of B), past BN. Exact tier: any wrong element shows.
  for (int M : {1, 127, 128, 129, 255, 256, 257})
    for (int N : {1, 16, 17, 127, 128, 129, 255, 257}) c.push_back(make_case("tail", Tier::kExact, M, N, 160));
  // K: half an MMA step, one step, a partial k-tile, one k-tile, exactly the ring, one more, and
  // many times around it (odd multiples of 32 leave a half step at the end).
  const int T = stage05::kTileK;
  for (int K : {32, 64, 96, T, stages * T, (stages + 1) * T + 32, 4 * stages * T + 96})
    for (Tier tier : {Tier::kExact, Tier::kRealistic}) c.push_back(make_case("pipeline", tier, 130, 260, K));
  return c;
}

GEMM_STANDARD_STAGE_TESTS(Nvfp4Tcgen05, stage05::kStage, stage05::launch, cases(kTile, stage05::Config<256>::kStages),
                          kTile)

// The same tests for the BN = 128 configuration (its own launcher).
class GpuNvfp4Tcgen05Bn128 : public ::testing::TestWithParam<GemmCase> {};
TEST_P(GpuNvfp4Tcgen05Bn128, MatchesCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage05::launch_bn128, GetParam(), kTile128);
}
INSTANTIATE_TEST_SUITE_P(Shapes, GpuNvfp4Tcgen05Bn128,
                         ::testing::ValuesIn(cases(kTile128, stage05::Config<128>::kStages)),
                         gemm::testing::case_name);
TEST(Nvfp4Tcgen05Bn128Args, RejectsInvalidArgumentsBeforeAnyLaunch) {
  gemm::testing::expect_rejects_invalid_arguments_cpu(stage05::launch_bn128);
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
TEST_P(GpuNvfp4Tcgen05Padding, ArbitraryPaddingScalesDoNotChangeC) {
  GEMM_REQUIRE_GPU();
  const GemmCase c = GetParam();
  gemm::HostNvfp4Problem p = gemm::make_nvfp4_problem(c.M, c.N, c.K, c.L, c.tier, gemm::seed_for(c.name));
  std::mt19937_64 rng(gemm::seed_for(c.name + "padding"));
  fill_padding(p.a, rng);
  fill_padding(p.b, rng);
  DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
  DeviceBuffer<uint16_t> C(size_t(c.M) * c.N * c.L);
  C.fill_bytes(0xFF);
  stage05::launch({c.M, c.N, c.K, c.L, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha,
                   reinterpret_cast<__half*>(C.get())},
                  nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const gemm::CompareResult r = gemm::compare_fp16(C.download(), gemm::reference_gemm(p.host_args()),
                                                   {c.M, c.N, c.K, c.L, kTile.m, kTile.n}, c.tier);
  EXPECT_TRUE(r.ok()) << r.describe();
}
INSTANTIATE_TEST_SUITE_P(Shapes, GpuNvfp4Tcgen05Padding,
                         ::testing::Values(make_case("padding", Tier::kExact, 100, 70, 96),
                                           make_case("padding", Tier::kExact, 129, 200, 32, 2),
                                           make_case("padding", Tier::kRealistic, 257, 129, 544)),
                         gemm::testing::case_name);

// ---- What the kernel leaves behind ----------------------------------------------------------------------

TEST(GpuNvfp4Tcgen05Teardown, EveryRunFreesItsTensorMemory) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage05::launch, make_case("teardown", Tier::kExact, 300, 300, 512), kTile);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(gemm::emu::allocated_units(), 0) << "Tensor Memory left allocated (emulator)";
}

// ---- The layout arithmetic the walkthrough prints ------------------------------------------------------

TEST(Tcgen05StageLayout, BudgetsFitAndStagesFollowFromThem) {
  using C256 = stage05::Config<256>;
  using C128 = stage05::Config<128>;
  EXPECT_EQ(C256::kStageBytes, 38912);  // 16 KB A + 16 KB B + 2 KB SFA + 4 KB SFB
  EXPECT_EQ(C128::kStageBytes, 28672);  // 16 KB A +  8 KB B + 2 KB SFA + 2 KB SFB
  EXPECT_EQ(C256::kStages, 5);
  EXPECT_EQ(C128::kStages, 8);
  EXPECT_LE(C256::kTmemColumnsUsed, 512);
  EXPECT_LE(C128::kTmemColumnsUsed, 512);
  EXPECT_LE(stage05::kSmemBytes<256>, 232448);
  EXPECT_LE(stage05::kSmemBytes<128>, 232448);
}

TEST(Tcgen05StageLayout, TmemColumnsOfStagesAndStepsNeverOverlap) {
  using C = stage05::Config<256>;
  std::vector<int> owner(512, -1);
  auto claim = [&](uint32_t first, int count, int who) {
    for (int c = 0; c < count; ++c) {
      ASSERT_LT(first + c, 512u);
      ASSERT_EQ(owner[first + c], -1) << "column " << first + c << " used twice";
      owner[first + c] = who;
    }
  };
  claim(C::d_column(), 256, 0);
  for (int s = 0; s < C::kStages; ++s)
    for (int j = 0; j < stage05::kStepsPerTile; ++j) {
      ASSERT_EQ(C::sfa_column(s, j) % 2, 0u) << "scale columns must be even";
      claim(C::sfa_column(s, j), 4, 1 + s);
      claim(C::sfb_column(s, j), 4 * C::kSfbAtoms, 1 + s);
    }
}

TEST(Tcgen05StageLayout, InstructionDescriptorIsThePairShape) {
  EXPECT_EQ(stage05::Config<256>::instr_descriptor(), 0x10400480u);  // M 256, N 256 (FACTS 2.4)
  const auto d = gemm::tcgen05::decode_instr_descriptor(stage05::Config<128>::instr_descriptor());
  EXPECT_EQ(d.m, 256u);
  EXPECT_EQ(d.n, 128u);
}

}  // namespace
