// Host side of the tcgen05 emulator: everything it keeps lives in global memory, allocated once per
// process.
//
//   Tensor Memory   one 128-lane x 512-column x 32-bit array (256 KB) per SM
//   allocators      per SM, which 32-column units are allocated, and to whom
//   column states   per SM and column: which operation last wrote it, and which last read it as
//                   scale factors (the pending-work checks of ld, dealloc and strict cp)
//   CTA records     per SM and allocation unit (a CTA's first column identifies it on its SM): the
//                   issue counters of its issuing warp, the commits that arrived on its barriers,
//                   and a log of issued operations with fingerprints of their shared-memory operands
//   options         strict mode and the deadline of the emulator's waits
//
// docs/emulator.md describes the model; common/emu/tcgen05_emu.cuh is the device side.
#pragma once

#include <cstdint>

namespace gemm::emu {

inline constexpr int kUnitColumns = 32;                    // allocation granule
inline constexpr int kUnits = 512 / kUnitColumns;          // 16 granules per SM
inline constexpr int kLogCapacity = 256;                   // operations issued and not yet verified, per CTA
inline constexpr int kCommitEntries = 32;                  // (barrier, issuer) pairs a CTA's commits arrive on

// Per SM: a spin lock and, per 32-column unit, 0 when free or (start_unit + 1) << 8 | size_units
// of the allocation that holds it.
struct SmAllocator {
  int lock;
  uint32_t owner[kUnits];
};

// One Tensor Memory column of one SM. Sequence numbers count an issuing CTA's mma and cp operations
// from 1; `issuer` is that CTA's record.
struct ColumnState {
  uint32_t issuer;     // record of the CTA whose operation last wrote or read the column
  uint32_t write_seq;  // the last mma (D) or cp (scale factors) that wrote it; 0: none since alloc
  uint32_t read_seq;   // the last mma that reads it as scale factors; 0: none since alloc
  uint32_t reserved;
};

enum OpKind : uint32_t { kOpMma = 1, kOpCp = 2 };

// One issued operation, kept until every CTA whose shared memory it reads has verified that memory
// unchanged (at the wait that observes a commit covering it, or at dealloc).
struct alignas(16) OpRecord {
  uint64_t desc[2];     // mma: A and B shared-memory descriptors; cp: the source descriptor
  uint64_t fp[2][2];    // fingerprints [pair member][operand]: mma {A, B}, cp {SF, -}
  uint32_t seq;         // its sequence number (the slot is seq % kLogCapacity)
  uint32_t kind;        // OpKind
  uint32_t step;        // mma: k-step within its accumulation (0 = enable-input-d off); cp: that of the next mma
  uint32_t n;           // mma: N of the instruction
  uint32_t column;      // mma: D column; cp: destination column
  uint32_t cta_group;
  uint32_t reserved[2];
};

struct CommitEntry {
  uint32_t key;  // (issuer record + 1) << 15 | barrier shared-memory offset / 8; 0: free
  uint32_t seq;  // the issuer's operations up to this one are covered by a commit on that barrier
};

struct CtaRecord {
  // As an issuer (the CTA whose warp issues mma/cp/commit)
  uint32_t issued;       // sequence number of the last operation issued
  uint32_t committed;    // ... of the last operation a commit covers
  uint32_t visible;      // ... of the last operation observed complete: its results may be read
  uint32_t issuer_warp;  // warp index + 1 of the issuing warp; 0 until the first issue
  uint32_t step;         // k-step the next accumulating mma will have
  // As a holder of Tensor Memory and shared-memory operands
  uint32_t checked;      // its shared-memory operands are verified unchanged up to this issuer sequence
  uint32_t issuer;       // record of the CTA that issues for it: itself, or its pair's even CTA
  uint32_t sm, peer_sm;  // its SM, and its pair peer's (cta_group::2), else its own
  uint32_t cta_group;    // of its allocation
  uint32_t rank;         // %cluster_ctarank
  int lock;              // serialises verification, so no waiter returns while another still verifies
  CommitEntry commits[kCommitEntries];
  OpRecord log[kLogCapacity];
};

// A meeting point of the two CTAs of a pair at a cta_group::2 alloc (common/emu/tcgen05_emu.cuh).
inline constexpr uint32_t kRendezvousSlots = 4096, kRendezvousProbes = 64;
inline constexpr uint32_t kRendezvousFree = 0, kRendezvousRequested = 1, kRendezvousAnswered = 2;
struct Rendezvous {
  unsigned long long token;  // the pair's token while the slot is in use; 0: free
  uint32_t follower_sm;      // written by the odd CTA
  uint32_t address;          // the allocation, written by the even CTA
  uint32_t state;            // free, requested (odd CTA waiting), answered
  uint32_t reserved;
};

struct Options {
  unsigned long long timeout_ns;  // alloc, alloc rendezvous and observing waits (common/deadline.h)
  int strict;                     // report cp overwriting scale columns an unobserved mma still reads
};

struct State {
  uint32_t* tmem = nullptr;            // [sm][lane 0..127][column 0..511]
  SmAllocator* allocators = nullptr;   // [sm]
  ColumnState* columns = nullptr;      // [sm][column]
  CtaRecord* records = nullptr;        // [sm][allocation unit]
  Rendezvous* rendezvous = nullptr;    // [kRendezvousSlots]
  Options* options = nullptr;
  int num_sms = 0;
};

// Allocates the emulator's state once per process (zeroed; strict mode off), or returns nullptr on a
// GPU with real Tensor Memory (sm_100) or without a usable GPU.
const State* emulator_state();

// Strict mode (default off): a tcgen05.cp that overwrites scale-factor columns which an issued mma
// of the same CTA still reads, before a commit covering that mma was observed, traps. The PTX ISA
// orders cp before a later mma, not an mma before a later cp (docs/emulator.md); this project's
// own tests turn strict mode on.
void set_strict(bool strict);

// Number of 32-column units still allocated on any SM (for tests: 0 after every kernel that
// deallocated what it allocated).
int allocated_units();

// Clears the allocation tables and the pairs' alloc rendezvous (for tests that deliberately leak,
// and after a kernel the protocol checker stopped part-way, which can leave either behind).
void reset_allocations();

}  // namespace gemm::emu
