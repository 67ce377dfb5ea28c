// The protocol checker, device side: the hooks the PTX wrappers of common/ptx call around every TMA,
// mbarrier and tcgen05 operation, and the rules they enforce. The model is in checker_state.h and,
// with every rule and its PTX ISA section, in docs/protocol_checker.md.
//
// Compiled in only where GEMM_PROTOCOL_ACTIVE (common/ptx/arch.cuh): under the tcgen05 emulator on
// Hopper, and in the checked build. Elsewhere the wrappers call none of it.
//
// Concurrency: the state of one cluster is updated under that cluster's lock. The lanes of a warp are
// one logical thread, so most of what a lane records, another lane of its warp has often recorded
// already: each hook first looks, without the lock, whether its record would change anything (a wait
// whose phase the warp has learned, a fence with nothing new to cover, a barrier generation the warp
// has published into), and takes the lock only if it would. The lanes of a warp take their turns
// (WarpTurn, a lock per warp in shared memory) before the cluster's lock and look again once it is
// their turn, so a warp's 32 lanes arriving together cost one locked record, not 32, and at most one
// lane per warp waits for the cluster's lock. Counts that every thread contributes to (threads
// waiting, arrivals at CTA and cluster barriers, exits) are kept with atomics.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "common/protocol/checker_state.h"
#include "common/ptx/arch.cuh"
#include "common/tcgen05_desc.h"
#include "common/tcgen05_desc_kinds.h"

namespace gemm::protocol {

#if GEMM_PROTOCOL_CHECK
// This translation unit's copy of the checker's state pointers; bind() fills it.
static __device__ State g_protocol;

// Host: bind the checker to this source file's kernels (no-op where it is not needed). The launch door
// runs it before the file's first launch (registered by common/ptx/mbarrier.cuh).
static inline void bind() {
  static bool bound = false;
  if (bound) return;
  if (const State* s = checker_state_for(GEMM_PROTOCOL_CHECK)) {
    if (cudaMemcpyToSymbol(g_protocol, s, sizeof(*s)) != cudaSuccess) {
      std::fprintf(stderr, "protocol checker: could not bind its state\n");
      return;
    }
  }
  bound = true;
}
#else
static inline void bind() {}
#endif

#if GEMM_PROTOCOL_ACTIVE
namespace dev {

// ---- Identity --------------------------------------------------------------------------------------

__device__ __forceinline__ uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
__device__ __forceinline__ uint32_t sreg(int which) {
  uint32_t v = 0;
  switch (which) {
    case 0: asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(v)); break;
    case 1: asm volatile("mov.u32 %0, %%clusterid.y;" : "=r"(v)); break;
    case 2: asm volatile("mov.u32 %0, %%clusterid.z;" : "=r"(v)); break;
    case 3: asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(v)); break;
    case 4: asm volatile("mov.u32 %0, %%nclusterid.y;" : "=r"(v)); break;
    default: asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(v)); break;
  }
  return v;
}
__device__ __forceinline__ uint32_t ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t ptx_mapa(uint32_t smem_address, uint32_t rank) {
  uint32_t out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(out) : "r"(smem_address), "r"(rank));
  return out;
}
__device__ __forceinline__ uint32_t lin_thread() { return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ uint32_t warp_id() { return lin_thread() / 32; }
__device__ __forceinline__ uint32_t lane_id() { return lin_thread() % 32; }
__device__ __forceinline__ uint32_t block_threads() { return blockDim.x * blockDim.y * blockDim.z; }
__device__ __forceinline__ uint32_t smem_offset(uint32_t smem_address) { return smem_address & 0x3FFFFu; }

__device__ __forceinline__ bool enabled() {
  return g_protocol.clusters != nullptr && *reinterpret_cast<const volatile int*>(&g_protocol.control->mode) != kOff;
}
__device__ __forceinline__ bool aborted() {
  return g_protocol.control && *reinterpret_cast<volatile int*>(&g_protocol.control->aborted) != 0;
}

// ---- Agents and clocks -----------------------------------------------------------------------------

__device__ __forceinline__ uint32_t warp_agent(uint32_t rank, uint32_t w) { return rank * kAgentsPerCta + w; }
__device__ __forceinline__ uint32_t tc_agent(uint32_t rank) { return rank * kAgentsPerCta + kMaxWarps; }
__device__ __forceinline__ uint32_t bulk_agent(uint32_t rank, uint32_t w) { return rank * kAgentsPerCta + kMaxWarps + 1 + w; }
__device__ __forceinline__ uint32_t bar_agent(uint32_t rank, uint32_t b) { return kBarrierAgents + rank * kMaxBarriers + b; }
__device__ __forceinline__ uint32_t record(uint32_t agent, uint32_t epoch) { return (agent + 1) << kEpochBits | epoch; }
__device__ __forceinline__ uint32_t rec_agent(uint32_t r) { return (r >> kEpochBits) - 1; }
__device__ __forceinline__ uint32_t rec_epoch(uint32_t r) { return r & kEpochMask; }

// Whether access `r` is visible as finished to a thread that knows clock `vc`.
__device__ __forceinline__ bool visible(const uint32_t* vc, uint32_t r) {
  if (r == 0) return true;
  const uint32_t e = rec_epoch(r);
  return e != kPendingEpoch && vc[rec_agent(r)] >= e;
}
// Clocks move 16 bytes at a time, 11 loads in flight (33 words = 3 rounds): these run under the
// cluster's lock, after its fence has emptied L1, so each round costs an L2 round trip.
static __device__ __noinline__ void join(uint32_t* into, const uint32_t* from) {
  uint4* d = reinterpret_cast<uint4*>(into);
  const uint4* f = reinterpret_cast<const uint4*>(from);
#pragma unroll 11
  for (int i = 0; i < kClockWords / 4; ++i) {
    uint4 a = d[i];
    const uint4 b = f[i];
    a.x = max(a.x, b.x);
    a.y = max(a.y, b.y);
    a.z = max(a.z, b.z);
    a.w = max(a.w, b.w);
    d[i] = a;
  }
}
static __device__ __noinline__ void copy_clock(uint32_t* into, const uint32_t* from) {
  uint4* d = reinterpret_cast<uint4*>(into);
  const uint4* f = reinterpret_cast<const uint4*>(from);
#pragma unroll 11
  for (int i = 0; i < kClockWords / 4; ++i) d[i] = f[i];
}
static __device__ __noinline__ void zero_clock(uint32_t* c) {
  uint4* d = reinterpret_cast<uint4*>(c);
#pragma unroll 11
  for (int i = 0; i < kClockWords / 4; ++i) d[i] = make_uint4(0, 0, 0, 0);
}

// ---- Messages --------------------------------------------------------------------------------------

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
};

__device__ inline void describe_barrier(Msg& m, const Cluster& c, int rank, int b) {
  const Barrier& bar = c.cta[rank].barriers[b];
  const uint32_t phase = bar.completed - bar.phase_base;
  m.s("barrier '").s(bar.name).s("' [").i(bar.index).s("] of CTA rank ").u(uint32_t(rank)).s(", current phase ").u(phase)
      .s(" (parity ").u(phase & 1).s("): ").u(bar.pending).s(" of ").u(bar.count).s(" arrivals and ")
      .i(bar.tx).s(" transaction bytes still missing");
}

// Ends the kernel (trap mode) or records the message and makes every checked operation a no-op
// (report mode). Called with the cluster's lock held; the caller unlocks and returns.
static __device__ __noinline__ void report(const Cluster& c, const Violation& v) {
  Msg m;
  m.s("protocol checker: ").s(v.rule).s(": ").s(v.what).s("\n");
  if (v.rank >= 0) {
    m.s("  by: warp ").i(v.warp);
    const Warp& w = c.cta[v.rank].warps[v.warp >= 0 ? v.warp : 0];
    if (v.warp >= 0 && w.role[0]) m.s(" (").s(w.role).s(")");
    m.s(" of CTA rank ").i(v.rank).s(" (block ").u(blockIdx.x).s(",").u(blockIdx.y).s(",").u(blockIdx.z).s(")\n");
  }
  if (v.bar >= 0) {
    m.s("  ");
    describe_barrier(m, c, v.bar_rank, v.bar);
    m.s("\n");
  }
  if (v.operand) {
    m.s("  operand: ").s(v.operand);
    if (v.tmem)
    {
      m.s(", Tensor Memory columns [").u(v.lo).s(", ").u(v.hi).s("), ");
      if (v.quadrant >= uint32_t(kTmemQuadrants)) m.s("all 128 lanes");
      else m.s("lanes ").u(32 * v.quadrant).s("-").u(32 * v.quadrant + 31);
    }
    else
      m.s(", shared memory [").x(v.lo).s(", ").x(v.hi).s(")");
    if (v.mem_rank >= 0) m.s(" of CTA rank ").i(v.mem_rank);
    m.s("\n");
  }
  if (v.earlier) {
    m.s(v.earlier_is_read ? "  earlier read not visible as finished: by " : "  earlier write not visible: by ");
    describe_agent(m, c, rec_agent(v.earlier));
    const uint32_t e = rec_epoch(v.earlier);
    if (rec_agent(v.earlier) >= uint32_t(kBarrierAgents)) {
      const uint32_t ba = rec_agent(v.earlier) - kBarrierAgents;
      const Barrier& bar = c.cta[ba / kMaxBarriers].barriers[ba % kMaxBarriers];
      m.s(", in its phase ").u(e - 1 - bar.phase_base);
    } else if (e == kPendingEpoch) {
      m.s(", not yet finished (tcgen05.wait::ld, then tcgen05.fence::before_thread_sync)");
    } else {
      m.s(", its epoch ").u(e);
    }
    if (v.rank >= 0 && v.warp >= 0) {
      const uint32_t a = rec_agent(v.earlier);
      const Warp& w = c.cta[v.rank].warps[v.warp];
      m.s(" (the acting warp has seen ").u(w.vc[a]).s(", its tcgen05 work ").u(w.snap[a]).s(", the tensor core ")
          .u(c.cta[v.rank].tc_vc[a]).s(")");
    }
    m.s("\n");
  }
  if (v.extra) m.s("  ").s(v.extra).s("\n");
  if (v.numbers) m.s("  ").s(v.numbers).s(" ").u(v.a).s(", ").u(v.b).s("\n");
  m.s("  rule: ").s(v.section).s("\n  fix: ").s(v.fix);
  Control* ctl = g_protocol.control;
  if (ctl->mode == kReport) {
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

// A message that is only text (the deadlock listing, the emulator's own traps).
static __device__ __noinline__ void report_text(const Msg& m) {
  Control* ctl = g_protocol.control;
  if (ctl->mode == kReport) {
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

// ---- The cluster's state ---------------------------------------------------------------------------

struct Slot {
  unsigned long long token;  // the cluster's ticket (its state's owner) while this CTA runs; 0 otherwise
  uint32_t index;            // the cluster's state: g_protocol.clusters[index]
  uint32_t claimed;          // kernel entry: rank 0 has claimed slot `index` and its threads clear it
  uint32_t turn[kMaxWarps];  // per warp: 1 while one of its lanes is inside a hook (WarpTurn)
};
__device__ __forceinline__ Slot& slot() {
  __shared__ Slot s;  // one per CTA, at the same offset in every CTA of a kernel
  return s;
}

// A warp's turn: the lanes of one warp pass through the hooks one at a time, so that at most one lane
// per warp contends for the cluster's lock, and a lane that waited for its turn can see, before it
// takes the lock, that a lane ahead of it already made the record (the hooks' fast paths run again).
// A lane-level lock in shared memory: lanes of one warp make progress independently (independent
// thread scheduling), and no hook waits for another lane while it holds the turn.
struct WarpTurn {
  uint32_t* flag;
  // The sleep starts at 8 ns (a turn is often free again after one record of a few L2 round trips) and
  // doubles to 256 ns, the same cap as the cluster lock's backoff.
  __device__ WarpTurn() : flag(&slot().turn[warp_id()]) {
    for (uint32_t ns = 8; atomicCAS(flag, 0u, 1u) != 0u; ns = ns < 256 ? 2 * ns : ns) __nanosleep(ns);
    __threadfence();  // the records of the lane before it are visible to its fast path
  }
  __device__ ~WarpTurn() {
    __threadfence();
    atomicExch(flag, 0u);
  }
  WarpTurn(const WarpTurn&) = delete;
  WarpTurn& operator=(const WarpTurn&) = delete;
};

// Backoff doubles to ~256 ns: with a warp's turn (WarpTurn) at most one lane per warp spins here, and a
// longer sleep would leave the lock idle after its release (the MMA warp's hooks are on the kernel's
// critical path).
__device__ __forceinline__ void lock(Cluster& c) {
  for (uint32_t sleep = 32; atomicCAS(&c.lock, 0, 1) != 0; sleep = sleep < 256 ? 2 * sleep : sleep) __nanosleep(sleep);
  __threadfence();
  c.holder = int((ctarank() << 16) | lin_thread()) + 1;
}
__device__ __forceinline__ void unlock(Cluster& c) {
  c.holder = 0;
  __threadfence();
  atomicExch(&c.lock, 0);
}

// A fresh slot of the table for this cluster, cleared: every thread of the claiming CTA clears a
// share (16-byte stores; about 125 KB per CTA of the cluster, which one thread took milliseconds
// to clear), then one thread starts the clocks.
static_assert(offsetof(Cluster, ctas) % 16 == 0 && offsetof(Cluster, cta) % 16 == 0 && sizeof(Cta) % 16 == 0,
              "clear_cluster clears the state with 16-byte stores");
__device__ inline void clear_cluster(Cluster& c, uint32_t ctas, uint32_t tid, uint32_t threads) {
  uint4* q = reinterpret_cast<uint4*>(reinterpret_cast<char*>(&c) + offsetof(Cluster, ctas));
  const size_t words = (offsetof(Cluster, cta) - offsetof(Cluster, ctas) + ctas * sizeof(Cta)) / 16;
  for (size_t i = tid; i < words; i += threads) q[i] = make_uint4(0, 0, 0, 0);
}
__device__ inline void start_cluster(Cluster& c, uint32_t ctas) {
  for (uint32_t r = 0; r < ctas; ++r) {
    Cta& t = c.cta[r];
    for (uint32_t w = 0; w < uint32_t(kMaxWarps); ++w) {
      t.warps[w].vc[warp_agent(r, w)] = 1;
      t.warps[w].snap_stale = 1;
    }
    t.tc_vc[tc_agent(r)] = 1;
  }
  c.ctas = ctas;
  c.lock = 0;
  c.ready = 1;
}

__device__ __forceinline__ bool supported_shape() {
  return sreg(5) <= uint32_t(kMaxCtas) && block_threads() <= uint32_t(32 * kMaxWarps);
}

// The cluster's state, or nullptr when checking is off, over (report mode), or impossible here.
static __device__ __noinline__ Cluster* no_cluster() {
  if (!supported_shape()) {
    Msg m;
    m.s("protocol checker: unsupported: clusters of more than ").u(kMaxCtas).s(" CTAs or CTAs of more than ")
        .u(32 * kMaxWarps).s(" threads are not modelled (cluster CTAs, threads) ").u(sreg(5)).s(", ").u(block_threads());
    report_text(m);
    return nullptr;
  }
  Msg m;
  m.s("protocol checker: unsupported: a checked operation in a kernel that does not open with ptx::ProtocolScope "
      "(block ").u(blockIdx.x).s(",").u(blockIdx.y).s(",").u(blockIdx.z).s(", thread ").u(lin_thread())
      .s("); its first statement must be `ptx::ProtocolScope protocol_scope;`");
  report_text(m);
  return nullptr;
}

// Every hook asks this first, some twice (WarpTurn), so its global loads are issued together: the
// checker's mode and abort flag in one 8-byte load, and the slot's owner beside it.
__device__ __forceinline__ Cluster* cluster() {
  Cluster* const clusters = g_protocol.clusters;
  if (clusters == nullptr) return nullptr;
  const Slot& s = slot();
  const unsigned long long t = *reinterpret_cast<const volatile unsigned long long*>(&s.token);
  const uint32_t i = *reinterpret_cast<const volatile uint32_t*>(&s.index);
  static_assert(offsetof(Control, aborted) == offsetof(Control, mode) + sizeof(int) && offsetof(Control, mode) % 8 == 0,
                "mode and aborted are read together");
  const unsigned long long mode_aborted =  // little-endian: mode in the low word
      *reinterpret_cast<const volatile unsigned long long*>(&g_protocol.control->mode);
  const bool slot_ok = t != 0 && i < uint32_t(kClusterSlots);
  const unsigned long long owner = slot_ok ? *reinterpret_cast<const volatile unsigned long long*>(&clusters[i].owner) : 0;
  if (int(uint32_t(mode_aborted)) == kOff || uint32_t(mode_aborted >> 32) != 0) return nullptr;
  if (slot_ok && owner == t) return clusters + i;
  return no_cluster();
}

// Kernel entry (ptx::ProtocolScope, every thread): thread 0 of rank 0 takes a fresh slot of the table,
// numbered by a ticket no other cluster has (nothing of an earlier kernel can be mistaken for this
// one's), and clears it; after a cluster barrier the other ranks read its index from rank 0's shared
// memory; after a CTA barrier every thread knows it.
static __device__ __noinline__ void enter_kernel() {
  Slot& s = slot();
  // A launch without clusters is a cluster of one CTA (%cluster_nctarank may read 0 there).
  const uint32_t rank = ctarank(), ctas = sreg(5) > 1 ? sreg(5) : 1, tid = lin_thread();
  const bool ok = supported_shape() && !aborted();
  unsigned long long ticket = 0;
  if (tid == 0) {
    s.token = 0;
    s.index = 0;
    s.claimed = 0;
    for (uint32_t w = 0; w < uint32_t(kMaxWarps); ++w) s.turn[w] = 0;
    if (ok && rank == 0) {
      ticket = atomicAdd(&g_protocol.control->tickets, 2ull) + 1;  // odd: never 0
      const uint32_t start = uint32_t(mix(ticket) % uint32_t(kClusterSlots));
      for (uint32_t i = 0; i < uint32_t(kClusterSlots); ++i) {
        const uint32_t idx = (start + i) % uint32_t(kClusterSlots);
        if (atomicCAS(&g_protocol.clusters[idx].owner, 0ull, ticket) != 0ull) continue;
        s.index = idx;
        s.claimed = 1;
        break;
      }
    }
  }
  __syncthreads();
  if (s.claimed) {  // rank 0 only: all its threads clear the slot, then thread 0 starts it
    Cluster& c = g_protocol.clusters[s.index];
    clear_cluster(c, ctas, tid, block_threads());
    __syncthreads();
    if (tid == 0) {
      start_cluster(c, ctas);
      c.cta[0].live = 1;
      c.cta[0].threads = block_threads();
      __threadfence();
      s.token = ticket;
    }
  }
  if (ctas > 1) asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  if (tid == 0 && ok && rank != 0) {
    const uint32_t at = ptx_mapa(uint32_t(__cvta_generic_to_shared(&s)), 0);
    unsigned long long ticket;
    uint32_t idx;
    asm volatile("ld.shared::cluster.u64 %0, [%1];" : "=l"(ticket) : "r"(at) : "memory");
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(idx) : "r"(at + uint32_t(offsetof(Slot, index))) : "memory");
    if (ticket != 0) {
      Cluster& c = g_protocol.clusters[idx];
      lock(c);
      c.cta[rank].live = 1;
      c.cta[rank].threads = block_threads();
      unlock(c);
      s.index = idx;
      s.token = ticket;
    }
  }
  __syncthreads();
}


// ---- Barriers --------------------------------------------------------------------------------------

// Lookups and checks over many cells (barrier offsets, shared-memory lines, Tensor Memory cells) load
// kRound of them before using any: each load is an L2 round trip, most are made under the cluster's
// lock, and one at a time the dealloc check alone was 7% of the time the checker added to a profiled
// test (docs/protocol_checker.md).
inline constexpr int kRound = 8;

// The barriers' offsets are read kRound at a time (a CTA has up to kMaxBarriers, and every wait,
// arrive and copy looks its barrier up).
template <bool kRelaxed>
__device__ inline int find_barrier_in(const Cta& t, uint32_t offset) {
  const uint32_t n = min(kRelaxed ? *reinterpret_cast<const volatile uint32_t*>(&t.nbarriers) : t.nbarriers,
                         uint32_t(kMaxBarriers));
  for (uint32_t b0 = 0; b0 < n; b0 += kRound) {
    uint32_t o[kRound];
#pragma unroll
    for (int i = 0; i < kRound; ++i)
      o[i] = b0 + i >= n ? 0u
             : kRelaxed  ? *reinterpret_cast<const volatile uint32_t*>(&t.barriers[b0 + i].offset)
                         : t.barriers[b0 + i].offset;
#pragma unroll
    for (int i = 0; i < kRound; ++i)
      if (o[i] == offset + 1) return int(b0 + i);
  }
  return -1;
}
__device__ inline int find_barrier(const Cta& t, uint32_t offset) { return find_barrier_in<false>(t, offset); }

// Reads outside the lock (the hooks' fast paths, which only ever skip work another lane of the same
// warp already did): volatile, so they come from L2, never from a stale L1 line.
template <class T>
__device__ __forceinline__ T relaxed(const T& x) {
  return *reinterpret_cast<const volatile T*>(&x);
}
__device__ inline int find_barrier_relaxed(const Cta& t, uint32_t offset) { return find_barrier_in<true>(t, offset); }

__device__ inline Violation base_violation(uint32_t rank, uint32_t warp) {
  Violation v;
  v.rank = int(rank);
  v.warp = int(warp);
  return v;
}

// A barrier that must exist and be initialised; reports otherwise (returns -1).
__device__ inline int live_barrier(Cluster& c, uint32_t target_rank, uint32_t offset, uint32_t rank, uint32_t warp,
                                   const char* use) {
  const int b = find_barrier(c.cta[target_rank], offset);
  if (b >= 0 && c.cta[target_rank].barriers[b].live) return b;
  Violation v = base_violation(rank, warp);
  v.rule = "barrier-uninitialised";
  v.what = use;
  v.section = "PTX ISA 9.7.13.15.9 (mbarrier.init): a barrier is used only after mbarrier.init, made visible by "
              "fence.mbarrier_init and a CTA or cluster barrier";
  v.fix = "initialise the barrier (ptx::mbarrier_init) before any arrive, copy, commit or wait names it";
  v.numbers = "(shared-memory offset, CTA rank)";
  v.a = offset;
  v.b = target_rank;
  report(c, v);
  return -1;
}

// CTA and cluster barriers whose every live thread has arrived complete here, under the lock, by
// whichever thread gets here first: the last arriver, or a thread about to decide on a deadlock
// (which must not count threads that the barrier has in fact released).
static __device__ __noinline__ void settle_barriers(Cluster& c) {
  for (uint32_t r = 0; r < c.ctas; ++r) {
    Cta& t = c.cta[r];
    if (t.live && t.sync_arrived && t.sync_arrived >= t.threads - t.exited) {
      copy_clock(t.sync_done_vc, t.sync_vc);
      zero_clock(t.sync_vc);
      atomicSub(&t.blocked, t.sync_arrived);
      atomicExch(&t.sync_arrived, 0u);
      t.sync_generation += 1;
    }
  }
  uint32_t live = 0;
  for (uint32_t r = 0; r < c.ctas; ++r) live += c.cta[r].live ? c.cta[r].threads - c.cta[r].exited : block_threads();
  if (c.sync_arrived && c.sync_arrived >= live) {
    copy_clock(c.sync_done_vc, c.sync_vc);
    zero_clock(c.sync_vc);
    for (uint32_t r = 0; r < c.ctas; ++r) {
      atomicSub(&c.cta[r].blocked, c.cta[r].cluster_arrived);
      atomicExch(&c.cta[r].cluster_arrived, 0u);
      c.cta[r].cluster_synced = 1;
    }
    atomicExch(&c.sync_arrived, 0u);
    c.sync_generation += 1;
  }
}

// Defined in common/protocol/checker_sync.cuh (named barriers, the pair's collective alloc).
__device__ inline void describe_named_waiters(Msg& m, const Cta& t, uint32_t rank);
__device__ inline void record_alloc(Cluster& G, uint32_t rank, uint32_t column, uint32_t ncols, int cta_group);

// The deadlock check: every live thread of the cluster waits on something nothing recorded can finish.
static __device__ __noinline__ void check_deadlock(Cluster& c) {
  settle_barriers(c);
  uint32_t waiting = 0;
  for (uint32_t r = 0; r < c.ctas; ++r) {
    const Cta& t = c.cta[r];
    if (!t.live) return;  // a CTA that has not started yet will act
    if (t.blocked < t.threads - t.exited) return;
    waiting += t.blocked;
  }
  if (waiting == 0) return;  // everyone has left: the kernel is ending, not stuck
  Msg m;
  m.s("protocol checker: deadlock: every live thread of the cluster waits, and nothing issued can complete the "
      "phases they wait for\n");
  for (uint32_t r = 0; r < c.ctas; ++r) {
    const Cta& t = c.cta[r];
    for (uint32_t b = 0; b < t.nbarriers; ++b) {
      const Barrier& bar = t.barriers[b];
      for (uint32_t p = 0; p < 2; ++p) {
        if (!bar.waiting[p]) continue;
        m.s("  ");
        describe_barrier(m, c, int(r), int(b));
        m.s("; waited for with parity ").u(p).s(" by ").u(bar.waiting[p]).s(" threads of warps");
        for (uint32_t w = 0; w < uint32_t(kMaxWarps); ++w)
          if (bar.waiting_warps[p] & (1u << w)) {
            m.s(" ").u(w);
            if (t.warps[w].role[0]) m.s(" (").s(t.warps[w].role).s(")");
          }
        m.s("\n");
      }
    }
    if (t.sync_arrived) m.s("  ").u(t.sync_arrived).s(" threads of CTA rank ").u(r).s(" wait at the CTA barrier (ptx::cta_sync)\n");
    if (t.cluster_arrived) m.s("  ").u(t.cluster_arrived).s(" threads of CTA rank ").u(r).s(" wait at the cluster barrier (ptx::cluster_sync)\n");
    describe_named_waiters(m, t, r);
    if (t.exited) m.s("  ").u(t.exited).s(" threads of CTA rank ").u(r).s(" have exited\n");
  }
  m.s("  rule: PTX ISA 9.7.13.15.16 (mbarrier.test_wait/try_wait): a phase completes only when its pending arrivals "
      "and transaction bytes reach zero\n  fix: check each waiter's parity (a producer's first wait on an empty "
      "slot uses parity 1) and that every phase waited for gets its arrivals");
  report_text(m);
}

// The phase completes when all arrivals and transaction bytes are in: publish, flip, release waiters.
__device__ inline void maybe_complete(Cluster& c, uint32_t rank, uint32_t b) {
  Cta& t = c.cta[rank];
  Barrier& bar = t.barriers[b];
  if (bar.pending != 0 || bar.tx != 0) return;
  bar.completed += 1;
  copy_clock(bar.done_vc, bar.pending_vc);
  bar.done_vc[bar_agent(rank, b)] = bar.completed;
  zero_clock(bar.pending_vc);
  bar.pending = bar.count;
  bar.tx_seen = 0;
  const uint32_t p = (bar.completed - 1 - bar.phase_base) & 1;
  atomicSub(&t.blocked, bar.waiting[p]);  // `blocked` is also counted outside the lock (barriers)
  bar.waiting[p] = 0;
  bar.waiting_warps[p] = 0;
}

// One arrival (count 1) publishing `vc` on barrier b of CTA `target`.
__device__ inline bool arrive_on(Cluster& c, uint32_t target, uint32_t b, const uint32_t* vc, bool async,
                                 uint32_t rank, uint32_t warp) {
  Barrier& bar = c.cta[target].barriers[b];
  if (bar.pending == 0) {
    Violation v = base_violation(rank, warp);
    v.rule = "arrive-overflow";
    v.what = "an arrival on a barrier whose current phase already has all its arrivals (it waits only for "
             "transaction bytes)";
    v.section = "PTX ISA 9.7.13.15.1 (mbarrier phases): a phase expects exactly the count given at init";
    v.fix = "arrive exactly `count` times per phase; arm transaction bytes with arrive.expect_tx";
    v.bar_rank = int(target);
    v.bar = int(b);
    report(c, v);
    return false;
  }
  join(bar.pending_vc, vc);
  bar.pending -= 1;
  if (async) bar.async_phase = bar.completed + 1;
  maybe_complete(c, target, b);
  return true;
}

// ---- Shared-memory lines ----------------------------------------------------------------------------

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

// ---- The hooks -------------------------------------------------------------------------------------

// Outside the lock: whether every live thread of the cluster may now be waiting (then the deadlock
// check must run under the lock). Every thread that starts waiting fences after counting itself and
// then asks, so the last one to start sees all the others.
__device__ inline bool maybe_all_blocked(const Cluster& c) {
  const uint32_t n = relaxed(c.ctas);
  for (uint32_t r = 0; r < n && r < uint32_t(kMaxCtas); ++r) {
    const Cta& t = c.cta[r];
    if (!relaxed(t.live) || relaxed(t.blocked) < relaxed(t.threads) - relaxed(t.exited)) return false;
  }
  return true;
}


// Every hook is one out-of-line function per kernel, called from each of its sites: a checked kernel's
// loops then hold calls, not copies of the hooks (inlined, they made each k-tile loop of a checked
// sm_100a kernel tens of thousands of instructions: docs/data/sass/checked_sm100a.md).
#define GEMM_PROTOCOL_HOOK static __device__ __noinline__

// Each hook holds its warp's turn and the cluster's lock throughout ("The hooks the wrappers call",
// below, says which thread runs it); `G` is the state of the calling CTA's cluster. A hook with a fast
// path (`recorded`: nothing left to record) asks it before its turn and again after it.
#define GEMM_PROTOCOL_ENTER() \
  if (!cluster()) return;     \
  WarpTurn turn_;             \
  GEMM_PROTOCOL_LOCK()
#define GEMM_PROTOCOL_FAST_PATH() \
  if (recorded()) return;         \
  WarpTurn turn_;                 \
  if (recorded()) return;         \
  GEMM_PROTOCOL_LOCK()
#define GEMM_PROTOCOL_LOCK()                           \
  Cluster* cp_ = cluster();                            \
  if (!cp_) return;                                    \
  Cluster& G = *cp_;                                   \
  const uint32_t rank = ctarank();                     \
  const uint32_t warp = warp_id();                     \
  lock(G);                                             \
  if (aborted()) {                                     \
    unlock(G);                                         \
    return;                                            \
  }                                                    \
  Warp& W = G.cta[rank].warps[warp];                   \
  W.used = 1;                                          \
  W.acts += 1;                                         \
  (void)W

GEMM_PROTOCOL_HOOK void on_role(const char* name) {
  auto recorded = [&]() -> bool {  // Fast path, no lock: a lane of this warp has named it already.
    const Cluster* c = cluster();
    if (!c || relaxed(c->cta[ctarank()].warps[warp_id()].role[0]) == name[0]) return true;
    return false;
  };
  GEMM_PROTOCOL_FAST_PATH();
  copy_name(W.role, name);
  unlock(G);
}

GEMM_PROTOCOL_HOOK void on_init(uint32_t bar_addr, uint32_t count, const char* name, int index) {
  GEMM_PROTOCOL_ENTER();
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
    unlock(G);
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
      unlock(G);
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
  unlock(G);
}

GEMM_PROTOCOL_HOOK void on_inval(uint32_t bar_addr) {
  GEMM_PROTOCOL_ENTER();
  Cta& t = G.cta[rank];
  const int b = live_barrier(G, rank, smem_offset(bar_addr), rank, warp, "mbarrier.inval of a barrier that is not live");
  if (b >= 0) t.barriers[b].live = 0;
  unlock(G);
}

// mbarrier.arrive (target_rank: the CTA whose barrier it is), with `tx` bytes expected first.
GEMM_PROTOCOL_HOOK void on_arrive(uint32_t bar_addr, uint32_t target_rank, uint32_t tx) {
  GEMM_PROTOCOL_ENTER();
  const int b = live_barrier(G, target_rank, smem_offset(bar_addr), rank, warp, "an arrive on a barrier never initialised");
  if (b >= 0) {
    G.cta[target_rank].barriers[b].tx += int32_t(tx);
    if (arrive_on(G, target_rank, uint32_t(b), W.vc, false, rank, warp)) {
      W.vc[warp_agent(rank, warp)] += 1;
      W.snap_stale = 1;
    }
  }
  unlock(G);
}

// A TMA load (or bulk copy) of `bytes` into [dst, dst + bytes) of this CTA, completing on the barrier
// at bar_addr's offset in CTA `bar_rank`.
GEMM_PROTOCOL_HOOK void on_tma_load(uint32_t dst_addr, uint32_t bytes, uint32_t bar_addr, uint32_t bar_rank) {
  GEMM_PROTOCOL_ENTER();
  const int b = live_barrier(G, bar_rank, smem_offset(bar_addr), rank, warp,
                             "a TMA load completes on a barrier never initialised");
  if (b < 0) {
    unlock(G);
    return;
  }
  Barrier& bar = G.cta[bar_rank].barriers[b];
  Violation v = base_violation(rank, warp);
  v.rule = "tma-overwrites-unfinished";
  v.what = "a TMA load overwrites shared memory whose earlier accesses are not visible as finished to the issuing "
           "thread (a slot refilled before its consumers released it)";
  v.section = "PTX ISA 9.7.9.27 (cp.async.bulk.tensor) and 8 (memory consistency): the issuing thread must have "
              "observed the earlier readers' release (a commit or arrive it waited for)";
  v.fix = "wait on the slot's empty barrier (whose phase the consumers' tcgen05.commit or arrive completes) before "
          "refilling it";
  v.operand = "TMA destination";
  v.bar_rank = int(bar_rank);
  v.bar = b;
  const uint32_t off = smem_offset(dst_addr);
  if (access_smem(G, rank, off, off + bytes, Access::kAsyncWrite, W.vc, record(bar_agent(bar_rank, uint32_t(b)), bar.completed + 1), v)) {
    bar.tx -= int32_t(bytes);
    bar.tx_seen += bytes;
    bar.async_phase = bar.completed + 1;
    if (bar.pending == 0 && bar.tx < 0) {
      Violation o = base_violation(rank, warp);
      o.rule = "tx-overflow";
      o.what = "TMA transaction bytes beyond what arrive.expect_tx announced for the barrier's current phase";
      o.section = "PTX ISA 9.7.13.15.2 (tx-count): the bytes completed in a phase must equal the bytes expected";
      o.fix = "announce the bytes of every copy of the phase (both CTAs' for a pair) in expect_tx, and give each "
              "copy its true box size";
      o.bar_rank = int(bar_rank);
      o.bar = b;
      o.numbers = "(bytes of this copy, bytes counted in the phase)";
      o.a = bytes;
      o.b = bar.tx_seen;
      report(G, o);
    } else {
      maybe_complete(G, bar_rank, uint32_t(b));
    }
  }
  unlock(G);
}

// Before a wait on parity `parity`: is it blocked on a phase nothing recorded has completed?
GEMM_PROTOCOL_HOOK void on_wait_begin(uint32_t bar_addr, uint32_t parity) {
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
  GEMM_PROTOCOL_FAST_PATH();
  Cta& t = G.cta[rank];
  const int b = live_barrier(G, rank, smem_offset(bar_addr), rank, warp, "a wait on a barrier never initialised");
  if (b < 0) {
    unlock(G);
    return;
  }
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
    unlock(G);
    return;
  }
  if ((phase & 1) == (parity & 1)) {  // the phase waited for has not completed: blocked
    bar.waiting[parity & 1] += 1;
    bar.waiting_warps[parity & 1] |= 1u << warp;
    atomicAdd(&t.blocked, 1u);
    __threadfence();  // `blocked` before reading `exited`: on_thread_exit counts exits without the lock
    if (maybe_all_blocked(G)) check_deadlock(G);  // the last thread to block sees every other one
  }
  unlock(G);
}

// After the wait returned: the waiter now knows what the observed phase published.
GEMM_PROTOCOL_HOOK void on_wait_end(uint32_t bar_addr, uint32_t parity) {
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
  GEMM_PROTOCOL_FAST_PATH();
  Cta& t = G.cta[rank];
  const int b = find_barrier(t, smem_offset(bar_addr));
  if (b < 0) {
    unlock(G);
    return;
  }
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
    unlock(G);
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
  unlock(G);
}

// fence.proxy.async: this warp's generic writes so far may be read by the async proxy.
// Lanes after the first find no generic store of the warp since its latest fence: nothing to add.
GEMM_PROTOCOL_HOOK void on_fence_proxy_async() {
  auto recorded = [&]() -> bool {
    const Cluster* c = cluster();
    if (!c) return true;
    const Warp& w = c->cta[ctarank()].warps[warp_id()];
    const uint32_t n = relaxed(w.nfences), last = n ? relaxed(w.fences[(n - 1) % kFenceRing]) : 0;
    if (relaxed(w.generic_epoch) <= last) return true;
    return false;
  };
  GEMM_PROTOCOL_FAST_PATH();
  const uint32_t me = warp_agent(rank, warp);
  if (W.generic_epoch > (W.nfences ? W.fences[(W.nfences - 1) % kFenceRing] : 0)) {
    W.fences[W.nfences++ % kFenceRing] = W.vc[me];
    W.vc[me] += 1;
    W.snap_stale = 1;
  }
  unlock(G);
}

// Generic (st.shared / ld.shared) accesses a kernel declares: ptx::protocol_generic_write/read.
// Lanes naming one range (a warp's staging buffer) record the same access again, which changes nothing.
GEMM_PROTOCOL_HOOK void on_generic(uint32_t addr, uint32_t bytes, bool write) {
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
  GEMM_PROTOCOL_FAST_PATH();
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
  unlock(G);
}

// TMA store of [src, src + bytes) by this warp, read by its bulk-copy unit as part of the next group.
GEMM_PROTOCOL_HOOK void on_tma_store(uint32_t src_addr, uint32_t bytes) {
  GEMM_PROTOCOL_ENTER();
  Violation v = base_violation(rank, warp);
  v.rule = "tma-store-reads-unfinished";
  v.what = "a TMA store reads shared memory whose last write is not visible to the issuing warp";
  v.section = "PTX ISA 9.7.9.27 (cp.async.bulk.tensor, shared::cta to global) and 9.7.13.4 (fence.proxy.async)";
  v.fix = "every warp that wrote the staging buffer fences (fence.proxy.async) and synchronises with the issuing "
          "warp before the store is issued";
  v.operand = "TMA store source";
  const uint32_t off = smem_offset(src_addr);
  access_smem(G, rank, off, off + bytes, Access::kAsyncRead, W.vc, record(bulk_agent(rank, warp), W.bulk_committed + 1), v);
  unlock(G);
}

GEMM_PROTOCOL_HOOK void on_bulk_commit() {
  GEMM_PROTOCOL_ENTER();
  W.bulk_committed += 1;
  unlock(G);
}

// cp.async.bulk.wait_group(.read) N: all but the newest N groups have read their sources.
GEMM_PROTOCOL_HOOK void on_bulk_wait(uint32_t n) {
  GEMM_PROTOCOL_ENTER();
  if (W.bulk_committed >= n) {
    const uint32_t a = bulk_agent(rank, warp);
    if (W.vc[a] < W.bulk_committed - n) {
      W.vc[a] = W.bulk_committed - n;
      W.snap_stale = 1;
    }
  }
  unlock(G);
}

// tcgen05.fence::after_thread_sync: this warp's tcgen05 work from now on sees what the warp knows.
GEMM_PROTOCOL_HOOK void on_tc_fence_after() {
  auto recorded = [&]() -> bool {  // Fast path, no lock: the snapshot is already this warp's clock.
    const Cluster* c = cluster();
    if (!c) return true;
    if (!relaxed(c->cta[ctarank()].warps[warp_id()].snap_stale)) return true;
    return false;
  };
  GEMM_PROTOCOL_FAST_PATH();
  if (W.snap_stale) {
    copy_clock(W.snap, W.vc);
    W.snap_stale = 0;
  }
  unlock(G);
}

// tcgen05.fence::before_thread_sync: the warp's finished tcgen05.ld become visible through its next
// arrive or barrier.
GEMM_PROTOCOL_HOOK void on_tc_fence_before() {
  auto recorded = [&]() -> bool {  // Fast path, no lock: no finished tcgen05.ld of this warp waits to be published.
    const Cluster* c = cluster();
    if (!c) return true;
    const Warp& w = c->cta[ctarank()].warps[warp_id()];
    if (!relaxed(w.ld_waited) || !relaxed(w.npending)) return true;
    return false;
  };
  GEMM_PROTOCOL_FAST_PATH();
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
  unlock(G);
}

GEMM_PROTOCOL_HOOK void on_tc_wait_ld_record() {
  GEMM_PROTOCOL_ENTER();
  W.ld_waited = 1;
  unlock(G);
}

// tcgen05.ld of `n` columns from `taddr` (quadrant from its lane field).
GEMM_PROTOCOL_HOOK void on_tc_ld_record(uint32_t taddr, uint32_t n) {
  GEMM_PROTOCOL_ENTER();
  const uint32_t col = taddr & 0xFFFF, q = ((taddr >> 16) % 128) / 32;
  Violation v = base_violation(rank, warp);
  v.operand = "tcgen05.ld source";
  if (!columns_allocated(G, rank, col, n, v)) {
    unlock(G);
    return;
  }
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
      unlock(G);
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
      unlock(G);
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
      unlock(G);
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
  unlock(G);
}

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

// An mma of any kind (tcgen05::MmaKind): its descriptor is decoded as that kind lays out M and N;
// kind::f16 reads no scale factors (sfa_tmem, sfb_tmem unused).
GEMM_PROTOCOL_HOOK void on_mma(uint32_t d_tmem, uint64_t adesc, uint64_t bdesc, uint32_t idesc, uint32_t sfa_tmem,
                              uint32_t sfb_tmem, int cta_group, uint32_t kind = uint32_t(tcgen05::MmaKind::kMxf4Nvf4)) {
  GEMM_PROTOCOL_ENTER();
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
  unlock(G);
}

GEMM_PROTOCOL_HOOK void on_cp(uint32_t taddr, uint64_t sdesc, int cta_group) {
  GEMM_PROTOCOL_ENTER();
  uint32_t* tc = tc_clock(G, rank, W);
  const uint32_t lo = smem_offset(tcgen05::decode_smem_descriptor(sdesc).start);
  if (tc_reads_smem(G, rank, warp, cta_group, lo, lo + 512, tc, "tcgen05.cp source (scale factors)"))
    tc_writes_tmem(G, rank, warp, cta_group, taddr & 0xFFFF, 4, tc, "tcgen05.cp destination (scale factors)");
  G.cta[rank].tc_uncommitted = 1;
  unlock(G);
}

// tcgen05.commit: one arrival on each barrier of the mask once the tensor core's work so far is done.
GEMM_PROTOCOL_HOOK void on_commit(uint32_t bar_addr, uint32_t mask) {
  GEMM_PROTOCOL_ENTER();
  uint32_t* tc = G.cta[rank].tc_vc;
  const uint32_t off = smem_offset(bar_addr);
  for (uint32_t r = 0; r < G.ctas; ++r) {
    if (!(mask & (1u << r))) continue;
    const int b = live_barrier(G, r, off, rank, warp, "a tcgen05.commit arrives on a barrier never initialised");
    if (b < 0 || !arrive_on(G, r, uint32_t(b), tc, true, rank, warp)) break;
  }
  tc[tc_agent(rank)] += 1;
  G.cta[rank].tc_uncommitted = 0;
  unlock(G);
}

GEMM_PROTOCOL_HOOK void on_alloc_record(uint32_t taddr, uint32_t ncols, int cta_group) {
  GEMM_PROTOCOL_ENTER();
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
  unlock(G);
}

GEMM_PROTOCOL_HOOK void on_dealloc_record(uint32_t taddr, uint32_t ncols) {
  GEMM_PROTOCOL_ENTER();
  Cta& t = G.cta[rank];
  const uint32_t col = taddr & 0xFFFF;
  Violation v = base_violation(rank, warp);
  v.operand = "deallocated columns";
  v.tmem = true;  // every message of this hook names the columns (the loop below narrows them to one cell)
  v.mem_rank = int(rank);
  v.lo = col;
  v.hi = col + ncols;
  v.quadrant = kTmemQuadrants;
  if (!columns_allocated(G, rank, col, ncols, v)) {
    unlock(G);
    return;
  }
  if (G.cta[t.tmem_group == 2 ? rank & ~1u : rank].tc_uncommitted) {
    v.rule = "work-never-committed";
    v.what = "tcgen05.dealloc while the tensor core has mma/cp work that no tcgen05.commit covers: nothing can ever "
             "tell that work finished";
    v.section = "PTX ISA 9.7.16.12.1 (tcgen05.commit): completion of tcgen05.mma/cp is tracked only through a commit";
    v.fix = "commit after the last mma or cp, and wait for that commit before reading or deallocating";
    report(G, v);
    unlock(G);
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
        unlock(G);
        return;
      }
    }
  t.tmem_columns = 0;
  unlock(G);
}

GEMM_PROTOCOL_HOOK void on_relinquish_record() {
  GEMM_PROTOCOL_ENTER();
  G.cta[rank].relinquished = 1;
  unlock(G);
}

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
  WarpTurn turn_;
  if (published()) return true;
  lock(G);
  if (aborted()) {
    unlock(G);
    return false;
  }
  W.used = 1;
  W.acts += 1;
  if (pub_gen != generation + 1 || pub_acts + 1 != W.acts) {  // something new since (this entry's own act aside)
    join(into, W.vc);
    W.vc[me] += 1;
    W.snap_stale = 1;
    pub_gen = generation + 1;
  }
  pub_acts = W.acts;
  unlock(G);
  return true;
}

GEMM_PROTOCOL_HOOK void on_cta_sync_arrive() {
  Cluster* cp_ = cluster();
  if (!cp_) return;
  Cluster& G = *cp_;
  const uint32_t rank = ctarank(), warp = warp_id();
  Cta& t = G.cta[rank];
  Warp& W = t.warps[warp];
  const uint32_t gen = relaxed(t.sync_generation);
  if (!publish_at_sync(G, W, warp_agent(rank, warp), t.sync_vc, t.sync_generation, gen, W.pub_cta_gen, W.pub_cta_acts)) return;
  atomicAdd(&t.blocked, 1u);
  const uint32_t arrived = atomicAdd(&t.sync_arrived, 1u) + 1;
  __threadfence();  // `blocked` before reading `exited` (on_thread_exit)
  if (arrived < relaxed(t.threads) - relaxed(t.exited) && !maybe_all_blocked(G)) return;  // not the last, no deadlock
  lock(G);
  if (!aborted()) {
    settle_barriers(G);  // the generation completes here if every thread is in
    if (t.sync_generation == gen) check_deadlock(G);
  }
  unlock(G);
}
GEMM_PROTOCOL_HOOK void on_cta_sync_depart() {
  auto recorded = [&]() -> bool {  // Fast path, no lock: a lane of this warp has learned this generation's clock already.
    const Cluster* c = cluster();
    if (!c) return true;
    const Cta& t = c->cta[ctarank()];
    if (relaxed(t.warps[warp_id()].dep_cta_gen) == relaxed(t.sync_generation)) return true;
    return false;
  };
  GEMM_PROTOCOL_FAST_PATH();
  if (W.dep_cta_gen != G.cta[rank].sync_generation) {
    join(W.vc, G.cta[rank].sync_done_vc);
    W.snap_stale = 1;
    W.dep_cta_gen = G.cta[rank].sync_generation;
  }
  unlock(G);
}

GEMM_PROTOCOL_HOOK void on_cluster_sync_arrive() {
  Cluster* cp_ = cluster();
  if (!cp_) return;
  Cluster& G = *cp_;
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
  lock(G);
  if (!aborted()) {
    settle_barriers(G);
    if (G.sync_generation == gen) check_deadlock(G);
  }
  unlock(G);
}
GEMM_PROTOCOL_HOOK void on_cluster_sync_depart() {
  auto recorded = [&]() -> bool {  // Fast path, no lock: a lane of this warp has learned this generation's clock already.
    const Cluster* c = cluster();
    if (!c) return true;
    if (relaxed(c->cta[ctarank()].warps[warp_id()].dep_cl_gen) == relaxed(c->sync_generation)) return true;
    return false;
  };
  GEMM_PROTOCOL_FAST_PATH();
  if (W.dep_cl_gen != G.sync_generation) {
    join(W.vc, G.sync_done_vc);
    W.snap_stale = 1;
    W.dep_cl_gen = G.sync_generation;
  }
  unlock(G);
}

// A thread leaves the kernel (ptx::ProtocolScope). The CTA's last thread checks what the CTA leaves
// behind; the cluster's last CTA frees the cluster's state.
// A thread enters the kernel (ptx::ProtocolScope): see enter_kernel().
inline __device__ void on_thread_start() {
  if (enabled()) enter_kernel();
}

// A thread leaves the kernel (ptx::ProtocolScope). The CTA's last thread checks what the CTA leaves
// behind and clears its slot in shared memory; the cluster's last CTA frees the cluster's state.
GEMM_PROTOCOL_HOOK void on_thread_exit() {
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
  Cta& tc = G.cta[rank];
  const uint32_t before = atomicAdd(&tc.exited, 1u);
  __threadfence();
  const bool last_of_cta = before + 1 == relaxed(tc.threads);
  if (!last_of_cta) {
    if (maybe_all_blocked(G)) {
      lock(G);
      if (!aborted()) check_deadlock(G);
      unlock(G);
    }
    return;
  }
  // The CTA's last thread: it checks what the CTA leaves behind, and the cluster's last CTA frees the state.
  bool release = false;
  lock(G);
  if (!aborted()) {
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
    } else {
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
          break;
        }
      }
    }
    G.exited_ctas += 1;
    release = G.exited_ctas == G.ctas && !aborted();
    if (!release) check_deadlock(G);  // the peer's live threads may now be the only ones left, all waiting
  }
  unlock(G);
  // The slot in shared memory is left as it is: the next CTA on this SM sets its own at entry, and a
  // ticket is never reused, so a stale one names no running cluster. (Clearing it here would race
  // with this CTA's other threads, which read it on their way out.)
  if (release) {
    __threadfence();
    atomicExch(&G.ready, 0u);
    atomicExch(&G.owner, 0ull);
  }
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



#undef GEMM_PROTOCOL_ENTER
#undef GEMM_PROTOCOL_FAST_PATH
#undef GEMM_PROTOCOL_LOCK

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

// The emulator's own failures go through the checker's report (trap or report mode).
inline __device__ void report_emulator(const char* instruction, const char* what, uint32_t a, uint32_t b) {
  Msg m;
  m.s("tcgen05 emulator: ").s(instruction).s(": ").s(what).s(" [").u(a).s(", ").u(b).s("] (block ").u(blockIdx.x)
      .s(",").u(blockIdx.y).s(",").u(blockIdx.z).s(" thread ").u(threadIdx.x).s(")");
  report_text(m);
}

}  // namespace dev
#endif  // GEMM_PROTOCOL_ACTIVE

}  // namespace gemm::protocol

#include "common/protocol/checker_sync.cuh"  // named barriers, multicast copies, the pair's collective alloc
