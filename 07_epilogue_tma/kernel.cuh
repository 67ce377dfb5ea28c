// =================================================================================================
//  An NVFP4 GEMM for Blackwell, built one layer at a time                         stage 07 of 07
//
//     00_naive          FP32, one thread per output: the textbook triple loop
//     01_tiled_smem     FP32, shared-memory tiles and register tiles: data reuse
//     02_swizzle        FP32, XOR-swizzled shared memory: no bank conflicts
//     03_nvfp4_quant    NVFP4: the quantizer, and a CUDA-core GEMM on packed E2M1 + E4M3 scales
//     04_tma_mbarrier   NVFP4: TMA bulk-tensor loads into a multi-stage mbarrier pipeline
//     05_tcgen05_2cta   NVFP4: tcgen05 block-scaled MMA, Tensor Memory, 2-CTA pairs
//     06_persistent_ws  NVFP4: persistent tile scheduler, warp-specialised producer/MMA/epilogue
//  >> 07_epilogue_tma   NVFP4: TMEM -> registers -> swizzled SMEM -> TMA store epilogue
//
//  Every stage computes C = A * B^T with both operands K-major (common/gemm_api.h). The operands
//  are NVFP4: A (M x K) and B (N x K) packed E2M1, two values per byte; SFA and SFB one E4M3 scale
//  per 16 values in the blocked layout (common/sf_layout.h); C = alpha * A B^T in FP16.
// =================================================================================================
//
// What changed since stage 06, and why
// ------------------------------------
// How C leaves. In stage 06 every epilogue thread stored its own row of C: 64 bytes at a time, 32
// threads of a warp writing 32 different rows, 256 bytes apart. Each such store is a separate
// request the memory system must merge, and the threads stay busy until the last one is issued.
// Here the epilogue hands whole tiles to TMA:
//
//   - Each epilogue warp reads its 32 rows x 128 columns of the accumulator with four tcgen05.ld
//     .32x32b.x32 (32 columns each: one register per column, and 32 FP16 values = 64 bytes, one row of
//     the store box), issued back to back under one wait::ld, and releases the buffer to the MMA warp
//     at once, as in stage 06 (the MMA warp needs all 128 columns back before it can start a tile in
//     them, so "as soon as they are in registers" is after the fourth load).
//   - Sub-tile by sub-tile (32 rows x 32 columns, 2 KB), it scales by alpha, converts to FP16 and
//     writes the sub-tile into a shared-memory staging buffer in the layout of C's tensor map: 64-byte
//     rows with the 64-byte swizzle (common/swizzle.h), which makes the warp's 16-byte stores
//     bank-conflict free (lane r writes row r; without the swizzle rows 2 apart collide).
//   - fence.proxy.async (the staging was written by threads, TMA reads it), then lane 0 issues
//     cp.async.bulk.tensor ... shared -> global for the sub-tile and commits it as a bulk group. Two
//     staging buffers per warp alternate: before overwriting one, lane 0 waits until at most one group
//     is still reading (bulk wait_group.read 1), so a sub-tile is written while the previous one is in
//     flight. TMA clips boxes at C's edges: the tails need no code.
//   - C's tensor map needs rows that start on 16-byte boundaries: N % 8 == 0 and C 16-byte aligned.
//     Otherwise the launcher runs the same kernel with stage 06's direct stores (kTmaStore = false).
//
// Everything else is stage 06's.
//
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

#include "common/config.h"
#include "common/cuda_check.h"
#include "common/device_buffer.h"
#include "common/gemm_api.h"
#include "common/ptx/barrier.cuh"
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

inline constexpr int kCtaGroup = 2;                 // cta_group::2: a CTA pair issues one MMA
inline constexpr int kPairM = 256;                  // rows of C per pair: M of the instruction
inline constexpr int kCtaM = kPairM / kCtaGroup;    // 128 rows per CTA = the 128 TMEM lanes
inline constexpr int kBN = 128;                     // columns per tile: two accumulators fit in TMEM
inline constexpr int kMmaK = 64;                    // values of k per kind::mxf4nvf4 MMA (dense)
inline constexpr int kTileK = 256;                  // values of k per stage: one 128-byte swizzle row
inline constexpr int kStepsPerTile = kTileK / kMmaK;  // 4 MMAs per k-tile
inline constexpr int kPackedRowBytes = kTileK / 2;  // 128: the TMA box's row, one swizzle atom row
inline constexpr int kMmaStepBytes = kMmaK / 2;     // 32: descriptor start advance per MMA inside the atom
inline constexpr int kProducerWarp = 0, kMmaWarp = 1, kFirstEpilogueWarp = 2, kEpilogueWarps = 4;
inline constexpr int kAllocWarp = kFirstEpilogueWarp;  // allocates before the loop, frees after it
inline constexpr int kThreads = 32 * (kFirstEpilogueWarp + kEpilogueWarps);  // 192
inline constexpr int kEpilogueThreads = 32 * kEpilogueWarps;
inline constexpr int kSubTileCols = 32;             // columns per tcgen05.ld and per TMA store box (64 bytes of FP16)
inline constexpr int kSubTiles = 4;                 // 128 columns = 4 sub-tiles
inline constexpr int kStagingBuffers = 2;           // per epilogue warp: one being written, one in flight
inline constexpr int kStagingBytes = 32 * kSubTileCols * 2;  // 32 rows x 64 bytes = 2 KB
inline constexpr uint32_t kEpilogueBarrier = 1;     // named barrier of the epilogue warps (0 is __syncthreads)
inline constexpr int kAccBuffers = 2;               // accumulators in TMEM: one filling, one draining
inline constexpr int kGroupM = 8;                   // tile-rows per rasterisation group
inline constexpr int kMaxSplits = 16;               // K ranges per tile at most
inline constexpr int kMinKTilesPerSplit = 2;        // a K range keeps at least two k-tiles in the pipeline
inline constexpr int kSfLinesPerAtom = gemm::kSfTileBytes / 16;  // 32 lines of 16 bytes (tcgen05.cp rows)
inline constexpr int kSfColumnsPerAtom = 4;         // one atom = 128 rows x 4 columns (row r: column r / 32)
inline constexpr uint32_t kTmemColumns = 512;       // the whole Tensor Memory of the SM: one CTA per SM
inline constexpr uint16_t kPairMask = 0b11;         // commits arrive on both CTAs of the pair (ranks 0, 1)
static_assert(kPackedRowBytes == gemm::kSwizzleRowBytes, "a k-tile row is one 128-byte swizzle row");
static_assert(kStepsPerTile * kMmaStepBytes == kPackedRowBytes, "the MMAs of a k-tile walk one swizzle atom");
static_assert(kEpilogueWarps == 4, "the epilogue warps cover the four 32-lane TMEM quadrants");

struct Config {
  static constexpr int kBRowsPerCta = kBN / kCtaGroup;      // each CTA loads half of B's rows
  static constexpr int kSfbAtoms = kBN / gemm::kSfTileRows;  // scale atoms of B per k-step: 1

  // Shared memory of one stage (per CTA).
  static constexpr int kABytes = kCtaM * kPackedRowBytes;            // 16 KB
  static constexpr int kBBytes = kBRowsPerCta * kPackedRowBytes;     // 8 KB
  // A k-tile's scales of one 128-row block: 4 atoms (one per MMA step), 2 KB, contiguous in memory.
  static constexpr int kSfBlockBytes = kStepsPerTile * gemm::kSfTileBytes;
  static constexpr int kSfaBytes = kSfBlockBytes;               // this CTA's 128 rows of A
  static constexpr int kSfbBytes = kSfbAtoms * kSfBlockBytes;   // all 128 rows of B
  static constexpr int kStageBytes = kABytes + kBBytes + kSfaBytes + kSfbBytes;

  // Tensor Memory columns: the accumulators, then each stage's scale columns.
  static constexpr int kSfaColumnsPerStage = kStepsPerTile * kSfColumnsPerAtom;               // 16
  static constexpr int kSfbColumnsPerStage = kStepsPerTile * kSfbAtoms * kSfColumnsPerAtom;   // 16
  static constexpr int kSfColumnsPerStage = kSfaColumnsPerStage + kSfbColumnsPerStage;
  static constexpr int kAccColumns = kAccBuffers * kBN;                                        // 256

  // The stage count: as many as both memories hold (stage 05's arithmetic, with two accumulators).
  static constexpr int kSmemPerBlock = 232448;
  // Reserve: alignment slack and barriers (2 KB), and the epilogue's staging buffers (4 warps x 2 x 2 KB).
  static constexpr int kSmemReserve = 2048 + kEpilogueWarps * kStagingBuffers * kStagingBytes;
  static constexpr int kStagesBySmem = (kSmemPerBlock - kSmemReserve) / kStageBytes;
  static constexpr int kStagesByTmem = (int(kTmemColumns) - kAccColumns) / kSfColumnsPerStage;
  static constexpr int kStages = kStagesBySmem < kStagesByTmem ? kStagesBySmem : kStagesByTmem;
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
  static_assert(kSubTiles * kSubTileCols == kBN, "the sub-tiles cover the accumulator");

  // Where things are in TMEM (column offsets from the allocation; lane 0).
  static GEMM_HD uint32_t d_column(int buffer) { return uint32_t(buffer * kBN); }
  static GEMM_HD uint32_t sfa_column(int stage, int step) {
    return uint32_t(kAccColumns + stage * kSfColumnsPerStage + step * kSfColumnsPerAtom);
  }
  static GEMM_HD uint32_t sfb_column(int stage, int step) {
    return uint32_t(kAccColumns + stage * kSfColumnsPerStage + kSfaColumnsPerStage +
                    step * kSfbAtoms * kSfColumnsPerAtom);
  }
  static constexpr int kTmemColumnsUsed = kAccColumns + kStages * kSfColumnsPerStage;
  static_assert(kTmemColumnsUsed <= int(kTmemColumns), "accumulators and scale columns exceed Tensor Memory");

  // The instruction descriptor: E2M1 x E2M1, UE4M3 scales, K-major A and B, M = 256, N = 128.
  static GEMM_HD uint32_t instr_descriptor() { return gemm::tcgen05::nvfp4_instr_descriptor(kPairM, kBN); }
};

// One stage of the ring, per CTA. Every size is a multiple of 1024, so each stage's tiles keep the
// 1024-byte alignment the 128-byte swizzle pattern is defined on.
struct StageBuffers {
  alignas(1024) unsigned char a[Config::kABytes];   // this CTA's 128 rows of A, TMA, 128-byte swizzle
  alignas(1024) unsigned char b[Config::kBBytes];   // this CTA's 64 rows of B, the same
  alignas(128) uint8_t sfa[Config::kSfaBytes];      // 4 atoms: this CTA's rows, k-steps 0..3
  alignas(128) uint8_t sfb[Config::kSfbBytes];      // 4 atoms: all 128 rows of B
};

struct SharedStorage {
  StageBuffers stage[Config::kStages];
  // The epilogue's staging: [warp][buffer] 32 rows x 64 bytes, 64-byte swizzle (512-byte aligned).
  alignas(1024) unsigned char staging[kEpilogueWarps][kStagingBuffers][kStagingBytes];
  uint64_t full[Config::kStages];      // even CTA: both CTAs' bytes have landed (1 arrival + tx)
  uint64_t empty[Config::kStages];     // each CTA: the MMAs reading the stage are done (1 commit)
  uint64_t acc_full[kAccBuffers];      // each CTA: the unit's accumulator is complete (1 commit)
  uint64_t acc_empty[kAccBuffers];     // even CTA: the epilogue warps of both CTAs have read it (8 arrivals)
  uint32_t tmem_base;                  // written by tcgen05.alloc
  int split_last;                      // epilogue: this CTA's half of the tile is the last split to arrive
};
inline constexpr int kSmemBytes = int(sizeof(SharedStorage)) + 1024;  // + slack to align to 1024
static_assert(kSmemBytes <= Config::kSmemPerBlock - 1024, "the pipeline does not fit in shared memory");

// Where a role is in a ring of `Stages` buffers, and the parity its next wait needs. A role that
// waits for a buffer to be free starts on phase 1 (a fresh barrier's "preceding phase" counts as
// complete, so the first round passes); a role that waits for a buffer to be filled starts on 0.
template <int Stages>
struct PipelineState {
  int index = 0;
  uint32_t phase;
  __device__ explicit PipelineState(uint32_t start_phase) : phase(start_phase) {}
  __device__ void advance() {
    if (++index == Stages) {
      index = 0;
      phase ^= 1u;
    }
  }
};

// ---- The schedule ----------------------------------------------------------------------------------

// What the host decides once per launch and every role of every CTA reads the same way.
struct Schedule {
  int M, N, K, L;
  int tiles_m, tiles_n;   // 256 x 128 output tiles per batch
  int k_tiles;            // 256-value k-tiles of K
  int splits;             // K ranges per tile (1: no split)
  int units;              // tiles x L x splits
  int pairs;              // persistent CTA pairs
};

// How many K ranges to split each tile into, when there are fewer tiles than pairs. More splits put
// more pairs to work (less tensor time per unit), but every split but one writes an FP32 partial of
// its rows that the last one reads back: bytes the GEMM would not otherwise move. The choice takes
// the s (1..16, every K range at least two k-tiles long) whose lower bound on a B200 is smallest,
// by the model of docs/b200_model.py with the B200's published rates, whatever GPU this runs on (the
// pair count is this GPU's own):
//   tensor time  = waves x (2 x 256 x 128 x 256 x k-tiles of the longest range) / (2 SMs x 9e15/148)
//   DRAM time    = (min_bytes + (s - 1) x 2 x 4 x rows x columns per tile x tiles) / 8e12 B/s
//   bound        = max(tensor time, DRAM time); ties (within 1%) go to the smaller s.
inline constexpr double kModelSmFlops = 9e15 / 148;   // B200 dense NVFP4, per SM (published: 9 PFLOP/s)
inline constexpr double kModelDramBytesPerSecond = 8e12;  // B200 HBM3e (published: 8 TB/s)

inline double split_bound_seconds(int s, int tiles, int k_tiles, int pairs, double min_bytes, double tile_rows,
                                  double tile_cols) {
  const int units = tiles * s, waves = (units + pairs - 1) / pairs;
  const int longest = (k_tiles + s - 1) / s;
  const double tensor = waves * (2.0 * kPairM * kBN * kTileK * longest) / (kCtaGroup * kModelSmFlops);
  const double partial_bytes = double(s - 1) * 2.0 * 4.0 * tile_rows * tile_cols * tiles;
  const double dram = (min_bytes + partial_bytes) / kModelDramBytesPerSecond;
  return tensor > dram ? tensor : dram;
}

inline int choose_splits(int tiles, int k_tiles, int pairs, double min_bytes, double tile_rows, double tile_cols) {
  if (tiles >= pairs) return 1;
  const int limit = std::min(kMaxSplits, std::max(1, k_tiles / kMinKTilesPerSplit));
  int best = 1;
  double best_t = split_bound_seconds(1, tiles, k_tiles, pairs, min_bytes, tile_rows, tile_cols);
  for (int s = 2; s <= limit; ++s) {
    const double t = split_bound_seconds(s, tiles, k_tiles, pairs, min_bytes, tile_rows, tile_cols);
    if (t < 0.99 * best_t) best = s, best_t = t;
  }
  return best;
}

struct Unit {
  int m0, n0, batch;  // the tile's first row (of the pair's 256) and column, and its batch
  int tile;           // index of the tile among all tiles of all batches
  int split;          // which K range
  int kt_begin, kt_end;
};

// Unit u: tile u / splits, K range u % splits (the splits of a tile are consecutive units, so they
// run at the same time on neighbouring pairs). Tiles: per batch, groups of kGroupM tile-rows,
// walked column by column inside a group.
GEMM_HD Unit unit_at(const Schedule& s, int u) {
  Unit w;
  w.tile = u / s.splits;
  w.split = u % s.splits;
  const int per_batch = s.tiles_m * s.tiles_n;
  w.batch = w.tile / per_batch;
  const int t = w.tile % per_batch;
  const int group = t / (kGroupM * s.tiles_n);
  const int first_m = group * kGroupM;
  const int rows_in_group = (s.tiles_m - first_m) < kGroupM ? (s.tiles_m - first_m) : kGroupM;
  const int in_group = t % (kGroupM * s.tiles_n);
  w.m0 = (first_m + in_group % rows_in_group) * kPairM;
  w.n0 = (in_group / rows_in_group) * kBN;
  w.kt_begin = int(int64_t(w.split) * s.k_tiles / s.splits);  // uneven parts differ by at most one k-tile
  w.kt_end = int(int64_t(w.split + 1) * s.k_tiles / s.splits);
  return w;
}

// Split-K workspace: FP32 partials [tile][split][256 rows][128 columns], and per tile and CTA half
// two counters: splits that have arrived, splits whose partial is written. The last split to arrive
// resets both to 0 for the next launch.
struct Workspace {
  float* partials = nullptr;
  int* counters = nullptr;  // [tile][CTA half][arrived, written]
};

// K-major SW128 descriptor of a stage's tile, started `step` MMAs into the 128-byte swizzle atom.
__device__ __forceinline__ uint64_t operand_descriptor(const void* tile, int step) {
  return gemm::tcgen05::advance_start(gemm::tcgen05::kmajor_sw128_descriptor(gemm::ptx::smem_addr(tile)),
                                      uint32_t(step * kMmaStepBytes));
}

// Stores 32 consecutive outputs of one row (alpha applied, FP16), bounds-checked.
__device__ __forceinline__ void store_row_chunk(__half* c_row, int n, int N, float alpha, const float* v) {
  // Whole chunk inside and 16-byte aligned (C need only be 2-byte aligned): 4 x 16-byte stores.
  if (n + 32 <= N && reinterpret_cast<uintptr_t>(c_row + n) % 16 == 0) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      __align__(16) __half2 h[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) h[i] = __floats2half2_rn(alpha * v[8 * q + 2 * i], alpha * v[8 * q + 2 * i + 1]);
      *reinterpret_cast<uint4*>(c_row + n + 8 * q) = *reinterpret_cast<const uint4*>(h);
    }
  } else {
#pragma unroll  // constant indices keep v[] in registers (a runtime bound would put it in local memory)
    for (int i = 0; i < 32; ++i)
      if (n + i < N) c_row[n + i] = __float2half_rn(alpha * v[i]);
  }
}

// One epilogue warp's TMA store of a 32-row x 32-column sub-tile: lane r converts its 32 values
// (alpha, FP16) into row r of a staging buffer in the layout of C's tensor map (64-byte rows, 64-byte
// swizzle), then lane 0 stores the box. `issued` counts the warp's stores so far: the staging buffer
// alternates, and before one is overwritten the store that read it last must be done reading.
__device__ __forceinline__ void tma_store_sub_tile(unsigned char (&staging)[kStagingBuffers][kStagingBytes],
                                                   int& issued, const CUtensorMap* map_c, int x, int y, int z,
                                                   float alpha, const float* v) {
  namespace ptx = gemm::ptx;
  const int lane = int(threadIdx.x % 32);
  unsigned char* buf = staging[issued % kStagingBuffers];
  if (lane == 0) ptx::bulk_wait_group_read<kStagingBuffers - 1>();  // this buffer's previous store has read it
  __syncwarp();
#pragma unroll
  for (int q = 0; q < 4; ++q) {  // 4 chunks of 16 bytes = 8 halves each
    __align__(16) __half2 h[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) h[i] = __floats2half2_rn(alpha * v[8 * q + 2 * i], alpha * v[8 * q + 2 * i + 1]);
    *reinterpret_cast<uint4*>(buf + gemm::swizzle_64b(uint32_t(lane), uint32_t(16 * q))) = *reinterpret_cast<const uint4*>(h);
  }
  ptx::protocol_generic_write(buf, kStagingBytes);  // the checker's view of the stores above
  ptx::fence_proxy_async_shared();  // the threads' writes, before the async proxy (TMA) reads them
  __syncwarp();
  if (lane == 0) {
    ptx::tma_store_3d(map_c, x, y, z, buf, kStagingBytes);
    ptx::bulk_commit_group();
  }
  ++issued;
}

template <bool kTmaStore>
__global__ void __cluster_dims__(kCtaGroup, 1, 1) __launch_bounds__(kThreads, 1)
nvfp4_persistent_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                      const __grid_constant__ CUtensorMap map_sfa, const __grid_constant__ CUtensorMap map_sfb,
                      const __grid_constant__ CUtensorMap map_c, const Schedule sched, float alpha,
                      __half* __restrict__ C, Workspace ws, gemm::timeline::Buffer trace) {
  gemm::ptx::ProtocolScope protocol_scope;  // the protocol checker sees each thread enter and leave (no code in release)
  using Cfg = Config;
  namespace ptx = gemm::ptx;
  namespace tc = gemm::tcgen05;
  namespace tl = gemm::timeline;
  constexpr int S = Cfg::kStages;
  extern __shared__ unsigned char smem_raw[];
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(gemm::align_to_swizzle_atom(smem_raw));

  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  const uint32_t rank = ptx::cluster_ctarank();  // 0: even (leader), 1: odd
  const bool leader = rank == 0;
  const int pair = int(blockIdx.x) / kCtaGroup;
  const int M = sched.M, N = sched.N, K = sched.K;
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
    for (int b = 0; b < kAccBuffers; ++b) {
      ptx::mbarrier_init(&s.acc_full[b], 1);                            // one multicast commit
      ptx::mbarrier_init(&s.acc_empty[b], kCtaGroup * kEpilogueWarps);  // every epilogue warp of the pair
    }
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
    PipelineState<S> stage(1);  // waits for free stages: starts on phase 1
    for (int u = pair; u < sched.units; u += sched.pairs) {
      const Unit w = unit_at(sched, u);
      const unsigned long long t0 = tl::now_ns();
      for (int kt = w.kt_begin; kt < w.kt_end; ++kt, stage.advance()) {
        const int st = stage.index;
        ptx::wait_commit(&s.empty[st], stage.phase, "empty", st);
        // The even CTA's full barrier counts the bytes of both CTAs' copies. TMA always delivers
        // whole boxes (zeros outside the tensors), so the count is the same for every k-tile.
        if (leader) ptx::mbarrier_arrive_expect_tx(&s.full[st], kCtaGroup * Cfg::kStageBytes);
        StageBuffers& buf = s.stage[st];
        const int my_m = w.m0 + kCtaM * int(rank);
        ptx::tma_load_3d_cta_group2(buf.a, &map_a, kt * kPackedRowBytes, my_m, w.batch, &s.full[st], Cfg::kABytes);
        ptx::tma_load_3d_cta_group2(buf.b, &map_b, kt * kPackedRowBytes, w.n0 + Cfg::kBRowsPerCta * int(rank), w.batch,
                                    &s.full[st], Cfg::kBBytes);
        const int sfa_line = ((my_m / gemm::kSfTileRows) * sf_tiles_per_row_block + kt * kStepsPerTile) * kSfLinesPerAtom;
        ptx::tma_load_3d_cta_group2(buf.sfa, &map_sfa, 0, sfa_line, w.batch, &s.full[st], Cfg::kSfaBytes);
        const int sfb_line = ((w.n0 / gemm::kSfTileRows) * sf_tiles_per_row_block + kt * kStepsPerTile) * kSfLinesPerAtom;
        ptx::tma_load_3d_cta_group2(buf.sfb, &map_sfb, 0, sfb_line, w.batch, &s.full[st], Cfg::kSfbBytes);
      }
      tl::record(trace, tl::kProducer, tl::kLoadUnit, uint32_t(u), t0, tl::now_ns());
    }
  }

  if (warp == kMmaWarp && leader) {  // the whole warp calls the _warp forms; one elected lane issues
    const uint32_t idesc = Cfg::instr_descriptor();
    PipelineState<S> stage(0);          // waits for full stages: starts on phase 0
    PipelineState<kAccBuffers> acc(1);  // waits for free accumulators: starts on phase 1
    for (int u = pair; u < sched.units; u += sched.pairs) {
      const Unit w = unit_at(sched, u);
      const int b = acc.index;
      const unsigned long long t0 = tl::now_ns();
      // The epilogue warps of both CTAs have read this buffer's previous tile (plain arrivals).
      ptx::mbarrier_wait(&s.acc_empty[b], acc.phase, "acc_empty", b);
      ptx::tcgen05_fence_after_thread_sync();
      const unsigned long long t1 = tl::now_ns();
      for (int kt = w.kt_begin; kt < w.kt_end; ++kt, stage.advance()) {
        const int st = stage.index;
        ptx::mbarrier_wait(&s.full[st], stage.phase, "full", st);
        ptx::tcgen05_fence_after_thread_sync();
        const StageBuffers& buf = s.stage[st];
        // The last k-tile may hold fewer than 4 MMA steps (K is a multiple of 32: a half step is
        // zero-filled by TMA and its scales multiply zeros).
        const int steps = min(kStepsPerTile, (K - kt * kTileK + kMmaK - 1) / kMmaK);
#pragma unroll  // a full k-tile is straight-line code: 4 x (cp SFA, cp SFB, mma) in the SASS
        for (int j = 0; j < kStepsPerTile; ++j) {
          if (j >= steps) break;
          ptx::tcgen05_cp_32x128b_warpx4_warp<kCtaGroup>(
              tmem + Cfg::sfa_column(st, j), tc::sf_atom_descriptor(ptx::smem_addr(buf.sfa + j * gemm::kSfTileBytes)));
          ptx::tcgen05_cp_32x128b_warpx4_warp<kCtaGroup>(
              tmem + Cfg::sfb_column(st, j), tc::sf_atom_descriptor(ptx::smem_addr(buf.sfb + j * gemm::kSfTileBytes)));
          ptx::tcgen05_mma_nvfp4_warp<kCtaGroup>(tmem + Cfg::d_column(b), operand_descriptor(buf.a, j),
                                                 operand_descriptor(buf.b, j), idesc, tmem + Cfg::sfa_column(st, j),
                                                 tmem + Cfg::sfb_column(st, j), kt > w.kt_begin || j > 0);
        }
        // Stage st may be refilled once these MMAs are done: both CTAs' producers wait for this.
        ptx::tcgen05_commit_multicast_warp<kCtaGroup>(&s.empty[st], kPairMask);
      }
      ptx::tcgen05_commit_multicast_warp<kCtaGroup>(&s.acc_full[b], kPairMask);  // the unit's MMAs are done
      if (lane == 0) {
        tl::record(trace, tl::kMma, tl::kWaitAccEmpty, uint32_t(u), t0, t1);
        tl::record(trace, tl::kMma, tl::kIssueUnit, uint32_t(u), t1, tl::now_ns());
      }
      acc.advance();
    }
  }

  if (warp >= kFirstEpilogueWarp) {
    // Warp w reads TMEM lanes 32 (w % 4) .. + 31: rows of its quadrant, all 128 columns.
    const int quadrant = warp % 4;
    const bool recorder = lane == 0 && warp == kFirstEpilogueWarp;
    PipelineState<kAccBuffers> acc(0);  // waits for full accumulators: starts on phase 0
    int stores_issued = 0;              // this warp's TMA stores: which staging buffer is next
    for (int u = pair; u < sched.units; u += sched.pairs, acc.advance()) {
      const Unit w = unit_at(sched, u);
      const int b = acc.index;
      const unsigned long long t0 = tl::now_ns();
      ptx::wait_commit(&s.acc_full[b], acc.phase, "acc_full", b);
      ptx::tcgen05_fence_after_thread_sync();
      const unsigned long long t1 = tl::now_ns();
      // The whole row of this thread into registers, then release the buffer: the MMA warp may
      // start the next unit in it while this one is stored.
      // Four loads of 32 columns in flight together, one wait.
      uint32_t r[kSubTiles][kSubTileCols];
#pragma unroll
      for (int t = 0; t < kSubTiles; ++t)
        ptx::tcgen05_ld_32x32b<kSubTileCols>(
            tmem + tc::tmem_address(uint32_t(32 * quadrant), Cfg::d_column(b) + uint32_t(t * kSubTileCols)), r[t]);
      ptx::tcgen05_wait_ld();
      float v[kBN];
#pragma unroll
      for (int t = 0; t < kSubTiles; ++t)
#pragma unroll
        for (int i = 0; i < kSubTileCols; ++i) v[t * kSubTileCols + i] = __uint_as_float(r[t][i]);
      ptx::tcgen05_fence_before_thread_sync();  // the reads are ordered before the release
      __syncwarp();
      if (lane == 0) ptx::mbarrier_arrive_cluster(&s.acc_empty[b], 0);  // at the even CTA
      const unsigned long long t2 = tl::now_ns();

      const int row_in_tile = kCtaM * int(rank) + 32 * quadrant + lane;
      const int row = w.m0 + row_in_tile;
      __half* c_row = C + (int64_t(w.batch) * M + row) * int64_t(N);
      const int warp_row = w.m0 + kCtaM * int(rank) + 32 * quadrant;  // first row of this warp's 32
      if (sched.splits == 1) {
        if constexpr (kTmaStore) {
          if (warp_row < M)  // (TMA would clip a box of rows past M entirely; skip it)
#pragma unroll
            for (int t = 0; t < kSubTiles; ++t)
              if (w.n0 + t * kSubTileCols < N)
                tma_store_sub_tile(s.staging[warp - kFirstEpilogueWarp], stores_issued, &map_c,
                                   w.n0 + t * kSubTileCols, warp_row, w.batch, alpha, v + t * kSubTileCols);
        } else if (row < M) {
#pragma unroll
          for (int c = 0; c < kBN; c += 32)
            if (w.n0 + c < N) store_row_chunk(c_row, w.n0 + c, N, alpha, v + c);
        }
      } else {
        // Split-K. The last split of the tile to arrive (for this CTA's 128 rows) keeps its partial
        // in registers, waits until the others have written theirs, and adds all of them in split
        // order (the same bits whichever split arrives last); the others write their partial.
        const int64_t tile_base = int64_t(w.tile) * sched.splits * kPairM * kBN;
        int* counters = ws.counters + (int64_t(w.tile) * kCtaGroup + rank) * 2;  // arrived, written
        const bool counting_thread = warp == kFirstEpilogueWarp && lane == 0;
        if (counting_thread) {
          const bool last = atomicAdd(&counters[0], 1) == sched.splits - 1;
          if (last) counters[0] = 0;  // every split of this launch has arrived: ready for the next launch
          s.split_last = last;
        }
        ptx::named_barrier_sync(kEpilogueBarrier, kEpilogueThreads);
        const bool last = s.split_last;
        if (!last) {
          if (row < M) {
            float* mine = ws.partials + tile_base + (int64_t(w.split) * kPairM + row_in_tile) * kBN;
#pragma unroll
            for (int c = 0; c < kBN; c += 4)
              __stcg(reinterpret_cast<float4*>(mine + c), make_float4(v[c], v[c + 1], v[c + 2], v[c + 3]));
          }
          __threadfence();  // each writer's partial is visible device-wide before the count below
          ptx::named_barrier_sync(kEpilogueBarrier, kEpilogueThreads);
          if (counting_thread) atomicAdd(&counters[1], 1);
        } else {
          if (counting_thread) {
            // The other splits have all arrived, so they are writing now and need nothing from us.
            while (atomicAdd(&counters[1], 0) != sched.splits - 1) {
            }
            counters[1] = 0;
            __threadfence();
          }
          ptx::named_barrier_sync(kEpilogueBarrier, kEpilogueThreads);
          if (kTmaStore ? warp_row < M : row < M) {
#pragma unroll
            for (int c = 0; c < kBN; c += 32) {
              if (w.n0 + c >= N) break;
              float sum[32];
#pragma unroll
              for (int i = 0; i < 32; ++i) sum[i] = 0.0f;
              for (int j = 0; j < sched.splits; ++j) {  // always in split order: the same bits every run
                if (j == w.split) {
#pragma unroll
                  for (int i = 0; i < 32; ++i) sum[i] += v[c + i];
                  continue;
                }
                const float* p = ws.partials + tile_base + (int64_t(j) * kPairM + row_in_tile) * kBN + c;
#pragma unroll
                for (int i = 0; i < 32; i += 4) {
                  const float4 q = __ldcg(reinterpret_cast<const float4*>(p + i));
                  sum[i] += q.x, sum[i + 1] += q.y, sum[i + 2] += q.z, sum[i + 3] += q.w;
                }
              }
              if constexpr (kTmaStore)
                tma_store_sub_tile(s.staging[warp - kFirstEpilogueWarp], stores_issued, &map_c, w.n0 + c, warp_row,
                                   w.batch, alpha, sum);
              else
                store_row_chunk(c_row, w.n0 + c, N, alpha, sum);
            }
          }
        }
        ptx::named_barrier_sync(kEpilogueBarrier, kEpilogueThreads);  // split_last is reused next unit
      }
      if (recorder) {
        tl::record(trace, tl::kEpilogue, tl::kWaitAccFull, uint32_t(u), t0, t1);
        tl::record(trace, tl::kEpilogue, tl::kDrainTmem, uint32_t(u), t1, t2);
        tl::record(trace, tl::kEpilogue, tl::kStoreC, uint32_t(u), t2, tl::now_ns());
      }
    }
  }

  // The warp's last TMA stores must have finished (their staging must stay valid until read, and C
  // must be written when the kernel ends).
  if (kTmaStore && warp >= kFirstEpilogueWarp && lane == 0) ptx::bulk_wait_group<0>();

  // Teardown: no CTA of the pair may free its TMEM (or exit) while the other could still touch it:
  // the MMAs wrote both CTAs' TMEM from the even CTA, and both CTAs' loads and releases complete on
  // the even CTA's barriers. Every thread orders its TMEM reads before the cluster barrier, then
  // both dealloc.
  __syncwarp();
  ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  ptx::cluster_sync();
  if (warp == kAllocWarp) ptx::tcgen05_dealloc<kCtaGroup>(tmem, kTmemColumns);
}

// The tensor maps: A and B in boxes of (128 rows, 64 rows) x 128 bytes with the 128-byte swizzle;
// the scales as 16-byte lines in boxes of 4 atoms (one 128-row block, one k-tile).
inline gemm::TensorMapPlan plan_a(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_packed_operand(a.A, a.M, a.K, a.L, kCtaM, kPackedRowBytes);
}
inline gemm::TensorMapPlan plan_b(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_packed_operand(a.B, a.N, a.K, a.L, Config::kBRowsPerCta, kPackedRowBytes);
}
inline gemm::TensorMapPlan plan_sfa(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_sf_lines(a.SFA, a.M, a.K, a.L, kStepsPerTile * kSfLinesPerAtom);
}
inline gemm::TensorMapPlan plan_sfb(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_sf_lines(a.SFB, a.N, a.K, a.L, kStepsPerTile * kSfLinesPerAtom);
}

// How many CTA pairs can be resident at once: asked of the occupancy API (one pair per two SMs on a
// B200: 74 of 148), never a hard-coded SM count.
inline int resident_pairs() {
  static int pairs = [] {
    // Both epilogue paths use the same resources; the TMA one stands for both.
    CUDA_CHECK(cudaFuncSetAttribute(nvfp4_persistent_gemm<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(kCtaGroup);
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = size_t(kSmemBytes);
    int clusters = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, nvfp4_persistent_gemm<true>, &cfg));
    if (clusters < 1) throw std::runtime_error("stage07: not even one CTA pair of this kernel fits on this GPU");
    return clusters;
  }();
  return pairs;
}

// What a caller may force (tests): fewer pairs than fit, a given number of K splits, a timeline.
struct LaunchOptions {
  int max_pairs = 0;               // 0: as many as are resident
  int splits = 0;                  // 0: choose_splits()
  gemm::timeline::Buffer trace{};  // events of one run, or none
};

inline Schedule make_schedule(const gemm::Nvfp4GemmArgs& a, int pairs_available, const LaunchOptions& o) {
  Schedule s{};
  s.M = a.M, s.N = a.N, s.K = a.K, s.L = a.L;
  s.tiles_m = (a.M + kPairM - 1) / kPairM;
  s.tiles_n = (a.N + kBN - 1) / kBN;
  s.k_tiles = (a.K + kTileK - 1) / kTileK;
  const int64_t tiles = int64_t(s.tiles_m) * s.tiles_n * a.L;
  if (tiles * kMaxSplits > INT_MAX)
    throw std::invalid_argument("stage07: M*N*L needs " + std::to_string(tiles) + " tiles, more than the scheduler counts");
  const int pairs = o.max_pairs > 0 ? std::min(o.max_pairs, pairs_available) : pairs_available;
  const double rows = std::min(a.M, kPairM), cols = std::min(a.N, kBN);  // valid outputs of a (full) tile
  s.splits = o.splits > 0 ? std::min(o.splits, s.k_tiles)
                          : choose_splits(int(tiles), s.k_tiles, pairs, gemm::min_bytes(a), rows, cols);
  s.units = int(tiles) * s.splits;
  s.pairs = std::min(pairs, s.units);
  return s;
}

// The split-K workspace, grown on demand and kept for the process (so that a launch after the first
// of its size neither allocates nor synchronises: benchmarks capture launches in CUDA graphs). The
// counters start at zero and every reduction leaves them at zero.
inline Workspace workspace_for(const Schedule& s) {
  static std::mutex lock;
  static gemm::DeviceBuffer<float> partials;
  static gemm::DeviceBuffer<int> counters;
  std::lock_guard<std::mutex> guard(lock);
  if (s.splits == 1) return {};
  const size_t tiles = size_t(s.units / s.splits);
  const size_t floats = tiles * size_t(s.splits) * kPairM * kBN;
  if (partials.size() < floats) partials = gemm::DeviceBuffer<float>(floats);
  if (counters.size() < tiles * kCtaGroup * 2) {
    counters = gemm::DeviceBuffer<int>(tiles * kCtaGroup * 2);
    counters.fill_bytes(0);
  }
  return {partials.get(), counters.get()};
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
  const gemm::TensorMapPlan pa = plan_a(args), pb = plan_b(args), psa = plan_sfa(args), psb = plan_sfb(args);
  const CUtensorMap map_a = gemm::encode_tensor_map(pa), map_b = gemm::encode_tensor_map(pb);
  const CUtensorMap map_sfa = gemm::encode_tensor_map(psa), map_sfb = gemm::encode_tensor_map(psb);
  const bool tma_store = uses_tma_store(args);
  CUtensorMap map_c{};  // unused by the direct-store kernel
  if (tma_store) map_c = gemm::encode_tensor_map(plan_c(args));
  gemm::tcgen05::prepare_launch();
  const Schedule sched = make_schedule(args, resident_pairs(), o);
  const Workspace ws = workspace_for(sched);
  const auto kernel = tma_store ? nvfp4_persistent_gemm<true> : nvfp4_persistent_gemm<false>;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  kernel<<<dim3(unsigned(kCtaGroup * sched.pairs)), kThreads, kSmemBytes, stream>>>(
      map_a, map_b, map_sfa, map_sfb, map_c, sched, args.alpha, args.C, ws, o.trace);
  CUDA_CHECK_LAUNCH();
}

inline void launch(const gemm::Nvfp4GemmArgs& args, cudaStream_t stream) { launch_with(args, stream, {}); }

inline constexpr gemm::Stage kStage{"07_epilogue_tma", "NVFP4: TMEM -> registers -> swizzled SMEM -> TMA store epilogue",
                                    gemm::Precision::kNvfp4, nullptr, &launch, /*uses_tcgen05=*/true};

}  // namespace stage07
