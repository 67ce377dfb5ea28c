// The mbarrier hooks: a warp's role, init and inval, arrivals (local and remote, with expect_tx),
// and the two halves of a wait (blocked on a phase, then returned having learned it).
//
// Part of the protocol checker: included by common/protocol/checker.cuh only, in its order.
#pragma once

#ifndef GEMM_PROTOCOL_CHECKER_PARTS
#error "include common/protocol/checker.cuh, not its parts"
#endif

#if GEMM_PROTOCOL_ACTIVE
namespace gemm::protocol::dev {


static __device__ __noinline__ void on_role(const char* name) {
  auto recorded = [&]() -> bool {  // Fast path, no lock: a lane of this warp has named it already.
    const Cluster* c = cluster();
    if (!c || relaxed(c->cta[ctarank()].warps[warp_id()].role[0]) == name[0]) return true;
    return false;
  };
  const Hold h(recorded);
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  copy_name(W.role, name);
}

static __device__ __noinline__ void on_init(uint32_t bar_addr, uint32_t count, const char* name, int index) {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  Cta& t = G.cta[rank];
  const uint32_t off = smem_offset(bar_addr);
  int b = find_barrier(t, off);
  if (b >= 0 && t.barriers[b].live) {
    Violation v = base_violation(rank, warp);
    v.rule = "barrier-reinitialised";
    v.what = "mbarrier.init of a barrier that is live (initialised and not invalidated)";
    v.section = "PTX ISA 9.7.13.15.9 (mbarrier.init) and 9.7.13.15.10 (mbarrier.inval): a live barrier is "
                "invalidated before its memory is initialised again";
    v.fix = "initialise each barrier once, or mbarrier.inval (ptx::mbarrier_inval) it first";
    v.bar_rank = int(rank);
    v.bar = b;
    report(G, v);
    return;
  }
  if (b < 0) {
    if (t.nbarriers >= uint32_t(kMaxBarriers)) {
      Violation v = base_violation(rank, warp);
      v.rule = "unsupported";
      v.what = "more mbarriers in one CTA than the checker keeps";
      v.section = "the checker's limit (common/protocol/checker_state.h)";
      v.fix = "raise kMaxBarriers";
      report(G, v);
      return;
    }
    b = int(t.nbarriers++);
    t.barriers[b].completed = 0;
  }
  Barrier& bar = t.barriers[b];
  bar.offset = off + 1;
  bar.live = 1;
  bar.count = count;
  bar.pending = count;
  bar.tx = 0;
  bar.tx_seen = 0;
  bar.phase_base = bar.completed;
  bar.observed = bar.completed;
  bar.async_phase = 0;
  bar.waiting[0] = bar.waiting[1] = 0;
  bar.waiting_warps[0] = bar.waiting_warps[1] = 0;
  bar.index = index;
  copy_name(bar.name, name && name[0] ? name : "(unnamed)");
  zero_clock(bar.pending_vc);
  zero_clock(bar.done_vc);
}

static __device__ __noinline__ void on_inval(uint32_t bar_addr) {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  Cta& t = G.cta[rank];
  const int b = live_barrier(G, rank, smem_offset(bar_addr), rank, warp, "mbarrier.inval of a barrier that is not live");
  if (b >= 0) t.barriers[b].live = 0;
}

// mbarrier.arrive (target_rank: the CTA whose barrier it is), with `tx` bytes expected first.
static __device__ __noinline__ void on_arrive(uint32_t bar_addr, uint32_t target_rank, uint32_t tx) {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  const int b = live_barrier(G, target_rank, smem_offset(bar_addr), rank, warp, "an arrive on a barrier never initialised");
  if (b >= 0) {
    G.cta[target_rank].barriers[b].tx += int32_t(tx);
    if (arrive_on(G, target_rank, uint32_t(b), W.vc, false, rank, warp)) {
      W.vc[warp_agent(rank, warp)] += 1;
      W.snap_stale = 1;
    }
  }
}

// Before a wait on parity `parity`: is it blocked on a phase nothing recorded has completed?
static __device__ __noinline__ void on_wait_begin(uint32_t bar_addr, uint32_t parity) {
  auto recorded = [&]() -> bool {  // Fast path, no lock: the phase is complete and this warp is not behind, so there is nothing to record.
    const Cluster* c = cluster();
    if (!c) return true;
    const uint32_t r = ctarank();
    const Cta& t = c->cta[r];
    const int b = find_barrier_relaxed(t, smem_offset(bar_addr));
    if (b >= 0 && relaxed(t.barriers[b].live)) {
      const uint32_t completed = relaxed(t.barriers[b].completed), base = relaxed(t.barriers[b].phase_base);
      const uint32_t seen = relaxed(t.warps[warp_id()].seen[b]);
      if (((completed - base) & 1) != (parity & 1) && !(completed >= seen + 2 && seen >= base)) return true;
    }
    return false;
  };
  const Hold h(recorded);
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  Cta& t = G.cta[rank];
  const int b = live_barrier(G, rank, smem_offset(bar_addr), rank, warp, "a wait on a barrier never initialised");
  if (b < 0) return;
  Barrier& bar = t.barriers[b];
  const uint32_t phase = bar.completed - bar.phase_base;
  if (bar.completed >= W.seen[b] + 2 && W.seen[b] >= bar.phase_base) {
    Violation v = base_violation(rank, warp);
    v.rule = "waiter-behind";
    v.what = "a wait on a barrier that has completed two or more phases since this warp last waited on it: the "
             "parity it waits for no longer names the phase it means";
    v.section = "PTX ISA 9.7.13.15.16 (try_wait.parity): the parity names the current or the immediately "
                "preceding phase only";
    v.fix = "wait on every phase, or keep the barrier from running more than one phase ahead of this waiter";
    v.bar_rank = int(rank);
    v.bar = b;
    v.numbers = "(phases completed at this warp's last wait, now)";
    v.a = W.seen[b] - bar.phase_base;
    v.b = phase;
    report(G, v);
    return;
  }
  if ((phase & 1) == (parity & 1)) {  // the phase waited for has not completed: blocked
    bar.waiting[parity & 1] += 1;
    bar.waiting_warps[parity & 1] |= 1u << warp;
    atomicAdd(&t.blocked, 1u);
    __threadfence();  // `blocked` before reading `exited`: on_thread_exit counts exits without the lock
    if (maybe_all_blocked(G)) check_deadlock(G);  // the last thread to block sees every other one
  }
}

// After the wait returned: the waiter now knows what the observed phase published.
static __device__ __noinline__ void on_wait_end(uint32_t bar_addr, uint32_t parity) {
  auto recorded = [&]() -> bool {  // Fast path, no lock: another lane of this warp has already learned this phase (a warp is one logical thread).
    const Cluster* c = cluster();
    if (!c) return true;
    const uint32_t r = ctarank();
    const Cta& t = c->cta[r];
    const int b = find_barrier_relaxed(t, smem_offset(bar_addr));
    if (b >= 0) {
      const uint32_t completed = relaxed(t.barriers[b].completed), base = relaxed(t.barriers[b].phase_base);
      if (((completed - base) & 1) != (parity & 1) && relaxed(t.warps[warp_id()].seen[b]) == completed) return true;
    }
    return false;
  };
  const Hold h(recorded);
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  Cta& t = G.cta[rank];
  const int b = find_barrier(t, smem_offset(bar_addr));
  if (b < 0) return;
  Barrier& bar = t.barriers[b];
  const uint32_t phase = bar.completed - bar.phase_base;
  if ((phase & 1) == (parity & 1)) {
    Violation v = base_violation(rank, warp);
    v.rule = "unseen-completion";
    v.what = "a wait returned for a phase that no operation the checker saw has completed: an arrive, copy or commit "
             "bypassed the wrappers of common/ptx";
    v.section = "the checker sees only operations made through common/ptx (docs/protocol_checker.md)";
    v.fix = "issue every mbarrier, TMA and tcgen05 operation through the wrappers";
    v.bar_rank = int(rank);
    v.bar = b;
    report(G, v);
    return;
  }
  if (bar.completed > bar.phase_base && W.seen[b] != bar.completed) {
    join(W.vc, bar.done_vc);
    const uint32_t a = bar_agent(rank, uint32_t(b));
    if (W.vc[a] < bar.completed) W.vc[a] = bar.completed;
    W.snap_stale = 1;
  }
  W.seen[b] = bar.completed;
  if (bar.completed > bar.observed) bar.observed = bar.completed;
}

}  // namespace gemm::protocol::dev
#endif  // GEMM_PROTOCOL_ACTIVE
