// Instruction descriptors of the tcgen05.mma kinds that write the same FP32 accumulator as NVFP4's
// kind::mxf4nvf4: kind::mxf8f6f4 with .block32 scales (MXFP8: E4M3 or E5M2 values, one UE8M0 scale
// per 32 values of K) and kind::f16 (FP16 or BF16 operands, FP32 accumulate). Each is built and
// decoded field by field, and checked against the rules the PTX ISA states for its kind, so the
// emulator (common/emu/tcgen05_emu_kinds.cuh), the protocol checker and the CPU tests read the
// very words the wrappers (common/ptx/tcgen05.cuh) hand to the hardware. common/tcgen05_desc.h holds
// the shared-memory descriptor, the kind::mxf4nvf4 descriptor and the Tensor Memory addresses.
//
// kind::f16, 32 bits   PTX ISA 9.1, 9.7.16.4.2, Table 42 (the .kind::f16 column)
//   bits  0-1   sparsity selector (sparse MMAs only)     bit   2     sparsity (0 dense)
//   bit   3     saturate (kind::i8 only: 0 here)         bits  4-5   D type: F16 = 0, F32 = 1
//   bit   6     reserved                                 bits  7-9   A type: F16 = 0, BF16 = 1
//   bits 10-12  B type: F16 = 0, BF16 = 1                bit  13/14  negate A / B
//   bit  15/16  transpose A / B (0: K-major)             bits 17-22  N >> 3
//   bit  23     reserved                                 bits 24-28  M >> 4
//   bit  29     reserved                                 bits 30-31  maximum shift (B reuse of .ws)
//
// kind::mxf8f6f4, 32 bits   PTX ISA 9.1, 9.7.16.4.2, Table 43
//   bits  0-1   reserved                                 bit   2     sparsity (0 dense)
//   bit   3     reserved                                 bits  4-5   SFB id: byte 0-3 of the scale word
//   bit   6     reserved                                 bits  7-9   A type: E4M3 0, E5M2 1, E2M3 3, E3M2 4, E2M1 5
//   bits 10-12  B type (the same codes)                  bit  13/14  negate A / B
//   bit  15/16  transpose A / B (0: K-major)             bits 17-22  N >> 3
//   bit  23     scale type: UE8M0 = 1 (the only one)     bits 24-26  reserved
//   bits 27-28  M >> 7                                   bits 29-30  SFA id: byte 0-3 of the scale word
//   bit  31     reserved
// CUTLASS (include/cute/arch/mma_sm100_desc.hpp, UMMA::InstrDescriptor and InstrDescriptorBlockScaled)
// places every field at the same bits; it writes the block-scaled M as M >> 4 into bits 24-28, which
// for M = 128 and 256 is the same bit pattern as M >> 7 in bits 27-28.
//
// What one instruction consumes (PTX ISA 9.1, 9.7.16.2.1, Table 39, dense): K = 64 for mxf4nvf4,
// 32 for mxf8f6f4, 16 for f16. Each is 32 bytes of a K-major row (64 x 4 bits, 32 x 8 bits, 16 x 16
// bits), so a 128-byte swizzle row holds 4 instructions' K for every kind, and a kernel steps K by
// adding 32 bytes to the descriptors' start address whatever the kind (common/tcgen05_desc.h,
// advance_start). In shared memory an E4M3/E5M2 value is one byte, a F16/BF16 value two bytes
// (little-endian), in K order; the padded 4- and 6-bit layouts kind::mxf8f6f4 also accepts are given
// only as figures (9.7.16.10.4.4) and are refused here.
//
// The scales of kind::mxf8f6f4 (.block32 = .scale_vec::1X, PTX ISA 9.1, 9.7.16.10.7.1 Tables 56
// and 57): one UE8M0 scale per row of A and per column of B for the instruction's K = 32. It is read
// from byte SF_ID of the 32-bit Tensor Memory word (9.7.16.10.7.2.1, 9.7.16.10.7.3.1: "SFA_ID
// specifies the byte offset in the Tensor Memory word"). The word is the one NVFP4 uses
// (tcgen05::sf_cell: lane r % 32 of each quadrant, column sf_column + r / 32), filled by the same
// tcgen05.cp .32x128b.warpx4 of a 512-byte blocked atom whose 4 bytes per row are now the scales of
// 4 consecutive K blocks of 32: one copy covers K = 128, and the instruction of K block j (0..3) of
// those 128 names SF_ID = j. (Which byte a given SF_ID picks is stated in the text; that the atom's
// row r lands in lane r % 32, column r / 32 is the placement CUTLASS and DeepGEMM use, shown by the
// PTX ISA only in figures: FACTS section 4.4.)
//
// The accumulator (9.7.16.10.4.1 and Table 39): all three kinds write D as FP32, one 32-bit column per
// column of D, row m in lane m, so one accumulator serves them all; enable-input-d = 1 adds an
// instruction of any kind to what the earlier ones left there.
//
// UNCONFIRMED (the PTX text does not say; what this file and the emulator assume):
//   - the lane and column of the 1X scale word (figures only; the NVFP4 placement is assumed);
//   - whether kind::f16 accepts A and B of different types (F16 x BF16): Table 39 lists the operand
//     types together; the emulator refuses the mix, check_f16 lets it pass;
//   - whether the maximum shift (bits 30-31) must be 0 without .ws: Table 42 defines it for .ws only;
//     check_f16 requires 0, since no wrapper issues .ws;
//   - that kind::f16 with M = 128 (one CTA) and M = 256 (a pair) puts row m of D in lane m, as for
//     NVFP4 (CUTLASS's SM100_MMA_F16BF16 atoms assume so; the datapath layouts are figures).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/config.h"
#include "common/tcgen05_desc.h"

namespace gemm::tcgen05 {

// ---- Fields ---------------------------------------------------------------------------------------

// A field of an instruction descriptor: `width` bits from bit `lo`.
struct BitField {
  uint32_t lo, width;
};
GEMM_HD constexpr uint32_t field_mask(BitField f) { return uint32_t((uint64_t(1) << f.width) - 1) << f.lo; }
GEMM_HD constexpr uint32_t field_get(BitField f, uint32_t word) { return (word & field_mask(f)) >> f.lo; }
GEMM_HD constexpr uint32_t field_put(BitField f, uint32_t value) { return (value << f.lo) & field_mask(f); }

// True when the fields cover the 32 bits exactly once: no overlap, no gap. The tables are checked
// this way below, so a mistyped position does not compile.
template <size_t N>
constexpr bool tiles_32_bits(const BitField (&fields)[N]) {
  uint32_t seen = 0;
  for (size_t i = 0; i < N; ++i) {
    if (fields[i].width == 0 || fields[i].lo + fields[i].width > 32) return false;
    if (seen & field_mask(fields[i])) return false;
    seen |= field_mask(fields[i]);
  }
  return seen == 0xFFFFFFFFu;
}

namespace f16_field {  // PTX ISA 9.1, Table 42
inline constexpr BitField kSparseSelector{0, 2}, kSparse{2, 1}, kSaturate{3, 1}, kDType{4, 2}, kReserved6{6, 1},
    kAType{7, 3}, kBType{10, 3}, kNegateA{13, 1}, kNegateB{14, 1}, kTransposeA{15, 1}, kTransposeB{16, 1},
    kN{17, 6}, kReserved23{23, 1}, kM{24, 5}, kReserved29{29, 1}, kMaxShift{30, 2};
inline constexpr BitField kAll[] = {kSparseSelector, kSparse, kSaturate, kDType, kReserved6, kAType, kBType, kNegateA,
                                    kNegateB, kTransposeA, kTransposeB, kN, kReserved23, kM, kReserved29, kMaxShift};
inline constexpr uint32_t kReservedMask = field_mask(kReserved6) | field_mask(kReserved23) | field_mask(kReserved29);
static_assert(tiles_32_bits(kAll), "kind::f16 fields must cover the 32 bits of Table 42 once");
static_assert(kM.lo == 24 && kM.width == 5 && kN.lo == 17 && kN.width == 6, "M >> 4 at 24-28, N >> 3 at 17-22");
static_assert(kDType.lo == 4 && kAType.lo == 7 && kBType.lo == 10 && kMaxShift.lo == 30, "Table 42 positions");
}  // namespace f16_field

namespace mxf8f6f4_field {  // PTX ISA 9.1, Table 43
inline constexpr BitField kReserved0{0, 2}, kSparse{2, 1}, kReserved3{3, 1}, kSfbId{4, 2}, kReserved6{6, 1},
    kAType{7, 3}, kBType{10, 3}, kNegateA{13, 1}, kNegateB{14, 1}, kTransposeA{15, 1}, kTransposeB{16, 1},
    kN{17, 6}, kScaleType{23, 1}, kReserved24{24, 3}, kM{27, 2}, kSfaId{29, 2}, kReserved31{31, 1};
inline constexpr BitField kAll[] = {kReserved0, kSparse, kReserved3, kSfbId, kReserved6, kAType, kBType, kNegateA, kNegateB,
                                    kTransposeA, kTransposeB, kN, kScaleType, kReserved24, kM, kSfaId, kReserved31};
inline constexpr uint32_t kReservedMask = field_mask(kReserved0) | field_mask(kReserved3) | field_mask(kReserved6) |
                                          field_mask(kReserved24) | field_mask(kReserved31);
static_assert(tiles_32_bits(kAll), "kind::mxf8f6f4 fields must cover the 32 bits of Table 43 once");
static_assert(kSfbId.lo == 4 && kSfaId.lo == 29 && kScaleType.lo == 23 && kM.lo == 27 && kM.width == 2,
              "SFB id 4-5, SFA id 29-30, scale type 23, M >> 7 at 27-28");
}  // namespace mxf8f6f4_field

// ---- Kinds, shapes and the scale vector qualifier --------------------------------------------------

enum class MmaKind : uint32_t { kMxf4Nvf4 = 0, kMxf8f6f4 = 1, kF16 = 2 };

// The instruction's .scale_vectorsize qualifier as this project spells it (PTX ISA 9.1, 9.7.16.10.9.1:
// .block16 aliases .scale_vec::4X of mxf4nvf4; .block32 aliases .scale_vec::1X of mxf8f6f4 and
// .scale_vec::2X of mxf4/mxf4nvf4). kNone: a kind without block scaling.
enum class ScaleVec : uint32_t { kNone = 0, kBlock16 = 16, kBlock32 = 32 };

// K of one dense instruction (PTX ISA 9.1, Table 39).
GEMM_HD constexpr uint32_t mma_k(MmaKind kind) {
  return kind == MmaKind::kMxf4Nvf4 ? 64u : kind == MmaKind::kMxf8f6f4 ? 32u : 16u;
}
// Bytes of one K-major row that one instruction reads: the same 32 for every kind.
inline constexpr uint32_t kMmaKBytes = 32;
static_assert(mma_k(MmaKind::kMxf4Nvf4) * 4 / 8 == kMmaKBytes && mma_k(MmaKind::kMxf8f6f4) * 8 / 8 == kMmaKBytes &&
                  mma_k(MmaKind::kF16) * 16 / 8 == kMmaKBytes,
              "every kind reads 32 bytes of K per row per instruction");

// The shape an instruction descriptor names, decoded as its kind lays it out, and whether the kind
// reads scale factors from Tensor Memory.
struct MmaShape {
  uint32_t m, n;
  bool scaled;
};
GEMM_HD constexpr MmaShape mma_shape(MmaKind kind, uint32_t idesc) {
  if (kind == MmaKind::kF16)
    return {field_get(f16_field::kM, idesc) << 4, field_get(f16_field::kN, idesc) << 3, false};
  return {field_get(mxf8f6f4_field::kM, idesc) << 7, field_get(mxf8f6f4_field::kN, idesc) << 3, true};
}

// ---- kind::f16 -------------------------------------------------------------------------------------

inline constexpr uint32_t kF16TypeF16 = 0, kF16TypeBF16 = 1;  // A and B types (2 is TF32: kind::tf32)
inline constexpr uint32_t kDTypeF16 = 0, kDTypeF32 = 1;        // D type (2 is S32: kind::i8)

struct F16InstrDescriptor {
  uint32_t sparse_selector = 0, sparse = 0, saturate = 0, d_type = kDTypeF32, a_type = kF16TypeF16,
           b_type = kF16TypeF16, negate_a = 0, negate_b = 0, transpose_a = 0, transpose_b = 0, n = 0, m = 0,
           max_shift = 0;
  uint32_t reserved = 0;  // decoded reserved bits (6, 23, 29); must be 0
};

GEMM_HD constexpr uint32_t encode(const F16InstrDescriptor& d) {
  using namespace f16_field;
  return field_put(kSparseSelector, d.sparse_selector) | field_put(kSparse, d.sparse) |
         field_put(kSaturate, d.saturate) | field_put(kDType, d.d_type) | field_put(kAType, d.a_type) |
         field_put(kBType, d.b_type) | field_put(kNegateA, d.negate_a) | field_put(kNegateB, d.negate_b) |
         field_put(kTransposeA, d.transpose_a) | field_put(kTransposeB, d.transpose_b) | field_put(kN, d.n >> 3) |
         field_put(kM, d.m >> 4) | field_put(kMaxShift, d.max_shift) | (d.reserved & kReservedMask);
}

GEMM_HD constexpr F16InstrDescriptor decode_f16_instr_descriptor(uint32_t w) {
  using namespace f16_field;
  F16InstrDescriptor d;
  d.sparse_selector = field_get(kSparseSelector, w);
  d.sparse = field_get(kSparse, w);
  d.saturate = field_get(kSaturate, w);
  d.d_type = field_get(kDType, w);
  d.a_type = field_get(kAType, w);
  d.b_type = field_get(kBType, w);
  d.negate_a = field_get(kNegateA, w);
  d.negate_b = field_get(kNegateB, w);
  d.transpose_a = field_get(kTransposeA, w);
  d.transpose_b = field_get(kTransposeB, w);
  d.n = field_get(kN, w) << 3;
  d.m = field_get(kM, w) << 4;
  d.max_shift = field_get(kMaxShift, w);
  d.reserved = w & kReservedMask;
  return d;
}

// The descriptor of a dense kind::f16 MMA with FP32 D and K-major A and B: a_type, b_type are
// kF16TypeF16 or kF16TypeBF16.
GEMM_HD constexpr uint32_t f16_instr_descriptor(uint32_t a_type, uint32_t b_type, uint32_t m, uint32_t n) {
  F16InstrDescriptor d;
  d.a_type = a_type;
  d.b_type = b_type;
  d.m = m;
  d.n = n;
  return encode(d);
}

// ---- kind::mxf8f6f4 --------------------------------------------------------------------------------

// A and B type codes (Table 43). kind::mxf4nvf4 codes E2M1 as 1 (tcgen05::kTypeE2M1), this kind as 5.
inline constexpr uint32_t kMxTypeE4M3 = 0, kMxTypeE5M2 = 1, kMxTypeE2M3 = 3, kMxTypeE3M2 = 4, kMxTypeE2M1 = 5;

struct Mxf8f6f4InstrDescriptor {
  uint32_t sparse = 0, sfb_id = 0, a_type = kMxTypeE4M3, b_type = kMxTypeE4M3, negate_a = 0, negate_b = 0,
           transpose_a = 0, transpose_b = 0, n = 0, scale_type = kScaleUE8M0, m = 0, sfa_id = 0;
  uint32_t reserved = 0;  // decoded reserved bits (0-1, 3, 6, 24-26, 31); must be 0
};

GEMM_HD constexpr uint32_t encode(const Mxf8f6f4InstrDescriptor& d) {
  using namespace mxf8f6f4_field;
  return field_put(kSparse, d.sparse) | field_put(kSfbId, d.sfb_id) | field_put(kAType, d.a_type) |
         field_put(kBType, d.b_type) | field_put(kNegateA, d.negate_a) | field_put(kNegateB, d.negate_b) |
         field_put(kTransposeA, d.transpose_a) | field_put(kTransposeB, d.transpose_b) | field_put(kN, d.n >> 3) |
         field_put(kScaleType, d.scale_type) | field_put(kM, d.m >> 7) | field_put(kSfaId, d.sfa_id) |
         (d.reserved & kReservedMask);
}

GEMM_HD constexpr Mxf8f6f4InstrDescriptor decode_mxf8f6f4_instr_descriptor(uint32_t w) {
  using namespace mxf8f6f4_field;
  Mxf8f6f4InstrDescriptor d;
  d.sparse = field_get(kSparse, w);
  d.sfb_id = field_get(kSfbId, w);
  d.a_type = field_get(kAType, w);
  d.b_type = field_get(kBType, w);
  d.negate_a = field_get(kNegateA, w);
  d.negate_b = field_get(kNegateB, w);
  d.transpose_a = field_get(kTransposeA, w);
  d.transpose_b = field_get(kTransposeB, w);
  d.n = field_get(kN, w) << 3;
  d.scale_type = field_get(kScaleType, w);
  d.m = field_get(kM, w) << 7;
  d.sfa_id = field_get(kSfaId, w);
  d.reserved = w & kReservedMask;
  return d;
}

// The descriptor of a dense MXFP8 MMA: UE8M0 scales read from byte sfa_id / sfb_id of their words,
// K-major A and B.
GEMM_HD constexpr uint32_t mxf8f6f4_instr_descriptor(uint32_t a_type, uint32_t b_type, uint32_t m, uint32_t n,
                                                     uint32_t sfa_id, uint32_t sfb_id) {
  Mxf8f6f4InstrDescriptor d;
  d.a_type = a_type;
  d.b_type = b_type;
  d.m = m;
  d.n = n;
  d.sfa_id = sfa_id;
  d.sfb_id = sfb_id;
  return encode(d);
}

// Worked values (derived from the tables above; the first is FACTS section 2.4's anchor).
static_assert(mxf8f6f4_instr_descriptor(kMxTypeE4M3, kMxTypeE4M3, 128, 256, 0, 0) == 0x08C00000u,
              "mxf8f6f4 E4M3 x E4M3, UE8M0, M = 128, N = 256");
static_assert(f16_instr_descriptor(kF16TypeBF16, kF16TypeBF16, 128, 256) == 0x08400490u,
              "f16 BF16 x BF16 -> F32, M = 128, N = 256");
static_assert(f16_instr_descriptor(kF16TypeF16, kF16TypeF16, 128, 128) == 0x08200010u,
              "f16 F16 x F16 -> F32, M = 128, N = 128");

// ---- Validity, per kind -----------------------------------------------------------------------------

// Why a descriptor is invalid for its kind, or what == nullptr when the PTX ISA allows it. `a` and `b`
// are the offending values. Rules the ISA states; what the emulator can execute is a narrower set
// (it refuses the rest with its own message).
struct Rejection {
  const char* what;
  uint32_t a, b;
};
GEMM_HD constexpr Rejection accepted() { return {nullptr, 0, 0}; }

// M and N of the dense shapes of Table 39 (no .ws): with cta_group::1 N = 8..256 in steps of 8, with
// cta_group::2 N = 16..256 in steps of 16.
GEMM_HD constexpr bool n_in_table(uint32_t n, int cta_group) {
  const uint32_t step = cta_group == 1 ? 8u : 16u;
  return n >= step && n <= 256 && n % step == 0;
}

// kind::f16 (Tables 39 and 42).
GEMM_HD constexpr Rejection check_f16(uint32_t idesc, int cta_group) {
  const F16InstrDescriptor d = decode_f16_instr_descriptor(idesc);
  if (d.reserved) return {"kind::f16: reserved instruction-descriptor bits (6, 23, 29) set", d.reserved, 0};
  if (d.saturate) return {"kind::f16: saturate (bit 3) exists for kind::i8 only", d.saturate, 0};
  if (!d.sparse && d.sparse_selector)
    return {"kind::f16: a sparsity selector (bits 0-1) without sparsity (bit 2)", d.sparse_selector, 0};
  if (d.d_type > kDTypeF32) return {"kind::f16: D type must be F16 (0) or F32 (1) (bits 4-5)", d.d_type, 0};
  if (d.a_type > kF16TypeBF16 || d.b_type > kF16TypeBF16)
    return {"kind::f16: A and B types must be F16 (0) or BF16 (1) (bits 7-9, 10-12)", d.a_type, d.b_type};
  if (d.d_type == kDTypeF16 && (d.a_type != kF16TypeF16 || d.b_type != kF16TypeF16))
    return {"kind::f16: an F16 D takes F16 operands only (Table 39)", d.a_type, d.b_type};
  const bool m_ok = cta_group == 1 ? (d.m == 64 || d.m == 128) : (d.m == 128 || d.m == 256);
  if (!m_ok) return {"kind::f16: M must be 64 or 128 with cta_group::1, 128 or 256 with cta_group::2", d.m, uint32_t(cta_group)};
  if (!n_in_table(d.n, cta_group))
    return {"kind::f16: N must be 8..256 step 8 with cta_group::1, 16..256 step 16 with cta_group::2", d.n,
            uint32_t(cta_group)};
  if (d.max_shift)
    return {"kind::f16: the maximum shift (bits 30-31) belongs to tcgen05.mma.ws, which no wrapper issues", d.max_shift, 0};
  return accepted();
}

GEMM_HD constexpr bool mx_type_defined(uint32_t t) {
  return t == kMxTypeE4M3 || t == kMxTypeE5M2 || t == kMxTypeE2M3 || t == kMxTypeE3M2 || t == kMxTypeE2M1;
}
GEMM_HD constexpr bool mx_type_is_8_bit(uint32_t t) { return t == kMxTypeE4M3 || t == kMxTypeE5M2; }

// kind::mxf8f6f4 (Tables 39, 43, 52, 54, 56, 57). `vec` is the instruction's qualifier.
GEMM_HD constexpr Rejection check_mxf8f6f4(uint32_t idesc, int cta_group, ScaleVec vec) {
  const Mxf8f6f4InstrDescriptor d = decode_mxf8f6f4_instr_descriptor(idesc);
  if (vec != ScaleVec::kBlock32)
    return {"kind::mxf8f6f4: the scale vector must be .block32 (= .scale_vec::1X): one UE8M0 scale per 32 values",
            uint32_t(vec), 0};
  if (d.reserved) return {"kind::mxf8f6f4: reserved instruction-descriptor bits (0-1, 3, 6, 24-26, 31) set", d.reserved, 0};
  if (d.scale_type != kScaleUE8M0) return {"kind::mxf8f6f4: scales must be UE8M0 (bit 23 = 1)", d.scale_type, 0};
  if (!mx_type_defined(d.a_type) || !mx_type_defined(d.b_type))
    return {"kind::mxf8f6f4: A and B type codes are E4M3 0, E5M2 1, E2M3 3, E3M2 4, E2M1 5", d.a_type, d.b_type};
  const bool m_ok = cta_group == 1 ? d.m == 128 : (d.m == 128 || d.m == 256) && !(d.sparse && d.m != 256);
  if (!m_ok)
    return {"kind::mxf8f6f4: M must be 128 with cta_group::1, 128 or 256 with cta_group::2 (sparse: 256)", d.m,
            uint32_t(cta_group)};
  if (!n_in_table(d.n, cta_group))
    return {"kind::mxf8f6f4: N must be 8..256 step 8 with cta_group::1, 16..256 step 16 with cta_group::2", d.n,
            uint32_t(cta_group)};
  if ((d.transpose_a && !mx_type_is_8_bit(d.a_type)) || (d.transpose_b && !mx_type_is_8_bit(d.b_type)))
    return {"kind::mxf8f6f4: only 8-bit types may be transposed (MN-major) (Table 54)", d.a_type, d.b_type};
  if (d.transpose_b && d.n % (cta_group == 1 ? 16u : 32u))
    return {"kind::mxf8f6f4: a transposed 8-bit B needs N in steps of 16 (cta_group::1) or 32 (cta_group::2) (Table 52)",
            d.n, uint32_t(cta_group)};
  return accepted();  // SFA and SFB ids 0-3 all name a byte of the word with .scale_vec::1X
}

// kind::mxf4nvf4, the NVFP4 kind of common/tcgen05_desc.h (Tables 39, 44, 56, 57 and 9.7.16.10.7.2-3),
// so the rules of all three kinds sit side by side.
GEMM_HD Rejection check_mxf4nvf4(uint32_t idesc, int cta_group, ScaleVec vec) {
  const InstrDescriptor d = decode_instr_descriptor(idesc);
  if (vec != ScaleVec::kBlock16 && vec != ScaleVec::kBlock32)
    return {"kind::mxf4nvf4: the scale vector must be given: .block16 or .block32", uint32_t(vec), 0};
  if (d.reserved) return {"kind::mxf4nvf4: reserved instruction-descriptor bits (0-1, 3, 6, 12, 24-26) set", d.reserved, 0};
  if (d.a_type != kTypeE2M1 || d.b_type != kTypeE2M1)
    return {"kind::mxf4nvf4: A and B types must be E2M1 (code 1)", d.a_type, d.b_type};
  if (d.transpose_a || d.transpose_b) return {"kind::mxf4nvf4: A and B cannot be transposed (Table 51)", d.transpose_a, d.transpose_b};
  if (d.scale_type == kScaleUE4M3 && vec != ScaleVec::kBlock16)
    return {"kind::mxf4nvf4: UE4M3 scales need .block16 (Table 57)", uint32_t(vec), 0};
  if (vec == ScaleVec::kBlock16 && (d.sfa_id || d.sfb_id))
    return {"kind::mxf4nvf4: .block16 scales fill the whole word: SFA and SFB ids must be 0", d.sfa_id, d.sfb_id};
  if (vec == ScaleVec::kBlock32 && (d.sfa_id % 2 || d.sfb_id % 2))
    return {"kind::mxf4nvf4: .block32 scales are half words: SFA and SFB ids must be 0 or 2", d.sfa_id, d.sfb_id};
  if (d.k96) return {"kind::mxf4nvf4: K = 96 (bit 31) exists on sm_103a only", d.k96, 0};
  const bool m_ok = cta_group == 1 ? d.m == 128 : (d.m == 128 || d.m == 256) && !(d.sparse && d.m != 256);
  if (!m_ok)
    return {"kind::mxf4nvf4: M must be 128 with cta_group::1, 128 or 256 with cta_group::2 (sparse: 256)", d.m,
            uint32_t(cta_group)};
  if (!n_in_table(d.n, cta_group))
    return {"kind::mxf4nvf4: N must be 8..256 step 8 with cta_group::1, 16..256 step 16 with cta_group::2", d.n,
            uint32_t(cta_group)};
  return accepted();
}

}  // namespace gemm::tcgen05
