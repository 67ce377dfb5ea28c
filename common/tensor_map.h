// TMA tensor maps for the packed NVFP4 operands, built on the host.
//
// A tensor map (CUtensorMap, 128 bytes) describes a tensor in global memory and the box one TMA
// copy moves into shared memory: dimensions, byte strides, box size, swizzle, out-of-bounds fill.
// It is created by the driver function cuTensorMapEncodeTiled, which this project reaches through
// the CUDA runtime's driver-entry-point API (cudaGetDriverEntryPointByVersion) instead of linking
// the driver library, so every program still starts on a machine without a GPU driver.
//
// Packed E2M1 operands are mapped as bytes (CU_TENSOR_MAP_DATA_TYPE_UINT8): a row of K values is
// K/2 bytes, and TMA copies bytes as they are, which is exactly the packed layout (the packed
// 4-bit TMA type is not needed, and not documented for Hopper).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

namespace gemm {

// Everything cuTensorMapEncodeTiled needs, computed and checked before any driver call (so the
// checks run, and are tested, without a GPU).
struct TensorMapPlan {
  const void* base = nullptr;
  uint32_t rank = 3;          // 1 for a 1-D copy (cp.async.bulk.tensor.1d): dims[0] and box[0] only
  uint64_t dims[3] = {};      // innermost first: {bytes per row, rows, batches}
  uint64_t strides[2] = {};   // byte strides of dims 1 and 2 (dim 0 is contiguous)
  uint32_t box[3] = {};       // the box one copy moves, innermost first
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  CUtensorMapDataType dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8;  // dims and box count elements of this type
  uint32_t element_bytes = 1;
  std::string describe() const;
};

// The map of a packed K-major operand: rows x K values x L batches, boxes of box_rows rows x
// box_bytes bytes (box_bytes <= 128 with the 128-byte swizzle). bits_per_value: 4 (E2M1, two values
// a byte, the default), 8 (E4M3 and E5M2 of MXFP8, one a byte) or 16 (FP16 and BF16 operands of
// kind::f16: the low-rank branch of stage 12, K counting its rank). Throws std::invalid_argument for
// what TMA cannot address: a base that is not 16-byte aligned, a row pitch (K * bits / 8 bytes) that
// is not a multiple of 16, dimensions or strides beyond TMA's limits.
TensorMapPlan plan_packed_operand(const uint8_t* base, int rows, int K, int L, int box_rows, int box_bytes,
                                  int bits_per_value = 4);

// The map of a blocked scale-factor array (common/sf_layout.h) seen as lines of 16 bytes: {16 bytes,
// sf_batch_bytes(rows, K) / 16 lines, L batches}, boxes of box_lines lines, no swizzle, so a box
// lands in shared memory exactly as it lies in global memory. A 512-byte atom is 32 lines; the
// scales of a 128-row block for 256 values of k are 4 consecutive atoms, 128 lines. (Plain bulk copies
// move these bytes as well, but only a tensor copy can complete on the other CTA of a pair's
// barrier: cp.async.bulk has no .cta_group.) values_per_scale: 16 (NVFP4, the default) or 32 (MXFP8,
// whose atom covers 128 values of k). Throws std::invalid_argument like plan_packed_operand.
TensorMapPlan plan_sf_lines(const uint8_t* base, int rows, int K, int L, int box_lines, int values_per_scale = 16);

// The map of the FP16 output C (M x N x L, row-major) for TMA stores: {N, M, L} elements, boxes of
// box_rows rows x box_cols columns, the 64-byte swizzle (a box row of 32 halves is one 64-byte
// swizzle span). TMA clips a box at the tensor's edges: nothing outside C is written. Throws
// std::invalid_argument where TMA cannot address C: a base that is not 16-byte aligned, or a row
// pitch (2N bytes) that is not a multiple of 16 (N % 8 != 0).
TensorMapPlan plan_fp16_output(const void* base, int M, int N, int L, int box_rows, int box_cols);

// The same for an output of another element type: FP16, BF16 (2 bytes) or FP32 (4 bytes), named by
// its TMA data type. A box row is at most 64 bytes (the 64-byte swizzle span): 32 halves, 16 floats.
// Throws std::invalid_argument where a row of N elements is not a multiple of 16 bytes, or for a base
// that is not 16-byte aligned.
TensorMapPlan plan_output(const void* base, int M, int N, int L, int box_rows, int box_cols, CUtensorMapDataType dtype);

// The map of `bytes` contiguous bytes for 1-D tensor copies (rank 1), boxes of box_bytes bytes, counted in
// 8-byte elements: TMA's box is at most 256 elements, and 8-byte ones let one copy move 2048 bytes, the
// scales of a 128-row block for 256 values of k. No swizzle: a box lands as it lies in global memory.
// It exists for the CTA pair's 1-D copy (ptx::tma_load_1d_cta_group2): the contiguous cp.async.bulk
// has no .cta_group, so bytes that must complete on the leader's barrier travel as a 1-D tensor copy.
// Throws std::invalid_argument for a base that is not 16-byte aligned, sizes that are not multiples of
// 16 bytes, or a box beyond 2048 bytes or beyond the tensor.
TensorMapPlan plan_bytes_1d(const void* base, uint64_t bytes, uint32_t box_bytes);

// Encodes the plan through the driver. Throws std::runtime_error if the driver refuses.
CUtensorMap encode_tensor_map(const TensorMapPlan& plan);

}  // namespace gemm
