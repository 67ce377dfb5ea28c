// Stage 07's staging stores, alone, for Nsight Compute: are the 16-byte shared-memory stores of a
// 32 x 32 FP16 sub-tile bank-conflict free with the 64-byte swizzle, and what changes when TMA reads
// the other staging buffer at the same time (as in the kernel)?
//
//   nvcc -std=c++20 -O3 -arch=sm_90a -I. docs/probes/staging_bank_probe.cu common/tensor_map.cpp -o probe
//   ncu --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,\
//   l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,sm__sass_inst_executed_op_shared_st.sum ./probe
//
// Three kernels, 4 warps each, every warp writing `kSubTiles` sub-tiles the way stage 07's
// tma_store_sub_tile() does (lane r: row r, four 16-byte chunks):
//   swizzled        64-byte swizzle, no TMA                       (the layout alone)
//   plain           no swizzle, no TMA                            (what the swizzle avoids)
//   swizzled_tma    64-byte swizzle, each sub-tile stored by TMA, two buffers alternating (the kernel)
// The last one also checks that TMA wrote the values where C's tensor map says they go.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "common/ptx/mbarrier.cuh"
#include "common/ptx/tma.cuh"
#include "common/swizzle.h"
#include "common/tensor_map.h"

namespace {

constexpr int kWarps = 4, kSubTiles = 64, kRows = 32, kCols = 32, kBytes = kRows * kCols * 2;

enum Mode { kSwizzled, kPlain, kSwizzledTma };

// What lane r writes at column `col` of sub-tile t: distinct within a sub-tile and between the two
// buffers, and exact in FP16 (below 2048).
__host__ __device__ constexpr int value(int t, int r, int col) { return (t % 2) * 1024 + r * kCols + col; }

template <Mode M>
__global__ void __launch_bounds__(32 * kWarps) staging_probe(const __grid_constant__ CUtensorMap map) {
  __shared__ alignas(1024) unsigned char staging[kWarps][2][kBytes];
  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  for (int t = 0; t < kSubTiles; ++t) {
    unsigned char* buf = staging[warp][t % 2];
    if (M == kSwizzledTma && lane == 0) gemm::ptx::bulk_wait_group_read<1>();
    __syncwarp();
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      __align__(16) __half h[8];
      for (int i = 0; i < 8; ++i) h[i] = __float2half_rn(float(value(t, lane, 8 * q + i)));
      const uint32_t at = M == kPlain ? uint32_t(lane * 64 + 16 * q) : gemm::swizzle_64b(uint32_t(lane), uint32_t(16 * q));
      *reinterpret_cast<uint4*>(buf + at) = *reinterpret_cast<const uint4*>(h);
    }
    if (M == kSwizzledTma) {
      gemm::ptx::fence_proxy_async_shared();
      __syncwarp();
      // Sub-tile t of warp w: rows 32 (w * kSubTiles + t) of a one-column-of-boxes C.
      if (lane == 0) {
        gemm::ptx::tma_store_3d(&map, 0, kRows * (warp * kSubTiles + t), 0, buf, kBytes);
        gemm::ptx::bulk_commit_group();
      }
    }
    __syncwarp();
  }
  if (M == kSwizzledTma && lane == 0) gemm::ptx::bulk_wait_group<0>();
}

}  // namespace

int main() {
  const int n_tiles = kWarps * kSubTiles, rows = kRows * n_tiles;
  __half* c = nullptr;
  cudaMalloc(&c, size_t(rows) * kCols * sizeof(__half));
  const CUtensorMap map = gemm::encode_tensor_map(gemm::plan_fp16_output(c, rows, kCols, 1, kRows, kCols));
  staging_probe<kSwizzled><<<1, 32 * kWarps>>>(map);
  staging_probe<kPlain><<<1, 32 * kWarps>>>(map);
  staging_probe<kSwizzledTma><<<1, 32 * kWarps>>>(map);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("FAILED: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  // Row r of sub-tile t of warp w is row 32 (w kSubTiles + t) + r of C.
  std::vector<__half> host(size_t(rows) * kCols);
  cudaMemcpy(host.data(), c, host.size() * sizeof(__half), cudaMemcpyDeviceToHost);
  long bad = 0;
  for (int w = 0; w < kWarps; ++w)
    for (int t = 0; t < kSubTiles; ++t)
      for (int r = 0; r < kRows; ++r)
        for (int col = 0; col < kCols; ++col) {
          const float want = float(value(t, r, col));
          bad += __half2float(host[(size_t(kRows) * (w * kSubTiles + t) + r) * kCols + col]) != want;
        }
  std::printf("%s: TMA-stored sub-tiles %s (%ld wrong values of %d)\n", bad ? "FAILED" : "PASSED",
              bad ? "differ from what the lanes wrote" : "match what the lanes wrote", bad, rows * kCols);
  cudaFree(c);
  return bad ? 1 : 0;
}
