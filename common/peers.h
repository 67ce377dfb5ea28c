// Library peers: what a user would call instead of writing these kernels. Benchmarks time them in the
// same run as the stages, so ratios compare like with like.
#pragma once

#include <cuda_runtime.h>

#include "common/gemm_api.h"

namespace gemm {

// cuBLAS SGEMM in true FP32 (CUBLAS_DEFAULT_MATH: no TF32), C = A * B^T with the layouts of
// gemm_api.h, batched with strides when L > 1.
void cublas_sgemm(const Fp32GemmArgs& args, cudaStream_t stream);
inline constexpr const char* kCublasSgemmName = "cuBLAS SGEMM (FP32, TF32 off)";

}  // namespace gemm
