// The tcgen05 emulator: what the wrappers of common/ptx/tcgen05.cuh run when compiled for Hopper
// (sm_90a), where no tcgen05 instruction, no Tensor Memory and no E2M1 conversion exist.
//
// It is built from the PTX ISA's definitions (PTX ISA 9.1, section 9.7.16), not from what a kernel
// happens to need, and it refuses what it does not model:
//   Tensor Memory   128 lanes x 512 columns x 32 bits per SM, in global memory, owned by %smid;
//                   addresses lane << 16 | column, as on the hardware. Allocation in powers of two
//                   from 32 to 512 columns, first fit, blocking until columns are free.
//   tcgen05.mma     kind::mxf4nvf4.block_scale.block16, K = 64, dense: the real 64-bit shared-
//                   memory descriptors (start, LBO, SBO, fixed bits, base offset, layout) and the
//                   real 32-bit instruction descriptor are decoded; swizzles are applied to the
//                   absolute shared-memory address. Products are exact in FP32; the emulator adds
//                   the 64 products of one instruction in k order to the FP32 accumulator.
//   tcgen05.cp      .32x128b.warpx4: 32 rows of 16 bytes into all four 32-lane quadrants.
//   tcgen05.ld      .32x32b.xN from the calling warp's own quadrant.
//   tcgen05.commit  an arrive (count 1, release at cluster scope) on the mbarrier, local or on
//                   every CTA of the mask; the emulated work is complete when commit runs.
// Misuse that real hardware punishes is a trap with a message: see fail() and docs/emulator.md.
//
// What it cannot show: the asynchrony of the tensor core. An emulated mma has finished when the
// call returns, so a kernel that overwrites shared memory before its commit arrives is not caught.
// Emulated timings have no performance meaning.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstdio>

#include "common/emu/tcgen05_emu_state.h"
#include "common/formats.h"
#include "common/ptx/cluster.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/swizzle.h"
#include "common/tcgen05_desc.h"

namespace gemm::emu {

// This translation unit's copy of the emulator's state; tcgen05::prepare_launch() fills it.
static __device__ State g_state;

// How long tcgen05.alloc waits for free columns before it traps: a real allocation waits for other
// CTAs on the SM to finish, which takes microseconds to milliseconds; 2 s means nobody will free them.
inline constexpr unsigned long long kAllocTimeoutNs = 2'000'000'000ull;

// ---- Small PTX helpers ----------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smid() {
  uint32_t s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
__device__ __forceinline__ uint32_t linear_thread() {
  return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}
using ptx::cluster_ctarank;
using ptx::fence_acq_rel_cluster;
using ptx::ld_cluster_u32;
using ptx::map_to_rank;

// Stops the kernel with a message naming the instruction and the rule it broke (printed once per
// warp: the lowest lane that got here).
static __device__ __noinline__ void fail(const char* instruction, const char* what, uint32_t a = 0, uint32_t b = 0) {
  if (threadIdx.x % 32 == uint32_t(__ffs(__activemask()) - 1))
    printf("tcgen05 emulator: %s: %s [%u, %u] (block %d,%d,%d thread %d)\n", instruction, what, a, b, blockIdx.x,
         blockIdx.y, blockIdx.z, threadIdx.x);
  __trap();
}

// ---- Tensor Memory ----------------------------------------------------------------------------------

// The SM a CTA runs on, published by tcgen05.alloc so that the peer of a CTA pair can find this
// CTA's Tensor Memory. (One variable per CTA, at the same offset in every CTA of the kernel.)
__device__ __forceinline__ uint32_t& cta_smid_slot() {
  __shared__ uint32_t slot;
  return slot;
}

// The SM of CTA `rank` of the cluster: our own, or the one the peer published at its alloc.
__device__ __forceinline__ uint32_t sm_of_rank(uint32_t rank) {
  if (rank == cluster_ctarank()) return smid();
  return ld_cluster_u32(map_to_rank(uint32_t(__cvta_generic_to_shared(&cta_smid_slot())), rank));
}

// The cta_group of this CTA's tcgen05 work, recorded by tcgen05.alloc: every tcgen05 instruction of
// a kernel must use the same value (PTX 9.7.16.10.9.1).
__device__ __forceinline__ uint32_t& cta_group_slot() {
  __shared__ uint32_t slot;
  return slot;
}
__device__ __forceinline__ void check_cta_group(const char* instruction, int cta_group) {
  if (cta_group_slot() != uint32_t(cta_group))
    fail(instruction, "mixed cta_group values in one kernel (this, the alloc's)", uint32_t(cta_group), cta_group_slot());
}

__device__ __forceinline__ uint32_t* tmem_cell(uint32_t sm, uint32_t lane, uint32_t column) {
  return g_state.tmem + (size_t(sm) * tcgen05::kTmemLanes + lane) * tcgen05::kTmemColumns + column;
}

// Every column of [column, column + count) must belong to an allocation on SM `sm`.
__device__ __forceinline__ void check_allocated(const char* instruction, uint32_t sm, uint32_t column, uint32_t count) {
  if (column + count > uint32_t(tcgen05::kTmemColumns)) fail(instruction, "columns past the end of Tensor Memory", column, count);
  const volatile uint32_t* owner = g_state.allocators[sm].owner;
  for (uint32_t u = column / kUnitColumns; u <= (column + count - 1) / kUnitColumns; ++u)
    if (owner[u] == 0) fail(instruction, "columns that were not allocated (SM, column)", sm, u * kUnitColumns);
}

__device__ __forceinline__ void lock(SmAllocator* a) {
  while (atomicCAS(&a->lock, 0, 1) != 0) {
  }
  __threadfence();
}
__device__ __forceinline__ void unlock(SmAllocator* a) {
  __threadfence();
  atomicExch(&a->lock, 0);
}

// tcgen05.alloc: first fit of `ncols` columns aligned to their size, blocking until they are free.
__device__ inline void alloc(uint32_t* dst, uint32_t ncols, int cta_group) {
  if (ncols < 32 || ncols > 512 || (ncols & (ncols - 1)))
    fail("tcgen05.alloc", "nCols must be a power of two in [32, 512]", ncols);
  const uint32_t sm = smid(), units = ncols / kUnitColumns;
  cta_smid_slot() = sm;
  cta_group_slot() = uint32_t(cta_group);
  SmAllocator* a = g_state.allocators + sm;
  volatile uint32_t* owner = a->owner;
  const unsigned long long start = ptx::global_timer_ns();
  for (;;) {
    lock(a);
    int found = -1;
    for (uint32_t u = 0; u + units <= uint32_t(kUnits) && found < 0; u += units) {
      bool free = true;
      for (uint32_t j = 0; j < units; ++j) free = free && owner[u + j] == 0;
      if (free) found = int(u);
    }
    if (found >= 0)
      for (uint32_t j = 0; j < units; ++j) owner[found + j] = (uint32_t(found + 1) << 8) | units;
    unlock(a);
    if (found >= 0) {
      *dst = tcgen05::tmem_address(0, uint32_t(found) * kUnitColumns);
      return;
    }
    if (ptx::global_timer_ns() - start > kAllocTimeoutNs)
      fail("tcgen05.alloc", "blocked for 2 s: not enough free columns (a missing dealloc?) (nCols, SM)", ncols, sm);
  }
}

// tcgen05.dealloc: exactly an allocation made on this SM.
__device__ inline void dealloc(uint32_t taddr, uint32_t ncols, int cta_group) {
  check_cta_group("tcgen05.dealloc", cta_group);
  const uint32_t column = tcgen05::tmem_column(taddr), sm = smid(), units = ncols / kUnitColumns;
  if (tcgen05::tmem_lane(taddr) != 0 || column % kUnitColumns || ncols < 32 || ncols > 512 || (ncols & (ncols - 1)))
    fail("tcgen05.dealloc", "not an allocation's address and size", taddr, ncols);
  SmAllocator* a = g_state.allocators + sm;
  volatile uint32_t* owner = a->owner;
  lock(a);
  const uint32_t u0 = column / kUnitColumns, tag = ((u0 + 1) << 8) | units;
  bool match = u0 + units <= uint32_t(kUnits);
  for (uint32_t j = 0; match && j < units; ++j) match = owner[u0 + j] == tag;
  if (match)
    for (uint32_t j = 0; j < units; ++j) owner[u0 + j] = 0;
  unlock(a);
  if (!match) fail("tcgen05.dealloc", "dealloc of what was not allocated (column, nCols)", column, ncols);
}

// ---- Shared-memory operands ---------------------------------------------------------------------------

// Byte address, in the shared memory of the CTA the descriptor is read in, of byte `kb` of row `r`
// of a K-major operand described by `d` (PTX ISA 9.1, 9.7.16.3 and 5.5.7): 8-row groups SBO apart; inside a group,
// rows are one swizzle row apart (128, 64, 32 bytes) with the swizzle applied to the absolute
// address, or, without swizzle, 16-byte core-matrix rows with the K chunks LBO apart.
__device__ __forceinline__ uint32_t operand_byte_address(const tcgen05::SmemDescriptor& d, uint32_t r, uint32_t kb) {
  const uint32_t group = d.start + (r / 8) * d.sbo;
  switch (d.layout) {
    case tcgen05::Layout::kSwizzle128B: {
      const uint32_t a = group + (r % 8) * 128 + kb;
      return a ^ (((a >> 7) & 7u) << 4);
    }
    case tcgen05::Layout::kSwizzle64B: {
      const uint32_t a = group + (r % 8) * 64 + kb;
      return a ^ (((a >> 7) & 3u) << 4);
    }
    case tcgen05::Layout::kSwizzle32B: {
      const uint32_t a = group + (r % 8) * 32 + kb;
      return a ^ (((a >> 7) & 1u) << 4);
    }
    default:  // no swizzle
      return group + (r % 8) * 16 + (kb / 16) * d.lbo + kb % 16;
  }
}

__device__ inline tcgen05::SmemDescriptor checked_descriptor(const char* instruction, uint64_t w, bool allow_swizzle) {
  const tcgen05::SmemDescriptor d = tcgen05::decode_smem_descriptor(w);
  if (d.fixed_46_48 != 1) fail(instruction, "descriptor bits 46-48 must be 0b001", uint32_t(d.fixed_46_48));
  if (d.fixed_53_60 != 0) fail(instruction, "descriptor bits 53-60 must be 0", uint32_t(d.fixed_53_60));
  if (d.lbo_mode != 0) fail(instruction, "absolute LBO mode (sm_103a) is not modelled");
  if (d.base_offset != 0) fail(instruction, "a nonzero base offset is not modelled: start swizzled tiles 1024-byte aligned");
  const uint32_t layout = uint32_t(d.layout);
  const bool known = layout == 0 || layout == 2 || layout == 4 || layout == 6;
  if (!known) fail(instruction, "layout type not modelled (1 is MN-major only; 3, 5, 7 are invalid)", layout);
  if (!allow_swizzle && layout != 0) fail(instruction, "a swizzled source is not modelled for this instruction", layout);
  return d;
}

// ---- tcgen05.cp .32x128b.warpx4 ---------------------------------------------------------------------------

// Row i (of 32) of the source, 16 bytes, goes to lanes i, 32 + i, 64 + i, 96 + i, columns c..c+3.
// With cta_group::2 both CTAs of the pair are filled, each from its own shared memory.
__device__ inline void cp_32x128b_warpx4(uint32_t taddr, uint64_t sdesc, int cta_group, int worker, int workers) {
  check_cta_group("tcgen05.cp", cta_group);
  const tcgen05::SmemDescriptor d = checked_descriptor("tcgen05.cp", sdesc, false);
  const uint32_t lane0 = tcgen05::tmem_lane(taddr), column = tcgen05::tmem_column(taddr);
  if (lane0 != 0) fail("tcgen05.cp", ".32x128b.warpx4 writes all four quadrants: the lane field must be 0", lane0);
  const uint32_t my_rank = cluster_ctarank(), first = cta_group == 2 ? my_rank & ~1u : my_rank;
  for (int v = 0; v < cta_group; ++v) {
    const uint32_t rank = first + v, sm = sm_of_rank(rank);
    check_allocated("tcgen05.cp", sm, column, 4);
    for (int i = worker; i < 32; i += workers) {
      const uint32_t src = d.start + (i / 8) * d.sbo + (i % 8) * 16;
      for (int j = 0; j < 4; ++j) {
        const uint32_t word = ld_cluster_u32(map_to_rank(src + 4 * j, rank));
        for (int q = 0; q < 4; ++q) *tmem_cell(sm, 32 * q + i, column + j) = word;
      }
    }
  }
}

// ---- tcgen05.mma .kind::mxf4nvf4.block_scale.block16 -------------------------------------------------------

// The PTX ISA requires the scale factors duplicated in all four lane quadrants (what .warpx4 does):
// trap unless the four copies of the scales of `rows` rows at SF column base `sf_column` agree.
__device__ inline void check_sf_duplicated(uint32_t sm, uint32_t sf_column, uint32_t rows, int worker, int workers) {
  for (uint32_t r = uint32_t(worker); r < rows; r += uint32_t(workers)) {
    const tcgen05::SfCell c = tcgen05::sf_cell(sf_column, r, 0);
    const uint32_t word = *tmem_cell(sm, c.lane, c.column);
    for (uint32_t q = 1; q < 4; ++q)
      if (*tmem_cell(sm, c.lane + 32 * q, c.column) != word)
        fail("tcgen05.mma", "scale factors not duplicated in all four lane quadrants (row, column)", r, c.column);
  }
}

// The four scale bytes of row r (of A, or column r of B), as floats.
__device__ __forceinline__ void scales_of(uint32_t sm, uint32_t sf_column, uint32_t r, float sign, float (&out)[4]) {
  const tcgen05::SfCell c = tcgen05::sf_cell(sf_column, r, 0);
  const uint32_t word = *tmem_cell(sm, c.lane, c.column);
#pragma unroll
  for (int s = 0; s < 4; ++s) out[s] = sign * e4m3_to_float(uint8_t(word >> (8 * s)));
}

// The 64 values of k of row r of an operand, times their scales (exact in FP32).
__device__ __forceinline__ void load_scaled_row(const tcgen05::SmemDescriptor& d, uint32_t rank, uint32_t r,
                                                uint32_t scale_sm, uint32_t sf_column, uint32_t sf_row, float sign,
                                                float (&out)[64]) {
  float scale[4];
  scales_of(scale_sm, sf_column, sf_row, sign, scale);
#pragma unroll
  for (int w = 0; w < 8; ++w) {  // 32 bytes of K: 8 words of 8 values
    const uint32_t word = ld_cluster_u32(map_to_rank(operand_byte_address(d, r, 4 * w), rank));
#pragma unroll
    for (int i = 0; i < 8; ++i) out[8 * w + i] = e2m1_to_float(uint8_t((word >> (4 * i)) & 0xF)) * scale[w / 2];
  }
}

// D (+)= (A . SFA)(B . SFB) for one instruction. `worker` of `workers` threads computes every
// workers-th row of D (of both CTAs with cta_group::2).
__device__ inline void mma_mxf4nvf4_block16(uint32_t d_tmem, uint64_t adesc, uint64_t bdesc, uint32_t idesc,
                                            uint32_t sfa_tmem, uint32_t sfb_tmem, bool accumulate, int cta_group,
                                            int worker, int workers) {
  const char* kName = "tcgen05.mma";
  check_cta_group(kName, cta_group);
  const tcgen05::InstrDescriptor id = tcgen05::decode_instr_descriptor(idesc);
  if (id.reserved) fail(kName, "reserved instruction-descriptor bits set", id.reserved);
  if (id.sparse) fail(kName, "sparse MMA is not modelled");
  if (id.a_type != tcgen05::kTypeE2M1 || id.b_type != tcgen05::kTypeE2M1)
    fail(kName, "kind::mxf4nvf4 types other than E2M1 x E2M1 are not modelled", id.a_type, id.b_type);
  if (id.transpose_a || id.transpose_b) fail(kName, "mxf4nvf4 operands must be K-major (transpose bits set)");
  if (id.scale_type != tcgen05::kScaleUE4M3) fail(kName, "UE8M0 scales are not modelled");
  if (id.sfa_id || id.sfb_id) fail(kName, "block16 requires scale-factor ids 0", id.sfa_id, id.sfb_id);
  if (id.k96) fail(kName, "K = 96 (sm_103a) is not modelled");
  if (cta_group == 1 && (id.m != 128 || id.n < 8 || id.n > 256 || id.n % 8))
    fail(kName, "cta_group::1 needs M = 128 and N in 8..256 step 8", id.m, id.n);
  if (cta_group == 2 && id.m != 256)
    fail(kName, "cta_group::2 is modelled for M = 256 only (M = 128 uses the 2x2 datapath)", id.m);
  if (cta_group == 2 && (id.n < 16 || id.n > 256 || id.n % 16)) fail(kName, "cta_group::2 needs N in 16..256 step 16", id.n);
  const tcgen05::SmemDescriptor a = checked_descriptor(kName, adesc, true), b = checked_descriptor(kName, bdesc, true);
  if (tcgen05::tmem_lane(d_tmem) || tcgen05::tmem_lane(sfa_tmem) || tcgen05::tmem_lane(sfb_tmem))
    fail(kName, "D and scale-factor addresses must start at lane 0", d_tmem, sfa_tmem);
  const uint32_t N = id.n, d_col = tcgen05::tmem_column(d_tmem);
  const uint32_t sfa_col = tcgen05::tmem_column(sfa_tmem), sfb_col = tcgen05::tmem_column(sfb_tmem);
  const uint32_t my_rank = cluster_ctarank(), first = cta_group == 2 ? my_rank & ~1u : my_rank;
  const uint32_t b_rows_per_cta = N / uint32_t(cta_group);

  for (int v = 0; v < cta_group; ++v) {
    const uint32_t sm = sm_of_rank(first + v);
    check_allocated(kName, sm, d_col, N);
    check_allocated(kName, sm, sfa_col, 4);
    check_allocated(kName, sm, sfb_col, (N + 31) / 32);
    check_sf_duplicated(sm, sfa_col, 128, worker, workers);
    check_sf_duplicated(sm, sfb_col, N, worker, workers);
  }
  for (int item = worker; item < 128 * cta_group; item += workers) {
    const uint32_t v = uint32_t(item) / 128, m = uint32_t(item) % 128, rank = first + v, sm = sm_of_rank(rank);
    float arow[64];
    load_scaled_row(a, rank, m, sm, sfa_col, m, id.negate_a ? -1.0f : 1.0f, arow);
    for (uint32_t n = 0; n < N; ++n) {
      // With cta_group::2, B's first N/2 rows sit in the even CTA, the rest in the odd one; the
      // scales of all N are in each CTA's own Tensor Memory.
      const uint32_t b_rank = first + n / b_rows_per_cta, b_row = n % b_rows_per_cta;
      float brow[64];
      load_scaled_row(b, b_rank, b_row, sm, sfb_col, n, id.negate_b ? -1.0f : 1.0f, brow);
      float* dcell = reinterpret_cast<float*>(tmem_cell(sm, m, d_col + n));
      float acc = accumulate ? *dcell : 0.0f;
#pragma unroll
      for (int k = 0; k < 64; ++k) acc = fmaf(arow[k], brow[k], acc);  // each product is exact
      *dcell = acc;
    }
  }
}

// ---- tcgen05.ld .32x32b.xN ---------------------------------------------------------------------------------

template <int N>
__device__ inline void ld_32x32b(uint32_t taddr, uint32_t (&r)[N]) {
  const uint32_t warp = linear_thread() / 32, lane = linear_thread() % 32;
  const uint32_t lane0 = tcgen05::tmem_lane(taddr), column = tcgen05::tmem_column(taddr);
  if (lane0 != 32 * (warp % 4))
    fail("tcgen05.ld", "a warp may only access the 32 lanes of its quadrant: lane field must be 32 * (warp % 4)", lane0,
         warp);
  const uint32_t sm = smid();
  check_allocated("tcgen05.ld", sm, column, N);
#pragma unroll
  for (int i = 0; i < N; ++i) r[i] = *tmem_cell(sm, lane0 + lane, column + i);
}

// ---- tcgen05.commit ----------------------------------------------------------------------------------------

// The emulated work is already complete; make it visible at cluster scope, then arrive (count 1)
// on the barrier of every CTA in `cta_mask` (bit i: cluster rank i).
__device__ inline void commit(uint64_t* bar, uint16_t cta_mask, int cta_group) {
  check_cta_group("tcgen05.commit", cta_group);
  fence_acq_rel_cluster();
  const uint32_t local = uint32_t(__cvta_generic_to_shared(bar));
  for (uint32_t rank = 0; rank < 16; ++rank)
    if (cta_mask & (1u << rank))
      asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(map_to_rank(local, rank))
                   : "memory");
}

// ---- TMA with .cta_group::2 --------------------------------------------------------------------------------

// A plain TMA into this CTA's shared memory completing on a private barrier, a wait, then the
// bytes are reported to the leader CTA's barrier (mbarrier.complete_tx on a peer CTA's barrier
// exists on sm_90: PTX ISA 9.1, 9.7.13.15.12). The issuing thread blocks until its copy has landed.
__device__ inline void tma_load_3d_cta_group2(void* dst, const CUtensorMap* map, int x, int y, int z, uint64_t* bar,
                                              uint32_t bytes) {
  __shared__ uint64_t private_bar;  // one per CTA: one issuing thread at a time
  ptx::mbarrier_init(&private_bar, 1);
  ptx::fence_mbarrier_init();
  ptx::mbarrier_arrive_expect_tx(&private_bar, bytes);
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
      ::"r"(uint32_t(__cvta_generic_to_shared(dst))), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z),
      "r"(uint32_t(__cvta_generic_to_shared(&private_bar)))
      : "memory");
  ptx::mbarrier_wait(&private_bar, 0, "tma cta_group::2 (emulated)", 0);
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(uint32_t(__cvta_generic_to_shared(&private_bar))) : "memory");
  fence_acq_rel_cluster();
  const uint32_t leader = map_to_rank(uint32_t(__cvta_generic_to_shared(bar)), cluster_ctarank() & ~1u);
  asm volatile("mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;" ::"r"(leader), "r"(bytes) : "memory");
}

}  // namespace gemm::emu
