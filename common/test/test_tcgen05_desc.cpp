// tcgen05 descriptors, Tensor Memory addresses and the scale-factor placement, against worked values
// derived from the PTX ISA 9.1 tables (9.7.16.4.1, Table 40; 9.7.16.4.2, Table 44).
#include <gtest/gtest.h>

#include <set>

#include "common/sf_layout.h"
#include "common/tcgen05_desc.h"

namespace gemm::tcgen05 {
namespace {

TEST(Tcgen05InstrDescriptor, WorkedValues) {
  EXPECT_EQ(nvfp4_instr_descriptor(128, 128), 0x08200480u);
  EXPECT_EQ(nvfp4_instr_descriptor(128, 256), 0x08400480u);
  EXPECT_EQ(nvfp4_instr_descriptor(256, 256), 0x10400480u);
  EXPECT_EQ(nvfp4_instr_descriptor(128, 64), 0x08100480u);
}

TEST(Tcgen05InstrDescriptor, FieldsRoundTrip) {
  InstrDescriptor d;
  d.sfb_id = 2;
  d.negate_a = 1;
  d.negate_b = 1;
  d.n = 248;
  d.m = 256;
  d.sfa_id = 2;
  d.scale_type = kScaleUE8M0;
  const InstrDescriptor e = decode_instr_descriptor(encode(d));
  EXPECT_EQ(e.sfb_id, 2u);
  EXPECT_EQ(e.negate_a, 1u);
  EXPECT_EQ(e.negate_b, 1u);
  EXPECT_EQ(e.n, 248u);
  EXPECT_EQ(e.m, 256u);
  EXPECT_EQ(e.sfa_id, 2u);
  EXPECT_EQ(e.scale_type, kScaleUE8M0);
  EXPECT_EQ(e.a_type, kTypeE2M1);
  EXPECT_EQ(e.b_type, kTypeE2M1);
  EXPECT_EQ(e.reserved, 0u);
  EXPECT_NE(decode_instr_descriptor(0x08200480u | 0x1u).reserved, 0u);   // bit 0 is reserved
  EXPECT_NE(decode_instr_descriptor(0x08200480u | (1u << 25)).reserved, 0u);
}

TEST(Tcgen05SmemDescriptor, WorkedValues) {
  // A scale-factor atom at 0x1000 (no swizzle, SBO 128) and a 128B-swizzled K-major
  // tile at 0x1000 (SBO 1024, LBO 16).
  EXPECT_EQ(sf_atom_descriptor(0x1000), 0x0000400800000100ull);
  EXPECT_EQ(kmajor_sw128_descriptor(0x1000), 0x4000404000010100ull);
}

TEST(Tcgen05SmemDescriptor, FieldsRoundTripAndFixedBitsAreChecked) {
  SmemDescriptor d;
  d.start = 0x3F3F0;
  d.lbo = 0x110;
  d.sbo = 0x2400;
  d.layout = Layout::kSwizzle64B;
  d.base_offset = 0;
  const SmemDescriptor e = decode_smem_descriptor(encode(d));
  EXPECT_EQ(e.start, 0x3F3F0u);
  EXPECT_EQ(e.lbo, 0x110u);
  EXPECT_EQ(e.sbo, 0x2400u);
  EXPECT_EQ(e.layout, Layout::kSwizzle64B);
  EXPECT_EQ(e.fixed_46_48, 1u);
  EXPECT_EQ(e.fixed_53_60, 0u);
  // Hopper's wgmma descriptor lacks bit 46: decoding one shows the broken fixed field.
  EXPECT_EQ(decode_smem_descriptor(encode(d) & ~(uint64_t(1) << 46)).fixed_46_48, 0u);
  // Only the low 18 bits of an address are encoded, in 16-byte units.
  EXPECT_EQ(decode_smem_descriptor(kmajor_sw128_descriptor(0x41000)).start, 0x01000u);
}

TEST(Tcgen05SmemDescriptor, AdvancingAlongKChangesOnlyTheStartAddress) {
  const uint64_t d = kmajor_sw128_descriptor(0x2000);
  for (uint32_t step = 0; step < 4; ++step) {  // 4 MMAs of K = 64 (32 bytes) per 128-byte row
    const SmemDescriptor e = decode_smem_descriptor(advance_start(d, 32 * step));
    EXPECT_EQ(e.start, 0x2000u + 32 * step);
    EXPECT_EQ(e.sbo, 1024u);
    EXPECT_EQ(e.layout, Layout::kSwizzle128B);
  }
}

TEST(Tcgen05Tmem, AddressFormat) {
  EXPECT_EQ(tmem_address(0, 0), 0u);
  EXPECT_EQ(tmem_address(32, 256), 0x00200100u);
  EXPECT_EQ(tmem_lane(0x00600040u), 96u);
  EXPECT_EQ(tmem_column(0x00600040u), 64u);
}

TEST(Tcgen05ScalePlacement, OneBlockedAtomFillsEveryCellOnce) {
  // Byte j of line i of a 512-byte atom (row i + 32 * (j / 4), scale j % 4) goes to lane i, column
  // c + j / 4, byte j % 4 (what .32x128b.warpx4 does); that must be exactly where sf_cell() says the
  // MMA reads the scale of that row. Checked for every row and scale: no two share a cell.
  const uint32_t c = 256;
  std::set<uint32_t> cells;
  for (uint32_t row = 0; row < 128; ++row)
    for (uint32_t s = 0; s < 4; ++s) {
      const uint32_t byte_in_atom = uint32_t(sf_offset(row, s, 64));  // one atom: K = 64
      const uint32_t line = byte_in_atom / 16, j = byte_in_atom % 16;
      const SfCell cell = sf_cell(c, row, s);
      EXPECT_EQ(cell.lane, line) << row;
      EXPECT_EQ(cell.column, c + j / 4) << row;
      EXPECT_EQ(cell.byte, j % 4) << row;
      EXPECT_TRUE(cells.insert(cell.lane << 16 | cell.column << 2 | cell.byte).second);
    }
  EXPECT_EQ(cells.size(), 512u);
}

}  // namespace
}  // namespace gemm::tcgen05
