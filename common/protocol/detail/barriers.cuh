// The shadow mbarriers: finding a barrier, arrivals and phase completion, CTA and cluster barrier
// generations, and the deadlock check.
//
// Part of the protocol checker: included by common/protocol/checker.cuh only, in its order.
#pragma once

#ifndef GEMM_PROTOCOL_CHECKER_PARTS
#error "include common/protocol/checker.cuh, not its parts"
#endif

#if GEMM_PROTOCOL_ACTIVE
namespace gemm::protocol::dev {

// Lookups and checks over many cells (barrier offsets, shared-memory lines, Tensor Memory cells) load
// kRound of them before using any: each load is an L2 round trip, most are made under the cluster's
// lock, and one at a time the dealloc check alone was 7% of the time the checker added to a profiled
// test (docs/protocol_checker.md).
inline constexpr int kRound = 8;

// The barriers' offsets are read kRound at a time (a CTA has up to kMaxBarriers, and every wait,
// arrive and copy looks its barrier up).
template <bool kRelaxed>
__device__ inline int find_barrier_in(const Cta& t, uint32_t offset) {
  const uint32_t n = min(kRelaxed ? *reinterpret_cast<const volatile uint32_t*>(&t.nbarriers) : t.nbarriers,
                         uint32_t(kMaxBarriers));
  for (uint32_t b0 = 0; b0 < n; b0 += kRound) {
    uint32_t o[kRound];
#pragma unroll
    for (int i = 0; i < kRound; ++i)
      o[i] = b0 + i >= n ? 0u
             : kRelaxed  ? *reinterpret_cast<const volatile uint32_t*>(&t.barriers[b0 + i].offset)
                         : t.barriers[b0 + i].offset;
#pragma unroll
    for (int i = 0; i < kRound; ++i)
      if (o[i] == offset + 1) return int(b0 + i);
  }
  return -1;
}
__device__ inline int find_barrier(const Cta& t, uint32_t offset) { return find_barrier_in<false>(t, offset); }

__device__ inline int find_barrier_relaxed(const Cta& t, uint32_t offset) { return find_barrier_in<true>(t, offset); }

__device__ inline Violation base_violation(uint32_t rank, uint32_t warp) {
  Violation v;
  v.rank = int(rank);
  v.warp = int(warp);
  return v;
}

// A barrier that must exist and be initialised; reports otherwise (returns -1).
__device__ inline int live_barrier(Cluster& c, uint32_t target_rank, uint32_t offset, uint32_t rank, uint32_t warp,
                                   const char* use) {
  const int b = find_barrier(c.cta[target_rank], offset);
  if (b >= 0 && c.cta[target_rank].barriers[b].live) return b;
  Violation v = base_violation(rank, warp);
  v.rule = "barrier-uninitialised";
  v.what = use;
  v.section = "PTX ISA 9.7.13.15.9 (mbarrier.init): a barrier is used only after mbarrier.init, made visible by "
              "fence.mbarrier_init and a CTA or cluster barrier";
  v.fix = "initialise the barrier (ptx::mbarrier_init) before any arrive, copy, commit or wait names it";
  v.numbers = "(shared-memory offset, CTA rank)";
  v.a = offset;
  v.b = target_rank;
  report(c, v);
  return -1;
}

// CTA and cluster barriers whose every live thread has arrived complete here, under the lock, by
// whichever thread gets here first: the last arriver, or a thread about to decide on a deadlock
// (which must not count threads that the barrier has in fact released).
static __device__ __noinline__ void settle_barriers(Cluster& c) {
  for (uint32_t r = 0; r < c.ctas; ++r) {
    Cta& t = c.cta[r];
    if (t.live && t.sync_arrived && t.sync_arrived >= t.threads - t.exited) {
      copy_clock(t.sync_done_vc, t.sync_vc);
      zero_clock(t.sync_vc);
      atomicSub(&t.blocked, t.sync_arrived);
      atomicExch(&t.sync_arrived, 0u);
      t.sync_generation += 1;
    }
  }
  uint32_t live = 0;
  for (uint32_t r = 0; r < c.ctas; ++r) live += c.cta[r].live ? c.cta[r].threads - c.cta[r].exited : block_threads();
  if (c.sync_arrived && c.sync_arrived >= live) {
    copy_clock(c.sync_done_vc, c.sync_vc);
    zero_clock(c.sync_vc);
    for (uint32_t r = 0; r < c.ctas; ++r) {
      atomicSub(&c.cta[r].blocked, c.cta[r].cluster_arrived);
      atomicExch(&c.cta[r].cluster_arrived, 0u);
      c.cta[r].cluster_synced = 1;
    }
    atomicExch(&c.sync_arrived, 0u);
    c.sync_generation += 1;
  }
}

// Defined in hooks/named.cuh (the warps blocked at named barriers, for the deadlock message).
__device__ inline void describe_named_waiters(Msg& m, const Cta& t, uint32_t rank);

// The deadlock check: every live thread of the cluster waits on something nothing recorded can finish.
static __device__ __noinline__ void check_deadlock(Cluster& c) {
  settle_barriers(c);
  uint32_t waiting = 0;
  for (uint32_t r = 0; r < c.ctas; ++r) {
    const Cta& t = c.cta[r];
    if (!t.live) return;  // a CTA that has not started yet will act
    if (t.blocked < t.threads - t.exited) return;
    waiting += t.blocked;
  }
  if (waiting == 0) return;  // everyone has left: the kernel is ending, not stuck
  Msg m;
  m.s("protocol checker: deadlock: every live thread of the cluster waits, and nothing issued can complete the "
      "phases they wait for\n");
  for (uint32_t r = 0; r < c.ctas; ++r) {
    const Cta& t = c.cta[r];
    for (uint32_t b = 0; b < t.nbarriers; ++b) {
      const Barrier& bar = t.barriers[b];
      for (uint32_t p = 0; p < 2; ++p) {
        if (!bar.waiting[p]) continue;
        m.s("  ");
        describe_barrier(m, c, int(r), int(b));
        m.s("; waited for with parity ").u(p).s(" by ").u(bar.waiting[p]).s(" threads of warps");
        for (uint32_t w = 0; w < uint32_t(kMaxWarps); ++w)
          if (bar.waiting_warps[p] & (1u << w)) {
            m.s(" ").u(w);
            if (t.warps[w].role[0]) m.s(" (").s(t.warps[w].role).s(")");
          }
        m.s("\n");
      }
    }
    if (t.sync_arrived) m.s("  ").u(t.sync_arrived).s(" threads of CTA rank ").u(r).s(" wait at the CTA barrier (ptx::cta_sync)\n");
    if (t.cluster_arrived) m.s("  ").u(t.cluster_arrived).s(" threads of CTA rank ").u(r).s(" wait at the cluster barrier (ptx::cluster_sync)\n");
    describe_named_waiters(m, t, r);
    if (t.exited) m.s("  ").u(t.exited).s(" threads of CTA rank ").u(r).s(" have exited\n");
  }
  m.s("  rule: PTX ISA 9.7.13.15.16 (mbarrier.test_wait/try_wait): a phase completes only when its pending arrivals "
      "and transaction bytes reach zero\n  fix: check each waiter's parity (a producer's first wait on an empty "
      "slot uses parity 1) and that every phase waited for gets its arrivals");
  report_text(m);
}

// The phase completes when all arrivals and transaction bytes are in: publish, flip, release waiters.
__device__ inline void maybe_complete(Cluster& c, uint32_t rank, uint32_t b) {
  Cta& t = c.cta[rank];
  Barrier& bar = t.barriers[b];
  if (bar.pending != 0 || bar.tx != 0) return;
  bar.completed += 1;
  copy_clock(bar.done_vc, bar.pending_vc);
  bar.done_vc[bar_agent(rank, b)] = bar.completed;
  zero_clock(bar.pending_vc);
  bar.pending = bar.count;
  bar.tx_seen = 0;
  const uint32_t p = (bar.completed - 1 - bar.phase_base) & 1;
  atomicSub(&t.blocked, bar.waiting[p]);  // `blocked` is also counted outside the lock (barriers)
  bar.waiting[p] = 0;
  bar.waiting_warps[p] = 0;
}

// One arrival (count 1) publishing `vc` on barrier b of CTA `target`.
__device__ inline bool arrive_on(Cluster& c, uint32_t target, uint32_t b, const uint32_t* vc, bool async,
                                 uint32_t rank, uint32_t warp) {
  Barrier& bar = c.cta[target].barriers[b];
  if (bar.pending == 0) {
    Violation v = base_violation(rank, warp);
    v.rule = "arrive-overflow";
    v.what = "an arrival on a barrier whose current phase already has all its arrivals (it waits only for "
             "transaction bytes)";
    v.section = "PTX ISA 9.7.13.15.1 (mbarrier phases): a phase expects exactly the count given at init";
    v.fix = "arrive exactly `count` times per phase; arm transaction bytes with arrive.expect_tx";
    v.bar_rank = int(target);
    v.bar = int(b);
    report(c, v);
    return false;
  }
  join(bar.pending_vc, vc);
  bar.pending -= 1;
  if (async) bar.async_phase = bar.completed + 1;
  maybe_complete(c, target, b);
  return true;
}



// Outside the lock: whether every live thread of the cluster may now be waiting (then the deadlock
// check must run under the lock). Every thread that starts waiting fences after counting itself and
// then asks, so the last one to start sees all the others.
__device__ inline bool maybe_all_blocked(const Cluster& c) {
  const uint32_t n = relaxed(c.ctas);
  for (uint32_t r = 0; r < n && r < uint32_t(kMaxCtas); ++r) {
    const Cta& t = c.cta[r];
    if (!relaxed(t.live) || relaxed(t.blocked) < relaxed(t.threads) - relaxed(t.exited)) return false;
  }
  return true;
}

}  // namespace gemm::protocol::dev
#endif  // GEMM_PROTOCOL_ACTIVE
