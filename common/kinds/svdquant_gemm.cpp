// The SVDQuant GEMM as a kind (svdquant_gemm.h has the contract): its rules, test cases and bad
// arguments, problems with an FP64 reference and their comparison, benchmark inputs, bytes and FLOPs,
// and why it has no library peer of its own.
//
// Test data. Every tier draws the NVFP4 operands as the NVFP4 GEMM's tier does (problems.h) and adds
// the low-rank operands and the affine:
//   exact, scalebit7  alpha = 1/2, lora_act = i/4 and lora_up = j/8 with i, j in [-8, 8], wcscale in
//                     {0, +-1/2, +-1, +-2}, bias = b/8 with b in [-64, 64] \ {0}: every sum below is
//                     exact in FP32 (kExactMaxK says how far), so a kernel must match bit for bit.
//   layout, realistic normal data: the low-rank term as large as alpha * acc (so that dropping it,
//                     swapping its operands or scaling it by wcscale at the wrong place moves every
//                     output by O(1)), wcscale uniform in [-2, 2) with one column in 16 exactly 0, bias
//                     about half the size of the product, never 0.
// alpha is never 1 and wcscale is rarely 1, so a kernel that applies alpha to the low-rank term too
// (FlashInfer's convention, docs/svdquant.md) or wcscale before adding it cannot pass.
#include "common/kinds/svdquant_gemm.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>

#include "common/formats.h"
#include "common/harness/compare_tally.h"
#include "common/kinds/gemm_family.h"
#include "common/kinds/rules.h"
#include "common/parallel.h"
#include "common/peers.h"
#include "common/sf_layout.h"

namespace gemm {

const char* format16_name(Format16 f) {
  switch (f) {
    case Format16::kFp16: return "fp16";
    case Format16::kBf16: return "bf16";
  }
  return "?";
}

namespace {

constexpr const char* kApi = "SvdquantGemmArgs";

bool valid_format(Format16 f) { return f == Format16::kFp16 || f == Format16::kBf16; }

int64_t lora_bytes(int64_t rows, int64_t R, int64_t L) { return 2 * rows * R * L; }
int64_t column_bytes(int64_t N, int64_t L) { return 4 * N * L; }  // wcscale or bias

Nvfp4GemmArgs nvfp4_args(const SvdquantGemmArgs& a, __half* C) {
  return {a.M, a.N, a.K, a.L, a.A, a.SFA, a.B, a.SFB, a.alpha, C};
}

}  // namespace

void validate(const SvdquantGemmArgs& a) {
  rules::check_dims(kApi, a.M, a.N, a.K, a.L);
  if (a.K % kNvfp4KMultiple != 0) rules::reject(kApi, "K", "must be a multiple of 32", std::to_string(a.K));
  if (a.R < kSvdquantRankMultiple || a.R % kSvdquantRankMultiple != 0)
    rules::reject(kApi, "R", "must be a positive multiple of 16", std::to_string(a.R));
  if (a.R > kSvdquantMaxRank) rules::reject(kApi, "R", "must be at most 1024", std::to_string(a.R));
  if (double(a.M) * a.R * a.L > rules::kElementLimit || double(a.N) * a.R * a.L > rules::kElementLimit)
    rules::reject(kApi, "M*R*L and N*R*L", "must each be below 2^46", "a larger problem");
  rules::check_pointer(kApi, "A", a.A, 16);
  rules::check_pointer(kApi, "SFA", a.SFA, 16);
  rules::check_pointer(kApi, "B", a.B, 16);
  rules::check_pointer(kApi, "SFB", a.SFB, 16);
  rules::check_pointer(kApi, "lora_act", a.lora_act, 16);
  rules::check_pointer(kApi, "lora_up", a.lora_up, 16);
  rules::check_pointer(kApi, "wcscale", a.wcscale, alignof(float));
  rules::check_pointer(kApi, "bias", a.bias, alignof(float));
  rules::check_pointer(kApi, "C", a.C, alignof(uint16_t));
  if (!std::isfinite(a.alpha)) rules::reject(kApi, "alpha", "must be finite", std::to_string(a.alpha));
  if (!valid_format(a.lora_format))
    rules::reject(kApi, "lora_format", "must be Format16::kFp16 or Format16::kBf16", std::to_string(int(a.lora_format)));
  if (!valid_format(a.c_format))
    rules::reject(kApi, "c_format", "must be Format16::kFp16 or Format16::kBf16", std::to_string(int(a.c_format)));
  // Sizes in bytes; the element counts are bounded below 2^46 above, so none overflows.
  const rules::ByteRange c = rules::range_of(a.C, 2 * int64_t(a.M) * a.N * a.L);
  rules::check_c_disjoint(kApi, c, "A", rules::range_of(a.A, packed_bytes(a.M, a.K, a.L)));
  rules::check_c_disjoint(kApi, c, "SFA", rules::range_of(a.SFA, sf_bytes(a.M, a.K, a.L)));
  rules::check_c_disjoint(kApi, c, "B", rules::range_of(a.B, packed_bytes(a.N, a.K, a.L)));
  rules::check_c_disjoint(kApi, c, "SFB", rules::range_of(a.SFB, sf_bytes(a.N, a.K, a.L)));
  rules::check_c_disjoint(kApi, c, "lora_act", rules::range_of(a.lora_act, lora_bytes(a.M, a.R, a.L)));
  rules::check_c_disjoint(kApi, c, "lora_up", rules::range_of(a.lora_up, lora_bytes(a.N, a.R, a.L)));
  rules::check_c_disjoint(kApi, c, "wcscale", rules::range_of(a.wcscale, column_bytes(a.N, a.L)));
  rules::check_c_disjoint(kApi, c, "bias", rules::range_of(a.bias, column_bytes(a.N, a.L)));
}

double min_bytes(const SvdquantGemmArgs& a) {
  return min_bytes(nvfp4_args(a, nullptr)) + double(lora_bytes(a.M, a.R, a.L) + lora_bytes(a.N, a.R, a.L)) +
         2.0 * double(column_bytes(a.N, a.L));
}

double flops(const SvdquantGemmArgs& a) { return 2.0 * a.M * double(a.N) * (double(a.K) + a.R) * a.L; }

Shape svdquant_shape(int M, int N, int K, int L, SvdquantSize z) {
  return {M, N, K, L, {z.R, int(z.c_format), int(z.lora_format)}};
}

SvdquantSize svdquant_size(const Shape& s) {
  if (s.extra.empty()) return {};
  if (s.extra.size() != 3)
    throw std::invalid_argument("svdquant_size: extra must be [R, c_format, lora_format] (got " +
                                std::to_string(s.extra.size()) + " integers)");
  return {s.extra[0], Format16(s.extra[1]), Format16(s.extra[2])};
}

namespace svdquant {

// ---- 16-bit formats --------------------------------------------------------------------------------

uint16_t bf16_bits_from_double(double x) {
  constexpr double kOverflow = 0x1.ffp127;  // midpoint of the largest BF16 (0x1.fep127) and 2^128: ties up
  if (x != x) return 0x7FC0;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0x0000;
  const double a = std::fabs(x);
  if (a >= kOverflow) return sign | 0x7F80;
  uint16_t mag;
  if (a < 0x1p-126) {
    mag = uint16_t(std::rint(a * 0x1p133));  // subnormals: multiples of 2^-133; 128 = smallest normal
  } else {
    int e2;
    std::frexp(a, &e2);
    const int e = e2 - 1;                                // a in [2^e, 2^(e+1))
    const int q = int(std::rint(std::ldexp(a, 7 - e)));  // 7 fraction bits: in [128, 256]; 256 carries
    mag = uint16_t(((e + 127) << 7) + q - 128);
  }
  return sign | mag;
}

uint16_t bits_from_double(double x, Format16 f) {
  return f == Format16::kBf16 ? bf16_bits_from_double(x) : half_bits_from_double(x);
}

double bits_to_double(uint16_t bits, Format16 f) {
  return f == Format16::kBf16 ? double(bf16_bits_to_float(bits)) : half_bits_to_double(bits);
}

namespace {

// One unit in the last place of the output format at magnitude v >= 0.
double ulp_out(double v, Format16 f) {
  const int mantissa_bits = f == Format16::kBf16 ? 7 : 10;
  const int min_exponent = f == Format16::kBf16 ? -126 : -14;
  if (v < std::ldexp(1.0, min_exponent)) return std::ldexp(1.0, min_exponent - mantissa_bits);
  return std::ldexp(1.0, int(std::floor(std::log2(v))) - mantissa_bits);
}

}  // namespace

// The bound for one output of a kernel that keeps everything in FP32 and rounds once at the end.
// The exact y is a sum of K + R + 1 terms: alpha a_k b_k wcscale (each a_k b_k exact in FP32: two
// NVFP4 values have at most 5 significant bits each), lora_act_r lora_up_r wcscale (two 16-bit values
// have at most 11 significant bits each, so their product is exact too) and bias. Whatever order and
// grouping the kernel uses, each term passes through at most K + R - 1 additions of the two sums, one
// multiplication by alpha, one addition joining them, one multiplication by wcscale and one addition
// of the bias; one more allows a kernel that forms alpha * wcscale first. With u = 2^-24 and
// n = K + R + 3 roundings, the FP32 result z obeys the standard bound
//   |z - y| <= gamma_n * sum |terms| = gamma_n * abs_sum,   gamma_n = n u / (1 - n u),
// whether the kernel fuses multiply-adds or not (a fused one only rounds less). Rounding z to the
// output format adds at most half an ulp of the result; a whole ulp of |y| + |z - y| is allowed,
// since z may sit in the binade above y. A correct kernel is never rejected; a missing term, a term
// at the wrong place or a wrong operand changes an output by far more (the test data make the
// low-rank term and the bias as large as the product).
double tolerance(double want, double abs_sum, int K, int R, Format16 c_format) {
  const double u = std::ldexp(1.0, -24);
  const double n = double(K) + R + 3;
  const double fp32_err = n * u / (1.0 - n * u) * abs_sum;
  return fp32_err + ulp_out(std::fabs(want) + fp32_err, c_format);
}

// ---- Problems -------------------------------------------------------------------------------------

namespace {

// The exact tier holds for K up to this. Its terms are multiples of q = 2^-5 (|alpha a_k b_k| <= 72,
// |lora_act lora_up| <= 2), so every partial sum is an exact FP32 number while it stays below
// 2^24 q = 2^19: 72 K + 2 R + 16 (the bias, relative to the smallest non-zero |wcscale|) < 2^19 for
// K <= 7000 and R <= 1024. A kernel that folds alpha into lora_up first sees multiples of 2^-4 below
// 2^20, the same margin.
constexpr int kExactMaxK = 7000;
constexpr float kExactAlpha = 0.5f;  // a power of two, not 1: alpha's place is tested, exactness kept
constexpr int kExactLoraRange = 8;   // lora_act = i / 4, lora_up = j / 8 with |i|, |j| <= 8
constexpr int kExactBiasRange = 64;  // bias = b / 8 with 1 <= |b| <= 64
constexpr std::array<float, 7> kExactWcscale = {0.0f, 0.5f, -0.5f, 1.0f, -1.0f, 2.0f, -2.0f};
constexpr int kZeroWcscaleOneIn = 16;  // the realistic tiers' exactly-zero columns

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

// Root mean square of the decoded values of an NVFP4 operand.
double rms(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += double(x) * x;
  return v.empty() ? 0.0 : std::sqrt(s / double(v.size()));
}

}  // namespace

SvdquantGemmArgs HostProblem::host_args() const {
  SvdquantGemmArgs h;
  h.M = M, h.N = N, h.K = K, h.L = L, h.R = R;
  h.A = a.data(), h.SFA = sfa.data(), h.B = b.data(), h.SFB = sfb.data();
  h.alpha = alpha;
  h.lora_act = lora_act.data(), h.lora_up = lora_up.data(), h.lora_format = lora_format;
  h.wcscale = wcscale.data(), h.bias = bias.data();
  h.c_format = c_format;
  return h;
}

HostProblem make_problem(const Shape& s, Tier tier, uint64_t seed) {
  const SvdquantSize z = svdquant_size(s);
  HostNvfp4Problem nv = make_nvfp4_problem(s.M, s.N, s.K, s.L, tier, seed);
  HostProblem p;
  p.M = s.M, p.N = s.N, p.K = s.K, p.L = s.L, p.R = z.R;
  p.lora_format = z.lora_format, p.c_format = z.c_format;
  p.a = std::move(nv.a.data), p.sfa = std::move(nv.a.sf), p.b = std::move(nv.b.data), p.sfb = std::move(nv.b.sf);
  p.alpha = nv.alpha;
  std::mt19937_64 rng(mix(seed ^ 0x6c6f7261ull));
  const int64_t act_count = int64_t(s.M) * z.R * s.L, up_count = int64_t(s.N) * z.R * s.L, cols = int64_t(s.N) * s.L;
  p.lora_act.resize(size_t(act_count));
  p.lora_up.resize(size_t(up_count));
  p.wcscale.resize(size_t(cols));
  p.bias.resize(size_t(cols));
  auto put16 = [&](std::vector<uint16_t>& v, auto draw) {
    for (auto& x : v) x = bits_from_double(draw(), z.lora_format);
  };
  if (is_exact(tier)) {
    if (s.K > kExactMaxK) throw std::logic_error("svdquant::make_problem: the exact tier is exact for K <= 7000");
    p.alpha = kExactAlpha;
    std::uniform_int_distribution<int> lora(-kExactLoraRange, kExactLoraRange), pick(0, int(kExactWcscale.size()) - 1),
        bias(1, kExactBiasRange);
    std::bernoulli_distribution negative(0.5);
    put16(p.lora_act, [&] { return lora(rng) / 4.0; });
    put16(p.lora_up, [&] { return lora(rng) / 8.0; });
    for (auto& w : p.wcscale) w = kExactWcscale[size_t(pick(rng))];
    for (auto& b : p.bias) b = float((negative(rng) ? -1 : 1) * bias(rng)) / 8.0f;
    return p;
  }
  // The typical size of alpha * acc, so that the low-rank term and the bias can match it.
  const double product = std::fabs(double(p.alpha)) * std::sqrt(double(s.K)) *
                         rms(dequantize_nvfp4(p.a.data(), p.sfa.data(), s.M, s.K, s.L)) *
                         rms(dequantize_nvfp4(p.b.data(), p.sfb.data(), s.N, s.K, s.L));
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<float> wc(-2.0f, 2.0f);
  std::uniform_int_distribution<int> one_in(0, kZeroWcscaleOneIn - 1);
  const double act_scale = product / std::sqrt(double(z.R));  // sum of R products ~ product
  put16(p.lora_act, [&] { return act_scale * normal(rng); });
  put16(p.lora_up, [&] { return normal(rng); });
  for (auto& w : p.wcscale) w = one_in(rng) == 0 ? 0.0f : wc(rng);
  for (auto& b : p.bias) {
    const double x = 0.5 * product * normal(rng);
    b = float(x != 0 ? x : product);
  }
  return p;
}

// ---- The reference --------------------------------------------------------------------------------

namespace {

std::vector<double> decode(const uint16_t* bits, int64_t count, Format16 f) {
  std::vector<double> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) v[size_t(i)] = bits_to_double(bits[i], f);
  return v;
}

// sum_r x_r y_r and sum_r |x_r y_r| in double (products of 16-bit values are exact in double).
void low_rank(const double* x, const double* y, int R, double* sum, double* abs_sum) {
  double s = 0, s_abs = 0;
  for (int r = 0; r < R; ++r) {
    s += x[r] * y[r];
    s_abs += std::fabs(x[r] * y[r]);
  }
  *sum = s;
  *abs_sum = s_abs;
}

}  // namespace

// The NVFP4 part is the NVFP4 GEMM's own reference (common/reference.h), so the two kinds cannot
// disagree on decoding; the low-rank term and the affine follow in double, and only the end is rounded.
Reference reference(const SvdquantGemmArgs& h) {
  const ReferenceOutput main = reference_gemm(nvfp4_args(h, nullptr));
  const std::vector<double> act = decode(h.lora_act, int64_t(h.M) * h.R * h.L, h.lora_format);
  const std::vector<double> up = decode(h.lora_up, int64_t(h.N) * h.R * h.L, h.lora_format);
  const int64_t M = h.M, N = h.N, R = h.R;
  Reference out;
  out.value.resize(size_t(M * N * h.L));
  out.abs_sum.resize(out.value.size());
  out.bits.resize(out.value.size());
  parallel_for(M * h.L, [&](int64_t lm) {
    const int64_t l = lm / M;
    for (int64_t n = 0; n < N; ++n) {
      const int64_t i = lm * N + n, col = l * N + n;
      double t, t_abs;
      low_rank(&act[size_t(lm * R)], &up[size_t(col * R)], int(R), &t, &t_abs);
      const double wc = h.wcscale[col], b = h.bias[col];
      out.value[size_t(i)] = (main.value[size_t(i)] + t) * wc + b;
      out.abs_sum[size_t(i)] = std::fabs(wc) * (main.abs_sum[size_t(i)] + t_abs) + std::fabs(b);
      out.bits[size_t(i)] = bits_from_double(out.value[size_t(i)], h.c_format);
    }
  });
  return out;
}

double reference_at(const SvdquantGemmArgs& h, int l, int m, int n, double* abs_sum) {
  double main_abs = 0;
  const double main = gemm::reference_at(nvfp4_args(h, nullptr), l, m, n, &main_abs);
  const int64_t lm = int64_t(l) * h.M + m, col = int64_t(l) * h.N + n;
  const std::vector<double> act = decode(h.lora_act + lm * h.R, h.R, h.lora_format);
  const std::vector<double> up = decode(h.lora_up + col * h.R, h.R, h.lora_format);
  double t, t_abs;
  low_rank(act.data(), up.data(), h.R, &t, &t_abs);
  const double wc = h.wcscale[col], b = h.bias[col];
  if (abs_sum) *abs_sum = std::fabs(wc) * (main_abs + t_abs) + std::fabs(b);
  return (main + t) * wc + b;
}

// ---- Comparison -----------------------------------------------------------------------------------

namespace {

std::string what(const SvdquantGemmArgs& h, const char* tier) {
  std::ostringstream o;
  o << tier << " SVDQuant GEMM M=" << h.M << " N=" << h.N << " K=" << h.K << " L=" << h.L << " R=" << h.R
    << " C " << format16_name(h.c_format) << ", low-rank " << format16_name(h.lora_format);
  return o.str();
}

}  // namespace

CompareResult compare(const std::vector<uint16_t>& got, const Reference& ref, const SvdquantGemmArgs& h, Tier tier,
                      Tile tile) {
  if (got.size() != ref.value.size()) throw std::invalid_argument("svdquant::compare: got has the wrong size");
  CompareTally t(h.M, h.N, tile.m, tile.n, what(h, tier_name(tier)));
  const bool exact = is_exact(tier);
  for (int l = 0; l < h.L; ++l)
    for (int m = 0; m < h.M; ++m)
      for (int n = 0; n < h.N; ++n) {
        const size_t i = size_t((int64_t(l) * h.M + m) * h.N + n);
        const double g = bits_to_double(got[i], h.c_format);
        if (exact) {
          t.check(l, m, n, g, bits_to_double(ref.bits[i], h.c_format), 0.0, true);
        } else {
          t.check(l, m, n, g, ref.value[i], tolerance(ref.value[i], ref.abs_sum[i], h.K, h.R, h.c_format), false);
        }
      }
  return t.finish();
}

// Spots are compared within the tolerance in every tier: a spot's reference is computed alone.
CompareResult compare_spots(const std::vector<uint16_t>& got, const SvdquantGemmArgs& h, int random_count,
                            uint64_t seed) {
  const SpotSet spots = spot_positions(h.M, h.N, h.L, random_count, seed);
  CompareTally t(h.M, h.N, h.M, h.N, what(h, "spot check"));
  for (size_t i = 0; i < spots.l.size(); ++i) {
    const int l = spots.l[i], m = spots.m[i], n = spots.n[i];
    double abs_sum = 0;
    const double want = reference_at(h, l, m, n, &abs_sum);
    const double g = bits_to_double(got[size_t((int64_t(l) * h.M + m) * h.N + n)], h.c_format);
    t.check(l, m, n, g, want, tolerance(want, abs_sum, h.K, h.R, h.c_format), false);
  }
  return t.finish();
}

}  // namespace svdquant

// ---- Device inputs and problems ----------------------------------------------------------------------

namespace {

// Every operand of the kind on the device, in `sets` copies back to back.
class SvdquantInputs final : public DeviceInputs {
 public:
  SvdquantInputs(const Shape& s, int sets, float alpha)
      : s_(s), z_(svdquant_size(s)), sets_(sets), alpha_(alpha),
        a_(size_t(packed_bytes(s.M, s.K, s.L))), b_(size_t(packed_bytes(s.N, s.K, s.L))),
        sfa_(size_t(sf_bytes(s.M, s.K, s.L))), sfb_(size_t(sf_bytes(s.N, s.K, s.L))),
        act_(size_t(int64_t(s.M) * z_.R * s.L)), up_(size_t(int64_t(s.N) * z_.R * s.L)), cols_(size_t(s.N) * s.L),
        A_(a_ * sets), SFA_(sfa_ * sets), B_(b_ * sets), SFB_(sfb_ * sets), ACT_(act_ * sets), UP_(up_ * sets),
        WC_(cols_ * sets), BIAS_(cols_ * sets) {}
  int sets() const override { return sets_; }
  AnyArgs args(int i, void* C) const override {
    SvdquantGemmArgs a;
    a.M = s_.M, a.N = s_.N, a.K = s_.K, a.L = s_.L, a.R = z_.R;
    a.A = A_.get() + i * a_, a.SFA = SFA_.get() + i * sfa_, a.B = B_.get() + i * b_, a.SFB = SFB_.get() + i * sfb_;
    a.alpha = alpha_;
    a.lora_act = ACT_.get() + i * act_, a.lora_up = UP_.get() + i * up_, a.lora_format = z_.lora_format;
    a.wcscale = WC_.get() + i * cols_, a.bias = BIAS_.get() + i * cols_;
    a.c_format = z_.c_format;
    a.C = static_cast<uint16_t*>(C);
    return AnyArgs(a);
  }
  static std::unique_ptr<DeviceInputs> upload(const svdquant::HostProblem& p) {
    auto in = std::make_unique<SvdquantInputs>(svdquant_shape(p.M, p.N, p.K, p.L, {p.R, p.c_format, p.lora_format}),
                                               1, p.alpha);
    in->A_.upload(p.a);
    in->SFA_.upload(p.sfa);
    in->B_.upload(p.b);
    in->SFB_.upload(p.sfb);
    in->ACT_.upload(p.lora_act);
    in->UP_.upload(p.lora_up);
    in->WC_.upload(p.wcscale);
    in->BIAS_.upload(p.bias);
    return in;
  }
  // For timing: NVFP4 operands as the NVFP4 kind's benchmarks draw them; 16-bit values from bytes in
  // [0, 0x3F], which in either format are finite, non-negative and below 2.
  void fill_random() {
    constexpr uint8_t kSmallHalfByte = 0x3F;
    fill_bytes(A_.get(), A_.size(), 3, 0x00, 0xFF);
    fill_bytes(B_.get(), B_.size(), 4, 0x00, 0xFF);
    fill_bytes(SFA_.get(), SFA_.size(), 5, 0x30, 0x40);  // E4M3 codes of 0.5 .. 2
    fill_bytes(SFB_.get(), SFB_.size(), 6, 0x30, 0x40);
    fill_bytes(reinterpret_cast<uint8_t*>(ACT_.get()), ACT_.bytes(), 7, 0x00, kSmallHalfByte);
    fill_bytes(reinterpret_cast<uint8_t*>(UP_.get()), UP_.bytes(), 8, 0x00, kSmallHalfByte);
    fill_uniform(WC_.get(), WC_.size(), 9, -2.0f, 2.0f);
    fill_uniform(BIAS_.get(), BIAS_.size(), 10, -1.0f, 1.0f);
  }

 private:
  Shape s_;
  SvdquantSize z_;
  int sets_;
  float alpha_;
  size_t a_, b_, sfa_, sfb_, act_, up_, cols_;  // elements per set
  DeviceBuffer<uint8_t> A_, SFA_, B_, SFB_;
  DeviceBuffer<uint16_t> ACT_, UP_;
  DeviceBuffer<float> WC_, BIAS_;
};

class SvdquantProblem final : public Problem {
 public:
  SvdquantProblem(svdquant::HostProblem host, Tier tier) : host_(std::move(host)), tier_(tier) {}

  std::unique_ptr<DeviceInputs> upload() const override { return SvdquantInputs::upload(host_); }

  CompareResult compare(const void* got, Tile tile) const override {
    if (!ref_) ref_ = svdquant::reference(host_.host_args());
    return svdquant::compare(bits(got), *ref_, host_.host_args(), tier_, tile);
  }

  CompareResult compare_spots(const void* got, int random_count, uint64_t seed) const override {
    return svdquant::compare_spots(bits(got), host_.host_args(), random_count, seed);
  }

 private:
  std::vector<uint16_t> bits(const void* got) const {
    std::vector<uint16_t> v(size_t(int64_t(host_.M) * host_.N * host_.L));
    std::memcpy(v.data(), got, v.size() * sizeof(uint16_t));
    return v;
  }
  svdquant::HostProblem host_;
  Tier tier_;
  mutable std::optional<svdquant::Reference> ref_;
};

// ---- The kind --------------------------------------------------------------------------------------

// No library computes this in one call. The peer is the unfused baseline a user has (common/peers.h):
// the NVFP4 product through dequantize + cuBLAS into FP32, cuBLAS's GEMM of lora_act and lora_up added
// to it, an elementwise kernel for wcscale, bias and the rounding.
constexpr const char* kNoPeer =
    "no library computes the SVDQuant GEMM in one call; the peer is the unfused baseline (the NVFP4 "
    "product through dequantize + cuBLAS BF16 into FP32, a cuBLAS GEMM of lora_act and lora_up added to "
    "it, an elementwise wcscale/bias/rounding kernel)";

class SvdquantGemmKind final : public Kind {
 public:
  const char* name() const override { return "svdquant_gemm"; }
  const char* title() const override { return "SVDQuant GEMM"; }
  const char* summary() const override {
    return "C = (alpha * A * B^T + lora_act * lora_up^T) * wcscale + bias (M x N, L batches, FP16 or BF16),\n"
           "A and B NVFP4 as the NVFP4 GEMM, lora_act (M x R) and lora_up (N x R) BF16 or FP16, wcscale and\n"
           "bias FP32 per column, rounded once";
  }

  void validate(const AnyArgs& a) const override { gemm::validate(a.as<SvdquantGemmArgs>()); }
  std::string size_rule(char which, long long v) const override { return nvfp4::k_size_rule(which, v); }
  std::string size_help(char which) const override {
    if (which == 'l') return "batches, every operand batched: 1 to 65535";
    return which == 'k' ? "1 or more, a multiple of 32 (NVFP4)" : "1 or more";
  }
  Shape program_shape(const Shape& s) const override {
    return s.extra.empty() ? svdquant_shape(s.M, s.N, s.K, s.L, SvdquantSize{}) : s;
  }

  // The NVFP4 GEMM's tails with a rank each: every rank the issue names (16, 32, 64, 128, 256), ranks
  // that are not multiples of 32 or 64 (48, 80, 144: a kernel that steps the rank by 32 or 64 must
  // handle the rest), L > 1, and the four pairings of output and low-rank formats in turn.
  std::vector<Case> cases(Tile t) const override {
    std::vector<Case> out;
    auto add = [&](Tier tier, int M, int N, int K, int L, int R) {
      const int i = int(out.size());
      const Shape s = svdquant_shape(M, N, K, L, {R, Format16(i % 2), Format16(i / 2 % 2)});
      const std::string name = case_name(tier, s);
      for (const Case& c : out)
        if (c.name == name) return;
      out.push_back({name, s, tier});
    };
    const int k_tail = (t.k + 32) / 32 * 32;  // smallest multiple of 32 above the tile's K
    for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic}) {
      add(tier, 1, 1, 32, 1, 16);
      add(tier, 1, 37, 64, 1, 32);
      add(tier, 31, 1, 96, 1, 16);
      add(tier, 17, 13, 160, 1, 48);
      add(tier, t.m + 1, t.n + 1, k_tail, 1, 64);
      add(tier, 2 * t.m - 1, 2 * t.n - 1, 2 * k_tail, 1, 128);
      add(tier, 128, 128, 256, 1, 32);
      add(tier, 129, 257, 544, 1, 256);
      add(tier, 67, 131, 1056, 1, 80);
      add(tier, 29, 53, 96, 3, 32);
      add(tier, 2 * t.m, 2 * t.n, 4 * k_tail, 2, 144);
    }
    add(Tier::kRealistic, 509, 1021, 2048, 1, 32);
    add(Tier::kRealistic, 1024, 1024, 1024, 1, 128);
    add(Tier::kScaleBit7, 17, 13, 160, 1, 32);
    add(Tier::kScaleBit7, 29, 53, 96, 3, 16);
    return out;
  }
  Case element_aligned_c_case() const override {
    return family::element_aligned_c_case(svdquant_shape(67, 48, 96, 2, {32, Format16::kBf16, Format16::kBf16}));
  }

  std::vector<BadArgument> bad_arguments() const override {
    using F = SvdquantGemmArgs;
    auto m = [](auto f) { return [f](AnyArgs& a) { f(a.as<F>()); }; };
    auto shift = [](auto* p, int bytes) { return reinterpret_cast<decltype(p)>(reinterpret_cast<uintptr_t>(p) + bytes); };
    const std::string multiple16 = "must be a positive multiple of 16";
    auto v = family::dims_and_pointers<F>();
    v.push_back({"K", m([](F& a) { a.K = 48; })});
    v.push_back({"K", m([](F& a) { a.K = 31; })});
    v.push_back({"SFA", m([](F& a) { a.SFA = nullptr; })});
    v.push_back({"SFB", m([](F& a) { a.SFB = nullptr; })});
    v.push_back({"A", m([](F& a) { a.A += 8; })});
    v.push_back({"SFB", m([](F& a) { a.SFB += 4; })});
    v.push_back({"alpha", m([](F& a) { a.alpha = NAN; })});
    v.push_back({"alpha", m([](F& a) { a.alpha = -INFINITY; })});
    v.push_back({"R", m([](F& a) { a.R = 0; }), multiple16});
    v.push_back({"R", m([](F& a) { a.R = -32; }), multiple16});
    v.push_back({"R", m([](F& a) { a.R = 8; }), multiple16});
    v.push_back({"R", m([](F& a) { a.R = 24; }), multiple16});
    v.push_back({"R", m([](F& a) { a.R = kSvdquantMaxRank + kSvdquantRankMultiple; }), "must be at most 1024"});
    // K = 32 and R = 1024 with M*L just under 2^41: M*K*L stays below 2^46, M*R*L does not.
    v.push_back({"M*R*L", m([](F& a) { a.M = INT_MAX, a.L = 1024, a.N = 1, a.K = 32, a.R = kSvdquantMaxRank; }),
                 "must each be below 2^46"});
    v.push_back({"lora_act", m([](F& a) { a.lora_act = nullptr; }), "must not be null"});
    v.push_back({"lora_act", m([](F& a) { a.lora_act += 4; }), "must be 16-byte aligned"});  // 8 bytes
    v.push_back({"lora_up", m([](F& a) { a.lora_up = nullptr; }), "must not be null"});
    v.push_back({"lora_up", m([](F& a) { a.lora_up += 1; }), "must be 16-byte aligned"});
    v.push_back({"wcscale", m([](F& a) { a.wcscale = nullptr; }), "must not be null"});
    v.push_back({"wcscale", m([shift](F& a) { a.wcscale = shift(a.wcscale, 2); }), "must be 4-byte aligned"});
    v.push_back({"bias", m([](F& a) { a.bias = nullptr; }), "must not be null"});
    v.push_back({"bias", m([shift](F& a) { a.bias = shift(a.bias, 1); }), "must be 4-byte aligned"});
    v.push_back({"C", m([shift](F& a) { a.C = shift(a.C, 1); }), "must be 2-byte aligned"});
    v.push_back({"lora_format", m([](F& a) { a.lora_format = Format16(2); }), "must be Format16::kFp16 or"});
    v.push_back({"c_format", m([](F& a) { a.c_format = Format16(-1); }), "must be Format16::kFp16 or"});
    family::add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.A; },
                              [](const F& a) { return packed_bytes(a.M, a.K, a.L); });
    family::add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.SFA; },
                              [](const F& a) { return sf_bytes(a.M, a.K, a.L); });
    family::add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.B; },
                              [](const F& a) { return packed_bytes(a.N, a.K, a.L); });
    family::add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.SFB; },
                              [](const F& a) { return sf_bytes(a.N, a.K, a.L); });
    family::add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.lora_act; },
                              [](const F& a) { return lora_bytes(a.M, a.R, a.L); });
    family::add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.lora_up; },
                              [](const F& a) { return lora_bytes(a.N, a.R, a.L); });
    family::add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.wcscale; },
                              [](const F& a) { return column_bytes(a.N, a.L); });
    family::add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.bias; },
                              [](const F& a) { return column_bytes(a.N, a.L); });
    return v;
  }
  // Each operand in its own 64 KiB, which holds it at these sizes.
  AnyArgs placeholder_args() const override {
    constexpr uintptr_t kSlot = 0x10000;
    SvdquantGemmArgs a;
    a.M = 64, a.N = 64, a.K = 64, a.L = 1, a.R = 32;
    a.A = reinterpret_cast<const uint8_t*>(1 * kSlot);
    a.SFA = reinterpret_cast<const uint8_t*>(2 * kSlot);
    a.B = reinterpret_cast<const uint8_t*>(3 * kSlot);
    a.SFB = reinterpret_cast<const uint8_t*>(4 * kSlot);
    a.lora_act = reinterpret_cast<const uint16_t*>(5 * kSlot);
    a.lora_up = reinterpret_cast<const uint16_t*>(6 * kSlot);
    a.wcscale = reinterpret_cast<const float*>(7 * kSlot);
    a.bias = reinterpret_cast<const float*>(8 * kSlot);
    a.C = reinterpret_cast<uint16_t*>(9 * kSlot);
    return AnyArgs(a);
  }
  std::unique_ptr<Problem> make_problem(const Shape& s, Tier tier, uint64_t seed) const override {
    return std::make_unique<SvdquantProblem>(svdquant::make_problem(program_shape(s), tier, seed), tier);
  }
  const char* describe_inputs(Tier tier) const override {
    switch (tier) {
      case Tier::kExact:
        return "every E2M1 byte pattern, power-of-two scales, alpha 1/2, small dyadic low-rank values, wcscale "
               "in {0, +-1/2, +-1, +-2}: every sum exact in FP32";
      case Tier::kScaleBit7: return "the exact tier with bit 7 set in half of the scale bytes (ignored)";
      case Tier::kLayout:
        return "the NVFP4 layout tier's operands, a low-rank term as large as the product, random wcscale and bias";
      case Tier::kRealistic: break;
    }
    return "realistic NVFP4 operands, a low-rank term as large as the product, wcscale in [-2, 2) with zeros, "
           "bias";
  }

  int64_t output_bytes(const Shape& s) const override { return 2 * int64_t(s.M) * s.N * s.L; }
  int output_element_bytes() const override { return 2; }
  double flops(const Shape& s) const override { return gemm::flops(args_of(s)); }
  double min_bytes(const Shape& s) const override { return gemm::min_bytes(args_of(s)); }
  std::unique_ptr<DeviceInputs> bench_inputs(const Shape& s, int sets) const override {
    auto in = std::make_unique<SvdquantInputs>(program_shape(s), sets, family::kBenchAlpha);
    in->fill_random();
    CUDA_CHECK(cudaDeviceSynchronize());
    return in;
  }
  // The FLUX.1 linear layers at 1024^2 (M = 4352 tokens in the single-stream blocks, 4096 in the
  // double-stream ones) at rank 32, and ultism's svdquant-kernels shapes at ranks 128, 32 and 256;
  // BF16 everywhere, as diffusion models run (the sources: the SVDQuant section of the next stages'
  // notes, from nunchaku and ultism/svdquant-kernels).
  std::vector<Shape> bench_shapes() const override {
    const SvdquantSize r32{32, Format16::kBf16, Format16::kBf16}, r128{128, Format16::kBf16, Format16::kBf16},
        r256{256, Format16::kBf16, Format16::kBf16};
    return {svdquant_shape(4352, 21504, 3072, 1, r32),  svdquant_shape(4352, 3072, 15360, 1, r32),
            svdquant_shape(4096, 12288, 3072, 1, r32),  svdquant_shape(4096, 3072, 12288, 1, r32),
            svdquant_shape(256, 3072, 3840, 1, r128),   svdquant_shape(4352, 3072, 3840, 1, r128),
            svdquant_shape(4352, 15360, 3840, 1, r128), svdquant_shape(4352, 3840, 15360, 1, r128),
            svdquant_shape(4352, 3072, 10240, 1, r32),  svdquant_shape(4352, 3072, 10240, 1, r256)};
  }
  // The NVFP4 GEMM's: the low-rank MMAs run at the 16-bit rate, a quarter of FP4's, so a fraction of
  // the FP4 peak slightly overstates how far a stage is from its own ceiling (by about 3R/K).
  Peak peak(bool uses_tcgen05) const override { return KindOf<Nvfp4GemmArgs>::get().peak(uses_tcgen05); }
  std::vector<Peer> peers(std::string* note) const override {
    if (note) *note = kNoPeer;
    return {{kSvdquantUnfusedName, &svdquant_unfused}};
  }
  // As an NVFP4 GEMM of the same A, B, scales, alpha and C (the low-rank term and the affine dropped):
  // how stage 07, the stage this kind's stage builds on, is timed beside it. C is written as FP16 bits.
  std::vector<AnyArgs> as_kind(const AnyArgs& args, const Kind& other) const override {
    if (&other == &KindOf<Nvfp4GemmArgs>::get()) {
      const SvdquantGemmArgs& a = args.as<SvdquantGemmArgs>();
      return {AnyArgs(nvfp4_args(a, reinterpret_cast<__half*>(a.C)))};
    }
    return Kind::as_kind(args, other);
  }
  double device_bytes(const Shape& s) const override { return gemm::min_bytes(args_of(s)); }
  // The device bytes, the FP32 sources of the realistic tier's NVFP4 operands, and the reference's
  // three arrays per output.
  double host_bytes(const Shape& s) const override {
    return device_bytes(s) + 4.0 * s.L * (double(s.M) + s.N) * s.K + 18.0 * s.L * double(s.M) * s.N;
  }

 private:
  SvdquantGemmArgs args_of(const Shape& s) const {
    SvdquantGemmArgs a;
    a.M = s.M, a.N = s.N, a.K = s.K, a.L = s.L, a.R = svdquant_size(program_shape(s)).R;
    return a;
  }
};

}  // namespace

const Kind& KindOf<SvdquantGemmArgs>::get() {
  static const SvdquantGemmKind kind;
  return kind;
}

}  // namespace gemm
