// The barrier protocol of a pipelined tcgen05 GEMM, broken on purpose. Each broken kernel below is
// wrong on a B200 in a way no single run there is guaranteed to show; under the emulator the
// protocol checker (common/protocol/checker.cuh) must catch each one from the order of operations,
// every time and with its own message, and its fixed twin must match the CPU reference bit for bit.
// On a B200 the twins run natively; the broken kernels are skipped (their behaviour is undefined
// there).
//
// The kernel: one CTA (cta_group::1, M = 128) or a CTA pair (cta_group::2, M = 256) computes `tiles`
// M x 128 tiles of D = A B^T over K = k_tiles x 256 into one accumulator, through a 2-slot ring:
//   warp 0, lane 0   producer: wait empty[s], arm full[s], TMA A, B, SFA, SFB (16-byte-line maps);
//                    at the end, wait for the last commits on its empty slots (the tail)
//   warp 1 (leader)  MMA: wait acc_empty, then per k-tile wait full[s], 4 x (cp SFA, cp SFB, mma),
//                    commit -> empty[s] of the pair; after a tile's last k-tile, commit -> acc_full
//   warps 2-5        epilogue: wait acc_full, tcgen05.ld their quadrant, store FP32, release
//                    acc_empty; warp 2 also allocates and deallocates Tensor Memory
// The overlapping variants (Bug::kOverlap*, stage 11's step 2 made small): two accumulators of 128
// columns that share 64, accumulator 0 in columns [0, 128) and 1 in [64, 192), tile t in accumulator
// t % 2. The epilogue reads a tile's shared half first (64..127 of TMEM in both), waits for the loads,
// fences before_thread_sync and arrives on the leader's overlap_free (4 warps x cta_group a tile), then
// reads the other half; the MMA warp starts tile t > 0 once overlap_free has completed phase t - 1
// (which also says that tile t - 2, in the same accumulator, is read: a warp reads its tiles in order).
// acc_empty is not used there.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/device_buffer.h"
#include "common/device_info.h"
#include "common/emu/tcgen05_emu_state.h"
#include "common/harness/gemm_tests.h"
#include "common/harness/problems.h"
#include "common/ptx/cluster.cuh"
#include "common/ptx/tcgen05.cuh"
#include "common/ptx/tma.cuh"
#include "common/protocol/checker_state.h"
#include "common/reference.h"
#include "common/sf_layout.h"
#include "common/swizzle.h"
#include "common/tensor_map.h"

namespace gemm {
namespace {

using namespace gemm::ptx;

// What is broken. kNone is every twin.
enum class Bug : int {
  kNone,
  kMmaIgnoresFull,        // 1. the MMA warp does not wait on full[s] before k-tile 0 (its copies are issued)
  kPlainArriveOnEmpty,    // 2. the MMA warp releases a slot with a plain arrive, not a commit
  kEpilogueNoWait,        // 3a. the epilogue reads the accumulator without waiting for the final commit
  kEpilogueEarlyBarrier,  // 3b. ... after waiting on a barrier committed after k-tile 0, not the final one
  kSingleSfColumns,       // 4. one set of scale columns for every k-step (strict mode)
  kFollowerNoWait,        // 5. cta_group::2: the odd CTA's epilogue does not wait for the final commit
  kPlainWaitOnAccFull,    // a plain mbarrier wait (not wait_commit) on the barrier a commit arrives on
  kNoFinalCommit,         // the last k-tile's work is never committed, and the CTA deallocates
  kDeallocPending,        // committed, never waited for, deallocated
  kOddCtaLaneOffset,      // not a bug: the odd CTA of a pair reads its lanes as 128 + 32 w
  kEvenCtaLaneOffset,     // the even CTA uses 128 + 32 w: not an address the hardware is known to take
  kLateOddAlloc,          // not a bug: the odd CTA allocates 50 ms after the even one
  kNoFenceAfterWait,      // the MMA warp waits on full[s] but issues without tcgen05.fence::after_thread_sync
  kEarlyAccRelease,       // 2 tiles: the epilogue releases the accumulator before tcgen05.wait::ld
  kReadUnwritten,         // the epilogue reads columns no mma wrote
  kWrongParityProducer,   // the producer's first wait on an empty slot uses parity 0: a deadlock
  kNoProducerTail,        // the producer exits without waiting for the last commits on its empty slots
  kPairAllocNoClusterSync,  // cta_group::2: the collective alloc before any cluster barrier
  kPeerDeallocEarly,      // cta_group::2: the odd CTA deallocates while the pair's MMAs may still run
  kNoDealloc,             // the kernel ends with Tensor Memory allocated
  kAllocAfterRelinquish,  // relinquish_alloc_permit, then alloc
  kGenericScales,         // not a bug: SFA stored by the producer with st.shared, fenced, then armed
  kGenericScalesNoFence,  // ... without fence.proxy.async
  kCpAfterMma,            // each k-step's scale copies issued after its mma: the first mma reads columns no cp filled
  kAllocTooSmall,         // Tensor Memory sized for the columns below the scales: the scale copies land outside it
  kOverlappingAccumulators,  // not a bug: two accumulators sharing half their columns (the file's comment)
  kOverlapReleasedBeforeRead,  // ... the epilogue arrives on overlap_free before it reads the shared half
  kOverlapWaitsTwoTilesBack,   // ... the MMA warp waits for tile t - 2's release, not t - 1's (right without the overlap)
};

__device__ bool overlapping(Bug bug) {
  return bug == Bug::kOverlappingAccumulators || bug == Bug::kOverlapReleasedBeforeRead ||
         bug == Bug::kOverlapWaitsTwoTilesBack;
}

constexpr int kSlots = 2;                // ring positions of the pipeline
constexpr int kThreads = 192;            // warp 0 producer, warp 1 MMA, warps 2-5 epilogue (quadrants 2, 3, 0, 1)
constexpr int kBN = 128;                 // N of the pair's tile
constexpr int kTileK = 256;              // values of k per slot: one 128-byte swizzle row
constexpr int kStepsPerTile = kTileK / 64;
constexpr uint32_t kSfColumn = 256;      // D in columns [0, 128); scales from here
constexpr uint32_t kSfColumnsPerSlot = 32;
constexpr uint32_t kAllocColumns = 512;  // every column: D and both slots' scales fit with room to spare
constexpr uint32_t kOverlapColumns = kBN / 2;  // the overlapping variants: accumulator 1 starts here, sharing
                                               // [kOverlapColumns, kBN) with accumulator 0
static_assert(kOverlapColumns + kBN <= kSfColumn, "both overlapping accumulators lie below the scales");

struct Params {
  int K;
  int tiles;     // output tiles computed one after the other into the same accumulator
  float* out;    // tiles x (128 * cta_group) x kBN
  const uint8_t* sfa_global;  // kGenericScales*: SFA as the producer copies it with plain loads
  int sfa_batch_lines;
  Bug bug;
};

template <int kCtaGroup>
struct Slot {
  alignas(1024) uint8_t a[128 * 128];
  alignas(1024) uint8_t b[kBN / kCtaGroup * 128];
  alignas(128) uint8_t sfa[kStepsPerTile * 512];
  alignas(128) uint8_t sfb[kStepsPerTile * 512];
};

template <int kCtaGroup>
struct Smem {
  Slot<kCtaGroup> slot[kSlots];
  uint64_t full[kSlots], empty[kSlots], acc_full, acc_empty;
  uint64_t first_tile_done;      // bug 3b: a commit after k-tile 0 arrives here
  uint64_t overlap_free;         // the overlapping variants, leader: every epilogue warp has read a tile's shared half
  uint32_t overlap_progress;     // the broken overlapping variants: epilogue warps past the point their bug races on
  volatile uint32_t odd_cta_read;  // bug 5: the odd CTA has read its accumulator
  uint32_t tmem;
  volatile uint32_t all_issued;  // set by the MMA warp: only the broken epilogues spin on it
  volatile uint32_t first_copy_issued;  // bug 1: the producer has issued k-tile 0's copies
};

__device__ void spin_ns(unsigned long long ns) {
  const unsigned long long start = global_timer_ns();
  while (global_timer_ns() - start < ns) {
  }
}

// Spins until the counter at this address in CTA `rank` of the cluster is at least `value`.
__device__ void wait_count(const uint32_t* counter, uint32_t rank, uint32_t value) {
  const uint32_t addr = map_to_rank(smem_addr(counter), rank);
  uint32_t v = 0;
  do {
    asm volatile("ld.acquire.cluster.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  } while (v < value);
}

// Spins until the flag at this address in CTA `rank` of the cluster is nonzero.
__device__ void wait_flag(const volatile uint32_t* flag, uint32_t rank) {
  const uint32_t addr = map_to_rank(smem_addr(const_cast<const uint32_t*>(flag)), rank);
  uint32_t v = 0;
  do {
    asm volatile("ld.acquire.cluster.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  } while (v == 0);
}

template <int kCtaGroup>
__global__ void __launch_bounds__(kThreads) pipeline_kernel(const __grid_constant__ CUtensorMap map_a,
                                                       const __grid_constant__ CUtensorMap map_b,
                                                       const __grid_constant__ CUtensorMap map_sfa,
                                                       const __grid_constant__ CUtensorMap map_sfb, Params p) {
  ProtocolScope protocol_scope;  // the checker sees each thread leave
  extern __shared__ unsigned char raw[];
  Smem<kCtaGroup>& s = *reinterpret_cast<Smem<kCtaGroup>*>(align_to_swizzle_atom(raw));
  const uint32_t rank = kCtaGroup == 2 ? cluster_ctarank() : 0;
  const bool leader = rank == 0;
  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  const uint16_t pair_mask = kCtaGroup == 2 ? 0x3 : 0x1;
  const int k_tiles = p.K / kTileK;
  const int b_rows = kBN / kCtaGroup;
  const bool generic_sfa = p.bug == Bug::kGenericScales || p.bug == Bug::kGenericScalesNoFence;
  const uint32_t slot_bytes = uint32_t(128 * 128 + b_rows * 128 + 2 * kStepsPerTile * 512);
  const uint32_t armed_bytes = slot_bytes - (generic_sfa ? kStepsPerTile * 512 : 0);
  const int sf_lines_per_row_block = int(sf_padded_cols(p.K) / kSfTileCols) * 32;
  const uint32_t alloc_columns = p.bug == Bug::kAllocTooSmall ? kSfColumn : kAllocColumns;

  // Slots hold a pattern no operand has, so an MMA that reads them before TMA lands cannot read the
  // right bytes by accident (left over from an earlier kernel on this SM).
  for (int i = int(threadIdx.x); i < int(sizeof(s.slot)) / 4; i += blockDim.x)
    reinterpret_cast<uint32_t*>(s.slot)[i] = 0xA5A5A5A5u ^ uint32_t(i);
  fence_proxy_async_shared();  // those generic writes come before the async-proxy ones (TMA, tcgen05)
  if (threadIdx.x == 0) {
    for (int i = 0; i < kSlots; ++i) {
      mbarrier_init(&s.full[i], 1, "full", i);
      mbarrier_init(&s.empty[i], 1, "empty", i);
    }
    mbarrier_init(&s.acc_full, 1, "acc_full", 0);
    mbarrier_init(&s.acc_empty, 4 * kCtaGroup, "acc_empty", 0);
    mbarrier_init(&s.first_tile_done, 1, "first_tile_done", 0);
    mbarrier_init(&s.overlap_free, 4 * kCtaGroup, "overlap_free", 0);
    s.overlap_progress = 0;
    s.all_issued = 0;
    s.first_copy_issued = 0;
    s.odd_cta_read = 0;
    fence_mbarrier_init();
  }
  protocol_role(warp == 0 ? "producer" : warp == 1 ? "mma" : "epilogue");
  const bool epilogue = warp >= 2;
  cta_sync();
  if constexpr (kCtaGroup == 2)
    if (p.bug != Bug::kPairAllocNoClusterSync) cluster_sync();
  if (warp == 2) {
    if (p.bug == Bug::kLateOddAlloc && rank == 1 && lane == 0) spin_ns(50'000'000ull);
    __syncwarp();
    if (p.bug == Bug::kAllocAfterRelinquish) tcgen05_relinquish_alloc_permit<kCtaGroup>();
    tcgen05_alloc<kCtaGroup>(&s.tmem, alloc_columns);
  }
  tcgen05_fence_before_thread_sync();
  cta_sync();
  if constexpr (kCtaGroup == 2) cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem = s.tmem;
  const int total_k_tiles = p.tiles * k_tiles;

  if (warp == 0 && lane == 0) {  // producer
    for (int it = 0; it < total_k_tiles; ++it) {
      const int st = it % kSlots, kt = it % k_tiles;
      const uint32_t first_parity = p.bug == Bug::kWrongParityProducer ? 0u : 1u;
      wait_commit(&s.empty[st], ((it / kSlots) & 1) ^ first_parity, "empty", st);
      Slot<kCtaGroup>& b = s.slot[st];
      const int sfa_line = int(rank) * sf_lines_per_row_block + kt * kStepsPerTile * 32;
      const int sfb_line = kt * kStepsPerTile * 32;
      if (generic_sfa) {  // the scales of A through the generic proxy (st.shared), then declared
        const uint4* from = reinterpret_cast<const uint4*>(p.sfa_global + size_t(sfa_line) * 16);
        for (int i = 0; i < kStepsPerTile * 32; ++i) reinterpret_cast<uint4*>(b.sfa)[i] = from[i];
        protocol_generic_write(b.sfa, kStepsPerTile * 512);
        if (p.bug != Bug::kGenericScalesNoFence) fence_proxy_async_shared();
      }
      if (leader) mbarrier_arrive_expect_tx(&s.full[st], kCtaGroup * armed_bytes);
      if constexpr (kCtaGroup == 1) {
        tma_load_3d(b.a, &map_a, kt * 128, 0, 0, &s.full[st], 128 * 128);
        tma_load_3d(b.b, &map_b, kt * 128, 0, 0, &s.full[st], kBN * 128);
        if (!generic_sfa) tma_load_3d(b.sfa, &map_sfa, 0, sfa_line, 0, &s.full[st], kStepsPerTile * 512);
        tma_load_3d(b.sfb, &map_sfb, 0, sfb_line, 0, &s.full[st], kStepsPerTile * 512);
      } else {
        tma_load_3d_cta_group2(b.a, &map_a, kt * 128, 128 * int(rank), 0, &s.full[st], 128 * 128);
        tma_load_3d_cta_group2(b.b, &map_b, kt * 128, b_rows * int(rank), 0, &s.full[st], uint32_t(b_rows * 128));
        if (!generic_sfa) tma_load_3d_cta_group2(b.sfa, &map_sfa, 0, sfa_line, 0, &s.full[st], kStepsPerTile * 512);
        tma_load_3d_cta_group2(b.sfb, &map_sfb, 0, sfb_line, 0, &s.full[st], kStepsPerTile * 512);
      }
      if (it == 0) s.first_copy_issued = 1;
    }
    // The tail: the last commits on the empty slots are asynchronous arrives into this CTA's shared
    // memory; wait for them before the CTA may exit.
    // (kDeallocPending, kPlainWaitOnAccFull: nothing else observes a commit through wait_commit, so the
    // producer's tail would be what makes the tensor core's work visible to the emulator before the
    // dealloc or the epilogue's read, depending on which thread gets there first.)
    if (p.bug != Bug::kNoProducerTail && p.bug != Bug::kNoFinalCommit && p.bug != Bug::kPlainArriveOnEmpty &&
        p.bug != Bug::kDeallocPending && p.bug != Bug::kPlainWaitOnAccFull)
      for (int it = total_k_tiles; it < total_k_tiles + kSlots; ++it)
        wait_commit(&s.empty[it % kSlots], ((it / kSlots) & 1) ^ 1, "empty", it % kSlots);
  }
  if (warp == 1 && leader) {  // MMA warp, all 32 lanes (one elected lane issues on a B200)
    const uint32_t idesc = tcgen05::nvfp4_instr_descriptor(128 * kCtaGroup, kBN);
    for (int t = 0; t < p.tiles; ++t) {
      if (!overlapping(p.bug)) {
        wait_commit(&s.acc_empty, (t & 1) ^ 1, "acc_empty", 0);  // the epilogue has drained the last tile
      } else {
        // Every epilogue warp has read the shared half of tile t - 1 (and with it all of tile t - 2). The
        // broken wait is for tile t - 2's release, right for two separate accumulators.
        const int back = p.bug == Bug::kOverlapWaitsTwoTilesBack ? 2 : 1;
        if (t >= back) mbarrier_wait_bounded(&s.overlap_free, uint32_t((t - back) & 1), wait_timeout_ns(), "overlap_free", 0);
        if (p.bug != Bug::kOverlappingAccumulators && t > 0) {
          // The broken variants: the moment a B200 would race, made certain. Every epilogue warp has
          // issued its loads of tile t - 1's shared half (released too early), or has released them
          // (the release this MMA warp does not wait for). A plain flag: it orders nothing for the checker.
          if (lane == 0)
            for (uint32_t r = 0; r < uint32_t(kCtaGroup); ++r) wait_count(&s.overlap_progress, r, 4u * uint32_t(t));
          __syncwarp();
        }
      }
      tcgen05_fence_after_thread_sync();
      const uint32_t d_column = overlapping(p.bug) ? kOverlapColumns * uint32_t(t % 2) : 0u;
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int it = t * k_tiles + kt, st = it % kSlots;
        const bool skip_wait = p.bug == Bug::kMmaIgnoresFull && it == 0;
        if (skip_wait) {  // bug 1: the copies are issued (and may be in flight): the MMA warp goes ahead
          if (lane == 0) wait_flag(&s.first_copy_issued, 0);
          if (kCtaGroup == 2 && lane == 0) wait_flag(&s.first_copy_issued, 1);
          __syncwarp();
          tcgen05_fence_after_thread_sync();
        }
        if (!skip_wait) mbarrier_wait_bounded(&s.full[st], (it / kSlots) & 1, wait_timeout_ns(), "full", st);
        if (p.bug != Bug::kNoFenceAfterWait) tcgen05_fence_after_thread_sync();
        const Slot<kCtaGroup>& b = s.slot[st];
        for (int j = 0; j < kStepsPerTile; ++j) {
          const bool single = p.bug == Bug::kSingleSfColumns;
          const uint32_t sfa = kSfColumn + (single ? 0 : st * kSfColumnsPerSlot + 4 * j);
          const uint32_t sfb = kSfColumn + 16 + (single ? 0 : st * kSfColumnsPerSlot + 4 * j);
          auto copy_scales = [&] {
            tcgen05_cp_32x128b_warpx4_warp<kCtaGroup>(tmem + sfa, tcgen05::sf_atom_descriptor(smem_addr(b.sfa + 512 * j)));
            tcgen05_cp_32x128b_warpx4_warp<kCtaGroup>(tmem + sfb, tcgen05::sf_atom_descriptor(smem_addr(b.sfb + 512 * j)));
          };
          if (p.bug != Bug::kCpAfterMma) copy_scales();
          const uint64_t a_desc = tcgen05::advance_start(tcgen05::kmajor_sw128_descriptor(smem_addr(b.a)), 32 * j);
          const uint64_t b_desc = tcgen05::advance_start(tcgen05::kmajor_sw128_descriptor(smem_addr(b.b)), 32 * j);
          tcgen05_mma_nvfp4_warp<kCtaGroup>(tmem + d_column, a_desc, b_desc, idesc, tmem + sfa, tmem + sfb, kt > 0 || j > 0);
          if (p.bug == Bug::kCpAfterMma) copy_scales();
        }
        const bool last = kt == k_tiles - 1 && t == p.tiles - 1;
        if (p.bug == Bug::kEpilogueEarlyBarrier && it == 0) tcgen05_commit_multicast_warp<kCtaGroup>(&s.first_tile_done, pair_mask);
        if (p.bug == Bug::kPlainArriveOnEmpty) {
          __syncwarp();
          if (lane == 0)
            for (uint32_t r = 0; r < uint32_t(kCtaGroup); ++r) mbarrier_arrive_cluster(&s.empty[st], r);
        } else if (!(last && p.bug == Bug::kNoFinalCommit)) {
          tcgen05_commit_multicast_warp<kCtaGroup>(&s.empty[st], pair_mask);
        }
        if (kt == k_tiles - 1 && !(last && p.bug == Bug::kNoFinalCommit))
          tcgen05_commit_multicast_warp<kCtaGroup>(&s.acc_full, pair_mask);
      }
    }
    __syncwarp();
    if (lane == 0) s.all_issued = 1;
  }

  // Epilogue. The broken variants wait for the wrong thing, or for a plain flag that says "all work
  // was issued": the moment a B200 would race, made certain.
  auto wait_all_issued = [&] {
    if (lane == 0) wait_flag(&s.all_issued, 0);
    __syncwarp();
  };
  const bool skip_ld = p.bug == Bug::kNoFinalCommit || p.bug == Bug::kDeallocPending;
  const bool odd_deallocs_early = p.bug == Bug::kPeerDeallocEarly && rank == 1;
  for (int t = 0; epilogue && t < p.tiles; ++t) {
    if (p.bug == Bug::kEpilogueNoWait || skip_ld || odd_deallocs_early || (p.bug == Bug::kFollowerNoWait && rank == 1)) {
      wait_all_issued();
    } else if (p.bug == Bug::kEpilogueEarlyBarrier) {
      wait_commit(&s.first_tile_done, 0, "first_tile_done", 0);
      wait_all_issued();
    } else if (p.bug == Bug::kPlainWaitOnAccFull) {
      mbarrier_wait_bounded(&s.acc_full, t & 1, wait_timeout_ns(), "acc_full", 0);
    } else {
      // Bug 5: the even CTA observes the final commit only after the odd one has read (so the odd
      // CTA's read cannot be made right by the even CTA's observation).
      if (p.bug == Bug::kFollowerNoWait && rank == 0) wait_flag(&s.odd_cta_read, 1);
      wait_commit(&s.acc_full, t & 1, "acc_full", 0);
    }
    tcgen05_fence_after_thread_sync();
    if (odd_deallocs_early) break;
    if (overlapping(p.bug)) {
      // Two halves of 64 columns, the shared one first: accumulator 0's upper half, accumulator 1's lower
      // half (TMEM columns [64, 128) both). The shared half is released as soon as it is read; the other
      // half's loads are published by the next tile's fence before_thread_sync, or the teardown's.
      const int acc = t % 2;
      const uint32_t lane_field = 32 * uint32_t(warp % 4);
      const int row = 128 * int(rank) + 32 * (warp % 4) + lane;
      float* out = p.out + size_t(t) * 128 * kCtaGroup * kBN;
      const bool release = t + 1 < p.tiles;  // only the MMA warp's next tile waits for it
      auto arrive_overlap_free = [&] {
        tcgen05_fence_before_thread_sync();  // the finished reads are ordered before the release
        __syncwarp();
        if (lane == 0) mbarrier_arrive_cluster(&s.overlap_free, 0);  // at the leader
      };
      for (int pass = 0; pass < 2; ++pass) {
        const int half = pass == 0 ? 1 - acc : acc;  // the accumulator's half: 0 lower, 1 upper
        const uint32_t first_column = kOverlapColumns * uint32_t(acc) + uint32_t(half) * kOverlapColumns;
        if (pass == 0 && release && p.bug == Bug::kOverlapReleasedBeforeRead) arrive_overlap_free();  // too early
        uint32_t r[kOverlapColumns / 32][32];
#pragma unroll
        for (int c = 0; c < int(kOverlapColumns); c += 32)
          tcgen05_ld_32x32b<32>(tmem + tcgen05::tmem_address(lane_field, first_column + uint32_t(c)), r[c / 32]);
        if (pass == 0 && p.bug == Bug::kOverlapReleasedBeforeRead) {  // the loads are issued, not finished
          __syncwarp();
          if (lane == 0) atomicAdd(&s.overlap_progress, 1u);
        }
        tcgen05_wait_ld();
        if (pass == 0 && release && p.bug != Bug::kOverlapReleasedBeforeRead) {
          arrive_overlap_free();
          if (p.bug == Bug::kOverlapWaitsTwoTilesBack && lane == 0) atomicAdd(&s.overlap_progress, 1u);
        }
#pragma unroll
        for (int c = 0; c < int(kOverlapColumns); ++c)
          out[row * kBN + half * int(kOverlapColumns) + c] = __uint_as_float(r[c / 32][c % 32]);
      }
      continue;  // no acc_empty
    }
    if (!skip_ld) {
      const uint32_t lane_field = 32 * uint32_t(warp % 4) + (((p.bug == Bug::kOddCtaLaneOffset && rank == 1) ||
                                                           (p.bug == Bug::kEvenCtaLaneOffset && rank == 0)) ? 128 : 0);
      const uint32_t first_column = p.bug == Bug::kReadUnwritten ? uint32_t(kBN) : 0u;
      const int row = 128 * int(rank) + 32 * (warp % 4) + lane;
      float* out = p.out + size_t(t) * 128 * kCtaGroup * kBN;
      for (int c = 0; c < kBN; c += 32) {
        uint32_t r[32];
        tcgen05_ld_32x32b<32>(tmem + tcgen05::tmem_address(lane_field, first_column + uint32_t(c)), r);
        if (p.bug == Bug::kEarlyAccRelease && t == 0 && c == kBN - 32) {  // release before the load finished
          tcgen05_fence_before_thread_sync();
          if (lane == 0) mbarrier_arrive_cluster(&s.acc_empty, 0);
        }
        tcgen05_wait_ld();
        for (int i = 0; i < 32; ++i) out[row * kBN + c + i] = __uint_as_float(r[i]);
      }
    }
    // The accumulator is drained: hand it back to the MMA warp (of the even CTA).
    tcgen05_fence_before_thread_sync();
    if (lane == 0 && !(p.bug == Bug::kEarlyAccRelease && t == 0) && t + 1 < p.tiles) mbarrier_arrive_cluster(&s.acc_empty, 0);
  }
  if (odd_deallocs_early && warp == 2) tcgen05_dealloc<kCtaGroup>(tmem, alloc_columns);
  cta_sync();
  if (threadIdx.x == 0) s.odd_cta_read = 1;
  tcgen05_fence_before_thread_sync();
  cta_sync();
  if constexpr (kCtaGroup == 2) cluster_sync();
  if (warp == 2 && p.bug != Bug::kNoDealloc && !odd_deallocs_early) tcgen05_dealloc<kCtaGroup>(tmem, alloc_columns);
}

constexpr int kKTiles = 5;  // more k-tiles than slots: every slot is refilled at least once

struct PipelineRun {
  int64_t mismatches = -1;
  size_t outputs = 0;
  std::string violation;  // report mode: the checker's message ("" if none)
  double ms = 0;          // host time of the launch, to the end of the kernel
};

// Builds the problem, launches the kernel, compares with the CPU reference (exact tier: bit for bit).
template <int kCtaGroup>
PipelineRun run_pipeline(Bug bug, int k_tiles, int tiles = 1) {
  bind_device_state();  // this file's deadline, checker and emulator (common/device_state.h)
  const int M = 128 * kCtaGroup, K = k_tiles * kTileK;
  // One problem and its reference per shape: the repetitions of a broken case reuse them.
  struct Prepared {
    HostNvfp4Problem prob;
    ReferenceOutput ref;
  };
  static std::map<int, Prepared> prepared;
  if (!prepared.count(K)) {
    Prepared p{make_nvfp4_problem(M, kBN, K, 1, Tier::kExact, seed_for("protocol" + std::to_string(K))), {}};
    p.ref = reference_gemm(p.prob.host_args());
    prepared.emplace(K, std::move(p));
  }
  const HostNvfp4Problem& prob = prepared.at(K).prob;
  const ReferenceOutput& ref = prepared.at(K).ref;
  DeviceBuffer<uint8_t> A(prob.a.data), SFA(prob.a.sf), B(prob.b.data), SFB(prob.b.sf);
  DeviceBuffer<float> out(size_t(tiles) * M * kBN);
  out.fill_bytes(0xFF);
  const CUtensorMap ma = encode_tensor_map(plan_packed_operand(A.get(), M, K, 1, 128, 128));
  const CUtensorMap mb = encode_tensor_map(plan_packed_operand(B.get(), kBN, K, 1, kBN / kCtaGroup, 128));
  const CUtensorMap msfa = encode_tensor_map(plan_sf_lines(SFA.get(), M, K, 1, kStepsPerTile * 32));
  const CUtensorMap msfb = encode_tensor_map(plan_sf_lines(SFB.get(), kBN, K, 1, kStepsPerTile * 32));
  const int smem = int(sizeof(Smem<kCtaGroup>)) + 1024;
  CUDA_CHECK(cudaFuncSetAttribute(pipeline_kernel<kCtaGroup>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(kCtaGroup);
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = size_t(smem);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = kCtaGroup;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  const Params params{K, tiles, out.get(), SFA.get(), 0, bug};
  const auto start = std::chrono::steady_clock::now();
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, pipeline_kernel<kCtaGroup>, ma, mb, msfa, msfb, params));
  CUDA_CHECK(cudaDeviceSynchronize());
  PipelineRun r;
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  r.violation = protocol::take_violation();
  const std::vector<float> got = out.download();
  r.outputs = got.size();
  r.mismatches = 0;
  for (size_t i = 0; i < got.size(); ++i) r.mismatches += !(double(got[i]) == ref.value[i % ref.value.size()]);
  return r;
}

// Strict mode is on only for the bug it exists for: the others must be caught by the checker (with
// strict mode on, bugs 1 and 2 would also show as scale columns refilled early, which they are).
template <int kCtaGroup>
PipelineRun run_case(Bug bug, int tiles) {
  emu::set_strict(bug == Bug::kSingleSfColumns);
  PipelineRun r = run_pipeline<kCtaGroup>(bug, kKTiles, tiles);
  emu::set_strict(true);
  return r;
}

// In the death tests' child: device printf (the trap message) goes to stdout; send it to stderr,
// which is what a death test matches.
template <int kCtaGroup>
[[noreturn]] void run_broken_and_exit(Bug bug, int tiles) {
  std::fflush(stdout);
  dup2(2, 1);
  try {
    run_case<kCtaGroup>(bug, tiles);
  } catch (const std::exception&) {  // the kernel's failure; reported below
  }
  testing::exit_with_kernel_status();
}

// ---- The fixed twins, and what is not a bug --------------------------------------------------------

struct TwinCase {
  const char* name;
  int cta_group;
  Bug bug;
  int tiles;
};

class GpuTcgen05Protocol : public ::testing::TestWithParam<TwinCase> {};

TEST_P(GpuTcgen05Protocol, CorrectProtocolMatchesTheReferenceBitForBit) {
  GEMM_REQUIRE_GPU();
  const TwinCase c = GetParam();
  const PipelineRun r = c.cta_group == 1 ? run_case<1>(c.bug, c.tiles) : run_case<2>(c.bug, c.tiles);
  EXPECT_EQ(r.violation, "");
  EXPECT_EQ(r.mismatches, 0) << "of " << r.outputs;
  EXPECT_EQ(emu::allocated_units(), 0) << "Tensor Memory left allocated";
}

INSTANTIATE_TEST_SUITE_P(
    Twins, GpuTcgen05Protocol,
    ::testing::Values(TwinCase{"cta_group1", 1, Bug::kNone, 1}, TwinCase{"cta_group2", 2, Bug::kNone, 1},
                      TwinCase{"cta_group1_two_tiles_one_accumulator", 1, Bug::kNone, 2},
                      TwinCase{"cta_group2_two_tiles_one_accumulator", 2, Bug::kNone, 2},
                      TwinCase{"cta_group2_odd_cta_reads_lanes_128_plus", 2, Bug::kOddCtaLaneOffset, 1},
                      TwinCase{"cta_group2_odd_cta_allocates_late", 2, Bug::kLateOddAlloc, 1},
                      TwinCase{"cta_group1_scales_stored_generically_and_fenced", 1, Bug::kGenericScales, 1},
                      TwinCase{"cta_group1_overlapping_accumulators", 1, Bug::kOverlappingAccumulators, 3},
                      TwinCase{"cta_group2_overlapping_accumulators", 2, Bug::kOverlappingAccumulators, 3}),
    [](const ::testing::TestParamInfo<TwinCase>& i) { return std::string(i.param.name); });

// Strict mode is what flags single-buffered scale columns; without it the emulator, like the
// in-order hardware, computes the right result.
TEST(GpuTcgen05ProtocolStrictness, SingleBufferedScaleColumnsAreExactWithoutStrictMode) {
  GEMM_REQUIRE_GPU();
  if (gpu_info().tcgen05_native()) GTEST_SKIP() << "strict mode is the emulator's";
  emu::set_strict(false);
  const PipelineRun r = run_pipeline<1>(Bug::kSingleSfColumns, kKTiles);
  emu::set_strict(true);
  EXPECT_EQ(r.violation, "");
  EXPECT_EQ(r.mismatches, 0) << "of " << r.outputs;
}

// ---- The broken kernels are caught, each with its message --------------------------------------------

struct BrokenCase {
  const char* name;
  int cta_group;
  Bug bug;
  int tiles;
  const char* message;  // a regular expression the message must match
};

const BrokenCase kBroken[] = {
    {"1_mma_issued_before_its_data_landed", 1, Bug::kMmaIgnoresFull, 1,
     "protocol checker: mma-reads-unlanded: .*warp 1 \\(mma\\) of CTA rank 0.*operand: tcgen05.cp source \\(scale "
     "factors\\), shared memory.*a TMA load completing on barrier 'full' \\[0\\] of CTA rank 0, in its phase 0"},
    {"1_pair_mma_issued_before_the_peers_data_landed", 2, Bug::kMmaIgnoresFull, 1,
     "protocol checker: mma-reads-unlanded: .*shared memory .* of CTA rank 1\n.*a TMA load completing on barrier "
     "'full' \\[0\\] of CTA rank 0"},
    {"2_slot_refilled_after_a_plain_arrive", 1, Bug::kPlainArriveOnEmpty, 1,
     "protocol checker: tma-overwrites-unfinished: .*warp 0 \\(producer\\).*'full' \\[0\\].*earlier read not visible "
     "as finished: by the tensor core of CTA rank 0"},
    {"3a_accumulator_read_without_waiting", 1, Bug::kEpilogueNoWait, 1,
     "protocol checker: ld-before-commit: .*\\(epilogue\\) of CTA rank 0.*operand: tcgen05.ld source, Tensor Memory "
     "columns \\[0, 32\\).*earlier write not visible: by the tensor core of CTA rank 0.*this warp has seen\\) [0-9]+, 0\n"},
    {"3b_accumulator_read_after_an_earlier_commit", 1, Bug::kEpilogueEarlyBarrier, 1,
     "protocol checker: ld-before-commit: .*\\(epilogue\\) of CTA rank 0.*by the tensor core of CTA rank 0 "
     "\\(tcgen05.mma/cp\\).*this warp has seen\\) [0-9]+, [1-9]"},
    {"4_single_buffered_scale_columns", 1, Bug::kSingleSfColumns, 1,
     "protocol checker: emu-cp-overwrites-scales: tcgen05.cp overwrites scale-factor columns that an issued mma "
     "still reads.*strict mode.*found: tcgen05.mma #[0-9]+ \\(k-step 0,"},
    {"5_pair_odd_cta_reads_without_waiting", 2, Bug::kFollowerNoWait, 1,
     "protocol checker: ld-before-commit: .*\\(epilogue\\) of CTA rank 1.*by the tensor core of CTA rank 0"},
    {"plain_wait_on_a_commit_barrier", 1, Bug::kPlainWaitOnAccFull, 1,
     "protocol checker: emu-ld-pending-write: tcgen05.ld of a column with a pending write"},
    {"work_never_committed", 1, Bug::kNoFinalCommit, 1,
     "protocol checker: work-never-committed: .*warp 2 \\(epilogue\\)"},
    {"dealloc_with_pending_work", 1, Bug::kDeallocPending, 1,
     "protocol checker: dealloc-pending: .*warp 2 \\(epilogue\\).*earlier write not visible: by the tensor core"},
    {"even_cta_reads_lanes_128_plus", 2, Bug::kEvenCtaLaneOffset, 1,
     "protocol checker: emu-ld-outside-quadrant: .*a warp may only access the 32 lanes of its quadrant"},
    {"mma_issued_without_fence_after_wait", 1, Bug::kNoFenceAfterWait, 1,
     // The first k-tile whose operands are read unfenced: 0, or 1 where a lane of the MMA warp recorded
     // its fence after the first wait on 'acc_empty' once another lane had passed the wait on 'full' [0]
     // (the checker takes a warp for one thread, so that fence covers the wait).
     "protocol checker: missing-tcgen05-fence: .*warp 1 \\(mma\\).*'full' \\[[01]\\]"},
    {"accumulator_released_before_its_loads_finished", 1, Bug::kEarlyAccRelease, 2,
     "protocol checker: mma-overwrites-unread: .*warp 1 \\(mma\\).*operand: mma accumulator D, Tensor Memory columns "
     "\\[0, 128\\).*earlier read not visible as finished: by warp [2-5] \\(epilogue\\) of CTA rank 0, (not yet finished|its epoch)"},
    // Overlapping accumulators (tile 1 in [64, 192) shares [64, 128) with tile 0): the epilogue releases
    // the shared half before it loads it, so tile 1's mma finds tile 0's loads of [64, 128) still in flight.
    {"pair_overlapping_accumulator_released_before_its_shared_half_is_read", 2, Bug::kOverlapReleasedBeforeRead, 2,
     "protocol checker: mma-overwrites-unread: .*warp 1 \\(mma\\).*operand: mma accumulator D, Tensor Memory columns "
     "\\[64, 192\\).*earlier read not visible as finished: by warp [2-5] \\(epilogue\\) of CTA rank 0, not yet finished"},
    // ... the epilogue is right, but tile 1's mma waits for no release (tile t - 2's, as for two separate
    // accumulators): tile 0's loads of [64, 128) are finished and released, just not to this mma.
    {"pair_overlapping_accumulator_mma_waits_for_the_tile_before_last", 2, Bug::kOverlapWaitsTwoTilesBack, 2,
     "protocol checker: mma-overwrites-unread: .*warp 1 \\(mma\\).*operand: mma accumulator D, Tensor Memory columns "
     "\\[64, 192\\).*earlier read not visible as finished: by warp [2-5] \\(epilogue\\) of CTA rank 0, its epoch [0-9]+ "},
    {"accumulator_columns_read_before_any_write", 1, Bug::kReadUnwritten, 1,
     "protocol checker: ld-unwritten: .*Tensor Memory columns \\[128, 160\\)"},
    {"producer_starts_at_the_wrong_parity", 1, Bug::kWrongParityProducer, 1,
     "protocol checker: deadlock: .*'full' \\[0\\].*waited for with parity 0 by 32 threads of warps 1 \\(mma\\).*"
     "'empty' \\[0\\].*waited for with parity 0 by 1 threads of warps 0 \\(producer\\)"},
    {"producer_exits_before_the_last_commits", 1, Bug::kNoProducerTail, 1,
     "protocol checker: exit-with-signal-in-flight: .*barrier 'empty' \\[[01]\\] of CTA rank 0"},
    {"pair_alloc_before_the_peer_is_known_to_run", 2, Bug::kPairAllocNoClusterSync, 1,
     "protocol checker: pair-alloc-before-peer-known: .*warp 2 \\(epilogue\\) of CTA rank [01]"},
    {"pair_odd_cta_deallocates_while_the_pair_computes", 2, Bug::kPeerDeallocEarly, 1,
     "protocol checker: dealloc-while-peer-issues: .*warp 2 \\(epilogue\\) of CTA rank 1.*by the tensor core of CTA rank 0"},
    {"exit_with_tensor_memory_allocated", 1, Bug::kNoDealloc, 1,
     "protocol checker: exit-with-tmem: .*Tensor Memory columns \\[0, 512\\)"},
    {"alloc_after_relinquish", 1, Bug::kAllocAfterRelinquish, 1,
     "protocol checker: alloc-after-relinquish: .*warp 2 \\(epilogue\\)"},
    {"scales_stored_generically_without_proxy_fence", 1, Bug::kGenericScalesNoFence, 1,
     "protocol checker: missing-proxy-fence: .*operand: tcgen05.cp source \\(scale factors\\).*earlier write not "
     "visible: by warp 0 \\(producer\\)"},
    // The first mma of k-tile 0 names SFA's columns [256, 260) before the cp that fills them is issued.
    {"scales_copied_after_the_mma_that_reads_them", 1, Bug::kCpAfterMma, 1,
     "protocol checker: mma-reads-unwritten-scales: .*warp 1 \\(mma\\) of CTA rank 0.*operand: mma scale factors A, "
     "Tensor Memory columns \\[256, 260\\), lanes 0-31 of CTA rank 0"},
    // 256 columns allocated, [0, 256): the first cp, into [256, 260), is the first access beyond them.
    {"scales_copied_outside_the_allocation", 1, Bug::kAllocTooSmall, 1,
     "protocol checker: tmem-not-allocated: .*warp 1 \\(mma\\) of CTA rank 0.*operand: tcgen05.cp destination "
     "\\(scale factors\\), Tensor Memory columns \\[256, 260\\), all 128 lanes of CTA rank 0"},
};

PipelineRun run_broken(const BrokenCase& c) {
  return c.cta_group == 1 ? run_case<1>(c.bug, c.tiles) : run_case<2>(c.bug, c.tiles);
}

// Report mode: the checker records the violation and ends the kernel's checked work cleanly, so the
// same broken kernel runs again and again in one process. Every repetition must be caught, with the
// same message: the checker decides from the order of operations, not from timing.
// 100 by default; GEMM_PROTOCOL_REPETITIONS=n to print each message quickly.
const int kRepetitions = std::getenv("GEMM_PROTOCOL_REPETITIONS") ? std::atoi(std::getenv("GEMM_PROTOCOL_REPETITIONS")) : 100;

class GpuTcgen05ProtocolBroken : public ::testing::TestWithParam<BrokenCase> {
 protected:
  void SetUp() override { protocol::set_mode(protocol::kReport); }
  void TearDown() override { protocol::set_mode(protocol::kTrap); }
};

TEST_P(GpuTcgen05ProtocolBroken, CaughtInEveryRepetitionWithItsMessage) {
  GEMM_REQUIRE_GPU();
  if (gpu_info().tcgen05_native()) GTEST_SKIP() << "a broken protocol is undefined behaviour on the hardware (the checked build runs these)";
  const BrokenCase c = GetParam();
  int caught = 0;
  std::string first;
  for (int i = 0; i < kRepetitions; ++i) {
    const PipelineRun r = run_broken(c);
    if (i == 0) first = r.violation;
    caught += ::testing::Value(r.violation, ::testing::ContainsRegex(c.message));
    if (caught != i + 1) {
      ADD_FAILURE() << "repetition " << i << " was not caught with the expected message; it reported:\n" << r.violation;
      break;
    }
  }
  EXPECT_EQ(caught, kRepetitions);
  std::printf("%s\n", first.c_str());  // the message as the GPU printed it (docs/protocol_checker.md)
}

INSTANTIATE_TEST_SUITE_P(Broken, GpuTcgen05ProtocolBroken, ::testing::ValuesIn(kBroken),
                         [](const ::testing::TestParamInfo<BrokenCase>& i) { return std::string(i.param.name); });

// Every broken pipeline has its own message: no expected pattern matches another case's message.
TEST(GpuTcgen05ProtocolBrokenMessages, EachCaseHasItsOwnMessage) {
  GEMM_REQUIRE_GPU();
  if (gpu_info().tcgen05_native()) GTEST_SKIP() << "the broken kernels run only under the emulator";
  protocol::set_mode(protocol::kReport);
  std::vector<std::string> messages;
  for (const BrokenCase& c : kBroken) messages.push_back(run_broken(c).violation);
  protocol::set_mode(protocol::kTrap);
  for (size_t i = 0; i < std::size(kBroken); ++i)
    for (size_t j = 0; j < std::size(kBroken); ++j) {
      if (i == j) continue;
      const bool same_pattern = std::string(kBroken[i].message) == kBroken[j].message;
      EXPECT_FALSE(!same_pattern && ::testing::Value(messages[j], ::testing::ContainsRegex(kBroken[i].message)) &&
                   ::testing::Value(messages[i], ::testing::ContainsRegex(kBroken[j].message)))
          << kBroken[i].name << " and " << kBroken[j].name << " cannot be told apart";
    }
}

// A deadlock is reported when it forms (the last live thread starts waiting), not at a timeout.
TEST(GpuTcgen05ProtocolDeadlock, WrongParityProducerIsReportedWithin100ms) {
  GEMM_REQUIRE_GPU();
  if (gpu_info().tcgen05_native()) GTEST_SKIP() << "the broken kernels run only under the emulator";
  protocol::set_mode(protocol::kReport);
  run_broken(kBroken[0]);  // warm-up: module load, state allocation
  const PipelineRun r = run_case<1>(Bug::kWrongParityProducer, 1);
  protocol::set_mode(protocol::kTrap);
  EXPECT_THAT(r.violation, ::testing::HasSubstr("deadlock"));
  EXPECT_LT(r.ms, 100.0) << "from launch to the kernel's end";
  std::printf("deadlock reported; launch to kernel end %.2f ms\n", r.ms);
}

// Trap mode (the default): the same broken kernels end with a trap and the message on the console.
class GpuTcgen05ProtocolDeathTest : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(GpuTcgen05ProtocolDeathTest, TrapsWithItsMessage) {
  GEMM_REQUIRE_GPU();
  if (gpu_info().tcgen05_native()) GTEST_SKIP() << "a broken protocol is undefined behaviour on the hardware";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const BrokenCase c = GetParam();
  if (c.cta_group == 1)
    EXPECT_EXIT(run_broken_and_exit<1>(c.bug, c.tiles), ::testing::ExitedWithCode(testing::kKernelFailedExit), c.message);
  else
    EXPECT_EXIT(run_broken_and_exit<2>(c.bug, c.tiles), ::testing::ExitedWithCode(testing::kKernelFailedExit), c.message);
}

INSTANTIATE_TEST_SUITE_P(Broken, GpuTcgen05ProtocolDeathTest, ::testing::ValuesIn(kBroken),
                         [](const ::testing::TestParamInfo<BrokenCase>& i) { return std::string(i.param.name); });

// The emulator alone, the checker off: the pipelines whose hazard its own bookkeeping sees must still
// trap, each with its rule of the one table (common/protocol/rules.h, the emu- rows) in the checker's
// format. This is the second net under the checker, and what reaches the emu- rules that the checker
// reports first under its own rules (docs/emulator.md, "What traps"). Not among them: an MMA issued
// before its copy landed (1_mma_issued_before_its_data_landed), which the emulator sees only when the
// copy lands after the emulated MMA has read the stage; with no injected delay it usually has landed
// (the emulator alone let it pass on an H200), and the checker's rule catches it every time.
struct EmulatorCase {
  const char* name;
  int cta_group;
  Bug bug;
  const char* message;  // a regular expression the trap message must match
};

const EmulatorCase kEmulatorAlone[] = {
    {"slot_refilled_after_a_plain_arrive", 1, Bug::kPlainArriveOnEmpty, "protocol checker: emu-operand-changed: "},
    {"accumulator_read_without_waiting", 1, Bug::kEpilogueNoWait,
     "protocol checker: emu-ld-pending-write: (.|\n)*found: tcgen05.mma #[0-9]+ \\(k-step [0-9]+, TMEM column "
     "[0-9]+\\) of CTA rank 0, at tcgen05.ld"},
    {"accumulator_read_after_an_earlier_commit", 1, Bug::kEpilogueEarlyBarrier, "protocol checker: emu-ld-pending-write: "},
    {"pair_odd_cta_reads_without_waiting", 2, Bug::kFollowerNoWait,
     "protocol checker: emu-ld-pending-write: (.|\n)*of CTA rank 1, at tcgen05.ld"},
    {"work_never_committed", 1, Bug::kNoFinalCommit, "protocol checker: emu-uncommitted-at-dealloc: "},
    {"dealloc_with_pending_work", 1, Bug::kDeallocPending, "protocol checker: emu-dealloc-pending: "},
};

class GpuTcgen05EmulatorAloneDeathTest : public ::testing::TestWithParam<EmulatorCase> {};

TEST_P(GpuTcgen05EmulatorAloneDeathTest, TrapsWithItsRule) {
  GEMM_REQUIRE_GPU();
  if (gpu_info().tcgen05_native()) GTEST_SKIP() << "the emulator runs only on Hopper";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const EmulatorCase c = GetParam();
  auto run = [&] {
    protocol::set_mode(protocol::kOff);  // in the child only: the death test's process
    if (c.cta_group == 1) run_broken_and_exit<1>(c.bug, 1);
    run_broken_and_exit<2>(c.bug, 1);
  };
  EXPECT_EXIT(run(), ::testing::ExitedWithCode(testing::kKernelFailedExit), c.message);
}

INSTANTIATE_TEST_SUITE_P(EmulatorAlone, GpuTcgen05EmulatorAloneDeathTest, ::testing::ValuesIn(kEmulatorAlone),
                         [](const ::testing::TestParamInfo<EmulatorCase>& i) { return std::string(i.param.name); });

// Not run by default: runs the broken kernel GEMM_TRAP_CASE=<name> in this process, so its trap
// message can be read (docs/protocol_checker.md lists them):
//   GEMM_TRAP_CASE=3a_accumulator_read_without_waiting ./build/common/test_common \
//       --gtest_also_run_disabled_tests --gtest_filter='*ShowTrapMessage*'
TEST(DISABLED_GpuTcgen05Protocol, ShowTrapMessage) {
  GEMM_REQUIRE_GPU();
  const char* name = std::getenv("GEMM_TRAP_CASE");
  ASSERT_NE(name, nullptr) << "set GEMM_TRAP_CASE to one of the Broken/ cases";
  for (const BrokenCase& c : kBroken)
    if (std::string(name) == c.name) {
      if (c.cta_group == 1) run_broken_and_exit<1>(c.bug, c.tiles);
      run_broken_and_exit<2>(c.bug, c.tiles);
    }
  FAIL() << "no broken case named " << name;
}

}  // namespace
}  // namespace gemm
