// The list of stages. Each stage folder announces its kernel here (the registration unit that
// add_gemm_stage() generates), so a benchmark or the tutorial reaches any other stage through this
// table, at link time, without including another stage's files.
#pragma once

#include <cuda_runtime.h>

#include <string_view>
#include <vector>

#include "common/gemm_api.h"

namespace gemm {

enum class Precision { kFp32, kNvfp4 };

using Fp32Launcher = void (*)(const Fp32GemmArgs&, cudaStream_t);
using Nvfp4Launcher = void (*)(const Nvfp4GemmArgs&, cudaStream_t);

// What a stage's kernel.cuh declares about itself as `inline constexpr gemm::Stage kStage{...}`.
struct Stage {
  const char* id;              // folder name, e.g. "00_naive"
  const char* idea;            // the one idea the stage adds, in a line
  Precision precision;
  Fp32Launcher fp32 = nullptr;    // set for FP32 stages
  Nvfp4Launcher nvfp4 = nullptr;  // set for NVFP4 stages
  bool uses_tcgen05 = false;      // true from stage 05: on Hopper those kernels run emulated
};

struct StageRegistrar {
  explicit StageRegistrar(const Stage& stage);
};

// nullptr when no stage of that id is linked into this program.
const Stage* find_stage(std::string_view id);
std::vector<const Stage*> registered_stages();

}  // namespace gemm
