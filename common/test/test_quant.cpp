// The CPU NVFP4 quantizer: hand-computed blocks, special tensors, layout of its output, error bound.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/harness/problems.h"
#include "common/nvfp4_quant.h"

namespace gemm {
namespace {

TEST(Nvfp4Quant, GlobalScale) {
  EXPECT_EQ(nvfp4_global_scale(2688.0f), 1.0f);     // 6 * 448 / 2688
  EXPECT_EQ(nvfp4_global_scale(1.0f), 2688.0f);
  EXPECT_EQ(nvfp4_global_scale(12.0f), 224.0f);
  EXPECT_EQ(nvfp4_global_scale(0.0f), 1.0f);        // all-zero tensor
  EXPECT_EQ(nvfp4_global_scale(1e-45f), 1.0f);      // 2688 / denormal overflows: not finite -> 1
}

TEST(Nvfp4Quant, BlockOfEveryE2M1Value) {
  // With gs = 1 and block amax 6 the scale is E4M3(1) and each value is its own code.
  const float x[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  uint8_t s, q[8];
  nvfp4_quantize_block(x, 1.0f, &s, q);
  EXPECT_EQ(s, 0x38);
  const uint8_t want[8] = {0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(q[i], want[i]) << "byte " << i;
}

TEST(Nvfp4Quant, HandComputedBlock) {
  // Tensor amax 12 -> gs = 2688 / 12 = 224. Block amax 12 -> s = E4M3(12 / 6 * 224 = 448) = 0x7E,
  // enc = 224 / 448 = 0.5, so each value is E2M1(x / 2):
  //   12 -> 6 (7)   1 -> 0.5 (1)   0.3 -> 0.15 -> 0   5 -> 2.5 -> tie -> 2 (4)
  //   -7 -> -3.5 -> tie -> -4 (E)  2.9 -> 1.45 -> 1.5 (3)   -0.6 -> -0.3 -> -0.5 (9)   8 -> 4 (6)
  //   the other 8 are 0.
  float x[16] = {12, 1, 0.3f, 5, -7, 2.9f, -0.6f, 8};
  uint8_t s, q[8];
  nvfp4_quantize_block(x, nvfp4_global_scale(12.0f), &s, q);
  EXPECT_EQ(s, 0x7E);
  EXPECT_EQ(q[0], 0x17);
  EXPECT_EQ(q[1], 0x40);
  EXPECT_EQ(q[2], 0x3E);
  EXPECT_EQ(q[3], 0x69);
  for (int i = 4; i < 8; ++i) EXPECT_EQ(q[i], 0x00);
}

TEST(Nvfp4Quant, AllZeroTensor) {
  std::vector<float> x(3 * 64, 0.0f);
  const Nvfp4Tensor t = quantize_nvfp4(x.data(), 3, 64);
  EXPECT_EQ(t.global_scale, 1.0f);
  for (uint8_t b : t.data) EXPECT_EQ(b, 0);
  for (uint8_t b : t.sf) EXPECT_EQ(b, 0);
}

TEST(Nvfp4Quant, ScalesLandAtTheirBlockedOffsetsAndPaddingIsZero) {
  // Rows not a multiple of 128 and K/16 not a multiple of 4: padding exists in both directions.
  const int rows = 130, K = 80, L = 2;
  std::vector<float> x(size_t(rows) * K * L);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(0.5f, 1.0f);
  for (int l = 0; l < L; ++l)
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < K; ++k)  // each block gets its own amax: (1 + r + 7 k16 + 3 l) / 64
        x[(size_t(l) * rows + r) * K + k] = u(rng) * (1 + r + 7 * (k / 16) + 3 * l) / 64.0f;
  const Nvfp4Tensor t = quantize_nvfp4(x.data(), rows, K, L);
  std::vector<bool> used(t.sf.size(), false);
  for (int l = 0; l < L; ++l)
    for (int r = 0; r < rows; ++r)
      for (int k16 = 0; k16 < K / 16; ++k16) {
        float amax = 0;
        for (int i = 0; i < 16; ++i) amax = std::max(amax, std::fabs(x[(size_t(l) * rows + r) * K + k16 * 16 + i]));
        const size_t at = l * sf_batch_bytes(rows, K) + sf_offset(r, k16, K);
        EXPECT_EQ(t.sf[at], e4m3_from_float(std::min(amax / 6.0f * t.global_scale, 448.0f)));
        used[at] = true;
      }
  for (size_t i = 0; i < t.sf.size(); ++i)
    if (!used[i]) {
      EXPECT_EQ(t.sf[i], 0) << "padding byte " << i;
    }
}

TEST(Nvfp4Quant, OneGlobalScaleForAllBatches) {
  std::vector<float> x(2 * 2 * 32, 1.0f);
  x[2 * 32 + 5] = 100.0f;  // in batch 1
  const Nvfp4Tensor t = quantize_nvfp4(x.data(), 2, 32, 2);
  EXPECT_EQ(t.global_scale, nvfp4_global_scale(100.0f));
}

TEST(Nvfp4Quant, OutlierBlockDoesNotHurtItsNeighbours) {
  // One block holds a 1000x outlier; the block scale confines the damage to that block.
  std::mt19937_64 rng(5);
  std::vector<float> x = realistic_values(4 * 64, rng);
  x[1 * 64 + 20] = 5000.0f;  // row 1, block 1
  const Nvfp4Tensor t = quantize_nvfp4(x.data(), 4, 64);
  const float dec = 1.0f / t.global_scale;
  for (int r = 0; r < 4; ++r)
    for (int b = 0; b < 4; ++b) {
      float amax = 0, err = 0;
      for (int i = 0; i < 16; ++i) {
        const int k = b * 16 + i;
        amax = std::max(amax, std::fabs(x[r * 64 + k]));
        err = std::max(err, std::fabs(x[r * 64 + k] - t.scaled_value(0, r, k) * dec));
      }
      // Largest E2M1 gap is 2 (between 4 and 6), i.e. 1/3 of the block's range: error <= amax/6
      // plus the scale's own rounding.
      EXPECT_LE(err, amax / 6.0f * 1.07f + 1e-6f) << "row " << r << " block " << b;
    }
}

TEST(Nvfp4Quant, PerElementErrorBoundOnRandomData) {
  // In units of the block's encode factor enc: the E2M1 rounding error is at most 1 (half of the
  // largest gap) while |x enc| <= 6, and |x enc| - 6 above it (saturation, when the E4M3 scale
  // rounded down); for a normal E4M3 scale |x enc| <= 6 (1 + 2^-4).
  std::mt19937_64 rng(9);
  const int rows = 64, K = 256;
  const std::vector<float> x = realistic_values(rows * K, rng);
  const Nvfp4Tensor t = quantize_nvfp4(x.data(), rows, K);
  int checked = 0;
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < K; ++k) {
      const float s = e4m3_to_float(t.scale(0, r, k / 16));
      if (s < 0.015625f) continue;  // subnormal scales: the bound below does not apply
      const float enc = t.global_scale / s;
      const float scaled = std::fabs(x[r * K + k] * enc);
      ASSERT_LE(scaled, 6.0f * (1.0f + 1.0f / 16.0f) * 1.0001f);
      const float err = std::fabs(x[r * K + k] * enc - e2m1_to_float(t.code(0, r, k)));
      ASSERT_LE(err, std::max(1.0f, scaled - 6.0f) * 1.0001f) << "row " << r << " k " << k;
      ++checked;
    }
  EXPECT_GT(checked, rows * K * 9 / 10);
}

TEST(Nvfp4Quant, NibbleOrderIsEvenKLow) {
  std::vector<float> x(32, 0.0f);
  x[0] = 1.0f;  // code 2
  x[1] = 6.0f;  // code 7 (and the tensor amax, so gs = 448 and block scale = 448 -> enc = 1)
  const Nvfp4Tensor t = quantize_nvfp4(x.data(), 1, 32);
  EXPECT_EQ(t.data[0], 0x72);
}

TEST(Nvfp4Quant, RejectsBadShapes) {
  std::vector<float> x(64);
  EXPECT_THROW(quantize_nvfp4(x.data(), 1, 24), std::invalid_argument);
  EXPECT_THROW(quantize_nvfp4(x.data(), 0, 32), std::invalid_argument);
}

}  // namespace
}  // namespace gemm
