// The CPU references against hand-computed results and against a second, independent formulation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/formats.h"
#include "common/harness/problems.h"
#include "common/reference.h"

namespace gemm {
namespace {

TEST(ReferenceFp32, HandComputed) {
  // A = [1 2 3; 4 5 6], B = [1 0 -1; 2 1 0] (both K-major, K = 3): C = A B^T = [-2 4; -2 13].
  const std::vector<float> A = {1, 2, 3, 4, 5, 6}, B = {1, 0, -1, 2, 1, 0};
  const ReferenceOutput r = reference_gemm(Fp32GemmArgs{2, 2, 3, 1, A.data(), B.data(), nullptr});
  EXPECT_EQ(r.value, (std::vector<double>{-2, 4, -2, 13}));
  EXPECT_EQ(r.abs_sum, (std::vector<double>{4, 4, 10, 13}));
}

// The scale-bit-7 tier: about half its scale bytes have bit 7 set, and the reference gives exactly
// what it gives with bit 7 cleared (an unsigned E4M3 reader), not the sign-flipped products.
TEST(ReferenceNvfp4, IgnoresBit7OfScaleBytes) {
  HostNvfp4Problem p = make_nvfp4_problem(37, 21, 96, 2, Tier::kScaleBit7, 11);
  int with_bit7 = 0, scales = 0;
  for (int l = 0; l < p.L; ++l)
    for (int r = 0; r < p.M; ++r)
      for (int k16 = 0; k16 < p.K / 16; ++k16, ++scales) with_bit7 += p.a.scale(l, r, k16) >> 7;
  EXPECT_GT(with_bit7, scales / 4) << "the tier must set bit 7 in many of the " << scales << " scale bytes";
  EXPECT_LT(with_bit7, scales * 3 / 4) << "and leave it clear in many";
  const ReferenceOutput got = reference_gemm(p.host_args());
  for (auto* sf : {&p.a.sf, &p.b.sf})
    for (auto& s : *sf) s &= 0x7F;
  const ReferenceOutput cleared = reference_gemm(p.host_args());
  EXPECT_EQ(got.value, cleared.value);
  EXPECT_EQ(got.half, cleared.half);
}

TEST(ReferenceFp32, BatchesUseTheirOwnOperands) {
  // L = 2, M = N = K = 1: C[l] = A[l] * B[l].
  const std::vector<float> A = {2, 3}, B = {5, 7};
  const ReferenceOutput r = reference_gemm(Fp32GemmArgs{1, 1, 1, 2, A.data(), B.data(), nullptr});
  EXPECT_EQ(r.value, (std::vector<double>{10, 21}));
}

TEST(ReferenceFp32, ElementwiseAgreesWithWhole) {
  const HostFp32Problem p = make_fp32_problem(7, 9, 33, 2, Tier::kRealistic, 1);
  const ReferenceOutput r = reference_gemm(p.host_args());
  for (int l = 0; l < 2; ++l)
    for (int m = 0; m < 7; ++m)
      for (int n = 0; n < 9; ++n) {
        double abs_sum;
        EXPECT_EQ(reference_at(p.host_args(), l, m, n, &abs_sum), r.value[(l * 7 + m) * 9 + n]);
        EXPECT_EQ(abs_sum, r.abs_sum[(l * 7 + m) * 9 + n]);
      }
}

TEST(ReferenceNvfp4, HandComputed) {
  // M = N = 1, K = 32. A: every value 1.0 (code 2, bytes 0x22); its scales 2 (block 0), 0.5 (block 1).
  // B: every value -1.5 (code 0xB); scales 1, 1. Sum = 16*2*(-1.5) + 16*0.5*(-1.5) = -60; alpha 0.5.
  std::vector<uint8_t> a(16, 0x22), b(16, 0xBB), sfa(512, 0), sfb(512, 0);
  sfa[sf_offset(0, 0, 32)] = e4m3_from_float(2.0f);
  sfa[sf_offset(0, 1, 32)] = e4m3_from_float(0.5f);
  sfb[sf_offset(0, 0, 32)] = sfb[sf_offset(0, 1, 32)] = e4m3_from_float(1.0f);
  const ReferenceOutput r = reference_gemm(Nvfp4GemmArgs{1, 1, 32, 1, a.data(), sfa.data(), b.data(), sfb.data(), 0.5f, nullptr});
  EXPECT_EQ(r.value[0], -30.0);
  EXPECT_EQ(r.abs_sum[0], 30.0);
  EXPECT_EQ(r.half[0], half_bits_from_double(-30.0));
}

TEST(ReferenceNvfp4, AgreesWithDecodingThroughTheTensor) {
  // Second formulation: Nvfp4Tensor::code/scale (its own indexing), summed in a different order.
  const HostNvfp4Problem p = make_nvfp4_problem(37, 21, 96, 2, Tier::kLayout, 4);
  const ReferenceOutput r = reference_gemm(p.host_args());
  for (int l = 0; l < 2; ++l)
    for (int m = 0; m < 37; ++m)
      for (int n = 0; n < 21; ++n) {
        double sum = 0;
        for (int k = p.K - 1; k >= 0; --k) sum += double(p.a.scaled_value(l, m, k)) * p.b.scaled_value(l, n, k);
        const double want = double(p.alpha) * sum, got = r.value[(l * 37 + m) * 21 + n];
        EXPECT_NEAR(got, want, 1e-12 * std::fabs(want)) << l << " " << m << " " << n;
        EXPECT_EQ(r.half[(l * 37 + m) * 21 + n], half_bits_from_double(got));
      }
}

TEST(ReferenceNvfp4, ElementwiseAgreesWithWhole) {
  const HostNvfp4Problem p = make_nvfp4_problem(5, 6, 64, 2, Tier::kRealistic, 2);
  const ReferenceOutput r = reference_gemm(p.host_args());
  for (int l = 0; l < 2; ++l)
    for (int m = 0; m < 5; ++m)
      for (int n = 0; n < 6; ++n) EXPECT_EQ(reference_at(p.host_args(), l, m, n), r.value[(l * 5 + m) * 6 + n]);
}

TEST(ReferenceNvfp4, DequantizeMatchesTheTensorView) {
  const HostNvfp4Problem p = make_nvfp4_problem(130, 3, 96, 2, Tier::kLayout, 8);
  const std::vector<float> d = dequantize_nvfp4(p.a.data.data(), p.a.sf.data(), 130, 96, 2);
  for (int l = 0; l < 2; ++l)
    for (int r = 0; r < 130; ++r)
      for (int k = 0; k < 96; ++k) ASSERT_EQ(d[(size_t(l) * 130 + r) * 96 + k], p.a.scaled_value(l, r, k));
}

TEST(ReferenceNvfp4, QuantizedGemmApproximatesTheFp32Gemm) {
  // What FP4 costs: the NVFP4 GEMM of quantized realistic data against the FP32 GEMM of the
  // unquantized data. Normwise relative error is expected around 0.1-0.2 per operand error budget.
  const HostNvfp4Problem p = make_nvfp4_problem(64, 64, 512, 1, Tier::kRealistic, 6);
  const ReferenceOutput q = reference_gemm(p.host_args());
  const ReferenceOutput f = reference_gemm(Fp32GemmArgs{64, 64, 512, 1, p.a_source.data(), p.b_source.data(), nullptr});
  double e2 = 0, w2 = 0;
  for (size_t i = 0; i < q.value.size(); ++i) {
    e2 += (q.value[i] - f.value[i]) * (q.value[i] - f.value[i]);
    w2 += f.value[i] * f.value[i];
  }
  const double rel = std::sqrt(e2 / w2);
  EXPECT_GT(rel, 0.0);
  EXPECT_LT(rel, 0.25) << "normwise relative error " << rel;
}

}  // namespace
}  // namespace gemm
