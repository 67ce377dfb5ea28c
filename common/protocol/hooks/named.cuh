// Named barriers (bar.sync / bar.arrive with an id and a thread count), which kernels written
// elsewhere use to hand shared memory and Tensor Memory from warp to warp. Without these records such
// a hand-off looked unordered (a false report), and the threads waiting at it were invisible to the
// deadlock check. Their state is NamedBarrier (checker_state.h).
//
// Part of the protocol checker: included by common/protocol/checker.cuh only, in its order.
#pragma once

#ifndef GEMM_PROTOCOL_CHECKER_PARTS
#error "include common/protocol/checker.cuh, not its parts"
#endif

#if GEMM_PROTOCOL_ACTIVE
namespace gemm::protocol::dev {

// ---- Named barriers (PTX ISA 9.7.13.1: bar.sync, bar.arrive) ------------------------------------------
//
// bar.sync and bar.arrive are .aligned: the whole warp executes them converged, and the hardware counts
// the warp's threads whatever its active lanes. So a warp arrives once, recorded by its lane 0
// (ptx::named_barrier_sync / named_barrier_arrive, common/ptx/barrier.cuh). An arrival publishes the
// warp's clock into the generation (release); a bar.sync that returns learns the join of what the
// generation's arrivals published (acquire). A warp in bar.sync counts as blocked until its generation
// completes, so the deadlock check sees it: the warp waits in the wrapper, polling the generation here,
// and issues the instruction only once every participant has recorded its arrival (then the hardware
// barrier completes at once). In report mode a generation that a violation left incomplete is
// abandoned: its warps issue nothing and run on, as waits on mbarriers do.

// What a warp does after recording its arrival.
enum NamedStep : uint32_t {
  kNamedIssue = 0,  // issue the instruction now (checking is off here, or the generation is complete)
  kNamedSkip = 1,   // report mode ended the checked work: issue nothing (the others will not come)
  kNamedWait = 2,   // blocked: poll named_barrier_poll(id, generation) until it answers another step
};
struct NamedTicket {
  uint32_t step;
  uint32_t generation;  // the generation the warp arrived in
};

// The threads of the calling warp: 32, or fewer in the last warp of a CTA whose size is not a multiple of 32.
__device__ inline uint32_t warp_threads() {
  const uint32_t left = block_threads() - 32 * warp_id();
  return left < 32 ? left : 32;
}

__device__ inline void learn_named(Warp& W, const NamedBarrier& nb) {
  join(W.vc, nb.done_vc);
  W.snap_stale = 1;  // tcgen05 work sees it only after tcgen05.fence::after_thread_sync (missing-tcgen05-fence)
}

__device__ inline void complete_generation(Cta& t, NamedBarrier& nb) {
  join(nb.done_vc, nb.pending_vc);
  zero_clock(nb.pending_vc);
  nb.generation += 1;
  nb.arrived = 0;
  nb.count = 0;
  atomicSub(&t.blocked, nb.waiting);  // `blocked` is also counted outside the lock (mbarrier waits)
  nb.waiting = 0;
  nb.waiting_warps = 0;
}

// bar.sync id, threads (wait) or bar.arrive id, threads: lane 0 of the warp, once per warp.
static __device__ __noinline__ NamedTicket on_named_barrier_record(uint32_t id, uint32_t threads, bool wait) {
  if (!enabled()) return {kNamedIssue, 0};
  if (!cluster()) return {aborted() ? kNamedSkip : kNamedIssue, 0};
  const Hold h;
  if (!h) return {kNamedSkip, 0};
  auto [G, W, rank, warp] = h.state();
  const uint32_t mine = warp_threads();
  Cta& t = G.cta[rank];
  if (id >= uint32_t(kNamedBarriers) || threads == 0 || threads % 32 != 0) {
    Violation v = base_violation(rank, warp);
    v.rule = "named-barrier-operands";
    v.what = "bar.sync or bar.arrive with a barrier id outside 0-15 or a thread count that is not a positive "
             "multiple of the warp size";
    v.section = "PTX ISA 9.7.13.1 (bar, barrier): the id names one of 16 barriers per CTA, and barriers count whole "
                "warps, so the thread count is a multiple of 32";
    v.fix = "use ids 1-15 (0 is __syncthreads' barrier) and count the threads of whole warps";
    v.numbers = "(barrier id, thread count)";
    v.a = id;
    v.b = threads;
    report(G, v);
    return {kNamedSkip, 0};
  }
  NamedBarrier& nb = t.named[id];
  if (nb.arrived == 0) nb.count = threads;
  join(nb.pending_vc, W.vc);
  W.vc[warp_agent(rank, warp)] += 1;  // what the warp does from now on is after its release
  W.snap_stale = 1;
  const uint32_t generation = nb.generation;
  nb.arrived += mine;
  if (nb.arrived >= nb.count) {
    complete_generation(t, nb);
    if (wait) learn_named(W, nb);
    return {kNamedIssue, generation};
  }
  if (!wait) return {kNamedIssue, generation};
  nb.waiting += mine;
  nb.waiting_warps |= 1u << warp;
  atomicAdd(&t.blocked, mine);
  __threadfence();  // `blocked` before reading `exited` (on_thread_exit counts exits without the lock)
  if (maybe_all_blocked(G)) check_deadlock(G);  // the last thread to block sees every other one
  return {aborted() ? kNamedSkip : kNamedWait, generation};
}

// A blocked warp's lane 0 asks whether its generation has completed (then the warp learns what it
// published) or was abandoned by report mode.
static __device__ __noinline__ uint32_t named_barrier_poll(uint32_t id, uint32_t generation) {
  Cluster* cp = own_cluster();
  if (!cp) return kNamedSkip;
  NamedBarrier& nb = cp->cta[ctarank()].named[id];
  if (relaxed(nb.generation) == generation && !aborted()) return kNamedWait;
  const WarpTurn turn;
  // Decided under the lock (an arrival that completes the generation holds it too), aborted or not.
  const ClusterLock held(*cp, /*even_if_aborted=*/true);
  if (nb.generation == generation) return aborted() ? kNamedSkip : kNamedWait;
  learn_named(cp->cta[ctarank()].warps[warp_id()], nb);
  return kNamedIssue;
}

// The deadlock message's lines for the warps blocked at named barriers of CTA `rank`.
__device__ inline void describe_named_waiters(Msg& m, const Cta& t, uint32_t rank) {
  for (uint32_t id = 0; id < uint32_t(kNamedBarriers); ++id) {
    const NamedBarrier& nb = t.named[id];
    if (!nb.waiting) continue;
    m.s("  ").u(nb.waiting).s(" threads of CTA rank ").u(rank).s(" wait at named barrier ").u(id).s(" (bar.sync ")
        .u(id).s(", ").u(nb.count).s("), ").u(nb.arrived).s(" of ").u(nb.count).s(" threads arrived; warps");
    for (uint32_t w = 0; w < uint32_t(kMaxWarps); ++w)
      if (nb.waiting_warps & (1u << w)) {
        m.s(" ").u(w);
        if (t.warps[w].role[0]) m.s(" (").s(t.warps[w].role).s(")");
      }
    m.s("\n");
  }
}

}  // namespace gemm::protocol::dev
#endif  // GEMM_PROTOCOL_ACTIVE
