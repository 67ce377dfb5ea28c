// The E2M1 conversions, sm_100a only. PTX ISA 9.1, 9.7.9.21 (cvt) and 5.2.3 (the E2M1 format):
//   cvt.rn.f16x2.e2m1x2 d, a;            a is .b8: its upper 4 bits -> d[31:16], its lower 4 -> d[15:0]
//   cvt.rn.satfinite.e2m1x2.f32 d, a, b; d is .b8: a -> d[7:4], b -> d[3:0]; .satfinite turns NaN into
//                                        +6 (MAX_NORM) and a magnitude above 6 into +-6
//
// Compiled for sm_100a each wrapper is its instruction and nothing else. Compiled for Hopper in the
// precondition build (common/ptx/arch.cuh), each computes what the instruction defines with Hopper
// instructions, from its operands exactly as the instruction reads them: a caller that hands the
// instruction its operands in the wrong order gets the wrong value on Hopper too. Neither instruction
// has a precondition to check: every 4-bit code is an E2M1 value (the format has no NaN and no
// infinity, 5.2.3), and .satfinite defines the result of every f32, NaN and infinities included.
// The arithmetic is common/formats.h's, which the CPU tests hold to the PTX tables.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "common/formats.h"
#include "common/ptx/arch.cuh"

namespace gemm::ptx {

// Hopper: one E2M1 code (low 4 bits of `code`) as the bits of the FP16 of the same value, exact.
__device__ __forceinline__ uint32_t e2m1_half_bits(uint32_t code) {
  return __half_as_ushort(__float2half_rn(e2m1_to_float(uint8_t(code & 0xF))));
}

// cvt.rn.f16x2.e2m1x2: the low byte of `a` -> two halves (its lower nibble in the low half).
__device__ __forceinline__ uint32_t cvt_rn_f16x2_e2m1x2(uint32_t a) {
#if GEMM_HAS_SM100A_INSTRUCTIONS
  uint32_t d;
  asm("{\n .reg .b8 t;\n cvt.u8.u32 t, %1;\n cvt.rn.f16x2.e2m1x2 %0, t;\n}" : "=r"(d) : "r"(a));
  return d;
#else
  return e2m1_half_bits(a >> 4) << 16 | e2m1_half_bits(a);
#endif
}

// The same conversion of each byte of a word: byte i of `w` -> d[i], one cvt per byte.
__device__ __forceinline__ void cvt_rn_f16x2_e2m1x2_bytes(uint32_t w, uint32_t (&d)[4]) {
#if GEMM_HAS_SM100A_INSTRUCTIONS
  asm("{\n .reg .b8 b0, b1, b2, b3;\n mov.b32 {b0, b1, b2, b3}, %4;\n"
      " cvt.rn.f16x2.e2m1x2 %0, b0;\n cvt.rn.f16x2.e2m1x2 %1, b1;\n"
      " cvt.rn.f16x2.e2m1x2 %2, b2;\n cvt.rn.f16x2.e2m1x2 %3, b3;\n}"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(w));
#else
#pragma unroll
  for (int i = 0; i < 4; ++i) d[i] = cvt_rn_f16x2_e2m1x2(w >> (8 * i));
#endif
}

// cvt.rn.satfinite.e2m1x2.f32: two floats -> one byte of two E2M1 codes, `a` in the upper nibble.
__device__ __forceinline__ uint32_t cvt_rn_satfinite_e2m1x2_f32(float a, float b) {
#if GEMM_HAS_SM100A_INSTRUCTIONS
  uint32_t d;
  asm("{\n .reg .b8 t;\n cvt.rn.satfinite.e2m1x2.f32 t, %1, %2;\n cvt.u32.u8 %0, t;\n}" : "=r"(d) : "f"(a), "f"(b));
  return d;
#else
  return uint32_t(e2m1_from_float(a)) << 4 | e2m1_from_float(b);
#endif
}

}  // namespace gemm::ptx
