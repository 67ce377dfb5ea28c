// The NVFP4 quantizer on the GPU: the arithmetic of common/nvfp4_quant.h (the CPU definition),
// bit for bit, in two passes over the input:
//   1. amax(|x|) over the whole tensor: a grid-wide max reduction (atomicMax on the float's bits,
//      which order like the floats themselves for non-negative values);
//   2. one thread per 16-value block: it encodes the E4M3 block scale and the 8 payload bytes (one
//      8-byte store); the four block scales of one blocked-layout word, held by four neighbouring
//      lanes, are gathered with shuffles and written as one 32-bit store, padding (rows up to a
//      multiple of 128, scale columns up to a multiple of 4) as zeros.
// Pass 2 alone moves 4 bytes in and 0.5625 bytes out per FP32 value (2 in for BF16); pass 1 reads
// the input once more, unless the caller already knows amax (a calibrated scale) and skips it.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace gemm {

struct Nvfp4DeviceTensor {
  uint8_t* data = nullptr;  // packed_bytes(rows, K, L) bytes, 2-byte aligned
  uint8_t* sf = nullptr;    // sf_bytes(rows, K, L) bytes, 4-byte aligned
  float* scales = nullptr;  // 2 floats: [0] amax(|x|) (input of pass 2), [1] gs (output)
};

// Both passes. rows, L >= 1, K a positive multiple of 16, x 16-byte (FP32) / 8-byte (BF16) aligned;
// throws std::invalid_argument otherwise.
void quantize_nvfp4_gpu(const float* x, int rows, int K, int L, const Nvfp4DeviceTensor& out, cudaStream_t stream);
void quantize_nvfp4_gpu(const __nv_bfloat16* x, int rows, int K, int L, const Nvfp4DeviceTensor& out,
                        cudaStream_t stream);

// Pass 2 only, with amax already in out.scales[0].
void quantize_nvfp4_gpu_given_amax(const float* x, int rows, int K, int L, const Nvfp4DeviceTensor& out,
                                   cudaStream_t stream);

}  // namespace gemm
