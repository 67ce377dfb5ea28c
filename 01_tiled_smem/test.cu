// Stage 01 against the CPU reference: every shape of the common case list (tails, primes, one past
// the 128 x 128 x 8 block tile, L > 1, exact and realistic tiers), plus the argument checks.
#include "kernel.cuh"

#include "common/harness/gemm_tests.h"

namespace {

constexpr gemm::testing::Tile kTile{stage01::kBM, stage01::kBN, stage01::kBK};

GEMM_STAGE_TESTS(Tiled, stage01::kStage, stage01::launch, gemm::testing::kind_cases(stage01::kStage, kTile), kTile)

}  // namespace
