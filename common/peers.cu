#include "common/peers.h"

#include <cublas_v2.h>

#include <stdexcept>
#include <string>

#include "common/cuda_check.h"
#include "common/formats.h"
#include "common/mxfp8_quant.h"
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

// The block formats the dequantize kernel decodes: kValues values in kBytes payload bytes share one
// scale byte, which sits at sf_offset(row, block, K, kValues) in the blocked layout (sf_layout.h).
struct Nvfp4Blocks {  // packed E2M1 (element 2i in the low nibble of byte i), UE4M3 scales
  static constexpr int kValues = kSfVector, kBytes = kSfVector / 2;
  __device__ float scale(uint8_t code) const { return ue4m3_to_float(code); }
  __device__ float value(const uint8_t* bytes, int i) const {
    return e2m1_to_float(i % 2 ? e2m1_odd(bytes[i / 2]) : e2m1_even(bytes[i / 2]));
  }
};
struct Mxfp8Blocks {  // one E4M3 or E5M2 byte per value, UE8M0 scales (docs/mxfp8.md)
  static constexpr int kValues = kMxSfVector, kBytes = kMxSfVector;
  Mxfp8Element element;
  __device__ float scale(uint8_t code) const { return ue8m0_to_float(code); }
  __device__ float value(const uint8_t* bytes, int i) const { return mx_decode(bytes[i], element); }
};

// The output element (BF16 or FP16: value x block scale is exact in both for NVFP4; for MXFP8 in BF16
// within its range, see peers.h).
template <class Out>
__device__ __forceinline__ Out to_out(float x);
template <>
__device__ __forceinline__ __nv_bfloat16 to_out<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <>
__device__ __forceinline__ __half to_out<__half>(float x) { return __float2half_rn(x); }

// One thread per scale block: its payload bytes and its scale -> kValues values of type Out. The
// payload is read 8 bytes at a time (a block starts at a multiple of 8 bytes: the operands are
// 16-byte aligned and K a multiple of 32) and written 16 bytes at a time.
template <class Format, class Out>
__global__ void dequantize_kernel(const uint8_t* __restrict__ data, const uint8_t* __restrict__ sf, int rows, int K,
                                  int64_t blocks, Format format, Out* __restrict__ out) {
  constexpr int kValues = Format::kValues, kBytes = Format::kBytes;
  const int64_t b = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (b >= blocks) return;
  const int64_t cols = K / kValues, per_batch = int64_t(rows) * cols;
  const int64_t l = b / per_batch, row = (b % per_batch) / cols, col = b % cols;
  const float scale = format.scale(sf[l * sf_batch_bytes(rows, K, kValues) + sf_offset(row, col, K, kValues)]);
  uint2 payload[kBytes / 8];
#pragma unroll
  for (int i = 0; i < kBytes / 8; ++i) payload[i] = reinterpret_cast<const uint2*>(data + b * kBytes)[i];
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(payload);
  alignas(16) Out v[kValues];
#pragma unroll
  for (int i = 0; i < kValues; ++i) v[i] = to_out<Out>(format.value(bytes, i) * scale);
  uint4* dst = reinterpret_cast<uint4*>(out + b * kValues);
#pragma unroll
  for (int i = 0; i < int(kValues * sizeof(Out) / 16); ++i) dst[i] = reinterpret_cast<const uint4*>(v)[i];
}

// rows x K x L values (batches back to back) with their scales (batch l's at l * sf_batch_bytes).
template <class Out, class Format>
void dequantize(const uint8_t* data, const uint8_t* sf, int rows, int K, int L, Format format, Out* out,
                cudaStream_t stream) {
  const int64_t blocks = int64_t(rows) * (K / Format::kValues) * L;
  dequantize_kernel<Format, Out>
      <<<unsigned((blocks + 255) / 256), 256, 0, stream>>>(data, sf, rows, K, blocks, format, out);
  CUDA_CHECK_LAUNCH();
}

// Both operands of a GEMM dequantized to BF16 into ws (grown as needed).
template <class Format>
void dequantize_operands(int M, int N, int K, int L, const uint8_t* A, const uint8_t* SFA, Format fa,
                         const uint8_t* B, const uint8_t* SFB, Format fb, Bf16PeerWorkspace& ws, cudaStream_t stream) {
  const size_t na = size_t(M) * K * L, nb = size_t(N) * K * L;
  if (ws.a.size() < na) ws.a = DeviceBuffer<__nv_bfloat16>(na);
  if (ws.b.size() < nb) ws.b = DeviceBuffer<__nv_bfloat16>(nb);
  dequantize<__nv_bfloat16>(A, SFA, M, K, L, fa, ws.a.get(), stream);
  dequantize<__nv_bfloat16>(B, SFB, N, K, L, fb, ws.b.get(), stream);
}

// C = alpha * A * B^T on the BF16 operands in ws (M x K and N x K per batch, K contiguous), FP32
// accumulation, C (M x N per batch, row-major) of type c_type (CUDA_R_16BF or CUDA_R_32F). Same
// transposition as cublas_sgemm: C^T (N x M, column-major) = B * A^T.
void cublas_bf16_gemm(int M, int N, int K, int L, float alpha, const Bf16PeerWorkspace& ws, void* c,
                      cudaDataType_t c_type, cudaStream_t stream) {
  const float beta = 0.0f;
  check(cublasSetStream(handle(), stream), "cublasSetStream");
  check(cublasGemmStridedBatchedEx(handle(), CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, ws.b.get(), CUDA_R_16BF, K,
                                   int64_t(N) * K, ws.a.get(), CUDA_R_16BF, K, int64_t(M) * K, &beta, c, c_type, N,
                                   int64_t(M) * N, L, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
}

// The unfused SVDQuant baseline's last launch: y = acc * wcscale[n] + bias[n] rounded once to C's
// format, acc already alpha * A B^T + lora_act lora_up^T in FP32 (one thread per output).
template <class Out>
__global__ void svdquant_affine_kernel(const float* __restrict__ acc, const float* __restrict__ wcscale,
                                       const float* __restrict__ bias, int N, int64_t MN, int L, Out* __restrict__ C) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= MN * L) return;
  const int64_t n = i % N + i / MN * N;  // column n of batch l: wcscale and bias are N x L
  C[i] = to_out<Out>(acc[i] * wcscale[n] + bias[n]);
}

}  // namespace

void svdquant_unfused(const SvdquantGemmArgs& a, cudaStream_t stream) {
  validate(a);
  static Bf16PeerWorkspace ws;      // process-wide; the benchmark's warm-up absorbs the first allocations
  static DeviceBuffer<float> acc;   // the FP32 intermediate: M x N x L
  const size_t n_acc = size_t(a.M) * a.N * a.L;
  if (acc.size() < n_acc) acc = DeviceBuffer<float>(n_acc);
  // 1-3. alpha * A B^T in FP32: both NVFP4 operands dequantized to BF16 (exact), one cuBLAS GEMM.
  dequantize_operands(a.M, a.N, a.K, a.L, a.A, a.SFA, Nvfp4Blocks{}, a.B, a.SFB, Nvfp4Blocks{}, ws, stream);
  cublas_bf16_gemm(a.M, a.N, a.K, a.L, a.alpha, ws, acc.get(), CUDA_R_32F, stream);
  // 4. + lora_act lora_up^T: a cuBLAS GEMM over the rank with beta = 1 (the transposition of cublas_bf16_gemm).
  const cudaDataType_t lora = a.lora_format == Format16::kBf16 ? CUDA_R_16BF : CUDA_R_16F;
  const float one = 1.0f;
  check(cublasGemmStridedBatchedEx(handle(), CUBLAS_OP_T, CUBLAS_OP_N, a.N, a.M, a.R, &one, a.lora_up, lora, a.R,
                                   int64_t(a.N) * a.R, a.lora_act, lora, a.R, int64_t(a.M) * a.R, &one, acc.get(),
                                   CUDA_R_32F, a.N, int64_t(a.M) * a.N, a.L, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx (low-rank term)");
  // 5. The affine and the one rounding.
  const int64_t MN = int64_t(a.M) * a.N;
  const unsigned blocks = unsigned((MN * a.L + 255) / 256);
  if (a.c_format == Format16::kBf16)
    svdquant_affine_kernel<<<blocks, 256, 0, stream>>>(acc.get(), a.wcscale, a.bias, a.N, MN, a.L,
                                                       reinterpret_cast<__nv_bfloat16*>(a.C));
  else
    svdquant_affine_kernel<<<blocks, 256, 0, stream>>>(acc.get(), a.wcscale, a.bias, a.N, MN, a.L,
                                                       reinterpret_cast<__half*>(a.C));
  CUDA_CHECK_LAUNCH();
}

void dequantize_cublas_bf16(const Nvfp4GemmArgs& a, __nv_bfloat16* c, Bf16PeerWorkspace& ws, cudaStream_t stream) {
  Nvfp4GemmArgs checked = a;  // the output is c, not a.C
  checked.C = reinterpret_cast<__half*>(c);
  validate(checked);
  dequantize_operands(a.M, a.N, a.K, a.L, a.A, a.SFA, Nvfp4Blocks{}, a.B, a.SFB, Nvfp4Blocks{}, ws, stream);
  cublas_bf16_gemm(a.M, a.N, a.K, a.L, a.alpha, ws, c, CUDA_R_16BF, stream);
}

void dequantize_cublas_bf16_launcher(const Nvfp4GemmArgs& a, cudaStream_t stream) {
  static Bf16PeerWorkspace ws;  // process-wide; the benchmark's warm-up absorbs the first allocation
  static DeviceBuffer<__nv_bfloat16> c;
  const size_t nc = size_t(a.M) * a.N * a.L;
  if (c.size() < nc) c = DeviceBuffer<__nv_bfloat16>(nc);
  dequantize_cublas_bf16(a, c.get(), ws, stream);
}

void dequantize_cublas_bf16(const Mxfp8GemmArgs& a, Bf16PeerWorkspace& ws, cudaStream_t stream) {
  validate(a);
  dequantize_operands(a.M, a.N, a.K, a.L, a.A, a.SFA, Mxfp8Blocks{a.a_type}, a.B, a.SFB, Mxfp8Blocks{a.b_type}, ws,
                      stream);
  // No alpha: the scales carry every factor.
  cublas_bf16_gemm(a.M, a.N, a.K, a.L, 1.0f, ws, a.C, a.c_type == Mxfp8Output::kBf16 ? CUDA_R_16BF : CUDA_R_32F,
                   stream);
}

void dequantize_cublas_bf16_mxfp8(const Mxfp8GemmArgs& a, cudaStream_t stream) {
  static Bf16PeerWorkspace ws;  // process-wide; the benchmark's warm-up absorbs the first allocation
  dequantize_cublas_bf16(a, ws, stream);
}

void dequantize_fp16(const uint8_t* data, const uint8_t* sf, int rows, int K, int L, __half* out, cudaStream_t stream) {
  dequantize<__half>(data, sf, rows, K, L, Nvfp4Blocks{}, out, stream);
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
