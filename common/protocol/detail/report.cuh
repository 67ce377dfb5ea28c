// Messages: what a violation names (Violation) and how it ends the kernel (trap mode) or is recorded
// for the host (report mode).
//
// Part of the protocol checker: included by common/protocol/checker.cuh only, in its order.
#pragma once

#ifndef GEMM_PROTOCOL_CHECKER_PARTS
#error "include common/protocol/checker.cuh, not its parts"
#endif

#if GEMM_PROTOCOL_ACTIVE
namespace gemm::protocol::dev {

struct Msg {
  char buf[kMessageBytes];
  int n = 0;
  __device__ Msg& s(const char* t) {
    while (t && *t && n < kMessageBytes - 1) buf[n++] = *t++;
    buf[n] = 0;
    return *this;
  }
  __device__ Msg& u(uint32_t v) {
    char tmp[12];
    int k = 0;
    do tmp[k++] = char('0' + v % 10), v /= 10; while (v);
    while (k && n < kMessageBytes - 1) buf[n++] = tmp[--k];
    buf[n] = 0;
    return *this;
  }
  __device__ Msg& i(int v) { return v < 0 ? s("-").u(uint32_t(-v)) : u(uint32_t(v)); }
  __device__ Msg& x(uint32_t v) {
    s("0x");
    for (int k = 4; k >= 0; --k) {
      const uint32_t d = (v >> (4 * k)) & 15;
      if (n < kMessageBytes - 1) buf[n++] = char(d < 10 ? '0' + d : 'a' + d - 10);
    }
    buf[n] = 0;
    return *this;
  }
};

__device__ __forceinline__ void copy_name(char (&dst)[16], const char* src) {
  int k = 0;
  for (; src && src[k] && k < 15; ++k) dst[k] = src[k];
  for (; k < 16; ++k) dst[k] = 0;
}

// "warp 1 (mma) of CTA rank 0", "the tensor core of CTA rank 0", ... for an agent.
__device__ inline void describe_agent(Msg& m, const Cluster& c, uint32_t agent) {
  if (agent >= kBarrierAgents) {
    const uint32_t rank = (agent - kBarrierAgents) / kMaxBarriers, b = (agent - kBarrierAgents) % kMaxBarriers;
    const Barrier& bar = c.cta[rank].barriers[b];
    m.s("a TMA load completing on barrier '").s(bar.name).s("' [").i(bar.index).s("] of CTA rank ").u(rank);
    return;
  }
  const uint32_t rank = agent / kAgentsPerCta, a = agent % kAgentsPerCta;
  if (a < uint32_t(kMaxWarps)) {
    m.s("warp ").u(a);
    if (c.cta[rank].warps[a].role[0]) m.s(" (").s(c.cta[rank].warps[a].role).s(")");
    m.s(" of CTA rank ").u(rank);
  } else if (a == uint32_t(kMaxWarps)) {
    m.s("the tensor core of CTA rank ").u(rank).s(" (tcgen05.mma/cp)");
  } else {
    m.s("the bulk-copy unit reading for warp ").u(a - kMaxWarps - 1).s(" of CTA rank ").u(rank).s(" (TMA store)");
  }
}

// One violation: what the message is built from.
struct Violation {
  const char* rule = "";        // the rule's name (docs/protocol_checker.md)
  const char* what = "";        // one sentence
  const char* fix = "";         // what makes it right
  const char* section = "";     // PTX ISA section the rule comes from
  int rank = -1, warp = -1;     // who acted
  int bar_rank = -1, bar = -1;  // the barrier it concerns
  const char* operand = nullptr;
  int mem_rank = -1;            // shared memory of this CTA ...
  bool tmem = false;            // ... or Tensor Memory (columns, quadrant)
  uint32_t lo = 0, hi = 0, quadrant = 0;  // quadrant kTmemQuadrants: all four (a whole allocation)
  uint32_t earlier = 0;         // the earlier access that was not visible (record), or 0
  bool earlier_is_read = false;
  const char* extra = nullptr;  // more text, already formatted
  uint32_t a = 0, b = 0;        // numbers the rule names in `extra_numbers`
  const char* numbers = nullptr;
  bool writer_fences = false;   // name the fence.proxy.async epochs of the earlier write's warp
};

__device__ inline void describe_barrier(Msg& m, const Cluster& c, int rank, int b) {
  const Barrier& bar = c.cta[rank].barriers[b];
  const uint32_t phase = bar.completed - bar.phase_base;
  m.s("barrier '").s(bar.name).s("' [").i(bar.index).s("] of CTA rank ").u(uint32_t(rank)).s(", current phase ").u(phase)
      .s(" (parity ").u(phase & 1).s("): ").u(bar.pending).s(" of ").u(bar.count).s(" arrivals and ")
      .i(bar.tx).s(" transaction bytes still missing");
}

// Ends the kernel with the message (trap mode, and wherever the checker is not bound or is off), or
// records the first message for the host and makes every checked operation a no-op (report mode).
static __device__ __noinline__ void report_text(const Msg& m) {
  Control* ctl = g_protocol.control;
  if (ctl && ctl->mode == kReport) {
    if (atomicCAS(&ctl->violations, 0, 1) == 0) {
      for (int k = 0; k <= m.n; ++k) ctl->message[k] = m.buf[k];
      __threadfence_system();
    }
    atomicExch(&ctl->aborted, 1);
    __threadfence();
    return;
  }
  printf("%s\n", m.buf);
  __trap();
}

// A violation's message: the rule and what it caught, who acted, the barrier and the operand it
// concerns, the earlier access that was not visible, then the rule's source and the fix.
__device__ inline void format_violation(Msg& m, const Cluster* c, const Violation& v) {
  m.s("protocol checker: ").s(v.rule).s(": ").s(v.what).s("\n");
  if (v.rank >= 0) {
    m.s("  by: warp ").i(v.warp);
    if (c && v.warp >= 0 && c->cta[v.rank].warps[v.warp].role[0]) m.s(" (").s(c->cta[v.rank].warps[v.warp].role).s(")");
    m.s(" of CTA rank ").i(v.rank).s(" (block ").u(blockIdx.x).s(",").u(blockIdx.y).s(",").u(blockIdx.z).s(")\n");
  }
  if (c && v.bar >= 0) {
    m.s("  ");
    describe_barrier(m, *c, v.bar_rank, v.bar);
    m.s("\n");
  }
  if (v.operand) {
    m.s("  operand: ").s(v.operand);
    if (v.tmem) {
      m.s(", Tensor Memory columns [").u(v.lo).s(", ").u(v.hi).s("), ");
      if (v.quadrant >= uint32_t(kTmemQuadrants)) m.s("all 128 lanes");
      else m.s("lanes ").u(32 * v.quadrant).s("-").u(32 * v.quadrant + 31);
    } else {
      m.s(", shared memory [").x(v.lo).s(", ").x(v.hi).s(")");
    }
    if (v.mem_rank >= 0) m.s(" of CTA rank ").i(v.mem_rank);
    m.s("\n");
  }
  if (c && v.earlier) {
    m.s(v.earlier_is_read ? "  earlier read not visible as finished: by " : "  earlier write not visible: by ");
    describe_agent(m, *c, rec_agent(v.earlier));
    const uint32_t e = rec_epoch(v.earlier);
    if (rec_agent(v.earlier) >= uint32_t(kBarrierAgents)) {
      const uint32_t ba = rec_agent(v.earlier) - kBarrierAgents;
      const Barrier& bar = c->cta[ba / kMaxBarriers].barriers[ba % kMaxBarriers];
      m.s(", in its phase ").u(e - 1 - bar.phase_base);
    } else if (e == kPendingEpoch) {
      m.s(", not yet finished (tcgen05.wait::ld, then tcgen05.fence::before_thread_sync)");
    } else {
      m.s(", its epoch ").u(e);
    }
    if (v.rank >= 0 && v.warp >= 0) {
      const uint32_t a = rec_agent(v.earlier);
      const Warp& w = c->cta[v.rank].warps[v.warp];
      m.s(" (the acting warp has seen ").u(w.vc[a]).s(", its tcgen05 work ").u(w.snap[a]).s(", the tensor core ")
          .u(c->cta[v.rank].tc_vc[a]).s(")");
    }
    m.s("\n");
    if (v.writer_fences && rec_agent(v.earlier) < uint32_t(kBarrierAgents)) {  // missing-proxy-fence: what was fenced
      const uint32_t a = rec_agent(v.earlier);
      const Warp& w = c->cta[a / kAgentsPerCta].warps[a % kAgentsPerCta];
      m.s("  the writing warp's fence.proxy.async epochs, newest first:");
      for (uint32_t k = 0; k < uint32_t(kFenceRing) && k < w.nfences; ++k) m.s(" ").u(w.fences[(w.nfences - 1 - k) % kFenceRing]);
      m.s(" (").u(w.nfences).s(" in all); its latest generic store: epoch ").u(w.generic_epoch).s("\n");
    }
  }
  if (v.extra) m.s("  ").s(v.extra).s("\n");
  if (v.numbers) m.s("  ").s(v.numbers).s(" ").u(v.a).s(", ").u(v.b).s("\n");
  m.s("  rule: ").s(v.section).s("\n  fix: ").s(v.fix);
}

// Reports a violation (report_text says how it ends). Called with the cluster's lock held: the
// message reads the cluster's state.
static __device__ __noinline__ void report(const Cluster& c, const Violation& v) {
  Msg m;
  format_violation(m, &c, v);
  report_text(m);
}

// The emulator's refusals and misuses (not protocol rules: forms it does not model, addresses outside
// an allocation) go through the same delivery (trap or report mode), in the emulator's words.
inline __device__ void report_emulator(const char* instruction, const char* what, uint32_t a, uint32_t b) {
  Msg m;
  m.s("tcgen05 emulator: ").s(instruction).s(": ").s(what).s(" [").u(a).s(", ").u(b).s("] (block ").u(blockIdx.x)
      .s(",").u(blockIdx.y).s(",").u(blockIdx.z).s(" thread ").u(threadIdx.x).s(")");
  report_text(m);
}

}  // namespace gemm::protocol::dev
#endif  // GEMM_PROTOCOL_ACTIVE
