// Stage 05, step 2 of 2: two CTAs issue one MMA as a pair.            README.md explains each change.
// Changes from 05_tcgen05_2cta/kernel_1cta.cuh:
//   1. cta_group::2 in a cluster of two CTAs: the leader (rank 0) issues MMAs of M = 256, N = 256 that
//      read A and half of B from each CTA's shared memory and write each CTA's 128 rows of D into
//      its own TMEM. Each CTA loads the A and B bytes of step 1 and gets twice the columns of C.
//   2. Both CTAs' TMA loads complete on the leader's "full" barrier (.cta_group::2), which expects
//      the bytes of both; only the leader's MMA warp waits on it.
//   3. The scales travel by tensor maps (16-byte lines): a bulk copy cannot complete on the other
//      CTA's barrier.
//   4. Commits multicast to both CTAs' barriers; cluster barriers order the start (the peer's
//      barriers initialised) and the end (no CTA frees TMEM the other may still touch).
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/config.h"
#include "common/gemm_api.h"
#include "common/launch.cuh"
#include "common/ptx/cluster.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/tcgen05.cuh"
#include "common/ptx/tma.cuh"
#include "common/registry.h"
#include "common/sf_layout.h"
#include "common/swizzle.h"
#include "common/tcgen05_desc.h"
#include "common/tensor_map.h"

namespace stage05 {

namespace ptx = gemm::ptx;
namespace tc = gemm::tcgen05;

inline constexpr int kCtaGroup = 2;       // cta_group::2: a CTA pair issues one MMA
inline constexpr int kBM = 256;           // rows of C per tile (per pair): M of the MMA
inline constexpr int kCtaM = kBM / kCtaGroup;  // rows per CTA = the 128 TMEM lanes
inline constexpr int kBN = 256;           // columns of C per tile: N of the MMA
inline constexpr int kTileK = 256;        // values of k per packed tile: one 128-byte swizzle row
inline constexpr int kMmaK = 64;          // values of k per kind::mxf4nvf4 MMA (dense)
inline constexpr int kStepsPerTile = kTileK / kMmaK;  // 4 MMAs per k-tile
inline constexpr int kThreads = 128;      // 4 warps, one per 32-lane TMEM quadrant
inline constexpr int kProducerWarp = 0, kMmaWarp = 1, kAllocWarp = 2;
inline constexpr int kBRowsPerCta = kBN / kCtaGroup;                     // rows of B each CTA loads: half
inline constexpr int kPackedRowBytes = kTileK / 2;                       // 128: the TMA box's row
inline constexpr int kPackedTileBytes = kCtaM * kPackedRowBytes;         // 16 KB per operand
inline constexpr int kSfBlockBytes = kCtaM * (kTileK / gemm::kSfVector);  // 2 KB: 4 atoms of 512 B
inline constexpr int kSfbAtoms = kBN / gemm::kSfTileRows;                // B's 128-row blocks: 2
inline constexpr int kMmaStepBytes = kMmaK / 2;       // 32: descriptor start advance per MMA inside the atom
inline constexpr int kSfColumnsPerAtom = 4;           // one atom = 128 rows x 4 columns (row r: column r / 32)
inline constexpr uint32_t kTmemColumns = 512;         // the whole Tensor Memory of the SM: one CTA per SM
inline constexpr int kSfLinesPerAtom = gemm::kSfTileBytes / 16;  // 32 lines of 16 bytes: the scale maps' rows
inline constexpr uint16_t kPairMask = 0b11;           // commits arrive on both CTAs of the pair (ranks 0, 1)
static_assert(kPackedRowBytes == gemm::kSwizzleRowBytes, "a packed tile row is one 128-byte swizzle row (TMA box)");
static_assert(kStepsPerTile * kMmaStepBytes == kPackedRowBytes, "the MMAs of a k-tile walk one swizzle atom");
static_assert(kBRowsPerCta == kCtaM, "A and B tiles of a CTA have the same size");

// One slot of the ring: everything one k-tile needs. 38 KB, a multiple of 1024, so every slot's
// tiles stay 1024-byte aligned.
struct Slot {
  alignas(1024) unsigned char a[kPackedTileBytes];  // written by TMA, 128-byte swizzle
  alignas(1024) unsigned char b[kPackedTileBytes];
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
inline constexpr int kFixedBytes = 1024 /* barriers */ + 1024 /* alignment */ + kStaticSmemMargin;
inline constexpr int kSfaColumnsPerSlot = kStepsPerTile * kSfColumnsPerAtom;               // 16
inline constexpr int kSfbColumnsPerSlot = kStepsPerTile * kSfbAtoms * kSfColumnsPerAtom;   // 32
inline constexpr int kSfColumnsPerSlot = kSfaColumnsPerSlot + kSfbColumnsPerSlot;
inline constexpr int kSlotsBySmem = (kSmemPerBlock - kFixedBytes) / int(sizeof(Slot));
inline constexpr int kSlotsByTmem = (int(kTmemColumns) - kBN) / kSfColumnsPerSlot;
inline constexpr int kSlots = kSlotsBySmem < kSlotsByTmem ? kSlotsBySmem : kSlotsByTmem;  // 5
static_assert(kSlots >= 2, "a pipeline needs at least two slots");

// Where things are in TMEM (column offsets from the allocation; lane 0): D, then each slot's scales.
GEMM_HD uint32_t d_column() { return 0; }
GEMM_HD uint32_t sfa_column(int slot, int step) {
  return uint32_t(kBN + slot * kSfColumnsPerSlot + step * kSfColumnsPerAtom);
}
GEMM_HD uint32_t sfb_column(int slot, int step) {
  return uint32_t(kBN + slot * kSfColumnsPerSlot + kSfaColumnsPerSlot + step * kSfbAtoms * kSfColumnsPerAtom);
}
inline constexpr int kTmemColumnsUsed = kBN + kSlots * kSfColumnsPerSlot;
static_assert(kTmemColumnsUsed <= int(kTmemColumns), "accumulator and scale columns exceed Tensor Memory");

// The instruction descriptor: E2M1 x E2M1, UE4M3 scales, K-major A and B, M = kBM, N = kBN.
GEMM_HD uint32_t instr_descriptor() { return tc::nvfp4_instr_descriptor(kBM, kBN); }

struct SharedStorage {
  Slot ring[kSlots];
  uint64_t full[kSlots];    // leader: both CTAs' bytes of a slot have landed (1 arrival + tx bytes)
  uint64_t empty[kSlots];   // each CTA: the MMAs reading a slot are done (1 multicast commit)
  uint64_t acc_full;        // each CTA: its rows of the accumulator are complete (1 multicast commit)
  uint32_t tmem_base;       // written by tcgen05.alloc
};
inline constexpr int kSmemBytes = int(sizeof(SharedStorage)) + 1024;
static_assert(kSmemBytes + kStaticSmemMargin <= kSmemPerBlock, "the pipeline does not fit in shared memory");

// K-major SW128 descriptor of a slot's tile, started `step` MMAs into the 128-byte swizzle atom.
__device__ __forceinline__ uint64_t operand_descriptor(const void* tile, int step) {
  return tc::advance_start(tc::kmajor_sw128_descriptor(ptx::smem_addr(tile)), uint32_t(step * kMmaStepBytes));
}

__global__ void __cluster_dims__(kCtaGroup, 1, 1) __launch_bounds__(kThreads, 1)
nvfp4_tcgen05_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                   const __grid_constant__ CUtensorMap map_sfa, const __grid_constant__ CUtensorMap map_sfb, int M,
                   int N, int K, int blocks_n, float alpha, __half* __restrict__ C) {
  ptx::ProtocolScope protocol_scope;  // the protocol checker sees each thread enter and leave (no code in release)
  // The swizzle is defined on absolute shared-memory addresses: align the tiles to 1024 bytes.
  extern __shared__ unsigned char smem_raw[];
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(gemm::align_to_swizzle_atom(smem_raw));

  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  const uint32_t rank = ptx::cluster_ctarank();  // 0: the leader, 1: its peer
  const bool leader = rank == 0;
  const int tile = int(blockIdx.x) / kCtaGroup;
  const int m0 = (tile / blocks_n) * kBM, n0 = (tile % blocks_n) * kBN;
  const int my_m = m0 + kCtaM * int(rank);       // this CTA's first row of A and of C
  const int batch = blockIdx.y;
  C += int64_t(batch) * M * int64_t(N);

  if (threadIdx.x == 0) {
    ptx::prefetch_tensormap(&map_a);
    ptx::prefetch_tensormap(&map_b);
    ptx::prefetch_tensormap(&map_sfa);
    ptx::prefetch_tensormap(&map_sfb);
    for (int i = 0; i < kSlots; ++i) {
      ptx::mbarrier_init(&s.full[i], 1, "full", i);    // the leader's arrive.expect_tx
      ptx::mbarrier_init(&s.empty[i], 1, "empty", i);  // one multicast commit from the MMA warp
    }
    ptx::mbarrier_init(&s.acc_full, 1, "acc_full");    // one commit after the last k-tile
    ptx::fence_mbarrier_init();
  }
  // A cta_group::2 alloc is collective across the pair: the peer must be known to run (PTX ISA
  // 9.7.16.7.1), which a cluster barrier both CTAs passed proves.
  ptx::cluster_sync();
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

  // Producer: wait until slot kt % kSlots is empty, arm it, start its copies.
  auto produce = [&](int kt) {
    const int slot = kt % kSlots;
    const uint32_t empty_parity = ((kt / kSlots) & 1) ^ 1;  // the first round passes at once
    ptx::wait_commit(&s.empty[slot], empty_parity, "empty", slot);
    // The leader's full barrier counts the bytes of both CTAs' copies. TMA always delivers whole
    // boxes (zeros outside the tensors), so the count is the same for every k-tile.
    if (leader) ptx::mbarrier_arrive_expect_tx(&s.full[slot], kCtaGroup * int(sizeof(Slot)));
    const int first_atom = kt * gemm::kSfTileCols;
    ptx::tma_load_3d_cta_group2(s.ring[slot].a, &map_a, kt * kPackedRowBytes, my_m, batch, &s.full[slot],
                                kPackedTileBytes);
    ptx::tma_load_3d_cta_group2(s.ring[slot].b, &map_b, kt * kPackedRowBytes, n0 + kBRowsPerCta * int(rank), batch,
                                &s.full[slot], kPackedTileBytes);
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
      for (int kt = 0; kt < k_tiles; ++kt) produce(kt);
      // The tail: the last commits on the empty barriers arrive asynchronously in this CTA's shared
      // memory; the CTA may exit only after they have (wait once more on every slot).
      for (int kt = k_tiles; kt < k_tiles + kSlots; ++kt)
        ptx::wait_commit(&s.empty[kt % kSlots], ((kt / kSlots) & 1) ^ 1, "empty", kt % kSlots);
    }
  }

  // MMA: one elected thread of the leader issues for the pair (the _warp forms, as in step 1).
  if (warp == kMmaWarp && leader) {
    ptx::protocol_role("mma");
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int slot = kt % kSlots;
      // 1. Wait until the slot's tiles and scales have landed.
      ptx::mbarrier_wait(&s.full[slot], (kt / kSlots) & 1, "full", slot);
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
        ptx::tcgen05_mma_nvfp4_warp<kCtaGroup>(tmem + d_column(), operand_descriptor(buf.a, j),
                                               operand_descriptor(buf.b, j), instr_descriptor(),
                                               tmem + sfa_column(slot, j), tmem + sfb_column(slot, j), kt > 0 || j > 0);
      }
      // 3. Release the slot in both CTAs once these MMAs (and copies) are done.
      ptx::tcgen05_commit_multicast_warp<kCtaGroup>(&s.empty[slot], kPairMask);
    }
    ptx::tcgen05_commit_multicast_warp<kCtaGroup>(&s.acc_full, kPairMask);  // all MMAs done
  }
  __syncwarp();

  // 4. Epilogue, every warp: warp w reads TMEM lanes 32w..32w+31 = rows of its quadrant, 32 columns
  //    per tcgen05.ld, and stores them as FP16 after scaling by alpha.
  ptx::protocol_role("epilogue");
  ptx::wait_commit(&s.acc_full, 0, "acc_full", 0);
  ptx::tcgen05_fence_after_thread_sync();
  const int row = my_m + 32 * warp + lane;
  __half* c_row = C + int64_t(row) * N;
  for (int c = 0; c < kBN && n0 + c < N; c += 32) {  // warp-uniform: tcgen05.ld is warp-collective
    uint32_t r[32];
    ptx::tcgen05_ld_32x32b<32>(tmem + tc::tmem_address(uint32_t(32 * warp), d_column() + uint32_t(c)), r);
    ptx::tcgen05_wait_ld();
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

  // Teardown: no CTA of the pair may free its TMEM (or exit) while the other could still touch it:
  // the leader's MMAs wrote both CTAs' TMEM, and both CTAs' loads complete on the leader's barriers.
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

inline void launch(const gemm::Nvfp4GemmArgs& args, cudaStream_t stream) {
  gemm::validate(args);
  const int64_t blocks_n = (args.N + kBN - 1) / kBN;
  const int64_t blocks_m = (args.M + kBM - 1) / kBM;
  if (kCtaGroup * blocks_n * blocks_m > INT_MAX)
    throw std::invalid_argument("stage05: M*N needs " + std::to_string(kCtaGroup * blocks_n * blocks_m) +
                                " blocks, more than a grid dimension holds (2^31 - 1)");
  const gemm::TensorMapPlan pa = plan_a(args), pb = plan_b(args);  // throw before anything runs
  const gemm::TensorMapPlan psa = plan_sfa(args), psb = plan_sfb(args);
  const CUtensorMap map_a = gemm::encode_tensor_map(pa), map_b = gemm::encode_tensor_map(pb);
  const CUtensorMap map_sfa = gemm::encode_tensor_map(psa), map_sfb = gemm::encode_tensor_map(psb);
  gemm::launch_kernel(nvfp4_tcgen05_gemm,
                      {dim3(unsigned(kCtaGroup * blocks_n * blocks_m), unsigned(args.L)), kThreads, kSmemBytes, stream},
                      map_a, map_b, map_sfa, map_sfb, args.M, args.N, args.K, int(blocks_n), args.alpha, args.C);
}

inline constexpr gemm::StageOf kStage{"05_tcgen05_2cta", "NVFP4: tcgen05 block-scaled MMA, Tensor Memory, 2-CTA pairs",
                                      &launch, gemm::kUsesTcgen05};

}  // namespace stage05
