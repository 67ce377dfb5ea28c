// The MXFP8 quantizer on the GPU (mxfp8_quant_gpu.h says what it does; mxfp8_quant.h the arithmetic).
#include "common/mxfp8_quant_gpu.h"

#include <stdexcept>
#include <string>

#include "common/cuda_check.h"
#include "common/sf_layout.h"

namespace gemm {
namespace {

constexpr int kThreads = 256;
constexpr int kFloatsPerLoad = 4;  // one float4 (FP32) or one uint2 (BF16)
constexpr int kLoadsPerBlock = kMxSfVector / kFloatsPerLoad;
constexpr int kBytesPerStore = 16;

__device__ __forceinline__ void load4(const float* p, float* v) {
  const float4 f = __ldg(reinterpret_cast<const float4*>(p));
  v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
}
__device__ __forceinline__ void load4(const __nv_bfloat16* p, float* v) {
  const uint2 u = __ldg(reinterpret_cast<const uint2*>(p));
  const __nv_bfloat162 a = *reinterpret_cast<const __nv_bfloat162*>(&u.x), b = *reinterpret_cast<const __nv_bfloat162*>(&u.y);
  v[0] = __low2float(a), v[1] = __high2float(a), v[2] = __low2float(b), v[3] = __high2float(b);
}

// Thread t quantizes the block of column `col` of scale word `g` of row `row` of batch blockIdx.y.
template <class T>
__global__ void __launch_bounds__(kThreads)
quantize_kernel(const T* __restrict__ x, int rows, int K, Mxfp8Element element, Mxfp8ScaleRounding rounding,
                uint8_t* __restrict__ data, uint8_t* __restrict__ sf) {
  // 32-bit index arithmetic within one batch (the launcher checks it fits).
  const uint32_t words_per_row = uint32_t(sf_padded_cols(K, kMxSfVector) / kSfTileCols);
  const uint32_t t = blockIdx.x * kThreads + threadIdx.x;
  const uint32_t word = t / kSfTileCols, col = t % kSfTileCols;
  const uint32_t g = word % words_per_row, row = word / words_per_row;
  const int64_t l = blockIdx.y;
  const int64_t k = (int64_t(g) * kSfTileCols + col) * kMxSfVector;
  const bool in_grid = row < sf_padded_rows(rows);  // the last CUDA block may overhang the last word
  const bool valid = in_grid && row < uint32_t(rows) && k < K;

  uint8_t s = 0;
  if (valid) {
    float v[kMxSfVector];
    const T* src = x + (l * rows + row) * K + k;
#pragma unroll
    for (int i = 0; i < kLoadsPerBlock; ++i) load4(src + i * kFloatsPerLoad, v + i * kFloatsPerLoad);
    alignas(kBytesPerStore) uint8_t q[kMxSfVector];
    mxfp8_quantize_block(v, element, rounding, &s, q);
    uint4* dst = reinterpret_cast<uint4*>(data + (l * rows + row) * K + k);
    dst[0] = *reinterpret_cast<const uint4*>(q);
    dst[1] = *reinterpret_cast<const uint4*>(q + kBytesPerStore);
  }
  // The 4 scales of this word sit in 4 consecutive lanes: gather them into the first one and write
  // the blocked-layout word (padding included) with one 32-bit store.
  const int first = (threadIdx.x % 32) & ~(kSfTileCols - 1);
  uint32_t word_bits = 0;
#pragma unroll
  for (int b = 0; b < kSfTileCols; ++b) word_bits |= __shfl_sync(0xFFFFFFFFu, uint32_t(s), first + b) << (8 * b);
  if (in_grid && col == 0)
    *reinterpret_cast<uint32_t*>(sf + l * sf_batch_bytes(rows, K, kMxSfVector) + sf_offset(row, g * kSfTileCols, K, kMxSfVector)) =
        word_bits;
}

template <class T>
void quantize(const T* x, int rows, int K, int L, Mxfp8Element element, Mxfp8ScaleRounding rounding,
              const Mxfp8DeviceTensor& out, cudaStream_t stream) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("quantize_mxfp8_gpu: " + what); };
  if (rows < 1) fail("rows must be >= 1 (got " + std::to_string(rows) + ")");
  if (L < 1 || L > 65535) fail("L must be in [1, 65535] (got " + std::to_string(L) + ")");
  if (K < kMxSfVector || K % kMxSfVector != 0) fail("K must be a positive multiple of 32 (got " + std::to_string(K) + ")");
  if (element != Mxfp8Element::kE4M3 && element != Mxfp8Element::kE5M2)
    fail("element must be E4M3 or E5M2 (got " + std::to_string(int(element)) + ")");
  if (rounding != Mxfp8ScaleRounding::kFloor && rounding != Mxfp8ScaleRounding::kRceil)
    fail("rounding must be FLOOR or RCEIL (got " + std::to_string(int(rounding)) + ")");
  if (!x || !out.data || !out.sf) fail("x, data and sf must not be null");
  const size_t x_align = kFloatsPerLoad * sizeof(T);
  if (reinterpret_cast<uintptr_t>(x) % x_align) fail("x must be " + std::to_string(x_align) + "-byte aligned");
  if (reinterpret_cast<uintptr_t>(out.data) % kBytesPerStore || reinterpret_cast<uintptr_t>(out.sf) % 4)
    fail("data must be 16-byte and sf 4-byte aligned");
  const int64_t threads = sf_batch_bytes(rows, K, kMxSfVector);  // one per scale byte, padding included
  if (threads > (int64_t(1) << 32) - kThreads) fail("rows * K of one batch must stay below 2^37 (32-bit indexing)");
  const int64_t blocks = (threads + kThreads - 1) / kThreads;
  quantize_kernel<<<dim3(unsigned(blocks), unsigned(L)), kThreads, 0, stream>>>(x, rows, K, element, rounding, out.data,
                                                                               out.sf);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void quantize_mxfp8_gpu(const float* x, int rows, int K, int L, Mxfp8Element element, Mxfp8ScaleRounding rounding,
                        const Mxfp8DeviceTensor& out, cudaStream_t stream) {
  quantize(x, rows, K, L, element, rounding, out, stream);
}

void quantize_mxfp8_gpu(const __nv_bfloat16* x, int rows, int K, int L, Mxfp8Element element,
                        Mxfp8ScaleRounding rounding, const Mxfp8DeviceTensor& out, cudaStream_t stream) {
  quantize(x, rows, K, L, element, rounding, out, stream);
}

}  // namespace gemm
