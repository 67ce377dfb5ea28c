#include "common/stream_read.h"

#include <stdexcept>
#include <string>

#include "common/cuda_check.h"

namespace gemm {
namespace {

constexpr int kThreads = 256;

template <int kChunks>
__global__ void __launch_bounds__(kThreads) stream_read_kernel(const uint4* __restrict__ p, int64_t chunks,
                                                                uint32_t* sink) {
  // Chunk i of this thread: base + i * kThreads, so each load instruction of a warp reads 512
  // contiguous bytes and the CTA reads kThreads * kChunks * 16 contiguous bytes.
  const int64_t base = int64_t(blockIdx.x) * kThreads * kChunks + threadIdx.x;
  uint4 v[kChunks];
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    const int64_t c = base + int64_t(i) * kThreads;
    if (c < chunks)
      asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v[i].x), "=r"(v[i].y), "=r"(v[i].z), "=r"(v[i].w) : "l"(p + c));
    else
      v[i] = make_uint4(0, 0, 0, 0);
  }
  uint32_t fold = 0;
#pragma unroll
  for (int i = 0; i < kChunks; ++i) fold ^= v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
  if (fold == 0x9E3779B9u && threadIdx.x == kThreads) *sink = fold;  // never true: threadIdx.x < kThreads
}

template <int kChunks>
void launch(const uint8_t* p, int64_t bytes, uint32_t* sink, cudaStream_t stream) {
  const int64_t chunks = bytes / 16, per_cta = int64_t(kThreads) * kChunks;
  stream_read_kernel<kChunks><<<unsigned((chunks + per_cta - 1) / per_cta), kThreads, 0, stream>>>(
      reinterpret_cast<const uint4*>(p), chunks, sink);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void stream_read(const uint8_t* p, int64_t bytes, uint32_t* sink, int chunks_per_thread, cudaStream_t stream) {
  if (p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 != 0 || bytes <= 0 || bytes % 16 != 0)
    throw std::invalid_argument("stream_read: needs a 16-byte-aligned buffer and a positive multiple of 16 bytes (got " +
                                std::to_string(bytes) + ")");
  switch (chunks_per_thread) {
    case 1: return launch<1>(p, bytes, sink, stream);
    case 2: return launch<2>(p, bytes, sink, stream);
    case 4: return launch<4>(p, bytes, sink, stream);
    case 8: return launch<8>(p, bytes, sink, stream);
    default: throw std::invalid_argument("stream_read: chunks_per_thread must be 1, 2, 4 or 8");
  }
}

}  // namespace gemm
