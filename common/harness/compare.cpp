#include "common/harness/compare.h"
#include "common/harness/compare_tally.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <sstream>

#include "common/formats.h"

namespace gemm {
namespace {

double gamma(int K) {
  const double u = std::ldexp(1.0, -24);
  return K * u / (1.0 - K * u);
}

// One unit in the last place of FP16 at magnitude v (subnormal spacing below 2^-14).
double ulp_fp16(double v) {
  if (v < std::ldexp(1.0, -14)) return std::ldexp(1.0, -24);
  return std::ldexp(1.0, int(std::floor(std::log2(v))) - 10);
}

// The bound for one FP16 output of an FP32-accumulating GEMM (see compare.h).
double fp16_tolerance(double want, double abs_sum, int K) {
  const double acc_err = gamma(K) * abs_sum;
  return acc_err + std::ldexp(std::fabs(want), -23) + ulp_fp16(std::fabs(want) + acc_err);
}


std::string shape_text(const CompareShape& s, const char* tier) {
  std::ostringstream o;
  o << tier << " M=" << s.M << " N=" << s.N << " K=" << s.K << " L=" << s.L;
  return o.str();
}

}  // namespace

std::string CompareResult::describe() const {
  std::ostringstream o;
  o << what << ": " << mismatches << " of " << checked << " outputs wrong, " << nonfinite
    << " NaN/Inf, max |error| " << max_abs_error << ", normwise relative error " << normwise_rel_error << "\n";
  if (checked == 0) o << "  nothing was checked\n";
  for (const auto& m : first)
    o << "  (batch " << m.l << ", row " << m.m << ", col " << m.n << "): got " << m.got << ", want " << m.want
      << (m.tol > 0 ? ", tolerance " + std::to_string(m.tol) : std::string(", exact")) << "\n";
  if (!blocks.empty()) {
    o << "  mismatches per block (" << blocks.size() << " blocks affected):\n";
    for (size_t i = 0; i < blocks.size() && i < 16; ++i) o << "    " << blocks[i].first << ": " << blocks[i].second << "\n";
  }
  return o.str();
}

CompareResult compare_fp32(const std::vector<float>& got, const ReferenceOutput& ref, const CompareShape& s, Tier tier) {
  CompareTally c(s.M, s.N, s.block_rows, s.block_cols, shape_text(s, tier_name(tier)));
  const double g = gamma(s.K);
  for (int l = 0; l < s.L; ++l)
    for (int m = 0; m < s.M; ++m)
      for (int n = 0; n < s.N; ++n) {
        const int64_t i = (int64_t(l) * s.M + m) * s.N + n;
        const double want = ref.value[i];
        const double tol = g * ref.abs_sum[i];
        c.check(l, m, n, got[i], is_exact(tier) ? double(float(want)) : want, tol, is_exact(tier));
      }
  return c.finish();
}

CompareResult compare_fp16(const std::vector<uint16_t>& got_bits, const ReferenceOutput& ref, const CompareShape& s,
                           Tier tier) {
  CompareTally c(s.M, s.N, s.block_rows, s.block_cols, shape_text(s, tier_name(tier)));
  for (int l = 0; l < s.L; ++l)
    for (int m = 0; m < s.M; ++m)
      for (int n = 0; n < s.N; ++n) {
        const int64_t i = (int64_t(l) * s.M + m) * s.N + n;
        const double got = half_bits_to_double(got_bits[i]);
        if (is_exact(tier)) {
          c.check(l, m, n, got, half_bits_to_double(ref.half[i]), 0.0, true);
        } else {
          c.check(l, m, n, got, ref.value[i], fp16_tolerance(ref.value[i], ref.abs_sum[i], s.K), false);
        }
      }
  return c.finish();
}

SpotSet spot_positions(int M, int N, int L, int random_count, uint64_t seed) {
  SpotSet s;
  auto add = [&](int l, int m, int n) {
    s.l.push_back(l);
    s.m.push_back(m);
    s.n.push_back(n);
  };
  for (int l = 0; l < L; ++l) {
    for (int m : {0, M - 1})
      for (int n : {0, N - 1}) add(l, m, n);
  }
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> rl(0, L - 1), rm(0, M - 1), rn(0, N - 1);
  for (int i = 0; i < random_count; ++i) {
    const int l = rl(rng);
    switch (i % 4) {  // a quarter each on the last row and the last column: the tails
      case 0: add(l, M - 1, rn(rng)); break;
      case 1: add(l, rm(rng), N - 1); break;
      default: add(l, rm(rng), rn(rng)); break;
    }
  }
  return s;
}

CompareResult compare_spots_fp32(const std::vector<float>& got, const SpotSet& spots, const CompareShape& s) {
  CompareTally c(s.M, s.N, s.block_rows, s.block_cols, shape_text(s, "spot check"));
  const double g = gamma(s.K);
  for (size_t i = 0; i < spots.l.size(); ++i) {
    const int64_t at = (int64_t(spots.l[i]) * s.M + spots.m[i]) * s.N + spots.n[i];
    c.check(spots.l[i], spots.m[i], spots.n[i], got[at], spots.want[i], g * spots.abs_sum[i], false);
  }
  return c.finish();
}

CompareResult compare_spots_fp16(const std::vector<uint16_t>& got_bits, const SpotSet& spots, const CompareShape& s) {
  CompareTally c(s.M, s.N, s.block_rows, s.block_cols, shape_text(s, "spot check"));
  for (size_t i = 0; i < spots.l.size(); ++i) {
    const int64_t at = (int64_t(spots.l[i]) * s.M + spots.m[i]) * s.N + spots.n[i];
    c.check(spots.l[i], spots.m[i], spots.n[i], half_bits_to_double(got_bits[at]), spots.want[i],
            fp16_tolerance(spots.want[i], spots.abs_sum[i], s.K), false);
  }
  return c.finish();
}

double normwise_rel_error(const std::vector<uint16_t>& got_bits, const std::vector<double>& exact) {
  double e2 = 0.0, w2 = 0.0;
  for (size_t i = 0; i < exact.size(); ++i) {
    const double d = half_bits_to_double(got_bits[i]) - exact[i];
    e2 += d * d;
    w2 += exact[i] * exact[i];
  }
  return w2 > 0 ? std::sqrt(e2 / w2) : std::sqrt(e2);
}

}  // namespace gemm
