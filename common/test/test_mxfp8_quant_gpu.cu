// The GPU MXFP8 quantizer against the CPU one, bit for bit: data bytes and every scale byte (padding
// included) for both conventions, both element formats, FP32 and BF16 input, tails, L > 1; NaN and Inf
// blocks written as NaN blocks; its argument rules. The GPU cases skip without a usable GPU.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/device_buffer.h"
#include "common/harness/gemm_tests.h"
#include "common/harness/problems.h"
#include "common/mxfp8_quant.h"
#include "common/mxfp8_quant_gpu.h"

namespace gemm {
namespace {

constexpr uint8_t kPoison = 0xA5;  // written over the outputs first: every byte must be overwritten

struct GpuResult {
  std::vector<uint8_t> data, sf;
};

template <class T>
GpuResult run_gpu(const std::vector<T>& x, int rows, int K, int L, Mxfp8Element t, Mxfp8ScaleRounding r) {
  DeviceBuffer<T> dx(x);
  DeviceBuffer<uint8_t> data(size_t(rows) * K * L), sf(size_t(sf_batch_bytes(rows, K, kMxSfVector) * L));
  data.fill_bytes(kPoison);
  sf.fill_bytes(kPoison);
  quantize_mxfp8_gpu(dx.get(), rows, K, L, t, r, {data.get(), sf.get()}, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return {data.download(), sf.download()};
}

TEST(GpuMxfp8Quant, MatchesTheCpuQuantizerBitForBit) {
  GEMM_REQUIRE_GPU();
  for (auto [rows, K, L] : {std::array<int, 3>{1, 32, 1}, {131, 160, 2}, {257, 544, 1}, {7, 1024, 3}})
    for (Mxfp8Element t : {Mxfp8Element::kE4M3, Mxfp8Element::kE5M2})
      for (Mxfp8ScaleRounding r : {Mxfp8ScaleRounding::kFloor, Mxfp8ScaleRounding::kRceil}) {
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(K) + "x" + std::to_string(L) + " " + element_name(t) + " " + rounding_name(r));
        std::mt19937_64 rng(seed_for("gpu_mxfp8_" + std::to_string(rows)));
        std::vector<float> x = realistic_values(int64_t(rows) * K * L, rng);
        // Blocks at very different scales, subnormals included, so every exponent path runs.
        for (size_t i = 0; i < x.size(); ++i) x[i] = std::ldexp(x[i], int(i / 32 % 61) * 4 - 140);
        const Mxfp8Tensor want = quantize_mxfp8(x.data(), rows, K, L, t, r);
        const GpuResult got = run_gpu(x, rows, K, L, t, r);
        EXPECT_EQ(got.data, want.data);
        EXPECT_EQ(got.sf, want.sf);
        // BF16 input: the CPU quantizer of the same values widened to FP32.
        std::vector<__nv_bfloat16> xb(x.size());
        std::vector<float> widened(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
          xb[i] = __float2bfloat16_rn(x[i]);
          widened[i] = __bfloat162float(xb[i]);
        }
        const Mxfp8Tensor want_b = quantize_mxfp8(widened.data(), rows, K, L, t, r);
        const GpuResult got_b = run_gpu(xb, rows, K, L, t, r);
        EXPECT_EQ(got_b.data, want_b.data);
        EXPECT_EQ(got_b.sf, want_b.sf);
      }
}

TEST(GpuMxfp8Quant, NonFiniteBlocksBecomeNaNBlocks) {
  GEMM_REQUIRE_GPU();
  const int rows = 3, K = 96;
  std::vector<float> x(size_t(rows) * K, 1.25f);
  x[1 * K + 40] = NAN;        // row 1, block 1
  x[2 * K + 95] = -INFINITY;  // row 2, block 2
  const GpuResult got = run_gpu(x, rows, K, 1, Mxfp8Element::kE4M3, Mxfp8ScaleRounding::kRceil);
  for (int r = 0; r < rows; ++r)
    for (int b = 0; b < K / 32; ++b) {
      const bool bad = (r == 1 && b == 1) || (r == 2 && b == 2);
      EXPECT_EQ(got.sf[sf_offset(r, b, K, kMxSfVector)], bad ? kUe8m0NaN : 127 - 8) << r << " " << b;
      for (int i = 0; i < 32; ++i) EXPECT_EQ(got.data[size_t(r) * K + b * 32 + i], bad ? kMxfp8NaN : 0x7A) << r << " " << b;
    }
}

TEST(GpuMxfp8Quant, RejectsBadArgumentsBeforeLaunching) {
  // No GPU needed: every rule is checked on the host first (the pointers are never dereferenced).
  const float* x = reinterpret_cast<const float*>(0x10000);
  const Mxfp8DeviceTensor out{reinterpret_cast<uint8_t*>(0x20000), reinterpret_cast<uint8_t*>(0x30000)};
  const auto E4 = Mxfp8Element::kE4M3;
  const auto F = Mxfp8ScaleRounding::kFloor;
  auto message = [&](const float* p, int rows, int K, int L, Mxfp8Element t, Mxfp8ScaleRounding r, Mxfp8DeviceTensor o) {
    try {
      quantize_mxfp8_gpu(p, rows, K, L, t, r, o, nullptr);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message(x, 0, 64, 1, E4, F, out).find("rows must be >= 1"), std::string::npos);
  EXPECT_NE(message(x, 1, 48, 1, E4, F, out).find("K must be a positive multiple of 32 (got 48)"), std::string::npos);
  EXPECT_NE(message(x, 1, 64, 0, E4, F, out).find("L must be in [1, 65535]"), std::string::npos);
  EXPECT_NE(message(x, 1, 64, 1, Mxfp8Element(5), F, out).find("element must be E4M3 or E5M2"), std::string::npos);
  EXPECT_NE(message(x, 1, 64, 1, E4, Mxfp8ScaleRounding(2), out).find("rounding must be FLOOR or RCEIL"), std::string::npos);
  EXPECT_NE(message(nullptr, 1, 64, 1, E4, F, out).find("must not be null"), std::string::npos);
  EXPECT_NE(message(x + 1, 1, 64, 1, E4, F, out).find("x must be 16-byte aligned"), std::string::npos);
  EXPECT_NE(message(x, 1, 64, 1, E4, F, {out.data + 8, out.sf}).find("data must be 16-byte"), std::string::npos);
}

}  // namespace
}  // namespace gemm
