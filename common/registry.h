// The list of stages. Each stage folder announces its kernel here (the registration unit that
// add_gemm_stage() generates), so a benchmark or the tutorial reaches any other stage through this
// table, at link time, without including another stage's files.
#pragma once

#include <cuda_runtime.h>

#include <string_view>
#include <vector>

#include "common/gemm_api.h"

namespace gemm {

// The registry holds each stage as a gemm::Stage (common/kinds/kind.h): its id, its idea, its kind and
// its launcher. A stage's kernel.cuh declares `inline constexpr gemm::StageOf kStage{...}`.
struct StageRegistrar {
  explicit StageRegistrar(const Stage& stage);
};

// nullptr when no stage of that id is linked into this program.
const Stage* find_stage(std::string_view id);
std::vector<const Stage*> registered_stages();

}  // namespace gemm
