// The MXFP8 quantizer on the GPU: the arithmetic of common/mxfp8_quant.h (the CPU definition), bit
// for bit, in one pass: one thread per block of 32 values reads them (FP32 or BF16), takes amax,
// picks the UE8M0 scale with mxfp8_scale_code() (FLOOR or RCEIL, as the caller says) and writes the
// 32 value bytes with two 16-byte stores; the four scales of one blocked-layout word, held by four
// neighbouring lanes, are gathered with shuffles and written as one 32-bit store, padding (rows up to
// a multiple of 128, scale columns up to a multiple of 4) as zeros. Scales land directly in the
// layout the tensor cores read, so no separate swizzle pass follows.
//
// Non-finite inputs are not refused here (that would need a pass and a host synchronisation first):
// a block holding a NaN or an Inf is written as a NaN block, scale 0xFF and every value 0x7F, which
// mxfp8_quantize_block() defines and the CPU test of that function checks. The CPU quantizer refuses
// such input instead (std::invalid_argument).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/mxfp8_quant.h"

namespace gemm {

struct Mxfp8DeviceTensor {
  uint8_t* data = nullptr;  // rows*K*L bytes, 16-byte aligned
  uint8_t* sf = nullptr;    // sf_batch_bytes(rows, K, 32) * L bytes, 4-byte aligned
};

// rows, L >= 1 (L <= 65535), K a positive multiple of 32, x 16-byte aligned, element and rounding
// valid; throws std::invalid_argument naming the rule otherwise. Asynchronous on `stream`.
void quantize_mxfp8_gpu(const float* x, int rows, int K, int L, Mxfp8Element element, Mxfp8ScaleRounding rounding,
                        const Mxfp8DeviceTensor& out, cudaStream_t stream);
void quantize_mxfp8_gpu(const __nv_bfloat16* x, int rows, int K, int L, Mxfp8Element element,
                        Mxfp8ScaleRounding rounding, const Mxfp8DeviceTensor& out, cudaStream_t stream);

}  // namespace gemm
