// The 128-byte XOR swizzle: the shared-memory layout stages 02-07 use for every operand tile.
//
// A tile is stored as rows of 128 bytes; eight consecutive rows (1024 bytes, one "atom") form the
// unit of the pattern. Inside an atom, the 16-byte chunk c of row r is stored at chunk c ^ (r % 8):
//
//        chunk:  0 1 2 3 4 5 6 7          (each cell is 16 bytes = 4 floats = 32 FP4 values)
//   row 0        0 1 2 3 4 5 6 7
//   row 1        1 0 3 2 5 4 7 6
//   row 2        2 3 0 1 6 7 4 5
//   ...
//   row 7        7 6 5 4 3 2 1 0
//
// Why: a warp that reads the same column chunk of eight consecutive rows would otherwise hit the
// same four banks eight times (rows are exactly 32 banks wide); swizzled, the eight reads land on
// eight different 16-byte bank groups. It is the pattern TMA writes with CU_TENSOR_MAP_SWIZZLE_128B
// (stage 04) and the tcgen05 tensor cores read with layout type SWIZZLE_128B (stage 05): as an
// address function it is CuTe's Swizzle<3,4,3>, bits [4,7) ^= bits [7,10) (PTX ISA 9.1, 5.5.7). The
// hardware applies it to absolute shared-memory addresses, so tiles start 1024-byte aligned and
// offsets from the tile base swizzle the same way.
#pragma once

#include <cstdint>

#include "common/config.h"

namespace gemm {

inline constexpr int kSwizzleRowBytes = 128;   // one row of the pattern
inline constexpr int kSwizzleChunkBytes = 16;  // the unit that moves
inline constexpr int kSwizzleAtomBytes = 1024; // 8 rows: the pattern repeats after this

// Physical byte offset of logical byte `offset` (from a 1024-byte-aligned tile base).
GEMM_HD uint32_t swizzle_128b(uint32_t offset) { return offset ^ (((offset >> 7) & 7u) << 4); }

// The same for a (row, byte-in-row) coordinate of a tile with 128-byte rows.
GEMM_HD uint32_t swizzle_128b(uint32_t row, uint32_t byte_in_row) {
  return swizzle_128b(row * kSwizzleRowBytes + byte_in_row);
}

// The 64-byte swizzle (CU_TENSOR_MAP_SWIZZLE_64B; CuTe's Swizzle<2,4,3>): bits [4,6) ^= bits
// [7,9). On a tile of 64-byte rows (32 FP16 values: stage 07's output staging), chunk c of row r
// lands at chunk c ^ ((r / 2) % 4): the pattern repeats every 512 bytes, so such tiles start 512-byte
// aligned.
GEMM_HD uint32_t swizzle_64b(uint32_t offset) { return offset ^ (((offset >> 7) & 3u) << 4); }
GEMM_HD uint32_t swizzle_64b(uint32_t row, uint32_t byte_in_row) { return swizzle_64b(row * 64u + byte_in_row); }

#if defined(__CUDACC__)
// The first 1024-byte-aligned address in a dynamic shared-memory buffer (declare it with 1 KB of
// slack). Swizzled tiles start here: the pattern is a function of the absolute address, so a tile
// that does not start on a 1024-byte boundary would be swizzled differently from what TMA writes.
__device__ __forceinline__ unsigned char* align_to_swizzle_atom(unsigned char* dynamic_smem) {
  const uint32_t misalign = uint32_t(__cvta_generic_to_shared(dynamic_smem)) % kSwizzleAtomBytes;
  return dynamic_smem + (misalign ? kSwizzleAtomBytes - misalign : 0);
}
#endif

}  // namespace gemm
