// =================================================================================================
//  An NVFP4 GEMM for Blackwell, built one layer at a time                         stage 05 of 07
//
//     00_naive          FP32, one thread per output: the textbook triple loop
//     01_tiled_smem     FP32, shared-memory tiles and register tiles: data reuse
//     02_swizzle        FP32, XOR-swizzled shared memory: no bank conflicts
//     03_nvfp4_quant    NVFP4: the quantizer, and a CUDA-core GEMM on packed E2M1 + E4M3 scales
//     04_tma_mbarrier   NVFP4: TMA bulk-tensor loads into a multi-stage mbarrier pipeline
//  >> 05_tcgen05_2cta   NVFP4: tcgen05 block-scaled MMA, Tensor Memory, 2-CTA pairs
//     06_persistent_ws  NVFP4: persistent tile scheduler, warp-specialised producer/MMA/epilogue
//     07_epilogue_tma   NVFP4: TMEM -> registers -> swizzled SMEM -> TMA store epilogue
//
//  Every stage computes C = A * B^T with both operands K-major (common/gemm_api.h). The operands
//  are NVFP4: A (M x K) and B (N x K) packed E2M1, two values per byte; SFA and SFB one E4M3 scale
//  per 16 values in the blocked layout (common/sf_layout.h); C = alpha * A B^T in FP16.
// =================================================================================================
//
// What changed since stage 04, and why
// ------------------------------------
// Who does the arithmetic. Stage 04 decoded every E2M1 value and its scale on the CUDA cores and
// spent its time issuing FP32 FMAs. Here the tensor core reads the packed operands and the scales
// itself: one tcgen05.mma.kind::mxf4nvf4.block_scale.block16 multiplies a 256 x 64 slice of A by a
// 64 x BN slice of B, applying the E4M3 scales, and adds into an FP32 accumulator. Everything the
// CUDA cores did per value is gone; what is left is choreography.
//
//   - The accumulator lives in Tensor Memory (TMEM): 128 lanes x 512 columns of 32 bits per SM,
//     allocated by a warp (tcgen05.alloc), written by the MMA, read back by tcgen05.ld. Row r of
//     the CTA's accumulator is lane r, column n is column n: D takes BN columns.
//   - The scales must be in TMEM too, duplicated in all four 32-lane quadrants. tcgen05.cp
//     .32x128b.warpx4 copies one 512-byte blocked-layout atom (the scales of 128 rows for 64 values
//     of k) from shared memory into 4 columns: the blocked layout is exactly its source image. Each
//     pipeline stage has its own scale columns, so a copy never overwrites scales that an MMA still
//     in flight reads (the PTX ISA orders cp before a later mma, not the other way round).
//   - Two CTAs of a cluster form a pair (cta_group::2): one thread of the even CTA issues an MMA of
//     M = 256 that reads A rows 0..127 and B rows 0..BN/2-1 from the even CTA's shared memory, A rows
//     128..255 and B rows BN/2..BN-1 from the odd CTA's, and writes each CTA's 128 rows of D into its
//     own TMEM. Each CTA loads half of B, so a pair moves B's tile once for 256 rows of C: the
//     bytes per FLOP of a 256 x BN tile at the price of a 128-row CTA.
//   - Asynchrony has to be stated. tcgen05.mma and tcgen05.cp return at once; tcgen05.commit makes
//     an mbarrier arrive when all of the thread's earlier tcgen05 work is done. The MMA warp commits
//     after each k-tile to both CTAs' "empty" barrier of that stage (the producers may refill it),
//     and after the last to both CTAs' "acc_full" (the epilogue may read). Waits on those barriers go
//     through ptx::wait_commit(), which under the emulator is where the work becomes visible.
//   - Both CTAs' TMA loads complete on the even CTA's "full" barrier (.cta_group::2), which expects
//     the bytes of both; only the even CTA's MMA warp waits on it. The scales now travel by tensor
//     copies too (16-byte lines, common/tensor_map.h): a plain bulk copy cannot complete on the
//     other CTA's barrier.
//
// Roles (128 threads, 4 warps, in each CTA of the pair):
//   warp 0, lane 0   producer: its CTA's A rows, B half, SFA atoms, all SFB atoms, per k-tile
//   warp 1 (even)    MMA: per k-tile 4 x (cp SFA, cp SFB, mma), one commit; one elected lane issues
//   warp 2           allocates TMEM (cta_group::2: both CTAs, the same columns) and frees it
//   warps 0..3       epilogue: warp w reads lanes 32w..32w+31 (its quadrant), alpha, FP16, stores
// The producer and the MMA warp join the epilogue when the main loop is done: this kernel is not
// persistent, and the tensor core waits while the epilogue runs (stage 06 fixes both).
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
#include "common/cuda_check.h"
#include "common/gemm_api.h"
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

inline constexpr int kCtaGroup = 2;                 // cta_group::2: a CTA pair issues one MMA
inline constexpr int kPairM = 256;                  // rows of C per pair: M of the instruction
inline constexpr int kCtaM = kPairM / kCtaGroup;    // 128 rows per CTA = the 128 TMEM lanes
inline constexpr int kMmaK = 64;                    // values of k per kind::mxf4nvf4 MMA (dense)
inline constexpr int kTileK = 256;                  // values of k per stage: one 128-byte swizzle row
inline constexpr int kStepsPerTile = kTileK / kMmaK;  // 4 MMAs per k-tile
inline constexpr int kPackedRowBytes = kTileK / 2;  // 128: the TMA box's row, one swizzle atom row
inline constexpr int kMmaStepBytes = kMmaK / 2;     // 32: descriptor start advance per MMA inside the atom
inline constexpr int kThreads = 128;                // 4 warps, one per 32-lane TMEM quadrant
inline constexpr int kProducerWarp = 0, kMmaWarp = 1, kAllocWarp = 2;
inline constexpr int kSfLinesPerAtom = gemm::kSfTileBytes / 16;  // 32 lines of 16 bytes (tcgen05.cp rows)
inline constexpr int kSfColumnsPerAtom = 4;         // one atom = 128 rows x 4 columns (row r: column r / 32)
inline constexpr uint32_t kTmemColumns = 512;       // the whole Tensor Memory of the SM: one CTA per SM
inline constexpr uint16_t kPairMask = 0b11;         // commits arrive on both CTAs of the pair (ranks 0, 1)
static_assert(kPackedRowBytes == gemm::kSwizzleRowBytes, "a k-tile row is one 128-byte swizzle row");
static_assert(kStepsPerTile * kMmaStepBytes == kPackedRowBytes, "the MMAs of a k-tile walk one swizzle atom");

// Everything that depends on BN, the N of the pair's tile (and of the MMA instruction).
template <int BN>
struct Config {
  static_assert(BN == 128 || BN == 256, "BN: whole 128-row scale atoms, and N <= 256 for the MMA");
  static constexpr int kBN = BN;
  static constexpr int kBRowsPerCta = BN / kCtaGroup;   // each CTA loads half of B's rows
  static constexpr int kSfbAtoms = BN / gemm::kSfTileRows;  // scale atoms of B per k-step

  // Shared memory of one stage (per CTA).
  static constexpr int kABytes = kCtaM * kPackedRowBytes;            // 16 KB
  static constexpr int kBBytes = kBRowsPerCta * kPackedRowBytes;     // 16 KB (BN 256), 8 KB (BN 128)
  // A k-tile's scales of one 128-row block: 4 atoms (one per MMA step), 2 KB, contiguous in memory.
  static constexpr int kSfBlockBytes = kStepsPerTile * gemm::kSfTileBytes;
  static constexpr int kSfaBytes = kSfBlockBytes;               // this CTA's 128 rows of A
  static constexpr int kSfbBytes = kSfbAtoms * kSfBlockBytes;   // all BN rows of B: 4 KB, 2 KB
  static constexpr int kStageBytes = kABytes + kBBytes + kSfaBytes + kSfbBytes;

  // Tensor Memory columns: D, then each stage's scale columns.
  static constexpr int kSfaColumnsPerStage = kStepsPerTile * kSfColumnsPerAtom;               // 16
  static constexpr int kSfbColumnsPerStage = kStepsPerTile * kSfbAtoms * kSfColumnsPerAtom;   // 32, 16
  static constexpr int kSfColumnsPerStage = kSfaColumnsPerStage + kSfbColumnsPerStage;

  // The stage count: as many as both memories hold. Shared memory: the 227 KB a block may opt into
  // (sm_90 and sm_100), less 1 KB to align the buffer to the swizzle atom and 1 KB for the barriers
  // and the emulator's few bytes on Hopper. Tensor Memory: 512 columns less the accumulator.
  static constexpr int kSmemPerBlock = 232448;
  static constexpr int kSmemReserve = 2048;
  static constexpr int kStagesBySmem = (kSmemPerBlock - kSmemReserve) / kStageBytes;
  static constexpr int kStagesByTmem = (int(kTmemColumns) - BN) / kSfColumnsPerStage;
  static constexpr int kStages = kStagesBySmem < kStagesByTmem ? kStagesBySmem : kStagesByTmem;
  static_assert(kStages >= 2, "a pipeline needs at least two stages");

  // Where things are in TMEM (column offsets from the allocation; lane 0).
  static GEMM_HD uint32_t d_column() { return 0; }
  static GEMM_HD uint32_t sfa_column(int stage, int step) {
    return uint32_t(BN + stage * kSfColumnsPerStage + step * kSfColumnsPerAtom);
  }
  static GEMM_HD uint32_t sfb_column(int stage, int step) {
    return uint32_t(BN + stage * kSfColumnsPerStage + kSfaColumnsPerStage + step * kSfbAtoms * kSfColumnsPerAtom);
  }
  static constexpr int kTmemColumnsUsed = BN + kStages * kSfColumnsPerStage;
  static_assert(kTmemColumnsUsed <= int(kTmemColumns), "accumulator and scale columns exceed Tensor Memory");

  // The instruction descriptor: E2M1 x E2M1, UE4M3 scales, K-major A and B, M = 256, N = BN.
  static GEMM_HD uint32_t instr_descriptor() { return gemm::tcgen05::nvfp4_instr_descriptor(kPairM, BN); }
};

// One stage of the ring, per CTA. Every size is a multiple of 1024, so each stage's tiles keep the
// 1024-byte alignment the 128-byte swizzle pattern is defined on.
template <int BN>
struct StageBuffers {
  using C = Config<BN>;
  alignas(1024) unsigned char a[C::kABytes];   // this CTA's 128 rows of A, TMA, 128-byte swizzle
  alignas(1024) unsigned char b[C::kBBytes];   // this CTA's BN/2 rows of B, the same
  alignas(128) uint8_t sfa[C::kSfaBytes];      // 4 atoms: this CTA's rows, k-steps 0..3
  alignas(128) uint8_t sfb[C::kSfbBytes];      // [B row block t][k-step j] atoms: all BN rows
};

template <int BN>
struct SharedStorage {
  StageBuffers<BN> stage[Config<BN>::kStages];
  uint64_t full[Config<BN>::kStages];   // even CTA: both CTAs' bytes have landed (1 arrival + tx)
  uint64_t empty[Config<BN>::kStages];  // each CTA: the MMAs reading the stage are done (1 commit)
  uint64_t acc_full;                    // each CTA: the accumulator is complete (1 commit)
  uint32_t tmem_base;                   // written by tcgen05.alloc
};
template <int BN>
inline constexpr int kSmemBytes = int(sizeof(SharedStorage<BN>)) + 1024;  // + slack to align to 1024
static_assert(kSmemBytes<256> <= Config<256>::kSmemPerBlock - 1024, "BN 256 does not fit in shared memory");
static_assert(kSmemBytes<128> <= Config<128>::kSmemPerBlock - 1024, "BN 128 does not fit in shared memory");

// K-major SW128 descriptor of a stage's tile, started `step` MMAs into the 128-byte swizzle atom.
__device__ __forceinline__ uint64_t operand_descriptor(const void* tile, int step) {
  return gemm::tcgen05::advance_start(gemm::tcgen05::kmajor_sw128_descriptor(gemm::ptx::smem_addr(tile)),
                                      uint32_t(step * kMmaStepBytes));
}

template <int BN>
__global__ void __cluster_dims__(kCtaGroup, 1, 1) __launch_bounds__(kThreads, 1)
nvfp4_tcgen05_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                   const __grid_constant__ CUtensorMap map_sfa, const __grid_constant__ CUtensorMap map_sfb, int M,
                   int N, int K, int tiles_n, float alpha, __half* __restrict__ C) {
  using Cfg = Config<BN>;
  namespace ptx = gemm::ptx;
  namespace tc = gemm::tcgen05;
  constexpr int S = Cfg::kStages;
  extern __shared__ unsigned char smem_raw[];
  SharedStorage<BN>& s = *reinterpret_cast<SharedStorage<BN>*>(gemm::align_to_swizzle_atom(smem_raw));

  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  const uint32_t rank = ptx::cluster_ctarank();  // 0: even (leader), 1: odd
  const bool leader = rank == 0;
  const int pair = int(blockIdx.x) / kCtaGroup;
  const int m0 = (pair / tiles_n) * kPairM;      // first row of the pair's tile
  const int n0 = (pair % tiles_n) * BN;          // first column
  const int batch = int(blockIdx.y);
  const int k_tiles = (K + kTileK - 1) / kTileK;
  // Blocked scales: the atoms of 128-row block rb for k-tile kt are tiles rb * T + 4 kt .. + 3, T =
  // tiles per row block; the line map counts 16-byte lines, 32 per tile.
  const int sf_tiles_per_row_block = int(gemm::sf_padded_cols(K) / gemm::kSfTileCols);

  if (threadIdx.x == 0) {
    ptx::prefetch_tensormap(&map_a);
    ptx::prefetch_tensormap(&map_b);
    ptx::prefetch_tensormap(&map_sfa);
    ptx::prefetch_tensormap(&map_sfb);
    for (int i = 0; i < S; ++i) {
      ptx::mbarrier_init(&s.full[i], 1);   // the even producer's arrive.expect_tx
      ptx::mbarrier_init(&s.empty[i], 1);  // one multicast commit from the MMA warp
    }
    ptx::mbarrier_init(&s.acc_full, 1);    // one multicast commit after the last k-tile
    ptx::fence_mbarrier_init();
  }
  if (warp == kAllocWarp) {
    ptx::tcgen05_alloc<kCtaGroup>(&s.tmem_base, kTmemColumns);  // both CTAs: the same columns
    ptx::tcgen05_relinquish_alloc_permit<kCtaGroup>();           // this CTA allocates nothing else
  }
  // The peer's barriers must be initialised before anyone arrives on them, and the TMEM address
  // must be visible: fence, CTA barrier, cluster barrier, fence (PTX ISA 9.7.16.6.4).
  ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  ptx::cluster_sync();
  ptx::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = s.tmem_base;

  if (warp == kProducerWarp && lane == 0) {
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int st = kt % S;
      // Free once the MMAs that read it last time round are done (first round: at once).
      ptx::wait_commit(&s.empty[st], ((kt / S) & 1) ^ 1, "empty", st);
      // The even CTA's full barrier counts the bytes of both CTAs' copies. TMA always delivers
      // whole boxes (zeros outside the tensors), so the count is the same for every k-tile.
      if (leader) ptx::mbarrier_arrive_expect_tx(&s.full[st], kCtaGroup * Cfg::kStageBytes);
      StageBuffers<BN>& buf = s.stage[st];
      const int my_m = m0 + kCtaM * int(rank);
      ptx::tma_load_3d_cta_group2(buf.a, &map_a, kt * kPackedRowBytes, my_m, batch, &s.full[st], Cfg::kABytes);
      ptx::tma_load_3d_cta_group2(buf.b, &map_b, kt * kPackedRowBytes, n0 + Cfg::kBRowsPerCta * int(rank), batch,
                                  &s.full[st], Cfg::kBBytes);
      const int sfa_line = ((my_m / gemm::kSfTileRows) * sf_tiles_per_row_block + kt * kStepsPerTile) * kSfLinesPerAtom;
      ptx::tma_load_3d_cta_group2(buf.sfa, &map_sfa, 0, sfa_line, batch, &s.full[st], Cfg::kSfaBytes);
      for (int t = 0; t < Cfg::kSfbAtoms; ++t) {  // every CTA holds the scales of all BN rows of B
        const int sfb_line =
            ((n0 / gemm::kSfTileRows + t) * sf_tiles_per_row_block + kt * kStepsPerTile) * kSfLinesPerAtom;
        ptx::tma_load_3d_cta_group2(buf.sfb + t * Cfg::kSfBlockBytes, &map_sfb, 0, sfb_line, batch, &s.full[st],
                                    Cfg::kSfBlockBytes);
      }
    }
  }

  if (warp == kMmaWarp && leader) {  // the whole warp calls the _warp forms; one elected lane issues
    const uint32_t idesc = Cfg::instr_descriptor();
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int st = kt % S;
      ptx::mbarrier_wait(&s.full[st], (kt / S) & 1, "full", st);
      ptx::tcgen05_fence_after_thread_sync();
      const StageBuffers<BN>& buf = s.stage[st];
      // The last k-tile may hold fewer than 4 MMA steps (K is a multiple of 32: a half step is
      // zero-filled by TMA and its scales multiply zeros).
      const int steps = min(kStepsPerTile, (K - kt * kTileK + kMmaK - 1) / kMmaK);
#pragma unroll  // a full k-tile is straight-line code: 4 x (cp SFA, cp SFB, mma) in the SASS
      for (int j = 0; j < kStepsPerTile; ++j) {
        if (j >= steps) break;
        ptx::tcgen05_cp_32x128b_warpx4_warp<kCtaGroup>(
            tmem + Cfg::sfa_column(st, j), tc::sf_atom_descriptor(ptx::smem_addr(buf.sfa + j * gemm::kSfTileBytes)));
        for (int t = 0; t < Cfg::kSfbAtoms; ++t)
          ptx::tcgen05_cp_32x128b_warpx4_warp<kCtaGroup>(
              tmem + Cfg::sfb_column(st, j) + uint32_t(t * kSfColumnsPerAtom),
              tc::sf_atom_descriptor(ptx::smem_addr(buf.sfb + t * Cfg::kSfBlockBytes + j * gemm::kSfTileBytes)));
        ptx::tcgen05_mma_nvfp4_warp<kCtaGroup>(tmem + Cfg::d_column(), operand_descriptor(buf.a, j),
                                               operand_descriptor(buf.b, j), idesc, tmem + Cfg::sfa_column(st, j),
                                               tmem + Cfg::sfb_column(st, j), kt > 0 || j > 0);
      }
      // Stage st may be refilled once these MMAs are done: both CTAs' producers wait for this.
      ptx::tcgen05_commit_multicast_warp<kCtaGroup>(&s.empty[st], kPairMask);
    }
    ptx::tcgen05_commit_multicast_warp<kCtaGroup>(&s.acc_full, kPairMask);  // all MMAs done
  }
  __syncwarp();

  // Epilogue: every warp of both CTAs. Warp w reads TMEM lanes 32w..32w+31 = rows of its quadrant,
  // 32 columns per tcgen05.ld, and stores them as FP16 after scaling by alpha.
  ptx::wait_commit(&s.acc_full, 0, "acc_full", 0);
  ptx::tcgen05_fence_after_thread_sync();
  const int row = m0 + kCtaM * int(rank) + 32 * warp + lane;
  __half* c_row = C + (int64_t(batch) * M + row) * int64_t(N);
  for (int c = 0; c < BN && n0 + c < N; c += 32) {  // warp-uniform: tcgen05.ld is warp-collective
    uint32_t r[32];
    ptx::tcgen05_ld_32x32b<32>(tmem + tc::tmem_address(uint32_t(32 * warp), Cfg::d_column() + uint32_t(c)), r);
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
  // the MMAs wrote both CTAs' TMEM from the even CTA, and both CTAs' loads complete on the even CTA's
  // barriers. Every thread orders its TMEM reads before the cluster barrier, then both dealloc.
  ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  ptx::cluster_sync();
  if (warp == kAllocWarp) ptx::tcgen05_dealloc<kCtaGroup>(tmem, kTmemColumns);
}

// The tensor maps: A and B in boxes of (128 rows, BN/2 rows) x 128 bytes with the 128-byte swizzle;
// the scales as 16-byte lines in boxes of 4 atoms (one 128-row block, one k-tile).
inline gemm::TensorMapPlan plan_a(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_packed_operand(a.A, a.M, a.K, a.L, kCtaM, kPackedRowBytes);
}
template <int BN>
gemm::TensorMapPlan plan_b(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_packed_operand(a.B, a.N, a.K, a.L, Config<BN>::kBRowsPerCta, kPackedRowBytes);
}
inline gemm::TensorMapPlan plan_sfa(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_sf_lines(a.SFA, a.M, a.K, a.L, kStepsPerTile * kSfLinesPerAtom);
}
inline gemm::TensorMapPlan plan_sfb(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_sf_lines(a.SFB, a.N, a.K, a.L, kStepsPerTile * kSfLinesPerAtom);
}

template <int BN>
void launch_bn(const gemm::Nvfp4GemmArgs& args, cudaStream_t stream) {
  gemm::validate(args);
  const int64_t tiles_m = (args.M + kPairM - 1) / kPairM, tiles_n = (args.N + BN - 1) / BN;
  if (kCtaGroup * tiles_m * tiles_n > INT_MAX)
    throw std::invalid_argument("stage05: M*N needs " + std::to_string(kCtaGroup * tiles_m * tiles_n) +
                                " CTAs, more than a grid dimension holds (2^31 - 1)");
  const gemm::TensorMapPlan pa = plan_a(args), pb = plan_b<BN>(args), psa = plan_sfa(args), psb = plan_sfb(args);
  const CUtensorMap map_a = gemm::encode_tensor_map(pa), map_b = gemm::encode_tensor_map(pb);
  const CUtensorMap map_sfa = gemm::encode_tensor_map(psa), map_sfb = gemm::encode_tensor_map(psb);
  gemm::tcgen05::prepare_launch();
  CUDA_CHECK(cudaFuncSetAttribute(nvfp4_tcgen05_gemm<BN>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes<BN>));
  nvfp4_tcgen05_gemm<BN><<<dim3(unsigned(kCtaGroup * tiles_m * tiles_n), unsigned(args.L)), kThreads, kSmemBytes<BN>,
                           stream>>>(map_a, map_b, map_sfa, map_sfb, args.M, args.N, args.K, int(tiles_n), args.alpha,
                                     args.C);
  CUDA_CHECK_LAUNCH();
}

// The stage's launcher: BN = 256 (the tile with the fewest bytes per FLOP); BN = 128 for comparison.
inline void launch(const gemm::Nvfp4GemmArgs& args, cudaStream_t stream) { launch_bn<256>(args, stream); }
inline void launch_bn128(const gemm::Nvfp4GemmArgs& args, cudaStream_t stream) { launch_bn<128>(args, stream); }

inline constexpr gemm::Stage kStage{"05_tcgen05_2cta", "NVFP4: tcgen05 block-scaled MMA, Tensor Memory, 2-CTA pairs",
                                    gemm::Precision::kNvfp4, nullptr, &launch, /*uses_tcgen05=*/true};

}  // namespace stage05
