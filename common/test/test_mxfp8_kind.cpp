// The MXFP8 GEMM kind on the CPU: its rules (every bad argument rejected with its argument and rule,
// nothing written), its cases, the FP64 reference with one rounding (hand-computed values, BF16
// rounding against an integer formulation, the two reference paths against each other), and that its
// test data catch a wrong scale layout or a wrong convention.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/harness/compare.h"
#include "common/harness/problems.h"
#include "common/kinds/mxfp8_gemm.h"

namespace gemm {
namespace {

const Kind& kind() { return KindOf<Mxfp8GemmArgs>::get(); }

std::string message_of(const Mxfp8GemmArgs& a) {
  try {
    validate(a);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// ---- rules -----------------------------------------------------------------------------------------

TEST(Mxfp8Kind, EveryBadArgumentIsRejectedNamingItsArgumentAndRule) {
  EXPECT_STREQ(kind().name(), "mxfp8_gemm");
  EXPECT_NO_THROW(kind().validate(kind().placeholder_args()));
  const auto bad = kind().bad_arguments();
  EXPECT_GT(bad.size(), 30u);
  std::set<std::string> arguments;
  for (const BadArgument& b : bad) {
    AnyArgs a = kind().placeholder_args().clone();
    b.mutate(a);
    arguments.insert(b.argument);
    try {
      kind().validate(a);
      ADD_FAILURE() << "accepted: " << b.argument << " " << b.rule;
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("Mxfp8GemmArgs: ", 0), 0u) << what;
      EXPECT_NE(what.find(": " + b.argument + " "), std::string::npos) << what;
      EXPECT_NE(what.find(b.rule), std::string::npos) << what << " lacks " << b.rule;
    }
  }
  for (const char* arg : {"M", "N", "K", "L", "A", "SFA", "B", "SFB", "C", "a_type", "b_type", "c_type"})
    EXPECT_TRUE(arguments.count(arg)) << "no bad argument for " << arg;
}

TEST(Mxfp8Kind, MessagesSayTheRuleAndTheValue) {
  const Mxfp8GemmArgs good = kind().placeholder_args().as<Mxfp8GemmArgs>();
  Mxfp8GemmArgs a = good;
  a.K = 48;
  EXPECT_EQ(message_of(a), "Mxfp8GemmArgs: K must be a multiple of 32 (got 48)");
  a = good;
  a.a_type = Mxfp8Element(3);  // E2M3: a kind::mxf8f6f4 type, but not an 8-bit one
  EXPECT_EQ(message_of(a), "Mxfp8GemmArgs: a_type must be E4M3 or E5M2 (the 8-bit types of kind::mxf8f6f4) (got 3)");
  a = good;
  a.c_type = Mxfp8Output::kBf16;
  a.C = static_cast<char*>(a.C) + 1;
  EXPECT_EQ(message_of(a), "Mxfp8GemmArgs: C must be 2-byte aligned (got 1 bytes past alignment)");
  a = good;
  a.c_type = Mxfp8Output::kBf16;
  a.C = static_cast<char*>(a.C) + 2;  // 2-byte aligned is enough for BF16
  EXPECT_EQ(message_of(a), "");
  a = good;
  a.SFB = nullptr;
  EXPECT_EQ(message_of(a), "Mxfp8GemmArgs: SFB must not be null (got nullptr)");
  // E5M2 operands are part of the contract, in either position.
  a = good;
  a.a_type = Mxfp8Element::kE5M2;
  a.b_type = Mxfp8Element::kE5M2;
  EXPECT_EQ(message_of(a), "");
}

TEST(Mxfp8Kind, RejectionWritesNothing) {
  // Real host buffers and a poisoned C: a call that breaks a rule must leave C as it was. (validate
  // runs before any launch; a launcher that wrote first would fail this through the stage tests.)
  std::vector<uint8_t> A(64 * 64), SFA(128 * 4), B(64 * 64), SFB(128 * 4);
  std::vector<float> C(64 * 64);
  std::memset(C.data(), 0xA5, C.size() * sizeof(float));
  const std::vector<float> before = C;
  Mxfp8GemmArgs a{64, 64, 48, 1, A.data(), SFA.data(), B.data(), SFB.data(), C.data(), Mxfp8Output::kFp32,
                  Mxfp8Element::kE4M3, Mxfp8Element::kE4M3};
  EXPECT_THROW(validate(a), std::invalid_argument);
  EXPECT_EQ(std::memcmp(C.data(), before.data(), C.size() * sizeof(float)), 0);
}

TEST(Mxfp8Kind, CasesObeyTheRulesAndCoverTailsBatchesTypesAndTiers) {
  auto cases = kind().cases({128, 256, 256});
  cases.push_back(kind().element_aligned_c_case());
  std::set<std::string> names;
  bool batches = false, bf16 = false, e5m2 = false, exact = false, layout = false, past_atom = false, one = false;
  for (const Case& c : cases) {
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case " << c.name;
    EXPECT_EQ(kind().size_rule('k', c.shape.K), "") << c.name;
    const Mxfp8Types t = mxfp8_types(c.shape);
    batches |= c.shape.L > 1;
    bf16 |= t.c == Mxfp8Output::kBf16;
    e5m2 |= t.a == Mxfp8Element::kE5M2 || t.b == Mxfp8Element::kE5M2;
    exact |= c.tier == Tier::kExact;
    layout |= c.tier == Tier::kLayout;
    past_atom |= c.shape.M > 128 && c.shape.K > 128;
    one |= c.shape.M == 1 && c.shape.N == 1;
    EXPECT_LE(c.shape.K, 4096) << c.name;
    EXPECT_GT(kind().min_bytes(c.shape), double(kind().output_bytes(c.shape))) << c.name;
  }
  EXPECT_TRUE(batches && bf16 && e5m2 && exact && layout && past_atom && one);
  EXPECT_EQ(kind().output_bytes(mxfp8_shape(3, 5, 32, 2, {Mxfp8Output::kBf16, Mxfp8Element::kE4M3, Mxfp8Element::kE4M3})), 60);
  EXPECT_EQ(kind().output_bytes({3, 5, 32, 2}), 120);
  EXPECT_NE(kind().size_rule('k', 48).find("multiple of 32"), std::string::npos);
}

// ---- the reference ---------------------------------------------------------------------------------

// Correct BF16 rounding of a double by integer arithmetic on its bits (for doubles in BF16's normal
// range): keep the top 7 fraction bits, round the 45 dropped ones to nearest even.
uint16_t bf16_by_bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, 8);
  const uint64_t sign = b >> 63, exp = (b >> 52) & 0x7FF, frac = b & ((uint64_t(1) << 52) - 1);
  uint64_t mant = (uint64_t(1) << 52) | frac;  // 53 bits
  const uint64_t dropped = mant & ((uint64_t(1) << 45) - 1), half = uint64_t(1) << 44;
  mant >>= 45;                                  // 8 bits: 1.xxxxxxx
  if (dropped > half || (dropped == half && (mant & 1))) ++mant;
  int64_t e = int64_t(exp) - 1023 + 127;
  if (mant == 256) {
    mant = 128;
    ++e;
  }
  return uint16_t((sign << 15) | (uint64_t(e) << 7) | (mant & 0x7F));
}

TEST(Mxfp8Reference, Bf16RoundingIsOneCorrectRounding) {
  std::mt19937_64 rng(seed_for("mxfp8_bf16_rounding"));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> e(-120, 120);
  for (int i = 0; i < 200000; ++i) {
    const double x = std::ldexp(u(rng), e(rng));
    if (std::fabs(x) < std::ldexp(1.0, -126)) continue;  // bf16_by_bits covers the normal range
    ASSERT_EQ(bf16_bits_from_double(x), bf16_by_bits(x)) << x;
  }
  // Ties go to even; a value just above a tie goes up although its FP32 rounding is the tie itself
  // (so double -> FP32 -> BF16 would round down: the reason for rounding once, from double).
  EXPECT_EQ(bf16_bits_from_double(1.0 + std::ldexp(1.0, -8)), 0x3F80);                       // tie: down
  EXPECT_EQ(bf16_bits_from_double(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);                   // tie: up
  EXPECT_EQ(bf16_bits_from_double(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)), 0x3F81);
  EXPECT_EQ(float(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)), 1.0f + std::ldexp(1.0f, -8));
  EXPECT_EQ(bf16_bits_from_double(1e39), 0x7F80);
  EXPECT_EQ(bf16_bits_from_double(-1e39), 0xFF80);
  EXPECT_EQ(bf16_bits_from_double(std::ldexp(1.0, -133)), 0x0001);  // smallest subnormal
  EXPECT_EQ(bf16_bits_from_double(0.0), 0x0000);
}

TEST(Mxfp8Reference, HandComputedProblem) {
  // M = 2, N = 1, K = 64, FP32 C. Row 0 of A: 1.5 (0x3C) everywhere, scales 2^0 and 2^2. Row 1: 0x3C
  // in block 0 with scale 2^-2, zeros in block 1. B: 2 (0x40) in block 0 and -0.5 (0xB0) in block 1,
  // scales 2^1 and 2^0.
  //   C[0] = 32 (1.5 * 2 * 2) + 32 (1.5 * 4 * -0.5) = 192 - 96 = 96, sum of magnitudes 288
  //   C[1] = 32 (0.375 * 2 * 2) = 48
  Mxfp8Tensor a, b;
  a.rows = 2, a.K = 64, b.rows = 1, b.K = 64;
  a.data.assign(128, 0x3C);
  std::fill(a.data.begin() + 96, a.data.end(), 0);
  a.sf.assign(size_t(a.batch_sf_bytes()), 0);
  a.sf[sf_offset(0, 0, 64, 32)] = 127;
  a.sf[sf_offset(0, 1, 64, 32)] = 129;
  a.sf[sf_offset(1, 0, 64, 32)] = 125;
  a.sf[sf_offset(1, 1, 64, 32)] = 200;  // times zeros
  b.data.assign(64, 0x40);
  std::fill(b.data.begin() + 32, b.data.end(), 0xB0);
  b.sf.assign(size_t(b.batch_sf_bytes()), 0);
  b.sf[sf_offset(0, 0, 64, 32)] = 128;
  b.sf[sf_offset(0, 1, 64, 32)] = 127;
  EXPECT_EQ(sf_offset(1, 0, 64, 32), 16);  // row 1: the next 16-byte line of the atom
  EXPECT_EQ(sf_offset(0, 1, 64, 32), 1);   // block 1: the next byte of the row's 4-byte column
  Mxfp8GemmArgs h{2, 1, 64, 1, a.data.data(), a.sf.data(), b.data.data(), b.sf.data(), nullptr, Mxfp8Output::kFp32,
                  Mxfp8Element::kE4M3, Mxfp8Element::kE4M3};
  const Mxfp8Reference r = reference_gemm(h);
  EXPECT_EQ(r.value[0], 96.0);
  EXPECT_EQ(r.value[1], 48.0);
  EXPECT_EQ(r.abs_sum[0], 288.0);
  EXPECT_EQ(r.rounded[0], 0x42C00000u);  // 96.0f
  EXPECT_EQ(reference_at(h, 0, 0, 0), 96.0);
  h.c_type = Mxfp8Output::kBf16;
  EXPECT_EQ(reference_gemm(h).rounded[1], 0x4240u);  // 48 in BF16
  // A NaN scale makes its outputs NaN.
  a.sf[sf_offset(1, 0, 64, 32)] = kUe8m0NaN;
  EXPECT_TRUE(std::isnan(reference_gemm(h).value[1]));
}

TEST(Mxfp8Reference, BothPathsAgreeAndTheExactTierIsExactInFp32) {
  for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic})
    for (Mxfp8Types t : {Mxfp8Types{}, Mxfp8Types{Mxfp8Output::kBf16, Mxfp8Element::kE5M2, Mxfp8Element::kE4M3}}) {
      const Shape s = mxfp8_shape(37, 29, tier == Tier::kExact ? 4096 : 288, 2, t);
      const HostMxfp8Problem p = make_mxfp8_problem(s, tier, seed_for(case_name(tier, s)));
      const Mxfp8GemmArgs h = p.host_args();
      const Mxfp8Reference r = reference_gemm(h);
      const std::vector<double> a = dequantize_mxfp8(h.A, h.SFA, h.M, h.K, h.L, h.a_type);
      const std::vector<double> b = dequantize_mxfp8(h.B, h.SFB, h.N, h.K, h.L, h.b_type);
      for (int l = 0; l < s.L; ++l)
        for (int m = 0; m < s.M; m += 7)
          for (int n = 0; n < s.N; n += 5) {
            const size_t i = (size_t(l) * s.M + m) * s.N + n;
            double abs_sum;
            ASSERT_EQ(reference_at(h, l, m, n, &abs_sum), r.value[i]);
            ASSERT_EQ(abs_sum, r.abs_sum[i]);
            if (tier != Tier::kExact) continue;
            // An FP32 accumulation in two different orders gives the exact sum: the tier's promise.
            float up = 0, down = 0;
            for (int k = 0; k < s.K; ++k) up += float(a[(size_t(l) * s.M + m) * s.K + k] * b[(size_t(l) * s.N + n) * s.K + k]);
            for (int k = s.K - 1; k >= 0; --k) down += float(a[(size_t(l) * s.M + m) * s.K + k] * b[(size_t(l) * s.N + n) * s.K + k]);
            ASSERT_EQ(double(up), r.value[i]);
            ASSERT_EQ(double(down), r.value[i]);
          }
    }
}

// ---- the data catch layout and convention errors -------------------------------------------------

// The output a kernel with a scale-layout bug would write: the reference of the problem with SFA's
// bytes moved by `remap` (which returns the byte actually read for each position).
template <class Remap>
std::vector<uint8_t> output_with_wrong_sfa(const HostMxfp8Problem& p, Remap remap) {
  std::vector<uint8_t> sfa(p.a.sf.size());
  for (size_t i = 0; i < sfa.size(); ++i) sfa[i] = p.a.sf[remap(i)];
  Mxfp8GemmArgs h = p.host_args();
  h.SFA = sfa.data();
  const Mxfp8Reference r = reference_gemm(h);
  const int e = output_element_bytes(p.types.c);
  std::vector<uint8_t> out(r.rounded.size() * size_t(e));
  for (size_t i = 0; i < r.rounded.size(); ++i) std::memcpy(&out[i * e], &r.rounded[i], size_t(e));  // little-endian
  return out;
}

TEST(Mxfp8Kind, WrongScaleBytesOrAtomsCannotPass) {
  for (Tier tier : {Tier::kExact, Tier::kLayout})
    for (Mxfp8Types t : {Mxfp8Types{}, Mxfp8Types{Mxfp8Output::kBf16, Mxfp8Element::kE4M3, Mxfp8Element::kE4M3}}) {
      const Shape s = mxfp8_shape(257, 40, 544, 2, t);  // three 128-row atoms, 17 scale columns
      const uint64_t seed = seed_for(case_name(tier, s) + "_layout");
      const HostMxfp8Problem p = make_mxfp8_problem(s, tier, seed);
      const auto problem = kind().make_problem(s, tier, seed);
      const Tile tile{128, 128, 128};
      // The right layout passes.
      const std::vector<uint8_t> right = output_with_wrong_sfa(p, [](size_t i) { return i; });
      EXPECT_TRUE(problem->compare(right.data(), tile).ok()) << problem->compare(right.data(), tile).describe();
      const size_t outputs = size_t(s.M) * s.N * s.L;
      // Bytes 0 and 1 of every 4-byte column swapped (a wrong scale id for K steps 0 and 1).
      const auto swap01 = [](size_t i) { return i % 4 == 0 ? i + 1 : i % 4 == 1 ? i - 1 : i; };
      // The byte order within a column reversed.
      const auto reversed = [](size_t i) { return i / 4 * 4 + 3 - i % 4; };
      // Rows 32 apart exchanged in pairs within an atom (row r read where row r +- 32 is).
      const auto rows32 = [](size_t i) { return i % 8 < 4 ? i + 4 : i - 4; };
      // Consecutive 512-byte atoms exchanged (a wrong atom).
      const auto atoms = [&](size_t i) {
        const size_t atom = i / 512, n_atoms = p.a.sf.size() / 512;
        const size_t other = atom % 2 == 0 ? std::min(atom + 1, n_atoms - 1) : atom - 1;
        return other * 512 + i % 512;
      };
      int which = 0;
      for (const auto& remap : std::vector<std::function<size_t(size_t)>>{swap01, reversed, rows32, atoms}) {
        const std::vector<uint8_t> wrong = output_with_wrong_sfa(p, remap);
        const CompareResult c = problem->compare(wrong.data(), tile);
        EXPECT_FALSE(c.ok()) << tier_name(tier) << " remap " << which;
        EXPECT_GT(c.mismatches, int64_t(outputs / 2)) << tier_name(tier) << " remap " << which << ": too few outputs change";
        ++which;
      }
    }
}

TEST(Mxfp8Kind, AWrongConventionChangesTheRealisticData) {
  // The realistic tier quantizes A with RCEIL and B with FLOOR; operands quantized the other way
  // differ in their bytes (the GEMM itself consumes bytes and has no convention of its own).
  const Shape s{64, 48, 1024, 1};
  const uint64_t seed = seed_for("mxfp8_convention");
  const HostMxfp8Problem p = make_mxfp8_problem(s, Tier::kRealistic, seed);
  std::mt19937_64 rng(seed);
  const std::vector<float> a = realistic_values(int64_t(s.M) * s.K, rng);
  const Mxfp8Tensor rceil = quantize_mxfp8(a.data(), s.M, s.K, 1, Mxfp8Element::kE4M3, Mxfp8ScaleRounding::kRceil);
  const Mxfp8Tensor floor = quantize_mxfp8(a.data(), s.M, s.K, 1, Mxfp8Element::kE4M3, Mxfp8ScaleRounding::kFloor);
  EXPECT_EQ(p.a.sf, rceil.sf);
  EXPECT_EQ(p.a.data, rceil.data);
  EXPECT_NE(p.a.sf, floor.sf);
}

// A shape with other types than FP32 C of E4M3 x E4M3 says so in its name (benchmark rows, plots), so it is
// never shown as the plain shape of the same sizes; the plain one keeps the plain name.
TEST(Mxfp8Kind, ShapeNamesSayTheirTypes) {
  EXPECT_EQ(shape_text(mxfp8_shape(512, 512, 512, 1, {})), "512x512x512");
  EXPECT_EQ(shape_text(mxfp8_shape(512, 512, 512, 1, {Mxfp8Output::kBf16, Mxfp8Element::kE4M3, Mxfp8Element::kE4M3})),
            "512x512x512_bf16");
  EXPECT_EQ(shape_text(mxfp8_shape(64, 32, 96, 3, {Mxfp8Output::kFp32, Mxfp8Element::kE5M2, Mxfp8Element::kE4M3})),
            "64x32x96x3_e5m2xe4m3");
  EXPECT_EQ(mxfp8_types(mxfp8_shape(64, 32, 96, 3, {Mxfp8Output::kBf16, Mxfp8Element::kE4M3, Mxfp8Element::kE5M2})).b,
            Mxfp8Element::kE5M2);
}

}  // namespace
}  // namespace gemm
