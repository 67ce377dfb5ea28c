// mbarrier: the shared-memory barrier that asynchronous copies (TMA) and, from stage 05, the tensor
// cores signal. PTX ISA 9.1, section 9.7.13.15 ("mbarrier").
//
// An mbarrier counts arrivals and transaction bytes. It is initialised with an expected arrival
// count; a phase completes when that many arrivals have happened AND the transaction count is back
// to zero (expect_tx adds bytes, TMA's complete_tx subtracts the bytes it wrote). Then the phase
// flips and the counts reset. Waiters ask "has the phase with parity P completed?":
//   - right after init the current phase (parity 0) is incomplete, so a wait for parity 1 (the
//     "preceding" phase) returns at once: that is why producers, whose first wait is on an empty
//     buffer, start at parity 1;
//   - a barrier must not run two phases ahead of a waiter, or the waiter sees the wrong parity.
//
// In debug builds (GEMM_BOUNDED_WAITS, set by the debug preset) every wait gives up after a timeout
// and traps with a message naming the barrier, its index and the parity: a protocol bug is a clear
// failure instead of a hang. The timeout is the process's deadline (common/deadline.h: 2 s, scaled
// under the tcgen05 emulator and under compute-sanitizer, or GEMM_WAIT_TIMEOUT_S); a launcher binds it
// to its source file's kernels with prepare_bounded_waits().
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "common/cuda_check.h"
#include "common/deadline.h"

#ifndef GEMM_BOUNDED_WAITS
#define GEMM_BOUNDED_WAITS 0
#endif

namespace gemm::ptx {

// This source file's copy of the deadline of bounded waits (each CUDA source file has its own
// device variables); prepare_bounded_waits() sets it from the host.
static __device__ unsigned long long g_wait_timeout_ns = kDefaultWaitTimeoutNs;
__device__ __forceinline__ unsigned long long wait_timeout_ns() { return g_wait_timeout_ns; }

// Host: bind the process's deadline (common/deadline.h) to this source file's kernels. Cheap after
// the first call; call it in every launcher whose kernels use bounded waits.
static inline void prepare_bounded_waits() {
  static bool bound = false;
  if (bound) return;
  const unsigned long long t = bounded_wait_timeout_ns();
  CUDA_CHECK(cudaMemcpyToSymbol(g_wait_timeout_ns, &t, sizeof t));
  bound = true;
}

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

// Names the calling warp's role ("producer", "mma", "epilogue", ...) for the protocol checker's
// messages; the whole warp calls it once, where the role's code begins. No code in a release build.
__device__ __forceinline__ void protocol_role(const char* name) { (void)name; }

// mbarrier.init.shared::cta.b64 [addr], count;   (PTX 9.7.13.15.9)
// `name` and `index` identify the barrier in the protocol checker's messages (docs/protocol_checker.md).
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t arrival_count, const char* name = "",
                                              int index = -1) {
  (void)name;
  (void)index;
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(arrival_count) : "memory");
}

// fence.mbarrier_init.release.cluster;   (PTX 9.7.13.4) Makes the inits visible to the other
// threads and to the async proxy (TMA, tensor cores) before anyone uses the barriers; follow it
// with a CTA (or cluster) barrier.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// mbarrier.arrive.shared::cta.b64 _, [addr];   one arrival (release semantics, CTA scope).
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// mbarrier.arrive.expect_tx.shared::cta.b64 _, [addr], tx;   expect `tx` more transaction bytes
// in the current phase, then arrive once (PTX 9.7.13.15.13). The producer arms a stage with it.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t tx_bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(tx_bytes)
               : "memory");
}

// mbarrier.try_wait.parity.shared::cta.b64 p, [addr], parity;   true once the phase with that parity
// has completed (acquire semantics). It may suspend the thread for a system-defined time first.
__device__ __forceinline__ bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n"
      " .reg .pred p;\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      " selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Wait with a deadline: after `timeout_ns` print what was waited for, and trap.
static __device__ __noinline__ void mbarrier_wait_bounded(uint64_t* bar, uint32_t parity, unsigned long long timeout_ns,
                                                   const char* name, int index) {
  const unsigned long long start = global_timer_ns();
  while (!mbarrier_try_wait_parity(bar, parity)) {
    if (global_timer_ns() - start > timeout_ns) {
      printf("mbarrier wait timed out: barrier '%s' [%d], waiting for parity %u, block (%d, %d, %d), thread %d\n", name,
             index, parity, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x);
      __trap();
    }
  }
}

// Wait until the phase with parity `parity` of `bar` has completed. `name` and `index` identify the
// barrier in the debug-build timeout message.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity, const char* name, int index) {
#if GEMM_BOUNDED_WAITS
  mbarrier_wait_bounded(bar, parity, wait_timeout_ns(), name, index);
#else
  (void)name;
  (void)index;
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
#endif
}

// mbarrier.arrive.release.cluster.shared::cluster.b64 _, [addr in CTA `rank`];   one arrival on the
// barrier at the same shared-memory offset in another CTA of the cluster (PTX 9.7.13.15.13; sm_90).
__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* bar, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(bar)), "r"(rank));
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}

// fence.proxy.async.shared::cta;   orders this thread's ordinary (generic-proxy) shared-memory
// writes before later async-proxy accesses (TMA stores, tensor-core reads) of the same memory.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

}  // namespace gemm::ptx
