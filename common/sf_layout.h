// Where a block scale lives in memory: the "blocked" scale-factor layout that cuBLAS, CUTLASS
// and the tcgen05 tensor cores share (PyTorch's to_blocked, cuBLAS "1D block scaling
// factors layout"). NVFP4 has one E4M3 scale per 16 values (below); MXFP8 uses the very same
// layout with one UE8M0 scale per 32 values, so its 4 scale columns of a tile cover 128 values of
// k instead of 64 (the overloads that take `values_per_scale`; docs/mxfp8.md).
//
// Logical view: one E4M3 scale per row and per 16 consecutive k, a rows x (K/16) matrix.
// Physical view: rows are padded to a multiple of 128 and scale columns to a multiple of 4, and the
// matrix is cut into 128-row x 4-column tiles of 512 bytes, stored row-block-major:
//
//   tile  = (row / 128) * ceil(K/64) + (k16 / 4)        512 bytes each
//   byte  = (row % 32) * 16 + ((row % 128) / 32) * 4 + (k16 % 4)
//
// So a tile is 32 lines of 16 bytes, line i holding rows i, i+32, i+64, i+96 with their four scales
// each. That 512-byte image is exactly what one tcgen05.cp .32x128b.warpx4 copies into Tensor
// Memory for one 128-row MMA of K = 64 (stage 05), and it is what TMA moves in one bulk copy
// (stage 04). Every stage and the CPU reference index scales through sf_offset() and nothing else.
#pragma once

#include <cstdint>

#include "common/config.h"

namespace gemm {

inline constexpr int kSfVector = 16;      // values per block scale
inline constexpr int kSfTileRows = 128;   // rows per scale tile
inline constexpr int kSfTileCols = 4;     // scale columns (k16 blocks) per tile = 64 values of k
inline constexpr int kSfTileBytes = kSfTileRows * kSfTileCols;  // 512

GEMM_HD int64_t sf_padded_rows(int64_t rows) { return (rows + kSfTileRows - 1) / kSfTileRows * kSfTileRows; }

// The layout for any number of values per scale (kSfVector = 16: NVFP4; kMxSfVector = 32: MXFP8).
// It depends on K only through the number of scale columns of a row, ceil(K / values_per_scale).
inline constexpr int kMxSfVector = 32;  // values per scale of the OCP MX formats (MXFP8)

GEMM_HD int64_t sf_padded_cols(int64_t K, int values_per_scale) {
  const int64_t cols = (K + values_per_scale - 1) / values_per_scale;
  return (cols + kSfTileCols - 1) / kSfTileCols * kSfTileCols;
}
// Bytes of one batch's scales, padding included; batches are stored back to back.
GEMM_HD int64_t sf_batch_bytes(int64_t rows, int64_t K, int values_per_scale) {
  return sf_padded_rows(rows) * sf_padded_cols(K, values_per_scale);
}
// Byte offset, within one batch, of the scale of (row, col) where col = k / values_per_scale.
GEMM_HD int64_t sf_offset(int64_t row, int64_t col, int64_t K, int values_per_scale) {
  const int64_t tiles_per_row_block = sf_padded_cols(K, values_per_scale) / kSfTileCols;
  const int64_t tile = (row / kSfTileRows) * tiles_per_row_block + col / kSfTileCols;
  const int64_t r = row % kSfTileRows;
  return tile * kSfTileBytes + (r % 32) * 16 + (r / 32) * 4 + col % kSfTileCols;
}

// NVFP4 (16 values per scale), which every stage up to 10 uses; k16 = k / 16.
GEMM_HD int64_t sf_padded_cols(int64_t K) { return sf_padded_cols(K, kSfVector); }
GEMM_HD int64_t sf_batch_bytes(int64_t rows, int64_t K) { return sf_batch_bytes(rows, K, kSfVector); }
GEMM_HD int64_t sf_offset(int64_t row, int64_t k16, int64_t K) { return sf_offset(row, k16, K, kSfVector); }

}  // namespace gemm
