// CTA and cluster barriers (ptx::cta_sync, ptx::cluster_sync), a thread's entry and exit (ProtocolScope),
// and the cluster's state as a bounded wait's timeout message shows it.
//
// Part of the protocol checker: included by common/protocol/checker.cuh only, in its order.
#pragma once

#ifndef GEMM_PROTOCOL_CHECKER_PARTS
#error "include common/protocol/checker.cuh, not its parts"
#endif

#if GEMM_PROTOCOL_ACTIVE
namespace gemm::protocol::dev {

// CTA-wide barrier (bar.sync 0) and cluster barrier: every participant publishes; all learn the join.
// Each thread arrives for itself (a lane that never comes, as in a broken kernel, is simply missing
// from the count, and the deadlock check sees the others waiting), but a warp is one logical thread:
// its clock is published once per barrier generation unless it recorded something since, and learned
// once at departure. Arrivals and `blocked` are counted with atomics; the lock is taken to publish,
// to complete a generation, and for the deadlock check.

// The warp publishes its clock into the barrier's next generation and steps its epoch: once per
// generation, and again only after new records (`pub_gen`, `pub_acts`: its last publication there).
// `generation` is read again under the lock. False: report mode has ended the checking.
__device__ inline bool publish_at_sync(Cluster& G, Warp& W, uint32_t me, uint32_t* into, const uint32_t& generation,
                                       uint32_t gen, uint32_t& pub_gen, uint32_t& pub_acts) {
  auto published = [&] { return relaxed(pub_gen) == gen + 1 && relaxed(pub_acts) == relaxed(W.acts); };
  if (published()) return true;
  const WarpTurn turn;
  if (published()) return true;
  const ClusterLock held(G);
  if (!held) return false;
  W.used = 1;
  W.acts += 1;
  if (pub_gen != generation + 1 || pub_acts + 1 != W.acts) {  // something new since (this entry's own act aside)
    join(into, W.vc);
    W.vc[me] += 1;
    W.snap_stale = 1;
    pub_gen = generation + 1;
  }
  pub_acts = W.acts;
  return true;
}

static __device__ __noinline__ void on_cta_sync_arrive() {
  Cluster* const c = cluster();
  if (!c) return;
  Cluster& G = *c;
  const uint32_t rank = ctarank(), warp = warp_id();
  Cta& t = G.cta[rank];
  Warp& W = t.warps[warp];
  const uint32_t gen = relaxed(t.sync_generation);
  if (!publish_at_sync(G, W, warp_agent(rank, warp), t.sync_vc, t.sync_generation, gen, W.pub_cta_gen, W.pub_cta_acts)) return;
  atomicAdd(&t.blocked, 1u);
  const uint32_t arrived = atomicAdd(&t.sync_arrived, 1u) + 1;
  __threadfence();  // `blocked` before reading `exited` (on_thread_exit)
  if (arrived < relaxed(t.threads) - relaxed(t.exited) && !maybe_all_blocked(G)) return;  // not the last, no deadlock
  const ClusterLock held(G);
  if (!held) return;
  settle_barriers(G);  // the generation completes here if every thread is in
  if (t.sync_generation == gen) check_deadlock(G);
}
static __device__ __noinline__ void on_cta_sync_depart() {
  auto recorded = [&]() -> bool {  // Fast path, no lock: a lane of this warp has learned this generation's clock already.
    const Cluster* c = cluster();
    if (!c) return true;
    const Cta& t = c->cta[ctarank()];
    if (relaxed(t.warps[warp_id()].dep_cta_gen) == relaxed(t.sync_generation)) return true;
    return false;
  };
  const Hold h(recorded);
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  if (W.dep_cta_gen != G.cta[rank].sync_generation) {
    join(W.vc, G.cta[rank].sync_done_vc);
    W.snap_stale = 1;
    W.dep_cta_gen = G.cta[rank].sync_generation;
  }
}

static __device__ __noinline__ void on_cluster_sync_arrive() {
  Cluster* const c = cluster();
  if (!c) return;
  Cluster& G = *c;
  const uint32_t rank = ctarank(), warp = warp_id();
  Cta& t = G.cta[rank];
  Warp& W = t.warps[warp];
  const uint32_t gen = relaxed(G.sync_generation);
  if (!publish_at_sync(G, W, warp_agent(rank, warp), G.sync_vc, G.sync_generation, gen, W.pub_cl_gen, W.pub_cl_acts)) return;
  atomicAdd(&t.blocked, 1u);
  atomicAdd(&t.cluster_arrived, 1u);
  const uint32_t arrived = atomicAdd(&G.sync_arrived, 1u) + 1;
  __threadfence();  // `blocked` before reading `exited` (on_thread_exit)
  {
    uint32_t live = 0;
    for (uint32_t r = 0; r < relaxed(G.ctas) && r < uint32_t(kMaxCtas); ++r)
      live += relaxed(G.cta[r].live) ? relaxed(G.cta[r].threads) - relaxed(G.cta[r].exited) : block_threads();
    if (arrived < live && !maybe_all_blocked(G)) return;  // not the last, no deadlock
  }
  const ClusterLock held(G);
  if (!held) return;
  settle_barriers(G);
  if (G.sync_generation == gen) check_deadlock(G);
}
static __device__ __noinline__ void on_cluster_sync_depart() {
  auto recorded = [&]() -> bool {  // Fast path, no lock: a lane of this warp has learned this generation's clock already.
    const Cluster* c = cluster();
    if (!c) return true;
    if (relaxed(c->cta[ctarank()].warps[warp_id()].dep_cl_gen) == relaxed(c->sync_generation)) return true;
    return false;
  };
  const Hold h(recorded);
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  if (W.dep_cl_gen != G.sync_generation) {
    join(W.vc, G.sync_done_vc);
    W.snap_stale = 1;
    W.dep_cl_gen = G.sync_generation;
  }
}

// A thread enters the kernel (ptx::ProtocolScope): see enter_kernel().
inline __device__ void on_thread_start() {
  if (enabled()) enter_kernel();
}

// What a CTA must not leave behind when its last thread exits: Tensor Memory still allocated, or an
// asynchronous arrive on one of its barriers that may still be in flight.
__device__ inline void check_cta_leaves_nothing(Cluster& G, uint32_t rank) {
  const Cta& tc = G.cta[rank];
  Violation v;
  if (tc.tmem_columns) {
    v.rule = "exit-with-tmem";
    v.what = "a CTA exits with Tensor Memory still allocated";
    v.section = "PTX ISA 9.7.16.7.1 (tcgen05.alloc): all Tensor Memory a CTA allocated must be deallocated before "
                "it exits";
    v.fix = "tcgen05.dealloc every allocation (in a pair, in both CTAs) before the kernel ends";
    v.operand = "still allocated";
    v.tmem = true;
    v.mem_rank = int(rank);
    v.lo = tc.tmem_column;
    v.hi = tc.tmem_column + tc.tmem_columns;
    v.quadrant = kTmemQuadrants;
    report(G, v);
    return;
  }
  for (uint32_t b = 0; b < tc.nbarriers; ++b) {
    const Barrier& bar = tc.barriers[b];
    if (bar.async_phase > bar.observed) {
      v.rule = "exit-with-signal-in-flight";
      v.what = "a CTA exits while an asynchronous arrive on one of its barriers (a tcgen05.commit, a peer's "
               "multicast commit, TMA transaction bytes) may still be in flight: no wait observed its phase";
      v.section = "PTX ISA 9.7.16.12.1 (tcgen05.commit) and 9.7.9.27 (cp.async.bulk): asynchronous operations "
                  "write the barrier's shared memory when they complete, which must happen before the CTA exits";
      v.fix = "before exiting, wait for the last phase of every barrier that commits or copies complete on (the "
              "producer waits on each slot's empty barrier once more)";
      v.bar_rank = int(rank);
      v.bar = int(b);
      report(G, v);
      return;
    }
  }
}

// The CTA's last thread: checks what the CTA leaves behind and counts it out. True: it was the
// cluster's last CTA, so the cluster's state may be freed (after the lock is given back).
__device__ inline bool cta_leaves(Cluster& G, uint32_t rank) {
  const ClusterLock held(G);
  if (!held) return false;
  check_cta_leaves_nothing(G, rank);
  G.exited_ctas += 1;
  const bool release = G.exited_ctas == G.ctas && !aborted();
  if (!release) check_deadlock(G);  // the peer's live threads may now be the only ones left, all waiting
  return release;
}

// A thread leaves the kernel (ptx::ProtocolScope). The CTA's last thread checks what the CTA leaves
// behind; the cluster's last CTA frees the cluster's state.
static __device__ __noinline__ void on_thread_exit() {
  if (!enabled()) return;
  Slot& s = slot();
  const unsigned long long t = *reinterpret_cast<volatile unsigned long long*>(&s.token);
  const uint32_t i = *reinterpret_cast<volatile uint32_t*>(&s.index);
  if (t == 0 || i >= uint32_t(kClusterSlots) || g_protocol.clusters[i].owner != t) return;
  Cluster& G = g_protocol.clusters[i];
  const uint32_t rank = ctarank();
  if (aborted()) return;
  // Exits are counted without the lock (every thread passes here). A blocked thread adds itself to
  // `blocked`, fences, then reads `exited`; an exiting thread adds itself to `exited`, fences, then
  // reads `blocked`: of the two, at least one sees the other, and that one runs the deadlock check.
  const uint32_t before = atomicAdd(&G.cta[rank].exited, 1u);
  __threadfence();
  if (before + 1 != relaxed(G.cta[rank].threads)) {  // not the CTA's last thread
    if (maybe_all_blocked(G)) {
      const ClusterLock held(G);
      if (held) check_deadlock(G);
    }
    return;
  }
  // The slot in shared memory is left as it is: the next CTA on this SM sets its own at entry, and a
  // ticket is never reused, so a stale one names no running cluster. (Clearing it here would race
  // with this CTA's other threads, which read it on their way out.)
  if (cta_leaves(G, rank)) {
    __threadfence();
    atomicExch(&G.ready, 0u);
    atomicExch(&G.owner, 0ull);
  }
}

// Added to a bounded wait's timeout message: the cluster as the checker last saw it. A wait that
// times out although the checker found no deadlock means some thread is not where the model thinks:
// holding the checker's lock, or spinning outside any checked operation.
static __device__ __noinline__ void describe_for_timeout() {
  if (!enabled() || aborted()) return;
  const Slot& s = slot();
  const uint32_t i = s.index;
  if (s.token == 0 || i >= uint32_t(kClusterSlots)) return;
  const Cluster& c = g_protocol.clusters[i];
  const int holder = *reinterpret_cast<const volatile int*>(&c.holder);
  Msg m;
  m.s("  protocol checker: its state is ");
  if (holder) m.s("locked by thread ").u(uint32_t(holder - 1) & 0xFFFF).s(" of CTA rank ").u(uint32_t(holder - 1) >> 16);
  else m.s("not locked");
  for (uint32_t r = 0; r < c.ctas; ++r) {
    const Cta& t = c.cta[r];
    m.s("; CTA rank ").u(r).s(": ").u(t.threads).s(" threads, ").u(t.blocked).s(" waiting, ").u(t.exited).s(" exited");
    for (uint32_t b = 0; b < t.nbarriers; ++b)
      for (uint32_t p = 0; p < 2; ++p)
        if (t.barriers[b].waiting[p]) m.s(", ").u(t.barriers[b].waiting[p]).s(" on '").s(t.barriers[b].name).s("'");
  }
  printf("%s\n", m.buf);
}

}  // namespace gemm::protocol::dev
#endif  // GEMM_PROTOCOL_ACTIVE
