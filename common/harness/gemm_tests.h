// The GPU test procedure every stage's test.cu runs, so that "tested against the CPU reference"
// means the same thing for every stage:
//   1. seeded inputs of the case's tier (common/harness/problems.h), uploaded;
//   2. C poisoned with NaN (all bytes 0xFF) so an unwritten output cannot pass, between 64 poisoned
//      guard elements on each side that must stay poisoned (a write past either end of C fails);
//   3. launch through the stage's launcher, synchronise, check every CUDA error;
//   4. compare every output with the CPU reference (common/harness/compare.h);
//   5. poison and run again: the two results must be identical bit for bit (a result that moves
//      between runs is a race, even when both runs happen to be within tolerance).
// Plus the invalid-argument checks: each broken argument throws std::invalid_argument naming the
// argument, and (on a GPU) C is left untouched.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/device_info.h"
#include "common/harness/problems.h"
#include "common/registry.h"

// First line of every GPU test: skip (never pass) where there is no GPU this binary can use.
#define GEMM_REQUIRE_GPU()                                                                 \
  do {                                                                                     \
    if (!::gemm::gpu_info().usable) GTEST_SKIP() << "no usable GPU: " << ::gemm::gpu_info().why_not; \
  } while (0)

namespace gemm::testing {

struct GemmCase {
  std::string name;  // also the seed
  int M, N, K, L;
  Tier tier;
};
// gtest parameter names: "exact_M17_N13_K31_L1".
std::string case_name(const ::testing::TestParamInfo<GemmCase>& info);
inline void PrintTo(const GemmCase& c, std::ostream* os) { *os << c.name; }

// The tile a stage computes per block: the case lists add shapes one past it and one short of two.
struct Tile {
  int m, n, k;
};

// Shape lists: tails (1, primes, one past a tile), aligned sizes, K from tiny to long, L > 1,
// in every tier the precision has.
std::vector<GemmCase> fp32_cases(Tile tile);
std::vector<GemmCase> nvfp4_cases(Tile tile);

// GEMV stages (N = 1): M = 1, odd M, M past 32 and 128 rows, K = 32 and K not a multiple of 64,
// long K, L up to 8, in every tier.
std::vector<GemmCase> nvfp4_gemv_cases();

// c_offset: C starts this many elements past an allocation (1: only element-aligned).
void run_case(Fp32Launcher launch, const GemmCase& c, Tile tile, int c_offset = 0);
void run_case(Nvfp4Launcher launch, const GemmCase& c, Tile tile, int c_offset = 0);
// C inside a larger buffer whose bytes before and after it hold a pattern: the launch must write every
// element of C (poisoned with NaN first) and nothing else. `c_offset` elements from a 16-byte boundary.
void run_case_with_guards(Nvfp4Launcher launch, const GemmCase& c, Tile tile, int c_offset = 0);

// Invalid arguments. The CPU variant needs no GPU (validation happens before any CUDA call, so it
// can use placeholder pointers); the GPU variant also checks that C was not written.
void expect_rejects_invalid_arguments_cpu(Fp32Launcher launch);
void expect_rejects_invalid_arguments_cpu(Nvfp4Launcher launch);
void expect_rejects_invalid_arguments_gpu(Fp32Launcher launch);
void expect_rejects_invalid_arguments_gpu(Nvfp4Launcher launch);
// The same for a GEMV (good arguments have N = 1; N = 2 and N = 64 must be refused too).
void expect_rejects_invalid_gemv_arguments_cpu(Nvfp4Launcher launch);
void expect_rejects_invalid_gemv_arguments_gpu(Nvfp4Launcher launch);

// For death tests of kernels that must trap: synchronise, print how the kernel ended to stderr,
// and exit with kKernelFailedExit if it failed (0 if it did not, which the test then rejects).
inline constexpr int kKernelFailedExit = 3;
[[noreturn]] void exit_with_kernel_status();

inline bool launches_with(const Stage& s, Fp32Launcher f) { return s.precision == Precision::kFp32 && s.fp32 == f; }
inline bool launches_with(const Stage& s, Nvfp4Launcher f) { return s.precision == Precision::kNvfp4 && s.nvfp4 == f; }

}  // namespace gemm::testing

// The tests every stage runs, in one line of its test.cu:
//   Gpu<Name>.MatchesCpuReference/<case>            every case of `cases`, through `launcher`
//   Gpu<Name>COffset.WorksWithAnElementAlignedC     C one element past an allocation's start
//   Gpu<Name>Args.RejectsInvalidArgumentsAndWritesNothing
//   <Name>Args.RejectsInvalidArgumentsBeforeAnyLaunch   (CPU only: runs in CI too)
//   <Name>Stage.LaunchesThroughItsStage, <Name>Stage.IsRegisteredUnderItsFolderName
// `stage` is the stage's kStage; `tile` its block tile (for the case list and mismatch grouping).
// A stage taught in several steps (add_gemm_stage(... STEPS ...)) runs GEMM_STANDARD_STEP_TESTS for
// each earlier step: the same tests, with <Name>Stage.LaunchesThroughItsStage instead of the
// folder-name check (a step's id is its own, e.g. "05_tcgen05_1cta").
#define GEMM_STANDARD_STEP_TESTS(Name, stage, launcher, cases, tile)                                  \
  class Gpu##Name : public ::testing::TestWithParam<::gemm::testing::GemmCase> {};                    \
  TEST_P(Gpu##Name, MatchesCpuReference) {                                                            \
    GEMM_REQUIRE_GPU();                                                                               \
    ::gemm::testing::run_case(launcher, GetParam(), tile);                                            \
  }                                                                                                   \
  INSTANTIATE_TEST_SUITE_P(Shapes, Gpu##Name, ::testing::ValuesIn(cases), ::gemm::testing::case_name); \
  TEST(Gpu##Name##COffset, WorksWithAnElementAlignedC) {                                              \
    GEMM_REQUIRE_GPU();                                                                               \
    ::gemm::testing::run_case(launcher, {"c_offset_exact_M67_N48_K96_L2", 67, 48, 96, 2, ::gemm::Tier::kExact}, \
                              tile, 1);                                                               \
  }                                                                                                   \
  TEST(Gpu##Name##Args, RejectsInvalidArgumentsAndWritesNothing) {                                   \
    GEMM_REQUIRE_GPU();                                                                               \
    ::gemm::testing::expect_rejects_invalid_arguments_gpu(launcher);                                  \
  }                                                                                                   \
  TEST(Name##Args, RejectsInvalidArgumentsBeforeAnyLaunch) {                                          \
    ::gemm::testing::expect_rejects_invalid_arguments_cpu(launcher);                                  \
  }                                                                                                   \
  TEST(Name##Stage, LaunchesThroughItsStage) {                                                        \
    EXPECT_TRUE(::gemm::testing::launches_with(stage, launcher));                                     \
  }

#define GEMM_STANDARD_STAGE_TESTS(Name, stage, launcher, cases, tile)                                 \
  GEMM_STANDARD_STEP_TESTS(Name, stage, launcher, cases, tile)                                        \
  TEST(Name##Stage, IsRegisteredUnderItsFolderName) {                                                 \
    EXPECT_STREQ((stage).id, GEMM_STAGE_ID);                                                          \
    EXPECT_TRUE(::gemm::testing::launches_with(stage, launcher));                                     \
  }

// The GEMV stages' version of GEMM_STANDARD_STAGE_TESTS: the same tests at N = 1.
#define GEMM_GEMV_STAGE_TESTS(Name, stage, launcher, cases)                                           \
  class Gpu##Name : public ::testing::TestWithParam<::gemm::testing::GemmCase> {};                    \
  TEST_P(Gpu##Name, MatchesCpuReference) {                                                            \
    GEMM_REQUIRE_GPU();                                                                               \
    ::gemm::testing::run_case(launcher, GetParam(), {8, 1, 1024});                                    \
  }                                                                                                   \
  INSTANTIATE_TEST_SUITE_P(Shapes, Gpu##Name, ::testing::ValuesIn(cases), ::gemm::testing::case_name); \
  TEST(Gpu##Name##COffset, WorksWithAnElementAlignedC) {                                              \
    GEMM_REQUIRE_GPU();                                                                               \
    ::gemm::testing::run_case(launcher, {"c_offset_exact_M67_N1_K96_L2", 67, 1, 96, 2, ::gemm::Tier::kExact}, \
                              {8, 1, 1024}, 1);                                                       \
  }                                                                                                   \
  TEST(Gpu##Name##Args, RejectsInvalidArgumentsAndWritesNothing) {                                   \
    GEMM_REQUIRE_GPU();                                                                               \
    ::gemm::testing::expect_rejects_invalid_gemv_arguments_gpu(launcher);                             \
  }                                                                                                   \
  TEST(Name##Args, RejectsInvalidArgumentsBeforeAnyLaunch) {                                          \
    ::gemm::testing::expect_rejects_invalid_gemv_arguments_cpu(launcher);                             \
  }                                                                                                   \
  TEST(Name##Stage, IsRegisteredUnderItsFolderName) {                                                 \
    EXPECT_STREQ((stage).id, GEMM_STAGE_ID);                                                          \
    EXPECT_TRUE(::gemm::testing::launches_with(stage, launcher));                                     \
  }
