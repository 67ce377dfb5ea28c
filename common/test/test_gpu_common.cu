// GPU checks of common/ itself: the library peer the benchmarks compare against, and the device
// fill the benchmarks feed. Skipped where there is no usable GPU.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <set>

#include "common/device_buffer.h"
#include "common/device_fill.h"
#include "common/harness/compare.h"
#include "common/harness/gemm_tests.h"
#include "common/peers.h"
#include "common/reference.h"

namespace gemm {
namespace {

class GpuCublasPeer : public ::testing::TestWithParam<testing::GemmCase> {};

TEST_P(GpuCublasPeer, MatchesCpuReference) {
  GEMM_REQUIRE_GPU();
  testing::run_case(cublas_sgemm, GetParam(), {128, 128, 32});
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuCublasPeer, ::testing::ValuesIn(testing::fp32_cases({128, 128, 32})),
                         testing::case_name);

TEST(GpuCublasPeerArgs, RejectsInvalidArguments) {
  GEMM_REQUIRE_GPU();
  testing::expect_rejects_invalid_arguments_gpu(cublas_sgemm);
}

TEST(GpuDequantCublasPeer, MatchesCpuReferenceWithinBf16Rounding) {
  GEMM_REQUIRE_GPU();
  for (auto [M, N, K, L] : {std::array<int, 4>{1, 1, 32, 1}, {67, 131, 544, 2}, {256, 128, 1024, 1}}) {
    const HostNvfp4Problem p = make_nvfp4_problem(M, N, K, L, Tier::kRealistic, seed_for("bf16_peer"));
    DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
    DeviceBuffer<__nv_bfloat16> C(size_t(M) * N * L);
    C.fill_bytes(0xFF);
    Bf16PeerWorkspace ws;
    dequantize_cublas_bf16({M, N, K, L, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha, nullptr}, C.get(), ws, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto got = C.download();
    const ReferenceOutput ref = reference_gemm(p.host_args());
    int64_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double g = double(__bfloat162float(got[i])), w = ref.value[i];
      // FP32 accumulation (gamma_K) plus BF16 output rounding (2^-8 relative).
      const double tol = K * std::ldexp(1.0, -23) * ref.abs_sum[i] + std::ldexp(std::fabs(w), -8) + 1e-30;
      bad += !(std::fabs(g - w) <= tol);
    }
    EXPECT_EQ(bad, 0) << M << "x" << N << "x" << K << "x" << L;
  }
}

TEST(GpuDeviceFill, IsDeterministicInRangeAndNotConstant) {
  GEMM_REQUIRE_GPU();
  DeviceBuffer<float> a(100000), b(100000);
  fill_uniform(a.get(), a.size(), 5, -2.0f, 3.0f);
  fill_uniform(b.get(), b.size(), 5, -2.0f, 3.0f);
  DeviceBuffer<uint8_t> bytes(4096);
  fill_bytes(bytes.get(), bytes.size(), 9, 0x30, 0x40);
  const auto ha = a.download(), hb = b.download();
  EXPECT_EQ(ha, hb);
  std::set<float> distinct(ha.begin(), ha.end());
  EXPECT_GT(distinct.size(), 90000u);
  for (float x : ha) ASSERT_TRUE(x >= -2.0f && x < 3.0f) << x;
  std::set<uint8_t> codes;
  for (uint8_t x : bytes.download()) {
    ASSERT_TRUE(x >= 0x30 && x <= 0x40) << int(x);
    codes.insert(x);
  }
  EXPECT_EQ(codes.size(), 17u);
}

TEST(GpuDeviceInfo, ReportsAPlausibleGpu) {
  GEMM_REQUIRE_GPU();
  const GpuInfo& g = gpu_info();
  EXPECT_GT(g.sm_count, 0);
  EXPECT_GT(g.sm_clock_khz, 100000);
  EXPECT_GT(g.l2_bytes, 1 << 20);
  EXPECT_GT(g.fp32_peak_tflops(), 1.0);
  EXPECT_TRUE(g.cc_major == 9 || g.cc_major == 10) << g.compute_capability();
}

}  // namespace
}  // namespace gemm
