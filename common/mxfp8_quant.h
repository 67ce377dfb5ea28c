// MXFP8 (OCP Microscaling, MX v1.0): 8-bit E4M3 or E5M2 values with one UE8M0 scale, a power of
// two, per 32 consecutive values along K. This header holds the quantizer's arithmetic for one block
// (host and device: the GPU quantizer calls the same functions, so both agree bit for bit) and the
// CPU quantizer of whole tensors, the definition every MXFP8 test input comes from.
//
// One block of 32 values x_i, amax = max |x_i|, amax = (1 + f) 2^E with f in [0, 1):
//   FLOOR (OCP MX v1.0, section 6.3):  e = E - emax            emax = 8 (E4M3), 15 (E5M2): the
//                                                             exponent of the element's largest value
//   RCEIL (TransformerEngine):         e = the smallest integer with amax <= max_elem * 2^e
//                                        = E - emax + (1 + f > 1.75)      max_elem = 1.75 * 2^emax
//   then e is clamped to [-127, 127], the scale stored is the UE8M0 code e + 127, and
//   q_i = round_to_nearest_even_saturating(x_i * 2^-e)   (multiplying by 2^-e is exact: one rounding)
// FLOOR keeps the largest element in the element format's top binade, so a block whose amax has a
// larger significand than the format's largest value (1 + f > 1.75) saturates: amax = 480 gives
// e = 0 and 480 -> 448. RCEIL takes the next power of two there (e = 1, 480 -> 240, exact), so no
// finite element ever saturates. docs/mxfp8.md has the sources and a worked example.
//
// amax = 0 (and every amax below 2^-127 * max_elem, FP32 subnormals included) gives e = -127, code 0.
// The largest finite FP32 amax gives e <= 120, so the upper clamp never acts.
//
// Non-finite inputs. The CPU quantizer (quantize_mxfp8) refuses them: std::invalid_argument naming
// the row, the batch and the first k. The block function below, which the GPU quantizer runs,
// propagates them instead: a block holding a NaN or an Inf gets the NaN scale 0xFF and every value
// the NaN code 0x7F (a NaN in E4M3 and in E5M2), so the whole block decodes to NaN and no reader can
// mistake it for data.
#pragma once

#include <cstdint>
#include <vector>

#include "common/formats.h"
#include "common/sf_layout.h"

namespace gemm {

// The element format of A or B (the values tcgen05's kind::mxf8f6f4 takes as 8-bit operands).
enum class Mxfp8Element : uint8_t { kE4M3 = 0, kE5M2 = 1 };
// How a block's scale exponent is chosen. There is deliberately no default: the two conventions give
// different bytes for every block whose amax has a significand above 1.75, so every caller says which
// convention it means.
enum class Mxfp8ScaleRounding : uint8_t { kFloor = 0, kRceil = 1 };

inline constexpr int kUe8m0Bias = 127;
inline constexpr int kUe8m0MinExponent = -127;  // code 0
inline constexpr int kUe8m0MaxExponent = 127;   // code 254
inline constexpr uint8_t kUe8m0NaN = 0xFF;
inline constexpr uint8_t kMxfp8NaN = 0x7F;      // S.1111.111 in E4M3, S.11111.11 in E5M2
inline constexpr int kE4M3Emax = 8;             // 448 = 1.75 * 2^8
inline constexpr int kE5M2Emax = 15;            // 57344 = 1.75 * 2^15
inline constexpr float kE5M2Max = 57344.0f;
// The FP32 mantissa field of 1.75, the significand of both formats' largest value: an amax whose
// significand is above it does not fit under 2^E x max_elem / 2^emax.
inline constexpr uint32_t kMxMaxSignificandBits = 0x600000u;
inline constexpr uint32_t kFp32MantissaMask = 0x7FFFFFu;
inline constexpr int kFp32MantissaBits = 23;
inline constexpr int kFp32Bias = 127;
inline constexpr float kFp32Max = 3.402823466e38f;

GEMM_HD int mx_emax(Mxfp8Element t) { return t == Mxfp8Element::kE5M2 ? kE5M2Emax : kE4M3Emax; }
GEMM_HD float mx_max(Mxfp8Element t) { return t == Mxfp8Element::kE5M2 ? kE5M2Max : kE4M3Max; }
GEMM_HD uint8_t mx_encode(float x, Mxfp8Element t) { return t == Mxfp8Element::kE5M2 ? e5m2_from_float(x) : e4m3_from_float(x); }
GEMM_HD float mx_decode(uint8_t code, Mxfp8Element t) { return t == Mxfp8Element::kE5M2 ? e5m2_to_float(code) : e4m3_to_float(code); }
inline const char* element_name(Mxfp8Element t) { return t == Mxfp8Element::kE5M2 ? "E5M2" : "E4M3"; }
inline const char* rounding_name(Mxfp8ScaleRounding r) { return r == Mxfp8ScaleRounding::kRceil ? "RCEIL" : "FLOOR"; }

// The UE8M0 code of a block whose largest magnitude is amax (finite, >= 0), read off amax's bits.
GEMM_HD uint8_t mxfp8_scale_code(float amax, Mxfp8Element t, Mxfp8ScaleRounding r) {
  uint32_t bits;
#if defined(__CUDA_ARCH__)
  bits = __float_as_uint(amax);
#else
  std::memcpy(&bits, &amax, sizeof bits);
#endif
  const int biased = int(bits >> kFp32MantissaBits);
  // Zero and FP32 subnormals (E <= -127) land below -127 under either rule: the lower clamp.
  if (biased == 0) return 0;
  int e = biased - kFp32Bias - mx_emax(t);
  if (r == Mxfp8ScaleRounding::kRceil && (bits & kFp32MantissaMask) > kMxMaxSignificandBits) ++e;
  if (e < kUe8m0MinExponent) e = kUe8m0MinExponent;
  return uint8_t(e + kUe8m0Bias);
}

// 2^-(code - 127) as an FP32, for codes 0..253 (an FP32 normal; code 254 is never produced from a
// finite FP32 amax, see the top of this file).
GEMM_HD float mxfp8_inverse_scale(uint8_t code) { return float_from_bits(uint32_t(2 * kUe8m0Bias - code) << kFp32MantissaBits); }

// One block of kMxSfVector values: writes its scale code and its 32 value codes. Returns false (and
// writes the NaN block described at the top) when a value is NaN or Inf.
GEMM_HD bool mxfp8_quantize_block(const float* x32, Mxfp8Element t, Mxfp8ScaleRounding r, uint8_t* scale,
                                  uint8_t* out32) {
  float amax = 0.0f;
  bool finite = true;
  for (int i = 0; i < kMxSfVector; ++i) {
    const float a = std::fabs(x32[i]);
    finite = finite && a <= kFp32Max;  // false for NaN and Inf
    amax = a > amax ? a : amax;
  }
  if (!finite) {
    *scale = kUe8m0NaN;
    for (int i = 0; i < kMxSfVector; ++i) out32[i] = kMxfp8NaN;
    return false;
  }
  const uint8_t s = mxfp8_scale_code(amax, t, r);
  const float inv = mxfp8_inverse_scale(s);
  for (int i = 0; i < kMxSfVector; ++i) out32[i] = mx_encode(x32[i] * inv, t);
  *scale = s;
  return true;
}

struct Mxfp8Tensor {
  int rows = 0, K = 0, L = 1;
  Mxfp8Element element = Mxfp8Element::kE4M3;
  std::vector<uint8_t> data;  // rows*K*L value codes, K-major, batches back to back
  std::vector<uint8_t> sf;    // blocked UE8M0 scales, sf_batch_bytes(rows, K, 32) per batch, padding 0

  int64_t batch_sf_bytes() const { return sf_batch_bytes(rows, K, kMxSfVector); }
  uint8_t code(int l, int row, int k) const { return data[(int64_t(l) * rows + row) * K + k]; }
  uint8_t scale(int l, int row, int block) const { return sf[l * batch_sf_bytes() + sf_offset(row, block, K, kMxSfVector)]; }
};

// The whole tensor (rows x K x L FP32, K-major). rows, L >= 1, K a positive multiple of 32, every value
// finite; throws std::invalid_argument otherwise, naming the argument or the first non-finite value.
Mxfp8Tensor quantize_mxfp8(const float* x, int rows, int K, int L, Mxfp8Element element, Mxfp8ScaleRounding rounding);

// A value times its block's scale, exactly (in double: E5M2 x 2^127 exceeds FP32); NaN for a NaN code
// or scale, +-Inf for E5M2's Inf codes.
double mxfp8_value(uint8_t code, uint8_t scale, Mxfp8Element t);
// Every value of rows x K x L operands (data and blocked scales as in Mxfp8Tensor) decoded so.
std::vector<double> dequantize_mxfp8(const uint8_t* data, const uint8_t* sf, int rows, int K, int L, Mxfp8Element t);

}  // namespace gemm
