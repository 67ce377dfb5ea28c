// Stage 09's loads, one piece at a time, each against a streaming read of the same bytes in the same run:
// which part of the way the GEMV loads costs the fraction of the stream that its loads alone miss
// (docs/design_measurements.md, "Stage 09, fourth pass" and "fifth pass").
//
//   nvcc -std=c++17 -O3 -arch=sm_90a -I. docs/probes/gemv_pattern_probe.cu common/stream_read.cu -o probe
//   ./probe [M K]                                                            (both from the repository's root)
//
// Default M x K = 7168 x 16384, the largest public GEMV shape (4096 x 7168 x 8 reads as 32768 x 7168,
// 7168 x 2048 x 4 as 28672 x 2048). Every kernel only loads and folds what it loaded into a value it
// never writes (no arithmetic). The stage's grid: 16-row CTAs of 4 warps, the warps taking K's 512-byte
// steps in turn, a lane 16 bytes of each of its rows per step.
//   A, group rows    A as the stage reads it: the CTA's rows are two 8-row groups (rows 2p, 2p+1, +32, +64,
//                    +96 of a 128-row block, common/sf_layout.h), 16 loads (L1::no_allocate) in flight;
//                    "K in 4 parts": 4 CTAs per row set, each a quarter of K (more, shorter CTAs)
//   A, 16 rows       the same with 16 consecutive rows per CTA
//   A, rounds        a lane's 16 loads as R rows x S consecutive steps (R x S = 16); where a row has
//                    fewer than S steps (K = 2048: 2), the extra loads reread its start, so those rows
//                    load more than A and do not compare
//   A, address order every warp of a full grid reads 8 KB pieces of A in address order (a compact range
//                    of addresses at any moment, as the streaming read)
//   A + scales       A in group rows plus the stage's scale loads (each group's 32-byte sector of each
//                    tile, through L1): the stage's loads without the vector
//   scales           the scale loads alone, same grid
// Each is compared with the benchmarks' streaming read (gemm::stream_read, one 16-byte chunk a thread)
// of the same byte count. Every kernel runs at most 4 CTAs per SM (48 KB of unused shared memory each),
// as the stage's 16-row CTAs at 128 registers. Inputs rotate over 4 sets of A and its scales (4 x 66 MB
// at the default shape, past a 50-60 MB L2); times are per launch, from a CUDA graph of 200 launches
// replayed between one event pair after a warm-up replay (the benchmarks' method).
// Results: docs/data/gemv_pattern_probe_h100.txt, docs/data/gemv_pattern_probe_h200.txt.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "common/sf_layout.h"
#include "common/stream_read.h"

#define CHECK(x)                                                          \
  do {                                                                    \
    cudaError_t e = (x);                                                  \
    if (e != cudaSuccess) {                                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e));                 \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)

constexpr int kOccupancySmem = 48 << 10;
constexpr int kSets = 4, kWarmup = 5, kTimed = 200;
constexpr int kRows = 16, kWarps = 4, kLanes = 32, kStepBytes = kLanes * 16;  // the stage's 16-row CTAs
// The blocked scale layout (common/sf_layout.h): a 512-byte tile holds 128 rows x 4 scales (64 values of
// k); line l (16 bytes) of it holds rows l, l + 32, l + 64, l + 96. An 8-row group p is rows 2p, 2p + 1 of
// each 32-row quarter: its scales are lines 2p and 2p + 1, one 32-byte sector per tile.
constexpr int kRowsPerGroup = 8, kGroupsPerTile = gemm::kSfTileRows / kRowsPerGroup, kQuarterRows = 32;
constexpr int kSectorBytes = 32, kTileKBytes = gemm::kSfTileCols * gemm::kSfVector / 2;  // A bytes per tile row

__device__ __forceinline__ uint4 load_streaming(const uint8_t* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

__device__ __forceinline__ void sink_if_impossible(uint32_t f, uint32_t* sink) {
  if (f == 0x9E3779B9u && threadIdx.x == 1u << 20) *sink = f;  // never true: the loads stay live
}

// Row r of the CTA: the stage's group rows (kGroupRows; stage09::group_row) or 16 consecutive rows.
template <bool kGroupRows>
__device__ __forceinline__ int64_t cta_row(int64_t cta, int r) {
  if (!kGroupRows) return cta * kRows + r;
  const int64_t group = cta * 2 + r / kRowsPerGroup;
  const int i = r % kRowsPerGroup;
  return (group / kGroupsPerTile) * gemm::kSfTileRows + kQuarterRows * (i / 2) + 2 * (group % kGroupsPerTile) + (i & 1);
}

template <bool kA, bool kScales, bool kGroupRows>
__global__ void __launch_bounds__(kWarps * kLanes, 4) pattern(const uint8_t* A, const uint8_t* SFA, int M, int K,
                                                                int parts, uint32_t* sink) {
  const int warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  // `parts` CTAs share a row set, each taking a contiguous 1/parts of K's steps (no reduction here):
  // more, smaller CTAs than fit at once, so the block scheduler balances the SMs as they finish.
  const int64_t cta = blockIdx.x / parts, part = blockIdx.x % parts, row_bytes = K / 2,
                tiles_per_block = (row_bytes + kTileKBytes - 1) / kTileKBytes;
  const int64_t steps = (row_bytes + kStepBytes - 1) / kStepBytes, step_begin = steps * part / parts,
                step_end = steps * (part + 1) / parts;
  const uint8_t* rows[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int64_t m = cta_row<kGroupRows>(cta, r);
    rows[r] = A + (m < M ? m : 0) * row_bytes;
  }
  uint32_t f = 0;
  for (int64_t step = step_begin + warp; step < step_end; step += kWarps) {
    const int64_t byte = step * kStepBytes + lane * 16;
    if (byte >= row_bytes) break;  // the row's last step may be partial (K a multiple of 64, not of 1024)
    uint4 v[kRows + 4];
    if (kA) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) v[r] = load_streaming(rows[r] + byte);
    }
    if (kScales) {  // groups 2 * cta and 2 * cta + 1: lines 2p and 2p + 1 of the lane's tile, through L1
#pragma unroll
      for (int g = 0; g < 2; ++g) {
        const int64_t group = cta * 2 + g;
        const uint8_t* line = SFA + ((group / kGroupsPerTile) * tiles_per_block + byte / kTileKBytes) * gemm::kSfTileBytes +
                              (group % kGroupsPerTile) * kSectorBytes;
        v[kRows + 2 * g] = __ldg(reinterpret_cast<const uint4*>(line));
        v[kRows + 2 * g + 1] = __ldg(reinterpret_cast<const uint4*>(line + 16));
      }
    }
#pragma unroll
    for (int i = 0; i < kRows + 4; ++i)
      if ((kA && i < kRows) || (kScales && i >= kRows)) f ^= v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
  }
  sink_if_impossible(f, sink);
}

// A only, a lane's 16 loads in flight as kR rows x kS consecutive 512-byte steps of each (kR * kS = 16):
// kR = 16, kS = 1 is the stage's shape of a round; kR = 1, kS = 16 reads 8 KB of one row per warp round.
// A CTA owns 16 consecutive rows; its work items (kR rows x kS steps) go to its warps in turn, steps fastest.
template <int kR, int kS>
__global__ void __launch_bounds__(kWarps * kLanes, 4) rounds(const uint8_t* A, const uint8_t* SFA, int M, int K,
                                                               int parts, uint32_t* sink) {
  static_assert(kR * kS == kRows, "16 loads per lane and round");
  const int warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const int64_t row_bytes = K / 2, steps = (row_bytes + kStepBytes - 1) / kStepBytes;
  const int64_t step_sets = (steps + kS - 1) / kS, items = (kRows / kR) * step_sets;
  uint32_t f = 0;
  for (int64_t item = warp; item < items; item += kWarps) {
    const int64_t row0 = int64_t(blockIdx.x) * kRows + item / step_sets * kR, step0 = item % step_sets * kS;
    uint4 v[kRows];
#pragma unroll
    for (int r = 0; r < kR; ++r)
#pragma unroll
      for (int t = 0; t < kS; ++t) {
        const int64_t m = row0 + r < M ? row0 + r : 0, byte = (step0 + t) * kStepBytes + lane * 16;
        v[r * kS + t] = load_streaming(A + m * row_bytes + (byte < row_bytes ? byte : 0));  // past the row: reread
      }
#pragma unroll
    for (int i = 0; i < kRows; ++i) f ^= v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
  }
  sink_if_impossible(f, sink);
}

// A only, read as the GPU-wide streaming read does but by resident warps: W = every warp of a full
// grid (4 CTAs of 4 warps per SM); warp w reads 8 KB pieces w, w + W, w + 2W, ... of A taken as one flat
// array (a lane 16 loads in flight, 512 contiguous bytes per warp load), so at any moment the GPU reads
// one compact range of addresses. At K = 16384 a piece is one row; at shorter K it spans rows.
__global__ void __launch_bounds__(kWarps * kLanes, 4) sweep(const uint8_t* A, const uint8_t* SFA, int M, int K,
                                                              int parts, uint32_t* sink) {
  const int lane = threadIdx.x % kLanes;
  const int64_t warps = int64_t(gridDim.x) * kWarps, bytes = int64_t(M) * (K / 2);
  constexpr int64_t kPiece = int64_t(kRows) * kStepBytes;
  uint32_t f = 0;
  for (int64_t piece = int64_t(blockIdx.x) * kWarps + threadIdx.x / kLanes; piece * kPiece < bytes; piece += warps) {
    uint4 v[kRows];
#pragma unroll
    for (int t = 0; t < kRows; ++t) {
      const int64_t byte = piece * kPiece + t * kStepBytes + lane * 16;
      v[t] = load_streaming(A + (byte < bytes ? byte : 0));
    }
#pragma unroll
    for (int i = 0; i < kRows; ++i) f ^= v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
  }
  sink_if_impossible(f, sink);
}

// Per-launch microseconds of launch(stream, set): a CUDA graph of kTimed launches cycling through the sets,
// replayed between one event pair after a warm-up replay (the benchmarks' method: no launch gaps counted).
template <class Launch>
double time_us(Launch launch) {
  cudaStream_t st;
  CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  for (int i = 0; i < kWarmup; ++i) launch(st, i % kSets);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kTimed; ++i) launch(st, i % kSets);
  CHECK(cudaStreamEndCapture(st, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, st));  // warm-up replay
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaEventRecord(a, st));
  CHECK(cudaGraphLaunch(exec, st));
  CHECK(cudaEventRecord(b, st));
  CHECK(cudaEventSynchronize(b));
  CHECK(cudaGetLastError());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  CHECK(cudaStreamDestroy(st));
  return 1e3 * ms / kTimed;
}

int main(int argc, char** argv) {
  const int M = argc > 2 ? std::atoi(argv[1]) : 7168, K = argc > 2 ? std::atoi(argv[2]) : 16384;
  if (M < 1 || K < 64 || K % 64 != 0) {
    std::printf("usage: probe [M K], M >= 1, K a positive multiple of 64\n");
    return 1;
  }
  const int64_t a_bytes = int64_t(M) * K / 2, sfa_bytes = (int64_t(M) + gemm::kSfTileRows - 1) / gemm::kSfTileRows * gemm::kSfTileRows * (K / gemm::kSfVector);
  const int64_t set_bytes = a_bytes + sfa_bytes;  // one allocation per set: A, then its scales
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  uint8_t* sets[kSets];
  for (auto& s : sets) {
    CHECK(cudaMalloc(&s, set_bytes));
    CHECK(cudaMemset(s, 0x5A, set_bytes));
  }
  uint32_t* sink;
  CHECK(cudaMalloc(&sink, 4));
  std::printf("gpu %s, %d SMs, L2 %d MB; M x K = %d x %d: A %.1f MB, scales %.1f MB, %d sets\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20, M, K, a_bytes / 1e6, sfa_bytes / 1e6, kSets);

  // The streaming read of `bytes` from each set's start (A first, so "A" bytes are A's own).
  auto stream_us = [&](int64_t from, int64_t bytes) {
    return time_us([&](cudaStream_t st, int s) { gemm::stream_read(sets[s] + from, bytes, sink, 1, st); });
  };
  const unsigned ctas = unsigned((M + kRows - 1) / kRows);
  auto run = [&](const char* name, auto kernel, int64_t bytes, double ceiling_us, int parts) {
    const double us = time_us([&](cudaStream_t st, int s) {
      // 48 KB of (unused) dynamic shared memory: at most 4 CTAs per SM for every kernel, as the stage's
      // 16-row CTAs at 128 registers, whatever registers the kernel needs.
      kernel<<<ctas * parts, kWarps * kLanes, kOccupancySmem, st>>>(sets[s], sets[s] + a_bytes, M, K, parts, sink);
    });
    std::printf("  %-34s K in %d part%s %9.2f us %7.0f GB/s   %.3f of the stream of the same bytes (%.2f us)\n", name,
                parts, parts > 1 ? "s" : " ", us, bytes / us / 1e3, ceiling_us / us, ceiling_us);
  };
  const double stream_a = stream_us(0, a_bytes), stream_all = stream_us(0, set_bytes),
               stream_sf = stream_us(a_bytes, sfa_bytes);
  std::printf("  streaming read, A                  %9.2f us %7.0f GB/s\n", stream_a, a_bytes / stream_a / 1e3);
  std::printf("  streaming read, A + scales         %9.2f us %7.0f GB/s\n", stream_all, set_bytes / stream_all / 1e3);
  std::printf("  streaming read, scales             %9.2f us %7.0f GB/s\n", stream_sf, sfa_bytes / stream_sf / 1e3);
  for (int parts : {1, 4}) run("A, group rows (the stage's)", pattern<true, false, true>, a_bytes, stream_a, parts);
  run("A, 16 consecutive rows", pattern<true, false, false>, a_bytes, stream_a, 1);
  run("A, rounds of 16 rows x 1 step", rounds<16, 1>, a_bytes, stream_a, 1);
  run("A, rounds of 4 rows x 4 steps", rounds<4, 4>, a_bytes, stream_a, 1);
  run("A, rounds of 2 rows x 8 steps", rounds<2, 8>, a_bytes, stream_a, 1);
  run("A, rounds of 1 row x 16 steps", rounds<1, 16>, a_bytes, stream_a, 1);
  {
    const double us = time_us([&](cudaStream_t st, int s) {
      sweep<<<unsigned(prop.multiProcessorCount) * 4, kWarps * kLanes, kOccupancySmem, st>>>(sets[s], sets[s] + a_bytes, M, K, 1, sink);
    });
    std::printf("  %-34s            %9.2f us %7.0f GB/s   %.3f of the stream of the same bytes (%.2f us)\n",
                "A, resident warps in address order", us, a_bytes / us / 1e3, stream_a / us, stream_a);
  }
  for (int parts : {1, 4}) run("A + scales (the stage's loads)", pattern<true, true, true>, set_bytes, stream_all, parts);
  run("scales alone (the stage's pattern)", pattern<false, true, true>, sfa_bytes, stream_sf, 1);
  return 0;
}
