// =================================================================================================
//  An NVFP4 GEMM for Blackwell, built one layer at a time                         stage 00 of 07
//
//  >> 00_naive          FP32, one thread per output: the textbook triple loop
//     01_tiled_smem     FP32, shared-memory tiles and register tiles: data reuse
//     02_swizzle        FP32, XOR-swizzled shared memory: no bank conflicts
//     03_nvfp4_quant    NVFP4: the quantizer, and a CUDA-core GEMM on packed E2M1 + E4M3 scales
//     04_tma_mbarrier   NVFP4: TMA bulk-tensor loads into a multi-stage mbarrier pipeline
//     05_tcgen05_2cta   NVFP4: tcgen05 block-scaled MMA, Tensor Memory, 2-CTA pairs
//     06_persistent_ws  NVFP4: persistent tile scheduler, warp-specialised producer/MMA/epilogue
//     07_epilogue_tma   NVFP4: TMEM -> registers -> swizzled SMEM -> TMA store epilogue
//
//  Every stage computes C = A * B^T with both operands K-major (common/gemm_api.h):
//  A is M x K row-major, B is N x K row-major, C is M x N row-major, L batches.
// =================================================================================================
//
// What this stage is, and why start here
// --------------------------------------
// The definition of a matrix product, run by one GPU thread per element of C:
//
//     C[m][n] = sum_k A[m][k] * B[n][k]
//
// Each thread reads a row of A and a row of B (2K floats, 8K bytes) to do 2K FLOPs: 0.25 FLOP per
// byte if every load went to memory. A GEMM has far more reuse than that (each element of A is
// needed by all N columns), so the whole series is about moving bytes fewer times: caches here,
// shared memory in 01, TMA and tensor-core operands later.
//
// How a warp touches memory (threadIdx.x walks n, threadIdx.y walks m):
//   - A[m][k]: all 32 lanes of a warp share m, so they read the same address: one broadcast.
//   - B[n][k]: the 32 lanes read 32 different rows, K*4 bytes apart: 32 separate 32-byte sectors
//     per load, of which each lane uses 4 bytes. Only the L1 cache saves this: the next 7 values
//     of k sit in the sectors just fetched.
//   - C[m][n]: 32 consecutive floats, one 128-byte store: coalesced.
// K-major B is the layout tensor cores want (stage 05) and the worst one for this loop; the
// benchmark shows what that costs next to cuBLAS.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda_check.h"
#include "common/gemm_api.h"
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
  naive_gemm<<<grid, block, 0, stream>>>(args.M, args.N, args.K, int(blocks_n), args.A, args.B, args.C);
  CUDA_CHECK_LAUNCH();
}

inline constexpr gemm::Stage kStage{"00_naive", "FP32, one thread per output: the textbook triple loop",
                                    gemm::Precision::kFp32, &launch};

}  // namespace stage00
