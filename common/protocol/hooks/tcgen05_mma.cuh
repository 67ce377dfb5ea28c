// The tensor core's hooks: the tcgen05 fences a warp orders its tensor-core work with, and the
// asynchronous operations the tensor core runs in issue order (mma of every kind, cp, commit).
//
// Part of the protocol checker: included by common/protocol/checker.cuh only, in its order.
#pragma once

#ifndef GEMM_PROTOCOL_CHECKER_PARTS
#error "include common/protocol/checker.cuh, not its parts"
#endif

#if GEMM_PROTOCOL_ACTIVE
namespace gemm::protocol::dev {

// tcgen05.fence::after_thread_sync: this warp's tcgen05 work from now on sees what the warp knows.
static __device__ __noinline__ void on_tc_fence_after() {
  auto recorded = [&]() -> bool {  // Fast path, no lock: the snapshot is already this warp's clock.
    const Cluster* c = cluster();
    if (!c) return true;
    if (!relaxed(c->cta[ctarank()].warps[warp_id()].snap_stale)) return true;
    return false;
  };
  const Hold h(recorded);
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  if (W.snap_stale) {
    copy_clock(W.snap, W.vc);
    W.snap_stale = 0;
  }
}

// tcgen05.fence::before_thread_sync: the warp's finished tcgen05.ld become visible through its next
// arrive or barrier.
static __device__ __noinline__ void on_tc_fence_before() {
  auto recorded = [&]() -> bool {  // Fast path, no lock: no finished tcgen05.ld of this warp waits to be published.
    const Cluster* c = cluster();
    if (!c) return true;
    const Warp& w = c->cta[ctarank()].warps[warp_id()];
    if (!relaxed(w.ld_waited) || !relaxed(w.npending)) return true;
    return false;
  };
  const Hold h(recorded);
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  if (W.ld_waited && W.npending) {
    const uint32_t me = warp_agent(rank, warp), done = record(me, W.vc[me]), pending = record(me, kPendingEpoch);
    for (uint32_t i = 0; i < W.npending; ++i) {
      const uint32_t q = W.pending[i] >> 20, col = (W.pending[i] >> 8) & 0xFFF, n = W.pending[i] & 0xFF;
      for (uint32_t cc = col; cc < col + n && cc < uint32_t(kTmemColumns); ++cc) {
        Line& l = G.cta[rank].tmem[q][cc];
        for (int k = 0; k < kReadSlots; ++k)
          if (l.read[k] == pending) l.read[k] = done;
      }
    }
    W.npending = 0;
    W.ld_waited = 0;
  }
}

// An mma of any kind (tcgen05::MmaKind): its descriptor is decoded as that kind lays out M and N;
// kind::f16 reads no scale factors (sfa_tmem, sfb_tmem unused).
static __device__ __noinline__ void on_mma(uint32_t d_tmem, uint64_t adesc, uint64_t bdesc, uint32_t idesc, uint32_t sfa_tmem,
                              uint32_t sfb_tmem, int cta_group, uint32_t kind = uint32_t(tcgen05::MmaKind::kMxf4Nvf4)) {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  uint32_t* tc = tc_clock(G, rank, W);
  const tcgen05::MmaShape shape = tcgen05::mma_shape(tcgen05::MmaKind(kind), idesc);
  const uint32_t n = shape.n, m_rows = shape.m / uint32_t(cta_group);
  uint32_t lo, hi;
  operand_lines(tcgen05::decode_smem_descriptor(adesc), m_rows, lo, hi);
  bool ok = tc_reads_smem(G, rank, warp, cta_group, lo, hi, tc, "mma operand A");
  if (ok) {
    operand_lines(tcgen05::decode_smem_descriptor(bdesc), n / uint32_t(cta_group), lo, hi);
    ok = tc_reads_smem(G, rank, warp, cta_group, lo, hi, tc, "mma operand B");
  }
  ok = ok && (!shape.scaled || tc_reads_tmem(G, rank, warp, cta_group, sfa_tmem & 0xFFFF, 4, tc, "mma scale factors A"));
  ok = ok && (!shape.scaled ||
              tc_reads_tmem(G, rank, warp, cta_group, sfb_tmem & 0xFFFF, (n + 31) / 32, tc, "mma scale factors B"));
  ok = ok && tc_writes_tmem(G, rank, warp, cta_group, d_tmem & 0xFFFF, n, tc, "mma accumulator D");
  G.cta[rank].tc_uncommitted = 1;
}

static __device__ __noinline__ void on_cp(uint32_t taddr, uint64_t sdesc, int cta_group) {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  uint32_t* tc = tc_clock(G, rank, W);
  const uint32_t lo = smem_offset(tcgen05::decode_smem_descriptor(sdesc).start);
  if (tc_reads_smem(G, rank, warp, cta_group, lo, lo + 512, tc, "tcgen05.cp source (scale factors)"))
    tc_writes_tmem(G, rank, warp, cta_group, taddr & 0xFFFF, 4, tc, "tcgen05.cp destination (scale factors)");
  G.cta[rank].tc_uncommitted = 1;
}

// tcgen05.commit: one arrival on each barrier of the mask once the tensor core's work so far is done.
static __device__ __noinline__ void on_commit(uint32_t bar_addr, uint32_t mask) {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  uint32_t* tc = G.cta[rank].tc_vc;
  const uint32_t off = smem_offset(bar_addr);
  for (uint32_t r = 0; r < G.ctas; ++r) {
    if (!(mask & (1u << r))) continue;
    const int b = live_barrier(G, r, off, rank, warp, "a tcgen05.commit arrives on a barrier never initialised");
    if (b < 0 || !arrive_on(G, r, uint32_t(b), tc, true, rank, warp)) break;
  }
  tc[tc_agent(rank)] += 1;
  G.cta[rank].tc_uncommitted = 0;
}

}  // namespace gemm::protocol::dev
#endif  // GEMM_PROTOCOL_ACTIVE
