// Number formats of NVFP4: E2M1 (the 4-bit payload), E4M3 (the per-16-values block scale) and the
// FP16 the GEMM writes. Encoders round to nearest, ties to even, and saturate, which is exactly what
// the hardware conversions (cvt.rn.satfinite.*) do; decoders are exact. At the end, the decoders of
// the operand formats of the other tensor-core kinds the accumulator is shared with: E5M2 and UE8M0
// (MXFP8, kind::mxf8f6f4) and FP16/BF16 (kind::f16).
//
// E2M1: 1 sign, 2 exponent (bias 1), 1 mantissa bit; no Inf, no NaN.    PTX ISA 9.1, section 5.2.3
//   magnitudes by code 0..7:  0  0.5  1  1.5  2  3  4  6
// E4M3 ("fn"): 1 sign, 4 exponent (bias 7), 3 mantissa bits; no Inf; NaN is S.1111.111;
//   largest finite 448 (0x7E), smallest normal 2^-6, smallest subnormal 2^-9.
// Packing: two E2M1 values per byte, the even k in the low nibble (the layout PyTorch, vLLM and the
//   tensor cores' kind::mxf4nvf4 use).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/config.h"

namespace gemm {

inline constexpr float kE2M1Max = 6.0f;    // largest E2M1 magnitude
inline constexpr float kE4M3Max = 448.0f;  // largest finite E4M3 magnitude
inline constexpr uint8_t kE4M3NaN = 0x7F;

// ---- E2M1 ----------------------------------------------------------------------------------------

GEMM_HD float e2m1_to_float(uint8_t code) {
  // Index = the three magnitude bits; bit 3 is the sign. Written as arithmetic rather than a table
  // so that it also works in device code without a __constant__ array.
  const uint8_t mag = code & 0x7;
  const uint8_t exp = mag >> 1, man = mag & 1;
  const float value = exp == 0 ? 0.5f * man                                       // subnormal: m/2
                               : (1.0f + 0.5f * man) * float(1 << (exp - 1));    // 2^(e-1) (1 + m/2)
  return (code & 0x8) ? -value : value;
}

// Round to nearest even on the E2M1 grid, saturating at +-6. NaN becomes +6, as cvt.rn.satfinite
// does (the quantizer never feeds it NaN; the case is defined only so the function is total).
//
// Each binade of the grid has a fixed step, so rounding is one rint() (nearest, ties to even) in
// units of that step, and the rounded count of steps is the code:
//   |x| < 2   step 0.5:  code = rint(2|x|)          0, 0.5, 1, 1.5, 2 -> codes 0..4
//   |x| < 4   step 1:    code = rint(|x|) + 2       2, 3, 4           -> codes 4..6
//   else      step 2:    code = rint(|x|/2) + 4     4, 6 (and above)  -> codes 6, 7
// Ties land on even codes: 0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4.
// Scaling by 2 or 1/2 is exact, so this is the exact round-to-nearest-even of |x|.
// Written without an early return so that a GPU evaluates it without branching.
GEMM_HD uint8_t e2m1_from_float(float x) {
  const uint8_t sign = (std::signbit(x) && x == x) ? 0x8 : 0x0;  // NaN -> +6, whatever its sign bit
  // fmin returns the number when one argument is NaN, so NaN becomes 8 here and saturates; above 7
  // everything saturates to 6 anyway.
  const float a = std::fmin(std::fabs(x), 8.0f);
  int code;
  if (a < 2.0f) {
    code = int(std::rint(a * 2.0f));
  } else if (a < 4.0f) {
    code = int(std::rint(a)) + 2;
  } else {
    code = int(std::rint(a * 0.5f)) + 4;
    if (code > 7) code = 7;
  }
  return sign | uint8_t(code);
}

GEMM_HD uint8_t pack_e2m1x2(uint8_t even_k, uint8_t odd_k) {
  return uint8_t((even_k & 0xF) | ((odd_k & 0xF) << 4));
}
GEMM_HD uint8_t e2m1_even(uint8_t byte) { return byte & 0xF; }  // element k = 2i
GEMM_HD uint8_t e2m1_odd(uint8_t byte) { return byte >> 4; }    // element k = 2i + 1

// ---- E4M3 ----------------------------------------------------------------------------------------

GEMM_HD float e4m3_to_float(uint8_t code) {
  const uint32_t exp = (code >> 3) & 0xF, man = code & 0x7, sign = uint32_t(code & 0x80) << 24;
  float value;
  if (exp == 0xF && man == 0x7) {
    value = NAN;
  } else if (exp == 0) {
    value = float(man) * 0x1p-9f;  // subnormal: m * 2^-9, exact
  } else {
    // (1 + m/8) 2^(e-7) as FP32 bits: exponent field e - 7 + 127, mantissa m in its top 3 bits.
    uint32_t bits = ((exp + 120) << 23) | (man << 20);
#if defined(__CUDA_ARCH__)
    value = __uint_as_float(bits);
#else
    std::memcpy(&value, &bits, sizeof value);
#endif
  }
  return sign ? -value : value;
}

// A block scale is UNSIGNED E4M3 (the PTX ISA's .ue4m3 scale type; cuBLASLt's
// CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3): the tensor cores and cuBLAS read the seven low bits and
// ignore bit 7, so 0xB8 scales by 1 exactly as 0x38 does. Everything that reads a scale byte (the
// CPU reference, the quantizers, the CUDA-core stages' decode, the tcgen05 emulator) reads it here.
GEMM_HD float ue4m3_to_float(uint8_t code) { return e4m3_to_float(uint8_t(code & 0x7F)); }

// Round to nearest even, saturating at +-448 (Inf too); NaN stays NaN.
GEMM_HD uint8_t e4m3_from_float(float x) {
  if (x != x) return kE4M3NaN;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const float a = std::fabs(x);
  if (!(a <= kE4M3Max)) return sign | 0x7E;
  uint8_t mag;
  if (a < 0.015625f) {
    // Below the smallest normal 2^-6: multiples of 2^-9. A result of 8 is 2^-6, whose code is 0x08.
    mag = uint8_t(std::rint(a * 512.0f));
  } else {
    int e2;
    std::frexp(a, &e2);
    const int e = e2 - 1;                                     // a in [2^e, 2^(e+1)), e in [-6, 8]
    const int q = int(std::rint(std::ldexp(a, 3 - e)));      // 8 a / 2^e in [8, 16]; 16 carries
    mag = uint8_t(((e + 7) << 3) + q - 8);
    if (mag > 0x7E) mag = 0x7E;
  }
  return sign | mag;
}

// ---- FP16 (host side; kernels use cuda_fp16.h) --------------------------------------------------

// Correctly rounded double -> IEEE binary16 (nearest even; overflow to Inf as __float2half_rn does).
// Going straight from double avoids the double rounding of double -> float -> half.
inline uint16_t half_bits_from_double(double x) {
  if (x != x) return 0x7E00;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0x0000;
  const double a = std::fabs(x);
  if (a >= 65520.0) return sign | 0x7C00;  // 65520 is the midpoint between 65504 and 2^16: ties up
  uint16_t mag;
  if (a < 0x1p-14) {
    mag = uint16_t(std::rint(a * 0x1p24));  // subnormals: multiples of 2^-24; 1024 = smallest normal
  } else {
    int e2;
    std::frexp(a, &e2);
    const int e = e2 - 1;
    const int q = int(std::rint(std::ldexp(a, 10 - e)));  // in [1024, 2048]; 2048 carries
    mag = uint16_t(((e + 15) << 10) + q - 1024);
  }
  return sign | mag;
}

inline double half_bits_to_double(uint16_t h) {
  const int exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  double value;
  if (exp == 0x1F) {
    value = man ? NAN : INFINITY;
  } else if (exp == 0) {
    value = std::ldexp(double(man), -24);
  } else {
    value = std::ldexp(double(1024 + man), exp - 25);
  }
  return (h & 0x8000) ? -value : value;
}

// ---- MXFP8 and 16-bit operand formats (decoders, exact) -------------------------------------------
//
// E5M2: 1 sign, 5 exponent (bias 15), 2 mantissa bits, IEEE-754 style: Inf is S.11111.00, NaN
//   S.11111.{01,10,11}; largest finite 57344 (0x7B), smallest normal 2^-14, smallest subnormal 2^-16.
//   (PTX ISA 9.1, 5.2.3 gives only the bit counts; bias, Inf and NaN are the OCP 8-bit floating-point
//   specification's. An E5M2 value is the upper byte of the FP16 with the same value, which the CPU
//   tests use as an independent check.)
// UE8M0: 8 exponent bits, no sign, no mantissa: 2^(code - 127) for codes 0..254, 0xFF NaN, no zero and
//   no Inf (PTX ISA 9.1, 5.2.3: no Inf, NaN 0xFF; the bias is CUDA's __nv_fp8_e8m0: codes 0..254 are
//   2^-127 .. 2^127).
// FP16 / BF16: IEEE binary16 and the upper half of an IEEE binary32 (PTX ISA 9.1, 5.2.3).

GEMM_HD float float_from_bits(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

GEMM_HD float e5m2_to_float(uint8_t code) {
  const uint32_t exp = (code >> 2) & 0x1F, man = code & 0x3, sign = uint32_t(code & 0x80) << 24;
  if (exp == 0x1F) return float_from_bits(sign | 0x7F800000u | (man << 21));  // Inf (man 0) or NaN
  if (exp == 0) {
    const float value = float(man) * 0x1p-16f;  // subnormal: m * 2^-16, exact
    return sign ? -value : value;
  }
  // (1 + m/4) 2^(e-15) as FP32 bits: exponent field e - 15 + 127, mantissa m in its top 2 bits.
  return float_from_bits(sign | ((exp + 112) << 23) | (man << 21));
}

// Round to nearest even, saturating at +-57344 (Inf too), as cvt.rn.satfinite.e5m2x2.f32 does and
// as the OCP MX conversion clamps (docs/mxfp8.md); NaN becomes 0x7F. The binades are those of
// e4m3_from_float with 2 mantissa bits: below the smallest normal 2^-14 multiples of 2^-16.
GEMM_HD uint8_t e5m2_from_float(float x) {
  constexpr float kE5M2Max = 57344.0f;    // 1.75 * 2^15, code 0x7B
  constexpr float kE5M2MinNormal = 0x1p-14f;
  if (x != x) return 0x7F;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const float a = std::fabs(x);
  if (!(a <= kE5M2Max)) return sign | 0x7B;
  uint8_t mag;
  if (a < kE5M2MinNormal) {
    mag = uint8_t(std::rint(a * 0x1p16f));  // a result of 4 is 2^-14, whose code is 0x04
  } else {
    int e2;
    std::frexp(a, &e2);
    const int e = e2 - 1;                                  // a in [2^e, 2^(e+1)), e in [-14, 15]
    const int q = int(std::rint(std::ldexp(a, 2 - e)));  // 4 a / 2^e in [4, 8]; 8 carries
    mag = uint8_t(((e + 15) << 2) + q - 4);
  }
  return sign | mag;
}

GEMM_HD float ue8m0_to_float(uint8_t code) {
  if (code == 0xFF) return float_from_bits(0x7FC00000u);  // NaN
  // 2^(code - 127): code 0 is 2^-127, an FP32 subnormal (bit 22); codes 1..254 are FP32 normals.
  return code == 0 ? float_from_bits(0x00400000u) : float_from_bits(uint32_t(code) << 23);
}

GEMM_HD float fp16_bits_to_float(uint16_t h) {
  const uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF, sign = uint32_t(h & 0x8000) << 16;
  if (exp == 0x1F) return float_from_bits(sign | 0x7F800000u | (man << 13));  // Inf or NaN
  if (exp == 0) {
    const float value = float(man) * 0x1p-24f;  // subnormal: m * 2^-24, exact
    return sign ? -value : value;
  }
  return float_from_bits(sign | ((exp + 112) << 23) | (man << 13));
}

GEMM_HD float bf16_bits_to_float(uint16_t h) { return float_from_bits(uint32_t(h) << 16); }

}  // namespace gemm
