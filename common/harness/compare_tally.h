// What one comparison finds, counted once for every kind: each output's error against the reference,
// exact tiers bit for bit (as values, so +0 == -0) and the others within their tolerance, the first
// mismatches with their coordinates, and the mismatches per block of the kernel's tile (a wrong tile
// shows as whole blocks). compare.cpp's NVFP4 and FP32 comparisons and the kinds with their own output
// formats (mxfp8_gemm.cpp, svdquant_gemm.cpp) all fill a CompareResult through it.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/harness/compare.h"

namespace gemm {

class CompareTally {
 public:
  // M x N outputs per batch, mismatches counted per block_rows x block_cols block.
  CompareTally(int M, int N, int block_rows, int block_cols, std::string what)
      : M_(M), N_(N), br_(std::max(1, block_rows)), bc_(std::max(1, block_cols)) {
    r_.what = std::move(what);
  }

  void check(int l, int m, int n, double got, double want, double tol, bool exact) {
    ++r_.checked;
    const bool finite = std::isfinite(got);
    if (!finite) ++r_.nonfinite;
    const double err = std::fabs(got - want);
    if (finite) {
      r_.max_abs_error = std::max(r_.max_abs_error, err);
      err2_ += err * err;
    }
    want2_ += want * want;
    if (finite && (exact ? got == want : err <= tol)) return;
    ++r_.mismatches;
    if (r_.first.size() < kFirstMismatches) r_.first.push_back({l, m, n, got, want, exact ? 0.0 : tol});
    ++blocks_[{l, m / br_, n / bc_}];
  }

  // The result, its blocks sorted by mismatch count (most first).
  CompareResult finish() {
    r_.normwise_rel_error = want2_ > 0 ? std::sqrt(err2_ / want2_) : std::sqrt(err2_);
    std::vector<std::pair<std::array<int, 3>, int64_t>> sorted(blocks_.begin(), blocks_.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.second > b.second; });
    for (const auto& [key, count] : sorted) {
      std::ostringstream name;
      name << "batch " << key[0] << " rows " << key[1] * br_ << "-" << std::min(M_, (key[1] + 1) * br_) - 1
           << " x cols " << key[2] * bc_ << "-" << std::min(N_, (key[2] + 1) * bc_) - 1;
      r_.blocks.emplace_back(name.str(), count);
    }
    return std::move(r_);
  }

 private:
  static constexpr size_t kFirstMismatches = 12;  // enough to see a pattern, few enough to read
  int M_, N_, br_, bc_;
  CompareResult r_;
  double err2_ = 0.0, want2_ = 0.0;
  std::map<std::array<int, 3>, int64_t> blocks_;
};

}  // namespace gemm
