// The tcgen05 emulator: what the wrappers of common/ptx/tcgen05.cuh run when compiled for Hopper
// (sm_90a), where no tcgen05 instruction, no Tensor Memory and no E2M1 conversion exist.
//
// It is built from the PTX ISA's definitions (PTX ISA 9.1, section 9.7.16), not from what a kernel
// happens to need, and it refuses what it does not model:
//   Tensor Memory   128 lanes x 512 columns x 32 bits per SM, in global memory, owned by %smid;
//                   addresses lane << 16 | column, as on the hardware. Allocation in powers of two
//                   from 32 to 512 columns, first fit, blocking until columns are free; with
//                   cta_group::2 a rendezvous of both CTAs of the pair, which get the same columns.
//   tcgen05.mma     kind::mxf4nvf4.block_scale.block16, K = 64, dense: the real 64-bit shared-
//                   memory descriptors and the real 32-bit instruction descriptor are decoded;
//                   swizzles are applied to the absolute shared-memory address. Products are exact
//                   in FP32; the 64 products of one instruction are added in k order.
//   tcgen05.cp      .32x128b.warpx4: 32 rows of 16 bytes into all four 32-lane quadrants.
//   tcgen05.ld      .32x32b.xN from the calling warp's own quadrant.
//   tcgen05.commit  an arrive (count 1, release at cluster scope) on the mbarrier, local or on every
//                   CTA of the mask, recording which operations it covers.
//
// Asynchrony. The emulator computes an mma or cp when it is issued, but its results count as
// *pending* until a commit covering it has arrived on an mbarrier and some thread has returned from
// a wait on that barrier through ptx::wait_commit() (the "observing wait"); this is when the
// hardware guarantees them. So:
//   - tcgen05.ld of a column with a pending write traps (the accumulator read too early);
//   - the shared-memory bytes an mma or cp reads are fingerprinted at issue and verified when the
//     work is observed complete (or at dealloc): a difference traps, naming the instruction, the
//     operand, the CTA and the k-step (an mma issued before its TMA landed, or a stage refilled
//     before the commit covering its MMAs was waited for);
//   - dealloc of columns with pending work, and a kernel whose issuing warp never committed its last
//     work, trap;
//   - in strict mode (set_strict), a cp that overwrites scale columns an unobserved mma still reads
//     traps: the PTX ISA does not order an mma before a later cp.
// docs/emulator.md says what is modelled, how, and what remains blind. Emulated timings have no
// performance meaning.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "common/cuda_check.h"
#include "common/device_state.h"
#include "common/emu/tcgen05_emu_state.h"
#include "common/formats.h"
#include "common/ptx/cluster.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/swizzle.h"
#include "common/tcgen05_desc.h"

namespace gemm::emu {

// This translation unit's copy of the emulator's state; bind_emulator() fills it.
static __device__ State g_state;

// Host: the process's emulator state into this source file's copy (nothing where tcgen05 is native).
// Registered with the launch door, which runs it at the file's first launch (common/device_state.h).
static inline void bind_emulator() {
  if (const State* s = emulator_state()) CUDA_CHECK(cudaMemcpyToSymbol(g_state, s, sizeof(*s)));
}
namespace {
const device_state::Registration kBindEmulator{&bind_emulator};
}  // namespace

using ptx::cluster_ctarank;
using ptx::fence_acq_rel_cluster;
using ptx::ld_cluster_u32;
using ptx::map_to_rank;

// ---- Small PTX helpers ----------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smid() {
  uint32_t s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
__device__ __forceinline__ uint32_t linear_thread() {
  return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ uint32_t warp_index() { return linear_thread() / 32; }

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A value that names (this launch, this cluster, cluster rank `rank`) and is never 0. The emulator
// writes it next to what it keeps in a CTA's shared memory: shared memory is not cleared between
// CTAs, so a slot counts as this CTA's only when it carries this CTA's token.
__device__ __forceinline__ uint64_t identity_token(uint32_t rank) {
  uint64_t grid;
  uint32_t cx, cy, cz, nx, ny;
  asm volatile("mov.u64 %0, %%gridid;" : "=l"(grid));
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cx));
  asm volatile("mov.u32 %0, %%clusterid.y;" : "=r"(cy));
  asm volatile("mov.u32 %0, %%clusterid.z;" : "=r"(cz));
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(nx));
  asm volatile("mov.u32 %0, %%nclusterid.y;" : "=r"(ny));
  const uint64_t cluster = (uint64_t(cz) * ny + cy) * nx + cx;
  return splitmix64(splitmix64(grid) ^ (cluster << 5 | rank)) | 1;
}

__device__ __forceinline__ uint64_t ld_cluster_u64(uint32_t cluster_addr) {
  uint64_t v;
  asm volatile("ld.shared::cluster.u64 %0, [%1];" : "=l"(v) : "r"(cluster_addr) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t vload(const uint32_t& x) { return *reinterpret_cast<const volatile uint32_t*>(&x); }
__device__ __forceinline__ void vstore(uint32_t& x, uint32_t v) { *reinterpret_cast<volatile uint32_t*>(&x) = v; }

// Sum over the workers of a warp-collective call (all 32 lanes present when workers == 32).
__device__ __forceinline__ uint64_t sum_over_workers(uint64_t x, int workers) {
  if (workers == 32)
    for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}
__device__ __forceinline__ uint32_t broadcast_from_worker0(uint32_t x, int workers) {
  return workers == 32 ? __shfl_sync(0xffffffffu, x, 0) : x;
}

// A log entry as it is in L2: written by the issuing warp, possibly on another SM (each SM's L1 is
// not coherent with other SMs' writes), so it is read around L1.
__device__ inline OpRecord load_op(const OpRecord& src) {
  static_assert(sizeof(OpRecord) % 16 == 0, "read as 16-byte words");
  OpRecord out;
  const uint4* from = reinterpret_cast<const uint4*>(&src);
  uint4* to = reinterpret_cast<uint4*>(&out);
  for (int i = 0; i < int(sizeof(OpRecord) / 16); ++i) to[i] = __ldcg(from + i);
  return out;
}

// ---- Failure messages ---------------------------------------------------------------------------

// Stops the kernel with a message naming the instruction and the rule it broke (printed once per
// warp: the lowest lane that got here). Under the protocol checker's report mode it records the
// message and returns instead; every emulated instruction after that does nothing.
static __device__ __noinline__ void fail(const char* instruction, const char* what, uint32_t a = 0, uint32_t b = 0) {
#if GEMM_PROTOCOL_ACTIVE
  if (protocol::dev::enabled()) {
    if (threadIdx.x % 32 == uint32_t(__ffs(__activemask()) - 1)) protocol::dev::report_emulator(instruction, what, a, b);
    return;
  }
#endif
  if (threadIdx.x % 32 == uint32_t(__ffs(__activemask()) - 1))
    printf("tcgen05 emulator: %s: %s [%u, %u] (block %d,%d,%d thread %d)\n", instruction, what, a, b, blockIdx.x,
           blockIdx.y, blockIdx.z, threadIdx.x);
  __trap();
}

// A violation ended the checked work of every kernel (report mode): emulated instructions do nothing.
__device__ __forceinline__ bool stopped() { return ptx::protocol_aborted(); }
// The same decision for a call that all 32 lanes make together and that shuffles or __syncwarp()s
// inside: one answer for the whole warp. Asked lane by lane, the flag can be set between two lanes'
// reads (another warp reporting), and the lanes that return would leave the rest waiting in a
// full-warp shuffle for ever (a report-mode hang).
__device__ __forceinline__ bool stopped_warp(int workers) {
  return workers == 32 ? __any_sync(0xFFFFFFFFu, stopped()) : stopped();
}

static __device__ const char* op_name(uint32_t kind) { return kind == kOpMma ? "tcgen05.mma" : "tcgen05.cp"; }

// A protocol hazard: a rule of common/protocol/rules.h (its id, what went wrong, its PTX ISA section,
// the fix), the operation it concerns, where the emulator found it, and how far the issuer's work had
// been observed complete. Reported in the protocol checker's format, through its delivery (trap, or
// report mode), by the thread that found it: the checker and the emulator are one judge.
struct Site {
  const char* what;  // "the wait on barrier", "tcgen05.ld", ...
  const char* name;  // the barrier's name, or ""
  int index;         // the barrier's index, or -1
};
struct Hazard {
  const char* rule;     // the rule's id in common/protocol/rules.h ("emu-...")
  const char* what;     // one sentence
  const char* section;  // the PTX ISA section it comes from
  const char* fix;      // what makes it right
};
#if GEMM_PROTOCOL_ACTIVE
// The violation of rule `h` by the calling warp, as the checker's messages name it.
__device__ inline protocol::dev::Violation hazard_violation(const Hazard& h) {
  protocol::dev::Violation v;
  v.rule = h.rule;
  v.what = h.what;
  v.section = h.section;
  v.fix = h.fix;
  v.rank = int(cluster_ctarank());
  v.warp = int(warp_index());
  return v;
}
#endif
static __device__ __noinline__ void fail_hazard(const Hazard& h, const OpRecord& op, uint32_t rank, Site site,
                                                uint32_t observed) {
  if (threadIdx.x % 32 != uint32_t(__ffs(__activemask()) - 1)) return;  // one message per warp
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::Msg found;
  found.s("found: ").s(op_name(op.kind)).s(" #").u(op.seq).s(" (k-step ").u(op.step).s(", TMEM column ").u(op.column)
      .s(") of CTA rank ").u(rank).s(", at ").s(site.what);
  if (site.index >= 0) found.s(" '").s(site.name).s("' [").i(site.index).s("]");
  found.s("; operations observed complete so far: up to #").u(observed);
  protocol::dev::Violation v = hazard_violation(h);
  v.extra = found.buf;
  protocol::dev::report_found(v);
#else
  printf("protocol checker: %s: %s\n  by: warp %u (block %d,%d,%d)\n  found: %s #%u (k-step %u, TMEM column %u) of CTA "
         "rank %u, at %s; operations observed complete so far: up to #%u\n  rule: %s\n  fix: %s\n",
         h.rule, h.what, warp_index(), blockIdx.x, blockIdx.y, blockIdx.z, op_name(op.kind), op.seq, op.step,
         op.column, rank, site.what, observed, h.section, h.fix);
  __trap();
#endif
}
// A protocol rule broken by one instruction's operands, with the two numbers it names.
static __device__ __noinline__ void fail_rule(const Hazard& h, const char* numbers, uint32_t a, uint32_t b) {
  if (threadIdx.x % 32 != uint32_t(__ffs(__activemask()) - 1)) return;  // one message per warp
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::Violation v = hazard_violation(h);
  v.numbers = numbers;
  v.a = a;
  v.b = b;
  protocol::dev::report_found(v);
#else
  printf("protocol checker: %s: %s\n  by: warp %u (block %d,%d,%d)\n  %s %u, %u\n  rule: %s\n  fix: %s\n", h.rule, h.what,
         warp_index(), blockIdx.x, blockIdx.y, blockIdx.z, numbers, a, b, h.section, h.fix);
  __trap();
#endif
}

// ---- This CTA's identity and records --------------------------------------------------------------

struct CtaSlots {
  uint64_t token;           // identity_token(rank) once this CTA has allocated Tensor Memory
  uint32_t record;          // its CtaRecord in g_state.records
  uint32_t cta_group;       // of its alloc: every later tcgen05 instruction must use the same
};
__device__ __forceinline__ CtaSlots& slots() {
  __shared__ CtaSlots s;  // one per CTA, at the same offset in every CTA of the kernel
  return s;
}

__device__ __forceinline__ CtaRecord* my_record() {
  CtaSlots& s = slots();
  return s.token == identity_token(cluster_ctarank()) ? g_state.records + s.record : nullptr;
}

// The record of the CTA of cluster rank `rank`, or nullptr if it has not allocated Tensor Memory.
__device__ __forceinline__ CtaRecord* record_of_rank(uint32_t rank) {
  if (rank == cluster_ctarank()) return my_record();
  const uint32_t base = ptx::smem_addr(&slots());
  if (ld_cluster_u64(map_to_rank(base + offsetof(CtaSlots, token), rank)) != identity_token(rank)) return nullptr;
  return g_state.records + ld_cluster_u32(map_to_rank(base + offsetof(CtaSlots, record), rank));
}

__device__ __forceinline__ uint32_t record_index(const CtaRecord* r) { return uint32_t(r - g_state.records); }

// Every tcgen05 instruction needs this CTA's allocation, and must use its cta_group (PTX 9.7.16.10.9.1).
static __device__ CtaRecord g_stand_in;  // what an instruction works on after a reported failure
__device__ inline CtaRecord* require_record(const char* instruction, int cta_group) {
  CtaRecord* r = my_record();
  if (!r) {
    fail(instruction, "issued in a CTA that has not allocated Tensor Memory (tcgen05.alloc first)");
    return &g_stand_in;
  }
  if (cta_group > 0 && slots().cta_group != uint32_t(cta_group))
    fail(instruction, "mixed cta_group values in one kernel (this, the alloc's)", uint32_t(cta_group), slots().cta_group);
  return r;
}

// The SM of member v (0 = even, 1 = odd) of the group an operation of `rec`'s CTA addresses.
__device__ __forceinline__ uint32_t sm_of_member(const CtaRecord& rec, uint32_t v) {
  if (rec.cta_group == 1) return rec.sm;
  return (rec.rank & 1) == v ? rec.sm : rec.peer_sm;
}

__device__ __forceinline__ uint32_t visible_of(uint32_t issuer) { return vload(g_state.records[issuer].visible); }

// ---- Tensor Memory ------------------------------------------------------------------------------

// Emulated TMEM is read and written around L1 (ld.global.cg / st.global.cg): the other CTA of a pair
// writes it from another SM, and an SM's L1 is not coherent with other SMs' writes.
__device__ __forceinline__ uint32_t* tmem_cell(uint32_t sm, uint32_t lane, uint32_t column) {
  return g_state.tmem + (size_t(sm) * tcgen05::kTmemLanes + lane) * tcgen05::kTmemColumns + column;
}
__device__ __forceinline__ uint32_t tmem_load(uint32_t sm, uint32_t lane, uint32_t column) {
  return __ldcg(tmem_cell(sm, lane, column));
}
__device__ __forceinline__ void tmem_store(uint32_t sm, uint32_t lane, uint32_t column, uint32_t v) {
  __stcg(tmem_cell(sm, lane, column), v);
}
__device__ __forceinline__ ColumnState& column_state(uint32_t sm, uint32_t column) {
  return g_state.columns[size_t(sm) * tcgen05::kTmemColumns + column];
}

// Every column of [column, column + count) must belong to an allocation on SM `sm`.
__device__ __forceinline__ void check_allocated(const char* instruction, uint32_t sm, uint32_t column, uint32_t count) {
  if (column + count > uint32_t(tcgen05::kTmemColumns)) fail(instruction, "columns past the end of Tensor Memory", column, count);
  const volatile uint32_t* owner = g_state.allocators[sm].owner;
  for (uint32_t u = column / kUnitColumns; u <= (column + count - 1) / kUnitColumns; ++u)
    if (owner[u] == 0) fail(instruction, "columns that were not allocated (SM, column)", sm, u * kUnitColumns);
}

__device__ __forceinline__ void lock(int* l) {
  while (atomicCAS(l, 0, 1) != 0) {
  }
  __threadfence();
}
__device__ __forceinline__ void unlock(int* l) {
  __threadfence();
  atomicExch(l, 0);
}

__device__ __forceinline__ bool deadline_passed(unsigned long long start) {
  return ptx::global_timer_ns() - start > g_state.options->timeout_ns;
}

// First fit of `units` units aligned to their size, free on SM a and (if b != a) on SM b; claimed
// on both. -1 if there is none now.
__device__ inline int claim_units(uint32_t a, uint32_t b, uint32_t units) {
  SmAllocator* first = g_state.allocators + (a < b ? a : b);
  SmAllocator* second = a == b ? nullptr : g_state.allocators + (a < b ? b : a);
  lock(&first->lock);  // always the lower SM first: two pairs claiming never deadlock
  if (second) lock(&second->lock);
  volatile uint32_t* o1 = first->owner;
  volatile uint32_t* o2 = second ? second->owner : first->owner;
  int found = -1;
  for (uint32_t u = 0; u + units <= uint32_t(kUnits) && found < 0; u += units) {
    bool free = true;
    for (uint32_t j = 0; j < units; ++j) free = free && o1[u + j] == 0 && o2[u + j] == 0;
    if (free) found = int(u);
  }
  if (found >= 0)
    for (uint32_t j = 0; j < units; ++j) o1[found + j] = o2[found + j] = (uint32_t(found + 1) << 8) | units;
  if (second) unlock(&second->lock);
  unlock(&first->lock);
  return found;
}

__device__ inline int claim_units_blocking(uint32_t a, uint32_t b, uint32_t ncols) {
  const unsigned long long start = ptx::global_timer_ns();
  for (;;) {
    const int u = claim_units(a, b, ncols / kUnitColumns);
    if (u >= 0) return u;
    if (stopped()) return 0;
    if (deadline_passed(start))
      fail("tcgen05.alloc", "blocked past the deadline: not enough free columns (a missing dealloc?) (nCols, SM)", ncols,
           a);
  }
}

// A fresh record for the allocation at `unit` on `sm`, and fresh column states for its columns.
__device__ inline void init_record(uint32_t sm, uint32_t unit, uint32_t ncols, uint32_t issuer, uint32_t peer_sm,
                                   uint32_t cta_group, uint32_t rank) {
  CtaRecord& r = g_state.records[sm * kUnits + unit];
  r.issued = r.committed = r.visible = r.issuer_warp = r.step = r.checked = 0;
  r.issuer = issuer;
  r.sm = sm;
  r.peer_sm = peer_sm;
  r.cta_group = cta_group;
  r.rank = rank;
  r.lock = 0;
  for (int i = 0; i < kCommitEntries; ++i) r.commits[i] = CommitEntry{0, 0};
  for (uint32_t c = unit * kUnitColumns; c < unit * kUnitColumns + ncols; ++c) column_state(sm, c) = ColumnState{issuer, 0, 0, 0};
  __threadfence();
}

// The alloc rendezvous of a CTA pair: the odd CTA claims a slot of the table with the pair's token
// (open addressing over kRendezvousProbes slots) and its SM; the even CTA finds it, allocates on
// both SMs, writes the address and marks the slot answered; the odd CTA reads it and frees the slot.
__device__ inline Rendezvous& rendezvous_claim(uint64_t pair, uint32_t sm) {
  for (;;)
    for (uint32_t i = 0; i < kRendezvousProbes; ++i) {
      Rendezvous& r = g_state.rendezvous[(pair + i) % kRendezvousSlots];
      if (atomicCAS(&r.token, 0ull, pair) == 0ull) {
        vstore(r.follower_sm, sm);
        __threadfence();
        atomicExch(&r.state, kRendezvousRequested);
        return r;
      }
    }
}
__device__ inline Rendezvous* rendezvous_find(uint64_t pair) {
  for (uint32_t i = 0; i < kRendezvousProbes; ++i) {
    Rendezvous& r = g_state.rendezvous[(pair + i) % kRendezvousSlots];
    if (atomicAdd(&r.token, 0ull) == pair && atomicAdd(&r.state, 0u) == kRendezvousRequested) {
      __threadfence();
      return &r;
    }
  }
  return nullptr;
}

// tcgen05.alloc (called by one lane of the allocating warp).
__device__ inline void alloc(uint32_t* dst, uint32_t ncols, int cta_group) {
  if (stopped()) {
    *dst = 0;
    return;
  }
  if (ncols < 32 || ncols > 512 || (ncols & (ncols - 1)))
    fail("tcgen05.alloc", "nCols must be a power of two in [32, 512]", ncols);
  CtaSlots& s = slots();
  const uint32_t sm = smid(), rank = cluster_ctarank();
  const uint64_t me = identity_token(rank);
  if (s.token == me) fail("tcgen05.alloc", "a second allocation in one CTA is not modelled");
  uint32_t unit;
  if (cta_group == 1) {
    unit = uint32_t(claim_units_blocking(sm, sm, ncols));
    init_record(sm, unit, ncols, sm * kUnits + unit, sm, 1, rank);
  } else {
    // cta_group::2 is collective across the pair: both CTAs get the same columns, each on its own SM,
    // and the even CTA learns its peer's SM here, before any cp or mma can need it. The two meet in
    // a table in global memory (not in each other's shared memory: the peer may not have started).
    const uint32_t odd = rank | 1u;
    const uint64_t pair = splitmix64(identity_token(rank & ~1u)) | 1;
    const unsigned long long start = ptx::global_timer_ns();
    if (rank & 1) {
      Rendezvous& r = rendezvous_claim(pair, sm);
      while (atomicAdd(&r.state, 0u) != kRendezvousAnswered && !stopped())
        if (deadline_passed(start))
          fail("tcgen05.alloc.cta_group::2", "the even CTA of the pair never took part in the collective alloc (rank)", rank);
      unit = tcgen05::tmem_column(vload(r.address)) / kUnitColumns;
      vstore(r.address, 0);
      atomicExch(&r.state, kRendezvousFree);
      atomicExch(&r.token, 0ull);  // the slot may be claimed again
    } else {
      Rendezvous* r = nullptr;
      while (!(r = rendezvous_find(pair))) {
        if (stopped()) return;
        if (deadline_passed(start))
          fail("tcgen05.alloc.cta_group::2", "the odd CTA of the pair never took part in the collective alloc (rank)", rank);
      }
      const uint32_t peer_sm = vload(r->follower_sm);
      if (peer_sm == sm) fail("tcgen05.alloc.cta_group::2", "both CTAs of the pair run on one SM (SM)", sm);
      unit = uint32_t(claim_units_blocking(sm, peer_sm, ncols));
      init_record(sm, unit, ncols, sm * kUnits + unit, peer_sm, 2, rank);
      init_record(peer_sm, unit, ncols, sm * kUnits + unit, sm, 2, odd);
      vstore(r->address, tcgen05::tmem_address(0, unit * kUnitColumns));
      __threadfence();
      atomicExch(&r->state, kRendezvousAnswered);
    }
  }
  s.record = sm * kUnits + unit;
  s.cta_group = uint32_t(cta_group);
  s.token = me;
  *dst = tcgen05::tmem_address(0, unit * kUnitColumns);
}

// ---- Shared-memory operands ---------------------------------------------------------------------------

// Byte address, in the shared memory of the CTA the descriptor is read in, of byte `kb` of row `r`
// of a K-major operand described by `d` (PTX ISA 9.1, 9.7.16.3 and 5.5.7): 8-row groups SBO apart; inside a group,
// rows are one swizzle row apart (128, 64, 32 bytes) with the swizzle applied to the absolute
// address, or, without swizzle, 16-byte core-matrix rows with the K chunks LBO apart.
__device__ __forceinline__ uint32_t operand_byte_address(const tcgen05::SmemDescriptor& d, uint32_t r, uint32_t kb) {
  const uint32_t group = d.start + (r / 8) * d.sbo;
  switch (d.layout) {
    case tcgen05::Layout::kSwizzle128B: {
      const uint32_t a = group + (r % 8) * 128 + kb;
      return a ^ (((a >> 7) & 7u) << 4);
    }
    case tcgen05::Layout::kSwizzle64B: {
      const uint32_t a = group + (r % 8) * 64 + kb;
      return a ^ (((a >> 7) & 3u) << 4);
    }
    case tcgen05::Layout::kSwizzle32B: {
      const uint32_t a = group + (r % 8) * 32 + kb;
      return a ^ (((a >> 7) & 1u) << 4);
    }
    default:  // no swizzle
      return group + (r % 8) * 16 + (kb / 16) * d.lbo + kb % 16;
  }
}

__device__ inline tcgen05::SmemDescriptor checked_descriptor(const char* instruction, uint64_t w, bool allow_swizzle) {
  const tcgen05::SmemDescriptor d = tcgen05::decode_smem_descriptor(w);
  if (d.fixed_46_48 != 1) fail(instruction, "descriptor bits 46-48 must be 0b001", uint32_t(d.fixed_46_48));
  if (d.fixed_53_60 != 0) fail(instruction, "descriptor bits 53-60 must be 0", uint32_t(d.fixed_53_60));
  if (d.lbo_mode != 0) fail(instruction, "absolute LBO mode (sm_103a) is not modelled");
  if (d.base_offset != 0) fail(instruction, "a nonzero base offset is not modelled: start swizzled tiles 1024-byte aligned");
  const uint32_t layout = uint32_t(d.layout);
  const bool known = layout == 0 || layout == 2 || layout == 4 || layout == 6;
  if (!known) fail(instruction, "layout type not modelled (1 is MN-major only; 3, 5, 7 are invalid)", layout);
  if (!allow_swizzle && layout != 0) fail(instruction, "a swizzled source is not modelled for this instruction", layout);
  return d;
}

// Fingerprints: an order-free sum of a hash of (position, 32-bit word), so the same bytes give the
// same value however the words are split among workers, and any changed word changes it (with
// probability 1 - 2^-64).
__device__ __forceinline__ uint64_t word_hash(uint32_t position, uint32_t word) {
  return splitmix64(uint64_t(position) << 32 | word);
}

// Descriptors hold 18-bit shared-memory addresses; in a cluster launch a CTA's .shared::cta addresses
// carry higher bits, so every operand read goes through mapa to the CTA that holds the operand.

// Rows [row0, rows) step `stride` of an MMA operand (32 bytes of K each) in the shared memory of CTA
// `rank`: the fingerprint's share of those rows.
__device__ inline uint64_t hash_operand_rows(const tcgen05::SmemDescriptor& d, uint32_t rank, uint32_t row0,
                                             uint32_t rows, uint32_t stride) {
  uint64_t h = 0;
  for (uint32_t r = row0; r < rows; r += stride)
    for (uint32_t w = 0; w < 8; ++w)
      h += word_hash(r * 8 + w, ld_cluster_u32(map_to_rank(operand_byte_address(d, r, 4 * w), rank)));
  return h;
}

// Rows [row0, 32) step `stride` of a tcgen05.cp .32x128b source (16 bytes each).
__device__ inline uint64_t hash_cp_rows(const tcgen05::SmemDescriptor& d, uint32_t rank, uint32_t row0, uint32_t stride) {
  uint64_t h = 0;
  for (uint32_t i = row0; i < 32; i += stride)
    for (uint32_t j = 0; j < 4; ++j)
      h += word_hash(i * 4 + j, ld_cluster_u32(map_to_rank(d.start + (i / 8) * d.sbo + (i % 8) * 16 + 4 * j, rank)));
  return h;
}

// ---- Issue bookkeeping ------------------------------------------------------------------------------

// Worker 0 of the issuing warp: claims the issue of this CTA for its warp, and numbers the operation.
// Returns its sequence number; `step` gets the k-step (an mma with enable-input-d off starts at 0).
__device__ inline uint32_t number_operation(const char* instruction, CtaRecord& rec, uint32_t kind, bool accumulate,
                                            uint32_t* step) {
  const uint32_t me = warp_index() + 1;
  const uint32_t owner = vload(rec.issuer_warp);
  if (owner == 0) vstore(rec.issuer_warp, me);
  else if (owner != me)
    fail(instruction, "a second warp issues tcgen05 work in this CTA; the emulator tracks one issuing warp per CTA "
                      "(first warp, this warp)", owner - 1, me - 1);
  const uint32_t seq = vload(rec.issued) + 1;
  // rec.step is the k-step the next accumulating mma gets; a cp is labelled with it (it feeds that mma).
  *step = kind == kOpMma && !accumulate ? 0 : vload(rec.step);
  if (kind == kOpMma) vstore(rec.step, *step + 1);
  // The log slot this operation takes must have been verified by every CTA whose memory it reads.
  uint32_t oldest = vload(rec.checked);
  if (rec.cta_group == 2) {
    const uint32_t peer_checked = vload(g_state.records[rec.peer_sm * kUnits + (record_index(&rec) % kUnits)].checked);
    oldest = peer_checked < oldest ? peer_checked : oldest;
  }
  if (seq - oldest > uint32_t(kLogCapacity))
    fail(instruction, "more tcgen05 operations issued without a commit covering them being observed than the emulator "
                      "keeps (issued, verified): does the kernel wait on its commit barriers with wait_commit()?",
         seq, oldest);
  vstore(rec.issued, seq);
  return seq;
}

// The columns an operation writes become pending under its number, before its results are written
// (a tcgen05.ld that runs concurrently sees either the mark or the old values, never new values
// unmarked). Strict mode: a write over scale columns that an unobserved mma reads is a hazard.
__device__ inline void mark_writes(const char* instruction, CtaRecord& rec, uint32_t sm, uint32_t column, uint32_t count,
                                   uint32_t seq, int worker, int workers, bool strict_check) {
  const uint32_t me = record_index(&rec);
  for (uint32_t c = column + uint32_t(worker); c < column + count; c += uint32_t(workers)) {
    ColumnState& cs = column_state(sm, c);
    if (strict_check && g_state.options->strict) {
      const uint32_t reader = vload(cs.read_seq);
      if (reader > visible_of(vload(cs.issuer))) {
        const CtaRecord& owner = g_state.records[vload(cs.issuer)];
        OpRecord op = load_op(owner.log[reader % kLogCapacity]);
        op.column = c;
        fail_hazard({"emu-cp-overwrites-scales",
                     "tcgen05.cp overwrites scale-factor columns that an issued mma still reads, before a commit "
                     "covering that mma was observed (strict mode)",
                     "PTX ISA 9.7.16.6.2 (pipelined tcgen05 instructions): cp is ordered before a later mma, not an "
                     "mma before a later cp",
                     "give each pipeline stage its own scale-factor columns, or refill them only after waiting for "
                     "the mma's commit"},
                    op, rec.rank, Site{"tcgen05.cp", "", -1}, visible_of(vload(cs.issuer)));
      }
    }
    vstore(cs.issuer, me);
    vstore(cs.write_seq, seq);
  }
}
__device__ inline void mark_reads(CtaRecord& rec, uint32_t sm, uint32_t column, uint32_t count, uint32_t seq, int worker,
                                  int workers) {
  for (uint32_t c = column + uint32_t(worker); c < column + count; c += uint32_t(workers)) {
    ColumnState& cs = column_state(sm, c);
    vstore(cs.issuer, record_index(&rec));
    vstore(cs.read_seq, seq);
  }
}

// ---- tcgen05.cp .32x128b.warpx4 ---------------------------------------------------------------------------

// Row i (of 32) of the source, 16 bytes, goes to lanes i, 32 + i, 64 + i, 96 + i, columns c..c+3.
// With cta_group::2 both CTAs of the pair are filled, each from its own shared memory.
__device__ inline void cp_32x128b_warpx4(uint32_t taddr, uint64_t sdesc, int cta_group, int worker, int workers) {
  if (stopped_warp(workers)) return;
  const char* kName = "tcgen05.cp";
  CtaRecord& rec = *require_record(kName, cta_group);
  const tcgen05::SmemDescriptor d = checked_descriptor(kName, sdesc, false);
  const uint32_t lane0 = tcgen05::tmem_lane(taddr), column = tcgen05::tmem_column(taddr);
  if (lane0 != 0) fail(kName, ".32x128b.warpx4 writes all four quadrants: the lane field must be 0", lane0);
  const uint32_t first = cta_group == 2 ? rec.rank & ~1u : rec.rank;
  uint32_t seq = 0, step = 0;
  if (worker == 0) seq = number_operation(kName, rec, kOpCp, false, &step);
  seq = broadcast_from_worker0(seq, workers);
  for (int v = 0; v < cta_group; ++v) {
    const uint32_t sm = sm_of_member(rec, uint32_t(v));
    check_allocated(kName, sm, column, 4);
    mark_writes(kName, rec, sm, column, 4, seq, worker, workers, true);
  }
  __threadfence();
  if (workers == 32) __syncwarp();
  uint64_t fp[2] = {0, 0};
  for (int v = 0; v < cta_group; ++v) {
    const uint32_t rank = first + uint32_t(v), sm = sm_of_member(rec, uint32_t(v));
    for (int i = worker; i < 32; i += workers) {
      const uint32_t src = d.start + (i / 8) * d.sbo + (i % 8) * 16;
      for (int j = 0; j < 4; ++j) {
        const uint32_t word = ld_cluster_u32(map_to_rank(src + 4 * j, rank));
        fp[v] += word_hash(uint32_t(i) * 4 + j, word);
        for (int q = 0; q < 4; ++q) tmem_store(sm, 32 * q + i, column + j, word);
      }
    }
    fp[v] = sum_over_workers(fp[v], workers);
  }
  __threadfence();
  if (worker == 0) {
    OpRecord& op = rec.log[seq % kLogCapacity];
    op.desc[0] = sdesc;
    op.desc[1] = 0;
    op.fp[0][0] = fp[0];
    op.fp[1][0] = fp[1];
    op.fp[0][1] = op.fp[1][1] = 0;
    op.kind = kOpCp;
    op.step = step;
    op.n = 0;
    op.column = column;
    op.cta_group = uint32_t(cta_group);
    op.seq = seq;
    __threadfence();
  }
}

// ---- tcgen05.mma .kind::mxf4nvf4.block_scale.block16 -------------------------------------------------------

// The PTX ISA requires the scale factors duplicated in all four lane quadrants (what .warpx4 does):
// trap unless the four copies of the scales of `rows` rows at SF column base `sf_column` agree.
__device__ inline void check_sf_duplicated(uint32_t sm, uint32_t sf_column, uint32_t rows, int worker, int workers) {
  for (uint32_t r = uint32_t(worker); r < rows; r += uint32_t(workers)) {
    const tcgen05::SfCell c = tcgen05::sf_cell(sf_column, r, 0);
    const uint32_t word = tmem_load(sm, c.lane, c.column);
    for (uint32_t q = 1; q < 4; ++q)
      if (tmem_load(sm, c.lane + 32 * q, c.column) != word)
        fail("tcgen05.mma", "scale factors not duplicated in all four lane quadrants (row, column)", r, c.column);
  }
}

// The four scale bytes of row r (of A, or column r of B), as floats.
__device__ __forceinline__ void scales_of(uint32_t sm, uint32_t sf_column, uint32_t r, float sign, float (&out)[4]) {
  const tcgen05::SfCell c = tcgen05::sf_cell(sf_column, r, 0);
  const uint32_t word = tmem_load(sm, c.lane, c.column);
#pragma unroll
  for (int s = 0; s < 4; ++s) out[s] = sign * ue4m3_to_float(uint8_t(word >> (8 * s)));
}

// The 64 values of k of row r of an operand, times their scales (exact in FP32). Adds the row's
// share of the operand's fingerprint to *fp when fp is not null.
__device__ __forceinline__ void load_scaled_row(const tcgen05::SmemDescriptor& d, uint32_t rank, uint32_t r,
                                                uint32_t scale_sm, uint32_t sf_column, uint32_t sf_row, float sign,
                                                float (&out)[64], uint64_t* fp) {
  float scale[4];
  scales_of(scale_sm, sf_column, sf_row, sign, scale);
#pragma unroll
  for (int w = 0; w < 8; ++w) {  // 32 bytes of K: 8 words of 8 values
    const uint32_t word = ld_cluster_u32(map_to_rank(operand_byte_address(d, r, 4 * w), rank));
    if (fp) *fp += word_hash(r * 8 + w, word);
#pragma unroll
    for (int i = 0; i < 8; ++i) out[8 * w + i] = e2m1_to_float(uint8_t((word >> (4 * i)) & 0xF)) * scale[w / 2];
  }
}

// D (+)= (A . SFA)(B . SFB) for one instruction. `worker` of `workers` threads computes every
// workers-th row of D (of both CTAs with cta_group::2).
__device__ inline void mma_mxf4nvf4_block16(uint32_t d_tmem, uint64_t adesc, uint64_t bdesc, uint32_t idesc,
                                            uint32_t sfa_tmem, uint32_t sfb_tmem, bool accumulate, int cta_group,
                                            int worker, int workers) {
  if (stopped_warp(workers)) return;
  const char* kName = "tcgen05.mma";
  CtaRecord& rec = *require_record(kName, cta_group);
  const tcgen05::InstrDescriptor id = tcgen05::decode_instr_descriptor(idesc);
  if (id.reserved) fail(kName, "reserved instruction-descriptor bits set", id.reserved);
  if (id.sparse) fail(kName, "sparse MMA is not modelled");
  if (id.a_type != tcgen05::kTypeE2M1 || id.b_type != tcgen05::kTypeE2M1)
    fail(kName, "kind::mxf4nvf4 types other than E2M1 x E2M1 are not modelled", id.a_type, id.b_type);
  if (id.transpose_a || id.transpose_b) fail(kName, "mxf4nvf4 operands must be K-major (transpose bits set)");
  if (id.scale_type != tcgen05::kScaleUE4M3) fail(kName, "UE8M0 scales are not modelled");
  if (id.sfa_id || id.sfb_id) fail(kName, "block16 scales fill whole 32-bit columns: scale-factor ids must be 0", id.sfa_id, id.sfb_id);
  if (id.k96) fail(kName, "K = 96 (sm_103a) is not modelled");
  if (cta_group == 1 && (id.m != 128 || id.n < 8 || id.n > 256 || id.n % 8))
    fail(kName, "cta_group::1 needs M = 128 and N in 8..256 step 8", id.m, id.n);
  if (cta_group == 2 && id.m != 256)
    fail(kName, "cta_group::2 is modelled for M = 256 only (M = 128 uses the 2x2 datapath)", id.m);
  if (cta_group == 2 && (id.n < 16 || id.n > 256 || id.n % 16)) fail(kName, "cta_group::2 needs N in 16..256 step 16", id.n);
  const tcgen05::SmemDescriptor a = checked_descriptor(kName, adesc, true), b = checked_descriptor(kName, bdesc, true);
  // Alignment (docs/emulator.md): D and the scales start at lane 0 (datapath lane alignment 0 for
  // M = 128 and M = 256); scale columns are even (an odd SFB column gives wrong results on a B200).
  if (tcgen05::tmem_lane(d_tmem) || tcgen05::tmem_lane(sfa_tmem) || tcgen05::tmem_lane(sfb_tmem))
    fail(kName, "D and scale-factor addresses must start at lane 0", d_tmem, sfa_tmem);
  if (tcgen05::tmem_column(sfa_tmem) % 2 || tcgen05::tmem_column(sfb_tmem) % 2)
    fail(kName, "scale-factor addresses must be 2-column aligned (SFA column, SFB column)", tcgen05::tmem_column(sfa_tmem),
         tcgen05::tmem_column(sfb_tmem));
  const uint32_t N = id.n, d_col = tcgen05::tmem_column(d_tmem);
  const uint32_t sfa_col = tcgen05::tmem_column(sfa_tmem), sfb_col = tcgen05::tmem_column(sfb_tmem);
  const uint32_t first = cta_group == 2 ? rec.rank & ~1u : rec.rank;
  const uint32_t b_rows_per_cta = N / uint32_t(cta_group);

  uint32_t seq = 0, step = 0;
  if (worker == 0) seq = number_operation(kName, rec, kOpMma, accumulate, &step);
  seq = broadcast_from_worker0(seq, workers);
  for (int v = 0; v < cta_group; ++v) {
    const uint32_t sm = sm_of_member(rec, uint32_t(v));
    check_allocated(kName, sm, d_col, N);
    check_allocated(kName, sm, sfa_col, 4);
    check_allocated(kName, sm, sfb_col, (N + 31) / 32);
    check_sf_duplicated(sm, sfa_col, 128, worker, workers);
    check_sf_duplicated(sm, sfb_col, N, worker, workers);
    mark_writes(kName, rec, sm, d_col, N, seq, worker, workers, false);
    mark_reads(rec, sm, sfa_col, 4, seq, worker, workers);
    mark_reads(rec, sm, sfb_col, (N + 31) / 32, seq, worker, workers);
  }
  __threadfence();
  if (workers == 32) __syncwarp();

  uint64_t fp_a[2] = {0, 0}, fp_b[2] = {0, 0};
  for (int item = worker; item < 128 * cta_group; item += workers) {
    const uint32_t v = uint32_t(item) / 128, m = uint32_t(item) % 128, rank = first + v, sm = sm_of_member(rec, v);
    float arow[64];
    load_scaled_row(a, rank, m, sm, sfa_col, m, id.negate_a ? -1.0f : 1.0f, arow, &fp_a[v]);
    for (uint32_t n = 0; n < N; ++n) {
      // With cta_group::2, B's first N/2 rows sit in the even CTA, the rest in the odd one; the
      // scales of all N are in each CTA's own Tensor Memory.
      const uint32_t b_rank = first + n / b_rows_per_cta, b_row = n % b_rows_per_cta;
      float brow[64];
      load_scaled_row(b, b_rank, b_row, sm, sfb_col, n, id.negate_b ? -1.0f : 1.0f, brow, nullptr);
      float acc = accumulate ? __uint_as_float(tmem_load(sm, m, d_col + n)) : 0.0f;
#pragma unroll
      for (int k = 0; k < 64; ++k) acc = fmaf(arow[k], brow[k], acc);  // each product is exact
      tmem_store(sm, m, d_col + n, __float_as_uint(acc));
    }
  }
  for (int v = 0; v < cta_group; ++v) {
    fp_b[v] = hash_operand_rows(b, first + uint32_t(v), uint32_t(worker), b_rows_per_cta, uint32_t(workers));
    fp_a[v] = sum_over_workers(fp_a[v], workers);
    fp_b[v] = sum_over_workers(fp_b[v], workers);
  }
  __threadfence();
  if (worker == 0) {
    OpRecord& op = rec.log[seq % kLogCapacity];
    op.desc[0] = adesc;
    op.desc[1] = bdesc;
    op.fp[0][0] = fp_a[0];
    op.fp[0][1] = fp_b[0];
    op.fp[1][0] = fp_a[1];
    op.fp[1][1] = fp_b[1];
    op.kind = kOpMma;
    op.step = step;
    op.n = N;
    op.column = d_col;
    op.cta_group = uint32_t(cta_group);
    op.seq = seq;
    __threadfence();
  }
}

// Which barrier a commit entry is about: its offset in the CTA's shared memory, in 8-byte units. A
// CTA's shared memory is at most 228 KB, so the low 18 address bits name the byte; in a cluster
// launch the higher bits of a .shared::cta address differ from CTA to CTA.
__device__ __forceinline__ uint32_t barrier_slot(uint32_t smem_address) { return (smem_address & 0x3FFFFu) >> 3; }

// ---- Observation: verifying operands and publishing results ----------------------------------------------

// Verifies that the shared-memory operands, in this CTA, of the issuer's operations (from, to] are
// what they were at issue. Called with `rec`'s lock held.
__device__ inline void verify_operands(const CtaRecord& rec, const CtaRecord& issuer, uint32_t from, uint32_t to,
                                       Site site) {
  const uint32_t v = issuer.cta_group == 2 ? (rec.rank & 1) : 0;
  for (uint32_t s = from + 1; s <= to; ++s) {
    const OpRecord op = load_op(issuer.log[s % kLogCapacity]);
    if (op.seq != s) fail("tcgen05 emulator", "an operation's log entry was overwritten before it was verified (seq)", s);
    // Issued before its data landed, or its buffer refilled before a commit covering it was waited for.
    const auto changed = [](const char* what) {
      return Hazard{"emu-operand-changed", what,
                    "PTX ISA 9.7.16.6.4 (tcgen05.fence) and 9.7.16.12.1 (tcgen05.commit): an operand stays unchanged "
                    "from the issue until the commit covering the operation is observed",
                    "wait on the stage's full barrier before issuing, and refill a buffer only after waiting (through "
                    "wait_commit) for a commit covering its last reader"};
    };
    if (op.kind == kOpMma) {
      const tcgen05::SmemDescriptor a = tcgen05::decode_smem_descriptor(op.desc[0]);
      const tcgen05::SmemDescriptor b = tcgen05::decode_smem_descriptor(op.desc[1]);
      if (hash_operand_rows(a, rec.rank, 0, 128, 1) != op.fp[v][0])
        fail_hazard(changed("operand A changed in shared memory between issue and completion"), op, rec.rank, site, from);
      if (hash_operand_rows(b, rec.rank, 0, op.n / op.cta_group, 1) != op.fp[v][1])
        fail_hazard(changed("operand B changed in shared memory between issue and completion"), op, rec.rank, site, from);
    } else {
      const tcgen05::SmemDescriptor d = tcgen05::decode_smem_descriptor(op.desc[0]);
      if (hash_cp_rows(d, rec.rank, 0, 1) != op.fp[v][0])
        fail_hazard(changed("scale-factor source (SF) changed in shared memory between issue and completion"), op,
                    rec.rank, site, from);
    }
  }
}

// The issuer's operations up to `seq` are complete as seen from this CTA: verify this CTA's operands
// of them, then make their results visible (in both CTAs of a pair).
__device__ inline void publish(CtaRecord& rec, uint32_t issuer_index, uint32_t seq, Site site) {
  CtaRecord& issuer = g_state.records[issuer_index];
  if (vload(rec.checked) >= seq && vload(issuer.visible) >= seq) return;
  lock(&rec.lock);
  const uint32_t from = vload(rec.checked);
  if (from < seq) {
    verify_operands(rec, issuer, from, seq, site);
    vstore(rec.checked, seq);
  }
  atomicMax(&issuer.visible, seq);
  unlock(&rec.lock);
}

// After a thread has returned from a wait on `bar` (ptx::wait_commit): every commit recorded on this
// barrier of this CTA is observed.
__device__ inline void observe_commit(uint64_t* bar, const char* name, int index) {
  if (stopped()) return;
  CtaRecord* rec = my_record();
  if (!rec) return;  // a CTA without Tensor Memory holds nothing the commit could cover
  __threadfence();
  const uint32_t where = barrier_slot(ptx::smem_addr(bar));
  for (int i = 0; i < kCommitEntries; ++i) {
    const uint32_t key = vload(rec->commits[i].key);
    if (key != 0 && (key & 0x7FFFu) == where) publish(*rec, (key >> 15) - 1, vload(rec->commits[i].seq), Site{"the wait on barrier", name, index});
  }
}

// ---- tcgen05.ld .32x32b.xN ---------------------------------------------------------------------------------

// Which lane fields a tcgen05.ld may use (docs/emulator.md): the 32 lanes of the warp's quadrant,
// 32 * (warp % 4); in the odd CTA of a cta_group::2 kernel also 128 + 32 * (warp % 4), the address
// the M = 256 datapath figure gives its rows, which public kernels use and which reads the same
// lanes. TMEM lane = lane field % 128.
template <int N>
__device__ inline void ld_32x32b(uint32_t taddr, uint32_t (&r)[N]) {
  if (stopped_warp(32)) {  // .sync.aligned: all 32 lanes are here
    for (int i = 0; i < N; ++i) r[i] = 0;
    return;
  }
  const char* kName = "tcgen05.ld";
  CtaRecord& rec = *require_record(kName, 0);
  const uint32_t warp = warp_index(), lane = linear_thread() % 32;
  const uint32_t field = tcgen05::tmem_lane(taddr), column = tcgen05::tmem_column(taddr), quadrant = 32 * (warp % 4);
  const bool odd_of_pair = rec.cta_group == 2 && (rec.rank & 1);
  if (field != quadrant && !(odd_of_pair && field == 128 + quadrant))
    fail_rule({"emu-ld-outside-quadrant",
               "tcgen05.ld outside its warp's quadrant: a warp may only access the 32 lanes of its quadrant",
               "PTX ISA 9.7.16.8.1 (Tensor Memory access restrictions): warp w of a warpgroup accesses lanes "
               "32 * (w % 4) to 32 * (w % 4) + 31",
               "use lane field 32 * (warp % 4) (+ 128 in the odd CTA of a pair)"},
              "(lane field, warp)", field, warp);
  const uint32_t sm = rec.sm;
  check_allocated(kName, sm, column, N);
#pragma unroll
  for (int i = 0; i < N; ++i) r[i] = tmem_load(sm, field % 128 + lane, column + i);
  __threadfence();
  // Pending writes are checked after reading: a write marks its columns before changing them.
  uint32_t pending = 0, issuer = 0;
  if (lane < uint32_t(N)) {
    const ColumnState& cs = column_state(sm, column + lane);
    issuer = vload(cs.issuer);
    const uint32_t w = vload(cs.write_seq);
    if (w > visible_of(issuer)) pending = w;
  }
  const unsigned bad = __ballot_sync(0xffffffffu, pending != 0);
  if (bad && lane == uint32_t(__ffs(bad) - 1)) {
    OpRecord op = load_op(g_state.records[issuer].log[pending % kLogCapacity]);
    op.column = column + lane;
    fail_hazard({"emu-ld-pending-write",
                 "tcgen05.ld of a column with a pending write: reading the accumulator before the commit covering it "
                 "was waited for",
                 "PTX ISA 9.7.16.12.1 (tcgen05.commit): an mma's results are readable once the commit after it is "
                 "observed complete",
                 "wait (through wait_commit) on the barrier that the commit after the last mma arrives on, then "
                 "tcgen05.fence::after_thread_sync, then tcgen05.ld"},
                op, rec.rank, Site{"tcgen05.ld", "", -1}, visible_of(issuer));
  }
  __syncwarp();
}

// ---- tcgen05.dealloc ---------------------------------------------------------------------------------------

// Exactly an allocation made on this SM, with no work pending on its columns; the issuer's last work
// must have been committed. Verifies this CTA's operands of anything not yet verified (teardown).
__device__ inline void dealloc(uint32_t taddr, uint32_t ncols, int cta_group) {
  if (stopped()) return;
  const char* kName = "tcgen05.dealloc";
  CtaRecord& rec = *require_record(kName, cta_group);
  const uint32_t column = tcgen05::tmem_column(taddr), sm = smid(), units = ncols / kUnitColumns;
  if (tcgen05::tmem_lane(taddr) != 0 || column % kUnitColumns || ncols < 32 || ncols > 512 || (ncols & (ncols - 1)))
    fail(kName, "not an allocation's address and size", taddr, ncols);
  if (vload(rec.issuer_warp) && vload(rec.issued) > vload(rec.committed)) {
    OpRecord op = load_op(rec.log[vload(rec.issued) % kLogCapacity]);
    fail_hazard({"emu-uncommitted-at-dealloc",
                 "the kernel ends with work never committed (no tcgen05.commit after the last operation)",
                 "PTX ISA 9.7.16.12.1 (tcgen05.commit): completion of tcgen05.mma/cp is tracked only through a commit",
                 "commit after the last mma or cp, and wait for that commit before reading or deallocating"},
                op, rec.rank, Site{"tcgen05.dealloc", "", -1}, vload(rec.visible));
  }
  if (column + ncols <= uint32_t(tcgen05::kTmemColumns))
    for (uint32_t c = column; c < column + ncols; ++c) {
      const ColumnState& cs = column_state(sm, c);
      const uint32_t issuer = vload(cs.issuer), visible = visible_of(issuer);
      const uint32_t w = vload(cs.write_seq), rd = vload(cs.read_seq);
      if (w > visible || rd > visible) {
        OpRecord op = load_op(g_state.records[issuer].log[(w > visible ? w : rd) % kLogCapacity]);
        op.column = c;
        fail_hazard({"emu-dealloc-pending", "dealloc of Tensor Memory columns with pending work",
                     "PTX ISA 9.7.16.7.1 (tcgen05.dealloc): columns are deallocated after all their accesses completed",
                     "wait (through wait_commit) for the commit covering the last operation on these columns, and "
                     "synchronise the pair, before tcgen05.dealloc"},
                    op, rec.rank, Site{"tcgen05.dealloc", "", -1}, visible);
      }
    }
  {  // teardown: this CTA's operands of everything issued must still be intact
    const uint32_t issued = vload(g_state.records[rec.issuer].issued);
    lock(&rec.lock);
    if (vload(rec.checked) < issued) {
      verify_operands(rec, g_state.records[rec.issuer], vload(rec.checked), issued, Site{"tcgen05.dealloc", "", -1});
      vstore(rec.checked, issued);
    }
    unlock(&rec.lock);
  }
  SmAllocator* a = g_state.allocators + sm;
  volatile uint32_t* owner = a->owner;
  lock(&a->lock);
  const uint32_t u0 = column / kUnitColumns, tag = ((u0 + 1) << 8) | units;
  bool match = u0 + units <= uint32_t(kUnits);
  for (uint32_t j = 0; match && j < units; ++j) match = owner[u0 + j] == tag;
  if (match)
    for (uint32_t j = 0; j < units; ++j) owner[u0 + j] = 0;
  unlock(&a->lock);
  if (!match) fail(kName, "dealloc of what was not allocated (column, nCols)", column, ncols);
}

// ---- tcgen05.commit ----------------------------------------------------------------------------------------

// Records, on the barrier of every CTA in `cta_mask` (bit i: cluster rank i), that the committing
// warp's operations so far are covered, then arrives (count 1, release at cluster scope) on each.
// A commit from a warp that issued nothing covers nothing.
__device__ inline void commit(uint64_t* bar, uint16_t cta_mask, int cta_group) {
  if (stopped()) return;
  const char* kName = "tcgen05.commit";
  CtaRecord& rec = *require_record(kName, cta_group);
  const uint32_t seq = vload(rec.issuer_warp) == warp_index() + 1 ? vload(rec.issued) : 0;
  const uint32_t local = ptx::smem_addr(bar);
  if (seq) {
    if (seq > vload(rec.committed)) vstore(rec.committed, seq);
    const uint32_t key = (record_index(&rec) + 1) << 15 | barrier_slot(local);
    for (uint32_t rank = 0; rank < 16; ++rank) {
      if (!(cta_mask & (1u << rank))) continue;
      CtaRecord* target = record_of_rank(rank);
      if (!target) continue;  // a CTA without Tensor Memory: it only gets the arrive
      int slot = -1;
      for (int i = 0; i < kCommitEntries && slot < 0; ++i) {
        const uint32_t k = atomicCAS(&target->commits[i].key, 0u, key);
        if (k == 0 || k == key) slot = i;
      }
      if (slot < 0) fail(kName, "more (barrier, issuer) pairs receive commits in one CTA than the emulator keeps", kCommitEntries);
      atomicMax(&target->commits[slot].seq, seq);
    }
  }
  __threadfence();
  fence_acq_rel_cluster();
  for (uint32_t rank = 0; rank < 16; ++rank)
    if (cta_mask & (1u << rank))
      asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(map_to_rank(local, rank))
                   : "memory");
}

// ---- TMA with .cta_group::2 --------------------------------------------------------------------------------

// A TMA with .cta_group::2 (kRank 1 or 3 coordinates, unused ones 0): a plain TMA into this CTA's
// shared memory completing on a private barrier, a wait, then the bytes are reported to the leader
// CTA's barrier (mbarrier.complete_tx on a peer CTA's barrier exists on sm_90: PTX ISA 9.1,
// 9.7.13.15.12). The issuing thread blocks until its copy has landed.
template <int kRank>
__device__ inline void tma_load_cta_group2(void* dst, const CUtensorMap* map, int x, int y, int z, uint64_t* bar,
                                           uint32_t bytes) {
  static_assert(kRank == 1 || kRank == 3, "the wrappers issue 1-D and 3-D copies");
  if (stopped()) return;
  __shared__ uint64_t private_bar;  // one per CTA: one issuing thread at a time
  // The emulator's own barrier: raw instructions, which the protocol checker does not see (it sees
  // this copy as the wrapper recorded it: bytes completing on the leader's barrier).
  const uint32_t pb = uint32_t(__cvta_generic_to_shared(&private_bar)), to = uint32_t(__cvta_generic_to_shared(dst));
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(pb) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(pb), "r"(bytes) : "memory");
  if constexpr (kRank == 1) {
    (void)y, (void)z;
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
                 ::"r"(to), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(pb)
                 : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
        ::"r"(to), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(pb)
        : "memory");
  }
  const unsigned long long start = ptx::global_timer_ns();
  while (!ptx::mbarrier_try_wait_parity(&private_bar, 0))
    if (ptx::global_timer_ns() - start > g_state.options->timeout_ns) {
      fail("tma cta_group::2 (emulated)", "the copy did not land before the deadline");
      return;
    }
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(pb) : "memory");
  fence_acq_rel_cluster();
  const uint32_t leader = map_to_rank(uint32_t(__cvta_generic_to_shared(bar)), cluster_ctarank() & ~1u);
  asm volatile("mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;" ::"r"(leader), "r"(bytes) : "memory");
}

}  // namespace gemm::emu
