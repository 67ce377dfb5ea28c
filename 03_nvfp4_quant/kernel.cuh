// Stage 03: NVFP4 operands, decoded for the CUDA cores.             README.md explains each change.
// Changes from 02_swizzle/kernel.cuh:
//   1. The operands are NVFP4: packed E2M1 tiles of 128 rows x 128 bytes (256 values of k) with the
//      swizzle of stage 02, and the blocked scale atoms of those rows (kSfBlockBytes per k-tile).
//   2. Each 32-value slice of k is decoded into stage 02's FP32 tiles (payload x scale, exact), then
//      stage 02's FMA loop runs unchanged; alpha and the FP16 rounding happen once, in the epilogue.
//   3. E2M1 decode: cvt.rn.f16x2.e2m1x2 on sm_100a, a 16-entry shared-memory table on Hopper.
#pragma once

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
#include "common/registry.h"
#include "common/sf_layout.h"
#include "common/swizzle.h"

namespace stage03 {

inline constexpr int kBM = 128;           // rows of C per block
inline constexpr int kBN = 128;           // columns of C per block
inline constexpr int kTileK = 256;        // values of k per packed tile: one 128-byte swizzle row
inline constexpr int kSliceK = 32;        // values of k per decoded FP32 slice (stage 02's BK)
inline constexpr int kTM = 8;             // rows of C per thread
inline constexpr int kTN = 8;             // columns of C per thread
inline constexpr int kThreadsM = kBM / kTM;  // 16
inline constexpr int kThreadsN = kBN / kTN;  // 16
inline constexpr int kThreads = kThreadsM * kThreadsN;  // 256
inline constexpr int kChunkBytes = gemm::kSwizzleChunkBytes;            // 16
inline constexpr int kPackedRowBytes = kTileK / 2;                       // 128
inline constexpr int kPackedTileBytes = kBM * kPackedRowBytes;           // 16 KB per operand
inline constexpr int kSfBlockBytes = kBM * (kTileK / gemm::kSfVector);    // 2 KB: 4 atoms of 512 B
inline constexpr int kSlices = kTileK / kSliceK;                         // 8
inline constexpr int kSliceChunks = kSliceK / 4;                         // 8 float4 per decoded row
inline constexpr int kDecodedTileBytes = kBM * kSliceK * 4;              // 16 KB per operand
// Global -> shared copy work per thread and k-tile: 4 packed chunks per operand, 1 scale chunk.
inline constexpr int kPackedChunksPerThread = kPackedTileBytes / kChunkBytes / kThreads;  // 4
static_assert(kPackedRowBytes == gemm::kSwizzleRowBytes, "a packed tile row is one 128-byte swizzle row");
static_assert(kSliceK * 4 == gemm::kSwizzleRowBytes, "a decoded FP32 slice row is one 128-byte swizzle row");
static_assert(2 * kSfBlockBytes / kChunkBytes == kThreads, "one scale chunk per thread: SFA by the first half");
static_assert(kBM == kBN && kThreads == 2 * kBM, "decode: thread t handles half a slice row of A and of B");

// Shared memory, one block: ~68 KB, so it is dynamic (above the 48 KB static limit).
struct SharedStorage {
  alignas(1024) unsigned char a[kPackedTileBytes];  // swizzled, as TMA writes it (stage 04)
  alignas(1024) unsigned char b[kPackedTileBytes];
  alignas(1024) unsigned char a_dec[kDecodedTileBytes];    // swizzled FP32 slice, stage 02's layout
  alignas(1024) unsigned char b_dec[kDecodedTileBytes];
  alignas(16) uint8_t sfa[kSfBlockBytes];                   // 4 blocked-layout atoms
  alignas(16) uint8_t sfb[kSfBlockBytes];
  __half e2m1_table[16];                                   // Hopper's E2M1 decode table
};

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

__global__ void __launch_bounds__(kThreads)
nvfp4_cuda_core_gemm(int M, int N, int K, int blocks_n, const uint8_t* __restrict__ A, const uint8_t* __restrict__ SFA,
                     const uint8_t* __restrict__ B, const uint8_t* __restrict__ SFB, float alpha, __half* __restrict__ C) {
  // The swizzle is defined on absolute shared-memory addresses: align the tiles to 1024 bytes.
  extern __shared__ unsigned char smem_raw[];
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(gemm::align_to_swizzle_atom(smem_raw));

  const int tx = threadIdx.x % kThreadsN, ty = threadIdx.x / kThreadsN;
  const int m0 = (blockIdx.x / blocks_n) * kBM, n0 = (blockIdx.x % blocks_n) * kBN;
  const int64_t batch = blockIdx.y;
  const int64_t row_bytes = K / 2;
  A += batch * M * row_bytes;
  B += batch * N * row_bytes;
  SFA += batch * gemm::sf_batch_bytes(M, K);
  SFB += batch * gemm::sf_batch_bytes(N, K);
  C += batch * M * int64_t(N);
  gemm::init_e2m1_half_table(s.e2m1_table);

  // The blocked scale layout keeps a 128-row block's atoms for consecutive k in consecutive 512-byte
  // tiles: the atoms for k-tile kt are tiles kt*4 .. kt*4+3 of row block m0/128, 2 KB in one piece.
  const int64_t sf_tiles_per_row_block = gemm::sf_padded_cols(K) / gemm::kSfTileCols;
  const int k_tiles = (K + kTileK - 1) / kTileK;

  float acc[kTM][kTN] = {};
  uint4 ra[kPackedChunksPerThread], rb[kPackedChunksPerThread], rs;
  auto load_k_tile = [&](int kt) {
    const uint4 zero = make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int i = 0; i < kPackedChunksPerThread; ++i) {
      const int c = threadIdx.x + i * kThreads, r = c / (kPackedRowBytes / kChunkBytes);
      const int64_t byte = int64_t(kt) * kPackedRowBytes + (c % (kPackedRowBytes / kChunkBytes)) * kChunkBytes;
      const bool k_in = byte < row_bytes;  // rows are whole 16-byte chunks: K is a multiple of 32
      ra[i] = (m0 + r < M && k_in) ? __ldg(reinterpret_cast<const uint4*>(A + (m0 + r) * row_bytes + byte)) : zero;
      rb[i] = (n0 + r < N && k_in) ? __ldg(reinterpret_cast<const uint4*>(B + (n0 + r) * row_bytes + byte)) : zero;
    }
    // Thread t < 128 copies chunk t of the SFA atoms, thread t >= 128 chunk t - 128 of SFB.
    const bool is_b = threadIdx.x >= kThreads / 2;
    const int c = threadIdx.x % (kThreads / 2), atom = c / (gemm::kSfTileBytes / kChunkBytes);
    const int64_t tile = int64_t(is_b ? n0 : m0) / kBM * sf_tiles_per_row_block + int64_t(kt) * gemm::kSfTileCols + atom;
    const bool atom_in = int64_t(kt) * gemm::kSfTileCols + atom < sf_tiles_per_row_block;
    const uint8_t* sf = is_b ? SFB : SFA;
    rs = atom_in ? __ldg(reinterpret_cast<const uint4*>(sf + tile * gemm::kSfTileBytes +
                                                       (c % (gemm::kSfTileBytes / kChunkBytes)) * kChunkBytes))
                 : zero;
  };

  load_k_tile(0);
  for (int kt = 0; kt < k_tiles; ++kt) {
    // 1. The k-tile held in registers goes to shared memory; the next one starts loading.
#pragma unroll
    for (int i = 0; i < kPackedChunksPerThread; ++i) {
      const int c = threadIdx.x + i * kThreads, r = c / 8, ch = c % 8;
      *reinterpret_cast<uint4*>(s.a + smem_offset(r, ch)) = ra[i];
      *reinterpret_cast<uint4*>(s.b + smem_offset(r, ch)) = rb[i];
    }
    *reinterpret_cast<uint4*>((threadIdx.x < kThreads / 2 ? s.sfa : s.sfb) + (threadIdx.x % (kThreads / 2)) * kChunkBytes) = rs;
    __syncthreads();
    if (kt + 1 < k_tiles) load_k_tile(kt + 1);

    const int slices = min(kSlices, (K - kt * kTileK) / kSliceK);
    for (int slice = 0; slice < slices; ++slice) {
      // 2. Decode: thread t expands half a slice row (16 values, one block scale) of A and of B.
      {
        const int r = threadIdx.x / 2, half = threadIdx.x % 2, k16 = slice * 2 + half;
        const uint32_t src = smem_offset(r, slice) + half * 8;
        const float sa = gemm::ue4m3_to_float(s.sfa[gemm::sf_offset(r, k16, kTileK)]);
        const float sb = gemm::ue4m3_to_float(s.sfb[gemm::sf_offset(r, k16, kTileK)]);
        decode_16(*reinterpret_cast<const uint2*>(s.a + src), sa, s.e2m1_table, s.a_dec, r, half * 4);
        decode_16(*reinterpret_cast<const uint2*>(s.b + src), sb, s.e2m1_table, s.b_dec, r, half * 4);
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
  }

  // 4. Epilogue: alpha, then round to FP16 once per output.
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

inline void launch(const gemm::Nvfp4GemmArgs& args, cudaStream_t stream) {
  gemm::validate(args);
  const int64_t blocks_n = (args.N + kBN - 1) / kBN;
  const int64_t blocks_m = (args.M + kBM - 1) / kBM;
  if (blocks_n * blocks_m > INT_MAX)
    throw std::invalid_argument("stage03: M*N needs " + std::to_string(blocks_n * blocks_m) +
                                " blocks, more than a grid dimension holds (2^31 - 1)");
  const int smem = int(sizeof(SharedStorage)) + 1024;  // + slack to align the dynamic buffer to 1024
  gemm::launch_kernel(nvfp4_cuda_core_gemm, {dim3(unsigned(blocks_n * blocks_m), unsigned(args.L)), kThreads, smem, stream},
                      args.M, args.N, args.K, int(blocks_n), args.A, args.SFA, args.B, args.SFB, args.alpha, args.C);
}

inline constexpr gemm::StageOf kStage{"03_nvfp4_quant",
                                      "NVFP4: packed E2M1 + E4M3 block scales, decoded for CUDA cores",
                                      &launch};

}  // namespace stage03
