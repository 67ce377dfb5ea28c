// The cluster's state: its slot in the table, claimed at kernel entry; the warp's turn and the
// cluster's lock; and Hold, a hook's scoped hold on both.
//
// Part of the protocol checker: included by common/protocol/checker.cuh only, in its order.
#pragma once

#ifndef GEMM_PROTOCOL_CHECKER_PARTS
#error "include common/protocol/checker.cuh, not its parts"
#endif

#if GEMM_PROTOCOL_ACTIVE
namespace gemm::protocol::dev {

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
  uint32_t* flag = nullptr;  // null: not taken (the hook had nothing to do)
  // The sleep starts at 8 ns (a turn is often free again after one record of a few L2 round trips) and
  // doubles to 256 ns, the same cap as the cluster lock's backoff.
  __device__ explicit WarpTurn(bool take = true) {
    if (!take) return;
    flag = &slot().turn[warp_id()];
    for (uint32_t ns = 8; atomicCAS(flag, 0u, 1u) != 0u; ns = ns < 256 ? 2 * ns : ns) __nanosleep(ns);
    __threadfence();  // the records of the lane before it are visible to its fast path
  }
  __device__ ~WarpTurn() {
    if (!flag) return;
    __threadfence();
    atomicExch(flag, 0u);
  }
  __device__ bool taken() const { return flag != nullptr; }
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

// The cluster's lock for one scope. Empty (false) where report mode has ended the checked work: the
// lock is then given back at once, unless `even_if_aborted` (kernel entry, which records the CTA).
class ClusterLock {
 public:
  __device__ explicit ClusterLock(Cluster& c, bool even_if_aborted = false) : c_(&c) {
    lock(c);
    if (!even_if_aborted && aborted()) {
      unlock(c);
      c_ = nullptr;
    }
  }
  __device__ ~ClusterLock() {
    if (c_) unlock(*c_);
  }
  __device__ explicit operator bool() const { return c_ != nullptr; }
  ClusterLock(const ClusterLock&) = delete;
  ClusterLock& operator=(const ClusterLock&) = delete;

 private:
  Cluster* c_;
};

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
      {
        const ClusterLock held(c, /*even_if_aborted=*/true);
        c.cta[rank].live = 1;
        c.cta[rank].threads = block_threads();
      }
      s.index = idx;
      s.token = ticket;
    }
  }
  __syncthreads();
}


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

// A protocol hazard that the tcgen05 emulator's own bookkeeping finds (common/emu/): reported as the
// checker reports its rules, one format and one table (common/protocol/rules.h), its `extra` line
// naming the operation and where the emulator found it. Not under the lock: the message reads only
// the acting warp's role, which is written once.
static __device__ __noinline__ void report_found(const Violation& v) {
  Msg m;
  format_violation(m, own_cluster(), v);
  report_text(m);
}

// ---- A hook's hold on the state --------------------------------------------------------------------

// What a hook works on while it holds the state: its cluster, its warp's record, its CTA rank and warp.
struct HookState {
  Cluster& G;
  Warp& W;
  uint32_t rank;
  uint32_t warp;
};

// A hook's hold on its cluster's state for the hook's whole body: the warp's turn (WarpTurn), then the
// cluster's lock, given back in the reverse order when the hold goes out of scope, so no path of a hook
// can leave either taken. Empty (false) where checking is off or over (report mode), and where a lane
// of the warp ahead of this one has already made the record: a hook with a fast path passes its
// `recorded` test, asked before the turn (no atomics at all in the common case) and again once it is
// this lane's turn.
class Hold {
 public:
  __device__ Hold() : turn_(cluster() != nullptr) {
    if (turn_.taken()) take();
  }
  template <class Recorded>
  __device__ explicit Hold(Recorded recorded) : turn_(!recorded()) {
    if (turn_.taken() && !recorded()) take();
  }
  __device__ ~Hold() {
    if (c_) unlock(*c_);
  }
  __device__ explicit operator bool() const { return c_ != nullptr; }
  // Every hook counts as an act of its warp (a CTA or cluster barrier republishes after new acts).
  __device__ HookState state() const { return {*c_, c_->cta[rank_].warps[warp_], rank_, warp_}; }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;

 private:
  __device__ void take() {
    Cluster* c = cluster();
    if (!c) return;
    lock(*c);
    if (aborted()) {
      unlock(*c);
      return;
    }
    c_ = c;
    rank_ = ctarank();
    warp_ = warp_id();
    Warp& w = c->cta[rank_].warps[warp_];
    w.used = 1;
    w.acts += 1;
  }
  WarpTurn turn_;  // first: taken before the lock and given back after it
  Cluster* c_ = nullptr;
  uint32_t rank_ = 0, warp_ = 0;
};

}  // namespace gemm::protocol::dev
#endif  // GEMM_PROTOCOL_ACTIVE
