// =================================================================================================
//  An NVFP4 GEMM for Blackwell, built one layer at a time                         stage 09
//
//  >> 09_gemv           NVFP4 at N = 1 (decode-time GEMV): stream the weights at DRAM speed on the
//                       CUDA cores. Branches from the CUDA-core NVFP4 stages (03, 04), not from 07.
//
//  C = alpha * A * B^T with the contract of common/gemm_api.h at N = 1: A is M x K x L packed E2M1
//  with blocked E4M3 scales, the vector B is 1 x K x L with its scales in the same blocked layout,
//  C is M x 1 x L FP16.
// =================================================================================================
//
// What changed since stage 04, and why (the README explains each with measurements)
// ---------------------------------------------------------------------------------
// 1. No tiles, no shared-memory staging, no tensor-core-shaped anything: at N = 1 every weight byte
//    is used for exactly one multiply-add, so the kernel's only job is to read A once at DRAM speed.
// 2. A row group is the 8 rows whose scales share one 32-byte sector of the blocked layout (rows 2p,
//    2p+1, +32, +64, +96 of a 128-row block), so every scale sector read is fully used. A CTA owns
//    one group, or two where the grid still has 2 CTAs per SM (launch: the vector decoded once for
//    16 rows, twice the loads in flight per warp).
// 3. Each lane reads 16 bytes of each of its rows per step (one 32-byte load per row on sm_100a,
//    where A's rows start 32-byte aligned), a warp 512 contiguous bytes per row: 8 or 16 loads in
//    flight per lane before any arithmetic (Little's law, README).
// 4. Cache policy per operand: A is streamed with L1::no_allocate; the vector and the scales are
//    read through L1 (every CTA on an SM reads the same vector).
// 5. The vector chunk is loaded and decoded once per lane and reused for all its rows.
// 6. Products of E2M1 values, exact, 16 values (one scale block) at a time: on Hopper as integers,
//    twice each magnitude looked up by a byte permute (prmt) and four products per dp4a (positive
//    and negative values in two chains, subtracted); on sm_100a converted by cvt.rn.f16x2.e2m1x2 and
//    summed in FP16.
//    The block sum times the two block scales is accumulated in FP32. The ALU pipe, not DRAM, was
//    the limit of the FP16 decode by bit arithmetic on Hopper (README).
// 7. K is split across the warps of a CTA and, where M * L is too small to fill the GPU, across the
//    CTAs of a thread-block cluster; all reductions run in a fixed order (same bits every run).
// 8. Addresses: one pointer per operand advanced each step, plus per-row offsets fixed for the CTA
//    (a row past M rereads the first row and is never written): no per-row 64-bit arithmetic.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/config.h"
#include "common/device_info.h"
#include "common/gemm_api.h"
#include "common/launch.cuh"
#include "common/nvfp4_device.cuh"
#include "common/ptx/cluster.cuh"
#include "common/ptx/ld.cuh"
#include "common/registry.h"
#include "common/sf_layout.h"

namespace stage09 {

inline constexpr int kRowsPerGroup = 8;    // rows whose scales share one 32-byte sector
inline constexpr int kGroupsPer128 = gemm::kSfTileRows / kRowsPerGroup;  // 16 groups per 128-row block
inline constexpr int kLanes = 32;
inline constexpr int kMaxWarps = 4;        // warps per CTA (fewer when K is short)
inline constexpr int kMaxSplits = 8;       // CTAs per cluster splitting K (portable cluster limit)
// The SMs a plan assumes where no GPU is usable (a program printing its plan without one): an H100 SXM's.
inline constexpr int kSmsWithoutGpu = 132;

// How the weights are loaded: the cache policy experiment of the README.
enum class ALoad { kCached, kNoAllocate, kNoAllocatePrefetch256 };

// How E2M1 products are formed: FP16 values and HFMA2 (decode8), or signed 8-bit integers (twice the
// value, exact) and dp4a (lookup4 below). Where the hardware converts E2M1 (sm_100a), always FP16.
enum class Products { kHalf2, kDp4a };

// How the warps of a CTA share the work (the launch plan's experiment on K's steps):
//  kSplitK:    the stage's plan: the CTA's warps (up to 4, as many as K has steps) take interleaved
//              steps of K of the same rows. Where the steps are not a multiple of the warps (7 steps of
//              1024 values over 4 warps at K = 7168: 2/2/2/1) a warp idles while the CTA waits.
//  kBalancedK: the same, but the warps per CTA are chosen so that they divide the steps (7 warps for
//              7 steps, up to kMaxWarps), preferring a warp count that keeps every CTA resident at once.
//  kOwnRows:   no K split over warps: every warp owns its own kGroups row groups over all of K, a CTA
//              holds up to kMaxWarps such warps (more rows per CTA). No idle warp whatever K is, and no
//              cross-warp reduction: each warp writes its rows (a cluster still splits K where M * L
//              leaves most SMs idle).
enum class WarpPlan { kSplitK, kBalancedK, kOwnRows };

// One kernel configuration. kChunk: bytes of each row a lane reads per step (16, or 32 where one
// load instruction moves 32 bytes: sm_100a).
// kMinCtas: CTAs of kMaxWarps warps that must fit on an SM (__launch_bounds__), which caps the
// registers per thread (65536 / (32 * kMaxWarps * kMinCtas)). kOneWave: the launch plan gives CTAs
// fewer warps where that lets every CTA be resident at once (LaunchPlan). kWarpPlan, kMaxWarps: how the
// warps of a CTA share the work, and at most how many a CTA has (WarpPlan).
template <int kChunk_, int kGroups_, ALoad kALoad_, int kMinCtas_ = 1, bool kOneWave_ = true,
          Products kProducts_ = Products::kDp4a, WarpPlan kWarpPlan_ = WarpPlan::kSplitK, int kMaxWarps_ = 4>
struct Config {
  static constexpr int kChunk = kChunk_;
#if GEMM_HAS_E2M1_CVT
  static constexpr Products kProducts = Products::kHalf2;
#else
  static constexpr Products kProducts = kProducts_;
#endif
  static constexpr int kMinCtas = kMinCtas_;
  static constexpr bool kOneWave = kOneWave_;
  static constexpr int kGroups = kGroups_;   // 8-row groups per CTA
  static constexpr ALoad kALoad = kALoad_;
  static constexpr int kRows = kRowsPerGroup * kGroups;
  static constexpr int kWords = kChunk / 4;          // 32-bit words of a chunk: 8 E2M1 values each
  static constexpr int kBlocks = kChunk / 8;         // 16-value scale blocks per chunk
  static constexpr int kStepBytes = kLanes * kChunk; // bytes of one row a warp covers per step
  static constexpr WarpPlan kWarpPlan = kWarpPlan_;
  static constexpr int kMaxWarps = kMaxWarps_;       // warps per CTA at most (__launch_bounds__)
  static_assert(kChunk == 16 || kChunk == 32, "a chunk is one 16- or 32-byte load");
  // kOwnRows: a CTA's warps take 1, 2 or 4 consecutive row sets, so the CTA's groups (a power of two,
  // at most 8) lie in one 128-row block that holds a row below M: every scale read stays inside SFA.
  static_assert(kWarpPlan != WarpPlan::kOwnRows || kMaxWarps == 1 || kMaxWarps == 2 || kMaxWarps == 4,
                "own-rows CTAs have 1, 2 or 4 warps");
  static_assert(kMaxWarps >= 1 && kMaxWarps <= 8, "at most 8 warps per CTA (shared sums, launch bounds)");
};

// ---- Loads ------------------------------------------------------------------------------------------

struct Chunk16 {
  uint32_t w[4];
};

// 16 bytes of A. ld.global.nc: read-only path. L1::no_allocate: the bytes are used once, so they
// should not evict the vector and the scales from L1. L2::256B: ask L2 to fetch 256-byte lines.
template <ALoad kind>
__device__ __forceinline__ Chunk16 load_a16(const uint8_t* p) {
  Chunk16 c;
  if constexpr (kind == ALoad::kCached) {
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(c.w[0]), "=r"(c.w[1]), "=r"(c.w[2]), "=r"(c.w[3]) : "l"(p));
  } else if constexpr (kind == ALoad::kNoAllocate) {
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(c.w[0]), "=r"(c.w[1]), "=r"(c.w[2]), "=r"(c.w[3]) : "l"(p));
  } else {
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(c.w[0]), "=r"(c.w[1]), "=r"(c.w[2]), "=r"(c.w[3]) : "l"(p));
  }
  return c;
}

// 32 bytes of A from a 32-byte aligned address: one ld.global.v8.b32 on sm_100a (256-bit loads are
// new there; common/ptx/ld.cuh, which checks its preconditions in the precondition build), two
// 16-byte loads elsewhere.
template <ALoad kind>
__device__ __forceinline__ void load_a32(const uint8_t* p, uint32_t (&w)[8]) {
#if GEMM_HAS_E2M1_CVT
  if constexpr (kind == ALoad::kCached) {
    gemm::ptx::ld_global_nc_v8_b32(p, w);
  } else if constexpr (kind == ALoad::kNoAllocate) {
    gemm::ptx::ld_global_nc_L1_no_allocate_v8_b32(p, w);
  } else {
    gemm::ptx::ld_global_nc_L1_no_allocate_L2_256B_v8_b32(p, w);
  }
#else
  const Chunk16 lo = load_a16<kind>(p), hi = load_a16<kind>(p + 16);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    w[i] = lo.w[i];
    w[4 + i] = hi.w[i];
  }
#endif
}

// The vector and the scales: read through L1 (ld.global.nc), where the CTAs of an SM share them.
__device__ __forceinline__ uint4 load_cached16(const uint8_t* p) { return __ldg(reinterpret_cast<const uint4*>(p)); }
__device__ __forceinline__ uint32_t load_cached4(const uint8_t* p) { return __ldg(reinterpret_cast<const uint32_t*>(p)); }
__device__ __forceinline__ uint32_t load_cached2(const uint8_t* p) { return __ldg(reinterpret_cast<const uint16_t*>(p)); }

// ---- E2M1 decode ------------------------------------------------------------------------------------

// The FP16 of an E2M1 value up to a constant factor: what decode8 returns, times kDecodeFactor,
// is the value. On sm_100a the hardware converts exactly (factor 1; so does the precondition build's
// Hopper copy of the instruction); Hopper's bit arithmetic yields value * 2^-14 (factor 2^14), see decode8.
#if GEMM_HAS_E2M1_CVT
inline constexpr float kDecodeFactor = 1.0f;
#else
inline constexpr float kDecodeFactor = 16384.0f;
#endif

// Eight E2M1 values (one 32-bit word, value 2i in the low nibble of byte i) -> four half2.
// Which two values share a half2 differs between the two paths; A and B go through the same
// function, so their products pair up correctly either way.
__device__ __forceinline__ void decode8(uint32_t w, __half2 (&h)[4]) {
#if GEMM_HAS_E2M1_CVT
  // One cvt per byte: byte i -> (value 2i, value 2i+1), low nibble in the low half.
  uint32_t r[4];
  gemm::ptx::cvt_rn_f16x2_e2m1x2_bytes(w, r);
#pragma unroll
  for (int i = 0; i < 4; ++i) h[i] = *reinterpret_cast<__half2*>(&r[i]);
#else
  // An E2M1 code s|e1 e0|m placed as the high byte s000 e1e0m0 of an FP16 (sign at bit 15, e1 e0
  // as the two low exponent bits, m as the top mantissa bit) is that value times 2^-14, exactly,
  // including the subnormal code 0001 (0.5 -> 2^-15). For every byte of w, even nibble:
  //   even = (sign bit 3 -> bit 7) | (magnitude bits 0-2 -> bits 1-3)
  //   odd  = (sign bit 7 stays)    | (magnitude bits 4-6 -> bits 1-3)
  const uint32_t even = ((w << 4) & 0x80808080u) | ((w << 1) & 0x0E0E0E0Eu);
  const uint32_t odd = (w & 0x80808080u) | ((w >> 3) & 0x0E0E0E0Eu);
  // prmt with a zero second operand (selector digit 4 = a zero byte) moves two of those bytes into
  // the high bytes of two halves: selector 0x1404 -> bytes {0, x.b0, 0, x.b1}, 0x3424 -> {0, x.b2, 0, x.b3}.
  uint32_t r[4];
  asm("prmt.b32 %0, %1, 0, 0x1404;" : "=r"(r[0]) : "r"(even));  // values 0, 2
  asm("prmt.b32 %0, %1, 0, 0x3424;" : "=r"(r[1]) : "r"(even));  // values 4, 6
  asm("prmt.b32 %0, %1, 0, 0x1404;" : "=r"(r[2]) : "r"(odd));   // values 1, 3
  asm("prmt.b32 %0, %1, 0, 0x3424;" : "=r"(r[3]) : "r"(odd));   // values 5, 7
#pragma unroll
  for (int i = 0; i < 4; ++i) h[i] = *reinterpret_cast<__half2*>(&r[i]);
#endif
}

// Two block scales (low byte first) -> two floats, by the hardware conversion (sm_89 and later).
// A block scale is unsigned E4M3, as the tensor cores and cuBLAS read it: bit 7 is ignored, so it is
// cleared before the conversion, which would read it as a sign (common/formats.h, ue4m3_to_float).
__device__ __forceinline__ float2 decode_scales2(uint32_t two_bytes) {
  constexpr uint16_t kNoSignBits = 0x7F7F;
  uint32_t h2;
  const uint16_t in = uint16_t(two_bytes) & kNoSignBits;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(in));
  return __half22float2(*reinterpret_cast<__half2*>(&h2));
}

// Four E2M1 codes (the low four nibbles of `sel`) -> four bytes, by one byte permute (prmt) that
// reads its bytes from a table of the eight magnitudes times two, 0 1 2 3 4 6 8 12 (exact integers).
// prmt's selector nibble is the code itself: bits 0-2 pick the table byte, and bit 3 (the E2M1 sign)
// switches prmt to "replicate the picked byte's top bit", which is 0 for every table byte. So
// lookup4(w) holds the magnitudes of w's positive codes and 0 for its negative ones, and
// lookup4(w ^ kSignBits) the reverse: sum(a * b) = dp4a(lookup4(a), b) - dp4a(lookup4(a ^ kSignBits), b).
inline constexpr uint32_t kTwiceE2m1Lo = 0x03020100u;  // magnitudes 0, 0.5, 1, 1.5 times two
inline constexpr uint32_t kTwiceE2m1Hi = 0x0C080604u;  // magnitudes 2, 3, 4, 6 times two
inline constexpr uint32_t kSignBits = 0x88888888u;     // bit 3 of every nibble
// `lo` is kTwiceE2m1Lo held in a register (table_register): prmt takes its first table word only
// from a register, and a constant the compiler can see it copies into one before every prmt.
__device__ __forceinline__ uint32_t lookup4(uint32_t lo, uint32_t sel) {
  uint32_t r;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(lo), "n"(kTwiceE2m1Hi), "r"(sel));
  return r;
}
__device__ __forceinline__ uint32_t table_register() {
  uint32_t lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return kTwiceE2m1Lo + (lane >> 5);  // lane < 32: the constant, in a per-lane register the compiler keeps
}
// The vector's side, once per lane and step: four codes -> four signed bytes, twice the values.
// Bytes of lookup4(w) and lookup4(w ^ kSignBits) are never both nonzero, so the byte-wise
// difference needs no borrow: __vsub4 is exact here.
__device__ __forceinline__ uint32_t signed4(uint32_t lo, uint32_t w) {
  return __vsub4(lookup4(lo, w), lookup4(lo, w ^ kSignBits));
}

// ---- The kernel -------------------------------------------------------------------------------------

// Row `r` (0..7) of 8-row group `group`: rows 2p, 2p+1, 2p+32, 2p+33, ... of 128-row block b. Its
// scales live in line 2p + (r & 1) of each 512-byte tile, word r / 2 (common/sf_layout.h).
GEMM_HD int64_t group_row(int64_t group, int r) {
  return (group / kGroupsPer128) * gemm::kSfTileRows + 32 * (r / 2) + 2 * (group % kGroupsPer128) + (r & 1);
}

// Sums v over the 32 lanes for 8 values at once (a reduce-scatter): after the three halving steps
// lane l holds row ((l >> 2) & 7) summed over 8 lanes, the last two steps finish it. 9 shuffles
// instead of 40; the order of additions is fixed, so the result is the same every run.
__device__ __forceinline__ float reduce8(const float (&v)[8], int lane) {
  float a[4], b[2];
  const bool hi16 = lane & 16, hi8 = lane & 8, hi4 = lane & 4;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float send = hi16 ? v[i] : v[i + 4], keep = hi16 ? v[i + 4] : v[i];
    a[i] = keep + __shfl_xor_sync(0xFFFFFFFFu, send, 16);
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const float send = hi8 ? a[i] : a[i + 2], keep = hi8 ? a[i + 2] : a[i];
    b[i] = keep + __shfl_xor_sync(0xFFFFFFFFu, send, 8);
  }
  const float send = hi4 ? b[0] : b[1], keep = hi4 ? b[1] : b[0];
  float s = keep + __shfl_xor_sync(0xFFFFFFFFu, send, 4);
  s += __shfl_xor_sync(0xFFFFFFFFu, s, 2);
  s += __shfl_xor_sync(0xFFFFFFFFu, s, 1);
  return s;  // row (lane >> 2) & 7: bit 4 of the lane picks the upper four, bit 3 the upper two, bit 2 the upper one
}

// The A chunk of every row of one step: `kRows` loads issued back to back (the bytes in flight).
// Row r lies row_k[r] rows below the lane's pointer (0 for a row past M, which rereads the first
// row and whose sum is never written): one 32 x 32 -> 64-bit multiply-add per row, no condition.
// A 32-byte chunk is one load where every chunk of the launch starts 32-byte aligned (`aligned32`),
// else two 16-byte loads.
template <class Cfg>
__device__ __forceinline__ void load_rows(uint32_t (&a)[Cfg::kRows][Cfg::kWords], const uint8_t* a_ptr,
                                          const uint32_t (&row_k)[Cfg::kRows], uint32_t row_bytes, bool second_half,
                                          bool aligned32) {
#pragma unroll
  for (int r = 0; r < Cfg::kRows; ++r) {
    const uint8_t* p = a_ptr + uint64_t(row_k[r]) * row_bytes;
    if constexpr (Cfg::kChunk == 16) {
      const Chunk16 c = load_a16<Cfg::kALoad>(p);
#pragma unroll
      for (int i = 0; i < Cfg::kWords; ++i) a[r][i] = c.w[i % 4];
    } else {
      uint32_t w[8] = {};
      if (second_half && aligned32) {
        load_a32<Cfg::kALoad>(p, w);
      } else {  // not 32-byte aligned, or only its first 16 bytes inside the row (K a multiple of 32, not 64)
        const Chunk16 lo = load_a16<Cfg::kALoad>(p);
        const Chunk16 hi = second_half ? load_a16<Cfg::kALoad>(p + 16) : Chunk16{};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          w[i] = lo.w[i];
          w[4 + i] = hi.w[i];
        }
      }
#pragma unroll
      for (int i = 0; i < Cfg::kWords; ++i) a[r][i] = w[i % 8];
    }
  }
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kMaxWarps * kLanes, Cfg::kMinCtas)
nvfp4_gemv(int M, int K, int splits, const uint8_t* __restrict__ A, const uint8_t* __restrict__ SFA,
           const uint8_t* __restrict__ B, const uint8_t* __restrict__ SFB, float alpha, __half* __restrict__ C) {
  constexpr int kRows = Cfg::kRows, kChunk = Cfg::kChunk, kWords = Cfg::kWords, kBlocks = Cfg::kBlocks;
  constexpr bool kDp4a = Cfg::kProducts == Products::kDp4a;
  constexpr bool kOwnRows = Cfg::kWarpPlan == WarpPlan::kOwnRows;
  const int warps = blockDim.x / kLanes, warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  // kOwnRows: warp w owns row set w of the CTA over all of K; otherwise the warps split K of one set.
  const int k_warps = kOwnRows ? 1 : warps, k_warp = kOwnRows ? 0 : warp;
  const int split = blockIdx.x % splits;  // the rank in the cluster: clusters are consecutive CTAs in x
  const int64_t first_group = int64_t(blockIdx.x / splits) * Cfg::kGroups * (kOwnRows ? warps : 1);
  const int64_t warp_group = first_group + (kOwnRows ? warp * Cfg::kGroups : 0);  // this warp's first group
  const int64_t batch = blockIdx.y;
  const uint32_t row_bytes = uint32_t(K / 2);  // K < 2^31
  const int64_t first_row = group_row(first_group, 0);
  if (first_row >= M) return;  // a whole cluster leaves together: its CTAs share first_group
  // kOwnRows: a warp with no row below M (the CTA's last warps in the last 128-row block) loads nothing.
  const uint32_t k_end = (kOwnRows && group_row(warp_group, 0) >= M) ? 0u : row_bytes;

  // Every address is a per-lane pointer advanced by a constant each step, plus (for A) a row offset
  // that is the same for the whole CTA: no 64-bit address arithmetic per row and step.
  uint32_t row_k[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int64_t m = group_row(warp_group + r / kRowsPerGroup, r % kRowsPerGroup);
    row_k[r] = m < M ? uint32_t(m - first_row) : 0u;
  }
  const int64_t tiles_per_block = gemm::sf_padded_cols(K) / gemm::kSfTileCols;  // 512-byte tiles per 128 rows
  // sm_100a's 32-byte load needs a 32-byte aligned address (common/ptx/ld.cuh). A lane's chunk starts a
  // multiple of 32 bytes into its row, so every chunk is aligned exactly when A is and a row is whole
  // 32-byte units (K a multiple of 64). The contract promises less: A 16-byte aligned, K a multiple of
  // 32 (every other row then starts 16 bytes off); such launches load each chunk in two halves.
  const bool aligned32 = kChunk == 32 && (reinterpret_cast<uintptr_t>(A) | row_bytes) % gemm::ptx::kV8B32Bytes == 0;

  // Steps: kStepBytes of every row; this warp takes steps warp + split * warps, + warps * splits, ...
  // The scale tile of a chunk: 64 values of k = 32 bytes of a row per tile; a 16-byte chunk is half a
  // tile, and which half (sf_byte) is the same in every step, because a step is 16 tiles.
  const int64_t first_step = k_warp + int64_t(split) * k_warps, step_bytes = int64_t(k_warps) * splits * Cfg::kStepBytes;
  int64_t byte = first_step * Cfg::kStepBytes + int64_t(lane) * kChunk;  // this lane's first byte of each row
  const int sf_byte = (kChunk == 16) ? int(byte / 16) % 2 * 2 : 0;
  const int64_t sf_step = step_bytes / 32 * gemm::kSfTileBytes;
  const uint8_t* a_ptr = A + (batch * M + first_row) * int64_t(row_bytes) + byte;
  const uint8_t* b_ptr = B + batch * int64_t(row_bytes) + byte;
  const uint8_t* sfb_ptr = SFB + batch * gemm::sf_batch_bytes(1, K) + byte / 32 * gemm::kSfTileBytes + sf_byte;
  const uint8_t* sfa_ptr[Cfg::kGroups];  // lines 2p and 2p+1 of the tile (one 32-byte sector) per 8-row group
#pragma unroll
  for (int g = 0; g < Cfg::kGroups; ++g) {
    const int64_t grp = warp_group + g;
    sfa_ptr[g] = SFA + batch * gemm::sf_batch_bytes(M, K) +
                 ((grp / kGroupsPer128) * tiles_per_block + byte / 32) * gemm::kSfTileBytes + (grp % kGroupsPer128) * 2 * 16;
  }

  float acc[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.0f;
  const uint32_t table_lo = kDp4a ? table_register() : 0u;

#pragma unroll 1
  for (; byte < k_end; byte += step_bytes, a_ptr += step_bytes, b_ptr += step_bytes, sfb_ptr += sf_step) {
    // kChunk = 32 may find only its first 16 bytes inside the row (K is a multiple of 32, not 64).
    const bool second_half = kChunk == 16 || byte + 16 < row_bytes;

    // 1. Loads: the A chunk of every row first (the bytes in flight), then the vector and scales.
    uint32_t a[kRows][kWords];
    load_rows<Cfg>(a, a_ptr, row_k, row_bytes, second_half, aligned32);
    uint32_t b_words[kWords];
    {
      const uint4 lo = load_cached16(b_ptr);
      const uint4 hi = (kChunk == 32 && second_half) ? load_cached16(b_ptr + 16) : make_uint4(0, 0, 0, 0);
      const uint32_t all[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
      for (int i = 0; i < kWords; ++i) b_words[i] = all[i];
    }
    // The vector's scales: row 0 of its blocked layout, line 0 of each tile.
    const uint32_t sfb_bytes = kChunk == 16 ? load_cached2(sfb_ptr) : load_cached4(sfb_ptr);
    // A's scales: per 8-row group, lines 2p and 2p+1 of the tile (one 32-byte sector): word q of
    // line t holds the four scales of row 2q + t of the group.
    uint4 sfa_line[Cfg::kGroups][2];
#pragma unroll
    for (int g = 0; g < Cfg::kGroups; ++g) {
      sfa_line[g][0] = load_cached16(sfa_ptr[g]);
      sfa_line[g][1] = load_cached16(sfa_ptr[g] + 16);
    }

    // 2. The vector chunk, decoded once for all rows, and its block scales. FP16 products: values
    //    times kDecodeFactor on Hopper (exact, see decode8), undone by the vector's factor. Integer
    //    products: signed bytes of twice the value, so a block's dot product is 4x the true one,
    //    undone likewise.
    __half2 b[kDp4a ? 1 : kWords][4];
    uint32_t b_int[kDp4a ? kWords : 1][2];
    if constexpr (kDp4a) {
#pragma unroll
      for (int i = 0; i < kWords; ++i) {
        b_int[i][0] = signed4(table_lo, b_words[i]);
        b_int[i][1] = signed4(table_lo, b_words[i] >> 16);
      }
    } else {
      const __half2 undo = __float2half2_rn(kDecodeFactor);
#pragma unroll
      for (int i = 0; i < kWords; ++i) {
        decode8(b_words[i], b[i]);
#pragma unroll
        for (int j = 0; j < 4; ++j) b[i][j] = __hmul2(b[i][j], undo);
      }
    }
    constexpr float kVectorFactor = kDp4a ? 0.25f : kDecodeFactor;
    float sb[kBlocks];
#pragma unroll
    for (int j = 0; j < kBlocks; j += 2) {
      const float2 s = decode_scales2(sfb_bytes >> (8 * j));
      sb[j] = s.x * kVectorFactor;
      sb[j + 1] = s.y * kVectorFactor;
    }

    // 3. Per row: 16 products at a time summed exactly (in FP16 or in integers: see the README),
    //    times the two scales in FP32.
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const uint4& line = sfa_line[r / kRowsPerGroup][r % 2];
      const int q = (r % kRowsPerGroup) / 2;
      const uint32_t word = q == 0 ? line.x : q == 1 ? line.y : q == 2 ? line.z : line.w;
      const uint32_t sfa_bytes = word >> (8 * sf_byte);
#pragma unroll
      for (int j = 0; j < kBlocks; j += 2) {
        const float2 sa = decode_scales2(sfa_bytes >> (8 * j));
#pragma unroll
        for (int jj = 0; jj < 2; ++jj) {
          const int blk = j + jj;
          if (kChunk == 32 && blk >= 2 && !second_half) continue;  // past K: no data, scales undefined
          float sum[2];
          if constexpr (kDp4a) {
            // A's positive values against the vector, its negative values' magnitudes likewise: the
            // block's dot product is the difference (lookup4).
            int pos = 0, neg = 0;
#pragma unroll
            for (int i = 0; i < 2; ++i) {
              const uint32_t w = a[r][2 * blk + i], x = w ^ kSignBits;
              const uint32_t* v = b_int[2 * blk + i];
              // w >> 16 (the upper four codes) as a multiply-high, which runs beside prmt on the
              // multiply pipe (the ALU's pipe is the busy one: README).
              pos = __dp4a(int(lookup4(table_lo, w)), int(v[0]), pos);
              neg = __dp4a(int(lookup4(table_lo, x)), int(v[0]), neg);
              pos = __dp4a(int(lookup4(table_lo, __umulhi(w, 0x10000u))), int(v[1]), pos);
              neg = __dp4a(int(lookup4(table_lo, __umulhi(x, 0x10000u))), int(v[1]), neg);
            }
            sum[0] = float(pos - neg);
            sum[1] = 0.0f;
          } else {
            __half2 h[2][4];
            decode8(a[r][2 * blk], h[0]);
            decode8(a[r][2 * blk + 1], h[1]);
            __half2 p = __hmul2(h[0][0], b[2 * blk][0]);
#pragma unroll
            for (int i = 1; i < 8; ++i) p = __hfma2(h[i / 4][i % 4], b[2 * blk + i / 4][i % 4], p);
            const float2 pf = __half22float2(p);
            sum[0] = pf.x;
            sum[1] = pf.y;
          }
          const float s = (jj == 0 ? sa.x : sa.y) * sb[blk];
          acc[r] = fmaf(sum[0], s, acc[r]);
          if constexpr (!kDp4a) acc[r] = fmaf(sum[1], s, acc[r]);
        }
      }
    }
#pragma unroll
    for (int g = 0; g < Cfg::kGroups; ++g) sfa_ptr[g] += sf_step;
  }

  // 4. Reductions, each in a fixed order: lanes (reduce8), warps (shared memory), then the CTAs of
  //    the cluster (distributed shared memory, rank 0 adds the ranks in order). kOwnRows: no warps to
  //    add; without a cluster each warp writes its rows straight from the lanes.
  constexpr int kCtaRows = kOwnRows ? Cfg::kMaxWarps * kRows : kRows;  // the rows a CTA owns, at most
  __shared__ float warp_sums[kOwnRows ? 1 : Cfg::kMaxWarps][kRows];
  __shared__ float cta_sums[kCtaRows];
  const int cta_rows = kOwnRows ? warps * kRows : kRows;
#pragma unroll
  for (int g = 0; g < Cfg::kGroups; ++g) {
    float v[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = acc[g * kRowsPerGroup + i];
    const float s = reduce8(v, lane);
    if constexpr (kOwnRows) {
      if (lane % 4 == 0) {
        if (splits > 1) {
          cta_sums[(warp * Cfg::kGroups + g) * kRowsPerGroup + (lane >> 2)] = s;
        } else {
          const int64_t m = group_row(warp_group + g, lane >> 2);
          if (m < M) C[batch * M + m] = __float2half_rn(s * alpha);
        }
      }
    } else {
      if (lane % 4 == 0) warp_sums[warp][g * kRowsPerGroup + (lane >> 2)] = s;
    }
  }
  if constexpr (kOwnRows) {
    if (splits == 1) return;  // written above; no other warp waits on this one
  } else {
    __syncthreads();
    if (threadIdx.x < kRows) {
      float s = warp_sums[0][threadIdx.x];
      for (int w = 1; w < warps; ++w) s += warp_sums[w][threadIdx.x];
      cta_sums[threadIdx.x] = s;
    }
  }
  if (splits > 1) {
    gemm::ptx::cluster_sync();  // every rank's cta_sums written and visible cluster-wide
    if (split == 0 && threadIdx.x < cta_rows) {
      const uint32_t local = uint32_t(__cvta_generic_to_shared(&cta_sums[threadIdx.x]));
      float s = cta_sums[threadIdx.x];
      for (int rank = 1; rank < splits; ++rank)
        s += __uint_as_float(gemm::ptx::ld_cluster_u32(gemm::ptx::map_to_rank(local, uint32_t(rank))));
      cta_sums[threadIdx.x] = s;
    }
    gemm::ptx::cluster_sync();  // no rank leaves (freeing its shared memory) before rank 0 has read it
  } else {
    __syncthreads();
  }
  if (split == 0 && threadIdx.x < cta_rows) {
    const int64_t m = group_row(first_group + threadIdx.x / kRowsPerGroup, threadIdx.x % kRowsPerGroup);
    if (m < M) C[batch * M + m] = __float2half_rn(cta_sums[threadIdx.x] * alpha);
  }
}

// ---- Launch -----------------------------------------------------------------------------------------

struct LaunchPlan {
  int64_t groups = 0;  // 8-row groups that hold at least one row
  int ctas_per_batch = 0;
  int splits = 1;      // CTAs per cluster, each taking 1/splits of K
  int warps = 1;
  bool own_rows = false;  // WarpPlan::kOwnRows: each warp its own rows over all of K (or of the split's K)
  std::string describe() const;
};

inline std::string LaunchPlan::describe() const {
  return std::to_string(ctas_per_batch) + " CTAs per batch (" + std::to_string(groups) + " row groups x " +
         std::to_string(splits) + " K-split" + (splits > 1 ? " cluster" : "") + "), " + std::to_string(warps) +
         (own_rows ? " warps each, every warp its own rows (no K split over warps)" : " warps each");
}

// CTAs of `warps` warps of this kernel resident per SM: the GPU's answer, else (no GPU: the CPU
// tests) what the register cap of kMinCtas implies.
template <class Cfg>
int ctas_per_sm(int warps);

// Splits K over a cluster only when M * L leaves most SMs idle; the warps per CTA follow K. Where all
// CTAs could be resident at once with fewer (but at least 2) warps each, and not with kMaxWarps, it
// takes fewer: a wave and a fraction leaves the last fraction streaming with a fraction of the
// GPU's loads in flight (README, "Registers and waves").
//
// WarpPlan::kBalancedK: the warps per CTA (up to Cfg::kMaxWarps) are the count w that, first, keeps every
// CTA resident at once (kOneWave), then wastes the fewest warp-steps (K's s steps per split over w warps
// take ceil(s / w) steps each: s / (w * ceil(s / w)) of the warps' time is used), then the most warps,
// at least 2 where K has 2 steps: 7 warps for 7 steps, where the stage's plan takes 4 (2/2/2/1 steps).
// WarpPlan::kOwnRows: each warp owns kGroups groups over all of K; a CTA holds kMaxWarps such warps
// (fewer, a power of two, where the groups are fewer). A cluster splits K, in powers of two, while
// twice the CTAs would still be resident at once (every warp waits on memory alone, so the grid's
// warps, not its CTAs, are its bytes in flight).
template <class Cfg>
LaunchPlan plan(int M, int K, int L, int sm_count) {
  LaunchPlan p;
  // Groups of the last 128-row block with no row below M are never launched (when that block holds
  // fewer than 32 rows, only groups p with 2p < rows left can hold one).
  const int64_t full_blocks = M / gemm::kSfTileRows, rest = M % gemm::kSfTileRows;
  p.groups = full_blocks * kGroupsPer128 + (rest == 0 ? 0 : rest >= 32 ? kGroupsPer128 : (rest + 1) / 2);
  const int64_t steps = (int64_t(K / 2) + Cfg::kStepBytes - 1) / Cfg::kStepBytes;
  int64_t ctas = (p.groups + Cfg::kGroups - 1) / Cfg::kGroups;
  if constexpr (Cfg::kWarpPlan == WarpPlan::kOwnRows) {
    const int64_t sets = ctas;  // row sets of kGroups groups, one per warp
    p.own_rows = true;
    p.warps = Cfg::kMaxWarps;
    while (p.warps > 1 && p.warps / 2 >= sets) p.warps /= 2;
    ctas = (sets + p.warps - 1) / p.warps;
    const int64_t resident = int64_t(ctas_per_sm<Cfg>(p.warps)) * sm_count;
    while (p.splits < kMaxSplits && ctas * L * p.splits * 2 <= resident && steps >= 2 * p.splits * 2) p.splits *= 2;
  } else {
    while (p.splits < kMaxSplits && ctas * L * p.splits < 2 * int64_t(sm_count) && steps >= 2 * p.splits * 2)
      p.splits *= 2;
    const int64_t total = ctas * L * p.splits;
    if constexpr (Cfg::kWarpPlan == WarpPlan::kBalancedK) {
      const int64_t s = (steps + p.splits - 1) / p.splits;
      double best_used = -1.0;
      bool best_fits = false;
      // At least 2 warps where K has 2 steps, as the stage's one-wave rule (1-warp CTAs are kOwnRows' plan).
      for (int w = s >= 2 ? 2 : 1; w <= int(std::min<int64_t>(Cfg::kMaxWarps, std::max<int64_t>(s, 1))); ++w) {
        const bool fits = Cfg::kOneWave && total <= int64_t(ctas_per_sm<Cfg>(w)) * sm_count;
        const double used = double(s) / double(w * ((s + w - 1) / w));
        if ((fits && !best_fits) || (fits == best_fits && used >= best_used)) {  // ties: more warps
          p.warps = w;
          best_used = used;
          best_fits = fits;
        }
      }
    } else {
      p.warps = int(std::min<int64_t>(Cfg::kMaxWarps, (steps + p.splits - 1) / p.splits));
      if (Cfg::kOneWave && total > int64_t(ctas_per_sm<Cfg>(p.warps)) * sm_count)
        for (int w = p.warps / 2; w >= 2; w /= 2)
          if (total <= int64_t(ctas_per_sm<Cfg>(w)) * sm_count) {
            p.warps = w;
            break;
          }
    }
  }
  if (ctas * p.splits > INT_MAX)
    throw std::invalid_argument("stage09: M = " + std::to_string(M) + " needs more CTAs than a grid holds");
  p.ctas_per_batch = int(ctas * p.splits);
  return p;
}

template <class Cfg>
void launch_config(const gemm::Nvfp4GemvArgs& args, cudaStream_t stream) {
  gemm::validate_gemv(args);
  const gemm::GpuInfo& gpu = gemm::gpu_info();
  const LaunchPlan p = plan<Cfg>(args.M, args.K, args.L, gpu.usable ? gpu.sm_count : kSmsWithoutGpu);
  // A CTA's groups must be whole groups of the grid: ctas_per_batch counts clusters of `splits`.
  gemm::launch_kernel(nvfp4_gemv<Cfg>,
                      {dim3(unsigned(p.ctas_per_batch), unsigned(args.L)), unsigned(p.warps * kLanes), 0, stream,
                       dim3(unsigned(p.splits))},
                      args.M, args.K, p.splits, args.A, args.SFA, args.B, args.SFB, args.alpha, args.C);
}

template <class Cfg>
int ctas_per_sm(int warps) {
  static int cached[Cfg::kMaxWarps + 1] = {};  // per warp count; a benign race writes the same value
  if (cached[warps] == 0) {
    int n = 0;
    if (!gemm::gpu_info().usable ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, nvfp4_gemv<Cfg>, warps * kLanes, 0) != cudaSuccess || n < 1) {
      (void)cudaGetLastError();
      n = std::max(1, Cfg::kMinCtas) * Cfg::kMaxWarps / warps;
    }
    cached[warps] = n;
  }
  return cached[warps];
}

// ---- A variant: the dot products on the tensor cores (mma.sync, s8) --------------------------------
//
// The integer path above spends per 8 values of a row 4 prmt lookups, their 3 selectors (xor, 2 shifts)
// and 4 dp4a, and per block an IADD and an I2FP. Here the same signed bytes (lookup4 of a row's
// positive and negative codes, signed4 of the vector) go to the tensor cores,
// `mma.sync.m16n8k32.s32.s8.s8.s32`: one MMA takes 8 values of 2 rows from every lane, so the 4 dp4a
// per 8 values of a row become 1 MMA (half per sign), off the FMA-heavy pipe. (The FP8 form of the
// same MMA, which would need no sign split, is not native on sm_90: ptxas converts its operands to
// FP16 and runs HMMA.)
//
// Layout. Lane (g, t) = (lane / 4, lane % 4) owns the 8 rows of one row group (g) and 32 bytes of each
// row per step (bytes 32t..32t+31 of a 128-byte step: one scale tile, 4 blocks). In an MMA, rows g and
// g + 8 of A are the lane's two rows of a pair, its k = 4t..4t+3 and 16+4t..16+4t+3 the low and the
// high half-word of one word, and column n of B is held by lanes (n, *). A lane puts its vector into B
// only when t == g / 2 (lanes (2t, t) and (2t+1, t)), zero elsewhere, so D[g][2t] = D[g][2t+1] =
// A(lane g,t) . B(lane 2t,t): every lane with the same t holds the same k range, so that is the lane's
// own dot product, unmixed with the other lanes' blocks, whose scales differ. Lane (g, t) reads it as
// c0 (row g: the pair's first row) and c2 (row g + 8: the second).
template <int kMinCtas_, int kMaxWarps_ = 8>
struct MmaConfig {
  static constexpr int kMinCtas = kMinCtas_;   // CTAs of kMaxWarps warps per SM (__launch_bounds__)
  static constexpr int kMaxWarps = kMaxWarps_;
  static constexpr int kGroups = 8;            // 8-row groups per CTA: one per lane group g
  static constexpr int kRows = kRowsPerGroup * kGroups;
  static constexpr int kLaneBytes = 32;        // bytes of each of its rows a lane reads per step
  static constexpr int kStepBytes = 4 * kLaneBytes;  // 4 lanes (t) per row
};

// D = A . B + C, 16 x 8 x 32 signed bytes, s32 accumulators (PTX ISA, mma.m16n8k32 fragments).
__device__ __forceinline__ void mma_s8(uint32_t (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                       uint32_t b1, const uint32_t (&c)[4]) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
}

// signed4 in three instructions: the bytes of lookup4(w) and lookup4(w ^ kSignBits) are at most 12 and
// never both nonzero, so pos + 0x80 - neg per byte lies in 116..140 (no carry or borrow between bytes),
// and flipping bit 7 back leaves pos - neg as a signed byte.
__device__ __forceinline__ uint32_t signed4_fast(uint32_t lo, uint32_t w) {
  constexpr uint32_t kHigh = 0x80808080u;
  return (lookup4(lo, w) + kHigh - lookup4(lo, w ^ kSignBits)) ^ kHigh;
}

// Four E4M3 scales (bit 7 already cleared) -> four floats.
__device__ __forceinline__ void decode_scales4(uint32_t word, float (&s)[4]) {
  uint32_t h2[2];
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2[0]) : "h"(uint16_t(word)));
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2[1]) : "h"(uint16_t(word >> 16)));
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const float2 f = __half22float2(*reinterpret_cast<__half2*>(&h2[i]));
    s[2 * i] = f.x;
    s[2 * i + 1] = f.y;
  }
}

// One step of one warp: 32 bytes of each of the lane's 8 rows. kTail: the step reaches past the row
// end (K is a multiple of 32, the step 128 bytes of a row): a lane's chunk or its upper half may lie
// past it; those halves are read at the row's first bytes and weighed by zero (vector words and scales
// zeroed, so no undefined scale byte of the padding reaches a product).
template <bool kTail>
__device__ __forceinline__ void mma_step(float (&acc)[8], int64_t byte, uint32_t row_bytes, const uint8_t* a_base,
                                         const uint32_t (&row_k)[8], const uint8_t* b_base, const uint8_t* sfb_base,
                                         const uint8_t* sfa_base, bool holds_b, uint32_t table_lo) {
  constexpr uint32_t kNoSign = 0x7F7F7F7Fu;
  bool in_lo = true, in_hi = true;
  int64_t at_lo = byte, at_hi = byte + 16;
  if constexpr (kTail) {
    in_lo = byte < row_bytes;
    in_hi = byte + 16 < row_bytes;
    at_lo = in_lo ? byte : 0;
    at_hi = in_hi ? byte + 16 : 0;
  }
  // 1. Loads: A first (16 loads in flight per lane), then the vector and the scales.
  uint32_t a[8][8];
  const uint8_t* a_lo = a_base + at_lo;
  const uint8_t* a_hi = a_base + at_hi;
#pragma unroll
  for (int r = 0; r < 8; ++r) {
    const uint64_t row = uint64_t(row_k[r]) * row_bytes;
    const Chunk16 lo = load_a16<ALoad::kNoAllocate>(a_lo + row);
    const Chunk16 hi = load_a16<ALoad::kNoAllocate>(kTail ? a_hi + row : a_lo + row + 16);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      a[r][i] = lo.w[i];
      a[r][4 + i] = hi.w[i];
    }
  }
  const uint4 vlo = load_cached16(b_base + at_lo), vhi = load_cached16(b_base + at_hi);
  const int64_t tile = at_lo / 32 * gemm::kSfTileBytes;  // the chunk is one scale tile
  const uint32_t sfb_word = load_cached4(sfb_base + tile);
  const uint4 sfa_line0 = load_cached16(sfa_base + tile), sfa_line1 = load_cached16(sfa_base + tile + 16);

  // 2. The vector's words, kept in lanes (2t, t) and (2t+1, t) only (zero elsewhere), and its scales.
  uint32_t v[8] = {vlo.x, vlo.y, vlo.z, vlo.w, vhi.x, vhi.y, vhi.z, vhi.w};
  uint32_t mask = kNoSign;
  if constexpr (kTail) mask = in_hi ? kNoSign : in_lo ? 0x00007F7Fu : 0u;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const bool keep = holds_b && (i < 4 ? in_lo : in_hi);
    v[i] = keep ? v[i] : 0u;
  }
  float sb[4];
  decode_scales4(sfb_word & mask, sb);
#pragma unroll
  for (int j = 0; j < 4; ++j) sb[j] *= 0.25f;  // both operands are twice the values

  // 3. Per half of the chunk (2 blocks), pair of rows and block: two words through the tensor cores.
  const uint32_t* l0 = reinterpret_cast<const uint32_t*>(&sfa_line0);
  const uint32_t* l1 = reinterpret_cast<const uint32_t*>(&sfa_line1);
  const uint32_t zero[4] = {0u, 0u, 0u, 0u};
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    uint32_t b[4][2];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      b[i][0] = signed4_fast(table_lo, v[4 * half + i]);
      b[i][1] = signed4_fast(table_lo, __umulhi(v[4 * half + i], 0x10000u));
    }
#pragma unroll
    for (int r = 0; r < 8; r += 2) {
      // Rows r and r + 1 of the group: lines 0 and 1 of the sector, word r / 2 (sf_layout.h).
      float sa0[4], sa1[4];
      decode_scales4(l0[r / 2] & mask, sa0);
      decode_scales4(l1[r / 2] & mask, sa1);
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const int blk = 2 * half + j;
        uint32_t pos[4], neg[4];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const int word = 2 * blk + i;
          const uint32_t w0 = a[r][word], w1 = a[r + 1][word];
          const uint32_t x0 = w0 ^ kSignBits, x1 = w1 ^ kSignBits;
          const uint32_t cp[4] = {i == 0 ? zero[0] : pos[0], i == 0 ? zero[1] : pos[1], i == 0 ? zero[2] : pos[2],
                                  i == 0 ? zero[3] : pos[3]};
          const uint32_t cn[4] = {i == 0 ? zero[0] : neg[0], i == 0 ? zero[1] : neg[1], i == 0 ? zero[2] : neg[2],
                                  i == 0 ? zero[3] : neg[3]};
          // The upper four codes as a multiply-high (the multiply pipe, beside prmt on the ALU's).
          mma_s8(pos, lookup4(table_lo, w0), lookup4(table_lo, w1), lookup4(table_lo, __umulhi(w0, 0x10000u)),
                 lookup4(table_lo, __umulhi(w1, 0x10000u)), b[2 * j + i][0], b[2 * j + i][1], cp);
          mma_s8(neg, lookup4(table_lo, x0), lookup4(table_lo, x1), lookup4(table_lo, __umulhi(x0, 0x10000u)),
                 lookup4(table_lo, __umulhi(x1, 0x10000u)), b[2 * j + i][0], b[2 * j + i][1], cn);
        }
        acc[r] = fmaf(float(int(pos[0] - neg[0])), sa0[blk] * sb[blk], acc[r]);
        acc[r + 1] = fmaf(float(int(pos[2] - neg[2])), sa1[blk] * sb[blk], acc[r + 1]);
      }
    }
  }
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kMaxWarps * kLanes, Cfg::kMinCtas)
nvfp4_gemv_mma(int M, int K, int splits, const uint8_t* __restrict__ A, const uint8_t* __restrict__ SFA,
               const uint8_t* __restrict__ B, const uint8_t* __restrict__ SFB, float alpha, __half* __restrict__ C) {
  constexpr int kRows = Cfg::kRows;
  const int warps = blockDim.x / kLanes, warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const int g = lane / 4, t = lane % 4;
  const int split = blockIdx.x % splits;  // the rank in the cluster: clusters are consecutive CTAs in x
  const int64_t first_group = int64_t(blockIdx.x / splits) * Cfg::kGroups;
  const int64_t batch = blockIdx.y;
  const uint32_t row_bytes = uint32_t(K / 2);
  const int64_t first_row = group_row(first_group, 0);
  if (first_row >= M) return;  // a whole cluster leaves together

  // The lane's group: g. Its 8 rows lie within the CTA's 128-row block; a row past M rereads the
  // CTA's first row and is never written.
  const int64_t group = first_group + g;
  uint32_t row_k[8];
#pragma unroll
  for (int r = 0; r < 8; ++r) {
    const int64_t m = group_row(group, r);
    row_k[r] = m < M ? uint32_t(m - first_row) : 0u;
  }
  const int64_t tiles_per_block = gemm::sf_padded_cols(K) / gemm::kSfTileCols;
  const uint8_t* a_base = A + (batch * M + first_row) * int64_t(row_bytes);
  const uint8_t* b_base = B + batch * int64_t(row_bytes);
  const uint8_t* sfb_base = SFB + batch * gemm::sf_batch_bytes(1, K);
  const uint8_t* sfa_base = SFA + batch * gemm::sf_batch_bytes(M, K) +
                            (group / kGroupsPer128) * tiles_per_block * gemm::kSfTileBytes + (group % kGroupsPer128) * 2 * 16;
  const bool holds_b = t == g / 2;
  const uint32_t table_lo = table_register();

  float acc[8];
#pragma unroll
  for (int r = 0; r < 8; ++r) acc[r] = 0.0f;
  // Steps of 128 bytes of every row; this warp takes steps warp + split * warps, + warps * splits, ...
  // Whole steps in the loop, the one that reaches past the row end (if any) after it.
  const int64_t stride = int64_t(warps) * splits * Cfg::kStepBytes;
  int64_t step = (warp + int64_t(split) * warps) * Cfg::kStepBytes;
#pragma unroll 1
  for (; step + Cfg::kStepBytes <= row_bytes; step += stride)
    mma_step<false>(acc, step + 32 * t, row_bytes, a_base, row_k, b_base, sfb_base, sfa_base, holds_b, table_lo);
  if (step < row_bytes)
    mma_step<true>(acc, step + 32 * t, row_bytes, a_base, row_k, b_base, sfb_base, sfa_base, holds_b, table_lo);

  // 4. Reductions in a fixed order: the 4 lanes of a row (t), warps (shared memory), cluster ranks.
  // The CTA's 64 rows are covered by a loop over threadIdx.x in strides of blockDim.x, not by one thread
  // each: a CTA may have a single warp (32 threads < 64 rows). plan_mma gives warps = 1 whenever K has
  // one 128-byte step (K <= 256); e.g. plan_mma(129, 160, 1, 132): K / 2 = 80 bytes -> 1 step -> 1 warp,
  // 3 CTAs (17 groups). With `threadIdx.x < kRows` alone, rows 32..63 of each CTA (groups g = 4..7:
  // rows 8..15, 40..47, 72..79, 104..111 of CTA 0 and 24..31, ... of CTA 1) were never written: 64 of
  // 129 outputs, first row 8 (GemvPlan.TensorCorePlanCanLaunchFewerThreadsThanRows checks the plan).
  __shared__ float warp_sums[Cfg::kMaxWarps][kRows];
  __shared__ float cta_sums[kRows];
#pragma unroll
  for (int r = 0; r < 8; ++r) {
    float s = acc[r];
    s += __shfl_xor_sync(0xFFFFFFFFu, s, 1);
    s += __shfl_xor_sync(0xFFFFFFFFu, s, 2);
    if (t == 0) warp_sums[warp][g * kRowsPerGroup + r] = s;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kRows; i += blockDim.x) {
    float s = warp_sums[0][i];
    for (int w = 1; w < warps; ++w) s += warp_sums[w][i];
    cta_sums[i] = s;
  }
  if (splits > 1) {
    gemm::ptx::cluster_sync();
    if (split == 0)
      for (int i = threadIdx.x; i < kRows; i += blockDim.x) {
        const uint32_t local = uint32_t(__cvta_generic_to_shared(&cta_sums[i]));
        float s = cta_sums[i];
        for (int rank = 1; rank < splits; ++rank)
          s += __uint_as_float(gemm::ptx::ld_cluster_u32(gemm::ptx::map_to_rank(local, uint32_t(rank))));
        cta_sums[i] = s;
      }
    gemm::ptx::cluster_sync();
  } else {
    __syncthreads();
  }
  if (split == 0)
    for (int i = threadIdx.x; i < kRows; i += blockDim.x) {
      const int64_t m = group_row(first_group + i / kRowsPerGroup, i % kRowsPerGroup);
      if (m < M) C[batch * M + m] = __float2half_rn(cta_sums[i] * alpha);
    }
}

template <class Cfg>
int mma_ctas_per_sm(int warps) {
  static int cached[Cfg::kMaxWarps + 1] = {};
  if (cached[warps] == 0) {
    int n = 0;
    if (!gemm::gpu_info().usable ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, nvfp4_gemv_mma<Cfg>, warps * kLanes, 0) != cudaSuccess ||
        n < 1) {
      (void)cudaGetLastError();
      n = std::max(1, Cfg::kMinCtas * Cfg::kMaxWarps / warps);
    }
    cached[warps] = n;
  }
  return cached[warps];
}

// As plan(), for 64-row CTAs of up to Cfg::kMaxWarps warps: K over a cluster where M * L leaves most SMs
// idle, then the warps per CTA follow K, then the one-wave rule (fewer warps, at least 2, where that
// makes every CTA resident at once).
template <class Cfg>
LaunchPlan plan_mma(int M, int K, int L, int sm_count) {
  LaunchPlan p;
  const int64_t full_blocks = M / gemm::kSfTileRows, rest = M % gemm::kSfTileRows;
  p.groups = full_blocks * kGroupsPer128 + (rest == 0 ? 0 : rest >= 32 ? kGroupsPer128 : (rest + 1) / 2);
  const int64_t ctas = (p.groups + Cfg::kGroups - 1) / Cfg::kGroups;
  const int64_t steps = (int64_t(K / 2) + Cfg::kStepBytes - 1) / Cfg::kStepBytes;
  while (p.splits < kMaxSplits && ctas * L * p.splits < 2 * int64_t(sm_count) && steps >= 2 * p.splits * 2)
    p.splits *= 2;
  p.warps = int(std::min<int64_t>(Cfg::kMaxWarps, (steps + p.splits - 1) / p.splits));
  const int64_t total = ctas * L * p.splits;
  if (total > int64_t(mma_ctas_per_sm<Cfg>(p.warps)) * sm_count)
    for (int w = p.warps / 2; w >= 2; w /= 2)
      if (total <= int64_t(mma_ctas_per_sm<Cfg>(w)) * sm_count) {
        p.warps = w;
        break;
      }
  if (ctas * p.splits > INT_MAX)
    throw std::invalid_argument("stage09: M = " + std::to_string(M) + " needs more CTAs than a grid holds");
  p.ctas_per_batch = int(ctas * p.splits);
  return p;
}

template <class Cfg>
void launch_mma(const gemm::Nvfp4GemvArgs& args, cudaStream_t stream) {
  gemm::validate_gemv(args);
  const gemm::GpuInfo& gpu = gemm::gpu_info();
  const LaunchPlan p = plan_mma<Cfg>(args.M, args.K, args.L, gpu.usable ? gpu.sm_count : kSmsWithoutGpu);
  gemm::launch_kernel(nvfp4_gemv_mma<Cfg>,
                      {dim3(unsigned(p.ctas_per_batch), unsigned(args.L)), unsigned(p.warps * kLanes), 0, stream,
                       dim3(unsigned(p.splits))},
                      args.M, args.K, p.splits, args.A, args.SFA, args.B, args.SFB, args.alpha, args.C);
}

// The tensor-core variants the benchmark times: 8 warps (2 CTAs per SM at 128 registers) or 4.
using HopperMma = MmaConfig<2, 8>;
using HopperMma4Warps = MmaConfig<4, 4>;

// The stage's configurations: 32-byte chunks where one load moves them (sm_100), 16 bytes elsewhere.
// Hopper: 8-row CTAs at most 80 registers (6 CTAs of 4 warps per SM) with the one-wave rule of plan(),
// and, where the grid still has 2 CTAs per SM with twice the rows, 16-row CTAs at most 128 registers:
// every step decodes the vector once for 16 rows, and a warp has 16 rows' loads in flight.
using Hopper = Config<16, 1, ALoad::kNoAllocate, 6>;
using Hopper16Rows = Config<16, 2, ALoad::kNoAllocate, 4>;
using Blackwell = Config<32, 1, ALoad::kNoAllocate, 4>;

// The balanced plans (WarpPlan), benchmarked and tested beside the stage; launch() takes own rows
// (HopperOwnRows) where own_rows() says.
// Registers: 65536 / (32 * kMaxWarps * kMinCtas), rounded down to a multiple of 8.
// Own rows, 16 per warp, 4 or 2 warps per CTA (128 registers, 16 warps per SM): at (4096, 7168, 8) 2048
// warps of 7 steps (one wave: 2112 resident), at (7168, 2048, 4) 1792 warps of 2 steps, none idle.
using HopperOwnRows = Config<16, 2, ALoad::kNoAllocate, 4, true, Products::kDp4a, WarpPlan::kOwnRows, 4>;
using HopperOwnRows2Warps = Config<16, 2, ALoad::kNoAllocate, 8, true, Products::kDp4a, WarpPlan::kOwnRows, 2>;
// Own rows, 8 per warp, 4 warps per CTA (80 registers, 24 warps per SM).
using HopperOwnRows8 = Config<16, 1, ALoad::kNoAllocate, 6, true, Products::kDp4a, WarpPlan::kOwnRows, 4>;
// Warps dividing K's steps: 16 rows per CTA, up to 8 warps, 128 registers (7-warp CTAs: 2 per SM, 14 warps);
// 8 rows per CTA, up to 7 warps, 72 registers (7-warp CTAs: 4 per SM, 28 warps).
using HopperBalanced16Rows = Config<16, 2, ALoad::kNoAllocate, 2, true, Products::kDp4a, WarpPlan::kBalancedK, 8>;
using HopperBalanced = Config<16, 1, ALoad::kNoAllocate, 4, true, Products::kDp4a, WarpPlan::kBalancedK, 7>;

// Whether the 16-row configuration is taken: at least 2 CTAs of 16 rows per SM over all batches.
inline bool sixteen_rows(const gemm::Nvfp4GemmArgs& args, int sm_count) {
  return (int64_t(args.M) + 15) / 16 * args.L >= 2 * int64_t(sm_count);
}

// Whether launch() takes own rows instead: a short K (at most two 1024-value steps, where splitting K
// over warps leaves each warp a step or less and the cross-warp sum costs as much as the step) and rows
// for at least half a wave of 16-row warps. At (7168, 2048, 4): 0.899 -> 0.941 of the streaming read on
// an H100, 0.774 -> 0.821 on an H200 (docs/design_measurements.md); at longer K the split plan stays
// ahead on the H100.
inline bool own_rows(const gemm::Nvfp4GemmArgs& args, int sm_count) {
  return args.K <= 2048 && (int64_t(args.M) + 15) / 16 * args.L >= 8 * int64_t(sm_count);
}

// Whether launch() takes the sm_100a configuration: on an sm_100 GPU, and on Hopper in the precondition
// build (common/ptx/arch.cuh), whose Hopper code takes the sm_100a paths with their rules checked.
inline bool sm100_paths(const gemm::GpuInfo& gpu) {
  return gpu.usable && (gpu.cc_major == 10 || GEMM_SM100_PATHS_ON_HOPPER);
}

inline void launch(const gemm::Nvfp4GemvArgs& args, cudaStream_t stream) {
  const gemm::GpuInfo& gpu = gemm::gpu_info();
  if (sm100_paths(gpu))
    launch_config<Blackwell>(args, stream);
  else if (own_rows(args, gpu.usable ? gpu.sm_count : kSmsWithoutGpu))
    launch_config<HopperOwnRows>(args, stream);
  else if (sixteen_rows(args, gpu.usable ? gpu.sm_count : kSmsWithoutGpu))
    launch_config<Hopper16Rows>(args, stream);
  else
    launch_config<Hopper>(args, stream);
}

inline constexpr gemm::StageOf kStage{"09_gemv",
                                      "NVFP4 GEMV (N = 1): the weights streamed once at DRAM speed on the CUDA cores",
                                      &launch};

}  // namespace stage09
