// The tcgen05 emulator's MMA kinds beside NVFP4's kind::mxf4nvf4: kind::mxf8f6f4 with .block32
// scales (MXFP8) and kind::f16 (FP16/BF16 operands, FP32 accumulate). What the wrappers
// tcgen05_mma_mxf8f6f4* and tcgen05_mma_f16* of common/ptx/tcgen05.cuh run on Hopper (sm_90a).
//
// Both write the FP32 accumulator NVFP4 writes, in the same Tensor Memory columns (D[m][n] in lane m,
// column d + n), and go through the same bookkeeping as the NVFP4 MMA of common/emu/tcgen05_emu.cuh:
// a sequence number from the issuing CTA, pending columns until a commit covering the instruction is
// observed, fingerprints of the 32 bytes of K per row of A and B they read (the same 32 bytes for
// every kind: common/tcgen05_desc_kinds.h), verified at the observing wait. So a kernel that mixes
// kinds in one accumulator is held to one protocol.
//
// What each executes, from its definition (PTX ISA 9.1, 9.7.16.10.9.1 and the tables cited in
// common/tcgen05_desc_kinds.h):
//   kind::mxf8f6f4.block_scale.block32   K = 32, dense, E4M3 or E5M2 A and B (either may be either),
//       K-major; one UE8M0 scale per row of A and per column of B, read from byte SFA_ID / SFB_ID of
//       the scale word (tcgen05::sf_cell). D[m][n] (+)= sum_k (a[m][k] 2^(sa[m] - 127)) (b[n][k] 2^(sb[n] - 127)).
//   kind::f16                            K = 16, dense, F16 x F16 or BF16 x BF16, FP32 D, K-major.
// Both: negate A / B, enable-input-d, cta_group::1 with M = 128 and cta_group::2 with M = 256 (each
// CTA of the pair its own 128 rows of A and D, N / 2 rows of B, and, for mxf8f6f4, its own SFA and all
// of SFB in its Tensor Memory, as for NVFP4).
//
// Numerics. Every product of two decoded values is exact in FP32 (E4M3/E5M2: at most 3 x 3 significant
// bits; F16/BF16: at most 11 x 11). The products of one instruction are added to D one at a time in k
// order, each with one FP32 rounding; an MXFP8 product is scaled by its power of two inside that fused
// step (fmaf), so the only rounding is the addition, unless the product itself leaves FP32's range.
// The tensor core's accumulation order and internal precision are not documented (FACTS section 9.3):
// results are exact where every partial sum is (the tests' data), an FP32-rounding model elsewhere.
// NaN and Inf operands (E4M3 S.1111.111, E5M2 S.11111.xx, F16/BF16 exponent all ones) and the NaN
// scale 0xFF propagate as IEEE FP32 arithmetic propagates them; what the tensor core does with them
// is not documented.
//
// Refused with a message (valid PTX, not modelled): sparse MMAs; transposed (MN-major) operands;
// the padded 4- and 6-bit types of mxf8f6f4 (E2M3, E3M2, E2M1); an F16 D; kind::f16 with M = 64
// (cta_group::1) or M = 128 with cta_group::2 (other datapath layouts); F16 x BF16 mixed (Table 39
// names the operand types together and does not say whether A and B may differ). Invalid
// descriptors are refused with the rule of tcgen05::check_f16 / check_mxf8f6f4.
#pragma once

#include <cstdint>

#include "common/emu/tcgen05_emu.cuh"
#include "common/formats.h"
#include "common/tcgen05_desc.h"
#include "common/tcgen05_desc_kinds.h"

namespace gemm::emu {

// How the two operands of one instruction are read: element types and signs; for mxf8f6f4 also which
// byte of the scale word each uses.
struct KindOperands {
  uint32_t a_type, b_type;  // mxf8f6f4: tcgen05::kMxType*; f16: tcgen05::kF16Type*
  float sign_a, sign_b;     // -1 where the descriptor negates the operand
  uint32_t sfa_id, sfb_id;  // mxf8f6f4: byte of the scale word
};

// 2^e as an exact float for e in [-149, 127] (subnormal below -126).
__device__ __forceinline__ float pow2f(int e) {
  return e >= -126 ? __uint_as_float(uint32_t(e + 127) << 23) : __uint_as_float(1u << (e + 149));
}

// The kK values of row r of a K-major operand, 32 bytes of K, in CTA `rank`'s shared memory, decoded
// and signed. MXFP8: byte i of the 32 is value i. F16/BF16: two bytes per value, little-endian, so
// the low half of word w is value 2w.
template <tcgen05::MmaKind kKind, int kK = int(tcgen05::mma_k(kKind))>
__device__ __forceinline__ void load_kind_row(const tcgen05::SmemDescriptor& d, uint32_t rank, uint32_t r,
                                              uint32_t type, float sign, float (&out)[kK]) {
#pragma unroll
  for (int w = 0; w < 8; ++w) {
    const uint32_t word = ld_cluster_u32(map_to_rank(operand_byte_address(d, r, 4 * w), rank));
    if constexpr (kKind == tcgen05::MmaKind::kMxf8f6f4) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const uint8_t byte = uint8_t(word >> (8 * i));
        out[4 * w + i] = sign * (type == tcgen05::kMxTypeE4M3 ? e4m3_to_float(byte) : e5m2_to_float(byte));
      }
    } else {
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const uint16_t half = uint16_t(word >> (16 * i));
        out[2 * w + i] = sign * (type == tcgen05::kF16TypeF16 ? fp16_bits_to_float(half) : bf16_bits_to_float(half));
      }
    }
  }
}

// The UE8M0 scale of row r (of A, or column r of B) for the instruction: byte `id` of the word
// tcgen05.cp put at sf_cell(sf_column, r).
__device__ __forceinline__ uint32_t scale_byte(uint32_t sm, uint32_t sf_column, uint32_t r, uint32_t id) {
  const tcgen05::SfCell c = tcgen05::sf_cell(sf_column, r, 0);
  return (tmem_load(sm, c.lane, c.column) >> (8 * id)) & 0xFFu;
}

// acc + sum_k a[k] b[k] 2^(ea + eb - 254), in k order (see Numerics above).
__device__ __forceinline__ float mxf8_dot(const float (&a)[32], const float (&b)[32], uint32_t ea, uint32_t eb,
                                          float acc) {
  if (ea == 0xFF || eb == 0xFF) return __uint_as_float(0x7FC00000u);  // a NaN scale
  const int e = int(ea) + int(eb) - 254;
  if (e >= -149 && e <= 127) {
    const float s = pow2f(e);
#pragma unroll
    for (int k = 0; k < 32; ++k) acc = fmaf(a[k] * b[k], s, acc);  // a[k] b[k] is exact
  } else {
#pragma unroll
    for (int k = 0; k < 32; ++k) acc += ldexpf(a[k] * b[k], e);  // beyond FP32's range: rounds, or Inf
  }
  return acc;
}

// acc + sum_k a[k] b[k], in k order.
__device__ __forceinline__ float f16_dot(const float (&a)[16], const float (&b)[16], float acc) {
#pragma unroll
  for (int k = 0; k < 16; ++k) acc = fmaf(a[k], b[k], acc);  // each product is exact
  return acc;
}

// D (+)= A B (scaled for mxf8f6f4) for one instruction whose descriptor was checked. `worker` of
// `workers` threads computes every workers-th row of D (of both CTAs with cta_group::2).
template <tcgen05::MmaKind kKind>
__device__ inline void execute_kind_mma(CtaRecord& rec, uint32_t d_tmem, uint64_t adesc, uint64_t bdesc,
                                        const KindOperands& ops, uint32_t N, uint32_t sfa_tmem, uint32_t sfb_tmem,
                                        bool accumulate, int cta_group, int worker, int workers) {
  constexpr bool kScaled = kKind == tcgen05::MmaKind::kMxf8f6f4;
  constexpr int kK = int(tcgen05::mma_k(kKind));
  const char* kName = "tcgen05.mma";
  const tcgen05::SmemDescriptor a = checked_descriptor(kName, adesc, true), b = checked_descriptor(kName, bdesc, true);
  // Alignment, as for NVFP4 (docs/emulator.md): D and the scales start at lane 0; scale columns are even.
  if (tcgen05::tmem_lane(d_tmem) || (kScaled && (tcgen05::tmem_lane(sfa_tmem) || tcgen05::tmem_lane(sfb_tmem))))
    fail(kName, "D and scale-factor addresses must start at lane 0", d_tmem, sfa_tmem);
  if (kScaled && (tcgen05::tmem_column(sfa_tmem) % 2 || tcgen05::tmem_column(sfb_tmem) % 2))
    fail(kName, "scale-factor addresses must be 2-column aligned (SFA column, SFB column)", tcgen05::tmem_column(sfa_tmem),
         tcgen05::tmem_column(sfb_tmem));
  if (stopped_warp(workers)) return;  // report mode: a refusal above ends the instruction here
  const uint32_t d_col = tcgen05::tmem_column(d_tmem);
  const uint32_t sfa_col = tcgen05::tmem_column(sfa_tmem), sfb_col = tcgen05::tmem_column(sfb_tmem);
  const uint32_t first = cta_group == 2 ? rec.rank & ~1u : rec.rank;
  const uint32_t b_rows_per_cta = N / uint32_t(cta_group);

  uint32_t seq = 0, step = 0;
  if (worker == 0) seq = number_operation(kName, rec, kOpMma, accumulate, &step);
  seq = broadcast_from_worker0(seq, workers);
  for (int v = 0; v < cta_group; ++v) {
    const uint32_t sm = sm_of_member(rec, uint32_t(v));
    check_allocated(kName, sm, d_col, N);
    if constexpr (kScaled) {
      check_allocated(kName, sm, sfa_col, 4);
      check_allocated(kName, sm, sfb_col, (N + 31) / 32);
      check_sf_duplicated(sm, sfa_col, 128, worker, workers);
      check_sf_duplicated(sm, sfb_col, N, worker, workers);
    }
    mark_writes(kName, rec, sm, d_col, N, seq, worker, workers, false);
    if constexpr (kScaled) {
      mark_reads(rec, sm, sfa_col, 4, seq, worker, workers);
      mark_reads(rec, sm, sfb_col, (N + 31) / 32, seq, worker, workers);
    }
  }
  __threadfence();
  if (workers == 32) __syncwarp();

  for (int item = worker; item < 128 * cta_group; item += workers) {
    const uint32_t v = uint32_t(item) / 128, m = uint32_t(item) % 128, rank = first + v, sm = sm_of_member(rec, v);
    float arow[kK];
    load_kind_row<kKind>(a, rank, m, ops.a_type, ops.sign_a, arow);
    const uint32_t ea = kScaled ? scale_byte(sm, sfa_col, m, ops.sfa_id) : 0;
    for (uint32_t n = 0; n < N; ++n) {
      // With cta_group::2, B's first N/2 rows sit in the even CTA, the rest in the odd one; the
      // scales of all N are in each CTA's own Tensor Memory.
      const uint32_t b_rank = first + n / b_rows_per_cta, b_row = n % b_rows_per_cta;
      float brow[kK];
      load_kind_row<kKind>(b, b_rank, b_row, ops.b_type, ops.sign_b, brow);
      float acc = accumulate ? __uint_as_float(tmem_load(sm, m, d_col + n)) : 0.0f;
      if constexpr (kScaled)
        acc = mxf8_dot(arow, brow, ea, scale_byte(sm, sfb_col, n, ops.sfb_id), acc);
      else
        acc = f16_dot(arow, brow, acc);
      tmem_store(sm, m, d_col + n, __float_as_uint(acc));
    }
  }
  uint64_t fp_a[2] = {0, 0}, fp_b[2] = {0, 0};
  for (int v = 0; v < cta_group; ++v) {
    fp_a[v] = sum_over_workers(hash_operand_rows(a, first + uint32_t(v), uint32_t(worker), 128, uint32_t(workers)), workers);
    fp_b[v] = sum_over_workers(hash_operand_rows(b, first + uint32_t(v), uint32_t(worker), b_rows_per_cta, uint32_t(workers)),
                               workers);
  }
  __threadfence();
  if (worker == 0) {
    OpRecord& op = rec.log[seq % kLogCapacity];
    op.desc[0] = adesc;
    op.desc[1] = bdesc;
    op.fp[0][0] = fp_a[0];
    op.fp[0][1] = fp_b[0];
    op.fp[1][0] = fp_a[1];
    op.fp[1][1] = fp_b[1];
    op.kind = kOpMma;
    op.step = step;
    op.n = N;
    op.column = d_col;
    op.cta_group = uint32_t(cta_group);
    op.seq = seq;
    __threadfence();
  }
}

// ---- tcgen05.mma .kind::mxf8f6f4.block_scale.block32 ------------------------------------------------------

__device__ inline void mma_mxf8f6f4_block32(uint32_t d_tmem, uint64_t adesc, uint64_t bdesc, uint32_t idesc,
                                            uint32_t sfa_tmem, uint32_t sfb_tmem, bool accumulate, int cta_group,
                                            int worker, int workers) {
  if (stopped_warp(workers)) return;
  const char* kName = "tcgen05.mma";
  CtaRecord& rec = *require_record(kName, cta_group);
  const tcgen05::Rejection bad = tcgen05::check_mxf8f6f4(idesc, cta_group, tcgen05::ScaleVec::kBlock32);
  if (bad.what) fail(kName, bad.what, bad.a, bad.b);
  const tcgen05::Mxf8f6f4InstrDescriptor id = tcgen05::decode_mxf8f6f4_instr_descriptor(idesc);
  if (!bad.what) {
    if (id.sparse) fail(kName, "kind::mxf8f6f4: sparse MMA is not modelled");
    if (!tcgen05::mx_type_is_8_bit(id.a_type) || !tcgen05::mx_type_is_8_bit(id.b_type))
      fail(kName, "kind::mxf8f6f4: E2M3, E3M2 and E2M1 operands are not modelled (their padded shared-memory layouts "
                  "are given only as figures); E4M3 (0) and E5M2 (1) are (A type, B type)", id.a_type, id.b_type);
    if (id.transpose_a || id.transpose_b)
      fail(kName, "kind::mxf8f6f4: transposed (MN-major) operands are not modelled (transpose A, B)", id.transpose_a,
           id.transpose_b);
    if (cta_group == 2 && id.m != 256)
      fail(kName, "cta_group::2 is modelled for M = 256 only (M = 128 uses the 2x2 datapath)", id.m);
  }
  if (stopped_warp(workers)) return;
  const KindOperands ops{id.a_type, id.b_type, id.negate_a ? -1.0f : 1.0f, id.negate_b ? -1.0f : 1.0f, id.sfa_id, id.sfb_id};
  execute_kind_mma<tcgen05::MmaKind::kMxf8f6f4>(rec, d_tmem, adesc, bdesc, ops, id.n, sfa_tmem, sfb_tmem, accumulate,
                                                cta_group, worker, workers);
}

// ---- tcgen05.mma .kind::f16 --------------------------------------------------------------------------------

__device__ inline void mma_f16(uint32_t d_tmem, uint64_t adesc, uint64_t bdesc, uint32_t idesc, bool accumulate,
                               int cta_group, int worker, int workers) {
  if (stopped_warp(workers)) return;
  const char* kName = "tcgen05.mma";
  CtaRecord& rec = *require_record(kName, cta_group);
  const tcgen05::Rejection bad = tcgen05::check_f16(idesc, cta_group);
  if (bad.what) fail(kName, bad.what, bad.a, bad.b);
  const tcgen05::F16InstrDescriptor id = tcgen05::decode_f16_instr_descriptor(idesc);
  if (!bad.what) {
    if (id.sparse) fail(kName, "kind::f16: sparse MMA is not modelled");
    if (id.d_type != tcgen05::kDTypeF32)
      fail(kName, "kind::f16: an F16 D is not modelled (D is FP32, the accumulator every kind here shares)", id.d_type);
    if (id.a_type != id.b_type)
      fail(kName, "kind::f16: F16 x BF16 is not modelled (Table 39 does not say whether A and B types may differ) "
                  "(A type, B type)", id.a_type, id.b_type);
    if (id.transpose_a || id.transpose_b)
      fail(kName, "kind::f16: transposed (MN-major) operands are not modelled (transpose A, B)", id.transpose_a,
           id.transpose_b);
    if (cta_group == 1 && id.m != 128)
      fail(kName, "kind::f16: cta_group::1 is modelled for M = 128 only (M = 64 uses another datapath layout)", id.m);
    if (cta_group == 2 && id.m != 256)
      fail(kName, "cta_group::2 is modelled for M = 256 only (M = 128 uses the 2x2 datapath)", id.m);
  }
  if (stopped_warp(workers)) return;
  const KindOperands ops{id.a_type, id.b_type, id.negate_a ? -1.0f : 1.0f, id.negate_b ? -1.0f : 1.0f, 0, 0};
  execute_kind_mma<tcgen05::MmaKind::kF16>(rec, d_tmem, adesc, bdesc, ops, id.n, 0, 0, accumulate, cta_group, worker,
                                           workers);
}

}  // namespace gemm::emu
