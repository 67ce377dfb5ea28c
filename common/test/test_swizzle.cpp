// The 128-byte swizzle and the bank model.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "common/bank_model.h"
#include "common/swizzle.h"

namespace gemm {
namespace {

TEST(Swizzle128B, IsABijectionOnEveryAtomAndKeepsChunksWhole) {
  for (uint32_t atom = 0; atom < 4; ++atom) {
    std::set<uint32_t> seen;
    for (uint32_t off = 0; off < 1024; ++off) {
      const uint32_t logical = atom * 1024 + off, physical = swizzle_128b(logical);
      ASSERT_EQ(physical / 1024, atom) << "left its atom";
      ASSERT_EQ(physical % 16, logical % 16) << "split a 16-byte chunk";
      ASSERT_EQ(physical / 128, logical / 128) << "left its row";
      ASSERT_TRUE(seen.insert(physical).second);
    }
    EXPECT_EQ(seen.size(), 1024u);
  }
}

TEST(Swizzle128B, MatchesThePtxTable) {
  // PTX ISA "Swizzling Modes", 128B: row r of an atom holds chunks 0..7 XOR r.
  for (uint32_t r = 0; r < 8; ++r)
    for (uint32_t c = 0; c < 8; ++c) EXPECT_EQ(swizzle_128b(r, c * 16), r * 128 + (c ^ r) * 16) << r << "," << c;
  EXPECT_EQ(swizzle_128b(9, 16), 9 * 128 + (1 ^ 1) * 16);  // row 9 is row 1 of the second atom
}

TEST(Swizzle128B, EightRowsAtOneLogicalChunkHitEightBankGroups) {
  for (uint32_t c = 0; c < 8; ++c) {
    std::vector<uint32_t> plain, swizzled;
    for (uint32_t r = 0; r < 8; ++r) {
      plain.push_back(r * 128 + c * 16);
      swizzled.push_back(swizzle_128b(r, c * 16));
    }
    EXPECT_EQ(bank_conflicts(plain, 16).wavefronts, 8);
    EXPECT_EQ(bank_conflicts(swizzled, 16).wavefronts, 1);
  }
}

TEST(BankModel, CountsConflictsAndBroadcasts) {
  std::vector<uint32_t> same(32, 64), stride4(32), stride128(32), stride8(32);
  for (uint32_t i = 0; i < 32; ++i) {
    stride4[i] = 4 * i;
    stride128[i] = 128 * i;
    stride8[i] = 8 * i;
  }
  EXPECT_EQ(bank_conflicts(same, 4).wavefronts, 1);       // broadcast
  EXPECT_EQ(bank_conflicts(stride4, 4).wavefronts, 1);    // 32 banks, one word each
  EXPECT_EQ(bank_conflicts(stride128, 4).wavefronts, 32); // all in bank 0
  EXPECT_EQ(bank_conflicts(stride8, 4).wavefronts, 2);    // two words per even bank
  std::vector<uint32_t> vec16(32);
  for (uint32_t i = 0; i < 32; ++i) vec16[i] = 16 * i;
  const BankReport r = bank_conflicts(vec16, 16);
  EXPECT_EQ(r.wavefronts, 4);  // 512 bytes need 4 wavefronts even without conflicts
  EXPECT_EQ(r.degree(), 1);
}

}  // namespace
}  // namespace gemm
