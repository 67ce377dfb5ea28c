// Flags in global memory between CTAs that are not in one cluster (stage 08's split-K: the splits of
// a tile run on different pairs and meet through counters). PTX ISA 9.1: atom (9.7.13.5), red
// (9.7.13.6), ld with .acquire (9.7.9.8), and the memory consistency model (section 8).
//
// The pattern, as the memory model states it: a thread's writes become visible to another CTA's
// threads through a release operation at .gpu scope that an acquire operation at .gpu scope of the
// other side observes. Writes of other threads of the CTA join the release through a CTA barrier
// before it (bar.sync orders them before the releasing thread's operation; causality order is
// transitive), and reads of other threads join the acquire through a CTA barrier after it.
#pragma once

#include <cstdint>
#include <cstdio>

#include "common/ptx/mbarrier.cuh"

namespace gemm::ptx {

// atom.relaxed.gpu.global.add.s32 old, [p], v;   an atomic add that orders nothing else (an election).
__device__ __forceinline__ int atom_add_relaxed_gpu(int* p, int v) {
  int old;
  asm volatile("atom.relaxed.gpu.global.add.s32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}

// red.release.gpu.global.add.s32 [p], v;   this thread's earlier writes (and those ordered before it by
// a CTA barrier) are visible to whoever acquires the new value.
__device__ __forceinline__ void red_add_release_gpu(int* p, int v) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// ld.acquire.gpu.global.b32 v, [p];   later reads of this thread (and those ordered after it by a CTA
// barrier) see what the releases it observes made visible.
__device__ __forceinline__ int ld_acquire_gpu(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// st.relaxed.gpu.global.b32 [p], v;
__device__ __forceinline__ void st_relaxed_gpu(int* p, int v) {
  asm volatile("st.relaxed.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Spin until *p == value, each read an acquire. In debug builds (GEMM_BOUNDED_WAITS) the spin gives up
// after the deadline of every bounded wait (common/deadline.h) and traps with a message naming the
// flag, as an mbarrier wait does.
__device__ __forceinline__ void wait_flag_acquire(const int* p, int value, const char* name, int index) {
#if GEMM_BOUNDED_WAITS
  const unsigned long long start = global_timer_ns();
  int seen;
  while ((seen = ld_acquire_gpu(p)) != value) {
    if (global_timer_ns() - start > wait_timeout_ns()) {
      printf("flag wait timed out: '%s' [%d] is %d, waiting for %d, block (%d, %d, %d), thread %d\n", name, index, seen,
             value, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x);
      __trap();
    }
  }
#else
  (void)name;
  (void)index;
  while (ld_acquire_gpu(p) != value) {
  }
#endif
}

}  // namespace gemm::ptx
