#include "common/peers.h"

#include <cublas_v2.h>

#include <stdexcept>
#include <string>

namespace gemm {
namespace {

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: " + cublasGetStatusString(s));
}

cublasHandle_t handle() {
  // One handle for the process, created on first use and deliberately never destroyed: destroying
  // it from a static destructor can run after the CUDA runtime has shut down.
  static cublasHandle_t h = [] {
    cublasHandle_t created;
    check(cublasCreate(&created), "cublasCreate");
    check(cublasSetMathMode(created, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");  // FP32, never TF32
    return created;
  }();
  return h;
}

}  // namespace

void cublas_sgemm(const Fp32GemmArgs& a, cudaStream_t stream) {
  validate(a);
  // cuBLAS is column-major. Row-major C (M x N) is column-major C^T (N x M), and
  //   C^T = B * A^T  where B (row-major N x K) is column-major K x N -> transpose it,
  //                  and A (row-major M x K) is column-major K x M = A^T already.
  const float one = 1.0f, zero = 0.0f;
  check(cublasSetStream(handle(), stream), "cublasSetStream");
  check(cublasSgemmStridedBatched(handle(), CUBLAS_OP_T, CUBLAS_OP_N, a.N, a.M, a.K, &one, a.B, a.K,
                                  int64_t(a.N) * a.K, a.A, a.K, int64_t(a.M) * a.K, &zero, a.C, a.N,
                                  int64_t(a.M) * a.N, a.L),
        "cublasSgemmStridedBatched");
}

}  // namespace gemm
