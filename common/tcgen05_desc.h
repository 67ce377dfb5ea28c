// The descriptors and addresses tcgen05 instructions take, as plain values: encode and decode on
// the host and the device. The tcgen05 wrappers (common/ptx/tcgen05.cuh) pass the encoded words to
// the hardware on sm_100a and to the emulator (common/emu/tcgen05_emu.cuh) on Hopper, which decodes
// them with the functions below; the tests check both directions against worked values.
//
// Shared-memory matrix descriptor, 64 bits   PTX ISA 9.1, 9.7.16.4.1, Table 40
//   bits  0-13  start address     (byte address & 0x3FFFF) >> 4
//   bits 16-29  LBO               leading-dimension byte offset >> 4 (unused by swizzled K-major)
//   bits 32-45  SBO               stride-dimension byte offset >> 4: from one 8-row group to the next
//   bits 46-48  fixed 0b001       (Hopper's wgmma descriptor has no such field)
//   bits 49-51  base offset       0 when the swizzle pattern starts 1024-byte aligned
//   bit  52     LBO mode          0: LBO is a relative offset (1: absolute, sm_103a only)
//   bits 53-60  fixed 0
//   bits 61-63  layout (swizzle)  0 none, 1 128B with 32B atoms, 2 128B, 4 64B, 6 32B
//
// Instruction descriptor for kind::mxf4nvf4, 32 bits   PTX ISA 9.1, 9.7.16.4.2, Table 44
//   bit   2     sparsity (0 dense)          bits 4-5   SFB id (0 for block16)
//   bits  7-9   A type (E2M1 = 1)           bits 10-11 B type (E2M1 = 1)
//   bit  13/14  negate A / B                bit 15/16  transpose A / B (0: K-major, the only choice)
//   bits 17-22  N >> 3                      bit 23     scale type (UE4M3 = 0, UE8M0 = 1)
//   bits 27-28  M >> 7                      bits 29-30 SFA id (0 for block16)   bit 31 K = 96 (sm_103a)
//
// Tensor Memory address, 32 bits   PTX ISA 9.1, 9.7.16.1: lane << 16 | column.
#pragma once

#include <cstdint>

#include "common/config.h"

namespace gemm::tcgen05 {

// ---- Shared-memory descriptors ----------------------------------------------------------------

enum class Layout : uint32_t { kNone = 0, kSwizzle128BBase32B = 1, kSwizzle128B = 2, kSwizzle64B = 4, kSwizzle32B = 6 };

struct SmemDescriptor {
  uint32_t start = 0;        // byte address in shared memory (16-byte aligned)
  uint32_t lbo = 0;          // bytes (16-byte multiple)
  uint32_t sbo = 0;          // bytes (16-byte multiple)
  uint32_t base_offset = 0;  // 3 bits
  uint32_t lbo_mode = 0;     // 1 bit
  Layout layout = Layout::kNone;
  uint32_t fixed_46_48 = 1;  // decoded value of the fixed field; must be 0b001
  uint32_t fixed_53_60 = 0;  // decoded value of the fixed field; must be 0
};

GEMM_HD uint64_t encode(const SmemDescriptor& d) {
  return uint64_t((d.start & 0x3FFFF) >> 4) | uint64_t((d.lbo & 0x3FFFF) >> 4) << 16 |
         uint64_t((d.sbo & 0x3FFFF) >> 4) << 32 | uint64_t(1) << 46 | uint64_t(d.base_offset & 7) << 49 |
         uint64_t(d.lbo_mode & 1) << 52 | uint64_t(uint32_t(d.layout) & 7) << 61;
}

GEMM_HD SmemDescriptor decode_smem_descriptor(uint64_t w) {
  SmemDescriptor d;
  d.start = uint32_t(w & 0x3FFF) << 4;
  d.lbo = uint32_t((w >> 16) & 0x3FFF) << 4;
  d.sbo = uint32_t((w >> 32) & 0x3FFF) << 4;
  d.fixed_46_48 = uint32_t((w >> 46) & 7);
  d.base_offset = uint32_t((w >> 49) & 7);
  d.lbo_mode = uint32_t((w >> 52) & 1);
  d.fixed_53_60 = uint32_t((w >> 53) & 0xFF);
  d.layout = Layout(uint32_t(w >> 61) & 7);
  return d;
}

// The descriptor of a K-major operand tile stored as rows of 128 bytes with the 128-byte swizzle
// (what TMA writes with CU_TENSOR_MAP_SWIZZLE_128B): 8-row groups 1024 bytes apart. LBO is unused
// by swizzled K-major layouts ("assumed 1"); 16 bytes is written, as CUTLASS does.
GEMM_HD uint64_t kmajor_sw128_descriptor(uint32_t smem_byte_address) {
  SmemDescriptor d;
  d.start = smem_byte_address;
  d.lbo = 16;
  d.sbo = 8 * 128;
  d.layout = Layout::kSwizzle128B;
  return encode(d);
}

// The descriptor tcgen05.cp reads a 512-byte scale-factor atom with: no swizzle, 32 rows of 16
// bytes, 8-row core matrices 128 bytes apart (as DeepGEMM reads its scale atoms).
GEMM_HD uint64_t sf_atom_descriptor(uint32_t smem_byte_address) {
  SmemDescriptor d;
  d.start = smem_byte_address;
  d.lbo = 0;
  d.sbo = 128;
  d.layout = Layout::kNone;
  return encode(d);
}

// Advance a descriptor's start address by `bytes` (a multiple of 16) along K within one swizzle
// atom: only the low word changes, and the hardware derives the swizzle phase from the address of
// each access, so the same pattern stays valid (what CUTLASS and DeepGEMM do; the PTX ISA does
// not say it in words).
GEMM_HD uint64_t advance_start(uint64_t desc, uint32_t bytes) { return desc + (bytes >> 4); }

// ---- Instruction descriptor (kind::mxf4nvf4) ----------------------------------------------------

inline constexpr uint32_t kTypeE2M1 = 1;      // kind::mxf4nvf4 encoding of E2M1 (mxf8f6f4 uses 5)
inline constexpr uint32_t kScaleUE4M3 = 0;
inline constexpr uint32_t kScaleUE8M0 = 1;

struct InstrDescriptor {
  uint32_t sparse = 0, sfb_id = 0, a_type = kTypeE2M1, b_type = kTypeE2M1, negate_a = 0, negate_b = 0,
           transpose_a = 0, transpose_b = 0, n = 0, scale_type = kScaleUE4M3, m = 0, sfa_id = 0, k96 = 0;
  uint32_t reserved = 0;  // decoded reserved bits (0, 1, 3, 6, 12, 24-26); must be 0
};

GEMM_HD uint32_t encode(const InstrDescriptor& d) {
  return (d.sparse & 1) << 2 | (d.sfb_id & 3) << 4 | (d.a_type & 7) << 7 | (d.b_type & 3) << 10 |
         (d.negate_a & 1) << 13 | (d.negate_b & 1) << 14 | (d.transpose_a & 1) << 15 | (d.transpose_b & 1) << 16 |
         ((d.n >> 3) & 0x3F) << 17 | (d.scale_type & 1) << 23 | ((d.m >> 7) & 3) << 27 | (d.sfa_id & 3) << 29 |
         (d.k96 & 1) << 31;
}

GEMM_HD InstrDescriptor decode_instr_descriptor(uint32_t w) {
  InstrDescriptor d;
  d.sparse = (w >> 2) & 1;
  d.sfb_id = (w >> 4) & 3;
  d.a_type = (w >> 7) & 7;
  d.b_type = (w >> 10) & 3;
  d.negate_a = (w >> 13) & 1;
  d.negate_b = (w >> 14) & 1;
  d.transpose_a = (w >> 15) & 1;
  d.transpose_b = (w >> 16) & 1;
  d.n = ((w >> 17) & 0x3F) << 3;
  d.scale_type = (w >> 23) & 1;
  d.m = ((w >> 27) & 3) << 7;
  d.sfa_id = (w >> 29) & 3;
  d.k96 = (w >> 31) & 1;
  d.reserved = w & (0x3u | 0x8u | 0x40u | 0x1000u | (0x7u << 24));
  return d;
}

// The descriptor of a dense NVFP4 MMA: E2M1 x E2M1, UE4M3 scales, K-major A and B.
GEMM_HD uint32_t nvfp4_instr_descriptor(uint32_t m, uint32_t n) {
  InstrDescriptor d;
  d.m = m;
  d.n = n;
  return encode(d);
}

// ---- Tensor Memory addresses and the scale-factor placement -------------------------------------

inline constexpr int kTmemLanes = 128;
inline constexpr int kTmemColumns = 512;

GEMM_HD uint32_t tmem_address(uint32_t lane, uint32_t column) { return lane << 16 | column; }
GEMM_HD uint32_t tmem_lane(uint32_t address) { return address >> 16; }
GEMM_HD uint32_t tmem_column(uint32_t address) { return address & 0xFFFF; }

// Where the block16 MMA reads the scale of row r (of A, or column r of B) for the s-th 16 values of
// its K = 64: lane r % 32 of every 32-lane quadrant (tcgen05.cp .32x128b.warpx4 writes all four
// copies), column sf_column + r / 32, byte s of the 32-bit cell (CUTLASS's and DeepGEMM's placement: the PTX ISA shows it
// only in figures). One 512-byte
// blocked-layout atom, copied by one tcgen05.cp, fills exactly these cells for 128 rows.
struct SfCell {
  uint32_t lane, column, byte;
};
GEMM_HD SfCell sf_cell(uint32_t sf_column, uint32_t row, uint32_t s) { return {row % 32, sf_column + row / 32, s}; }

}  // namespace gemm::tcgen05
