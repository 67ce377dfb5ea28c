#include "common/peers.h"

#include <cublas_v2.h>

#include <stdexcept>
#include <string>

#include "common/cuda_check.h"
#include "common/formats.h"
#include "common/sf_layout.h"

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

// One thread per 16-value block: 8 payload bytes and one scale -> 16 values of type Out (BF16 or
// FP16: payload x block scale is exact in both).
template <class Out>
__device__ __forceinline__ Out to_out(float x);
template <>
__device__ __forceinline__ __nv_bfloat16 to_out<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <>
__device__ __forceinline__ __half to_out<__half>(float x) { return __float2half_rn(x); }

template <class Out>
__global__ void dequantize_kernel(const uint8_t* __restrict__ data, const uint8_t* __restrict__ sf, int rows, int K,
                                  int64_t blocks, Out* __restrict__ out) {
  const int64_t b = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (b >= blocks) return;
  const int64_t per_batch = int64_t(rows) * (K / kSfVector);
  const int64_t l = b / per_batch, row = (b % per_batch) / (K / kSfVector), k16 = b % (K / kSfVector);
  const float scale = ue4m3_to_float(sf[l * sf_batch_bytes(rows, K) + sf_offset(row, k16, K)]);
  const uint2 packed = *reinterpret_cast<const uint2*>(data + b * 8);
  const uint32_t words[2] = {packed.x, packed.y};
  Out v[16];
  for (int i = 0; i < 8; ++i) {
    const uint8_t byte = uint8_t(words[i / 4] >> (8 * (i % 4)));
    v[2 * i] = to_out<Out>(e2m1_to_float(e2m1_even(byte)) * scale);
    v[2 * i + 1] = to_out<Out>(e2m1_to_float(e2m1_odd(byte)) * scale);
  }
  uint4* dst = reinterpret_cast<uint4*>(out + b * kSfVector);
  dst[0] = *reinterpret_cast<const uint4*>(&v[0]);
  dst[1] = *reinterpret_cast<const uint4*>(&v[8]);
}

template <class Out>
void dequantize(const uint8_t* data, const uint8_t* sf, int rows, int K, int L, Out* out, cudaStream_t stream) {
  const int64_t blocks = int64_t(rows) * (K / kSfVector) * L;
  dequantize_kernel<Out><<<unsigned((blocks + 255) / 256), 256, 0, stream>>>(data, sf, rows, K, blocks, out);
  CUDA_CHECK_LAUNCH();
}

void dequantize_bf16(const uint8_t* data, const uint8_t* sf, int rows, int K, int L, __nv_bfloat16* out,
                     cudaStream_t stream) {
  dequantize<__nv_bfloat16>(data, sf, rows, K, L, out, stream);
}

}  // namespace

void dequantize_cublas_bf16(const Nvfp4GemmArgs& a, __nv_bfloat16* c, Bf16PeerWorkspace& ws, cudaStream_t stream) {
  Nvfp4GemmArgs checked = a;  // the output is c, not a.C
  checked.C = reinterpret_cast<__half*>(c);
  validate(checked);
  const size_t na = size_t(a.M) * a.K * a.L, nb = size_t(a.N) * a.K * a.L;
  if (ws.a.size() < na) ws.a = DeviceBuffer<__nv_bfloat16>(na);
  if (ws.b.size() < nb) ws.b = DeviceBuffer<__nv_bfloat16>(nb);
  dequantize_bf16(a.A, a.SFA, a.M, a.K, a.L, ws.a.get(), stream);
  dequantize_bf16(a.B, a.SFB, a.N, a.K, a.L, ws.b.get(), stream);
  const float beta = 0.0f;
  check(cublasSetStream(handle(), stream), "cublasSetStream");
  // Same transposition as cublas_sgemm: C^T (N x M, column-major) = B * A^T.
  check(cublasGemmStridedBatchedEx(handle(), CUBLAS_OP_T, CUBLAS_OP_N, a.N, a.M, a.K, &a.alpha, ws.b.get(),
                                   CUDA_R_16BF, a.K, int64_t(a.N) * a.K, ws.a.get(), CUDA_R_16BF, a.K,
                                   int64_t(a.M) * a.K, &beta, c, CUDA_R_16BF, a.N, int64_t(a.M) * a.N, a.L,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
}

void dequantize_cublas_bf16_launcher(const Nvfp4GemmArgs& a, cudaStream_t stream) {
  static Bf16PeerWorkspace ws;  // process-wide; the benchmark's warm-up absorbs the first allocation
  static DeviceBuffer<__nv_bfloat16> c;
  const size_t nc = size_t(a.M) * a.N * a.L;
  if (c.size() < nc) c = DeviceBuffer<__nv_bfloat16>(nc);
  dequantize_cublas_bf16(a, c.get(), ws, stream);
}

void dequantize_fp16(const uint8_t* data, const uint8_t* sf, int rows, int K, int L, __half* out, cudaStream_t stream) {
  dequantize<__half>(data, sf, rows, K, L, out, stream);
}

void cublas_fp16_gemv(int M, int K, int L, const __half* A, const __half* x, float alpha, __half* C,
                      cudaStream_t stream) {
  if (M < 1 || K < 1 || L < 1 || !A || !x || !C) throw std::invalid_argument("cublas_fp16_gemv: bad arguments");
  const float beta = 0.0f;
  check(cublasSetStream(handle(), stream), "cublasSetStream");
  // Row-major A (M x K) is column-major K x M, used transposed: C (M x 1) = A x (the "T N" GEMV form).
  check(cublasGemmStridedBatchedEx(handle(), CUBLAS_OP_T, CUBLAS_OP_N, M, 1, K, &alpha, A, CUDA_R_16F, K,
                                   int64_t(M) * K, x, CUDA_R_16F, K, K, &beta, C, CUDA_R_16F, M, M, L,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx (FP16 GEMV)");
}

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
