// The records of shared memory (128-byte lines) and Tensor Memory (32-lane cells): who last wrote and
// read each, and whether an access is ordered after them.
//
// Part of the protocol checker: included by common/protocol/checker.cuh only, in its order.
#pragma once

#ifndef GEMM_PROTOCOL_CHECKER_PARTS
#error "include common/protocol/checker.cuh, not its parts"
#endif

#if GEMM_PROTOCOL_ACTIVE
namespace gemm::protocol::dev {

__device__ __forceinline__ bool is_generic(const Cta& t, uint32_t g) { return (t.smem_generic[g / 32] >> (g % 32)) & 1; }
__device__ __forceinline__ void set_generic(Cta& t, uint32_t g, bool on) {
  if (on) t.smem_generic[g / 32] |= 1u << (g % 32);
  else t.smem_generic[g / 32] &= ~(1u << (g % 32));
}

__device__ inline void add_read(Line& l, uint32_t r) {
  const uint32_t agent = rec_agent(r);
  int free_slot = -1;
  for (int k = 0; k < kReadSlots; ++k) {
    if (l.read[k] && rec_agent(l.read[k]) == agent) {
      l.read[k] = r;
      return;
    }
    if (!l.read[k] && free_slot < 0) free_slot = k;
  }
  l.read[free_slot >= 0 ? free_slot : 0] = r;  // more readers than remembered: the oldest slot goes
}

// add_read on a line held in registers (x: the write, y z w: the reads).
__device__ __forceinline__ uint4 with_read(uint4 l, uint32_t r) {
  const uint32_t agent = rec_agent(r);
  if (l.y && rec_agent(l.y) == agent) l.y = r;
  else if (l.z && rec_agent(l.z) == agent) l.z = r;
  else if (l.w && rec_agent(l.w) == agent) l.w = r;
  else if (!l.y) l.y = r;
  else if (!l.z) l.z = r;
  else if (!l.w) l.w = r;
  else l.y = r;  // more readers than remembered: the oldest slot goes
  return l;
}
// add_read over `n` consecutive lines, kRound loads in flight at a time.
__device__ inline void add_reads(Line* lines, uint32_t n, uint32_t r) {
  for (uint32_t g = 0; g < n; g += kRound) {
    uint4 l[kRound];
#pragma unroll
    for (int i = 0; i < kRound; ++i)
      if (g + i < n) l[i] = *reinterpret_cast<const uint4*>(&lines[g + i]);
#pragma unroll
    for (int i = 0; i < kRound; ++i)
      if (g + i < n) *reinterpret_cast<uint4*>(&lines[g + i]) = with_read(l[i], r);
  }
}

// Whether a fence.proxy.async of the warp that made generic write `w` lies between it and what `vc` knows.
__device__ inline bool proxy_fenced(const Cluster& c, uint32_t w, const uint32_t* vc) {
  const uint32_t agent = rec_agent(w), e = rec_epoch(w);
  const Warp& writer = c.cta[agent / kAgentsPerCta].warps[agent % kAgentsPerCta];
  for (int k = 0; k < kFenceRing; ++k) {
    const uint32_t f = writer.fences[k];
    if (f >= e && f <= vc[agent]) return true;
  }
  return false;
}

enum class Access { kAsyncRead, kAsyncWrite, kGenericRead, kGenericWrite };

// The fast pre-pass of access_smem and tc_writes_tmem. These run under the lock, over hundreds of
// lines or cells per mma, so they load 8 records at once and decide without a branch per record;
// anything that might be a violation (or need the proxy-fence lookup) falls back to the exact loop,
// which reports.
__device__ __forceinline__ uint4 load_line(const Line& l) { return *reinterpret_cast<const uint4*>(&l); }
__device__ __forceinline__ bool unseen(const uint32_t* vc, uint32_t r) {  // !visible(vc, r), without a branch on r
  const uint32_t e = rec_epoch(r), agent = r ? rec_agent(r) : 0u;
  return (r != 0) & ((e == kPendingEpoch) | (vc[agent] < e));
}
__device__ inline bool lines_clear(const Cta& t, uint32_t lo, uint32_t hi, const uint32_t* vc, bool write, bool async) {
  const uint32_t g0 = lo / kGranuleBytes, g1 = min((hi + kGranuleBytes - 1) / kGranuleBytes, uint32_t(kGranules));
  bool bad = false;
  for (uint32_t g = g0; g < g1; g += kRound) {
    uint4 l[kRound];
#pragma unroll
    for (int i = 0; i < kRound; ++i) l[i] = g + i < g1 ? load_line(t.smem[g + i]) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int i = 0; i < kRound; ++i) {
      bad |= unseen(vc, l[i].x);
      bad |= async & (l[i].x != 0) & (g + i < g1) && is_generic(t, g + i);  // the proxy-fence rule: the exact loop
      if (write) bad |= unseen(vc, l[i].y) | unseen(vc, l[i].z) | unseen(vc, l[i].w);
    }
  }
  return !bad;
}
__device__ inline void record_lines(Cta& t, uint32_t lo, uint32_t hi, bool write, bool generic, uint32_t rec) {
  const uint32_t g0 = lo / kGranuleBytes, g1 = min((hi + kGranuleBytes - 1) / kGranuleBytes, uint32_t(kGranules));
  if (g1 <= g0) return;
  if (!write) return add_reads(&t.smem[g0], g1 - g0, rec);
  for (uint32_t g = g0; g < g1; ++g) {
    *reinterpret_cast<uint4*>(&t.smem[g]) = make_uint4(rec, 0, 0, 0);
    set_generic(t, g, generic);
  }
}

// Checks an access by a thread that knows `vc` to lines [lo, hi) of CTA `mem`'s shared memory, and
// records it as `rec`. Returns false after reporting.
__device__ inline bool access_smem(Cluster& c, uint32_t mem, uint32_t lo, uint32_t hi, Access kind, const uint32_t* vc,
                                   uint32_t rec, Violation v) {
  Cta& t = c.cta[mem];
  const bool write = kind == Access::kAsyncWrite || kind == Access::kGenericWrite;
  const bool async = kind == Access::kAsyncRead || kind == Access::kAsyncWrite;
  if (lines_clear(t, lo, hi, vc, write, async)) {  // the common case, checked 8 lines at a time
    record_lines(t, lo, hi, write, kind == Access::kGenericWrite, rec);
    return true;
  }
  v.mem_rank = int(mem);
  v.lo = lo;
  v.hi = hi;
  for (uint32_t g = lo / kGranuleBytes; g < (hi + kGranuleBytes - 1) / kGranuleBytes && g < uint32_t(kGranules); ++g) {
    Line& l = t.smem[g];
    if (!visible(vc, l.write)) {
      v.earlier = l.write;
      report(c, v);
      return false;
    }
    if (async && l.write && is_generic(t, g) && !proxy_fenced(c, l.write, vc)) {
      v.rule = "missing-proxy-fence";
      v.what = "the async proxy (TMA, tensor core) accesses shared memory last written by generic stores, and no "
               "fence.proxy.async of the writing warp is ordered between the two";
      v.section = "PTX ISA 9.7.13.4 (fence.proxy.async) and 8.6 (proxies): generic-proxy writes become visible to "
                  "the async proxy only through a proxy fence";
      v.fix = "the writing warp calls ptx::fence_proxy_async_shared() after its stores and before the arrive or "
              "barrier that hands the memory over";
      v.earlier = l.write;
      v.writer_fences = true;
      report(c, v);
      return false;
    }
    if (write)
      for (int k = 0; k < kReadSlots; ++k)
        if (!visible(vc, l.read[k])) {
          v.earlier = l.read[k];
          v.earlier_is_read = true;
          report(c, v);
          return false;
        }
  }
  for (uint32_t g = lo / kGranuleBytes; g < (hi + kGranuleBytes - 1) / kGranuleBytes && g < uint32_t(kGranules); ++g) {
    Line& l = t.smem[g];
    if (write) {
      l.write = rec;
      for (int k = 0; k < kReadSlots; ++k) l.read[k] = 0;
      set_generic(t, g, kind == Access::kGenericWrite);
    } else {
      add_read(l, rec);
    }
  }
  return true;
}

// ---- Tensor Memory cells -----------------------------------------------------------------------------

__device__ inline bool columns_allocated(Cluster& c, uint32_t mem, uint32_t col, uint32_t n, Violation v) {
  const Cta& t = c.cta[mem];
  if (t.tmem_columns && col >= t.tmem_column && col + n <= t.tmem_column + t.tmem_columns) return true;
  v.rule = "tmem-not-allocated";
  v.what = "a tcgen05 operation uses Tensor Memory columns this CTA does not hold (never allocated, or deallocated)";
  v.section = "PTX ISA 9.7.16.7.1 (tcgen05.alloc/dealloc): Tensor Memory is used between alloc and dealloc";
  v.fix = "allocate before use; in a pair, deallocate only after both CTAs' last use (a cluster barrier)";
  v.tmem = true;
  v.mem_rank = int(mem);
  v.lo = col;
  v.hi = col + n;
  v.quadrant = kTmemQuadrants;
  report(c, v);
  return false;
}

}  // namespace gemm::protocol::dev
#endif  // GEMM_PROTOCOL_ACTIVE
