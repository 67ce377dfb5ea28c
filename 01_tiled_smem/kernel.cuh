// Stage 01: shared-memory tiles and register tiles.                 README.md explains each change.
// Changes from 00_naive/kernel.cuh:
//   1. A block of 256 threads owns a 128 x 128 tile of C and walks K in chunks of BK = 8, copying
//      the A and B chunks into shared memory (coalesced, along K).
//   2. Each thread computes an 8 x 8 register tile from shared memory: 16 shared loads per 64 FMAs.
//   3. The next chunk is loaded into registers while this one is computed (a register prefetch).
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/gemm_api.h"
#include "common/launch.cuh"
#include "common/registry.h"

namespace stage01 {

inline constexpr int kBM = 128;           // rows of C per block
inline constexpr int kBN = 128;           // columns of C per block
inline constexpr int kBK = 8;             // k per shared-memory tile
inline constexpr int kTM = 8;             // rows of C per thread
inline constexpr int kTN = 8;             // columns of C per thread
inline constexpr int kThreadsM = kBM / kTM;  // 16
inline constexpr int kThreadsN = kBN / kTN;  // 16
inline constexpr int kThreads = kThreadsM * kThreadsN;  // 256
// Each thread copies this many floats of each tile per chunk: 128 * 8 / 256 = 4.
inline constexpr int kLoadsPerThread = kBM * kBK / kThreads;
static_assert(kBM == kBN, "the copy loop below serves both tiles with one index computation");
static_assert(kBM * kBK % kThreads == 0, "every thread copies the same number of floats");

__global__ void __launch_bounds__(kThreads)
tiled_gemm(int M, int N, int K, int blocks_n, const float* __restrict__ A, const float* __restrict__ B,
           float* __restrict__ C) {
  __shared__ float As[kBM][kBK];  // K-major, as in global memory
  __shared__ float Bs[kBN][kBK];

  const int tx = threadIdx.x % kThreadsN, ty = threadIdx.x / kThreadsN;
  const int m0 = (blockIdx.x / blocks_n) * kBM, n0 = (blockIdx.x % blocks_n) * kBN;
  const int64_t batch = blockIdx.y;
  A += batch * M * int64_t(K);
  B += batch * N * int64_t(K);
  C += batch * M * int64_t(N);

  float acc[kTM][kTN] = {};

  // Element e of a tile is (row e / BK, k e % BK): consecutive threads take consecutive k of the
  // same row, so a warp reads 4 rows x 32 contiguous bytes. Outside A and B: zeros.
  float ra[kLoadsPerThread], rb[kLoadsPerThread];
  auto load_chunk = [&](int k0) {
#pragma unroll
    for (int s = 0; s < kLoadsPerThread; ++s) {
      const int e = threadIdx.x + s * kThreads, r = e / kBK, k = k0 + e % kBK;
      ra[s] = (m0 + r < M && k < K) ? A[int64_t(m0 + r) * K + k] : 0.0f;
      rb[s] = (n0 + r < N && k < K) ? B[int64_t(n0 + r) * K + k] : 0.0f;
    }
  };

  load_chunk(0);
  for (int k0 = 0; k0 < K; k0 += kBK) {
    // 1. Copy the chunk held in registers into shared memory, then start loading the next one:
    //    its global-memory latency now overlaps the compute below instead of stalling every warp.
#pragma unroll
    for (int s = 0; s < kLoadsPerThread; ++s) {
      const int e = threadIdx.x + s * kThreads;
      As[e / kBK][e % kBK] = ra[s];
      Bs[e / kBK][e % kBK] = rb[s];
    }
    __syncthreads();
    if (k0 + kBK < K) load_chunk(k0 + kBK);

    // 2. Compute: per k, TM values of A and TN values of B from shared memory feed TM x TN FMAs.
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float a[kTM], b[kTN];
#pragma unroll
      for (int i = 0; i < kTM; ++i) a[i] = As[ty + kThreadsM * i][k];
#pragma unroll
      for (int j = 0; j < kTN; ++j) b[j] = Bs[tx + kThreadsN * j][k];
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] += a[i] * b[j];
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
    throw std::invalid_argument("stage01: M*N needs " + std::to_string(blocks_n * blocks_m) +
                                " blocks, more than a grid dimension holds (2^31 - 1)");
  gemm::launch_kernel(tiled_gemm, {dim3(unsigned(blocks_n * blocks_m), unsigned(args.L)), kThreads, 0, stream},
                      args.M, args.N, args.K, int(blocks_n), args.A, args.B, args.C);
}

inline constexpr gemm::StageOf kStage{"01_tiled_smem", "FP32, shared-memory tiles and register tiles: data reuse",
                                      &launch};

}  // namespace stage01
