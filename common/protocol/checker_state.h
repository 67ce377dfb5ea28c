// The protocol checker's state: what it keeps in global memory, shared by the host (which allocates
// it and reads violations back) and the device (common/protocol/checker.cuh, which updates it).
//
// The model, in short (docs/protocol_checker.md has it in full). The checker follows the order of
// operations, never timing. Its logical threads are, per CTA, every warp, the tensor core (which
// runs the CTA's tcgen05 work in issue order) and, per warp, the bulk-copy unit that reads the
// warp's TMA stores; each mbarrier also keeps a clock (its number of completed phases). Every
// logical thread carries a vector clock over all of them. An access to shared memory or Tensor
// Memory is recorded as (logical thread, epoch); a later conflicting access is legal only if the
// accessor's clock has reached that epoch, that is, if the earlier access was made visible to it as
// finished through the barrier protocol:
//   - an arrive or a tcgen05.commit publishes the arriver's clock into the barrier's current phase;
//   - a wait that returns joins the clock of the phase it observed;
//   - a TMA load writes under the clock of the barrier it completes on: it is visible to whoever
//     has observed that phase complete;
//   - tcgen05 work sees what its issuing warp saw at its last tcgen05.fence::after_thread_sync;
//   - a tcgen05.ld is finished for others only after tcgen05.wait::ld and then
//     tcgen05.fence::before_thread_sync in the reading warp;
//   - a TMA store's source is finished for its warp after cp.async.bulk.wait_group.read;
//   - generic stores read by the async proxy need fence.proxy.async by the writing warp, visible to
//     the reader.
// A shadow of every mbarrier (count, pending arrivals, transaction bytes, phase) completes phases
// from the recorded operations alone, which gives the lifecycle rules and deadlock detection:
// when every live thread of a cluster waits on a phase that nothing recorded can complete.
#pragma once

#include <cstdint>
#include <string>

namespace gemm::protocol {

// ---- Limits of the model --------------------------------------------------------------------------

inline constexpr int kMaxCtas = 2;          // clusters of one CTA or one CTA pair
inline constexpr int kMaxWarps = 16;        // 512 threads per CTA
inline constexpr int kMaxBarriers = 32;     // initialised mbarriers per CTA
inline constexpr int kGranuleBytes = 128;   // shared memory is tracked in 128-byte lines (TMA's alignment)
inline constexpr int kGranules = 2048;      // 256 KB of .shared::cta offsets
inline constexpr int kTmemColumns = 512, kTmemQuadrants = 4;  // Tensor Memory cells: (32-lane quadrant, column)
inline constexpr int kReadSlots = 3;        // readers remembered per line or cell since its last write (a Line is 16 bytes)
inline constexpr int kFenceRing = 8;        // a warp's most recent fence.proxy.async epochs
inline constexpr int kPendingLd = 16;       // tcgen05.ld issued by a warp and not yet finished
inline constexpr int kClusterSlots = 512;   // clusters checked at the same time
inline constexpr int kNamedBarriers = 16;   // bar.sync / bar.arrive ids 0-15 (PTX ISA 9.7.13.1)

// Logical threads (agents): indices into every vector clock.
//   rank * kAgentsPerCta + w                  warp w of CTA `rank`
//   rank * kAgentsPerCta + kMaxWarps          the tensor core of CTA `rank`
//   rank * kAgentsPerCta + kMaxWarps + 1 + w  the bulk-copy unit reading warp w's TMA stores
//   kMaxCtas * kAgentsPerCta + rank * kMaxBarriers + b   mbarrier b of CTA `rank`
inline constexpr int kAgentsPerCta = 2 * kMaxWarps + 1;
inline constexpr int kBarrierAgents = kMaxCtas * kAgentsPerCta;
inline constexpr int kClock = kBarrierAgents + kMaxCtas * kMaxBarriers;
// A clock is stored in whole 16-byte words (the entries past kClock stay 0), so that joins and copies
// move it with vector loads: they run under the cluster's lock, where their latency is everyone's.
inline constexpr int kClockWords = (kClock + 3) / 4 * 4;

// An access record: (agent + 1) << 24 | epoch; 0 = none. Epochs start at 1.
inline constexpr uint32_t kEpochBits = 24, kEpochMask = (1u << kEpochBits) - 1;
inline constexpr uint32_t kPendingEpoch = kEpochMask;  // a tcgen05.ld not yet finished

// ---- What is kept ---------------------------------------------------------------------------------

struct alignas(16) Line {  // one 128-byte line of shared memory, or one Tensor Memory cell (16 bytes: one load)
  uint32_t write;             // last write: access record
  uint32_t read[kReadSlots];  // reads since the last write: access records
};

static_assert(sizeof(Line) == 16, "a Line is one 16-byte load");

struct Barrier {
  uint32_t offset;        // .shared::cta offset + 1; 0: free slot
  uint32_t live;          // 1 between init and inval
  uint32_t count;         // expected arrivals per phase
  uint32_t pending;       // arrivals still missing in the current phase
  int32_t tx;             // transaction bytes still expected in the current phase (may dip below 0)
  uint32_t completed;     // phases completed (the barrier's clock; keeps counting across re-inits)
  uint32_t phase_base;    // `completed` at its last init: the hardware's phase is completed - phase_base
  uint32_t observed;      // most phases a wait of the owning CTA has seen completed
  uint32_t async_phase;   // completed + 1 when the last asynchronous signal (commit, TMA bytes) arrived
  uint32_t waiting[2];    // lanes blocked on it, by parity
  uint32_t waiting_warps[2];
  uint32_t tx_seen;       // bytes counted in the current phase (for messages)
  int32_t index;          // the kernel's name for it: name[index]
  char name[16];
  alignas(16) uint32_t pending_vc[kClockWords];
  alignas(16) uint32_t done_vc[kClockWords];
};

// A named barrier (bar.sync / bar.arrive id, count; common/protocol/hooks/named.cuh). Arrivals count
// threads, a warp at a time (the ISA counts a whole warp whatever its active lanes); a generation
// completes when `count` threads have arrived. done_vc is the join of every completed generation's
// arrivals: a warp that learns it late may learn more than its own generation published, which can
// hide a race but never invent one.
struct NamedBarrier {
  uint32_t count;          // threads of the current generation (from its first arrival); 0: none yet
  uint32_t arrived;        // threads arrived in the current generation
  uint32_t waiting;        // of them, threads blocked in bar.sync
  uint32_t waiting_warps;  // their warps (bit w)
  uint32_t generation;     // generations completed
  uint32_t reserved[3];
  alignas(16) uint32_t pending_vc[kClockWords];
  alignas(16) uint32_t done_vc[kClockWords];
};

struct Warp {
  alignas(16) uint32_t vc[kClockWords];    // what this warp knows
  alignas(16) uint32_t snap[kClockWords];  // ... as of its last tcgen05.fence::after_thread_sync: what its tcgen05 work sees
  uint32_t snap_stale;     // vc has changed since snap was taken
  uint32_t seen[kMaxBarriers];  // phases completed at its last wait on each barrier of its CTA
  uint32_t fences[kFenceRing];  // its latest fence.proxy.async epochs
  uint32_t nfences;
  uint32_t generic_epoch;  // its own epoch at its latest generic store
  uint32_t ld_waited;      // tcgen05.wait::ld since its last tcgen05.ld
  uint32_t npending;       // tcgen05.ld not yet finished: quadrant << 20 | column << 8 | columns
  uint32_t pending[kPendingLd];
  uint32_t bulk_committed; // cp.async.bulk groups committed
  uint32_t used;           // this warp has done something the checker saw
  uint32_t acts;           // records it has made (under the lock): what "nothing new since" compares
  // The CTA and cluster barriers: the generation this warp last published its clock into (+1) and
  // `acts` at that moment, and the generation whose joined clock it last learned at departure.
  uint32_t pub_cta_gen, pub_cta_acts, dep_cta_gen;
  uint32_t pub_cl_gen, pub_cl_acts, dep_cl_gen;
  char role[16];
};

struct alignas(16) Cta {
  uint32_t live;            // this CTA has started (claimed its slot)
  uint32_t threads;         // blockDim.x * y * z
  uint32_t exited;          // threads that have left the kernel (ProtocolScope)
  uint32_t blocked;         // threads waiting on a phase that nothing recorded has completed
  uint32_t nbarriers;
  uint32_t tmem_column, tmem_columns, tmem_group;  // its Tensor Memory allocation (columns 0: none)
  uint32_t relinquished;
  uint32_t tc_uncommitted;  // its tensor core has work issued after its last tcgen05.commit
  uint32_t cluster_synced;  // it has passed a cluster barrier (its peer is known to be running)
  uint32_t pair_allocs;     // its tcgen05.alloc records (the pair's collective alloc is one operation)
  uint32_t sync_arrived, sync_generation;          // the CTA-wide barrier (ptx::cta_sync)
  uint32_t cluster_arrived;                         // its threads waiting at the cluster barrier
  alignas(16) uint32_t tc_vc[kClockWords];   // the tensor core
  alignas(16) uint32_t sync_vc[kClockWords];
  alignas(16) uint32_t sync_done_vc[kClockWords];
  Barrier barriers[kMaxBarriers];
  NamedBarrier named[kNamedBarriers];
  Warp warps[kMaxWarps];
  alignas(16) Line smem[kGranules];
  uint32_t smem_generic[kGranules / 32];  // bit set: the line's last write was a generic store
  alignas(16) Line tmem[kTmemQuadrants][kTmemColumns];
};

struct alignas(16) Cluster {
  unsigned long long owner;  // the cluster's identity while it runs; 0: free
  uint32_t ready;            // initialised by its claimer
  int lock;                  // every update of the cluster's state holds it
  uint32_t ctas;             // %cluster_nctarank
  uint32_t exited_ctas;
  int holder;                // 1 + the thread (linear index, CTA rank << 16) holding `lock`; 0: none
  uint32_t sync_arrived, sync_generation;  // the cluster barrier (ptx::cluster_sync)
  alignas(16) uint32_t sync_vc[kClockWords];
  alignas(16) uint32_t sync_done_vc[kClockWords];
  Cta cta[kMaxCtas];
};

// How a violation ends the kernel.
enum Mode : int {
  kTrap = 0,    // print the message and trap (the CUDA context is lost, as with any trap)
  kReport = 1,  // record the first message, then let every thread run to the end doing nothing
                // checked (waits return, emulated tcgen05 work is skipped); the host raises it
  kOff = 2,     // check nothing: for tests of the emulator's own traps, which a kernel's protocol
                // violation would otherwise pre-empt
};

inline constexpr int kMessageBytes = 2048;
struct Control {
  int mode;
  int aborted;             // a violation was recorded in report mode
  int violations;
  int reserved;
  unsigned long long tickets;  // numbers every cluster that enters a checked kernel
  char message[kMessageBytes];
};

struct State {
  Cluster* clusters = nullptr;  // [kClusterSlots]
  Control* control = nullptr;
};

// ---- Host ------------------------------------------------------------------------------------------

// The state, allocated once per process (about 143 MB of device memory), or nullptr without a usable GPU.
const State* checker_state();

// What a translation unit compiled with GEMM_PROTOCOL_CHECK = level binds: the state where that level
// checks this GPU (level 1: only on a GPU without native tcgen05, such as Hopper), else nullptr.
const State* checker_state_for(int level);

// Trap (default) or report mode for the kernels launched from now on.
void set_mode(Mode mode);

// After the device is idle: the first violation recorded since the last call ("" if none), and the
// checker's tables cleared for the next launch (a kernel ended by a violation leaves its clusters'
// state behind). In trap mode a violation has already trapped; this returns "".
std::string take_violation();

// Throws std::runtime_error with the message if take_violation() returns one.
void throw_if_violation();

}  // namespace gemm::protocol
