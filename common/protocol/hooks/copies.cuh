// The copies' hooks: TMA loads and bulk copies into shared memory (of this CTA, of a CTA pair's
// leader's barrier, or multicast into several CTAs), and TMA stores out of it with their bulk groups.
//
// Part of the protocol checker: included by common/protocol/checker.cuh only, in its order.
#pragma once

#ifndef GEMM_PROTOCOL_CHECKER_PARTS
#error "include common/protocol/checker.cuh, not its parts"
#endif

#if GEMM_PROTOCOL_ACTIVE
namespace gemm::protocol::dev {

// A copy's bytes landing: [off, off + bytes) of CTA `mem`'s shared memory written by the async proxy,
// completing on barrier b of CTA `bar_rank`. A TMA load lands in the issuing CTA (with .cta_group::2
// the odd CTA's bytes complete on the leader's barrier); a multicast copy's share lands in, and
// completes on the barrier of, each receiving CTA (PTX ISA 9.7.9.25.4.1). False: reported.
__device__ inline bool copy_lands(Cluster& G, uint32_t rank, uint32_t warp, const Warp& W, uint32_t mem, uint32_t off,
                                  uint32_t bytes, uint32_t bar_rank, int b, bool multicast) {
  Barrier& bar = G.cta[bar_rank].barriers[b];
  Violation v = base_violation(rank, warp);
  v.rule = "tma-overwrites-unfinished";
  if (multicast) {
    v.what = "a bulk copy overwrites shared memory whose earlier accesses are not visible as finished to the issuing "
             "thread (a slot refilled before its consumers, in this CTA or a peer, released it)";
    v.section = "PTX ISA 9.7.9.25.4.1 (cp.async.bulk) and 8 (memory consistency): the issuing thread must have "
                "observed the earlier readers' release (a commit or arrive it waited for)";
    v.fix = "wait on the slot's empty barrier, released by the consumers of every CTA the copy lands in, before "
            "refilling it";
    v.operand = "multicast copy destination";
  } else {
    v.what = "a TMA load overwrites shared memory whose earlier accesses are not visible as finished to the issuing "
             "thread (a slot refilled before its consumers released it)";
    v.section = "PTX ISA 9.7.9.27 (cp.async.bulk.tensor) and 8 (memory consistency): the issuing thread must have "
                "observed the earlier readers' release (a commit or arrive it waited for)";
    v.fix = "wait on the slot's empty barrier (whose phase the consumers' tcgen05.commit or arrive completes) before "
            "refilling it";
    v.operand = "TMA destination";
  }
  v.bar_rank = int(bar_rank);
  v.bar = b;
  if (!access_smem(G, mem, off, off + bytes, Access::kAsyncWrite, W.vc,
                   record(bar_agent(bar_rank, uint32_t(b)), bar.completed + 1), v))
    return false;
  bar.tx -= int32_t(bytes);
  bar.tx_seen += bytes;
  bar.async_phase = bar.completed + 1;
  if (bar.pending == 0 && bar.tx < 0) {
    Violation o = base_violation(rank, warp);
    o.rule = "tx-overflow";
    o.what = multicast ? "bulk-copy transaction bytes beyond what arrive.expect_tx announced for the barrier's current "
                         "phase (a multicast copy's bytes count on the barrier of every CTA it lands in)"
                       : "TMA transaction bytes beyond what arrive.expect_tx announced for the barrier's current phase";
    o.section = "PTX ISA 9.7.13.15.2 (tx-count): the bytes completed in a phase must equal the bytes expected";
    o.fix = multicast ? "each CTA announces on its own barrier the bytes of every copy that lands in it, its peers' "
                        "multicasts included"
                      : "announce the bytes of every copy of the phase (both CTAs' for a pair) in expect_tx, and give "
                        "each copy its true box size";
    o.bar_rank = int(bar_rank);
    o.bar = b;
    o.numbers = "(bytes of this copy, bytes counted in the phase)";
    o.a = bytes;
    o.b = bar.tx_seen;
    report(G, o);
    return false;
  }
  maybe_complete(G, bar_rank, uint32_t(b));
  return true;
}

// A TMA load (or bulk copy) of `bytes` into [dst, dst + bytes) of this CTA, completing on the barrier
// at bar_addr's offset in CTA `bar_rank`.
static __device__ __noinline__ void on_tma_load(uint32_t dst_addr, uint32_t bytes, uint32_t bar_addr, uint32_t bar_rank) {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  const int b = live_barrier(G, bar_rank, smem_offset(bar_addr), rank, warp,
                             "a TMA load completes on a barrier never initialised");
  if (b >= 0) copy_lands(G, rank, warp, W, rank, smem_offset(dst_addr), bytes, bar_rank, b, false);
}

// cp.async.bulk...multicast::cluster: `bytes` at dst's offset in every CTA of `mask`, each share
// completing on the barrier at bar's offset in the CTA it lands in.
static __device__ __noinline__ void on_bulk_copy_multicast(uint32_t dst_addr, uint32_t bytes, uint32_t bar_addr,
                                                           uint32_t mask) {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  for (uint32_t r = 0; r < G.ctas; ++r) {
    if (!(mask & (1u << r))) continue;
    const int b = live_barrier(G, r, smem_offset(bar_addr), rank, warp,
                               "a multicast copy completes on a barrier never initialised");
    if (b < 0 || !copy_lands(G, rank, warp, W, r, smem_offset(dst_addr), bytes, r, b, true)) return;
  }
}

// TMA store of [src, src + bytes) by this warp, read by its bulk-copy unit as part of the next group.
static __device__ __noinline__ void on_tma_store(uint32_t src_addr, uint32_t bytes) {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  Violation v = base_violation(rank, warp);
  v.rule = "tma-store-reads-unfinished";
  v.what = "a TMA store reads shared memory whose last write is not visible to the issuing warp";
  v.section = "PTX ISA 9.7.9.27 (cp.async.bulk.tensor, shared::cta to global) and 9.7.13.4 (fence.proxy.async)";
  v.fix = "every warp that wrote the staging buffer fences (fence.proxy.async) and synchronises with the issuing "
          "warp before the store is issued";
  v.operand = "TMA store source";
  const uint32_t off = smem_offset(src_addr);
  access_smem(G, rank, off, off + bytes, Access::kAsyncRead, W.vc, record(bulk_agent(rank, warp), W.bulk_committed + 1), v);
}

static __device__ __noinline__ void on_bulk_commit() {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  W.bulk_committed += 1;
}

// cp.async.bulk.wait_group(.read) N: all but the newest N groups have read their sources.
static __device__ __noinline__ void on_bulk_wait(uint32_t n) {
  const Hold h;
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  if (W.bulk_committed >= n) {
    const uint32_t a = bulk_agent(rank, warp);
    if (W.vc[a] < W.bulk_committed - n) {
      W.vc[a] = W.bulk_committed - n;
      W.snap_stale = 1;
    }
  }
}

}  // namespace gemm::protocol::dev
#endif  // GEMM_PROTOCOL_ACTIVE
