// What the tensor core reads and writes for one mma or cp: the operand lines its shared-memory
// descriptors name, the accumulator and scale-factor columns of Tensor Memory, in every CTA of its group.
//
// Part of the protocol checker: included by common/protocol/checker.cuh only, in its order.
#pragma once

#ifndef GEMM_PROTOCOL_CHECKER_PARTS
#error "include common/protocol/checker.cuh, not its parts"
#endif

#if GEMM_PROTOCOL_ACTIVE
namespace gemm::protocol::dev {

// The smem lines of a K-major operand of `rows` rows (8-row groups SBO apart, one swizzle row per row).
__device__ inline void operand_lines(const tcgen05::SmemDescriptor& d, uint32_t rows, uint32_t& lo, uint32_t& hi) {
  const uint32_t row_bytes = d.layout == tcgen05::Layout::kSwizzle128B ? 128 : d.layout == tcgen05::Layout::kSwizzle64B ? 64
                             : d.layout == tcgen05::Layout::kSwizzle32B ? 32 : 16;
  const uint32_t start = smem_offset(d.start) & ~(row_bytes - 1);
  lo = start;
  hi = start + ((rows + 7) / 8 - 1) * d.sbo + 8 * row_bytes;
}

// The tensor core takes up what the issuing warp saw at its last tcgen05.fence::after_thread_sync.
__device__ inline uint32_t* tc_clock(Cluster& G, uint32_t rank, Warp& W) {
  uint32_t* tc = G.cta[rank].tc_vc;
  join(tc, W.snap);
  return tc;
}

// Shared-memory operand read by the tensor core, in every CTA of the group (the peer's first: its bytes
// arrive through the leader's barrier, the longer way).
__device__ inline bool tc_reads_smem(Cluster& G, uint32_t rank, uint32_t warp, int cta_group, uint32_t lo, uint32_t hi,
                                     const uint32_t* tc, const char* operand) {
  const uint32_t first = cta_group == 2 ? rank & ~1u : rank;
  const Warp& W = G.cta[rank].warps[warp];
  for (int v_ = cta_group - 1; v_ >= 0; --v_) {
    const uint32_t m = first + uint32_t(v_);
    if (lines_clear(G.cta[m], lo, hi, tc, false, true)) {  // the common case: every line landed and visible
      record_lines(G.cta[m], lo, hi, false, false, record(tc_agent(rank), tc[tc_agent(rank)]));
      continue;
    }
    Violation v = base_violation(rank, warp);
    v.operand = operand;
    // Seen by the warp, not by its tcgen05 work: the fence after the wait is missing.
    for (uint32_t g = lo / kGranuleBytes; g < (hi + kGranuleBytes - 1) / kGranuleBytes && g < uint32_t(kGranules); ++g) {
      const uint32_t w = G.cta[m].smem[g].write;
      if (!visible(tc, w) && visible(W.vc, w)) {
        v.rule = "missing-tcgen05-fence";
        v.what = "a tcgen05 operation reads shared memory whose write its issuing warp has waited for, but without "
                 "tcgen05.fence::after_thread_sync between the wait and the issue";
        v.section = "PTX ISA 9.7.16.6.4 (tcgen05.fence::after_thread_sync): orders tcgen05 operations after the "
                    "preceding thread synchronisation";
        v.fix = "tcgen05.fence::after_thread_sync right after the wait";
        v.mem_rank = int(m);
        v.lo = lo;
        v.hi = hi;
        v.earlier = w;
        report(G, v);
        return false;
      }
    }
    v.rule = "mma-reads-unlanded";
    v.what = "a tcgen05 operation reads shared memory whose last write (a TMA load, or stores) is not visible to its "
             "issuing warp: issued before its data landed";
    v.section = "PTX ISA 9.7.16.6.4 (tcgen05.fence) and 9.7.13.15 (mbarrier complete_tx): an operand is ready once "
                "the issuing thread has waited on the barrier its copy completes on, then "
                "tcgen05.fence::after_thread_sync";
    v.fix = "wait on the slot's full barrier, then tcgen05.fence::after_thread_sync, before the mma or cp";
    if (!access_smem(G, m, lo, hi, Access::kAsyncRead, tc, record(tc_agent(rank), tc[tc_agent(rank)]), v)) return false;
  }
  return true;
}

// Tensor Memory written by the tensor core (D of an mma, the scales of a cp), in every CTA of the group.
__device__ inline bool tc_writes_tmem(Cluster& G, uint32_t rank, uint32_t warp, int cta_group, uint32_t col, uint32_t n,
                                      const uint32_t* tc, const char* operand) {
  const uint32_t first = cta_group == 2 ? rank & ~1u : rank, me = tc_agent(rank);
  for (uint32_t m = first; m < first + uint32_t(cta_group); ++m) {
    Violation v = base_violation(rank, warp);
    v.operand = operand;
    if (!columns_allocated(G, m, col, n, v)) return false;
    // Pre-pass, kRound cells at a time: are all earlier reads (other than the tensor core's own) finished?
    bool bad = false;
    for (uint32_t q = 0; q < uint32_t(kTmemQuadrants); ++q)
      for (uint32_t cc = col; cc < col + n; cc += kRound) {
        uint4 l[kRound];
#pragma unroll
        for (int i = 0; i < kRound; ++i) l[i] = cc + i < col + n ? load_line(G.cta[m].tmem[q][cc + i]) : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int i = 0; i < kRound; ++i) {
          const uint32_t rs[3] = {l[i].y, l[i].z, l[i].w};
#pragma unroll
          for (int k = 0; k < 3; ++k) bad |= (rs[k] != 0) & (rec_agent(rs[k]) != me) & unseen(tc, rs[k]);
        }
      }
    for (uint32_t q = 0; bad && q < uint32_t(kTmemQuadrants); ++q)  // the exact loop, which reports
      for (uint32_t cc = col; cc < col + n; ++cc) {
        const Line& l = G.cta[m].tmem[q][cc];
        for (int k = 0; k < kReadSlots; ++k)
          if (l.read[k] && rec_agent(l.read[k]) != me && !visible(tc, l.read[k])) {
            v.rule = "mma-overwrites-unread";
            v.what = "a tcgen05 operation writes Tensor Memory whose earlier tcgen05.ld reads are not visible to it as "
                     "finished: the accumulator reused before the epilogue released it";
            v.section = "PTX ISA 9.7.16.6.4 (tcgen05.fence) and 9.7.16.8.5 (tcgen05.wait::ld): the reader waits for "
                        "its loads, fences before_thread_sync and arrives; the MMA warp waits and fences "
                        "after_thread_sync";
            v.fix = "in the epilogue: tcgen05.wait::ld, tcgen05.fence::before_thread_sync, then arrive on the "
                    "accumulator's empty barrier; in the MMA warp: wait on it, tcgen05.fence::after_thread_sync";
            v.tmem = true;
            v.mem_rank = int(m);
            v.lo = col;
            v.hi = col + n;
            v.quadrant = q;
            v.earlier = l.read[k];
            v.earlier_is_read = true;
            report(G, v);
            return false;
          }
      }
    const uint32_t r = record(me, tc[me]);
    for (uint32_t q = 0; q < uint32_t(kTmemQuadrants); ++q)
#pragma unroll 8
      for (uint32_t cc = col; cc < col + n; ++cc) *reinterpret_cast<uint4*>(&G.cta[m].tmem[q][cc]) = make_uint4(r, 0, 0, 0);
  }
  return true;
}

// Scale columns read by an mma: written since alloc (by a cp of this tensor core).
__device__ inline bool tc_reads_tmem(Cluster& G, uint32_t rank, uint32_t warp, int cta_group, uint32_t col, uint32_t n,
                                     const uint32_t* tc, const char* operand) {
  const uint32_t first = cta_group == 2 ? rank & ~1u : rank, me = tc_agent(rank);
  for (uint32_t m = first; m < first + uint32_t(cta_group); ++m) {
    Violation v = base_violation(rank, warp);
    v.operand = operand;
    if (!columns_allocated(G, m, col, n, v)) return false;
    for (uint32_t cc = col; cc < col + n; ++cc)
      if (G.cta[m].tmem[0][cc].write == 0) {
        v.rule = "mma-reads-unwritten-scales";
        v.what = "an mma reads scale-factor columns that nothing has written since they were allocated";
        v.section = "PTX ISA 9.7.16.9.2 (tcgen05.cp) and 9.7.16.10.9.1 (tcgen05.mma, block scaling)";
        v.fix = "copy the scales (tcgen05.cp) into the columns the mma names first";
        v.tmem = true;
        v.mem_rank = int(m);
        v.lo = col;
        v.hi = col + n;
        report(G, v);
        return false;
      }
    for (uint32_t q = 0; q < uint32_t(kTmemQuadrants); ++q) add_reads(&G.cta[m].tmem[q][col], n, record(me, tc[me]));
  }
  return true;
}

}  // namespace gemm::protocol::dev
#endif  // GEMM_PROTOCOL_ACTIVE
