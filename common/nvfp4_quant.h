// The two-level NVFP4 quantizer on the CPU: the definition the GPU quantizer of stage 03 must match
// bit for bit, and the source of every NVFP4 test input.
//
// With x a rows x K x L FP32 tensor (K-major), all arithmetic in FP32, in exactly this order:
//   per tensor:   gs  = (6 * 448) / amax(|x|)        (gs = 1 when amax is 0 or gs is not finite)
//   per block of 16 consecutive k in one row:
//                 s   = E4M3( min(amax_block / 6 * gs, 448) )     the stored block scale
//                 enc = gs / max(float(s), 1e-12)
//                 q_i = E2M1( x_i * enc )                         the stored payload
// Decoding is x_i ~= q_i * float(s) / gs: the block scale is stored, 1/gs is the per-tensor decode
// scale, and a GEMM of two quantized tensors multiplies by alpha = 1 / (gs_A * gs_B).
// This is the formulation used with cuBLAS/CUTLASS/FlashInfer NVFP4 GEMMs (vLLM's and FlashInfer's NVFP4 GEMM tests, CUTLASS example 72): gs maps
// the tensor's largest magnitude onto the largest product of an E4M3 scale (448) and an E2M1 value (6).
#pragma once

#include <cstdint>
#include <vector>

#include "common/formats.h"
#include "common/sf_layout.h"

namespace gemm {

struct Nvfp4Tensor {
  int rows = 0, K = 0, L = 1;
  std::vector<uint8_t> data;  // rows*K/2*L packed E2M1 bytes, even k in the low nibble
  std::vector<uint8_t> sf;    // blocked E4M3 scales, sf_batch_bytes(rows, K) per batch, padding 0
  float global_scale = 1.0f;  // gs (encode); the decode scale is 1/gs

  uint8_t code(int l, int row, int k) const {
    const uint8_t byte = data[(int64_t(l) * rows + row) * (K / 2) + k / 2];
    return (k & 1) ? e2m1_odd(byte) : e2m1_even(byte);
  }
  uint8_t scale(int l, int row, int k16) const { return sf[int64_t(l) * sf_batch_bytes(rows, K) + sf_offset(row, k16, K)]; }
  // Payload times block scale (exact in FP32); multiply by 1/gs for the original magnitude.
  float scaled_value(int l, int row, int k) const { return e2m1_to_float(code(l, row, k)) * ue4m3_to_float(scale(l, row, k / kSfVector)); }
};

// gs for a tensor whose largest magnitude is amax.
float nvfp4_global_scale(float amax);

// One block of 16 values: writes its E4M3 scale and its 8 payload bytes.
void nvfp4_quantize_block(const float* x16, float global_scale, uint8_t* scale, uint8_t payload[8]);

// The whole tensor; K must be a multiple of 16. One gs for all L batches.
Nvfp4Tensor quantize_nvfp4(const float* x, int rows, int K, int L = 1);

// alpha for C = A_q * B_q^T: the product of the two decode scales.
inline float nvfp4_alpha(const Nvfp4Tensor& a, const Nvfp4Tensor& b) { return 1.0f / (a.global_scale * b.global_scale); }

}  // namespace gemm
