// The 1-D tensor map of common/tensor_map.h (plan_bytes_1d), on the CPU: what it asks the driver for,
// and every layout TMA cannot address rejected with the rule it breaks, before any driver call. The
// 3-D plans of the NVFP4 operands are tested where TMA first appears (04_tma_mbarrier/test.cu); their
// MXFP8 forms (one byte per value, 32 values per scale) and the FP32 and BF16 outputs here.
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

// MXFP8: a row of K values is K bytes (8 bits a value), so K need only be a multiple of 16 for TMA
// (the MXFP8 contract asks for 32); a scale column is 32 values, so K = 160 needs 5 columns, padded
// to 8 (two atoms a 128-row block).
TEST(TensorMapPlanMxfp8, OneBytePerValueAndThirtyTwoValuesPerScale) {
  const TensorMapPlan a = plan_packed_operand(kBase, 300, 160, 2, 128, 128, 8);
  EXPECT_EQ(a.dims[0], 160u);
  EXPECT_EQ(a.strides[0], 160u);
  EXPECT_EQ(a.strides[1], 160u * 300u);
  EXPECT_EQ(plan_packed_operand(kBase, 300, 160, 2, 128, 80).dims[0], 80u);  // NVFP4: K/2 bytes
  try {
    plan_packed_operand(kBase, 300, 40, 1, 128, 128, 8);
    ADD_FAILURE() << "a 40-byte row pitch was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row pitch K = 40 bytes must be a multiple of 16 (K a multiple of 16)"),
              std::string::npos) << e.what();
  }
  EXPECT_THROW(plan_packed_operand(kBase, 300, 160, 1, 128, 128, 6), std::invalid_argument);
  // 16-bit values (stage 12's low-rank operands, K = the rank R): 2R bytes a row, so R a multiple of 8
  // for TMA (the SVDQuant contract asks for 16); a 128-byte box row is 64 values.
  const TensorMapPlan lr = plan_packed_operand(kBase, 300, 48, 2, 128, 128, 16);
  EXPECT_EQ(lr.dims[0], 96u);
  EXPECT_EQ(lr.strides[1], 96u * 300u);
  try {
    plan_packed_operand(kBase, 300, 20, 1, 128, 128, 16);
    ADD_FAILURE() << "a 40-byte row pitch was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row pitch 2K = 40 bytes must be a multiple of 16 (K a multiple of 8)"),
              std::string::npos) << e.what();
  }
  const TensorMapPlan sf = plan_sf_lines(kBase, 300, 160, 2, 32, 32);
  EXPECT_EQ(sf.dims[1], uint64_t(3 * 2 * 512 / 16));  // 3 row blocks x 2 atoms of 32 lines
  EXPECT_EQ(sf.strides[1], uint64_t(3 * 2 * 512));
  EXPECT_EQ(plan_sf_lines(kBase, 300, 160, 2, 32).dims[1], uint64_t(3 * 3 * 512 / 16));  // NVFP4: 10 columns -> 12
  EXPECT_THROW(plan_sf_lines(kBase, 300, 160, 2, 32, 24), std::invalid_argument);
}

TEST(TensorMapPlanOutput, Fp32AndBf16RowsOn16ByteBoundaries) {
  const TensorMapPlan f = plan_output(kBase, 100, 12, 3, 32, 16, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(f.element_bytes, 4u);
  EXPECT_EQ(f.strides[0], 48u);
  EXPECT_EQ(f.box[0], 16u);
  EXPECT_EQ(f.swizzle, CU_TENSOR_MAP_SWIZZLE_64B);
  const TensorMapPlan b = plan_output(kBase, 100, 24, 1, 32, 32, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(b.element_bytes, 2u);
  EXPECT_EQ(b.dtype, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  try {
    plan_output(kBase, 100, 6, 1, 32, 16, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
    ADD_FAILURE() << "24-byte FP32 rows were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row pitch 4N = 24 bytes must be a multiple of 16 (N a multiple of 4)"),
              std::string::npos) << e.what();
  }
  EXPECT_THROW(plan_output(kBase, 100, 8, 1, 32, 32, CU_TENSOR_MAP_DATA_TYPE_FLOAT32), std::invalid_argument);  // 128 B
  EXPECT_THROW(plan_output(kBase, 100, 8, 1, 32, 8, CU_TENSOR_MAP_DATA_TYPE_UINT8), std::invalid_argument);
  EXPECT_THROW(plan_output(kBase + 8, 100, 8, 1, 32, 16, CU_TENSOR_MAP_DATA_TYPE_FLOAT32), std::invalid_argument);
}

}  // namespace
}  // namespace gemm
