// Stage 04: TMA loads into a ring of mbarrier-guarded slots.        README.md explains each change.
// Changes from 03_nvfp4_quant/kernel.cuh:
//   1. TMA copies the packed tiles (a tensor map each, the 128-byte swizzle done by the copy) and
//      the scale blocks (bulk copies): the threads' load code and its 36 registers are gone.
//   2. A ring of kSlots slots, each with a "full" and an "empty" mbarrier: the copy of k-tile
//      kt + kSlots - 1 is in flight while k-tile kt is computed.
//   3. Thread 0 is also the producer; kSlots follows from half an SM's shared memory, because two
//      blocks fit on an SM once the registers are free (kBlocksPerSm).
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/config.h"
#include "common/formats.h"
#include "common/gemm_api.h"
#include "common/launch.cuh"
#include "common/nvfp4_device.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/tma.cuh"
#include "common/registry.h"
#include "common/sf_layout.h"
#include "common/swizzle.h"
#include "common/tensor_map.h"

namespace stage04 {

namespace ptx = gemm::ptx;

inline constexpr int kBM = 128;           // rows of C per block
inline constexpr int kBN = 128;           // columns of C per block
inline constexpr int kTileK = 256;        // values of k per packed tile: one 128-byte swizzle row
inline constexpr int kSliceK = 32;        // values of k per decoded FP32 slice (stage 02's BK)
inline constexpr int kTM = 8;             // rows of C per thread
inline constexpr int kTN = 8;             // columns of C per thread
inline constexpr int kThreadsM = kBM / kTM;  // 16
inline constexpr int kThreadsN = kBN / kTN;  // 16
inline constexpr int kThreads = kThreadsM * kThreadsN;  // 256
inline constexpr int kWarps = kThreads / 32;            // consumer warps: each arrives once on "empty"
inline constexpr int kPackedRowBytes = kTileK / 2;                       // 128: the TMA box's row
inline constexpr int kPackedTileBytes = kBM * kPackedRowBytes;           // 16 KB per operand
inline constexpr int kSfBlockBytes = kBM * (kTileK / gemm::kSfVector);    // 2 KB: 4 atoms of 512 B
inline constexpr int kSlices = kTileK / kSliceK;                         // 8
inline constexpr int kSliceChunks = kSliceK / 4;                         // 8 float4 per decoded row
inline constexpr int kDecodedTileBytes = kBM * kSliceK * 4;              // 16 KB per operand
static_assert(kPackedRowBytes == gemm::kSwizzleRowBytes, "a packed tile row is one 128-byte swizzle row (TMA box)");
static_assert(kSliceK * 4 == gemm::kSwizzleRowBytes, "a decoded FP32 slice row is one 128-byte swizzle row");
static_assert(kBM == kBN && kThreads == 2 * kBM, "decode: thread t handles half a slice row of A and of B");

// One slot of the ring: everything one k-tile needs. 36 KB, a multiple of 1024, so every slot's
// tiles stay 1024-byte aligned.
struct Slot {
  alignas(1024) unsigned char a[kPackedTileBytes];  // written by TMA, 128-byte swizzle
  alignas(1024) unsigned char b[kPackedTileBytes];
  alignas(16) uint8_t sfa[kSfBlockBytes];                   // 4 blocked-layout atoms, bulk copy
  alignas(16) uint8_t sfb[kSfBlockBytes];
};
static_assert(sizeof(Slot) % 1024 == 0, "slots must keep the 1024-byte alignment of their tiles");

// The slot count, from the budget. Without the register prefetch of stage 03 a thread needs 128
// registers instead of 231, so two blocks fit on an SM, and two blocks hide what one cannot: while
// one waits at a barrier or its producer thread issues copies, the other computes. Measured on an
// H200, two blocks of 2 slots beat one block of 5 slots by 7%. So the budget is half an SM's
// shared memory (228 KB on sm_90 and sm_100, less 1 KB the system reserves per block), less the
// buffers that exist once (decoded slices, barriers, table) and the slack for aligning the dynamic
// buffer to 1024 bytes.
inline constexpr int kBlocksPerSm = 2;
inline constexpr int kSmemPerSm = 233472;
inline constexpr int kSmemBudget = kSmemPerSm / kBlocksPerSm - 1024;  // 115712 bytes per block
inline constexpr int kFixedBytes = 2 * kDecodedTileBytes + 1024 /* barriers, table */ + 1024 /* alignment */;
inline constexpr int kSlots = (kSmemBudget - kFixedBytes) / int(sizeof(Slot));  // 2
static_assert(kSlots >= 2, "a pipeline needs at least two slots");

struct SharedStorage {
  Slot ring[kSlots];
  alignas(1024) unsigned char a_dec[kDecodedTileBytes];  // swizzled FP32 slice, stage 02's layout
  alignas(1024) unsigned char b_dec[kDecodedTileBytes];
  uint64_t full[kSlots];    // completes when a slot's bytes have all landed (1 arrival + tx bytes)
  uint64_t empty[kSlots];   // completes when every consumer warp is done with a slot (kWarps arrivals)
  __half e2m1_table[16];     // Hopper's E2M1 decode table
};
inline constexpr int kSmemBytes = int(sizeof(SharedStorage)) + 1024;
static_assert(kSmemBytes <= kSmemBudget, "the pipeline does not fit in shared memory");

// Byte offset of 16-byte chunk `chunk` of row `row` in any of the swizzled tiles.
GEMM_HD uint32_t smem_offset(int row, int chunk) {
  return gemm::swizzle_128b(uint32_t(row), uint32_t(chunk * gemm::kSwizzleChunkBytes));
}

// 16 packed E2M1 values (8 bytes) times their block scale -> 16 FP32 values, stored as 4
// swizzled float4 chunks of a decoded slice row.
__device__ __forceinline__ void decode_16(uint2 packed, float scale, const __half* table, unsigned char* dec_row_base,
                                          int row, int first_chunk) {
  const uint32_t words[2] = {packed.x, packed.y};
#pragma unroll
  for (int q = 0; q < 4; ++q) {  // 4 values = 2 bytes per float4
    const uint32_t w = words[q / 2] >> (16 * (q % 2));
    const float2 lo = __half22float2(gemm::e2m1x2_to_half2(uint8_t(w), table));
    const float2 hi = __half22float2(gemm::e2m1x2_to_half2(uint8_t(w >> 8), table));
    *reinterpret_cast<float4*>(dec_row_base + smem_offset(row, first_chunk + q)) =
        make_float4(lo.x * scale, lo.y * scale, hi.x * scale, hi.y * scale);
  }
}

__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
nvfp4_tma_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int M, int N,
               int K, int blocks_n, const uint8_t* __restrict__ SFA, const uint8_t* __restrict__ SFB, float alpha,
               __half* __restrict__ C) {
  gemm::ptx::ProtocolScope protocol_scope;  // the protocol checker sees each thread enter and leave (no code in release)
  // The swizzle is defined on absolute shared-memory addresses: align the tiles to 1024 bytes.
  extern __shared__ unsigned char smem_raw[];
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(gemm::align_to_swizzle_atom(smem_raw));

  const int tx = threadIdx.x % kThreadsN, ty = threadIdx.x / kThreadsN;
  const int m0 = (blockIdx.x / blocks_n) * kBM, n0 = (blockIdx.x % blocks_n) * kBN;
  const int batch = blockIdx.y;
  SFA += int64_t(batch) * gemm::sf_batch_bytes(M, K);
  SFB += int64_t(batch) * gemm::sf_batch_bytes(N, K);
  C += int64_t(batch) * M * int64_t(N);
  const bool producer = threadIdx.x == 0;

  if (producer) {
    ptx::prefetch_tensormap(&map_a);
    ptx::prefetch_tensormap(&map_b);
    for (int i = 0; i < kSlots; ++i) {
      ptx::mbarrier_init(&s.full[i], 1, "full", i);        // the producer's arrive.expect_tx
      ptx::mbarrier_init(&s.empty[i], kWarps, "empty", i);  // one arrival per consumer warp
    }
    ptx::fence_mbarrier_init();
  }
  gemm::init_e2m1_half_table(s.e2m1_table);
  __syncthreads();

  // The blocked scale layout keeps a 128-row block's atoms for consecutive k in consecutive 512-byte
  // tiles: the atoms for k-tile kt are tiles kt*4 .. kt*4+3 of row block m0/128, 2 KB in one piece
  // (fewer at the end of K, where the padded layout has fewer atoms).
  const int sf_tiles_per_row_block = int(gemm::sf_padded_cols(K) / gemm::kSfTileCols);
  const int k_tiles = (K + kTileK - 1) / kTileK;

  // Producer: wait until slot kt % kSlots is empty, arm it, start its copies.
  auto produce = [&](int kt) {
    const int slot = kt % kSlots;
    const uint32_t empty_parity = ((kt / kSlots) & 1) ^ 1;  // the first round passes at once
    ptx::mbarrier_wait(&s.empty[slot], empty_parity, "empty", slot);
    const int atoms = min(gemm::kSfTileCols, sf_tiles_per_row_block - kt * gemm::kSfTileCols);
    const uint32_t sf_bytes = uint32_t(atoms * gemm::kSfTileBytes);
    // TMA always delivers the whole box (zeros outside the tensor), so the tile bytes are constant.
    ptx::mbarrier_arrive_expect_tx(&s.full[slot], 2 * kPackedTileBytes + 2 * sf_bytes);
    ptx::tma_load_3d(s.ring[slot].a, &map_a, kt * kPackedRowBytes, m0, batch, &s.full[slot], kPackedTileBytes);
    ptx::tma_load_3d(s.ring[slot].b, &map_b, kt * kPackedRowBytes, n0, batch, &s.full[slot], kPackedTileBytes);
    const int64_t first_atom = int64_t(kt) * gemm::kSfTileCols;
    ptx::bulk_copy_g2s(s.ring[slot].sfa, SFA + ((m0 / kBM) * int64_t(sf_tiles_per_row_block) + first_atom) * gemm::kSfTileBytes,
                             sf_bytes, &s.full[slot]);
    ptx::bulk_copy_g2s(s.ring[slot].sfb, SFB + ((n0 / kBN) * int64_t(sf_tiles_per_row_block) + first_atom) * gemm::kSfTileBytes,
                             sf_bytes, &s.full[slot]);
  };
  if (producer)
    for (int kt = 0; kt < min(kSlots, k_tiles); ++kt) produce(kt);

  float acc[kTM][kTN] = {};
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int slot = kt % kSlots;
    // 1. Wait until the slot's tiles and scales have landed.
    ptx::mbarrier_wait(&s.full[slot], (kt / kSlots) & 1, "full", slot);
    const Slot& buf = s.ring[slot];

    const int slices = min(kSlices, (K - kt * kTileK) / kSliceK);
    for (int slice = 0; slice < slices; ++slice) {
      // 2. Decode: thread t expands half a slice row (16 values, one block scale) of A and of B.
      {
        const int r = threadIdx.x / 2, half = threadIdx.x % 2, k16 = slice * 2 + half;
        const uint32_t src = smem_offset(r, slice) + half * 8;
        const float sa = gemm::ue4m3_to_float(buf.sfa[gemm::sf_offset(r, k16, kTileK)]);
        const float sb = gemm::ue4m3_to_float(buf.sfb[gemm::sf_offset(r, k16, kTileK)]);
        decode_16(*reinterpret_cast<const uint2*>(buf.a + src), sa, s.e2m1_table, s.a_dec, r, half * 4);
        decode_16(*reinterpret_cast<const uint2*>(buf.b + src), sb, s.e2m1_table, s.b_dec, r, half * 4);
      }
      __syncthreads();

      // 3. Compute: stage 02's loop over the decoded FP32 slice.
#pragma unroll 1
      for (int ch = 0; ch < kSliceChunks; ++ch) {
        float4 a[kTM];
#pragma unroll
        for (int i = 0; i < kTM; ++i) a[i] = *reinterpret_cast<const float4*>(s.a_dec + smem_offset(ty + kThreadsM * i, ch));
#pragma unroll
        for (int j = 0; j < kTN; ++j) {
          const float4 b = *reinterpret_cast<const float4*>(s.b_dec + smem_offset(tx + kThreadsN * j, ch));
#pragma unroll
          for (int i = 0; i < kTM; ++i) {
            acc[i][j] += a[i].x * b.x;
            acc[i][j] += a[i].y * b.y;
            acc[i][j] += a[i].z * b.z;
            acc[i][j] += a[i].w * b.w;
          }
        }
      }
      __syncthreads();  // the next decode overwrites the slices
    }

    // 4. Release the slot (every warp has passed the barrier above, so nobody reads it any more),
    //    and let the producer refill it with the k-tile kSlots ahead. Lane 0 first declares the
    //    warp's reads of the slot to the protocol checker (no code in release): they must follow
    //    the copies' landing, which the warp saw at its wait on "full", and precede the refill.
    if (threadIdx.x % 32 == 0) ptx::protocol_generic_read(&buf, sizeof(Slot));
    if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.empty[slot]);
    if (producer && kt + kSlots < k_tiles) produce(kt + kSlots);
  }

  // 5. Epilogue: alpha, then round to FP16 once per output.
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int m = m0 + ty + kThreadsM * i;
#pragma unroll
    for (int j = 0; j < kTN; ++j) {
      const int n = n0 + tx + kThreadsN * j;
      if (m < M && n < N) C[int64_t(m) * N + n] = __float2half_rn(acc[i][j] * alpha);
    }
  }
}

// The tensor maps of this kernel: boxes of 128 rows x 128 bytes (256 values of k).
inline gemm::TensorMapPlan plan_a(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_packed_operand(a.A, a.M, a.K, a.L, kBM, kPackedRowBytes);
}
inline gemm::TensorMapPlan plan_b(const gemm::Nvfp4GemmArgs& a) {
  return gemm::plan_packed_operand(a.B, a.N, a.K, a.L, kBN, kPackedRowBytes);
}

inline void launch(const gemm::Nvfp4GemmArgs& args, cudaStream_t stream) {
  gemm::validate(args);
  const int64_t blocks_n = (args.N + kBN - 1) / kBN;
  const int64_t blocks_m = (args.M + kBM - 1) / kBM;
  if (blocks_n * blocks_m > INT_MAX)
    throw std::invalid_argument("stage04: M*N needs " + std::to_string(blocks_n * blocks_m) +
                                " blocks, more than a grid dimension holds (2^31 - 1)");
  const gemm::TensorMapPlan pa = plan_a(args), pb = plan_b(args);  // throw before anything runs
  const CUtensorMap map_a = gemm::encode_tensor_map(pa), map_b = gemm::encode_tensor_map(pb);
  gemm::launch_kernel(nvfp4_tma_gemm, {dim3(unsigned(blocks_n * blocks_m), unsigned(args.L)), kThreads, kSmemBytes, stream},
                      map_a, map_b, args.M, args.N, args.K, int(blocks_n), args.SFA, args.SFB, args.alpha, args.C);
}

inline constexpr gemm::StageOf kStage{"04_tma_mbarrier",
                                      "NVFP4: TMA bulk-tensor loads into a ring of mbarrier-guarded slots",
                                      &launch};

}  // namespace stage04
