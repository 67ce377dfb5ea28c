// NVFP4 conversions on the GPU: the hardware instruction where the GPU has one, otherwise the
// common/formats.h definition (which the hardware instructions match bit for bit; the tests check).
//
//   E4M3 encode   cvt.rn.satfinite.e4m3x2.f32      sm_89 and later (Hopper included); before
//                                                  that (sm_80 PTX) e4m3_from_float()
//   E2M1 encode   cvt.rn.satfinite.e2m1x2.f32      sm_100a only; Hopper uses e2m1_from_float()
//   E2M1 decode   cvt.rn.f16x2.e2m1x2              sm_100a only; Hopper uses a 16-entry table
// PTX ISA 9.1, section 9.7.9.21 (cvt). Packing order: for the f32 -> x2 forms the first source
// operand lands in the upper half of the result (upper nibble / upper byte), so the even-k value
// goes second; the e2m1x2 -> f16x2 form returns the lower nibble in the lower half. The two E2M1
// instructions are wrapped in common/ptx/cvt.cuh, which the precondition build runs on Hopper.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "common/formats.h"
#include "common/ptx/arch.cuh"
#include "common/ptx/cvt.cuh"

// The E2M1 instructions' paths: compiled for sm_100a (or another arch-specific Blackwell target),
// where they exist, and for Hopper in the precondition build (GEMM_SM100_PATHS, common/ptx/arch.cuh).
#define GEMM_HAS_E2M1_CVT GEMM_SM100_PATHS

namespace gemm {

// Round to nearest even, saturating at +-448: one E4M3 byte.
__device__ __forceinline__ uint8_t e4m3_from_float_rn(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 890
  return e4m3_from_float(x);
#else
  uint16_t pair;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(x));  // x -> low byte
  return uint8_t(pair & 0xFF);
#endif
}

// Two values -> one byte of packed E2M1, `even` (element 2i) in the low nibble.
__device__ __forceinline__ uint8_t e2m1x2_from_floats(float even, float odd) {
#if GEMM_HAS_E2M1_CVT
  return uint8_t(ptx::cvt_rn_satfinite_e2m1x2_f32(odd, even));
#else
  return pack_e2m1x2(e2m1_from_float(even), e2m1_from_float(odd));
#endif
}

// One byte of packed E2M1 -> two halves (low nibble in .x), exact: every E2M1 value is an FP16.
// `table` holds the 16 E2M1 values as halves, by code, in shared memory; only Hopper uses it. Its
// 32 bytes span 8 banks and lanes reading the same word share it, so lookups never conflict.
__device__ __forceinline__ __half2 e2m1x2_to_half2(uint8_t byte, const __half* table) {
#if GEMM_HAS_E2M1_CVT
  (void)table;
  uint32_t h2 = ptx::cvt_rn_f16x2_e2m1x2(byte);
  return *reinterpret_cast<__half2*>(&h2);
#else
  return __halves2half2(table[byte & 0xF], table[byte >> 4]);
#endif
}

// Fill e2m1x2_to_half2's table: threads 0..15 of the block write one entry each (the caller
// synchronises before the first lookup).
__device__ __forceinline__ void init_e2m1_half_table(__half* table) {
  if (threadIdx.x < 16) table[threadIdx.x] = __float2half_rn(e2m1_to_float(uint8_t(threadIdx.x)));
}

}  // namespace gemm
