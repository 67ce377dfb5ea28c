// The GPU test procedure every stage's test.cu runs, for every kind of problem (common/kinds/), so
// that "tested against the CPU reference" means the same thing for every stage:
//   1. seeded inputs of the case's tier (the kind's make_problem), uploaded;
//   2. C poisoned with NaN (all bytes 0xFF) so an unwritten output cannot pass, between 64 poisoned
//      guard elements on each side that must stay poisoned (a write past either end of C fails);
//   3. launch through the stage's launcher, synchronise, check every CUDA error (and, where the
//      protocol checker runs, that it recorded no violation);
//   4. compare every output with the CPU reference (common/harness/compare.h);
//   5. poison and run again: the two results must be identical bit for bit (a result that moves
//      between runs is a race, even when both runs happen to be within tolerance).
// Plus the invalid-argument checks: each of the kind's bad arguments throws std::invalid_argument
// naming the argument and the rule, and (on a GPU) C is left untouched.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/device_info.h"
#include "common/gemm_api.h"
#include "common/registry.h"

// First line of every GPU test: skip (never pass) where there is no GPU this binary can use.
#define GEMM_REQUIRE_GPU()                                                                 \
  do {                                                                                     \
    if (!::gemm::gpu_info().usable) GTEST_SKIP() << "no usable GPU: " << ::gemm::gpu_info().why_not; \
  } while (0)

namespace gemm::testing {

using GemmCase = ::gemm::Case;
using ::gemm::Tile;
// gtest parameter names: "exact_M17_N13_K31_L1".
std::string case_name(const ::testing::TestParamInfo<Case>& info);
}  // namespace gemm::testing
namespace gemm {
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
}  // namespace gemm
namespace gemm::testing {

// The kind's case list for a kernel with this tile (tails one past it, ...): what a stage's test.cu
// passes to GEMM_STAGE_TESTS, with its own cases added.
inline std::vector<Case> kind_cases(const Stage& stage, Tile tile) { return stage.kind().cases(tile); }
// A case of the launcher's kind at this shape and tier, named "<what>_<tier>_M.._N.._K.._L..".
Case make_case(const std::string& what, Tier tier, int M, int N, int K, int L = 1);

// Runs one case through `launch` (any kind's launcher) as described above. c_offset: C starts this
// many elements past a 128-byte boundary (1: only element-aligned, what the contracts promise).
void run_case(const Launcher& launch, const Case& c, Tile tile, int c_offset = 0);
// C inside a larger buffer whose bytes before and after it hold a pattern: the launch must write every
// element of C (poisoned with NaN first) and nothing else. `c_offset` elements from a 16-byte boundary.
void run_case_with_guards(const Launcher& launch, const Case& c, Tile tile, int c_offset = 0);

// Invalid arguments. The CPU variant needs no GPU (validation happens before any CUDA call, so it
// uses the kind's placeholder pointers); the GPU variant also checks that C was not written.
void expect_rejects_invalid_arguments_cpu(const Launcher& launch);
void expect_rejects_invalid_arguments_gpu(const Launcher& launch);

// For death tests of kernels that must trap: synchronise, print how the kernel ended to stderr,
// and exit with kKernelFailedExit if it failed (0 if it did not, which the test then rejects).
inline constexpr int kKernelFailedExit = 3;
[[noreturn]] void exit_with_kernel_status();

// Whether `stage` launches through `launch` (same kind, same function).
template <class Args>
bool launches_with(const Stage& s, void (*launch)(const Args&, cudaStream_t)) {
  return &s.kind() == &KindOf<Args>::get() && s.launcher().is(launch);
}
// Whether a registered id fits its folder: the folder's name for the stage itself, "NN_<step>" for
// an earlier step of a stage taught in steps (add_gemm_stage(... STEPS ...), e.g. "05_tcgen05_1cta").
bool id_fits_folder(const char* id, const char* folder);

}  // namespace gemm::testing

// The tests every stage (and every step of one) runs, in one line of its test.cu, whatever its kind:
//   Gpu<Name>.MatchesCpuReference/<case>            every case of `cases`, through `launcher`
//   Gpu<Name>COffset.WorksWithAnElementAlignedC     C one element past an allocation's start
//   Gpu<Name>Args.RejectsInvalidArgumentsAndWritesNothing
//   <Name>Args.RejectsInvalidArgumentsBeforeAnyLaunch   (CPU only: runs in CI too)
//   <Name>Stage.LaunchesThroughItsStage                 kStage's launcher is `launcher` (and so its kind)
//   <Name>Stage.IsRegisteredUnderItsFolderName          its id is the folder's, or "NN_<step>" for an earlier step
// `stage` is the stage's kStage; `cases` usually gemm::testing::kind_cases(stage, tile) plus the
// stage's own; `tile` its block tile (for mismatch grouping).
#define GEMM_STAGE_TESTS(Name, stage, launcher, cases, tile)                                          \
  class Gpu##Name : public ::testing::TestWithParam<::gemm::Case> {};                                 \
  TEST_P(Gpu##Name, MatchesCpuReference) {                                                            \
    GEMM_REQUIRE_GPU();                                                                               \
    ::gemm::testing::run_case(launcher, GetParam(), tile);                                            \
  }                                                                                                   \
  INSTANTIATE_TEST_SUITE_P(Shapes, Gpu##Name, ::testing::ValuesIn(cases), ::gemm::testing::case_name); \
  TEST(Gpu##Name##COffset, WorksWithAnElementAlignedC) {                                              \
    GEMM_REQUIRE_GPU();                                                                               \
    ::gemm::testing::run_case(launcher, (stage).kind().element_aligned_c_case(), tile, 1);            \
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
  }                                                                                                   \
  TEST(Name##Stage, IsRegisteredUnderItsFolderName) {                                                 \
    EXPECT_TRUE(::gemm::testing::id_fits_folder((stage).id, GEMM_STAGE_ID)) << (stage).id;            \
  }
