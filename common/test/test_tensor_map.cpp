// The 1-D tensor map of common/tensor_map.h (plan_bytes_1d), on the CPU: what it asks the driver for,
// and every layout TMA cannot address rejected with the rule it breaks, before any driver call. The
// 3-D plans of the operands are tested where TMA first appears (04_tma_mbarrier/test.cu).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/tensor_map.h"

namespace gemm {
namespace {

const uint8_t* const kBase = reinterpret_cast<const uint8_t*>(uintptr_t(0x10000));

TEST(TensorMapPlan1d, CountsEightByteElements) {
  const TensorMapPlan p = plan_bytes_1d(kBase, 8192, 2048);
  EXPECT_EQ(p.rank, 1u);
  EXPECT_EQ(p.dims[0], 1024u);  // 8192 bytes in elements of 8
  EXPECT_EQ(p.box[0], 256u);    // 2048 bytes: TMA's largest box dimension
  EXPECT_EQ(p.element_bytes, 8u);
  EXPECT_EQ(p.swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  EXPECT_NE(p.describe().find("1-D, 1024 elements of 8 bytes, box 256 elements"), std::string::npos) << p.describe();
  EXPECT_EQ(plan_bytes_1d(kBase, 16, 16).box[0], 2u);  // the smallest copy: one 16-byte granule
}

void expect_rejected(const void* base, uint64_t bytes, uint32_t box, const char* rule) {
  try {
    plan_bytes_1d(base, bytes, box);
    ADD_FAILURE() << "accepted: " << rule;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(rule), std::string::npos) << e.what();
  }
}

TEST(TensorMapPlan1d, RejectsWhatTmaCannotAddress) {
  expect_rejected(nullptr, 8192, 2048, "base pointer is null");
  expect_rejected(kBase + 8, 8192, 2048, "16-byte aligned");
  expect_rejected(kBase, 0, 16, "positive multiple of 16 bytes");
  expect_rejected(kBase, 8200, 16, "positive multiple of 16 bytes");
  expect_rejected(kBase, 8192, 0, "box must be 16..2048 bytes");
  expect_rejected(kBase, 8192, 24, "box must be 16..2048 bytes");
  expect_rejected(kBase, 8192, 2064, "box must be 16..2048 bytes");
  expect_rejected(kBase, 1024, 2048, "larger than the tensor");
  expect_rejected(kBase, (uint64_t(1) << 35) + 16, 2048, "exceeds 2^32");
}

}  // namespace
}  // namespace gemm
