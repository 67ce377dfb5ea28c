// Named barriers: bar.sync and bar.arrive on a barrier other than 0 (which __syncthreads uses), for a
// subset of a CTA's warps, e.g. the epilogue warps of a warp-specialised kernel, without stopping the
// others. PTX ISA 9.1, 9.7.13.1 (bar, barrier). Available on sm_90 and sm_100.
//
// Both are .aligned: every lane of a warp executes the same instruction, converged, and the barrier
// counts the warp's 32 threads. bar.arrive releases (the arriving warp's earlier memory accesses are
// ordered before the completion); bar.sync releases and, when the barrier completes, acquires. A
// producer that hands memory or Tensor Memory over arrives; the consumer syncs. With tcgen05 the
// producer first finishes its work (tcgen05.wait::ld, then tcgen05.fence::before_thread_sync) and the
// consumer follows the sync with tcgen05.fence::after_thread_sync before asynchronous tcgen05 work
// (PTX ISA 9.7.16.6.3 counts barrier instructions among the execution-ordering operations the tcgen05
// fences compose with).
//
// The protocol checker (common/protocol/hooks/named.cuh) records each warp's arrival: the hand-off
// is then visible to it, and a warp waiting at the barrier counts for deadlock detection. Where the
// checker runs, a warp in bar.sync waits for its generation in the checker first and issues the
// instruction once every participant has arrived; elsewhere each wrapper is the instruction alone.
#pragma once

#include <cstdint>
#include <cstdio>

#include "common/ptx/mbarrier.cuh"  // the checker, the deadline of bounded waits

namespace gemm::ptx {

#if GEMM_PROTOCOL_ACTIVE
// The checker's record of the warp's arrival (lane 0, once per warp), and for bar.sync the wait for its
// generation, bounded by the deadline as mbarrier waits are. True: issue the instruction; false: report
// mode has ended the checked work, and the other participants will not come.
__device__ __forceinline__ bool protocol_named_barrier(uint32_t id, uint32_t threads, bool wait) {
  __syncwarp();
  uint32_t step = protocol::dev::kNamedIssue;
  if (protocol::dev::lane_id() == 0) {
    const protocol::dev::NamedTicket ticket = protocol::dev::on_named_barrier_record(id, threads, wait);
    step = ticket.step;
    const unsigned long long start = global_timer_ns();
    for (uint32_t ns = 32; step == protocol::dev::kNamedWait; ns = ns < 1024 ? 2 * ns : ns) {
      __nanosleep(ns);
      step = protocol::dev::named_barrier_poll(id, ticket.generation);
      if (step == protocol::dev::kNamedWait && global_timer_ns() - start > wait_timeout_ns()) {
        printf("named barrier wait timed out: bar.sync %u, %u; block (%d, %d, %d), warp %u\n", id, threads, blockIdx.x,
               blockIdx.y, blockIdx.z, protocol::dev::warp_id());
        protocol::dev::describe_for_timeout();
        __trap();
      }
    }
  }
  return __shfl_sync(0xFFFFFFFFu, step, 0) == protocol::dev::kNamedIssue;
}
#endif

// bar.sync id, threads;   waits until `threads` (a multiple of 32) threads have arrived at barrier `id`
// (1..15) in this generation, by bar.sync or bar.arrive. Every lane of the calling warp calls it.
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
#if GEMM_PROTOCOL_ACTIVE
  if (!protocol_named_barrier(id, threads, true)) return;
#endif
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// bar.arrive id, threads;   counts the calling warp's threads towards the current generation of barrier
// `id` and goes on without waiting. Every lane of the calling warp calls it; `threads` is the count
// the barrier's bar.sync callers pass.
__device__ __forceinline__ void named_barrier_arrive(uint32_t id, uint32_t threads) {
#if GEMM_PROTOCOL_ACTIVE
  if (!protocol_named_barrier(id, threads, false)) return;
#endif
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace gemm::ptx
