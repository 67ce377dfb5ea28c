// The MXFP8 format on the CPU: the E5M2 encoder, both scale conventions and the element rounding
// against independent formulations (frexp and a search over all 256 codes, where the quantizer reads
// bits and rounds with rint), the edge cases (zeros, subnormals, powers of two, saturation, NaN and
// Inf), and where the quantizer puts each scale in the blocked layout.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/harness/problems.h"
#include "common/mxfp8_quant.h"

namespace gemm {
namespace {

constexpr Mxfp8Element kBoth[] = {Mxfp8Element::kE4M3, Mxfp8Element::kE5M2};
constexpr Mxfp8ScaleRounding kRoundings[] = {Mxfp8ScaleRounding::kFloor, Mxfp8ScaleRounding::kRceil};

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// ---- independent formulations --------------------------------------------------------------------

// The scale exponent by definition, in double with frexp: FLOOR e = floor(log2 amax) - emax; RCEIL
// the smallest e with amax <= max_elem * 2^e, found by search; both clamped to [-127, 127].
int expected_exponent(double amax, Mxfp8Element t, Mxfp8ScaleRounding r) {
  const int emax = t == Mxfp8Element::kE5M2 ? 15 : 8;
  const double max_elem = t == Mxfp8Element::kE5M2 ? 57344.0 : 448.0;
  if (amax == 0.0) return -127;
  int exp2;
  std::frexp(amax, &exp2);  // amax = m 2^exp2, m in [0.5, 1): floor(log2 amax) = exp2 - 1
  int e = exp2 - 1 - emax;
  if (r == Mxfp8ScaleRounding::kRceil) {
    e -= 2;
    while (amax > std::ldexp(max_elem, e)) ++e;
  }
  return std::max(-127, std::min(127, e));
}

// Nearest-even rounding by search: the finite code nearest to y, ties to the code with an even
// mantissa (its lowest bit 0), values beyond the largest finite one to it (saturation).
uint8_t expected_code(double y, Mxfp8Element t) {
  const double max_elem = t == Mxfp8Element::kE5M2 ? 57344.0 : 448.0;
  const uint8_t sign = std::signbit(y) ? 0x80 : 0x00;
  const double a = std::min(std::fabs(y), max_elem);
  int best = -1;
  double best_err = 0;
  for (int c = 0; c < 0x80; ++c) {
    const double v = mx_decode(uint8_t(c), t);
    if (!std::isfinite(v)) continue;
    const double err = std::fabs(v - a);
    if (best < 0 || err < best_err || (err == best_err && (c & 1) == 0)) {
      best = c;
      best_err = err;
    }
  }
  return uint8_t(sign | best);
}

// ---- E5M2 encoder --------------------------------------------------------------------------------

TEST(Mxfp8Format, E5M2EncoderRoundsEveryFp16ValueLikeDroppingItsLowByteToNearestEven) {
  // An E5M2 value is the upper byte of the FP16 of the same value, so rounding an FP16 value to E5M2
  // is rounding its bit pattern at bit 8, ties to even, saturating at 0x7B: integer arithmetic only.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if (((h >> 10) & 0x1F) == 0x1F) continue;  // Inf and NaN: below
    const float x = fp16_bits_to_float(uint16_t(h));
    const uint32_t mag = h & 0x7FFF;
    uint32_t want = (mag + 0x7F + ((mag >> 8) & 1)) >> 8;
    if (want > 0x7B) want = 0x7B;
    want |= (h & 0x8000) >> 8;
    ASSERT_EQ(e5m2_from_float(x), want) << "fp16 0x" << std::hex << h << " = " << x;
  }
  EXPECT_EQ(e5m2_from_float(INFINITY), 0x7B);
  EXPECT_EQ(e5m2_from_float(-INFINITY), 0xFB);
  EXPECT_EQ(e5m2_from_float(1e30f), 0x7B);
  EXPECT_EQ(e5m2_from_float(NAN), 0x7F);
  // Every finite code round-trips.
  for (int c = 0; c < 256; ++c)
    if (std::isfinite(e5m2_to_float(uint8_t(c)))) {
      EXPECT_EQ(e5m2_from_float(e5m2_to_float(uint8_t(c))), c) << c;
    }
}

// ---- the scale conventions -----------------------------------------------------------------------

TEST(Mxfp8Scale, BothConventionsMatchTheirDefinitionAtEdges) {
  std::vector<float> amaxes = {0.0f, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                               std::numeric_limits<float>::max(), 448.0f, 449.0f, 480.0f, 57344.0f, 57345.0f};
  for (int k = -149; k <= 127; ++k) {  // every power of two, the formats' maxima at every scale, neighbours
    for (double base : {1.0, 1.75, 1.5, 1.875}) {
      const double v = std::ldexp(base, k);
      if (v > std::numeric_limits<float>::max() || v < std::numeric_limits<float>::denorm_min()) continue;
      const float f = float(v);
      amaxes.push_back(f);
      amaxes.push_back(std::nextafter(f, 0.0f));
      amaxes.push_back(std::nextafter(f, INFINITY));
    }
  }
  for (float amax : amaxes) {
    if (!std::isfinite(amax)) continue;
    for (Mxfp8Element t : kBoth)
      for (Mxfp8ScaleRounding r : kRoundings)
        ASSERT_EQ(int(mxfp8_scale_code(amax, t, r)) - 127, expected_exponent(amax, t, r))
            << "amax " << amax << " " << element_name(t) << " " << rounding_name(r);
  }
}

TEST(Mxfp8Scale, BothConventionsMatchTheirDefinitionOnRandomBitPatterns) {
  std::mt19937_64 rng(seed_for("mxfp8_scale_bits"));
  for (int i = 0; i < 2000000; ++i) {
    const float amax = from_bits(uint32_t(rng()) & 0x7FFFFFFFu);
    if (!std::isfinite(amax)) continue;
    for (Mxfp8Element t : kBoth)
      for (Mxfp8ScaleRounding r : kRoundings)
        ASSERT_EQ(int(mxfp8_scale_code(amax, t, r)) - 127, expected_exponent(amax, t, r))
            << "amax " << amax << " " << element_name(t) << " " << rounding_name(r);
  }
}

TEST(Mxfp8Scale, WorkedValues) {
  const auto F = Mxfp8ScaleRounding::kFloor, R = Mxfp8ScaleRounding::kRceil;
  const auto E4 = Mxfp8Element::kE4M3, E5 = Mxfp8Element::kE5M2;
  // 448 = 1.75 * 2^8: both put it on 448 itself (code 127, scale 1).
  EXPECT_EQ(mxfp8_scale_code(448.0f, E4, F), 127);
  EXPECT_EQ(mxfp8_scale_code(448.0f, E4, R), 127);
  // 480 = 1.875 * 2^8: FLOOR keeps scale 1 (480 saturates to 448); RCEIL takes scale 2.
  EXPECT_EQ(mxfp8_scale_code(480.0f, E4, F), 127);
  EXPECT_EQ(mxfp8_scale_code(480.0f, E4, R), 128);
  // 256 = 2^8 and 1 = 2^0: powers of two have significand 1, the conventions agree.
  EXPECT_EQ(mxfp8_scale_code(256.0f, E4, F), 127);
  EXPECT_EQ(mxfp8_scale_code(256.0f, E4, R), 127);
  EXPECT_EQ(mxfp8_scale_code(1.0f, E4, F), 119);  // 2^-8: 1 -> 256
  EXPECT_EQ(mxfp8_scale_code(1.0f, E5, F), 112);  // 2^-15: 1 -> 32768
  // 1.8 * 2^-3: FLOOR 2^(-3-8), RCEIL one more.
  EXPECT_EQ(mxfp8_scale_code(0.225f, E4, F), 116);
  EXPECT_EQ(mxfp8_scale_code(0.225f, E4, R), 117);
  // Zero and the smallest values clamp to 2^-127 (code 0); the largest float stays far below 2^127.
  EXPECT_EQ(mxfp8_scale_code(0.0f, E4, F), 0);
  EXPECT_EQ(mxfp8_scale_code(0.0f, E4, R), 0);
  EXPECT_EQ(mxfp8_scale_code(1e-40f, E4, R), 0);
  EXPECT_EQ(mxfp8_scale_code(std::numeric_limits<float>::max(), E4, F), 127 + 127 - 8);
  EXPECT_EQ(mxfp8_scale_code(std::numeric_limits<float>::max(), E4, R), 127 + 128 - 8);
}

// ---- blocks --------------------------------------------------------------------------------------

// A block checked against the definitions: its scale exponent and each code by search.
void expect_block_matches_definition(const float* x, Mxfp8Element t, Mxfp8ScaleRounding r, const std::string& what) {
  uint8_t s, q[32];
  ASSERT_TRUE(mxfp8_quantize_block(x, t, r, &s, q)) << what;
  double amax = 0;
  for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(double(x[i])));
  const int e = expected_exponent(amax, t, r);
  ASSERT_EQ(int(s) - 127, e) << what;
  for (int i = 0; i < 32; ++i)
    ASSERT_EQ(q[i], expected_code(std::ldexp(double(x[i]), -e), t)) << what << " value " << i << " = " << x[i];
}

TEST(Mxfp8Block, RandomBlocksMatchTheDefinition) {
  std::mt19937_64 rng(seed_for("mxfp8_blocks"));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-140, 120);
  for (int b = 0; b < 4000; ++b) {
    float x[32];
    const float spread = std::ldexp(1.0f, exponent(rng));  // blocks at every scale, subnormals included
    for (float& v : x) v = normal(rng) * spread;
    for (Mxfp8Element t : kBoth)
      for (Mxfp8ScaleRounding r : kRoundings)
        expect_block_matches_definition(x, t, r, "block " + std::to_string(b) + " " + element_name(t) + " " + rounding_name(r));
  }
}

TEST(Mxfp8Block, SaturatesUnderFloorAndNeverUnderRceil) {
  // amax 480: FLOOR scale 1, 480 -> 448 (0x7E) saturated; RCEIL scale 2, 480 -> 240 (0x77) exact.
  float x[32] = {480.0f, -3.0f, 0.5f};
  uint8_t s, q[32];
  mxfp8_quantize_block(x, Mxfp8Element::kE4M3, Mxfp8ScaleRounding::kFloor, &s, q);
  EXPECT_EQ(s, 127);
  EXPECT_EQ(q[0], 0x7E);
  EXPECT_EQ(q[1], 0xC4) << "-3 = -1.5 * 2^1";
  mxfp8_quantize_block(x, Mxfp8Element::kE4M3, Mxfp8ScaleRounding::kRceil, &s, q);
  EXPECT_EQ(s, 128);
  EXPECT_EQ(q[0], 0x77);
  EXPECT_EQ(e4m3_to_float(q[0]) * 2.0f, 480.0f);
  // Over random blocks: RCEIL's largest element never exceeds max_elem before rounding.
  std::mt19937_64 rng(seed_for("mxfp8_rceil_no_saturation"));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int b = 0; b < 20000; ++b) {
    float y[32];
    for (float& v : y) v = u(rng) * 1000.0f;
    for (Mxfp8Element t : kBoth) {
      mxfp8_quantize_block(y, t, Mxfp8ScaleRounding::kRceil, &s, q);
      for (int i = 0; i < 32; ++i)
        ASSERT_LE(std::fabs(std::ldexp(double(y[i]), 127 - s)), double(mx_max(t))) << "block " << b;
    }
  }
}

TEST(Mxfp8Block, ZerosSubnormalsAndSigns) {
  float zeros[32] = {};
  zeros[5] = -0.0f;
  uint8_t s, q[32];
  for (Mxfp8Element t : kBoth)
    for (Mxfp8ScaleRounding r : kRoundings) {
      ASSERT_TRUE(mxfp8_quantize_block(zeros, t, r, &s, q));
      EXPECT_EQ(s, 0);  // 2^-127
      for (int i = 0; i < 32; ++i) EXPECT_EQ(q[i], i == 5 ? 0x80 : 0x00) << i;  // -0 keeps its sign
    }
  // A block of FP32 subnormals: scale 2^-127 and the values multiplied by 2^127 are E4M3 normals.
  float tiny[32] = {};
  tiny[0] = std::ldexp(1.0f, -133);          // -> 2^-6, E4M3's smallest normal: 0x08
  tiny[1] = -std::ldexp(1.5f, -134);         // -> -1.5 * 2^-7: E4M3 subnormal 6 * 2^-9: 0x86
  tiny[2] = std::numeric_limits<float>::denorm_min();  // -> 2^-22: 0
  ASSERT_TRUE(mxfp8_quantize_block(tiny, Mxfp8Element::kE4M3, Mxfp8ScaleRounding::kFloor, &s, q));
  EXPECT_EQ(s, 0);
  EXPECT_EQ(q[0], 0x08);
  EXPECT_EQ(q[1], 0x86);
  EXPECT_EQ(q[2], 0x00);
  expect_block_matches_definition(tiny, Mxfp8Element::kE4M3, Mxfp8ScaleRounding::kRceil, "subnormal block");
  expect_block_matches_definition(tiny, Mxfp8Element::kE5M2, Mxfp8ScaleRounding::kFloor, "subnormal block E5M2");
}

TEST(Mxfp8Block, NonFiniteBlocksBecomeNaNBlocks) {
  for (float bad : {NAN, INFINITY, -INFINITY}) {
    float x[32];
    for (int i = 0; i < 32; ++i) x[i] = float(i) - 7.5f;
    x[17] = bad;
    uint8_t s = 0, q[32] = {};
    for (Mxfp8Element t : kBoth) {
      EXPECT_FALSE(mxfp8_quantize_block(x, t, Mxfp8ScaleRounding::kRceil, &s, q));
      EXPECT_EQ(s, kUe8m0NaN);
      for (int i = 0; i < 32; ++i) {
        EXPECT_EQ(q[i], kMxfp8NaN);
        EXPECT_TRUE(std::isnan(mxfp8_value(q[i], s, t)));
      }
    }
  }
}

// ---- tensors ---------------------------------------------------------------------------------------

TEST(Mxfp8Quant, RejectsNonFiniteInputsNamingWhereAndRefusesBadArguments) {
  std::vector<float> x(size_t(3) * 64 * 2, 1.0f);
  x[size_t(1) * 3 * 64 + 2 * 64 + 40] = NAN;  // batch 1, row 2, k 40
  try {
    quantize_mxfp8(x.data(), 3, 64, 2, Mxfp8Element::kE4M3, Mxfp8ScaleRounding::kFloor);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("x must be finite"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("batch 1, row 2, k 40"), std::string::npos) << e.what();
  }
  x[size_t(1) * 3 * 64 + 2 * 64 + 40] = -INFINITY;
  EXPECT_THROW(quantize_mxfp8(x.data(), 3, 64, 2, Mxfp8Element::kE5M2, Mxfp8ScaleRounding::kRceil), std::invalid_argument);
  const auto E4 = Mxfp8Element::kE4M3;
  const auto F = Mxfp8ScaleRounding::kFloor;
  auto message = [&](int rows, int K, int L, Mxfp8Element t, Mxfp8ScaleRounding r) -> std::string {
    try {
      quantize_mxfp8(x.data(), rows, K, L, t, r);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message(0, 64, 1, E4, F).find("rows must be >= 1"), std::string::npos);
  EXPECT_NE(message(1, 48, 1, E4, F).find("K must be a positive multiple of 32 (got 48)"), std::string::npos);
  EXPECT_NE(message(1, 0, 1, E4, F).find("K must be"), std::string::npos);
  EXPECT_NE(message(1, 64, 0, E4, F).find("L must be >= 1"), std::string::npos);
  EXPECT_NE(message(1, 64, 1, Mxfp8Element(7), F).find("element must be E4M3 or E5M2"), std::string::npos);
  EXPECT_NE(message(1, 64, 1, E4, Mxfp8ScaleRounding(9)).find("rounding must be FLOOR or RCEIL"), std::string::npos);
}

// Every block of a tensor gets its own amax, so every scale byte differs from its neighbours in the
// layout: a scale written at a wrong byte of its 4-byte column, or into a wrong 128-row atom, fails.
TEST(Mxfp8Quant, ScalesLandAtTheirBlockedOffsetsAndPaddingIsZero) {
  const int rows = 131, K = 160, L = 2;  // 5 scale columns: padding in both directions, two row atoms
  std::vector<float> x(size_t(rows) * K * L);
  std::mt19937_64 rng(seed_for("mxfp8_layout"));
  std::uniform_real_distribution<float> u(0.25f, 1.0f);
  for (int l = 0; l < L; ++l)
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < K; ++k)  // block (l, r, b) has amax near 2^(r % 64 + 2 b + l - 40)
        x[(size_t(l) * rows + r) * K + k] = u(rng) * std::ldexp(1.0f, r % 64 + 2 * (k / 32) + l - 40);
  for (Mxfp8ScaleRounding rounding : kRoundings) {
    const Mxfp8Tensor t = quantize_mxfp8(x.data(), rows, K, L, Mxfp8Element::kE4M3, rounding);
    ASSERT_EQ(t.sf.size(), size_t(256 * 8 * L));  // rows -> 256, 5 columns -> 8
    std::vector<bool> used(t.sf.size(), false);
    for (int l = 0; l < L; ++l)
      for (int r = 0; r < rows; ++r)
        for (int b = 0; b < K / 32; ++b) {
          double amax = 0;
          for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(double(x[(size_t(l) * rows + r) * K + b * 32 + i])));
          // Offsets written out from the layout's definition (docs/mxfp8.md), not with sf_offset().
          const size_t atom = size_t(r / 128) * 2 + b / 4;  // 2 atoms of 4 columns per 128 rows
          const size_t at = size_t(l) * 256 * 8 + atom * 512 + (r % 32) * 16 + (r % 128) / 32 * 4 + b % 4;
          ASSERT_EQ(int(t.sf[at]) - 127, expected_exponent(amax, Mxfp8Element::kE4M3, rounding)) << "l " << l << " r " << r << " b " << b;
          used[at] = true;
        }
    for (size_t i = 0; i < t.sf.size(); ++i)
      if (!used[i]) {
        ASSERT_EQ(t.sf[i], 0) << "padding byte " << i;
      }
    // The values are K-major, one byte each, and decode to within half a unit of the input.
    const std::vector<double> v = dequantize_mxfp8(t.data.data(), t.sf.data(), rows, K, L, Mxfp8Element::kE4M3);
    for (size_t i = 0; i < x.size(); ++i) {
      const int e = int(t.sf[size_t(i / (size_t(rows) * K)) * 256 * 8 +
                             sf_offset(int64_t(i / K % rows), int64_t(i % K / 32), K, kMxSfVector)]) - 127;
      // E4M3 spacing is at most 2^-3 of a value's binade, 2^-9 in the subnormals, times 2^e.
      // FLOOR may also saturate: the part of |x| above 448 * 2^e is lost.
      const double tol = std::max(std::fabs(double(x[i])) * 0.0625, std::ldexp(1.0, e - 10)) +
                         std::max(0.0, std::fabs(double(x[i])) - std::ldexp(448.0, e));
      ASSERT_LE(std::fabs(v[i] - double(x[i])), tol) << "element " << i;
    }
  }
}

TEST(Mxfp8Quant, ConventionsDifferOnRealisticData) {
  // Both conventions on the same data: RCEIL never saturates, FLOOR does on some blocks, and they
  // agree wherever the block's amax has a significand of at most 1.75.
  std::mt19937_64 rng(seed_for("mxfp8_conventions"));
  const int rows = 64, K = 1024;
  const std::vector<float> x = realistic_values(int64_t(rows) * K, rng);
  const Mxfp8Tensor f = quantize_mxfp8(x.data(), rows, K, 1, Mxfp8Element::kE4M3, Mxfp8ScaleRounding::kFloor);
  const Mxfp8Tensor c = quantize_mxfp8(x.data(), rows, K, 1, Mxfp8Element::kE4M3, Mxfp8ScaleRounding::kRceil);
  int differ = 0, saturated = 0;
  for (int r = 0; r < rows; ++r)
    for (int b = 0; b < K / 32; ++b) {
      float amax = 0;
      for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[size_t(r) * K + b * 32 + i]));
      uint32_t bits;
      std::memcpy(&bits, &amax, 4);
      const bool above = (bits & 0x7FFFFF) > 0x600000;
      EXPECT_EQ(int(c.scale(0, r, b)) - int(f.scale(0, r, b)), above ? 1 : 0) << r << " " << b;
      differ += above;
      for (int i = 0; i < 32; ++i) saturated += (f.code(0, r, b * 32 + i) & 0x7F) == 0x7E && above;
    }
  EXPECT_GT(differ, 0);
  EXPECT_GT(saturated, 0);
}

}  // namespace
}  // namespace gemm
