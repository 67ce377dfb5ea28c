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
// under the tcgen05 emulator and under compute-sanitizer, or GEMM_WAIT_TIMEOUT_S); the launch door
// binds it to its source file's kernels (common/launch.cuh, common/device_state.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "common/cuda_check.h"
#include "common/deadline.h"
#include "common/device_state.h"
#include "common/protocol/checker.cuh"

#ifndef GEMM_BOUNDED_WAITS
#define GEMM_BOUNDED_WAITS 0
#endif

namespace gemm::ptx {

// This source file's copy of the deadline of bounded waits (each CUDA source file has its own
// device variables); bind_wait_deadline() sets it from the host.
static __device__ unsigned long long g_wait_timeout_ns = kDefaultWaitTimeoutNs;
__device__ __forceinline__ unsigned long long wait_timeout_ns() { return g_wait_timeout_ns; }

// Host: the process's deadline (common/deadline.h) into this source file's copy.
static inline void bind_wait_deadline() {
  const unsigned long long t = bounded_wait_timeout_ns();
  CUDA_CHECK(cudaMemcpyToSymbol(g_wait_timeout_ns, &t, sizeof t));
}

// Both binders run at this file's first launch through the door (gemm::bind_device_state()). The
// protocol checker is registered here, with the mbarrier wrappers, and not by checker.cuh itself: its
// model is the mbarrier protocol (every TMA and tcgen05 wrapper includes this header), and a file that
// includes only the cluster barrier of common/ptx/cluster.cuh (stage 09: a DSMEM reduction over
// clusters of up to 8 CTAs, more than the checker models, and no ptx::ProtocolScope) stays unbound, so
// those hooks find no state and do nothing.
namespace {
const device_state::Registration kBindWaitDeadline{&bind_wait_deadline};
const device_state::Registration kBindProtocolChecker{&protocol::bind};
}  // namespace

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

// ---- The protocol checker's view of a kernel (common/protocol/checker.cuh) --------------------------
// Each of these is free where the checker is off (release builds of native code).

// Names the calling warp's role ("producer", "mma", "epilogue", ...) in the checker's messages; call it
// where the role's code begins.
__device__ __forceinline__ void protocol_role(const char* name) {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_role(name);
#else
  (void)name;
#endif
}

// A kernel that holds one of these (first statement: `ptx::ProtocolScope protocol_scope;`) tells the
// checker when each thread leaves: the CTA's last thread checks what it leaves behind (Tensor Memory
// still allocated, asynchronous arrives still in flight), and exited threads count for deadlock
// detection.
struct ProtocolScope {
#if GEMM_PROTOCOL_ACTIVE
  __device__ ProtocolScope() { protocol::dev::on_thread_start(); }
  __device__ ~ProtocolScope() { protocol::dev::on_thread_exit(); }
#else
  __device__ ProtocolScope() {}  // user-provided: a scope object is never "unused"
#endif
};

// Generic-proxy shared-memory accesses the checker cannot see (plain stores and loads): a warp declares
// the bytes it wrote or read, after doing so.
__device__ __forceinline__ void protocol_generic_write(const void* p, uint32_t bytes) {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_generic(smem_addr(p), bytes, true);
#else
  (void)p;
  (void)bytes;
#endif
}
__device__ __forceinline__ void protocol_generic_read(const void* p, uint32_t bytes) {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_generic(smem_addr(p), bytes, false);
#else
  (void)p;
  (void)bytes;
#endif
}

__device__ __forceinline__ bool protocol_aborted() {
#if GEMM_PROTOCOL_ACTIVE
  return protocol::dev::aborted();
#else
  return false;
#endif
}

__device__ __forceinline__ uint32_t own_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// mbarrier.init.shared::cta.b64 [addr], count;   (PTX 9.7.13.15.9)
// `name` and `index` identify the barrier in the protocol checker's messages (docs/protocol_checker.md).
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t arrival_count, const char* name = "",
                                              int index = -1) {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_init(smem_addr(bar), arrival_count, name, index);
#else
  (void)name;
  (void)index;
#endif
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
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_arrive(smem_addr(bar), own_rank(), 0);
  if (protocol_aborted()) return;
#endif
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// mbarrier.arrive.expect_tx.shared::cta.b64 _, [addr], tx;   expect `tx` more transaction bytes
// in the current phase, then arrive once (PTX 9.7.13.15.13). The producer arms a stage with it.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t tx_bytes) {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_arrive(smem_addr(bar), own_rank(), tx_bytes);
  if (protocol_aborted()) return;
#endif
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
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_wait_begin(smem_addr(bar), parity);  // each waiting thread records its own wait
#endif
  const unsigned long long start = global_timer_ns();
  while (!mbarrier_try_wait_parity(bar, parity)) {
    if (protocol_aborted()) break;  // report mode: a violation ended the kernel's checked work
    if (global_timer_ns() - start > timeout_ns) {
      printf("mbarrier wait timed out: barrier '%s' [%d], waiting for parity %u, block (%d, %d, %d), thread %d\n", name,
             index, parity, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x);
#if GEMM_PROTOCOL_ACTIVE
      protocol::dev::describe_for_timeout();
#endif
      __trap();
    }
  }
#if GEMM_PROTOCOL_ACTIVE
  if (!protocol_aborted()) protocol::dev::on_wait_end(smem_addr(bar), parity);
#endif
}

// Wait until the phase with parity `parity` of `bar` has completed. `name` and `index` identify the
// barrier in the debug-build timeout message.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity, const char* name, int index) {
#if GEMM_BOUNDED_WAITS || GEMM_PROTOCOL_ACTIVE
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
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_arrive(smem_addr(bar), rank, 0);
  if (protocol_aborted()) return;
#endif
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(bar)), "r"(rank));
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}

// mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [addr in CTA `rank`], tx;   expect
// `tx` more transaction bytes in the current phase of the barrier at bar's offset in CTA `rank` of the
// cluster, then arrive on it once (PTX 9.7.13.15.13; sm_90). In a CTA pair whose copies all complete
// on the leader's barrier, each CTA announces its own bytes there this way.
__device__ __forceinline__ void mbarrier_arrive_expect_tx_cluster(uint64_t* bar, uint32_t rank, uint32_t tx_bytes) {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_arrive(smem_addr(bar), rank, tx_bytes);
  if (protocol_aborted()) return;
#endif
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(bar)), "r"(rank));
  asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%0], %1;" ::"r"(remote), "r"(tx_bytes)
               : "memory");
}

// fence.proxy.async.shared::cta;   orders this thread's ordinary (generic-proxy) shared-memory
// writes before later async-proxy accesses (TMA stores, tensor-core reads) of the same memory.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_fence_proxy_async();
#endif
}

// The whole warp, converged: every lane has written its part of [p, p + bytes) with ordinary stores
// and hands the range to the async proxy (a TMA store that one lane issues next). Every lane fences;
// the warp leaves converged. The checker records the warp's stores and fence once, in lane 0 between
// two full-warp barriers, as it records the .sync.aligned instructions: 32 lanes each taking the
// checker's lock here return from its hooks at different times, and a warp that comes back from a
// call diverged cannot count on the compiler's reconvergence before the store (on an H100 and an H200,
// lane 0 issued the store while lanes 2-31 had not yet stored).
__device__ __forceinline__ void fence_warp_stores_for_async_proxy(const void* p, uint32_t bytes) {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#if GEMM_PROTOCOL_ACTIVE
  __syncwarp();
  if (threadIdx.x % 32 == 0) {
    protocol::dev::on_generic(smem_addr(p), bytes, true);
    protocol::dev::on_fence_proxy_async();
  }
#else
  (void)p;
  (void)bytes;
#endif
  __syncwarp();
}

// mbarrier.inval.shared::cta.b64 [addr];   (PTX 9.7.13.15.10) the barrier's memory may be reused, or the
// barrier initialised again.
__device__ __forceinline__ void mbarrier_inval(uint64_t* bar) {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_inval(smem_addr(bar));
#endif
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// bar.sync 0 (__syncthreads) as the checker sees it: every thread of the CTA publishes what it knows
// and learns what the others knew. Use it where a CTA barrier hands shared memory or Tensor Memory
// from one warp to another (a plain __syncthreads is invisible to the checker).
__device__ __forceinline__ void cta_sync() {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_cta_sync_arrive();
#endif
  __syncthreads();
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_cta_sync_depart();
#endif
}

}  // namespace gemm::ptx
