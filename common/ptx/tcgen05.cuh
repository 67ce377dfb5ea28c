// tcgen05: the fifth-generation tensor-core instructions of Blackwell (sm_100a), one wrapper per
// instruction, named after it. PTX ISA 9.1, section 9.7.16.
//
// Compiled for sm_100a each wrapper is the PTX instruction and nothing else. Compiled for Hopper
// (sm_90a), which has no tcgen05, each wrapper calls the emulator (common/emu/tcgen05_emu.cuh),
// which keeps Tensor Memory in global memory and reproduces the instruction from its definition
// (docs/emulator.md says what is and is not modelled). One source serves both.
//
// Calling conventions. Instructions that one thread issues (mma, cp, commit) come twice:
//   tcgen05_mma_*(...)        the PTX convention: exactly one thread calls it (the others do not);
//                             the emulator then does all the work in that thread, slowly;
//   tcgen05_mma_*_warp(...)   warp-collective: all 32 lanes call it; on sm_100a one elected lane
//                             issues the instruction, on Hopper the whole warp shares the emulation.
// A kernel written the ordinary way (if (elect_one_sync()) { mma; commit; }) runs on both; the
// _warp forms run faster under emulation. Use one convention for an mma and its commit: commit
// tracks the work of the thread that issued it. alloc, dealloc, relinquish and ld are .sync.aligned
// in PTX: the whole warp calls them.
//
// Completion. mma and cp are asynchronous: their results may be read, and the shared memory they
// read may be reused, only after a tcgen05.commit covering them has arrived on an mbarrier and a
// thread has returned from a wait on that barrier. Every wait on a barrier that a commit arrives on
// goes through ptx::wait_commit() (below): on sm_100a it is the ordinary mbarrier wait; under the
// emulator it is where the covered work becomes visible and its operands are verified unchanged
// (docs/emulator.md). A plain mbarrier_wait on such a barrier leaves the work pending there, so the
// next tcgen05.ld of its columns, or the dealloc, traps.
//
// Launch a kernel that uses these wrappers through the launch door (gemm::launch_kernel,
// common/launch.cuh): on Hopper it binds the emulated Tensor Memory, and everywhere the deadline of
// bounded waits and the protocol checker, before the source file's first launch.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/cuda_check.h"
#include "common/emu/tcgen05_emu.cuh"
#include "common/emu/tcgen05_emu_kinds.cuh"
#include "common/emu/tcgen05_emu_state.h"
#include "common/ptx/cluster.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/tcgen05_desc.h"
#include "common/tcgen05_desc_kinds.h"

#include "common/ptx/arch.cuh"  // GEMM_HAS_TCGEN05, GEMM_PROTOCOL_ACTIVE

namespace gemm::ptx {

// elect.sync _|p, membermask;   (PTX 9.7.13.14) true in exactly one lane of the full warp, the same
// lane every time for the same mask. Hopper has it too.
__device__ __forceinline__ bool elect_one_sync() {
  uint32_t elected;
  asm volatile(
      "{\n"
      " .reg .pred p;\n"
      " elect.sync _|p, 0xffffffff;\n"
      " selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(elected));
  return elected != 0;
}

// ---- Allocation (PTX 9.7.16.7.1): whole warp, same arguments in every lane ------------------------

// tcgen05.alloc.cta_group::N.sync.aligned.shared::cta.b32 [dst], ncols;
// Allocates ncols columns (a power of two, 32..512) of Tensor Memory, all 128 lanes, and writes
// their address (lane 0, first column) to shared memory at dst. Blocks until the columns are free.
// With cta_group::2 one warp in each CTA of the pair calls it, and both get the same columns.
template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_alloc(uint32_t* dst, uint32_t ncols) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2);
#if GEMM_HAS_TCGEN05
  if constexpr (kCtaGroup == 1)
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(smem_addr(dst)), "r"(ncols) : "memory");
  else
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(smem_addr(dst)), "r"(ncols) : "memory");
#else
  if (threadIdx.x % 32 == 0) emu::alloc(dst, ncols, kCtaGroup);
  __syncwarp();
#endif
#if GEMM_PROTOCOL_ACTIVE
  __syncwarp();
  protocol::dev::on_alloc(*reinterpret_cast<volatile uint32_t*>(dst), ncols, kCtaGroup);
#endif
}

// tcgen05.dealloc.cta_group::N.sync.aligned.b32 taddr, ncols;   exactly what alloc returned.
template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_dealloc(uint32_t taddr, uint32_t ncols) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2);
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_dealloc(taddr, ncols);
#endif
#if GEMM_HAS_TCGEN05
  if constexpr (kCtaGroup == 1)
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(ncols) : "memory");
  else
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(ncols) : "memory");
#else
  if (threadIdx.x % 32 == 0) emu::dealloc(taddr, ncols, kCtaGroup);
  __syncwarp();
#endif
}

// tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned;   this CTA will allocate no more, so
// another CTA may be scheduled onto the SM's Tensor Memory. (Not modelled by the emulator.)
template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_relinquish_alloc_permit() {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2);
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_relinquish();
#endif
#if GEMM_HAS_TCGEN05
  if constexpr (kCtaGroup == 1)
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  else
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;" ::: "memory");
#endif
}

// ---- MMA (PTX 9.7.16.10.9.1) -----------------------------------------------------------------------------

// tcgen05.mma.cta_group::N.kind::mxf4nvf4.block_scale.block16 [d], a_desc, b_desc, idesc,
//     [sfa], [sfb], enable_input_d;
//   d          TMEM address of the FP32 accumulator: lane 0, N columns (one per column of D)
//   a_desc     shared-memory descriptor of A (M x 64 E2M1 values, K-major)
//   b_desc     shared-memory descriptor of B (N x 64 E2M1 values, K-major)
//   idesc      instruction descriptor: types, M, N (tcgen05::nvfp4_instr_descriptor)
//   sfa, sfb   TMEM addresses of the scales (lane 0, first column; see tcgen05::sf_cell)
//   accumulate enable-input-d: false for the first K step of a tile (D = A B), then true (D += A B)
// Asynchronous: completion is tracked by tcgen05_commit from the same thread.
template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_mma_nvfp4(uint32_t d, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                                  uint32_t sfa, uint32_t sfb, bool accumulate) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2);
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_mma(d, a_desc, b_desc, idesc, sfa, sfb, kCtaGroup);
#endif
#if GEMM_HAS_TCGEN05
  if constexpr (kCtaGroup == 1)
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
        " tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 [%0], %1, %2, %3, [%5], [%6], p;\n}\n"
        ::"r"(d), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(uint32_t(accumulate)), "r"(sfa), "r"(sfb)
        : "memory");
  else
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
        " tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.block16 [%0], %1, %2, %3, [%5], [%6], p;\n}\n"
        ::"r"(d), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(uint32_t(accumulate)), "r"(sfa), "r"(sfb)
        : "memory");
#else
  emu::mma_mxf4nvf4_block16(d, a_desc, b_desc, idesc, sfa, sfb, accumulate, kCtaGroup, 0, 1);
#endif
}

// The same, called by all 32 lanes of a warp.
template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_mma_nvfp4_warp(uint32_t d, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                                       uint32_t sfa, uint32_t sfb, bool accumulate) {
#if GEMM_HAS_TCGEN05
  if (elect_one_sync()) tcgen05_mma_nvfp4<kCtaGroup>(d, a_desc, b_desc, idesc, sfa, sfb, accumulate);
#else
#if GEMM_PROTOCOL_ACTIVE
  if (threadIdx.x % 32 == 0) protocol::dev::on_mma(d, a_desc, b_desc, idesc, sfa, sfb, kCtaGroup);  // one mma
  __syncwarp();
#endif
  emu::mma_mxf4nvf4_block16(d, a_desc, b_desc, idesc, sfa, sfb, accumulate, kCtaGroup, int(threadIdx.x % 32), 32);
#endif
  __syncwarp();
}

// tcgen05.mma.cta_group::N.kind::mxf8f6f4.block_scale.block32 [d], a_desc, b_desc, idesc,
//     [sfa], [sfb], enable_input_d;
// MXFP8 (PTX 9.7.16.10.9.1; descriptor: common/tcgen05_desc_kinds.h):
//   d          TMEM address of the FP32 accumulator, the same columns kind::mxf4nvf4 and kind::f16 use
//   a_desc     shared-memory descriptor of A (M x 32 E4M3/E5M2 values, one byte each, K-major: 32 bytes
//              of a 128-byte swizzle row, so 4 instructions per row, stepped with advance_start(+32))
//   b_desc     the same for B (N x 32)
//   idesc      tcgen05::mxf8f6f4_instr_descriptor: types, M, N, and SFA_ID / SFB_ID, the byte of each
//              scale word this instruction's K = 32 uses (0..3: one copied atom covers K = 128)
//   sfa, sfb   TMEM addresses of the scale words (lane 0, first column), filled as for NVFP4 by
//              tcgen05.cp .32x128b.warpx4 of 512-byte blocked atoms of UE8M0 scales
//   accumulate enable-input-d: false: D = A B; true: D += A B (after any kind's MMAs into D)
// .block32 is .scale_vec::1X's PTX 8.8 name for this kind. Asynchronous: tracked by tcgen05_commit.
template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_mma_mxf8f6f4(uint32_t d, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                                     uint32_t sfa, uint32_t sfb, bool accumulate) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2);
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_mma(d, a_desc, b_desc, idesc, sfa, sfb, kCtaGroup, uint32_t(tcgen05::MmaKind::kMxf8f6f4));
#endif
#if GEMM_HAS_TCGEN05
  if constexpr (kCtaGroup == 1)
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
        " tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 [%0], %1, %2, %3, [%5], [%6], p;\n}\n"
        ::"r"(d), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(uint32_t(accumulate)), "r"(sfa), "r"(sfb)
        : "memory");
  else
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
        " tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale.block32 [%0], %1, %2, %3, [%5], [%6], p;\n}\n"
        ::"r"(d), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(uint32_t(accumulate)), "r"(sfa), "r"(sfb)
        : "memory");
#else
  emu::mma_mxf8f6f4_block32(d, a_desc, b_desc, idesc, sfa, sfb, accumulate, kCtaGroup, 0, 1);
#endif
}

// The same, called by all 32 lanes of a warp.
template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_mma_mxf8f6f4_warp(uint32_t d, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                                          uint32_t sfa, uint32_t sfb, bool accumulate) {
#if GEMM_HAS_TCGEN05
  if (elect_one_sync()) tcgen05_mma_mxf8f6f4<kCtaGroup>(d, a_desc, b_desc, idesc, sfa, sfb, accumulate);
#else
#if GEMM_PROTOCOL_ACTIVE
  if (threadIdx.x % 32 == 0)  // one mma
    protocol::dev::on_mma(d, a_desc, b_desc, idesc, sfa, sfb, kCtaGroup, uint32_t(tcgen05::MmaKind::kMxf8f6f4));
  __syncwarp();
#endif
  emu::mma_mxf8f6f4_block32(d, a_desc, b_desc, idesc, sfa, sfb, accumulate, kCtaGroup, int(threadIdx.x % 32), 32);
#endif
  __syncwarp();
}

// tcgen05.mma.cta_group::N.kind::f16 [d], a_desc, b_desc, idesc, enable_input_d;
// FP16 or BF16 operands, FP32 accumulate (PTX 9.7.16.10.9.1; descriptor: common/tcgen05_desc_kinds.h):
//   d          TMEM address of the FP32 accumulator, the same columns the block-scaled kinds use
//   a_desc     shared-memory descriptor of A (M x 16 values of two bytes, K-major: 32 bytes of a
//              128-byte swizzle row, so 4 instructions per row, stepped with advance_start(+32))
//   b_desc     the same for B (N x 16)
//   idesc      tcgen05::f16_instr_descriptor: A and B types (F16 or BF16), D type F32, M, N
//   accumulate enable-input-d: true adds A B to what any kind left in D
// The optional disable-output-lane mask and scale-input-d operands are left out: every lane is written,
// D is not scaled. Asynchronous: tracked by tcgen05_commit.
template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_mma_f16(uint32_t d, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                                bool accumulate) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2);
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_mma(d, a_desc, b_desc, idesc, 0, 0, kCtaGroup, uint32_t(tcgen05::MmaKind::kF16));
#endif
#if GEMM_HAS_TCGEN05
  if constexpr (kCtaGroup == 1)
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
        " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
        ::"r"(d), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(uint32_t(accumulate))
        : "memory");
  else
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
        " tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n}\n"
        ::"r"(d), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(uint32_t(accumulate))
        : "memory");
#else
  emu::mma_f16(d, a_desc, b_desc, idesc, accumulate, kCtaGroup, 0, 1);
#endif
}

// The same, called by all 32 lanes of a warp.
template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_mma_f16_warp(uint32_t d, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                                     bool accumulate) {
#if GEMM_HAS_TCGEN05
  if (elect_one_sync()) tcgen05_mma_f16<kCtaGroup>(d, a_desc, b_desc, idesc, accumulate);
#else
#if GEMM_PROTOCOL_ACTIVE
  if (threadIdx.x % 32 == 0)  // one mma
    protocol::dev::on_mma(d, a_desc, b_desc, idesc, 0, 0, kCtaGroup, uint32_t(tcgen05::MmaKind::kF16));
  __syncwarp();
#endif
  emu::mma_f16(d, a_desc, b_desc, idesc, accumulate, kCtaGroup, int(threadIdx.x % 32), 32);
#endif
  __syncwarp();
}

// ---- Copy shared memory -> Tensor Memory (PTX 9.7.16.9.2) ----------------------------------------------

// tcgen05.cp.cta_group::N.32x128b.warpx4 [taddr], s_desc;
// 32 rows of 16 bytes (one 512-byte blocked scale atom, read with tcgen05::sf_atom_descriptor) into
// 32 lanes x 4 columns, duplicated into all four 32-lane quadrants; with cta_group::2 into both CTAs
// of the pair, each from its own shared memory. Asynchronous; ordered before a later mma of the same
// thread.
template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_cp_32x128b_warpx4(uint32_t taddr, uint64_t s_desc) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2);
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_cp(taddr, s_desc, kCtaGroup);
#endif
#if GEMM_HAS_TCGEN05
  if constexpr (kCtaGroup == 1)
    asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" ::"r"(taddr), "l"(s_desc) : "memory");
  else
    asm volatile("tcgen05.cp.cta_group::2.32x128b.warpx4 [%0], %1;" ::"r"(taddr), "l"(s_desc) : "memory");
#else
  emu::cp_32x128b_warpx4(taddr, s_desc, kCtaGroup, 0, 1);
#endif
}

template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_cp_32x128b_warpx4_warp(uint32_t taddr, uint64_t s_desc) {
#if GEMM_HAS_TCGEN05
  if (elect_one_sync()) tcgen05_cp_32x128b_warpx4<kCtaGroup>(taddr, s_desc);
#else
#if GEMM_PROTOCOL_ACTIVE
  if (threadIdx.x % 32 == 0) protocol::dev::on_cp(taddr, s_desc, kCtaGroup);  // one cp
  __syncwarp();
#endif
  emu::cp_32x128b_warpx4(taddr, s_desc, kCtaGroup, int(threadIdx.x % 32), 32);
#endif
  __syncwarp();
}

// ---- Tensor Memory -> registers (PTX 9.7.16.8.3, 9.7.16.8.5) -----------------------------------------------

// tcgen05.ld.sync.aligned.32x32b.xN.b32 {r0..r(N-1)}, [taddr];
// Lane t of the warp reads TMEM lane (lane of taddr) + t, columns column .. column + N - 1. A warp
// may only touch its own quadrant: lanes 32 * (warp % 4) .. + 31, so taddr's lane must be that (in
// the odd CTA of a cta_group::2 pair, 128 + 32 * (warp % 4) addresses the same lanes).
// Asynchronous: call tcgen05_wait_ld() before using r. N = 4, 8, 16 or 32.
template <int N>
__device__ __forceinline__ void tcgen05_ld_32x32b(uint32_t taddr, uint32_t (&r)[N]) {
  static_assert(N == 4 || N == 8 || N == 16 || N == 32, "the .num variants this project uses");
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_tc_ld(taddr, uint32_t(N));  // .sync.aligned: one operation of the whole warp
#endif
#if GEMM_HAS_TCGEN05
  if constexpr (N == 4) {
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(taddr));
  }
  else if constexpr (N == 8) {
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
                 : "r"(taddr));
  }
  else if constexpr (N == 16) {
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, [%16];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15])
                 : "r"(taddr));
  }
  else if constexpr (N == 32) {
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15]), "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]), "=r"(r[21]), "=r"(r[22]), "=r"(r[23]), "=r"(r[24]), "=r"(r[25]), "=r"(r[26]), "=r"(r[27]), "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
                 : "r"(taddr));
  }
#else
  emu::ld_32x32b<N>(taddr, r);
#endif
}

// tcgen05.wait::ld.sync.aligned;   all of this thread's prior tcgen05.ld have completed.
__device__ __forceinline__ void tcgen05_wait_ld() {
#if GEMM_HAS_TCGEN05
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
#endif
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_tc_wait_ld();
#endif
}

// ---- Ordering (PTX 9.7.16.11.1, 9.7.16.6.4) ------------------------------------------------------------------

// tcgen05.fence::before_thread_sync;   prior async tcgen05 work of this thread is ordered before
// the next synchronisation (mbarrier arrive, bar.sync). Use it before signalling another thread.
__device__ __forceinline__ void tcgen05_fence_before_thread_sync() {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_tc_fence_before();
#endif
#if GEMM_HAS_TCGEN05
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
#else
  fence_acq_rel_cluster();  // emulated work is plain memory traffic: a fence orders it
#endif
}

// tcgen05.fence::after_thread_sync;   later async tcgen05 work is ordered after the preceding
// synchronisation. Use it after waiting on a barrier, before tcgen05 work that depends on it.
__device__ __forceinline__ void tcgen05_fence_after_thread_sync() {
#if GEMM_HAS_TCGEN05
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
#else
  fence_acq_rel_cluster();
#endif
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_tc_fence_after();
#endif
}

// ---- Completion (PTX 9.7.16.12.1) ------------------------------------------------------------------------------

// tcgen05.commit.cta_group::N.mbarrier::arrive::one.shared::cluster.b64 [bar];
// When all prior async tcgen05 work (mma, cp) of this thread has completed, one arrive on bar.
template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_commit(uint64_t* bar) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2);
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_commit(smem_addr(bar), 1u << own_rank());
#endif
#if GEMM_HAS_TCGEN05
  if constexpr (kCtaGroup == 1)
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
  else
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
#else
  emu::commit(bar, uint16_t(1u << cluster_ctarank()), kCtaGroup);
#endif
}

// tcgen05.commit.cta_group::N.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [bar], mask;
// The same arrive on the barrier at bar's offset in every CTA whose cluster rank is set in mask.
template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_commit_multicast(uint64_t* bar, uint16_t cta_mask) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2);
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_commit(smem_addr(bar), cta_mask);
#endif
#if GEMM_HAS_TCGEN05
  if constexpr (kCtaGroup == 1)
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;"
                 ::"r"(smem_addr(bar)), "h"(cta_mask) : "memory");
  else
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;"
                 ::"r"(smem_addr(bar)), "h"(cta_mask) : "memory");
#else
  emu::commit(bar, cta_mask, kCtaGroup);
#endif
}

// Warp-collective forms: the lane elect_one_sync() picks commits (on Hopper after the whole warp's
// share of the emulated work is done).
template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_commit_warp(uint64_t* bar) {
  __syncwarp();
  if (elect_one_sync()) tcgen05_commit<kCtaGroup>(bar);
  __syncwarp();
}
template <int kCtaGroup>
__device__ __forceinline__ void tcgen05_commit_multicast_warp(uint64_t* bar, uint16_t cta_mask) {
  __syncwarp();
  if (elect_one_sync()) tcgen05_commit_multicast<kCtaGroup>(bar, cta_mask);
  __syncwarp();
}

// ---- Waiting for a commit ---------------------------------------------------------------------------------

// Wait until the phase with parity `parity` of `bar`, a barrier that tcgen05.commit arrives on, has
// completed. Use it (not mbarrier_wait) for every such barrier: on sm_100a it is the same wait
// (bounded in debug builds); under the emulator it is always bounded by the deadline, and on return
// the work the commits cover is complete as the hardware guarantees it (its results readable, its
// shared-memory operands verified unchanged since issue). Follow it with
// tcgen05_fence_after_thread_sync() before tcgen05 work or tcgen05.ld that depends on it.
__device__ __forceinline__ void wait_commit(uint64_t* bar, uint32_t parity, const char* name, int index) {
#if GEMM_HAS_TCGEN05
  mbarrier_wait(bar, parity, name, index);
#else
  mbarrier_wait_bounded(bar, parity, wait_timeout_ns(), name, index);
  emu::observe_commit(bar, name, index);
#endif
}

// ---- TMA into a CTA pair (PTX 9.7.9.27.1.2, .cta_group::2) -----------------------------------------------

// cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2
//     [dst], [map, {x, y, z}], [leader's bar];
// A TMA load into this CTA's shared memory whose transaction bytes complete on the barrier at the
// same offset in the even (leader) CTA of the pair: both CTAs load their halves, the leader's
// "full" barrier counts both. `bytes` is the box size; the hardware does not need it, the emulator
// (which reports the bytes itself) does. One issuing thread per CTA at a time.
__device__ __forceinline__ void tma_load_3d_cta_group2(void* dst, const CUtensorMap* map, int x, int y, int z,
                                                       uint64_t* bar, uint32_t bytes) {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_tma_load(smem_addr(dst), bytes, smem_addr(bar), cluster_ctarank() & ~1u);
  if (protocol_aborted()) return;
#endif
#if GEMM_HAS_TCGEN05
  (void)bytes;
  const uint32_t leader_bar = map_to_rank(smem_addr(bar), cluster_ctarank() & ~1u);
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
      " [%0], [%1, {%2, %3, %4}], [%5];"
      ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(leader_bar)
      : "memory");
#else
  emu::tma_load_cta_group2<3>(dst, map, x, y, z, bar, bytes);
#endif
}

// cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2
//     [dst], [map, {x}], [leader's bar];
// The same for `bytes` contiguous bytes: `map` is a 1-D map (plan_bytes_1d, common/tensor_map.h) and x
// counts its elements. This is the pair's contiguous copy whose bytes complete on the leader's
// barrier: the contiguous cp.async.bulk has no .cta_group (ptxas of CUDA 13.0 rejects it), so the
// scale atoms of a pair travel as a 1-D tensor copy. One issuing thread per CTA at a time.
__device__ __forceinline__ void tma_load_1d_cta_group2(void* dst, const CUtensorMap* map, int x, uint64_t* bar,
                                                       uint32_t bytes) {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_tma_load(smem_addr(dst), bytes, smem_addr(bar), cluster_ctarank() & ~1u);
  if (protocol_aborted()) return;
#endif
#if GEMM_HAS_TCGEN05
  (void)bytes;
  const uint32_t leader_bar = map_to_rank(smem_addr(bar), cluster_ctarank() & ~1u);
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
      " [%0], [%1, {%2}], [%3];"
      ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(leader_bar)
      : "memory");
#else
  emu::tma_load_cta_group2<1>(dst, map, x, 0, 0, bar, bytes);
#endif
}

}  // namespace gemm::ptx
