// Tensor Memory's hooks: tcgen05.ld and wait::ld, and the allocation (alloc, the CTA pair's collective
// alloc recorded once, dealloc, relinquish_alloc_permit). These are .sync.aligned instructions, recorded
// once per warp (warp_op, at the end).
//
// Part of the protocol checker: included by common/protocol/checker.cuh only, in its order.
#pragma once

#ifndef GEMM_PROTOCOL_CHECKER_PARTS
#error "include common/protocol/checker.cuh, not its parts"
#endif

#if GEMM_PROTOCOL_ACTIVE
namespace gemm::protocol::dev {

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

static __device__ __noinline__ void on_tc_wait_ld_record() {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  W.ld_waited = 1;
}

// tcgen05.ld of `n` columns from `taddr` (quadrant from its lane field).
static __device__ __noinline__ void on_tc_ld_record(uint32_t taddr, uint32_t n) {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  const uint32_t col = taddr & 0xFFFF, q = ((taddr >> 16) % 128) / 32;
  Violation v = base_violation(rank, warp);
  v.operand = "tcgen05.ld source";
  if (!columns_allocated(G, rank, col, n, v)) return;
  v.tmem = true;
  v.mem_rank = int(rank);
  v.lo = col;
  v.hi = col + n;
  v.quadrant = q;
  // Pre-pass, kRound cells at a time: every cell written, and its write visible to the warp (its snapshot)?
  bool clear = true;
  for (uint32_t cc = col; cc < col + n && cc < uint32_t(kTmemColumns); cc += kRound) {
    uint4 l[kRound];
#pragma unroll
    for (int i = 0; i < kRound; ++i) l[i] = cc + i < col + n ? load_line(G.cta[rank].tmem[q][cc + i]) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int i = 0; i < kRound; ++i) clear &= (cc + i >= col + n) | ((l[i].x != 0) & !unseen(W.snap, l[i].x));
  }
  for (uint32_t cc = col; !clear && cc < col + n; ++cc) {  // the exact loop, which reports
    const Line& l = G.cta[rank].tmem[q][cc];
    if (l.write == 0) {
      v.rule = "ld-unwritten";
      v.what = "tcgen05.ld of Tensor Memory that nothing has written since it was allocated";
      v.section = "PTX ISA 9.7.16.7.1 (tcgen05.alloc): the contents of newly allocated Tensor Memory are undefined";
      v.fix = "read only columns an mma (or cp) wrote, after waiting for the commit covering it";
      report(G, v);
      return;
    }
    if (!visible(W.snap, l.write) && visible(W.vc, l.write)) {
      v.rule = "missing-tcgen05-fence";
      v.what = "tcgen05.ld of Tensor Memory whose write the warp has waited for, but without "
               "tcgen05.fence::after_thread_sync between the wait and the load";
      v.section = "PTX ISA 9.7.16.6.4 (tcgen05.fence::after_thread_sync)";
      v.fix = "tcgen05.fence::after_thread_sync right after the wait";
      v.earlier = l.write;
      report(G, v);
      return;
    }
    if (!visible(W.snap, l.write)) {
      v.numbers = "(epoch of the write, epoch of the tensor core's work this warp has seen)";
      v.a = rec_epoch(l.write);
      v.b = W.snap[rec_agent(l.write)];
      v.rule = "ld-before-commit";
      v.what = "tcgen05.ld of Tensor Memory whose last write (an mma or cp) is not visible to the reading warp: the "
               "accumulator read before the commit covering it was waited for";
      v.section = "PTX ISA 9.7.16.12.1 (tcgen05.commit) and 9.7.16.6.4 (tcgen05.fence): results are readable after "
                  "waiting on the commit's barrier, then tcgen05.fence::after_thread_sync";
      v.fix = "wait on the barrier the commit after the tile's last mma arrives on, then "
              "tcgen05.fence::after_thread_sync, then tcgen05.ld";
      v.earlier = l.write;
      report(G, v);
      return;
    }
  }
  const uint32_t pending = record(warp_agent(rank, warp), kPendingEpoch), entry = q << 20 | col << 8 | n;
  add_reads(&G.cta[rank].tmem[q][col], n, pending);
  bool listed = false;
  for (uint32_t i = 0; i < W.npending; ++i) listed = listed || W.pending[i] == entry;
  if (!listed) {
    if (W.npending == uint32_t(kPendingLd)) {
      Violation o = base_violation(rank, warp);
      o.rule = "unsupported";
      o.what = "more tcgen05.ld in flight in one warp (between tcgen05.fence::before_thread_sync) than the checker keeps";
      o.section = "the checker's limit kPendingLd (common/protocol/checker_state.h)";
      o.fix = "raise kPendingLd";
      report(G, o);
    } else {
      W.pending[W.npending++] = entry;
    }
  }
  W.ld_waited = 0;
}

static __device__ __noinline__ void on_alloc_record(uint32_t taddr, uint32_t ncols, int cta_group) {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  Cta& t = G.cta[rank];
  Violation v = base_violation(rank, warp);
  if (t.relinquished) {
    v.rule = "alloc-after-relinquish";
    v.what = "tcgen05.alloc after this CTA gave up its permit to allocate (tcgen05.relinquish_alloc_permit)";
    v.section = "PTX ISA 9.7.16.7.1 (tcgen05.relinquish_alloc_permit): the CTA may not allocate again";
    v.fix = "relinquish only after the CTA's last alloc";
    report(G, v);
  } else if (cta_group == 2 && !t.cluster_synced) {
    v.rule = "pair-alloc-before-peer-known";
    v.what = "a cta_group::2 tcgen05.alloc before this CTA knows its peer CTA is running";
    v.section = "PTX ISA 9.7.16.7.1 (tcgen05.alloc): with .cta_group::2 the issuing warp must make sure the peer CTA "
                "is launched and still active";
    v.fix = "pass a cluster barrier (ptx::cluster_sync) in both CTAs before the collective alloc";
    report(G, v);
  } else {
    record_alloc(G, rank, taddr & 0xFFFF, ncols, cta_group);
  }
}

static __device__ __noinline__ void on_dealloc_record(uint32_t taddr, uint32_t ncols) {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  Cta& t = G.cta[rank];
  const uint32_t col = taddr & 0xFFFF;
  Violation v = base_violation(rank, warp);
  v.operand = "deallocated columns";
  v.tmem = true;  // every message of this hook names the columns (the loop below narrows them to one cell)
  v.mem_rank = int(rank);
  v.lo = col;
  v.hi = col + ncols;
  v.quadrant = kTmemQuadrants;
  if (!columns_allocated(G, rank, col, ncols, v)) return;
  if (G.cta[t.tmem_group == 2 ? rank & ~1u : rank].tc_uncommitted) {
    v.rule = "work-never-committed";
    v.what = "tcgen05.dealloc while the tensor core has mma/cp work that no tcgen05.commit covers: nothing can ever "
             "tell that work finished";
    v.section = "PTX ISA 9.7.16.12.1 (tcgen05.commit): completion of tcgen05.mma/cp is tracked only through a commit";
    v.fix = "commit after the last mma or cp, and wait for that commit before reading or deallocating";
    report(G, v);
    return;
  }
  // Pre-pass over every cell of the allocation (up to 4 x 512), kRound at a time: are all accesses finished
  // for this warp? Only then is the exact loop below, which names the first bad cell, skipped.
  bool bad = false;
  for (uint32_t q = 0; q < uint32_t(kTmemQuadrants); ++q)
    for (uint32_t cc = col; cc < col + ncols && cc < uint32_t(kTmemColumns); cc += kRound) {
      uint4 l[kRound];
#pragma unroll
      for (int i = 0; i < kRound; ++i) l[i] = cc + i < col + ncols ? load_line(t.tmem[q][cc + i]) : make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int i = 0; i < kRound; ++i) bad |= unseen(W.vc, l[i].x) | unseen(W.vc, l[i].y) | unseen(W.vc, l[i].z) | unseen(W.vc, l[i].w);
    }
  for (uint32_t q = 0; bad && q < uint32_t(kTmemQuadrants); ++q)
    for (uint32_t cc = col; cc < col + ncols; ++cc) {
      const Line& l = t.tmem[q][cc];
      const bool w_bad = !visible(W.vc, l.write);
      int r_bad = -1;
      for (int k = 0; k < kReadSlots && r_bad < 0; ++k)
        if (!visible(W.vc, l.read[k])) r_bad = k;
      if (w_bad || r_bad >= 0) {
        const bool peer = w_bad && rec_agent(l.write) / kAgentsPerCta != rank;
        v.rule = peer ? "dealloc-while-peer-issues" : "dealloc-pending";
        v.what = peer ? "tcgen05.dealloc in one CTA of a pair while the pair's tensor core may still write its columns "
                        "(the peer's work is not visible as finished here)"
                      : "tcgen05.dealloc of columns whose last accesses are not visible as finished to the "
                        "deallocating warp";
        v.section = "PTX ISA 9.7.16.7.1 (tcgen05.dealloc): columns are deallocated after all their accesses "
                    "completed; with .cta_group::2 both CTAs' work on them";
        v.fix = "wait for the commit covering the last mma, finish every tcgen05.ld (wait::ld, fence), and in a pair "
                "pass a cluster barrier before dealloc";
        v.tmem = true;
        v.mem_rank = int(rank);
        v.lo = cc;
        v.hi = cc + 1;
        v.quadrant = q;
        v.earlier = w_bad ? l.write : l.read[r_bad];
        v.earlier_is_read = !w_bad;
        report(G, v);
        return;
      }
    }
  t.tmem_columns = 0;
}

static __device__ __noinline__ void on_relinquish_record() {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  G.cta[rank].relinquished = 1;
}

// ---- The hooks the wrappers call -----------------------------------------------------------------
//
// Lanes of a warp may reach a hook together or apart (independent thread scheduling), and nothing
// here may depend on which: __activemask() only says which lanes happen to run together at that
// instruction, and a __syncwarp over the mask it returned can wait for a lane that saw another mask
// (a hang seen on an H200). So every on_X above runs in the thread that calls it and records that
// thread's operation before the thread goes on (an instruction it issues; a wait, a fence or a
// CTA/cluster barrier as one more thread of its warp doing it: the deadlock check counts threads).
// The exceptions are the .sync.aligned instructions below (alloc, dealloc, relinquish, tcgen05.ld,
// wait::ld), which the ISA runs with the whole warp converged: one operation of the warp, recorded
// once by lane 0 between two full-warp __syncwarp()s.
template <class F>
__device__ __forceinline__ void warp_op(F f) {
  __syncwarp();
  if (lane_id() == 0) f();
  __syncwarp();
}

inline __device__ void on_tc_wait_ld() { warp_op([&] { on_tc_wait_ld_record(); }); }
inline __device__ void on_tc_ld(uint32_t taddr, uint32_t n) { warp_op([&] { on_tc_ld_record(taddr, n); }); }
inline __device__ void on_alloc(uint32_t taddr, uint32_t ncols, int cta_group) {
  warp_op([&] { on_alloc_record(taddr, ncols, cta_group); });
}
inline __device__ void on_dealloc(uint32_t taddr, uint32_t ncols) { warp_op([&] { on_dealloc_record(taddr, ncols); }); }
inline __device__ void on_relinquish() { warp_op([&] { on_relinquish_record(); }); }

}  // namespace gemm::protocol::dev
#endif  // GEMM_PROTOCOL_ACTIVE
