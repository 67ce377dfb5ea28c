// Stage 00: the textbook GEMM, one thread per output.                 README.md explains the choices.
// The starting point:
//   1. C[m][n] = sum_k A[m][k] * B[n][k], FP32, both operands K-major (common/gemm_api.h).
//   2. threadIdx.x walks n, threadIdx.y walks m: A's loads broadcast, B's are one sector per lane,
//      C's stores coalesce; only the L1 cache gives any reuse.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/gemm_api.h"
#include "common/launch.cuh"
#include "common/registry.h"

namespace stage00 {

// A block of 32 x 8 threads computes an 8 x 32 patch of C: 32 lanes along n so the store of C
// coalesces, 8 warps so a block has enough threads to hide some latency.
inline constexpr int kBlockN = 32;
inline constexpr int kBlockM = 8;

// Blocks are numbered along N first: block b covers rows (b / blocks_n) * kBlockM ... and columns
// (b % blocks_n) * kBlockN ...; blockIdx.y is the batch. (A 2-D grid would cap M at 65535 rows of
// blocks; the flat numbering has no such limit.)
__global__ void __launch_bounds__(kBlockN * kBlockM)
naive_gemm(int M, int N, int K, int blocks_n, const float* __restrict__ A, const float* __restrict__ B,
           float* __restrict__ C) {
  const int n = (blockIdx.x % blocks_n) * kBlockN + threadIdx.x;
  const int m = (blockIdx.x / blocks_n) * kBlockM + threadIdx.y;
  if (m >= M || n >= N) return;  // the last row and column of blocks overhang C
  const int64_t batch = blockIdx.y;
  const float* a = A + (batch * M + m) * int64_t(K);  // row m of A
  const float* b = B + (batch * N + n) * int64_t(K);  // row n of B = column n of B^T
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += a[k] * b[k];
  C[(batch * M + m) * int64_t(N) + n] = acc;
}

inline void launch(const gemm::Fp32GemmArgs& args, cudaStream_t stream) {
  gemm::validate(args);
  const int64_t blocks_n = (args.N + kBlockN - 1) / kBlockN;
  const int64_t blocks_m = (args.M + kBlockM - 1) / kBlockM;
  if (blocks_n * blocks_m > INT_MAX)
    throw std::invalid_argument("stage00: M*N needs " + std::to_string(blocks_n * blocks_m) +
                                " blocks, more than a grid dimension holds (2^31 - 1)");
  const dim3 grid(unsigned(blocks_n * blocks_m), unsigned(args.L));
  const dim3 block(kBlockN, kBlockM);
  gemm::launch_kernel(naive_gemm, {grid, block, 0, stream},
                      args.M, args.N, args.K, int(blocks_n), args.A, args.B, args.C);
}

inline constexpr gemm::StageOf kStage{"00_naive", "FP32, one thread per output: the textbook triple loop", &launch};

}  // namespace stage00
