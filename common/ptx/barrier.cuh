// Named barriers: bar.sync on a barrier other than 0 (which __syncthreads uses), for a subset of a
// CTA's warps, e.g. the epilogue warps of a warp-specialised kernel, without stopping the others.
// PTX ISA 9.1, 9.7.13.1 (bar, barrier). Available on sm_90 and sm_100.
#pragma once

#include <cstdint>

namespace gemm::ptx {

// bar.sync id, threads;   the first `threads` (a multiple of 32) threads to arrive at barrier `id`
// (1..15) are released together. Every warp that uses it must pass the same count.
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace gemm::ptx
