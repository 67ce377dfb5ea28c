// Stage 07: the epilogue stores C through TMA.                          README.md explains each change.
// Changes from 06_persistent_ws/kernel.cuh:
//   1. Each epilogue warp stores C in sub-tiles of 32 rows x 32 columns: alpha, FP16, into a shared-
//      memory staging buffer in the layout of C's tensor map (64-byte rows, 64-byte swizzle: the warp's
//      16-byte stores are bank-conflict free), fence.proxy.async, then lane 0 issues one TMA store.
//   2. Two staging buffers per warp alternate (bulk wait_group.read 1 before one is overwritten), so a
//      sub-tile is written while the previous one is in flight; TMA clips boxes at C's edges.
//   3. The staging takes 16 KB of shared memory, counted in the slot budget.
//   4. C's tensor map needs rows on 16-byte boundaries (N % 8 == 0, C 16-byte aligned); otherwise the
//      launcher runs the same kernel with stage 06's direct stores (kTmaStore = false).
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/config.h"
#include "common/gemm_api.h"
#include "common/launch.cuh"
#include "common/occupancy.h"
#include "common/ptx/cluster.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/tcgen05.cuh"
#include "common/ptx/tma.cuh"
#include "common/registry.h"
#include "common/sf_layout.h"
#include "common/swizzle.h"
#include "common/tcgen05_desc.h"
#include "common/tensor_map.h"
#include "common/timeline.h"

namespace stage07 {

namespace ptx = gemm::ptx;
namespace tc = gemm::tcgen05;
namespace tl = gemm::timeline;

inline constexpr int kCtaGroup = 2;       // cta_group::2: a CTA pair issues one MMA
inline constexpr int kBM = 256;           // rows of C per tile (per pair): M of the MMA
inline constexpr int kCtaM = kBM / kCtaGroup;  // rows per CTA = the 128 TMEM lanes
inline constexpr int kBN = 128;           // columns of C per tile: N of the MMA; two accumulators fit in TMEM
inline constexpr int kTileK = 256;        // values of k per packed tile: one 128-byte swizzle row
inline constexpr int kMmaK = 64;          // values of k per kind::mxf4nvf4 MMA (dense)
inline constexpr int kStepsPerTile = kTileK / kMmaK;  // 4 MMAs per k-tile
inline constexpr int kProducerWarp = 0, kMmaWarp = 1, kFirstEpilogueWarp = 2, kEpilogueWarps = 4;
inline constexpr int kAllocWarp = kFirstEpilogueWarp;  // allocates Tensor Memory before the loop, frees it after
inline constexpr int kThreads = 32 * (kFirstEpilogueWarp + kEpilogueWarps);  // 192
inline constexpr int kAccBuffers = 2;     // accumulators in TMEM: one filling, one draining
inline constexpr int kGroupM = 8;         // tile-rows per rasterisation group
inline constexpr int kSubTileCols = 32;   // columns per TMA store box: 64 bytes of FP16
inline constexpr int kStagingBuffers = 2;  // per epilogue warp: one being written, one in flight
inline constexpr int kStagingBytes = 32 * kSubTileCols * 2;  // 32 rows x 64 bytes = 2 KB
inline constexpr int kBRowsPerCta = kBN / kCtaGroup;                     // rows of B each CTA loads: half
inline constexpr int kPackedRowBytes = kTileK / 2;                       // 128: the TMA box's row
inline constexpr int kPackedTileBytes = kCtaM * kPackedRowBytes;         // 16 KB: A's tile per CTA
inline constexpr int kBBytes = kBRowsPerCta * kPackedRowBytes;           // 8 KB: B's half tile per CTA
inline constexpr int kSfBlockBytes = kCtaM * (kTileK / gemm::kSfVector);  // 2 KB: 4 atoms of 512 B
inline constexpr int kSfbAtoms = kBN / gemm::kSfTileRows;                // B's 128-row blocks: 1
inline constexpr int kMmaStepBytes = kMmaK / 2;       // 32: descriptor start advance per MMA inside the atom
inline constexpr int kSfColumnsPerAtom = 4;           // one atom = 128 rows x 4 columns (row r: column r / 32)
inline constexpr uint32_t kTmemColumns = 512;         // the whole Tensor Memory of the SM: one CTA per SM
inline constexpr int kSfLinesPerAtom = gemm::kSfTileBytes / 16;  // 32 lines of 16 bytes: the scale maps' rows
inline constexpr uint16_t kPairMask = 0b11;           // commits arrive on both CTAs of the pair (ranks 0, 1)
static_assert(kPackedRowBytes == gemm::kSwizzleRowBytes, "a packed tile row is one 128-byte swizzle row (TMA box)");
static_assert(kStepsPerTile * kMmaStepBytes == kPackedRowBytes, "the MMAs of a k-tile walk one swizzle atom");
static_assert(kEpilogueWarps == 4, "the epilogue warps cover the four 32-lane TMEM quadrants");

// One slot of the ring: everything one k-tile needs. 28 KB, a multiple of 1024, so every slot's
// tiles stay 1024-byte aligned.
struct Slot {
  alignas(1024) unsigned char a[kPackedTileBytes];  // written by TMA, 128-byte swizzle
  alignas(1024) unsigned char b[kBBytes];
  alignas(16) uint8_t sfa[kSfBlockBytes];                   // 4 atoms: this CTA's rows, k-steps 0..3
  alignas(16) uint8_t sfb[kSfBlockBytes * kSfbAtoms];       // [B row block t][k-step j] atoms: all kBN rows
};
static_assert(sizeof(Slot) % 1024 == 0, "slots must keep the 1024-byte alignment of their tiles");
// The full barrier expects sizeof(Slot) bytes per CTA: padding, which no copy writes, would never arrive.
static_assert(sizeof(Slot) == sizeof(Slot::a) + sizeof(Slot::b) + sizeof(Slot::sfa) + sizeof(Slot::sfb),
              "a slot is exactly the bytes its copies write");

// The slot count: as many as both memories hold. Shared memory: the 227 KB a block may opt into
// (sm_90 and sm_100), less the alignment slack, the barriers, and kStaticSmemMargin for static shared
// memory that is not the kernel's own: the 1 KB cuobjdump reports for every sm_100a kernel, the
// emulator's per-CTA record on Hopper, the protocol checker's. Tensor Memory: 512 columns less the
// accumulator, each slot with its scale columns.
inline constexpr int kSmemPerBlock = 232448;
inline constexpr int kStaticSmemMargin = 2048;
inline constexpr int kFixedBytes = 1024 /* barriers */ + 1024 /* alignment */ + kStaticSmemMargin +
                                   kEpilogueWarps * kStagingBuffers * kStagingBytes /* staging */;
inline constexpr int kSfaColumnsPerSlot = kStepsPerTile * kSfColumnsPerAtom;               // 16
inline constexpr int kSfbColumnsPerSlot = kStepsPerTile * kSfbAtoms * kSfColumnsPerAtom;   // 16
inline constexpr int kSfColumnsPerSlot = kSfaColumnsPerSlot + kSfbColumnsPerSlot;
inline constexpr int kAccColumns = kAccBuffers * kBN;                                     // 256
inline constexpr int kSlotsBySmem = (kSmemPerBlock - kFixedBytes) / int(sizeof(Slot));
inline constexpr int kSlotsByTmem = (int(kTmemColumns) - kAccColumns) / kSfColumnsPerSlot;
inline constexpr int kSlots = kSlotsBySmem < kSlotsByTmem ? kSlotsBySmem : kSlotsByTmem;  // 7
static_assert(kSlots >= 2, "a pipeline needs at least two slots");

// Where things are in TMEM (column offsets from the allocation; lane 0): the accumulators, then each
// slot's scales.
GEMM_HD uint32_t d_column(int acc) { return uint32_t(acc * kBN); }
GEMM_HD uint32_t sfa_column(int slot, int step) {
  return uint32_t(kAccColumns + slot * kSfColumnsPerSlot + step * kSfColumnsPerAtom);
}
GEMM_HD uint32_t sfb_column(int slot, int step) {
  return uint32_t(kAccColumns + slot * kSfColumnsPerSlot + kSfaColumnsPerSlot + step * kSfbAtoms * kSfColumnsPerAtom);
}
inline constexpr int kTmemColumnsUsed = kAccColumns + kSlots * kSfColumnsPerSlot;
static_assert(kTmemColumnsUsed <= int(kTmemColumns), "accumulators and scale columns exceed Tensor Memory");

// The instruction descriptor: E2M1 x E2M1, UE4M3 scales, K-major A and B, M = kBM, N = kBN.
GEMM_HD uint32_t instr_descriptor() { return tc::nvfp4_instr_descriptor(kBM, kBN); }

struct SharedStorage {
  Slot ring[kSlots];
  // The epilogue's staging: [warp][buffer] 32 rows x 64 bytes, 64-byte swizzle (512-byte aligned).
  alignas(1024) unsigned char staging[kEpilogueWarps][kStagingBuffers][kStagingBytes];
  uint64_t full[kSlots];    // leader: both CTAs' bytes of a slot have landed (1 arrival + tx bytes)
  uint64_t empty[kSlots];   // each CTA: the MMAs reading a slot are done (1 multicast commit)
  uint64_t acc_full[kAccBuffers];   // each CTA: its rows of a unit's accumulator are complete (1 multicast commit)
  uint64_t acc_empty[kAccBuffers];  // leader: the epilogue warps of both CTAs have read it (8 arrivals)
  uint32_t tmem_base;       // written by tcgen05.alloc
};
inline constexpr int kSmemBytes = int(sizeof(SharedStorage)) + 1024;
static_assert(kSmemBytes + kStaticSmemMargin <= kSmemPerBlock, "the pipeline does not fit in shared memory");

// What the host decides once per launch and every role of every CTA reads the same way.
struct Schedule {
  int M, N, K, L;
  int tiles_m, tiles_n;  // tiles of C per batch
  int units;             // units of work: one per tile, tiles_m x tiles_n x L
  int pairs;             // persistent CTA pairs
};

struct Unit {
  int m0, n0, batch;  // the tile's first row (of the pair's kBM) and column, and its batch
};

// Unit u: per batch, groups of kGroupM tile-rows, walked column by column inside a group, so the
// pairs busy at one time share a few rows of A and columns of B in L2.
GEMM_HD Unit unit_at(const Schedule& s, int u) {
  Unit w;
  const int per_batch = s.tiles_m * s.tiles_n;
  w.batch = u / per_batch;
  const int t = u % per_batch;
  const int first_m = t / (kGroupM * s.tiles_n) * kGroupM;
  const int rows_in_group = (s.tiles_m - first_m) < kGroupM ? (s.tiles_m - first_m) : kGroupM;
  const int in_group = t % (kGroupM * s.tiles_n);
  w.m0 = (first_m + in_group % rows_in_group) * kBM;
  w.n0 = (in_group / rows_in_group) * kBN;
  return w;
}

// K-major SW128 descriptor of a slot's tile, started `step` MMAs into the 128-byte swizzle atom.
__device__ __forceinline__ uint64_t operand_descriptor(const void* tile, int step) {
  return tc::advance_start(tc::kmajor_sw128_descriptor(ptx::smem_addr(tile)), uint32_t(step * kMmaStepBytes));
}

// One epilogue warp's TMA store of a 32-row x 32-column sub-tile: lane r converts its 32 values
// (alpha, FP16) into row r of a staging buffer in the layout of C's tensor map (64-byte rows, 64-byte
// swizzle), then lane 0 stores the box. `issued` counts the warp's stores so far: the staging buffer
// alternates, and before one is overwritten the store that read it last must be done reading.
__device__ __forceinline__ void tma_store_sub_tile(unsigned char (&staging)[kStagingBuffers][kStagingBytes],
                                                   int& issued, const CUtensorMap* map_c, int x, int y, int z,
                                                   float alpha, const uint32_t* r) {
  const int lane = int(threadIdx.x % 32);
  unsigned char* buf = staging[issued % kStagingBuffers];
  if (lane == 0) ptx::bulk_wait_group_read<kStagingBuffers - 1>();  // this buffer's previous store has read it
  __syncwarp();
#pragma unroll
  for (int q = 0; q < 4; ++q) {  // 4 chunks of 16 bytes = 8 halves each
    __align__(16) __half2 h[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      h[i] = __floats2half2_rn(alpha * __uint_as_float(r[8 * q + 2 * i]), alpha * __uint_as_float(r[8 * q + 2 * i + 1]));
    *reinterpret_cast<uint4*>(buf + gemm::swizzle_64b(uint32_t(lane), uint32_t(16 * q))) = *reinterpret_cast<const uint4*>(h);
  }
  ptx::fence_warp_stores_for_async_proxy(buf, kStagingBytes);  // all 32 lanes' stores, before lane 0's TMA store
  if (lane == 0) {
    ptx::tma_store_3d(map_c, x, y, z, buf, kStagingBytes);
    ptx::bulk_commit_group();
  }
  ++issued;
}

template <bool kTmaStore>
__global__ void __cluster_dims__(kCtaGroup, 1, 1) __launch_bounds__(kThreads, 1)
nvfp4_tcgen05_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                   const __grid_constant__ CUtensorMap map_sfa, const __grid_constant__ CUtensorMap map_sfb,
                   const __grid_constant__ CUtensorMap map_c, const Schedule sched, float alpha,
                   __half* __restrict__ C, tl::Buffer trace) {
  ptx::ProtocolScope protocol_scope;  // the protocol checker sees each thread enter and leave (no code in release)
  // The swizzle is defined on absolute shared-memory addresses: align the tiles to 1024 bytes.
  extern __shared__ unsigned char smem_raw[];
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(gemm::align_to_swizzle_atom(smem_raw));

  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  const uint32_t rank = ptx::cluster_ctarank();  // 0: the leader, 1: its peer
  const bool leader = rank == 0;
  const int pair = int(blockIdx.x) / kCtaGroup;
  const int M = sched.M, N = sched.N, K = sched.K;

  if (threadIdx.x == 0) {
    ptx::prefetch_tensormap(&map_a);
    ptx::prefetch_tensormap(&map_b);
    ptx::prefetch_tensormap(&map_sfa);
    ptx::prefetch_tensormap(&map_sfb);
    if (kTmaStore) ptx::prefetch_tensormap(&map_c);
    for (int i = 0; i < kSlots; ++i) {
      ptx::mbarrier_init(&s.full[i], 1, "full", i);    // the leader's arrive.expect_tx
      ptx::mbarrier_init(&s.empty[i], 1, "empty", i);  // one multicast commit from the MMA warp
    }
    for (int acc = 0; acc < kAccBuffers; ++acc) {
      ptx::mbarrier_init(&s.acc_full[acc], 1, "acc_full", acc);  // one multicast commit after a unit's last k-tile
      ptx::mbarrier_init(&s.acc_empty[acc], kCtaGroup * kEpilogueWarps, "acc_empty", acc);  // each epilogue warp
    }
    ptx::fence_mbarrier_init();
  }
  ptx::cluster_sync();  // the collective cta_group::2 alloc needs the peer known to run (PTX ISA 9.7.16.7.1)
  if (warp == kAllocWarp) {
    ptx::tcgen05_alloc<kCtaGroup>(&s.tmem_base, kTmemColumns);  // both CTAs: the same columns
    ptx::tcgen05_relinquish_alloc_permit<kCtaGroup>();  // this CTA allocates nothing else
  }
  // The peer's barriers must be initialised before anyone arrives on them, and the TMEM address
  // must be visible: fence, CTA barrier, cluster barrier, fence (PTX ISA 9.7.16.6.4).
  ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  ptx::cluster_sync();
  ptx::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = s.tmem_base;

  // The blocked scale layout keeps a 128-row block's atoms for consecutive k in consecutive 512-byte
  // tiles: the atoms for k-tile kt are tiles kt*4 .. kt*4+3 of row block rb; the scale maps count
  // 16-byte lines, 32 per atom, and their box is always 4 atoms (zeros past the end).
  const int sf_tiles_per_row_block = int(gemm::sf_padded_cols(K) / gemm::kSfTileCols);
  const int k_tiles = (K + kTileK - 1) / kTileK;

  // Producer: wait until slot it % kSlots is empty (it: k-tiles loaded so far, over all units), arm it,
  // start the copies of k-tile kt of the tile at (m0, n0, batch).
  auto produce = [&](int it, int kt, int m0, int n0, int batch) {
    const int my_m = m0 + kCtaM * int(rank);  // this CTA's first row of A
    const int slot = it % kSlots;
    const uint32_t empty_parity = ((it / kSlots) & 1) ^ 1;  // the first round passes at once
    ptx::wait_commit(&s.empty[slot], empty_parity, "empty", slot);
    // The leader's full barrier counts the bytes of both CTAs' copies. TMA always delivers whole
    // boxes (zeros outside the tensors), so the count is the same for every k-tile.
    if (leader) ptx::mbarrier_arrive_expect_tx(&s.full[slot], kCtaGroup * int(sizeof(Slot)));
    const int first_atom = kt * gemm::kSfTileCols;
    ptx::tma_load_3d_cta_group2(s.ring[slot].a, &map_a, kt * kPackedRowBytes, my_m, batch, &s.full[slot],
                                kPackedTileBytes);
    ptx::tma_load_3d_cta_group2(s.ring[slot].b, &map_b, kt * kPackedRowBytes, n0 + kBRowsPerCta * int(rank), batch,
                                &s.full[slot], kBBytes);
    ptx::tma_load_3d_cta_group2(s.ring[slot].sfa, &map_sfa, 0,
                                ((my_m / gemm::kSfTileRows) * sf_tiles_per_row_block + first_atom) * kSfLinesPerAtom,
                                batch, &s.full[slot], kSfBlockBytes);
    for (int t = 0; t < kSfbAtoms; ++t)  // every CTA holds the scales of all kBN rows of B
      ptx::tma_load_3d_cta_group2(s.ring[slot].sfb + t * kSfBlockBytes, &map_sfb, 0,
                                  ((n0 / gemm::kSfTileRows + t) * sf_tiles_per_row_block + first_atom) * kSfLinesPerAtom,
                                  batch, &s.full[slot], kSfBlockBytes);
  };
  if (warp == kProducerWarp) {
    ptx::protocol_role("producer");
    if (lane == 0) {
      int it = 0;  // k-tiles loaded so far, over all units
      for (int u = pair; u < sched.units; u += sched.pairs) {
        const auto [m0, n0, batch] = unit_at(sched, u);
        tl::Steps events(trace, tl::kProducer, uint32_t(u), true);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) produce(it, kt, m0, n0, batch);
        events.mark(tl::kLoadUnit);
      }
      // The tail: the last commits on the empty barriers arrive asynchronously in this CTA's shared
      // memory; the CTA may exit only after they have (wait once more on every slot).
      for (int t = 0; t < kSlots; ++t, ++it) ptx::wait_commit(&s.empty[it % kSlots], ((it / kSlots) & 1) ^ 1, "empty", it % kSlots);
    }
  }

  // MMA: one elected thread of the leader issues for the pair (the _warp forms, as in step 1).
  if (warp == kMmaWarp && leader) {
    ptx::protocol_role("mma");
    int it = 0;  // k-tiles issued so far, over all units: the producer's count
    for (int u = pair, nth = 0; u < sched.units; u += sched.pairs, ++nth) {  // nth: this pair's units so far
      const int acc = nth % kAccBuffers;
      tl::Steps events(trace, tl::kMma, uint32_t(u), lane == 0);
      // The epilogue warps of both CTAs have read this accumulator's previous unit (first round: at once).
      ptx::mbarrier_wait(&s.acc_empty[acc], ((nth / kAccBuffers) & 1) ^ 1, "acc_empty", acc);
      ptx::tcgen05_fence_after_thread_sync();
      events.mark(tl::kWaitAccEmpty);
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int slot = it % kSlots;
        // 1. Wait until the slot's tiles and scales have landed.
        ptx::mbarrier_wait(&s.full[slot], (it / kSlots) & 1, "full", slot);
        ptx::tcgen05_fence_after_thread_sync();
        const Slot& buf = s.ring[slot];
        // 2. Per 64 values of k: copy the step's scale atoms into TMEM, then one MMA. The last k-tile
        //    may hold fewer than 4 steps (K is a multiple of 32: a half step is zero-filled by TMA).
        const int steps = min(kStepsPerTile, (K - kt * kTileK + kMmaK - 1) / kMmaK);
#pragma unroll  // a full k-tile is straight-line code: 4 x (cp SFA, cp SFB, mma) in the SASS
        for (int j = 0; j < kStepsPerTile; ++j) {
          if (j >= steps) break;
          ptx::tcgen05_cp_32x128b_warpx4_warp<kCtaGroup>(
              tmem + sfa_column(slot, j), tc::sf_atom_descriptor(ptx::smem_addr(buf.sfa + j * gemm::kSfTileBytes)));
          for (int t = 0; t < kSfbAtoms; ++t)
            ptx::tcgen05_cp_32x128b_warpx4_warp<kCtaGroup>(
                tmem + sfb_column(slot, j) + uint32_t(t * kSfColumnsPerAtom),
                tc::sf_atom_descriptor(ptx::smem_addr(buf.sfb + t * kSfBlockBytes + j * gemm::kSfTileBytes)));
          ptx::tcgen05_mma_nvfp4_warp<kCtaGroup>(tmem + d_column(acc), operand_descriptor(buf.a, j),
                                                 operand_descriptor(buf.b, j), instr_descriptor(),
                                                 tmem + sfa_column(slot, j), tmem + sfb_column(slot, j), kt > 0 || j > 0);
        }
        // 3. Release the slot in both CTAs once these MMAs (and copies) are done.
        ptx::tcgen05_commit_multicast_warp<kCtaGroup>(&s.empty[slot], kPairMask);
      }
      ptx::tcgen05_commit_multicast_warp<kCtaGroup>(&s.acc_full[acc], kPairMask);  // the unit's MMAs are done
      events.mark(tl::kIssueUnit);
    }
  }
  __syncwarp();

  // 4. Epilogue, warps 2-5: warp w reads TMEM lanes 32 (w % 4) .. + 31 (a warp may only touch the
  //    quadrant of its warp id mod 4) = rows of its quadrant, all kBN columns, and stores them as FP16
  //    after scaling by alpha.
  if (warp >= kFirstEpilogueWarp) {
    ptx::protocol_role("epilogue");
    const int quadrant = warp % 4;
    int stores_issued = 0;  // this warp's TMA stores: which staging buffer is next
    for (int u = pair, nth = 0; u < sched.units; u += sched.pairs, ++nth) {  // nth: this pair's units so far
      const auto [m0, n0, batch] = unit_at(sched, u);
      const int acc = nth % kAccBuffers;
      tl::Steps events(trace, tl::kEpilogue, uint32_t(u), lane == 0 && warp == kFirstEpilogueWarp);
      ptx::wait_commit(&s.acc_full[acc], (nth / kAccBuffers) & 1, "acc_full", acc);
      ptx::tcgen05_fence_after_thread_sync();
      events.mark(tl::kWaitAccFull);
      // The thread's whole row into registers: four loads in flight, one wait. Then release the
      // accumulator at once: the MMA warp may start the next unit in it while this one is stored.
      uint32_t regs[kBN / 32][32];
#pragma unroll
      for (int t = 0; t < kBN / 32; ++t)
        ptx::tcgen05_ld_32x32b<32>(tmem + tc::tmem_address(uint32_t(32 * quadrant), d_column(acc) + uint32_t(32 * t)),
                                   regs[t]);
      ptx::tcgen05_wait_ld();
      ptx::tcgen05_fence_before_thread_sync();  // the reads are ordered before the release
      __syncwarp();
      if (lane == 0) ptx::mbarrier_arrive_cluster(&s.acc_empty[acc], 0);  // at the leader
      events.mark(tl::kDrainTmem);
      const int row = m0 + kCtaM * int(rank) + 32 * quadrant + lane;
      __half* c_row = C + (int64_t(batch) * M + row) * int64_t(N);
#pragma unroll
      for (int c = 0; c < kBN && n0 + c < N; c += 32) {  // warp-uniform
        const uint32_t* r = regs[c / 32];
        if constexpr (kTmaStore) {  // TMA clips the box at M and N; a box wholly past M is skipped
          if (row - lane < M)
            tma_store_sub_tile(s.staging[warp - kFirstEpilogueWarp], stores_issued, &map_c, n0 + c, row - lane, batch,
                               alpha, r);
          continue;
        }
        if (row >= M) continue;
        const int n = n0 + c;
        // Whole chunk inside and 16-byte aligned (C need only be 2-byte aligned): 4 x 16-byte stores.
        if (n + 32 <= N && reinterpret_cast<uintptr_t>(c_row + n) % 16 == 0) {
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            __align__(16) __half2 h[4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
              h[i] = __floats2half2_rn(alpha * __uint_as_float(r[8 * q + 2 * i]), alpha * __uint_as_float(r[8 * q + 2 * i + 1]));
            *reinterpret_cast<uint4*>(c_row + n + 8 * q) = *reinterpret_cast<const uint4*>(h);
          }
        } else {
#pragma unroll  // constant indices keep r[] in registers (a runtime bound would put it in local memory)
          for (int i = 0; i < 32; ++i)
            if (n + i < N) c_row[n + i] = __float2half_rn(alpha * __uint_as_float(r[i]));
        }
      }
      events.mark(tl::kStoreC);
    }
  }

  // The warp's last TMA stores must have finished (their staging must stay valid until read, and C
  // must be written when the kernel ends).
  if (kTmaStore && warp >= kFirstEpilogueWarp && lane == 0) ptx::bulk_wait_group<0>();

  // Teardown: no CTA of the pair may free its TMEM (or exit) while the other could still touch it:
  // the leader's MMAs wrote both CTAs' TMEM, and both CTAs' loads and releases complete on the
  // leader's barriers.
  ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  ptx::cluster_sync();
  if (warp == kAllocWarp) ptx::tcgen05_dealloc<kCtaGroup>(tmem, kTmemColumns);
}

// The tensor maps of this kernel: boxes of 128 rows x 128 bytes (256 values of k) for A and B; the
// scales as 16-byte lines in boxes of 4 atoms (one 128-row block, one k-tile).
inline gemm::TensorMapPlan plan_a(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_packed_operand(a.A, a.M, a.K, a.L, kCtaM, kPackedRowBytes);
}
inline gemm::TensorMapPlan plan_b(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_packed_operand(a.B, a.N, a.K, a.L, kBRowsPerCta, kPackedRowBytes);
}
inline gemm::TensorMapPlan plan_sfa(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_sf_lines(a.SFA, a.M, a.K, a.L, kStepsPerTile * kSfLinesPerAtom);
}
inline gemm::TensorMapPlan plan_sfb(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_sf_lines(a.SFB, a.N, a.K, a.L, kStepsPerTile * kSfLinesPerAtom);
}

// How many CTA pairs the GPU holds at once (the occupancy API: 74 on a 148-SM B200).
inline int resident_pairs() {
  // Both epilogue paths use the same resources; the TMA one stands for both.
  static const int pairs = gemm::resident_clusters(nvfp4_tcgen05_gemm<true>, kCtaGroup, kThreads, kSmemBytes, "stage07");
  return pairs;
}

// What a caller may force (tests, the stage program): fewer pairs than fit, a timeline of one run.
struct LaunchOptions {
  int max_pairs = 0;  // 0: as many as are resident
  tl::Buffer trace{};  // events of one run, or none
};

inline Schedule make_schedule(const gemm::Nvfp4GemmArgs& a, int pairs, const LaunchOptions& o = {}) {
  const int64_t blocks_n = (a.N + kBN - 1) / kBN;
  const int64_t blocks_m = (a.M + kBM - 1) / kBM;
  if (blocks_n * blocks_m * a.L > INT_MAX)
    throw std::invalid_argument("stage07: M*N*L needs " + std::to_string(blocks_n * blocks_m * a.L) +
                                " tiles, more than the schedule counts (2^31 - 1)");
  if (o.max_pairs > 0) pairs = std::min(pairs, o.max_pairs);
  const int units = int(blocks_n * blocks_m * a.L);
  return {a.M, a.N, a.K, a.L, int(blocks_m), int(blocks_n), units, std::min(pairs, units)};
}

// The rule for the epilogue: TMA stores where C's tensor map can address C (rows start on 16-byte
// boundaries: N % 8 == 0, and C 16-byte aligned), stage 06's direct stores otherwise.
inline bool uses_tma_store(const gemm::Nvfp4GemmArgs& a) {
  return a.N % 8 == 0 && reinterpret_cast<uintptr_t>(a.C) % 16 == 0;
}

// C's tensor map: boxes of one warp's 32 rows x one 32-column sub-tile, 64-byte swizzle.
inline gemm::TensorMapPlan plan_c(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_fp16_output(a.C, a.M, a.N, a.L, 32, kSubTileCols);
}

inline void launch_with(const gemm::Nvfp4GemmArgs& args, cudaStream_t stream, const LaunchOptions& o) {
  gemm::validate(args);
  const Schedule sched = make_schedule(args, resident_pairs(), o);
  const gemm::TensorMapPlan pa = plan_a(args), pb = plan_b(args);  // throw before anything runs
  const gemm::TensorMapPlan psa = plan_sfa(args), psb = plan_sfb(args);
  const CUtensorMap map_a = gemm::encode_tensor_map(pa), map_b = gemm::encode_tensor_map(pb);
  const CUtensorMap map_sfa = gemm::encode_tensor_map(psa), map_sfb = gemm::encode_tensor_map(psb);
  const bool tma_store = uses_tma_store(args);
  const CUtensorMap map_c = tma_store ? gemm::encode_tensor_map(plan_c(args)) : CUtensorMap{};  // unused if direct
  const auto kernel = tma_store ? nvfp4_tcgen05_gemm<true> : nvfp4_tcgen05_gemm<false>;
  gemm::launch_kernel(kernel, {dim3(unsigned(kCtaGroup * sched.pairs)), kThreads, kSmemBytes, stream},
                      map_a, map_b, map_sfa, map_sfb, map_c, sched, args.alpha, args.C, o.trace);
}

inline void launch(const gemm::Nvfp4GemmArgs& args, cudaStream_t stream) { launch_with(args, stream, {}); }

inline constexpr gemm::StageOf kStage{"07_epilogue_tma",
                                      "NVFP4: TMEM -> registers -> swizzled SMEM -> TMA store epilogue",
                                      &launch, gemm::kUsesTcgen05};

}  // namespace stage07
