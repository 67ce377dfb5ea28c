#include "common/nvfp4_quant_gpu.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "common/cuda_check.h"
#include "common/formats.h"
#include "common/nvfp4_device.cuh"
#include "common/sf_layout.h"

namespace gemm {
namespace {

constexpr int kThreads = 256;
constexpr int kValuesPerThread = 4;  // one 16- (FP32) or 8-byte (BF16) load

struct Four {
  float v[4];
};

__device__ __forceinline__ Four load4(const float* p) {
  const float4 f = __ldg(reinterpret_cast<const float4*>(p));
  return {{f.x, f.y, f.z, f.w}};
}
__device__ __forceinline__ Four load4(const __nv_bfloat16* p) {
  const uint2 u = __ldg(reinterpret_cast<const uint2*>(p));
  const __nv_bfloat162 a = *reinterpret_cast<const __nv_bfloat162*>(&u.x), b = *reinterpret_cast<const __nv_bfloat162*>(&u.y);
  return {{__low2float(a), __high2float(a), __low2float(b), __high2float(b)}};
}

// Pass 1: amax(|x|) into *amax_bits (zeroed by the caller).
template <class T>
__global__ void __launch_bounds__(kThreads) amax_kernel(const T* __restrict__ x, int64_t n4, unsigned* amax_bits) {
  float m = 0.0f;
  for (int64_t i = blockIdx.x * int64_t(kThreads) + threadIdx.x; i < n4; i += int64_t(gridDim.x) * kThreads) {
    const Four f = load4(x + 4 * i);
    for (float v : f.v) m = fmaxf(m, fabsf(v));
  }
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
  __shared__ float warp_max[kThreads / 32];
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (float w : warp_max) m = fmaxf(m, w);
    atomicMax(amax_bits, __float_as_uint(m));  // non-negative floats order like their bit patterns
  }
}

// Pass 2. Thread t quantizes one 16-value block: block `blk` of scale word `g` of row `row`.
template <class T>
__global__ void __launch_bounds__(kThreads)
quantize_kernel(const T* __restrict__ x, int rows, int K, int L, uint8_t* __restrict__ data, uint8_t* __restrict__ sf,
                float* scales) {
  // 32-bit index arithmetic within one batch (the launcher checks it fits); blockIdx.y is the batch.
  const uint32_t words_per_row = uint32_t(sf_padded_cols(K) / kSfTileCols);
  const uint32_t t = blockIdx.x * kThreads + threadIdx.x;
  const uint32_t word = t / kSfTileCols, blk = t % kSfTileCols;
  const uint32_t g = word % words_per_row, row = word / words_per_row;
  const int64_t l = blockIdx.y;
  const int64_t k = (int64_t(g) * kSfTileCols + blk) * kSfVector;
  const bool in_grid = row < sf_padded_rows(rows);  // the last CUDA block may overhang the last word
  const bool valid = in_grid && row < uint32_t(rows) && k < K;

  // gs exactly as the CPU computes it: (6 * 448) / amax, 1 where amax is 0 or gs is not finite.
  const float amax = scales[0];
  float gs = (kE2M1Max * kE4M3Max) / amax;
  if (amax == 0.0f || !isfinite(gs)) gs = 1.0f;
  if (t == 0 && l == 0) scales[1] = gs;

  Four v[kSfVector / kValuesPerThread] = {};
  float block_amax = 0.0f;
  if (valid) {
    const T* src = x + (l * rows + row) * K + k;
#pragma unroll
    for (int i = 0; i < kSfVector / kValuesPerThread; ++i) v[i] = load4(src + i * kValuesPerThread);
#pragma unroll
    for (int i = 0; i < kSfVector / kValuesPerThread; ++i)
      for (float f : v[i].v) block_amax = fmaxf(block_amax, fabsf(f));
  }
  const uint8_t s = valid ? e4m3_from_float_rn(fminf(block_amax / kE2M1Max * gs, kE4M3Max)) : 0;
  if (valid) {
    const float enc = gs / fmaxf(ue4m3_to_float(s), 1e-12f);
    uint32_t packed[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const Four& a = v[2 * i];
      const Four& b = v[2 * i + 1];
      packed[i] = uint32_t(e2m1x2_from_floats(a.v[0] * enc, a.v[1] * enc)) |
                  uint32_t(e2m1x2_from_floats(a.v[2] * enc, a.v[3] * enc)) << 8 |
                  uint32_t(e2m1x2_from_floats(b.v[0] * enc, b.v[1] * enc)) << 16 |
                  uint32_t(e2m1x2_from_floats(b.v[2] * enc, b.v[3] * enc)) << 24;
    }
    *reinterpret_cast<uint2*>(data + ((l * rows + row) * K + k) / 2) = make_uint2(packed[0], packed[1]);
  }

  // The 4 block scales of this word sit in 4 consecutive lanes: gather them into the first one
  // and write the blocked-layout word (padding included) with one 32-bit store.
  const int first = (threadIdx.x % 32) & ~(kSfTileCols - 1);
  uint32_t word_bits = 0;
#pragma unroll
  for (int b = 0; b < kSfTileCols; ++b) word_bits |= __shfl_sync(0xFFFFFFFFu, uint32_t(s), first + b) << (8 * b);
  if (in_grid && blk == 0)
    *reinterpret_cast<uint32_t*>(sf + l * sf_batch_bytes(rows, K) + sf_offset(row, g * kSfTileCols, K)) = word_bits;
}

template <class T>
void check(const T* x, int rows, int K, int L, const Nvfp4DeviceTensor& out, size_t x_align) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("quantize_nvfp4_gpu: " + what); };
  if (rows < 1 || L < 1 || L > 65535) fail("rows and L must be >= 1 (L <= 65535)");
  if (K < kSfVector || K % kSfVector != 0) fail("K must be a positive multiple of 16 (got " + std::to_string(K) + ")");
  if (!x || !out.data || !out.sf || !out.scales) fail("null pointer");
  if (sf_padded_rows(rows) * sf_padded_cols(K) > (int64_t(1) << 32) - kThreads * kSfTileCols)
    fail("rows * K of one batch must stay below 2^36 (32-bit indexing)");
  if (reinterpret_cast<uintptr_t>(x) % x_align) fail("x must be " + std::to_string(x_align) + "-byte aligned");
  if (reinterpret_cast<uintptr_t>(out.data) % 2 || reinterpret_cast<uintptr_t>(out.sf) % 4)
    fail("data must be 2-byte and sf 4-byte aligned");
}

template <class T>
void launch_quantize(const T* x, int rows, int K, int L, const Nvfp4DeviceTensor& out, cudaStream_t stream) {
  const int64_t words = sf_padded_rows(rows) * (sf_padded_cols(K) / kSfTileCols);  // per batch
  const int64_t blocks = (words * kSfTileCols + kThreads - 1) / kThreads;  // one thread per 16-value block
  quantize_kernel<<<dim3(unsigned(blocks), unsigned(L)), kThreads, 0, stream>>>(x, rows, K, L, out.data, out.sf,
                                                                               out.scales);
  CUDA_CHECK_LAUNCH();
}

template <class T>
void quantize_both_passes(const T* x, int rows, int K, int L, const Nvfp4DeviceTensor& out, cudaStream_t stream) {
  check(x, rows, K, L, out, kValuesPerThread * sizeof(T));  // each thread loads 4 values at once
  CUDA_CHECK(cudaMemsetAsync(out.scales, 0, sizeof(float), stream));
  const int64_t n4 = int64_t(rows) * K * L / 4;
  int sms = 0, dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  // Pass 1 is a grid-stride loop: 8 blocks per SM fill the GPU, and fewer blocks mean fewer atomics.
  const int64_t blocks = std::min<int64_t>((n4 + kThreads - 1) / kThreads, int64_t(sms) * 8);
  amax_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(x, n4, reinterpret_cast<unsigned*>(out.scales));
  CUDA_CHECK_LAUNCH();
  launch_quantize(x, rows, K, L, out, stream);
}

}  // namespace

void quantize_nvfp4_gpu(const float* x, int rows, int K, int L, const Nvfp4DeviceTensor& out, cudaStream_t stream) {
  quantize_both_passes(x, rows, K, L, out, stream);
}

void quantize_nvfp4_gpu(const __nv_bfloat16* x, int rows, int K, int L, const Nvfp4DeviceTensor& out,
                        cudaStream_t stream) {
  quantize_both_passes(x, rows, K, L, out, stream);
}

void quantize_nvfp4_gpu_given_amax(const float* x, int rows, int K, int L, const Nvfp4DeviceTensor& out,
                                   cudaStream_t stream) {
  check(x, rows, K, L, out, 16);
  launch_quantize(x, rows, K, L, out, stream);
}

}  // namespace gemm
