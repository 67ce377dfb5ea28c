// Stage 12: SVDQuant's low-rank branch in the NVFP4 kernel.            README.md explains each change.
// Changes from 07_epilogue_tma/kernel.cuh:
//   1. After a unit's NVFP4 k-tiles the producer loads ceil(R / 64) low-rank k-tiles through the same
//      ring: 128 rows of lora_act into a slot's A tile, 64 rows of lora_up into its B tile. 64 16-bit
//      values are one 128-byte swizzle row, the geometry of 256 FP4 values; there are no scales.
//   2. The MMA warp runs them as kind::f16 MMAs (16 values of the rank each) into the low-rank
//      accumulator: 128 Tensor Memory columns of their own, because y needs alpha * acc + lowrank and
//      alpha scales the NVFP4 sum only. One such accumulator serves every unit; the epilogue releases
//      it on lr_empty, which the MMA warp waits on before a unit's first low-rank MMA.
//   3. The epilogue computes y = (alpha * acc + lowrank) * wcscale[n] + bias[n] in FP32 and rounds it
//      once to C's format (FP16 or BF16: the kernel's Out).
//   4. The low-rank accumulator's columns leave room for the scales of 4 slots (stage 07: 7).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/config.h"
#include "common/kinds/svdquant_gemm.h"
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
#include "common/tcgen05_desc_kinds.h"
#include "common/tensor_map.h"
#include "common/timeline.h"

namespace stage12 {

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
inline constexpr int kLrTileR = kPackedRowBytes / 2;  // 64: values of the rank per low-rank k-tile (16 bits each)
inline constexpr int kLrMmaK = 16;                    // values of the rank per kind::f16 MMA
inline constexpr int kLrStepsPerTile = kLrTileR / kLrMmaK;  // 4 MMAs per low-rank k-tile
inline constexpr int kLrTmaBytes = kPackedTileBytes + kBBytes;  // 24 KB per CTA: lora_act's and lora_up's rows
inline constexpr int kSfColumnsPerAtom = 4;           // one atom = 128 rows x 4 columns (row r: column r / 32)
inline constexpr uint32_t kTmemColumns = 512;         // the whole Tensor Memory of the SM: one CTA per SM
inline constexpr int kSfLinesPerAtom = gemm::kSfTileBytes / 16;  // 32 lines of 16 bytes: the scale maps' rows
inline constexpr uint16_t kPairMask = 0b11;           // commits arrive on both CTAs of the pair (ranks 0, 1)
static_assert(kPackedRowBytes == gemm::kSwizzleRowBytes, "a packed tile row is one 128-byte swizzle row (TMA box)");
static_assert(kStepsPerTile * kMmaStepBytes == kPackedRowBytes, "the MMAs of a k-tile walk one swizzle atom");
static_assert(kEpilogueWarps == 4, "the epilogue warps cover the four 32-lane TMEM quadrants");
static_assert(kLrMmaK * 2 == kMmaStepBytes, "a kind::f16 step walks 32 bytes of the swizzle row, as an FP4 step");

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
inline constexpr int kLrColumns = kBN;                      // 128: one low-rank accumulator for every unit
inline constexpr int kSlotsBySmem = (kSmemPerBlock - kFixedBytes) / int(sizeof(Slot));
inline constexpr int kSlotsByTmem = (int(kTmemColumns) - kAccColumns - kLrColumns) / kSfColumnsPerSlot;
inline constexpr int kSlots = kSlotsBySmem < kSlotsByTmem ? kSlotsBySmem : kSlotsByTmem;  // 4
static_assert(kSlots >= 2, "a pipeline needs at least two slots");

// Where things are in TMEM (column offsets from the allocation; lane 0): the accumulators, the
// low-rank accumulator, then each slot's scales.
GEMM_HD uint32_t d_column(int acc) { return uint32_t(acc * kBN); }
GEMM_HD uint32_t lr_column() { return uint32_t(kAccColumns); }
GEMM_HD uint32_t sfa_column(int slot, int step) {
  return uint32_t(kAccColumns + kLrColumns + slot * kSfColumnsPerSlot + step * kSfColumnsPerAtom);
}
GEMM_HD uint32_t sfb_column(int slot, int step) {
  return uint32_t(kAccColumns + kLrColumns + slot * kSfColumnsPerSlot + kSfaColumnsPerSlot +
                  step * kSfbAtoms * kSfColumnsPerAtom);
}
inline constexpr int kTmemColumnsUsed = kAccColumns + kLrColumns + kSlots * kSfColumnsPerSlot;
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
  uint64_t lr_empty;        // leader: the epilogue warps of both CTAs have read a unit's low-rank columns (8)
  uint32_t tmem_base;       // written by tcgen05.alloc
};
inline constexpr int kSmemBytes = int(sizeof(SharedStorage)) + 1024;
static_assert(kSmemBytes + kStaticSmemMargin <= kSmemPerBlock, "the pipeline does not fit in shared memory");

// What the host decides once per launch and every role of every CTA reads the same way.
struct Schedule {
  int M, N, K, L;
  int R, lr_tiles;       // the rank and its low-rank k-tiles, ceil(R / kLrTileR)
  uint32_t lr_idesc;     // the kind::f16 instruction descriptor (FP16 or BF16 operands, the call's)
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

// 16 bytes of C from 8 FP32 values of y: the one rounding of the contract, to nearest even.
template <class Out>
__device__ __forceinline__ uint4 pack8(const float* y) {
  __align__(16) Out h[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) h[i] = Out(y[i]);  // __half(float), __nv_bfloat16(float): round to nearest even
  return *reinterpret_cast<const uint4*>(h);
}

// One epilogue warp's TMA store of a 32-row x 32-column sub-tile: lane r converts its 32 values of y
// into row r of a staging buffer in the layout of C's tensor map (64-byte rows, 64-byte swizzle),
// then lane 0 stores the box. `issued` counts the warp's stores so far: the staging buffer
// alternates, and before one is overwritten the store that read it last must be done reading.
template <class Out>
__device__ __forceinline__ void tma_store_sub_tile(unsigned char (&staging)[kStagingBuffers][kStagingBytes],
                                                   int& issued, const CUtensorMap* map_c, int x, int y, int z,
                                                   const float* v) {
  const int lane = int(threadIdx.x % 32);
  unsigned char* buf = staging[issued % kStagingBuffers];
  if (lane == 0) ptx::bulk_wait_group_read<kStagingBuffers - 1>();  // this buffer's previous store has read it
  __syncwarp();
#pragma unroll
  for (int q = 0; q < 4; ++q)  // 4 chunks of 16 bytes = 8 values each
    *reinterpret_cast<uint4*>(buf + gemm::swizzle_64b(uint32_t(lane), uint32_t(16 * q))) = pack8<Out>(v + 8 * q);
  ptx::fence_warp_stores_for_async_proxy(buf, kStagingBytes);  // all 32 lanes' stores, before lane 0's TMA store
  if (lane == 0) {
    ptx::tma_store_3d(map_c, x, y, z, buf, kStagingBytes);
    ptx::bulk_commit_group();
  }
  ++issued;
}

template <bool kTmaStore, class Out>
__global__ void __cluster_dims__(kCtaGroup, 1, 1) __launch_bounds__(kThreads, 1)
svdquant_tcgen05_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                      const __grid_constant__ CUtensorMap map_sfa, const __grid_constant__ CUtensorMap map_sfb,
                      const __grid_constant__ CUtensorMap map_lra, const __grid_constant__ CUtensorMap map_lru,
                      const __grid_constant__ CUtensorMap map_c, const Schedule sched, float alpha,
                      const float* __restrict__ wcscale, const float* __restrict__ bias, Out* __restrict__ C,
                      tl::Buffer trace) {
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
    ptx::prefetch_tensormap(&map_lra);
    ptx::prefetch_tensormap(&map_lru);
    if (kTmaStore) ptx::prefetch_tensormap(&map_c);
    for (int i = 0; i < kSlots; ++i) {
      ptx::mbarrier_init(&s.full[i], 1, "full", i);    // the leader's arrive.expect_tx
      ptx::mbarrier_init(&s.empty[i], 1, "empty", i);  // one multicast commit from the MMA warp
    }
    for (int acc = 0; acc < kAccBuffers; ++acc) {
      ptx::mbarrier_init(&s.acc_full[acc], 1, "acc_full", acc);  // one multicast commit after a unit's last k-tile
      ptx::mbarrier_init(&s.acc_empty[acc], kCtaGroup * kEpilogueWarps, "acc_empty", acc);  // each epilogue warp
    }
    ptx::mbarrier_init(&s.lr_empty, kCtaGroup * kEpilogueWarps, "lr_empty", 0);  // each epilogue warp, a unit
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
    if (leader) ptx::mbarrier_arrive_expect_tx(&s.full[slot], kCtaGroup * int(sizeof(Slot)));  // a slot's every byte
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
  // Low-rank k-tile lt of the same tile into slot it % kSlots: lora_act's 128 rows of this CTA into the
  // A tile, lora_up's 64 into the B tile (ranks past R: zeros, whole boxes). The scale buffers stay
  // unused, so the barrier expects kLrTmaBytes, not a slot's size.
  auto produce_low_rank = [&](int it, int lt, int m0, int n0, int batch) {
    const int slot = it % kSlots;
    ptx::wait_commit(&s.empty[slot], ((it / kSlots) & 1) ^ 1, "empty", slot);
    if (leader) ptx::mbarrier_arrive_expect_tx(&s.full[slot], kCtaGroup * kLrTmaBytes);
    ptx::tma_load_3d_cta_group2(s.ring[slot].a, &map_lra, lt * kPackedRowBytes, m0 + kCtaM * int(rank), batch,
                                &s.full[slot], kPackedTileBytes);
    ptx::tma_load_3d_cta_group2(s.ring[slot].b, &map_lru, lt * kPackedRowBytes, n0 + kBRowsPerCta * int(rank), batch,
                                &s.full[slot], kBBytes);
  };
  if (warp == kProducerWarp) {
    ptx::protocol_role("producer");
    if (lane == 0) {
      int it = 0;  // k-tiles loaded so far, over all units
      for (int u = pair; u < sched.units; u += sched.pairs) {
        const auto [m0, n0, batch] = unit_at(sched, u);
        tl::Steps events(trace, tl::kProducer, uint32_t(u), true);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) produce(it, kt, m0, n0, batch);
        for (int lt = 0; lt < sched.lr_tiles; ++lt, ++it) produce_low_rank(it, lt, m0, n0, batch);
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
      // 4. The low-rank term, into the low-rank accumulator once the epilogue warps of both CTAs have
      //    read the previous unit's (phase nth - 1 of lr_empty): R / 16 kind::f16 MMAs, 4 per k-tile.
      if (nth > 0) ptx::mbarrier_wait(&s.lr_empty, (nth - 1) & 1, "lr_empty", 0);
      ptx::tcgen05_fence_after_thread_sync();
      for (int lt = 0; lt < sched.lr_tiles; ++lt, ++it) {
        const int slot = it % kSlots;
        ptx::mbarrier_wait(&s.full[slot], (it / kSlots) & 1, "full", slot);
        ptx::tcgen05_fence_after_thread_sync();
        const Slot& buf = s.ring[slot];
        const int steps = min(kLrStepsPerTile, (sched.R - lt * kLrTileR) / kLrMmaK);
#pragma unroll
        for (int j = 0; j < kLrStepsPerTile; ++j) {
          if (j >= steps) break;
          ptx::tcgen05_mma_f16_warp<kCtaGroup>(tmem + lr_column(), operand_descriptor(buf.a, j),
                                               operand_descriptor(buf.b, j), sched.lr_idesc, lt > 0 || j > 0);
        }
        ptx::tcgen05_commit_multicast_warp<kCtaGroup>(&s.empty[slot], kPairMask);
      }
      ptx::tcgen05_commit_multicast_warp<kCtaGroup>(&s.acc_full[acc], kPairMask);  // the unit's MMAs are done
      events.mark(tl::kIssueUnit);
    }
  }
  __syncwarp();

  // 4. Epilogue, warps 2-5: warp w reads TMEM lanes 32 (w % 4) .. + 31 (a warp may only touch the
  //    quadrant of its warp id mod 4) = rows of its quadrant, all kBN columns, and stores
  //    y = (alpha * acc + lowrank) * wcscale[n] + bias[n] as Out.
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
      Out* c_row = C + (int64_t(batch) * M + row) * int64_t(N);
      const float* wc = wcscale + int64_t(batch) * N;
      const float* bs = bias + int64_t(batch) * N;
#pragma unroll
      for (int c = 0; c < kBN && n0 + c < N; c += 32) {  // warp-uniform
        // The chunk's low-rank values, and its 32 columns' wcscale and bias: lane i loads column i,
        // the shuffles hand them to every lane.
        uint32_t lr[32];
        ptx::tcgen05_ld_32x32b<32>(tmem + tc::tmem_address(uint32_t(32 * quadrant), lr_column() + uint32_t(c)), lr);
        ptx::tcgen05_wait_ld();
        const int n_lane = n0 + c + lane;
        const float w = n_lane < N ? wc[n_lane] : 0.0f, b = n_lane < N ? bs[n_lane] : 0.0f;
        float v[32];
#pragma unroll
        for (int i = 0; i < 32; ++i)
          v[i] = (alpha * __uint_as_float(regs[c / 32][i]) + __uint_as_float(lr[i])) * __shfl_sync(~0u, w, i) +
                 __shfl_sync(~0u, b, i);
        if constexpr (kTmaStore) {  // TMA clips the box at M and N; a box wholly past M is skipped
          if (row - lane < M)
            tma_store_sub_tile<Out>(s.staging[warp - kFirstEpilogueWarp], stores_issued, &map_c, n0 + c, row - lane,
                                    batch, v);
          continue;
        }
        if (row >= M) continue;
        const int n = n0 + c;
        // Whole chunk inside and 16-byte aligned (C need only be 2-byte aligned): 4 x 16-byte stores.
        if (n + 32 <= N && reinterpret_cast<uintptr_t>(c_row + n) % 16 == 0) {
#pragma unroll
          for (int q = 0; q < 4; ++q) *reinterpret_cast<uint4*>(c_row + n + 8 * q) = pack8<Out>(v + 8 * q);
        } else {
#pragma unroll  // constant indices keep v[] in registers (a runtime bound would put it in local memory)
          for (int i = 0; i < 32; ++i)
            if (n + i < N) c_row[n + i] = Out(v[i]);
        }
      }
      // The low-rank columns are read: the MMA warp may write the next unit's.
      ptx::tcgen05_fence_before_thread_sync();
      __syncwarp();
      if (lane == 0) ptx::mbarrier_arrive_cluster(&s.lr_empty, 0);  // at the leader
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
// scales as 16-byte lines in boxes of 4 atoms (one 128-row block, one k-tile); the low-rank operands in
// the same boxes of 128 bytes (64 values of the rank), 128 rows of lora_act and 64 of lora_up.
inline gemm::TensorMapPlan plan_a(const gemm::SvdquantGemmArgs& a) {
  return gemm::plan_packed_operand(a.A, a.M, a.K, a.L, kCtaM, kPackedRowBytes);
}
inline gemm::TensorMapPlan plan_b(const gemm::SvdquantGemmArgs& a) {
  return gemm::plan_packed_operand(a.B, a.N, a.K, a.L, kBRowsPerCta, kPackedRowBytes);
}
inline gemm::TensorMapPlan plan_sfa(const gemm::SvdquantGemmArgs& a) {
  return gemm::plan_sf_lines(a.SFA, a.M, a.K, a.L, kStepsPerTile * kSfLinesPerAtom);
}
inline gemm::TensorMapPlan plan_sfb(const gemm::SvdquantGemmArgs& a) {
  return gemm::plan_sf_lines(a.SFB, a.N, a.K, a.L, kStepsPerTile * kSfLinesPerAtom);
}
inline gemm::TensorMapPlan plan_lora_act(const gemm::SvdquantGemmArgs& a) {
  return gemm::plan_packed_operand(reinterpret_cast<const uint8_t*>(a.lora_act), a.M, a.R, a.L, kCtaM, kPackedRowBytes, 16);
}
inline gemm::TensorMapPlan plan_lora_up(const gemm::SvdquantGemmArgs& a) {
  return gemm::plan_packed_operand(reinterpret_cast<const uint8_t*>(a.lora_up), a.N, a.R, a.L, kBRowsPerCta,
                                   kPackedRowBytes, 16);
}

// How many CTA pairs the GPU holds at once (the occupancy API: 74 on a 148-SM B200).
inline int resident_pairs() {
  // Every instance uses the same resources; the TMA FP16 one stands for all.
  static const int pairs =
      gemm::resident_clusters(svdquant_tcgen05_gemm<true, __half>, kCtaGroup, kThreads, kSmemBytes, "stage12");
  return pairs;
}

// What a caller may force (tests, the stage program): fewer pairs than fit, a timeline of one run.
struct LaunchOptions {
  int max_pairs = 0;  // 0: as many as are resident
  tl::Buffer trace{};  // events of one run, or none
};

inline Schedule make_schedule(const gemm::SvdquantGemmArgs& a, int pairs, const LaunchOptions& o = {}) {
  const int64_t blocks_n = (a.N + kBN - 1) / kBN;
  const int64_t blocks_m = (a.M + kBM - 1) / kBM;
  if (blocks_n * blocks_m * a.L > INT_MAX)
    throw std::invalid_argument("stage12: M*N*L needs " + std::to_string(blocks_n * blocks_m * a.L) +
                                " tiles, more than the schedule counts (2^31 - 1)");
  if (o.max_pairs > 0) pairs = std::min(pairs, o.max_pairs);
  const int units = int(blocks_n * blocks_m * a.L);
  const uint32_t type = a.lora_format == gemm::Format16::kBf16 ? tc::kF16TypeBF16 : tc::kF16TypeF16;
  return {a.M, a.N, a.K, a.L, a.R, (a.R + kLrTileR - 1) / kLrTileR, tc::f16_instr_descriptor(type, type, kBM, kBN),
          int(blocks_m), int(blocks_n), units, std::min(pairs, units)};
}

// The rule for the epilogue: TMA stores where C's tensor map can address C (rows start on 16-byte
// boundaries: N % 8 == 0, and C 16-byte aligned), stage 06's direct stores otherwise.
inline bool uses_tma_store(const gemm::SvdquantGemmArgs& a) {
  return a.N % 8 == 0 && reinterpret_cast<uintptr_t>(a.C) % 16 == 0;
}

// C's tensor map: boxes of one warp's 32 rows x one 32-column sub-tile, 64-byte swizzle.
inline gemm::TensorMapPlan plan_c(const gemm::SvdquantGemmArgs& a) {
  return gemm::plan_output(a.C, a.M, a.N, a.L, 32, kSubTileCols,
                           a.c_format == gemm::Format16::kBf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                               : CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
}

template <class Out>
void launch_as(const gemm::SvdquantGemmArgs& args, cudaStream_t stream, const LaunchOptions& o) {
  const Schedule sched = make_schedule(args, resident_pairs(), o);
  const gemm::TensorMapPlan pa = plan_a(args), pb = plan_b(args);  // throw before anything runs
  const gemm::TensorMapPlan psa = plan_sfa(args), psb = plan_sfb(args);
  const gemm::TensorMapPlan plra = plan_lora_act(args), plru = plan_lora_up(args);
  const CUtensorMap map_a = gemm::encode_tensor_map(pa), map_b = gemm::encode_tensor_map(pb);
  const CUtensorMap map_sfa = gemm::encode_tensor_map(psa), map_sfb = gemm::encode_tensor_map(psb);
  const CUtensorMap map_lra = gemm::encode_tensor_map(plra), map_lru = gemm::encode_tensor_map(plru);
  const bool tma_store = uses_tma_store(args);
  const CUtensorMap map_c = tma_store ? gemm::encode_tensor_map(plan_c(args)) : CUtensorMap{};  // unused if direct
  const auto kernel = tma_store ? svdquant_tcgen05_gemm<true, Out> : svdquant_tcgen05_gemm<false, Out>;
  gemm::launch_kernel(kernel, {dim3(unsigned(kCtaGroup * sched.pairs)), kThreads, kSmemBytes, stream},
                      map_a, map_b, map_sfa, map_sfb, map_lra, map_lru, map_c, sched, args.alpha, args.wcscale,
                      args.bias, reinterpret_cast<Out*>(args.C), o.trace);
}

inline void launch_with(const gemm::SvdquantGemmArgs& args, cudaStream_t stream, const LaunchOptions& o) {
  gemm::validate(args);
  if (args.c_format == gemm::Format16::kBf16) launch_as<__nv_bfloat16>(args, stream, o);
  else launch_as<__half>(args, stream, o);
}

inline void launch(const gemm::SvdquantGemmArgs& args, cudaStream_t stream) { launch_with(args, stream, {}); }

inline constexpr gemm::StageOf kStage{"12_svdquant",
                                      "SVDQuant: a low-rank kind::f16 branch after the NVFP4 K loop, an affine epilogue",
                                      &launch, gemm::kUsesTcgen05};

}  // namespace stage12
