#include "common/device_fill.h"

#include "common/cuda_check.h"

namespace gemm {
namespace {

// splitmix64: a strong 64-bit mix, so neighbouring indices give unrelated values.
__device__ __forceinline__ uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void fill_uniform_kernel(float* p, size_t n, uint64_t seed, float lo, float hi) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float u = float(mix(seed ^ mix(i)) >> 40) * 0x1p-24f;  // 24 random bits -> [0, 1)
    p[i] = lo + (hi - lo) * u;
  }
}

__global__ void fill_bytes_kernel(uint8_t* p, size_t n, uint64_t seed, uint32_t lo, uint32_t span) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = uint8_t(lo + mix(seed ^ mix(i)) % span);
}

// A grid-stride loop: 4096 blocks of 256 threads (about 8 blocks per SM on 132 SMs) keep the memory
// system busy for any buffer size without one thread per element.
constexpr int kThreads = 256, kBlocks = 4096;

}  // namespace

void fill_uniform(float* p, size_t n, uint64_t seed, float lo, float hi, cudaStream_t stream) {
  fill_uniform_kernel<<<kBlocks, kThreads, 0, stream>>>(p, n, seed, lo, hi);
  CUDA_CHECK_LAUNCH();
}

void fill_bytes(uint8_t* p, size_t n, uint64_t seed, uint8_t lo, uint8_t hi, cudaStream_t stream) {
  fill_bytes_kernel<<<kBlocks, kThreads, 0, stream>>>(p, n, seed, lo, uint32_t(hi) - lo + 1);
  CUDA_CHECK_LAUNCH();
}

}  // namespace gemm
