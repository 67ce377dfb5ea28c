// Stage 00 against the CPU reference: every shape of the common case list (tails, primes, L > 1,
// exact and realistic tiers), plus the argument checks.
#include "kernel.cuh"

#include "common/harness/gemm_tests.h"

namespace {

using gemm::testing::GemmCase;
constexpr gemm::testing::Tile kTile{stage00::kBlockM, stage00::kBlockN, 1};

class GpuNaive : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GpuNaive, MatchesCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage00::launch, GetParam(), kTile);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuNaive, ::testing::ValuesIn(gemm::testing::fp32_cases(kTile)),
                         gemm::testing::case_name);

TEST(GpuNaiveArgs, RejectsInvalidArgumentsAndWritesNothing) {
  GEMM_REQUIRE_GPU();
  gemm::testing::expect_rejects_invalid_arguments_gpu(stage00::launch);
}

TEST(NaiveArgs, RejectsInvalidArgumentsBeforeAnyLaunch) {
  gemm::testing::expect_rejects_invalid_arguments_cpu(stage00::launch);
}

TEST(NaiveStage, IsRegisteredAsFp32) {
  EXPECT_STREQ(stage00::kStage.id, GEMM_STAGE_ID);
  EXPECT_EQ(stage00::kStage.precision, gemm::Precision::kFp32);
  EXPECT_EQ(stage00::kStage.fp32, &stage00::launch);
}

}  // namespace
