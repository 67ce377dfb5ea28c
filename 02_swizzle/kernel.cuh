// Stage 02: XOR-swizzled shared memory, no bank conflicts.          README.md explains each change.
// Changes from 01_tiled_smem/kernel.cuh:
//   1. Rows of 128 bytes (BK = 32) stored with the 128-byte swizzle of common/swizzle.h: chunk c of
//      row r lives at chunk c ^ (r % 8), the layout TMA writes and tcgen05 reads later.
//   2. 16-byte shared-memory loads and stores throughout, conflict-free by the swizzle.
//   3. 16-byte global loads where K and the pointers allow, a scalar path for the rest.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/config.h"
#include "common/gemm_api.h"
#include "common/launch.cuh"
#include "common/registry.h"
#include "common/swizzle.h"

namespace stage02 {

inline constexpr int kBM = 128;           // rows of C per block
inline constexpr int kBN = 128;           // columns of C per block
inline constexpr int kBK = 32;            // k per shared-memory tile: one 128-byte swizzle row
inline constexpr int kTM = 8;             // rows of C per thread
inline constexpr int kTN = 8;             // columns of C per thread
inline constexpr int kThreadsM = kBM / kTM;  // 16
inline constexpr int kThreadsN = kBN / kTN;  // 16
inline constexpr int kThreads = kThreadsM * kThreadsN;  // 256
inline constexpr int kChunkFloats = gemm::kSwizzleChunkBytes / 4;  // 4 floats per 16-byte access
inline constexpr int kChunksPerRow = kBK / kChunkFloats;           // 8
// Each thread copies this many 16-byte chunks of each tile per K step: 128 * 8 / 256 = 4.
inline constexpr int kChunkLoadsPerThread = kBM * kChunksPerRow / kThreads;
static_assert(kBK * 4 == gemm::kSwizzleRowBytes, "one tile row is one row of the 128-byte swizzle");
static_assert(kBM == kBN, "the copy loop below serves both tiles with one index computation");
static_assert(kThreadsM % 8 == 0 && kThreadsN % 8 == 0,
              "rows ty + 16 i keep row % 8 = ty % 8, so eight lanes tx..tx+7 read eight different chunks");

// Byte offset of chunk `chunk` of row `row` in a tile: the single place the layout is defined.
GEMM_HD uint32_t smem_offset(int row, int chunk) {
  return gemm::swizzle_128b(uint32_t(row), uint32_t(chunk * gemm::kSwizzleChunkBytes));
}

// Chunk `chunk` (4 floats of k) of row `row` of an operand with `rows` rows, zeros outside it.
template <bool kVectorGlobal>
__device__ __forceinline__ float4 load_chunk(const float* __restrict__ X, int row, int rows, int k, int K) {
  if (row >= rows) return make_float4(0.f, 0.f, 0.f, 0.f);
  const float* p = X + int64_t(row) * K + k;
  if constexpr (kVectorGlobal) {
    // K % 4 == 0 and X 16-byte aligned: p is 16-byte aligned, and k < K implies k + 3 < K.
    return k < K ? __ldg(reinterpret_cast<const float4*>(p)) : make_float4(0.f, 0.f, 0.f, 0.f);
  } else {
    return make_float4(k < K ? __ldg(p) : 0.f, k + 1 < K ? __ldg(p + 1) : 0.f, k + 2 < K ? __ldg(p + 2) : 0.f,
                       k + 3 < K ? __ldg(p + 3) : 0.f);
  }
}

template <bool kVectorGlobal>
__global__ void __launch_bounds__(kThreads)
swizzled_gemm(int M, int N, int K, int blocks_n, const float* __restrict__ A, const float* __restrict__ B,
              float* __restrict__ C) {
  // 1024-byte alignment: the swizzle pattern is defined on absolute addresses (common/swizzle.h).
  __shared__ __align__(1024) unsigned char As[kBM * kBK * 4];
  __shared__ __align__(1024) unsigned char Bs[kBN * kBK * 4];

  const int tx = threadIdx.x % kThreadsN, ty = threadIdx.x / kThreadsN;
  const int m0 = (blockIdx.x / blocks_n) * kBM, n0 = (blockIdx.x % blocks_n) * kBN;
  const int64_t batch = blockIdx.y;
  A += batch * M * int64_t(K);
  B += batch * N * int64_t(K);
  C += batch * M * int64_t(N);

  float acc[kTM][kTN] = {};

  // Chunk c of a tile is (row c / 8, chunk c % 8): a warp reads 4 whole 128-byte rows, and each
  // group of 8 lanes writes the 8 chunks of one row, so the 16-byte stores are conflict-free.
  float4 ra[kChunkLoadsPerThread], rb[kChunkLoadsPerThread];
  auto load_chunks = [&](int k0) {
#pragma unroll
    for (int s = 0; s < kChunkLoadsPerThread; ++s) {
      const int c = threadIdx.x + s * kThreads, r = c / kChunksPerRow, k = k0 + (c % kChunksPerRow) * kChunkFloats;
      ra[s] = load_chunk<kVectorGlobal>(A, m0 + r, M, k, K);
      rb[s] = load_chunk<kVectorGlobal>(B, n0 + r, N, k, K);
    }
  };

  load_chunks(0);
  for (int k0 = 0; k0 < K; k0 += kBK) {
    // 1. Copy the chunk held in registers into shared memory, then start loading the next one.
#pragma unroll
    for (int s = 0; s < kChunkLoadsPerThread; ++s) {
      const int c = threadIdx.x + s * kThreads, r = c / kChunksPerRow, ch = c % kChunksPerRow;
      *reinterpret_cast<float4*>(As + smem_offset(r, ch)) = ra[s];
      *reinterpret_cast<float4*>(Bs + smem_offset(r, ch)) = rb[s];
    }
    __syncthreads();
    if (k0 + kBK < K) load_chunks(k0 + kBK);

    // 2. Compute: per chunk of 4 k, 8 + 8 sixteen-byte loads feed 4 x TM x TN FMAs. The A values
    //    stay in registers for the chunk; B is loaded one row at a time (fewer live registers).
#pragma unroll 1  // unrolled, the 8 chunks run out of registers on sm_100a; rolled is as fast on an H200
    for (int ch = 0; ch < kChunksPerRow; ++ch) {
      float4 a[kTM];
#pragma unroll
      for (int i = 0; i < kTM; ++i) a[i] = *reinterpret_cast<const float4*>(As + smem_offset(ty + kThreadsM * i, ch));
#pragma unroll
      for (int j = 0; j < kTN; ++j) {
        const float4 b = *reinterpret_cast<const float4*>(Bs + smem_offset(tx + kThreadsN * j, ch));
#pragma unroll
        for (int i = 0; i < kTM; ++i) {
          acc[i][j] += a[i].x * b.x;
          acc[i][j] += a[i].y * b.y;
          acc[i][j] += a[i].z * b.z;
          acc[i][j] += a[i].w * b.w;
        }
      }
    }
    __syncthreads();  // 3. nobody overwrites a tile another thread still reads
  }

#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int m = m0 + ty + kThreadsM * i;
#pragma unroll
    for (int j = 0; j < kTN; ++j) {
      const int n = n0 + tx + kThreadsN * j;
      if (m < M && n < N) C[int64_t(m) * N + n] = acc[i][j];
    }
  }
}

inline void launch(const gemm::Fp32GemmArgs& args, cudaStream_t stream) {
  gemm::validate(args);
  const int64_t blocks_n = (args.N + kBN - 1) / kBN;
  const int64_t blocks_m = (args.M + kBM - 1) / kBM;
  if (blocks_n * blocks_m > INT_MAX)
    throw std::invalid_argument("stage02: M*N needs " + std::to_string(blocks_n * blocks_m) +
                                " blocks, more than a grid dimension holds (2^31 - 1)");
  const bool vector_global = args.K % kChunkFloats == 0 && reinterpret_cast<uintptr_t>(args.A) % 16 == 0 &&
                             reinterpret_cast<uintptr_t>(args.B) % 16 == 0;
  const dim3 grid(unsigned(blocks_n * blocks_m), unsigned(args.L));
  gemm::launch_kernel(vector_global ? swizzled_gemm<true> : swizzled_gemm<false>, {grid, kThreads, 0, stream},
                      args.M, args.N, args.K, int(blocks_n), args.A, args.B, args.C);
}

inline constexpr gemm::StageOf kStage{"02_swizzle", "FP32, XOR-swizzled shared memory: no bank conflicts", &launch};

}  // namespace stage02
