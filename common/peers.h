// Library peers: what a user would call instead of writing these kernels. Benchmarks time them in the
// same run as the stages, so ratios compare like with like.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "common/device_buffer.h"
#include "common/gemm_api.h"

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

}  // namespace gemm
