// Library peers: what a user would call instead of writing these kernels. Benchmarks time them in the
// same run as the stages, so ratios compare like with like.
//
// cuBLASLt NVFP4 (common/peers_cublaslt.cu) is the peer of the NVFP4 stages on a B200: the same
// contract (gemm_api.h), C = alpha * sum_k (A * SFA)(B * SFB) in FP32, FP16 out, with the tensor cores'
// own block-scaled FP4 MMAs doing the work in one library call per batch. cuBLASLt is column-major,
// so it is asked for C^T = B * A^T: row-major C (M x N) is column-major C^T (N x M, leading dimension
// N); B (N x K, K contiguous) is a column-major K x N matrix used transposed, and A (M x K) is a
// column-major K x M matrix used as it is, which is the "TN" form its FP4 kernels require. The scales
// go with their operands (SFB to cuBLASLt's A, SFA to its B), in the blocked layout of sf_layout.h,
// which is cuBLAS's "1D block scaling factors layout". Shapes cuBLASLt's alignment rules refuse are
// padded, and the plan for each shape is built once and cached, so later launches can be captured in
// a CUDA graph. cuBLASLt offers NVFP4 only on sm_100-class GPUs: cublaslt_nvfp4_supported() is false,
// with the reason, everywhere else, and there cublaslt_nvfp4 throws instead of launching. On Hopper
// the NVFP4 benchmarks therefore keep the BF16 peer below (dequantize + cuBLAS BF16), which is what a
// Hopper user can actually run.
//
// The MXFP8 GEMM (common/kinds/mxfp8_gemm.h) has the same two peers: cuBLASLt's MXFP8 GEMM
// (CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 scales, the same operand mapping and machinery as NVFP4)
// on sm_100-class GPUs, and dequantize-to-BF16 + cuBLAS BF16 everywhere else.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "common/device_buffer.h"
#include "common/gemm_api.h"
#include "common/kinds/mxfp8_gemm.h"
#include "common/kinds/svdquant_gemm.h"

namespace gemm {

// cuBLAS SGEMM in true FP32 (CUBLAS_DEFAULT_MATH: no TF32), C = A * B^T with the layouts of
// gemm_api.h, batched with strides when L > 1.
void cublas_sgemm(const Fp32GemmArgs& args, cudaStream_t stream);
inline constexpr const char* kCublasSgemmName = "cuBLAS SGEMM (FP32, TF32 off)";

// What a Hopper user does with NVFP4 operands: dequantize both to BF16 (payload x block scale is
// exact in BF16), then a cuBLAS BF16 GEMM with alpha, FP32 accumulation. Two launches. The output
// is BF16 (cuBLAS has no BF16-in, FP16-out GEMM), written to `c_bf16` (M x N x L).
struct Bf16PeerWorkspace {
  DeviceBuffer<__nv_bfloat16> a, b;
};
void dequantize_cublas_bf16(const Nvfp4GemmArgs& args, __nv_bfloat16* c_bf16, Bf16PeerWorkspace& ws,
                            cudaStream_t stream);
// The same with a process-wide workspace and output, as an Nvfp4Launcher (args.C is not written).
void dequantize_cublas_bf16_launcher(const Nvfp4GemmArgs& args, cudaStream_t stream);
inline constexpr const char* kDequantCublasBf16Name = "dequantize to BF16 + cuBLAS BF16 GEMM";

// The same for MXFP8 operands (the MXFP8 GEMM's peer off sm_100): both operands dequantized to BF16
// with their UE8M0 scales (blocked layout, 32 values per scale), then one cuBLAS BF16 GEMM with FP32
// accumulation that writes args.C itself, in FP32 or BF16 as args.c_type says. E4M3 or E5M2 times a
// power of two is exact in BF16 (3 or 2 mantissa bits against BF16's 7, the same exponent range as
// FP32) unless the product leaves BF16's range: above the largest BF16 it becomes Inf, and bits below
// 2^-133 (BF16's subnormal resolution) are rounded away; a 0xFF (NaN) scale gives NaN values. So
// the only roundings are cuBLAS's FP32 accumulation and C's own. Two dequantize launches + one GEMM.
void dequantize_cublas_bf16(const Mxfp8GemmArgs& args, Bf16PeerWorkspace& ws, cudaStream_t stream);
// With a process-wide workspace, as a launcher of the MXFP8 GEMM kind (writes args.C).
void dequantize_cublas_bf16_mxfp8(const Mxfp8GemmArgs& args, cudaStream_t stream);

// The SVDQuant GEMM's baseline (common/kinds/svdquant_gemm.h): what a user without a fused kernel runs,
// unfused, with one rounding as the kind defines it. Five launches: both NVFP4 operands dequantized to
// BF16, a cuBLAS BF16 GEMM writing alpha * A B^T in FP32 to a workspace, a cuBLAS GEMM of lora_act and
// lora_up (FP16 or BF16, FP32 accumulation) added to it (beta = 1), and one elementwise kernel for
// wcscale, bias and the rounding to C's format. Its extra DRAM traffic over a fused kernel: the BF16
// operands (written once, read once) and the FP32 intermediate (written twice, read twice).
void svdquant_unfused(const SvdquantGemmArgs& args, cudaStream_t stream);
inline constexpr const char* kSvdquantUnfusedName =
    "unfused: dequantize + cuBLAS BF16 GEMM to FP32, cuBLAS low-rank GEMM (beta = 1), affine kernel";

// The GEMV peer (stage 09): what a user without an NVFP4 GEMV runs. The weights are dequantized to
// FP16 once, ahead of time (exact: payload x block scale fits FP16), and each call is a cuBLAS FP16
// GEMM at N = 1 with FP32 accumulation: C (M x 1 x L) = alpha * A x. It reads 2 bytes per weight
// where the NVFP4 kernel reads 0.5625.
void dequantize_fp16(const uint8_t* data, const uint8_t* sf, int rows, int K, int L, __half* out, cudaStream_t stream);
void cublas_fp16_gemv(int M, int K, int L, const __half* A, const __half* x, float alpha, __half* C,
                      cudaStream_t stream);
inline constexpr const char* kCublasFp16GemvName = "cuBLAS FP16 GEMV on dequantized weights";

// true where cuBLASLt offers an NVFP4 (E2M1 x E2M1, UE4M3 block-16 scales) GEMM on this GPU; otherwise false and *why says so.
bool cublaslt_nvfp4_supported(std::string* why);
void cublaslt_nvfp4(const Nvfp4GemmArgs& args, cudaStream_t stream);   // an Nvfp4Launcher
inline constexpr const char* kCublasLtNvfp4Name = "cuBLASLt NVFP4 GEMM";

// true where cuBLASLt offers an MXFP8 GEMM (E4M3 x E4M3, UE8M0 block-32 scales, FP32 and BF16 out)
// on this GPU (it needs compute capability 10.x); otherwise false and *why says so.
bool cublaslt_mxfp8_supported(std::string* why);
// cuBLASLt's MXFP8 GEMM on the kind's arguments (an MXFP8 GEMM launcher): C in args.c_type, the
// operands in args.a_type / args.b_type. A type combination the library refuses throws
// std::runtime_error naming it, before anything is launched (cuBLAS documents E5M2 x E5M2 as
// unsupported for its tensor-wide-scaled FP8 GEMMs; for the block-scaled ones its heuristic decides).
void cublaslt_mxfp8(const Mxfp8GemmArgs& args, cudaStream_t stream);
inline constexpr const char* kCublasLtMxfp8Name = "cuBLASLt MXFP8 GEMM";

// Test hook, not a peer: the machinery behind cublaslt_nvfp4 (operand mapping, per-batch loop, plan
// cache, padding and staging) driven with FP8 E4M3 operands and one FP32 scale per operand and batch,
// a form that Hopper's cuBLASLt runs as well, so that everything except the NVFP4 format itself is
// exercised on the GPUs this project has. A (M x K) and B (N x K) are E4M3 bytes, K contiguous,
// batches back to back; a_scales / b_scales are device arrays of 4 L floats (or null: 1), batch l's
// scale at index 4 l (cuBLASLt wants scale pointers 16-byte aligned);
// C (M x N x L, FP16, row-major) = alpha * a_scales[4 l] * b_scales[4 l] * A * B^T. Returns how the
// plan mapped the shape onto cuBLASLt ("as given", or what was padded and staged).
struct CublasLtFp8SelftestArgs {
  int M = 0, N = 0, K = 0, L = 1;
  const uint8_t* A = nullptr;
  const float* a_scales = nullptr;
  const uint8_t* B = nullptr;
  const float* b_scales = nullptr;
  float alpha = 1.0f;
  __half* C = nullptr;
};
std::string cublaslt_fp8_selftest(const CublasLtFp8SelftestArgs& args, cudaStream_t stream);

}  // namespace gemm
