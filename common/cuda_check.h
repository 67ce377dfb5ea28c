// CUDA error handling: every runtime call is checked, and a failure becomes an exception that names
// the call, the file and line, and the error, so tests fail with a message instead of garbage.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace gemm {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + " failed: " +
                           cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

}  // namespace gemm

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    const cudaError_t gemm_err_ = (call);                                      \
    if (gemm_err_ != cudaSuccess) ::gemm::throw_cuda_error(gemm_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: catches bad launch configurations at once (asynchronous faults surface at
// the next synchronising call, which is checked too).
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
