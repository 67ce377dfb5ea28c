// Generic shared-memory accesses a kernel declares (ptx::protocol_generic_write / _read) and the
// proxy fence that makes generic stores visible to the async proxy.
//
// Part of the protocol checker: included by common/protocol/checker.cuh only, in its order.
#pragma once

#ifndef GEMM_PROTOCOL_CHECKER_PARTS
#error "include common/protocol/checker.cuh, not its parts"
#endif

#if GEMM_PROTOCOL_ACTIVE
namespace gemm::protocol::dev {

// fence.proxy.async: this warp's generic writes so far may be read by the async proxy.
// Lanes after the first find no generic store of the warp since its latest fence: nothing to add.
static __device__ __noinline__ void on_fence_proxy_async() {
  auto recorded = [&]() -> bool {
    const Cluster* c = cluster();
    if (!c) return true;
    const Warp& w = c->cta[ctarank()].warps[warp_id()];
    const uint32_t n = relaxed(w.nfences), last = n ? relaxed(w.fences[(n - 1) % kFenceRing]) : 0;
    if (relaxed(w.generic_epoch) <= last) return true;
    return false;
  };
  const Hold h(recorded);
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  const uint32_t me = warp_agent(rank, warp);
  if (W.generic_epoch > (W.nfences ? W.fences[(W.nfences - 1) % kFenceRing] : 0)) {
    W.fences[W.nfences++ % kFenceRing] = W.vc[me];
    W.vc[me] += 1;
    W.snap_stale = 1;
  }
}

// Generic (st.shared / ld.shared) accesses a kernel declares: ptx::protocol_generic_write/read.
// Lanes naming one range (a warp's staging buffer) record the same access again, which changes nothing.
static __device__ __noinline__ void on_generic(uint32_t addr, uint32_t bytes, bool write) {
  if (bytes == 0) return;
  auto recorded = [&]() -> bool {  // Fast path, no lock: the first and last lines already carry this warp's access at its current epoch.
    const Cluster* c = cluster();
    if (!c) return true;
    const uint32_t r = ctarank(), me = warp_agent(r, warp_id());
    const Cta& t = c->cta[r];
    const uint32_t rec = record(me, relaxed(t.warps[warp_id()].vc[me]));
    const uint32_t first = smem_offset(addr) / kGranuleBytes, last = (smem_offset(addr) + bytes - 1) / kGranuleBytes;
    auto has = [&](uint32_t g) {
      if (g >= uint32_t(kGranules)) return true;
      if (write) return relaxed(t.smem[g].write) == rec;
      for (int k = 0; k < kReadSlots; ++k)
        if (relaxed(t.smem[g].read[k]) == rec) return true;
      return false;
    };
    if (has(first) && has(last)) return true;
    return false;
  };
  const Hold h(recorded);
  if (!h) return;
  auto [G, W, rank, warp] = h.state();
  Violation v = base_violation(rank, warp);
  v.operand = write ? "generic store" : "generic load";
  if (write) {
    v.rule = "store-overwrites-unfinished";
    v.what = "generic stores overwrite shared memory whose earlier accesses (a TMA store still reading it, a TMA "
             "load, tensor-core reads) are not visible as finished to the storing warp";
    v.section = "PTX ISA 9.7.9.27.2 (cp.async.bulk.wait_group.read) and 9.7.16.12 (tcgen05.commit): a source is "
                "reusable once its readers are known to be done";
    v.fix = "before rewriting a TMA store's source, cp.async.bulk.wait_group.read in the warp that issued it; "
            "before rewriting an operand, wait for the commit covering its readers";
  } else {
    v.rule = "load-before-write-visible";
    v.what = "generic loads read shared memory whose last write is not visible to the reading warp";
    v.section = "PTX ISA 9.7.13.15 (mbarrier) and 8 (memory consistency): a reader observes a write through the "
                "barrier the writer released";
    v.fix = "wait on the barrier that the writer (TMA load, or the storing warp's arrive) completes";
  }
  const uint32_t off = smem_offset(addr), me = warp_agent(rank, warp);
  if (access_smem(G, rank, off, off + bytes, write ? Access::kGenericWrite : Access::kGenericRead, W.vc, record(me, W.vc[me]), v) &&
      write)
    W.generic_epoch = W.vc[me];
}

}  // namespace gemm::protocol::dev
#endif  // GEMM_PROTOCOL_ACTIVE
