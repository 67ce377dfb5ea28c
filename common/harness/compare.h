// Comparing a GPU result with the CPU reference, with diagnostics that point at the bug: the first
// mismatches with coordinates, mismatch counts per block of rows and columns (a wrong tile, a wrong
// scale layout or a missing tail shows up as a pattern there), and every NaN or Inf.
//
// Tolerances. kExact problems must match bit for bit (+0 and -0 are equal). Otherwise each element
// gets a rigorous bound for an FP32 accumulation in any order, plus the output rounding:
//   |got - want| <= gamma_K * abs_sum  +  2^-23 |want|  +  ulp_out(|want| + gamma_K * abs_sum)
// where gamma_K = K 2^-24 / (1 - K 2^-24) bounds FP32 summation error relative to sum |a_k b_k|,
// 2^-23 |want| covers the multiplication by alpha, and ulp_out is one unit in the last place of the
// output format (FP16 for NVFP4; 0 for FP32). The bound is loose enough never to reject a correct
// kernel and tight enough that a wrong operand, scale or tile (an O(1) relative error) cannot hide.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/harness/problems.h"
#include "common/reference.h"

namespace gemm {

struct Mismatch {
  int l, m, n;
  double got, want, tol;
};

struct CompareResult {
  int64_t checked = 0;
  int64_t mismatches = 0;
  int64_t nonfinite = 0;          // NaN or Inf in the GPU result (never legitimate here)
  double max_abs_error = 0.0;
  double normwise_rel_error = 0.0;  // ||got - want||_2 / ||want||_2 over all checked elements
  std::vector<Mismatch> first;      // up to 12
  std::vector<std::pair<std::string, int64_t>> blocks;  // "rows a-b x cols c-d" -> mismatches
  std::string what;                 // tier and shape, for messages

  bool ok() const { return checked > 0 && mismatches == 0 && nonfinite == 0; }
  std::string describe() const;
};

struct CompareShape {
  int M, N, K, L;
  int block_rows = 128, block_cols = 128;  // the grid for mismatch counts (use the kernel's tile)
};

// Full comparisons: got has M*N*L elements, row-major per batch.
CompareResult compare_fp32(const std::vector<float>& got, const ReferenceOutput& ref, const CompareShape& s, Tier tier);
CompareResult compare_fp16(const std::vector<uint16_t>& got_bits, const ReferenceOutput& ref, const CompareShape& s,
                           Tier tier);

// Spot checks: element i of got/want/abs_sum is output (ls[i], ms[i], ns[i]).
struct SpotSet {
  std::vector<int> l, m, n;
  std::vector<double> want, abs_sum;
};
// A sample of outputs that always includes the four corners of every batch and the last row and
// column (where tails live), plus `random_count` random positions.
SpotSet spot_positions(int M, int N, int L, int random_count, uint64_t seed);
CompareResult compare_spots_fp32(const std::vector<float>& got, const SpotSet& spots, const CompareShape& s);
CompareResult compare_spots_fp16(const std::vector<uint16_t>& got_bits, const SpotSet& spots, const CompareShape& s);

// Relative error of an NVFP4 GEMM against the FP32 GEMM of its unquantized inputs: what FP4 costs.
double normwise_rel_error(const std::vector<uint16_t>& got_bits, const std::vector<double>& exact);

}  // namespace gemm
