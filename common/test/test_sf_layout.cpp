// The blocked scale-factor layout against a literal transcription of PyTorch's to_blocked():
//   pad to (ceil(rows/128)*128, ceil(k16/4)*4); view as (R/128, 128, C/4, 4); permute to
//   (R/128, C/4, 128, 4); each 128x4 block -> reshape (4, 32, 4) -> transpose(0,1) -> (32, 16).
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "common/sf_layout.h"

namespace gemm {
namespace {

// Returns, for every byte position of the blocked buffer, the (row, k16) it holds as row*C + col,
// or -1 for padding; computed by the array reshapes above, never by sf_offset().
std::vector<int64_t> to_blocked_positions(int rows, int K) {
  const int64_t R = sf_padded_rows(rows), C = sf_padded_cols(K);
  std::vector<int64_t> out;
  for (int64_t rb = 0; rb < R / 128; ++rb)
    for (int64_t cb = 0; cb < C / 4; ++cb) {
      // block[i][j] = padded[rb*128 + i][cb*4 + j], i < 128, j < 4
      // reshape (4, 32, 4): b3[a][b][j] = block[a*32 + b][j]; transpose(0,1): t[b][a][j]; flatten.
      for (int b = 0; b < 32; ++b)
        for (int a = 0; a < 4; ++a)
          for (int j = 0; j < 4; ++j) {
            const int64_t row = rb * 128 + a * 32 + b, col = cb * 4 + j;
            out.push_back(row < rows && col < K / 16 ? row * (K / 16) + col : -1);
          }
    }
  return out;
}

TEST(SfLayout, MatchesToBlockedForEveryScale) {
  for (auto [rows, K] : {std::pair{1, 16}, {128, 64}, {129, 64}, {130, 80}, {300, 1040}, {513, 256}}) {
    const auto pos = to_blocked_positions(rows, K);
    ASSERT_EQ(int64_t(pos.size()), sf_batch_bytes(rows, K));
    // Every scale distinct (its own id), so no wrong layout can agree.
    for (int r = 0; r < rows; ++r)
      for (int k16 = 0; k16 < K / 16; ++k16)
        ASSERT_EQ(pos[sf_offset(r, k16, K)], int64_t(r) * (K / 16) + k16) << rows << "x" << K << " r" << r << " k16 " << k16;
  }
}

TEST(SfLayout, IsABijectionOntoThePaddedBuffer) {
  const int rows = 300, K = 1040;
  std::set<int64_t> seen;
  for (int r = 0; r < sf_padded_rows(rows); ++r)
    for (int k16 = 0; k16 < sf_padded_cols(K); ++k16) {
      const int64_t off = sf_offset(r, k16, K);
      ASSERT_GE(off, 0);
      ASSERT_LT(off, sf_batch_bytes(rows, K));
      ASSERT_TRUE(seen.insert(off).second) << "offset " << off << " used twice";
    }
  EXPECT_EQ(int64_t(seen.size()), sf_batch_bytes(rows, K));
}

TEST(SfLayout, WorkedOffsets) {
  EXPECT_EQ(sf_padded_rows(1), 128);
  EXPECT_EQ(sf_padded_rows(129), 256);
  EXPECT_EQ(sf_padded_cols(16), 4);    // one k16 block pads to a full tile of 4
  EXPECT_EQ(sf_padded_cols(80), 8);    // 5 -> 8
  EXPECT_EQ(sf_batch_bytes(1, 32), 512);
  const int K = 256;                   // 16 scale columns, 4 tiles per row block
  EXPECT_EQ(sf_offset(0, 0, K), 0);
  EXPECT_EQ(sf_offset(0, 3, K), 3);        // same line, next scale
  EXPECT_EQ(sf_offset(1, 0, K), 16);       // next line
  EXPECT_EQ(sf_offset(32, 0, K), 4);       // row 32 shares line 0, second group of 4
  EXPECT_EQ(sf_offset(96, 0, K), 12);
  EXPECT_EQ(sf_offset(127, 3, K), 511);    // last byte of the first tile
  EXPECT_EQ(sf_offset(0, 4, K), 512);      // next tile along k
  EXPECT_EQ(sf_offset(128, 0, K), 4 * 512);  // next row block after 4 tiles
}

}  // namespace
}  // namespace gemm
