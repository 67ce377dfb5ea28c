// GPU checks of common/ itself: the library peer the benchmarks compare against, and the device
// fill the benchmarks feed. Skipped where there is no usable GPU.
#include <gtest/gtest.h>

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
