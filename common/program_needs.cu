// Declares what the program it is linked into needs of the GPU (common/device_info.h, ProgramNeeds).
// add_gemm_stage() compiles this file once per MIN_SM, for the same architectures as the stages of
// that MIN_SM, and links it into each of their programs, tests and benchmarks: its probe kernel
// loads exactly where theirs do.
#include <cuda_runtime.h>

#include "common/device_info.h"

#ifndef GEMM_PROGRAM_MIN_SM
#error "GEMM_PROGRAM_MIN_SM must be defined (add_gemm_stage does)"
#endif

namespace {

__global__ void program_probe_kernel() {}

cudaError_t load_probe() {
  cudaFuncAttributes attr{};
  return cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(&program_probe_kernel));
}

const bool kDeclared = [] {
  gemm::declare_program_needs({GEMM_PROGRAM_MIN_SM, GEMM_PROGRAM_ARCHITECTURES, &load_probe});
  return true;
}();

}  // namespace
