// The MXFP8 GEMM as a kind (mxfp8_gemm.h has the contract): its rules, test cases, bad arguments,
// problems with the FP64 reference, benchmark inputs, peak and peers.
#include "common/kinds/mxfp8_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "common/cuda_check.h"
#include "common/device_buffer.h"
#include "common/device_fill.h"
#include "common/device_info.h"
#include "common/gemm_api.h"
#include "common/harness/compare.h"
#include "common/harness/compare_tally.h"
#include "common/harness/problems.h"
#include "common/kinds/rules.h"
#include "common/parallel.h"
#include "common/peers.h"

namespace gemm {

// ---- the contract -----------------------------------------------------------------------------------

int64_t mxfp8_data_bytes(int64_t rows, int64_t K, int64_t L) { return rows * K * L; }
int64_t mxfp8_sf_bytes(int64_t rows, int64_t K, int64_t L) { return sf_batch_bytes(rows, K, kMxSfVector) * L; }

void validate(const Mxfp8GemmArgs& a) {
  const char* api = "Mxfp8GemmArgs";
  rules::check_dims(api, a.M, a.N, a.K, a.L);
  if (a.K % kMxfp8KMultiple != 0) rules::reject(api, "K", "must be a multiple of 32", std::to_string(a.K));
  for (auto [name, t] : {std::pair{"a_type", a.a_type}, std::pair{"b_type", a.b_type}})
    if (t != Mxfp8Element::kE4M3 && t != Mxfp8Element::kE5M2)
      rules::reject(api, name, "must be E4M3 or E5M2 (the 8-bit types of kind::mxf8f6f4)", std::to_string(int(t)));
  if (a.c_type != Mxfp8Output::kFp32 && a.c_type != Mxfp8Output::kBf16)
    rules::reject(api, "c_type", "must be FP32 or BF16", std::to_string(int(a.c_type)));
  rules::check_pointer(api, "A", a.A, 16);
  rules::check_pointer(api, "SFA", a.SFA, 16);
  rules::check_pointer(api, "B", a.B, 16);
  rules::check_pointer(api, "SFB", a.SFB, 16);
  rules::check_pointer(api, "C", a.C, size_t(output_element_bytes(a.c_type)));
  // Sizes in bytes; check_dims bounds each element count below 2^46, so none overflows.
  const rules::ByteRange c = rules::range_of(a.C, output_element_bytes(a.c_type) * int64_t(a.M) * a.N * a.L);
  rules::check_c_disjoint(api, c, "A", rules::range_of(a.A, mxfp8_data_bytes(a.M, a.K, a.L)));
  rules::check_c_disjoint(api, c, "SFA", rules::range_of(a.SFA, mxfp8_sf_bytes(a.M, a.K, a.L)));
  rules::check_c_disjoint(api, c, "B", rules::range_of(a.B, mxfp8_data_bytes(a.N, a.K, a.L)));
  rules::check_c_disjoint(api, c, "SFB", rules::range_of(a.SFB, mxfp8_sf_bytes(a.N, a.K, a.L)));
}

double min_bytes(const Mxfp8GemmArgs& a) {
  return double(mxfp8_data_bytes(a.M, a.K, a.L) + mxfp8_data_bytes(a.N, a.K, a.L) + mxfp8_sf_bytes(a.M, a.K, a.L) +
                mxfp8_sf_bytes(a.N, a.K, a.L)) +
         double(output_element_bytes(a.c_type)) * a.L * double(a.M) * a.N;
}

Mxfp8Types mxfp8_types(const Shape& s) {
  constexpr size_t kTypeFields = 3;  // [c_type, a_type, b_type]
  Mxfp8Types t;
  if (s.extra.size() == kTypeFields) {
    t.c = Mxfp8Output(s.extra[0]);
    t.a = Mxfp8Element(s.extra[1]);
    t.b = Mxfp8Element(s.extra[2]);
  }
  return t;
}

Shape mxfp8_shape(int M, int N, int K, int L, Mxfp8Types t) {
  Shape s{M, N, K, L};
  if (t.c != Mxfp8Output::kFp32 || t.a != Mxfp8Element::kE4M3 || t.b != Mxfp8Element::kE4M3) {
    s.extra = {int(t.c), int(t.a), int(t.b)};
    // The name the benchmarks and plots show: the sizes, then what differs from FP32 C of E4M3 x E4M3.
    auto e = [](Mxfp8Element x) { return x == Mxfp8Element::kE5M2 ? "e5m2" : "e4m3"; };
    s.name = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + (L > 1 ? "x" + std::to_string(L) : "") +
             (t.c == Mxfp8Output::kBf16 ? "_bf16" : "") +
             (t.a != Mxfp8Element::kE4M3 || t.b != Mxfp8Element::kE4M3 ? std::string("_") + e(t.a) + "x" + e(t.b) : "");
  }
  return s;
}

// ---- the reference ----------------------------------------------------------------------------------

uint16_t bf16_bits_from_double(double x) {
  constexpr int kBf16Fraction = 7;  // fraction bits of BF16
  if (x != x) return 0x7FC0;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0x0000;
  const double a = std::fabs(x);
  // Above the midpoint between the largest BF16 (2^127 (2 - 2^-7)) and 2^128, or at it (ties to the
  // even 2^128): Inf.
  if (a >= std::ldexp(2.0 - std::ldexp(1.0, -8), 127)) return sign | 0x7F80;
  uint16_t mag;
  if (a < std::ldexp(1.0, -126)) {
    mag = uint16_t(std::rint(std::ldexp(a, 126 + kBf16Fraction)));  // subnormals: multiples of 2^-133
  } else {
    int e2;
    std::frexp(a, &e2);
    const int e = e2 - 1;
    const int q = int(std::rint(std::ldexp(a, kBf16Fraction - e)));  // in [128, 256]; 256 carries
    mag = uint16_t(((e + 127) << kBf16Fraction) + q - (1 << kBf16Fraction));
  }
  return sign | mag;
}

namespace {

uint32_t rounded_bits(double v, Mxfp8Output c) {
  if (c == Mxfp8Output::kBf16) return bf16_bits_from_double(v);
  const float f = float(v);  // one correctly rounded conversion (nearest even)
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

}  // namespace

Mxfp8Reference reference_gemm(const Mxfp8GemmArgs& h) {
  const int64_t M = h.M, N = h.N, K = h.K;
  const std::vector<double> a = dequantize_mxfp8(h.A, h.SFA, h.M, h.K, h.L, h.a_type);
  const std::vector<double> b = dequantize_mxfp8(h.B, h.SFB, h.N, h.K, h.L, h.b_type);
  Mxfp8Reference out;
  out.value.resize(size_t(M * N * h.L));
  out.abs_sum.resize(out.value.size());
  out.rounded.resize(out.value.size());
  parallel_for(M * h.L, [&](int64_t lm) {
    const int64_t l = lm / M;
    for (int64_t n = 0; n < N; ++n) {
      const double* x = &a[size_t(lm * K)];
      const double* y = &b[size_t((l * N + n) * K)];
      double s = 0, s_abs = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double p = x[k] * y[k];  // exact: 4 x 4 (or 3) significant bits
        s += p;
        s_abs += std::fabs(p);
      }
      const size_t i = size_t(lm * N + n);
      out.value[i] = s;
      out.abs_sum[i] = s_abs;
      out.rounded[i] = rounded_bits(s, h.c_type);
    }
  });
  return out;
}

double reference_at(const Mxfp8GemmArgs& h, int l, int m, int n, double* abs_sum) {
  const int64_t sa = sf_batch_bytes(h.M, h.K, kMxSfVector), sb = sf_batch_bytes(h.N, h.K, kMxSfVector);
  double s = 0, s_abs = 0;
  for (int k = 0; k < h.K; ++k) {
    const int blk = k / kMxSfVector;
    const double x = mxfp8_value(h.A[(int64_t(l) * h.M + m) * h.K + k], h.SFA[l * sa + sf_offset(m, blk, h.K, kMxSfVector)], h.a_type);
    const double y = mxfp8_value(h.B[(int64_t(l) * h.N + n) * h.K + k], h.SFB[l * sb + sf_offset(n, blk, h.K, kMxSfVector)], h.b_type);
    s += x * y;
    s_abs += std::fabs(x * y);
  }
  if (abs_sum) *abs_sum = s_abs;
  return s;
}

namespace {

// ---- test problems ---------------------------------------------------------------------------------
//
//   kExact      values of magnitude in [0.5, 2) (every E4M3 or E5M2 code there, random signs, some
//               zeros), A's scales 2^0 or 2^1 and B's 2^-1 or 2^0 drawn per block: every product is a
//               multiple of 2^-9 below 8, so every partial sum of K <= 4096 terms is exact in FP32 and
//               the kernel must match the reference bit for bit in either output type.
//   kLayout     positive values, scales drawn per block from 17 codes (2^-8 .. 2^8): a scale read from
//               the wrong byte of its 4-byte column or from the wrong 128-row atom scales that block's
//               contribution by a power of two other than 1, far outside the tolerance.
//   kRealistic  normal(0, 1) data with outliers (problems.h), A quantized with RCEIL and B with FLOOR,
//               so both conventions' bytes go through every stage.
// Scale padding stays 0, as the quantizer writes it.

constexpr int kExactMaxK = 4096;
constexpr int kLayoutScaleSpread = 8;  // scale exponents -8 .. 8

Mxfp8Tensor random_tensor(int rows, int K, int L, Mxfp8Element t, Tier tier, bool is_a, std::mt19937_64& rng) {
  Mxfp8Tensor x;
  x.rows = rows;
  x.K = K;
  x.L = L;
  x.element = t;
  x.data.resize(size_t(int64_t(rows) * K * L));
  x.sf.assign(size_t(x.batch_sf_bytes() * L), 0);
  // The codes of magnitudes in [0.5, 2): E4M3 exponent fields 6 and 7, E5M2 fields 14 and 15.
  const int first = t == Mxfp8Element::kE5M2 ? (14 << 2) : (6 << 3), count = t == Mxfp8Element::kE5M2 ? 8 : 16;
  std::uniform_int_distribution<int> code(0, count - 1), coin(0, 1), zero(0, 15);
  std::uniform_int_distribution<int> spread(-kLayoutScaleSpread, kLayoutScaleSpread);
  for (uint8_t& v : x.data) {
    if (tier == Tier::kExact) v = zero(rng) == 0 ? 0 : uint8_t(first + code(rng)) | uint8_t(coin(rng) << 7);
    else v = uint8_t(first + code(rng));  // positive
  }
  for (int l = 0; l < L; ++l)
    for (int r = 0; r < rows; ++r)
      for (int b = 0; b < K / kMxSfVector; ++b) {
        int e = spread(rng);
        if (tier == Tier::kExact) e = is_a ? coin(rng) : -coin(rng);
        x.sf[size_t(l * x.batch_sf_bytes() + sf_offset(r, b, K, kMxSfVector))] = uint8_t(kUe8m0Bias + e);
      }
  return x;
}

}  // namespace

HostMxfp8Problem make_mxfp8_problem(const Shape& s, Tier tier, uint64_t seed) {
  HostMxfp8Problem p;
  p.M = s.M;
  p.N = s.N;
  p.K = s.K;
  p.L = s.L;
  p.types = mxfp8_types(s);
  std::mt19937_64 rng(seed);
  if (tier == Tier::kExact && s.K > kExactMaxK)
    throw std::logic_error("mxfp8_gemm: the exact tier is exact only for K <= 4096 (got " + std::to_string(s.K) + ")");
  if (tier == Tier::kRealistic) {
    const std::vector<float> a = realistic_values(int64_t(s.M) * s.K * s.L, rng);
    const std::vector<float> b = realistic_values(int64_t(s.N) * s.K * s.L, rng);
    p.a = quantize_mxfp8(a.data(), s.M, s.K, s.L, p.types.a, Mxfp8ScaleRounding::kRceil);
    p.b = quantize_mxfp8(b.data(), s.N, s.K, s.L, p.types.b, Mxfp8ScaleRounding::kFloor);
  } else {
    p.a = random_tensor(s.M, s.K, s.L, p.types.a, tier, true, rng);
    p.b = random_tensor(s.N, s.K, s.L, p.types.b, tier, false, rng);
  }
  return p;
}

namespace {

// Operands on the device, in `sets` copies back to back.
class Mxfp8Inputs final : public DeviceInputs {
 public:
  Mxfp8Inputs(const Shape& s, int sets)
      : s_(s), types_(mxfp8_types(s)), sets_(sets),
        a_(size_t(mxfp8_data_bytes(s.M, s.K, s.L))), b_(size_t(mxfp8_data_bytes(s.N, s.K, s.L))),
        sfa_(size_t(mxfp8_sf_bytes(s.M, s.K, s.L))), sfb_(size_t(mxfp8_sf_bytes(s.N, s.K, s.L))),
        A_(a_ * sets), SFA_(sfa_ * sets), B_(b_ * sets), SFB_(sfb_ * sets) {}
  int sets() const override { return sets_; }
  AnyArgs args(int i, void* C) const override {
    return AnyArgs(Mxfp8GemmArgs{s_.M, s_.N, s_.K, s_.L, A_.get() + i * a_, SFA_.get() + i * sfa_, B_.get() + i * b_,
                                 SFB_.get() + i * sfb_, C, types_.c, types_.a, types_.b});
  }
  static std::unique_ptr<DeviceInputs> upload(const HostMxfp8Problem& p) {
    auto in = std::make_unique<Mxfp8Inputs>(mxfp8_shape(p.M, p.N, p.K, p.L, p.types), 1);
    in->A_.upload(p.a.data);
    in->SFA_.upload(p.a.sf);
    in->B_.upload(p.b.data);
    in->SFB_.upload(p.b.sf);
    return in;
  }
  // Positive finite codes (0x00..0x77: up to 240 in E4M3) and scales 2^-3 .. 2^3, for timing only.
  void fill_random() {
    fill_bytes(A_.get(), A_.size(), 3, 0x00, 0x77);
    fill_bytes(B_.get(), B_.size(), 4, 0x00, 0x77);
    fill_bytes(SFA_.get(), SFA_.size(), 5, kUe8m0Bias - 3, kUe8m0Bias + 3);
    fill_bytes(SFB_.get(), SFB_.size(), 6, kUe8m0Bias - 3, kUe8m0Bias + 3);
  }

 private:
  Shape s_;
  Mxfp8Types types_;
  int sets_;
  size_t a_, b_, sfa_, sfb_;  // bytes per set
  DeviceBuffer<uint8_t> A_, SFA_, B_, SFB_;
};

double gamma_k(int K) {
  const double u = std::ldexp(1.0, -24);
  return K * u / (1.0 - K * u);
}

// One unit in the last place of BF16 at magnitude v (subnormal spacing below 2^-126).
double ulp_bf16(double v) {
  if (v < std::ldexp(1.0, -126)) return std::ldexp(1.0, -133);
  return std::ldexp(1.0, int(std::floor(std::log2(v))) - 7);
}

double element_value(const std::vector<uint8_t>& got, size_t i, Mxfp8Output c) {
  if (c == Mxfp8Output::kBf16) {
    uint16_t h;
    std::memcpy(&h, got.data() + 2 * i, 2);
    return bf16_bits_to_float(h);
  }
  float f;
  std::memcpy(&f, got.data() + 4 * i, 4);
  return f;
}

constexpr int kSpotBlock = 128;  // the block the spot checks count mismatches in (no kernel tile is known there)

double tolerance(double want, double abs_sum, int K, Mxfp8Output c) {
  const double acc = gamma_k(K) * abs_sum;
  return acc + (c == Mxfp8Output::kBf16 ? ulp_bf16(std::fabs(want) + acc) : std::ldexp(std::fabs(want) + acc, -23));
}

class Mxfp8Problem final : public Problem {
 public:
  Mxfp8Problem(HostMxfp8Problem host, Tier tier) : h_(std::move(host)), tier_(tier) {}
  std::unique_ptr<DeviceInputs> upload() const override { return Mxfp8Inputs::upload(h_); }

  CompareResult compare(const void* got, Tile tile) const override {
    if (!ref_) ref_ = reference_gemm(h_.host_args());
    const std::vector<uint8_t> g = bytes(got);
    CompareTally c(h_.M, h_.N, tile.m, tile.n, what());
    for (int l = 0; l < h_.L; ++l)
      for (int m = 0; m < h_.M; ++m)
        for (int n = 0; n < h_.N; ++n) {
          const size_t i = (size_t(l) * h_.M + m) * h_.N + n;
          const double want_rounded = h_.types.c == Mxfp8Output::kBf16 ? double(bf16_bits_to_float(uint16_t(ref_->rounded[i])))
                                                                       : double(float_from_bits(ref_->rounded[i]));
          if (is_exact(tier_)) c.check(l, m, n, element_value(g, i, h_.types.c), want_rounded, 0, true);
          else c.check(l, m, n, element_value(g, i, h_.types.c), ref_->value[i], tolerance(ref_->value[i], ref_->abs_sum[i], h_.K, h_.types.c), false);
        }
    return c.finish();
  }

  CompareResult compare_spots(const void* got, int random_count, uint64_t seed) const override {
    const SpotSet spots = spot_positions(h_.M, h_.N, h_.L, random_count, seed);
    const std::vector<uint8_t> g = bytes(got);
    CompareTally c(h_.M, h_.N, kSpotBlock, kSpotBlock, what());  // spots: blocks of 128 as compare.cpp's
    for (size_t s = 0; s < spots.l.size(); ++s) {
      double abs_sum = 0;
      const double want = reference_at(h_.host_args(), spots.l[s], spots.m[s], spots.n[s], &abs_sum);
      const size_t i = (size_t(spots.l[s]) * h_.M + spots.m[s]) * h_.N + spots.n[s];
      c.check(spots.l[s], spots.m[s], spots.n[s], element_value(g, i, h_.types.c), want, tolerance(want, abs_sum, h_.K, h_.types.c), false);
    }
    return c.finish();
  }

 private:
  std::vector<uint8_t> bytes(const void* p) const {
    std::vector<uint8_t> v(size_t(output_element_bytes(h_.types.c)) * h_.M * h_.N * h_.L);
    std::memcpy(v.data(), p, v.size());
    return v;
  }
  std::string what() const {
    return std::string(tier_name(tier_)) + " " + std::to_string(h_.M) + "x" + std::to_string(h_.N) + "x" +
           std::to_string(h_.K) + "x" + std::to_string(h_.L) + " " + element_name(h_.types.a) + " x " +
           element_name(h_.types.b) + " -> " + output_name(h_.types.c);
  }
  HostMxfp8Problem h_;
  Tier tier_;
  mutable std::optional<Mxfp8Reference> ref_;
};

// ---- the kind --------------------------------------------------------------------------------------

class Mxfp8GemmKind final : public Kind {
 public:
  const char* name() const override { return "mxfp8_gemm"; }
  const char* title() const override { return "MXFP8 GEMM"; }
  const char* summary() const override {
    return "C = A * B^T (M x N, L batches, FP32 or BF16), A (M x K) and B (N x K) K-major E4M3 or E5M2 with\n"
           "one UE8M0 scale (a power of two) per 32 values in the blocked layout";
  }

  void validate(const AnyArgs& a) const override { gemm::validate(a.as<Mxfp8GemmArgs>()); }
  std::string size_rule(char which, long long v) const override {
    if (which == 'k' && v % kMxfp8KMultiple != 0) return "must be a multiple of 32 for an MXFP8 stage (one scale per 32 values)";
    return "";
  }
  std::string size_help(char which) const override {
    if (which == 'l') return "batches, C[l] = A[l] * B[l]^T: 1 to 65535";
    return which == 'k' ? "1 or more, a multiple of 32 (MXFP8)" : "1 or more";
  }

  // Tails (1, primes, one past the tile and the 128-row scale atom), L > 1, K past one scale atom's
  // 128 values, in both tiers built against layout bugs; BF16 output and E5M2 operands on a few.
  std::vector<Case> cases(Tile t) const override {
    std::vector<Case> v;
    auto add = [&](Tier tier, int M, int N, int K, int L, Mxfp8Types types = {}) {
      const Shape s = mxfp8_shape(M, N, K, L, types);
      const std::string name = case_name(tier, s);
      for (const Case& c : v)
        if (c.name == name) return;
      v.push_back({name, s, tier});
    };
    const int k_tail = (t.k + 32) / 32 * 32;  // smallest multiple of 32 above the tile's K
    for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic}) {
      add(tier, 1, 1, 32, 1);
      add(tier, 1, 37, 64, 1);
      add(tier, 31, 1, 96, 1);
      add(tier, 17, 13, 160, 1);
      add(tier, t.m + 1, t.n + 1, k_tail, 1);
      add(tier, 2 * t.m - 1, 2 * t.n - 1, 2 * k_tail, 1);
      add(tier, 128, 128, 256, 1);
      add(tier, 129, 257, 544, 1);  // one past the 128-row scale atom; 17 scale columns, not a multiple of 4
      add(tier, 67, 131, 1056, 1);
      add(tier, 29, 53, 96, 3);
      add(tier, 2 * t.m, 2 * t.n, 4 * k_tail, 2);
    }
    add(Tier::kRealistic, 509, 1021, 2048, 1);
    const Mxfp8Types bf16{Mxfp8Output::kBf16, Mxfp8Element::kE4M3, Mxfp8Element::kE4M3};
    const Mxfp8Types e5m2_a{Mxfp8Output::kFp32, Mxfp8Element::kE5M2, Mxfp8Element::kE4M3};
    const Mxfp8Types e5m2_both{Mxfp8Output::kBf16, Mxfp8Element::kE5M2, Mxfp8Element::kE5M2};
    for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic}) {
      add(tier, 17, 13, 160, 1, bf16);
      add(tier, t.m + 1, t.n + 1, 2 * k_tail, 2, bf16);
      add(tier, 29, 53, 96, 3, e5m2_a);
      add(tier, t.m + 1, t.n + 1, k_tail, 1, e5m2_both);
    }
    return v;
  }
  Case element_aligned_c_case() const override {
    const Shape s = mxfp8_shape(67, 48, 96, 2, {});
    return {"c_offset_" + case_name(Tier::kExact, s), s, Tier::kExact};
  }

  std::vector<BadArgument> bad_arguments() const override {
    using F = Mxfp8GemmArgs;
    auto m = [](auto f) { return [f](AnyArgs& a) { f(a.as<F>()); }; };
    std::vector<BadArgument> v = {
        {"M", m([](F& a) { a.M = 0; })},
        {"N", m([](F& a) { a.N = 0; })},
        {"K", m([](F& a) { a.K = 0; })},
        {"M", m([](F& a) { a.M = -5; })},
        {"L", m([](F& a) { a.L = 0; })},
        {"L", m([](F& a) { a.L = kMaxBatch + 1; })},
        {"K", m([](F& a) { a.K = 48; }), "must be a multiple of 32"},
        {"K", m([](F& a) { a.K = 31; }), "must be a multiple of 32"},
        {"a_type", m([](F& a) { a.a_type = Mxfp8Element(2); }), "must be E4M3 or E5M2"},
        {"b_type", m([](F& a) { a.b_type = Mxfp8Element(0xFF); }), "must be E4M3 or E5M2"},
        {"c_type", m([](F& a) { a.c_type = Mxfp8Output(2); }), "must be FP32 or BF16"},
        {"A", m([](F& a) { a.A = nullptr; }), "must not be null"},
        {"SFA", m([](F& a) { a.SFA = nullptr; }), "must not be null"},
        {"B", m([](F& a) { a.B = nullptr; }), "must not be null"},
        {"SFB", m([](F& a) { a.SFB = nullptr; }), "must not be null"},
        {"C", m([](F& a) { a.C = nullptr; }), "must not be null"},
        {"A", m([](F& a) { a.A += 8; }), "must be 16-byte aligned"},
        {"SFA", m([](F& a) { a.SFA += 4; }), "must be 16-byte aligned"},
        {"B", m([](F& a) { a.B += 1; }), "must be 16-byte aligned"},
        {"SFB", m([](F& a) { a.SFB += 4; }), "must be 16-byte aligned"},
        {"C", m([](F& a) { a.C = static_cast<char*>(a.C) + 2; }), "must be 4-byte aligned"},  // FP32 C at 2 bytes
        {"C", m([](F& a) { a.c_type = Mxfp8Output::kBf16; a.C = static_cast<char*>(a.C) + 1; }), "must be 2-byte aligned"},
    };
    // C pointed into each input (at its start, its middle, its last element, and ending on its first
    // byte), keeping C aligned so that the overlap rule, not the alignment rule, must catch it.
    auto overlaps = [&](auto at, auto bytes) {
      auto put = [&](auto offset) {
        v.push_back({"C", [=](AnyArgs& any) {
                       F& a = any.as<F>();
                       a.C = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(at(a)) + uintptr_t(offset(a)));
                     },
                     "must not overlap "});
      };
      constexpr int64_t e = 4;  // FP32 C
      put([](const F&) { return int64_t(0); });
      put([bytes](const F& a) { return bytes(a) / 2 / e * e; });
      put([bytes](const F& a) { return bytes(a) - e; });
      put([](const F& a) { return e - e * a.M * a.N * a.L; });
    };
    overlaps([](const F& a) { return static_cast<const void*>(a.A); }, [](const F& a) { return mxfp8_data_bytes(a.M, a.K, a.L); });
    overlaps([](const F& a) { return static_cast<const void*>(a.SFA); }, [](const F& a) { return mxfp8_sf_bytes(a.M, a.K, a.L); });
    overlaps([](const F& a) { return static_cast<const void*>(a.B); }, [](const F& a) { return mxfp8_data_bytes(a.N, a.K, a.L); });
    overlaps([](const F& a) { return static_cast<const void*>(a.SFB); }, [](const F& a) { return mxfp8_sf_bytes(a.N, a.K, a.L); });
    return v;
  }
  AnyArgs placeholder_args() const override {
    return AnyArgs(Mxfp8GemmArgs{64, 64, 64, 1, reinterpret_cast<const uint8_t*>(0x10000),
                                 reinterpret_cast<const uint8_t*>(0x20000), reinterpret_cast<const uint8_t*>(0x30000),
                                 reinterpret_cast<const uint8_t*>(0x40000), reinterpret_cast<void*>(0x50000),
                                 Mxfp8Output::kFp32, Mxfp8Element::kE4M3, Mxfp8Element::kE4M3});
  }
  std::unique_ptr<Problem> make_problem(const Shape& s, Tier tier, uint64_t seed) const override {
    return std::make_unique<Mxfp8Problem>(make_mxfp8_problem(s, tier, seed), tier);
  }
  const char* describe_inputs(Tier tier) const override {
    switch (tier) {
      case Tier::kExact: return "values in [0.5, 2), scales 2^-1 .. 2^1: every FP32 partial sum exact (K <= 4096)";
      case Tier::kLayout: return "positive values, 17 scale exponents per block: a scale-layout error changes the outputs";
      case Tier::kScaleBit7: break;  // UE8M0 has no ignored bit
      case Tier::kRealistic: return "realistic normal(0,1) data with outliers, A quantized with RCEIL and B with FLOOR";
    }
    return "no such tier for MXFP8";
  }

  // Shapes without `extra` are FP32 C; output_element_bytes() is FP32's (the C-offset case is FP32).
  int64_t output_bytes(const Shape& s) const override {
    return gemm::output_element_bytes(mxfp8_types(s).c) * int64_t(s.M) * s.N * s.L;
  }
  int output_element_bytes() const override { return 4; }
  double flops(const Shape& s) const override { return gemm::flops(s.M, s.N, s.K, s.L); }
  double min_bytes(const Shape& s) const override {
    Mxfp8GemmArgs a{s.M, s.N, s.K, s.L};
    a.c_type = mxfp8_types(s).c;
    return gemm::min_bytes(a);
  }
  std::unique_ptr<DeviceInputs> bench_inputs(const Shape& s, int sets) const override {
    auto in = std::make_unique<Mxfp8Inputs>(s, sets);
    in->fill_random();
    CUDA_CHECK(cudaDeviceSynchronize());
    return in;
  }
  // The seed's squares (FP32 C) and the BF16-output variant at the size the fastest public kernel
  // reports (NEXT_STAGES 2.3).
  std::vector<Shape> bench_shapes() const override {
    std::vector<Shape> v;
    for (int s : {2048, 4096, 8192, 16384}) v.push_back({s, s, s});
    v.push_back(mxfp8_shape(8192, 8192, 4096, 1, {Mxfp8Output::kBf16, Mxfp8Element::kE4M3, Mxfp8Element::kE4M3}));
    return v;
  }
  // tcgen05 stages on an sm_100 GPU against the dense MXFP8 rate, half of NVFP4's (kind::mxf8f6f4
  // does K = 32 per instruction where kind::mxf4nvf4 does K = 64).
  Peak peak(bool uses_tcgen05) const override {
    const GpuInfo& g = gpu_info();
    if (!uses_tcgen05) return {"FP32 CUDA-core FMA peak at the max SM clock", g.fp32_peak_tflops()};
    if (g.tcgen05_native())
      return {"dense MXFP8 tensor-core peak at the max SM clock (assumed half the NVFP4 rate)", g.nvfp4_dense_peak_tflops() / 2};
    return {"none: tcgen05 runs emulated, so there is no peak fraction", 0.0};
  }
  // On sm_100-class GPUs cuBLASLt's own MXFP8 GEMM (VEC32_UE8M0 scales, the same blocked layout);
  // elsewhere (Hopper) what a user can run there: dequantize to BF16 (exact for E4M3 and E5M2 times
  // any scale within BF16's range), then cuBLAS BF16 with FP32 accumulation writing C in its type.
  std::vector<Peer> peers(std::string* note) const override {
    std::string why;
    if (cublaslt_mxfp8_supported(&why)) return {{kCublasLtMxfp8Name, &cublaslt_mxfp8}};
    if (note) *note = "cuBLASLt MXFP8 unsupported on this GPU: " + why + "; peer is dequantize-to-BF16 + cuBLAS BF16";
    return {{kDequantCublasBf16Name, &dequantize_cublas_bf16_mxfp8}};
  }
  double device_bytes(const Shape& s) const override {
    const double mk = double(s.M) * s.K * s.L, nk = double(s.N) * s.K * s.L, mn = double(s.M) * s.N * s.L;
    return (1.0 + 1.0 / kMxSfVector) * (mk + nk) + gemm::output_element_bytes(mxfp8_types(s).c) * mn;
  }
  double host_bytes(const Shape& s) const override { return device_bytes(s) + 4.0 * s.L * (double(s.M) + s.N) * s.K; }
};

}  // namespace

const Kind& KindOf<Mxfp8GemmArgs>::get() {
  static const Mxfp8GemmKind kind;
  return kind;
}

}  // namespace gemm
