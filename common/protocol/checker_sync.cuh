// The protocol checker's records of the synchronisation that kernels written elsewhere use beyond the
// first wrappers of common/ptx: named barriers (bar.sync / bar.arrive with an id and a thread count),
// 1-D bulk copies multicast into several CTAs of the cluster, and the CTA pair's collective Tensor
// Memory alloc. Without these records a port needed hooks of its own: a named barrier that hands
// Tensor Memory or shared memory from warp to warp looked unordered (a false report), and the threads
// waiting at it were invisible to the deadlock check.
//
// Included once, at the end of common/protocol/checker.cuh, whose state, lock, clocks and reports it
// uses; its state is NamedBarrier and Cta::pair_allocs (checker_state.h). The rules and their PTX ISA
// sections are in docs/protocol_checker.md.
#pragma once

#if GEMM_PROTOCOL_ACTIVE
namespace gemm::protocol::dev {

// ---- Holding the cluster's state ---------------------------------------------------------------------

// A hook's hold on its cluster: the warp's turn (WarpTurn, taken first by the caller), then the lock.
// `ok` is false where report mode has ended the checked work; the lock is then already released.
struct Held {
  Cluster& c;
  bool ok;
  __device__ explicit Held(Cluster& cluster) : c(cluster), ok(true) {
    lock(c);
    if (aborted()) {
      unlock(c);
      ok = false;
    }
  }
  __device__ ~Held() {
    if (ok) unlock(c);
  }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
};

// The calling CTA's cluster state whatever the mode: a warp blocked at a named barrier must still read
// its generation after report mode has ended the checked work (cluster() then answers nullptr).
__device__ inline Cluster* own_cluster() {
  const Slot& s = slot();
  const unsigned long long t = relaxed(s.token);
  const uint32_t i = relaxed(s.index);
  if (g_protocol.clusters == nullptr || t == 0 || i >= uint32_t(kClusterSlots)) return nullptr;
  Cluster* c = g_protocol.clusters + i;
  return relaxed(c->owner) == t ? c : nullptr;
}

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
  Cluster* cp = cluster();
  if (!cp) return {aborted() ? kNamedSkip : kNamedIssue, 0};
  WarpTurn turn;
  Held h(*cp);
  if (!h.ok) return {kNamedSkip, 0};
  Cluster& G = *cp;
  const uint32_t rank = ctarank(), warp = warp_id(), mine = warp_threads();
  Cta& t = G.cta[rank];
  Warp& W = t.warps[warp];
  W.used = 1;
  W.acts += 1;
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
  WarpTurn turn;
  lock(*cp);  // decided under the lock: an arrival that completes the generation holds it too
  uint32_t step = aborted() ? kNamedSkip : kNamedWait;
  if (nb.generation != generation) {
    learn_named(cp->cta[ctarank()].warps[warp_id()], nb);
    step = kNamedIssue;
  }
  unlock(*cp);
  return step;
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

// ---- Copies that land in another CTA ---------------------------------------------------------------------

// A copy of `bytes` into [off, off + bytes) of CTA `mem`'s shared memory, completing on barrier b of
// CTA `mem` (a multicast copy's share, PTX ISA 9.7.9.25.4.1): the same checks and records as
// on_tma_load, for a destination that need not be the issuer's CTA. False: reported.
__device__ inline bool copy_lands(Cluster& G, uint32_t rank, uint32_t warp, Warp& W, uint32_t mem, uint32_t off,
                                  uint32_t bytes, int b) {
  Barrier& bar = G.cta[mem].barriers[b];
  Violation v = base_violation(rank, warp);
  v.rule = "tma-overwrites-unfinished";
  v.what = "a bulk copy overwrites shared memory whose earlier accesses are not visible as finished to the issuing "
           "thread (a slot refilled before its consumers, in this CTA or a peer, released it)";
  v.section = "PTX ISA 9.7.9.25.4.1 (cp.async.bulk) and 8 (memory consistency): the issuing thread must have "
              "observed the earlier readers' release (a commit or arrive it waited for)";
  v.fix = "wait on the slot's empty barrier, released by the consumers of every CTA the copy lands in, before "
          "refilling it";
  v.operand = "multicast copy destination";
  v.bar_rank = int(mem);
  v.bar = b;
  if (!access_smem(G, mem, off, off + bytes, Access::kAsyncWrite, W.vc, record(bar_agent(mem, uint32_t(b)), bar.completed + 1), v))
    return false;
  bar.tx -= int32_t(bytes);
  bar.tx_seen += bytes;
  bar.async_phase = bar.completed + 1;
  if (bar.pending == 0 && bar.tx < 0) {
    Violation o = base_violation(rank, warp);
    o.rule = "tx-overflow";
    o.what = "bulk-copy transaction bytes beyond what arrive.expect_tx announced for the barrier's current phase "
             "(a multicast copy's bytes count on the barrier of every CTA it lands in)";
    o.section = "PTX ISA 9.7.13.15.2 (tx-count): the bytes completed in a phase must equal the bytes expected";
    o.fix = "each CTA announces on its own barrier the bytes of every copy that lands in it, its peers' multicasts "
            "included";
    o.bar_rank = int(mem);
    o.bar = b;
    o.numbers = "(bytes of this copy, bytes counted in the phase)";
    o.a = bytes;
    o.b = bar.tx_seen;
    report(G, o);
    return false;
  }
  maybe_complete(G, mem, uint32_t(b));
  return true;
}

// cp.async.bulk...multicast::cluster: `bytes` at dst's offset in every CTA of `mask`, each share
// completing on the barrier at bar's offset in the CTA it lands in.
static __device__ __noinline__ void on_bulk_copy_multicast(uint32_t dst_addr, uint32_t bytes, uint32_t bar_addr,
                                                           uint32_t mask) {
  Cluster* cp = cluster();
  if (!cp) return;
  WarpTurn turn;
  Held h(*cp);
  if (!h.ok) return;
  Cluster& G = *cp;
  const uint32_t rank = ctarank(), warp = warp_id();
  Warp& W = G.cta[rank].warps[warp];
  W.used = 1;
  W.acts += 1;
  for (uint32_t r = 0; r < G.ctas; ++r) {
    if (!(mask & (1u << r))) continue;
    const int b = live_barrier(G, r, smem_offset(bar_addr), rank, warp,
                               "a multicast copy completes on a barrier never initialised");
    if (b < 0 || !copy_lands(G, rank, warp, W, r, smem_offset(dst_addr), bytes, b)) return;
  }
}

// ---- The pair's collective alloc (PTX ISA 9.7.16.7.1) ---------------------------------------------------
//
// tcgen05.alloc.cta_group::2 is one operation of the pair: a warp of each CTA issues it and both
// receive the same columns. Recorded per CTA, the leader's mma could reach the checker before the
// peer's alloc record and be reported as using columns the peer does not hold. So the pair's k-th
// collective alloc is recorded once, by whichever CTA's record comes first, for both CTAs; the other
// CTA's record of the same alloc then finds its columns held and clears nothing (the mma may already
// have written them).

// Records tcgen05.alloc of `ncols` columns at `column` for CTA `rank` (with cta_group::2, for its pair).
__device__ inline void record_alloc(Cluster& G, uint32_t rank, uint32_t column, uint32_t ncols, int cta_group) {
  const uint32_t first = cta_group == 2 ? rank & ~1u : rank;
  const uint32_t members = cta_group == 2 && G.ctas > first + 1 ? 2u : 1u;
  Cta& me = G.cta[rank];
  me.pair_allocs += 1;
  if (cta_group == 2 && members == 2 && G.cta[first + (rank == first ? 1u : 0u)].pair_allocs >= me.pair_allocs)
    return;  // the peer recorded this alloc for both CTAs
  for (uint32_t m = first; m < first + members; ++m) {
    Cta& t = G.cta[m];
    t.tmem_column = column;
    t.tmem_columns = ncols;
    t.tmem_group = uint32_t(cta_group);
    for (uint32_t q = 0; q < uint32_t(kTmemQuadrants); ++q)
      for (uint32_t cc = column; cc < column + ncols && cc < uint32_t(kTmemColumns); ++cc) {
        Line& l = t.tmem[q][cc];
        l.write = 0;
        for (int k = 0; k < kReadSlots; ++k) l.read[k] = 0;
      }
  }
}

}  // namespace gemm::protocol::dev
#endif  // GEMM_PROTOCOL_ACTIVE
