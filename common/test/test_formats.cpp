// E2M1, E4M3 and FP16 conversions against independent brute-force definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "common/formats.h"

namespace gemm {
namespace {

// The E2M1 grid from the PTX ISA's table (PTX ISA 9.1, 5.2.3), written out rather than computed.
const float kE2M1Table[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                              -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// Nearest representable value by exhaustive search; ties go to the even code (mantissa bit 0).
// `decode` maps codes to values, `count` codes are tried.
template <class Decode>
int brute_force_nearest(double x, int count, Decode decode) {
  int best = -1;
  double best_err = INFINITY;
  for (int c = 0; c < count; ++c) {
    const double v = decode(c);
    if (std::isnan(v) || std::signbit(v) != std::signbit(x)) continue;
    const double err = std::fabs(v - x);
    if (err < best_err || (err == best_err && (c & 1) == 0)) {
      best = c;
      best_err = err;
    }
  }
  return best;
}

TEST(E2M1, DecodesEveryCodeAsThePtxTable) {
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(e2m1_to_float(uint8_t(c)), kE2M1Table[c]) << "code " << c;
    EXPECT_EQ(std::signbit(e2m1_to_float(uint8_t(c))), c >= 8) << "code " << c;
  }
}

TEST(E2M1, EveryValueEncodesToItsOwnCode) {
  for (int c = 0; c < 16; ++c) EXPECT_EQ(e2m1_from_float(kE2M1Table[c]), c) << kE2M1Table[c];
}

TEST(E2M1, TiesRoundToEven) {
  const struct {
    float x, want;
  } ties[] = {{0.25f, 0.0f}, {0.75f, 1.0f}, {1.25f, 1.0f}, {1.75f, 2.0f}, {2.5f, 2.0f}, {3.5f, 4.0f}, {5.0f, 4.0f}};
  for (const auto& t : ties) {
    EXPECT_EQ(e2m1_to_float(e2m1_from_float(t.x)), t.want) << t.x;
    EXPECT_EQ(e2m1_to_float(e2m1_from_float(-t.x)), -t.want) << -t.x;
  }
}

TEST(E2M1, SaturatesAndHandlesSpecials) {
  EXPECT_EQ(e2m1_from_float(6.5f), 0x7);
  EXPECT_EQ(e2m1_from_float(1e30f), 0x7);
  EXPECT_EQ(e2m1_from_float(INFINITY), 0x7);
  EXPECT_EQ(e2m1_from_float(-INFINITY), 0xF);
  EXPECT_EQ(e2m1_from_float(-7.0f), 0xF);
  EXPECT_EQ(e2m1_from_float(NAN), 0x7);  // cvt.rn.satfinite: NaN -> +MAX_NORM
  EXPECT_EQ(e2m1_from_float(0.0f), 0x0);
  EXPECT_EQ(e2m1_from_float(-0.0f), 0x8);  // signed zero survives
  EXPECT_EQ(e2m1_from_float(-0.1f), 0x8);  // rounds to -0, not +0
}

TEST(E2M1, MatchesBruteForceOnRandomValues) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> d(-6.0f, 6.0f);
  for (int i = 0; i < 200000; ++i) {
    const float x = d(rng);
    EXPECT_EQ(e2m1_from_float(x), brute_force_nearest(x, 16, [](int c) { return double(kE2M1Table[c]); })) << x;
  }
}

TEST(E2M1, PacksEvenKInTheLowNibble) {
  EXPECT_EQ(pack_e2m1x2(0x2, 0x4), 0x42);  // k = 0 -> 1.0 (code 2), k = 1 -> 2.0 (code 4)
  EXPECT_EQ(e2m1_even(0x42), 0x2);
  EXPECT_EQ(e2m1_odd(0x42), 0x4);
  EXPECT_EQ(pack_e2m1x2(0xF, 0x0), 0x0F);
}

double e4m3_by_definition(int c) {
  // Straight from the format: bias 7, 3 mantissa bits, S.1111.111 is NaN, no infinities.
  const int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
  if (e == 15 && m == 7) return NAN;
  const double mag = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
  return s ? -mag : mag;
}

TEST(E4M3, DecodesEveryCode) {
  for (int c = 0; c < 256; ++c) {
    const double want = e4m3_by_definition(c);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(e4m3_to_float(uint8_t(c)))) << c;
    } else {
      EXPECT_EQ(double(e4m3_to_float(uint8_t(c))), want) << c;
    }
  }
  EXPECT_EQ(e4m3_to_float(0x38), 1.0f);
  EXPECT_EQ(e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(e4m3_to_float(0x08), 0.015625f);       // smallest normal 2^-6
  EXPECT_EQ(e4m3_to_float(0x01), 0.001953125f);    // smallest subnormal 2^-9
  EXPECT_EQ(e4m3_to_float(0x07), 7.0f / 512.0f);   // largest subnormal
  EXPECT_TRUE(std::signbit(e4m3_to_float(0x80)));  // -0
}

// Block scales are unsigned E4M3: bit 7 is ignored, as the tensor cores and cuBLAS ignore it.
TEST(UE4M3, IgnoresBit7) {
  for (int c = 0; c < 128; ++c) {
    const float plain = e4m3_to_float(uint8_t(c));
    if (std::isnan(plain)) {
      EXPECT_TRUE(std::isnan(ue4m3_to_float(uint8_t(c | 0x80)))) << c;
      continue;
    }
    EXPECT_EQ(ue4m3_to_float(uint8_t(c)), plain) << c;
    EXPECT_EQ(ue4m3_to_float(uint8_t(c | 0x80)), plain) << c;
  }
  EXPECT_EQ(ue4m3_to_float(0xB8), 1.0f);
  EXPECT_FALSE(std::signbit(ue4m3_to_float(0x80)));  // +0, not -0
}

TEST(E4M3, EveryFiniteValueEncodesToItsOwnCode) {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F) continue;
    EXPECT_EQ(e4m3_from_float(e4m3_to_float(uint8_t(c))), c) << c;
  }
}

TEST(E4M3, TiesRoundToEvenIncludingSubnormals) {
  EXPECT_EQ(e4m3_from_float(1.0625f), 0x38);                // between 1 and 1.125 -> 1 (even)
  EXPECT_EQ(e4m3_from_float(1.1875f), 0x3A);                // between 1.125 and 1.25 -> 1.25
  EXPECT_EQ(e4m3_from_float(std::ldexp(1.0f, -10)), 0x00);  // half the smallest subnormal -> 0
  EXPECT_EQ(e4m3_from_float(std::ldexp(3.0f, -10)), 0x02);  // 1.5 * 2^-9 -> 2 * 2^-9
  EXPECT_EQ(e4m3_from_float(std::ldexp(15.0f, -10)), 0x08); // 7.5 * 2^-9 -> 2^-6, the first normal
  EXPECT_EQ(e4m3_from_float(432.0f), 0x7E);                 // between 416 and 448 -> 448 (even)
}

TEST(E4M3, SaturatesAndKeepsNaN) {
  EXPECT_EQ(e4m3_from_float(449.0f), 0x7E);
  EXPECT_EQ(e4m3_from_float(464.0f), 0x7E);
  EXPECT_EQ(e4m3_from_float(1e9f), 0x7E);
  EXPECT_EQ(e4m3_from_float(INFINITY), 0x7E);
  EXPECT_EQ(e4m3_from_float(-INFINITY), 0xFE);
  EXPECT_EQ(e4m3_from_float(-500.0f), 0xFE);
  EXPECT_EQ(e4m3_from_float(NAN) & 0x7F, 0x7F);
  EXPECT_EQ(e4m3_from_float(-0.0f), 0x80);
}

TEST(E4M3, MatchesBruteForceOnRandomValues) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exp(-12, 9);
  for (int i = 0; i < 200000; ++i) {
    const float x = std::ldexp(mant(rng), exp(rng));
    if (std::fabs(x) > 448.0f) continue;
    EXPECT_EQ(e4m3_from_float(x), brute_force_nearest(x, 256, e4m3_by_definition)) << x;
  }
}

TEST(Fp16, RoundTripsEveryCode) {
  for (int h = 0; h < 65536; ++h) {
    const double v = half_bits_to_double(uint16_t(h));
    if (std::isnan(v)) continue;
    EXPECT_EQ(half_bits_from_double(v), h) << h;
  }
}

TEST(Fp16, RoundsToNearestEvenAndOverflows) {
  EXPECT_EQ(half_bits_from_double(1.0 + std::ldexp(1.0, -11)), 0x3C00);      // tie -> even (1.0)
  EXPECT_EQ(half_bits_from_double(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);  // tie -> even (1 + 2^-9)
  EXPECT_EQ(half_bits_from_double(1.0 + std::ldexp(1.0, -11) + 1e-12), 0x3C01);
  EXPECT_EQ(half_bits_from_double(65504.0), 0x7BFF);
  EXPECT_EQ(half_bits_from_double(65519.99), 0x7BFF);
  EXPECT_EQ(half_bits_from_double(65520.0), 0x7C00);
  EXPECT_EQ(half_bits_from_double(-1e9), 0xFC00);
  EXPECT_EQ(half_bits_from_double(std::ldexp(1.0, -25)), 0x0000);        // tie between 0 and 2^-24
  EXPECT_EQ(half_bits_from_double(std::ldexp(3.0, -25)), 0x0002);
  EXPECT_EQ(half_bits_from_double(std::ldexp(1.0, -24)), 0x0001);
}

}  // namespace
}  // namespace gemm
