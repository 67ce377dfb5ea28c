// Stage 00 against the CPU reference: every shape of the common case list (tails, primes, L > 1,
// exact and realistic tiers), plus the argument checks.
#include "kernel.cuh"

#include "common/harness/gemm_tests.h"

namespace {

constexpr gemm::testing::Tile kTile{stage00::kBlockM, stage00::kBlockN, 1};

GEMM_STAGE_TESTS(Naive, stage00::kStage, stage00::launch, gemm::testing::kind_cases(stage00::kStage, kTile), kTile)

}  // namespace
