#include "common/tensor_map.h"

#include "common/sf_layout.h"

#include <cuda_runtime.h>

#include <sstream>
#include <stdexcept>

namespace gemm {
namespace {

[[noreturn]] void reject(const std::string& what) { throw std::invalid_argument("tensor map: " + what); }

// Limits of cuTensorMapEncodeTiled (CUDA driver API reference).
constexpr uint64_t kMaxDim = uint64_t(1) << 32;      // every dimension <= 2^32
constexpr uint64_t kMaxStride = uint64_t(1) << 40;   // every stride < 2^40, a multiple of 16
constexpr uint32_t kMaxBox = 256;                    // every box dimension <= 256
constexpr uint32_t kWordBytes = 8;                   // plan_bytes_1d's element: the widest TMA type
constexpr uint32_t kCopyGranule = 16;                // bytes: TMA's alignment of bases, strides and box rows

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encode_fn() {
  static EncodeTiled fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status{};
    const cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                                             &status);
    if (err != cudaSuccess || status != cudaDriverEntryPointSuccess || !p)
      throw std::runtime_error(std::string("cuTensorMapEncodeTiled is not available from the driver: ") +
                               cudaGetErrorString(err));
    return reinterpret_cast<EncodeTiled>(p);
  }();
  return fn;
}

}  // namespace

TensorMapPlan plan_packed_operand(const uint8_t* base, int rows, int K, int L, int box_rows, int box_bytes,
                                  int bits_per_value) {
  TensorMapPlan p;
  if (!base) reject("base pointer is null");
  if (reinterpret_cast<uintptr_t>(base) % 16) reject("base must be 16-byte aligned");
  if (bits_per_value != 4 && bits_per_value != 8 && bits_per_value != 16) reject("values must be 4, 8 or 16 bits");
  if (rows < 1 || K < 1 || L < 1) reject("rows, K and L must be positive");
  if (bits_per_value == 4 && K % 2) reject("K must be even (two values per byte)");
  const uint64_t pitch = uint64_t(K) * uint64_t(bits_per_value) / 8;
  if (pitch % 16)
    reject(std::string("row pitch ") + (bits_per_value == 4 ? "K/2" : bits_per_value == 8 ? "K" : "2K") + " = " +
           std::to_string(pitch) + " bytes must be a multiple of 16 (K a multiple of " +
           std::to_string(128 / bits_per_value) + ")");
  if (box_rows < 1 || box_rows > int(kMaxBox) || box_bytes < 16 || box_bytes % 16)
    reject("box must be 1..256 rows of a multiple of 16 bytes");
  if (box_bytes > 128) reject("with the 128-byte swizzle a box row is at most 128 bytes");
  p.base = base;
  p.dims[0] = pitch;
  p.dims[1] = uint64_t(rows);
  p.dims[2] = uint64_t(L);
  p.strides[0] = pitch;
  p.strides[1] = pitch * uint64_t(rows);
  p.box[0] = uint32_t(box_bytes);
  p.box[1] = uint32_t(box_rows);
  p.box[2] = 1;
  for (uint64_t d : p.dims)
    if (d > kMaxDim) reject("a dimension exceeds 2^32");
  for (uint64_t s : p.strides)
    if (s >= kMaxStride) reject("a stride reaches 2^40 bytes");
  return p;
}

TensorMapPlan plan_sf_lines(const uint8_t* base, int rows, int K, int L, int box_lines, int values_per_scale) {
  TensorMapPlan p;
  if (!base) reject("base pointer is null");
  if (reinterpret_cast<uintptr_t>(base) % 16) reject("base must be 16-byte aligned");
  if (rows < 1 || K < 1 || L < 1) reject("rows, K and L must be positive");
  if (box_lines < 1 || box_lines > int(kMaxBox)) reject("box must be 1..256 lines");
  if (values_per_scale != kSfVector && values_per_scale != kMxSfVector) reject("values per scale must be 16 or 32");
  const uint64_t batch_bytes = uint64_t(sf_batch_bytes(rows, K, values_per_scale));  // a multiple of 512
  p.base = base;
  p.dims[0] = 16;
  p.dims[1] = batch_bytes / 16;
  p.dims[2] = uint64_t(L);
  p.strides[0] = 16;
  p.strides[1] = batch_bytes;
  p.box[0] = 16;
  p.box[1] = uint32_t(box_lines);
  p.box[2] = 1;
  p.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  for (uint64_t d : p.dims)
    if (d > kMaxDim) reject("a dimension exceeds 2^32");
  for (uint64_t s : p.strides)
    if (s >= kMaxStride) reject("a stride reaches 2^40 bytes");
  return p;
}

TensorMapPlan plan_fp16_output(const void* base, int M, int N, int L, int box_rows, int box_cols) {
  return plan_output(base, M, N, L, box_rows, box_cols, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
}

TensorMapPlan plan_output(const void* base, int M, int N, int L, int box_rows, int box_cols, CUtensorMapDataType dtype) {
  TensorMapPlan p;
  const bool two = dtype == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 || dtype == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  if (!two && dtype != CU_TENSOR_MAP_DATA_TYPE_FLOAT32) reject("the output must be FP16, BF16 or FP32");
  const int e = two ? 2 : 4;  // bytes per element
  const char* name = dtype == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 ? "halves" : two ? "BF16 values" : "floats";
  if (!base) reject("base pointer is null");
  if (reinterpret_cast<uintptr_t>(base) % 16) reject("base must be 16-byte aligned");
  if (M < 1 || N < 1 || L < 1) reject("M, N and L must be positive");
  const uint64_t pitch = uint64_t(N) * uint64_t(e);
  if (pitch % 16)
    reject("row pitch " + std::to_string(e) + "N = " + std::to_string(pitch) + " bytes must be a multiple of 16 (N a multiple of " +
           std::to_string(16 / e) + ")");
  if (box_rows < 1 || box_rows > int(kMaxBox) || box_cols * e < 16 || box_cols * e > 64 || box_cols * e % 16)
    reject("box must be 1..256 rows of " + std::to_string(16 / e) + ".." + std::to_string(64 / e) + " " + name +
           " (16..64 bytes, the 64-byte swizzle span)");
  p.base = base;
  p.dims[0] = uint64_t(N);
  p.dims[1] = uint64_t(M);
  p.dims[2] = uint64_t(L);
  p.strides[0] = pitch;
  p.strides[1] = pitch * uint64_t(M);
  p.box[0] = uint32_t(box_cols);
  p.box[1] = uint32_t(box_rows);
  p.box[2] = 1;
  p.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
  p.dtype = dtype;
  p.element_bytes = uint32_t(e);
  for (uint64_t d : p.dims)
    if (d > kMaxDim) reject("a dimension exceeds 2^32");
  for (uint64_t s : p.strides)
    if (s >= kMaxStride) reject("a stride reaches 2^40 bytes");
  return p;
}

TensorMapPlan plan_bytes_1d(const void* base, uint64_t bytes, uint32_t box_bytes) {
  TensorMapPlan p;
  if (!base) reject("base pointer is null");
  if (reinterpret_cast<uintptr_t>(base) % kCopyGranule) reject("base must be 16-byte aligned");
  if (bytes == 0 || bytes % kCopyGranule) reject("the tensor must be a positive multiple of 16 bytes");
  if (box_bytes == 0 || box_bytes % kCopyGranule || box_bytes > kMaxBox * kWordBytes)
    reject("box must be 16..2048 bytes, a multiple of 16 (at most 256 elements of 8 bytes)");
  if (box_bytes > bytes) reject("the box is larger than the tensor");
  if (bytes / kWordBytes > kMaxDim) reject("a dimension exceeds 2^32");
  p.base = base;
  p.rank = 1;
  p.dims[0] = bytes / kWordBytes;
  p.dims[1] = p.dims[2] = 1;
  p.box[0] = box_bytes / kWordBytes;
  p.box[1] = p.box[2] = 1;
  p.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  p.dtype = CU_TENSOR_MAP_DATA_TYPE_UINT64;
  p.element_bytes = kWordBytes;
  return p;
}

std::string TensorMapPlan::describe() const {
  std::ostringstream o;
  if (rank == 1) {
    o << "1-D, " << dims[0] << " elements of " << element_bytes << " bytes, box " << box[0]
      << " elements, no swizzle, out-of-bounds elements filled with zeros";
    return o.str();
  }
  const char* unit = element_bytes == 1 ? " bytes" : " halves";
  o << (dtype == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 ? "fp16" : "uint8") << ", dims {" << dims[0] << unit << ", "
    << dims[1] << " rows, " << dims[2] << " batches}, strides {" << strides[0] << ", " << strides[1]
    << "} bytes, box {" << box[0] << unit << ", " << box[1] << " rows, " << box[2] << "}, swizzle "
    << (swizzle == CU_TENSOR_MAP_SWIZZLE_128B  ? "128B"
        : swizzle == CU_TENSOR_MAP_SWIZZLE_64B ? "64B"
        : swizzle == CU_TENSOR_MAP_SWIZZLE_NONE ? "none"
                                                : "other")
    << (dtype == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 ? ", stores clipped at the edges"
                                                 : ", out-of-bounds elements filled with zeros");
  return o.str();
}

CUtensorMap encode_tensor_map(const TensorMapPlan& p) {
  CUtensorMap map;
  const cuuint64_t dims[3] = {p.dims[0], p.dims[1], p.dims[2]};
  const cuuint64_t strides[2] = {p.strides[0], p.strides[1]};
  const cuuint32_t box[3] = {p.box[0], p.box[1], p.box[2]};
  const cuuint32_t element_strides[3] = {1, 1, 1};  // every element of the box, no striding
  // L2 promotion 256B: fetch whole 256-byte L2 lines; boxes span 128-byte rows of consecutive rows.
  const CUresult r = encode_fn()(&map, p.dtype, p.rank, const_cast<void*>(p.base), dims, strides, box,
                                 element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, p.swizzle,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ") for " + p.describe());
  return map;
}

}  // namespace gemm
