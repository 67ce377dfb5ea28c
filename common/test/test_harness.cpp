// The test harness tests itself: its data must be able to catch the bugs it exists for, and its
// comparisons must flag what they claim to flag.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "common/formats.h"
#include "common/gemm_api.h"
#include "common/harness/compare.h"
#include "common/harness/gemm_tests.h"
#include "common/harness/problems.h"
#include "common/reference.h"

namespace gemm {
namespace {

// How many outputs of `p` change when operand A is decoded through `decode_a` instead of the
// contract's layout (a simulated kernel bug).
template <class DecodeA>
int64_t outputs_changed_by(const HostNvfp4Problem& p, DecodeA decode_a, float alpha) {
  const ReferenceOutput good = reference_gemm(p.host_args());
  int64_t changed = 0;
  for (int l = 0; l < p.L; ++l)
    for (int m = 0; m < p.M; ++m)
      for (int n = 0; n < p.N; ++n) {
        double sum = 0;
        for (int k = 0; k < p.K; ++k) sum += double(decode_a(l, m, k)) * p.b.scaled_value(l, n, k);
        const uint16_t bad = half_bits_from_double(double(alpha) * sum);
        changed += bad != good.half[(int64_t(l) * p.M + m) * p.N + n];
      }
  return changed;
}

class SimulatedBugs : public ::testing::TestWithParam<Tier> {};

TEST_P(SimulatedBugs, AreCaughtByTheTestData) {
  const HostNvfp4Problem p = make_nvfp4_problem(160, 48, 128, 2, GetParam(), 12);
  const int64_t outputs = int64_t(p.M) * p.N * p.L;
  const int K16 = p.K / 16;
  const int64_t batch_sf = sf_batch_bytes(p.M, p.K);
  auto code_at = [&](int l, int m, int k) { return p.a.code(l, m, k); };
  auto sf_byte = [&](int l, int64_t off) { return e4m3_to_float(p.a.sf[l * batch_sf + off]); };

  // Scales read row-major (m * K/16 + k16) instead of blocked.
  EXPECT_GT(outputs_changed_by(p, [&](int l, int m, int k) {
    return e2m1_to_float(code_at(l, m, k)) * sf_byte(l, int64_t(m) * K16 + k / 16);
  }, p.alpha), outputs * 9 / 10);
  // The right tile, read as 128 rows x 4 scales row-major (r * 4 + c) instead of 32 lines of 16 bytes.
  EXPECT_GT(outputs_changed_by(p, [&](int l, int m, int k) {
    const int64_t r = m % 128, c = (k / 16) % 4;
    const int64_t tile_base = sf_offset(m, k / 16, p.K) - ((r % 32) * 16 + (r / 32) * 4 + c);
    return e2m1_to_float(code_at(l, m, k)) * sf_byte(l, tile_base + r * 4 + c);
  }, p.alpha), outputs * 9 / 10);
  // The scale of the neighbouring k-block.
  EXPECT_GT(outputs_changed_by(p, [&](int l, int m, int k) {
    return e2m1_to_float(code_at(l, m, k)) * sf_byte(l, sf_offset(m, (k / 16) ^ 1, p.K));
  }, p.alpha), outputs * 9 / 10);
  // Nibbles swapped in A only.
  EXPECT_GT(outputs_changed_by(p, [&](int l, int m, int k) {
    return e2m1_to_float(code_at(l, m, k ^ 1)) * sf_byte(l, sf_offset(m, k / 16, p.K));
  }, p.alpha), outputs * 9 / 10);
  // alpha forgotten (only detectable when alpha != 1; the exact tier uses alpha = 1 on purpose).
  if (p.alpha != 1.0f) {
    EXPECT_GT(outputs_changed_by(p, [&](int l, int m, int k) { return p.a.scaled_value(l, m, k); }, 1.0f),
              outputs * 9 / 10);
  }
}

INSTANTIATE_TEST_SUITE_P(Tiers, SimulatedBugs, ::testing::Values(Tier::kExact, Tier::kLayout, Tier::kRealistic),
                         [](const auto& info) { return std::string(tier_name(info.param)); });

TEST(ExactTier, CoversEveryPayloadByteAndUsesPowerOfTwoScales) {
  const HostNvfp4Problem p = make_nvfp4_problem(16, 16, 64, 1, Tier::kExact, 1);
  EXPECT_EQ(std::set<uint8_t>(p.a.data.begin(), p.a.data.end()).size(), 256u);
  for (int r = 0; r < 16; ++r)
    for (int k16 = 0; k16 < 4; ++k16) {
      const float s = e4m3_to_float(p.a.scale(0, r, k16));
      EXPECT_TRUE(s == 0.5f || s == 1.0f || s == 2.0f) << s;
    }
  EXPECT_EQ(p.alpha, 1.0f);
}

TEST(ExactTier, Fp32SumsAreExactInAnyOrder) {
  // The claim the bit-exact comparison rests on: an FP32 accumulation gives the exact sum whatever
  // the order. Check forward and backward float sums against the double reference.
  const HostNvfp4Problem p = make_nvfp4_problem(8, 8, 4096, 1, Tier::kExact, 2);
  const ReferenceOutput r = reference_gemm(p.host_args());
  for (int m = 0; m < 8; ++m)
    for (int n = 0; n < 8; ++n) {
      float fwd = 0, bwd = 0;
      for (int k = 0; k < p.K; ++k) fwd += p.a.scaled_value(0, m, k) * p.b.scaled_value(0, n, k);
      for (int k = p.K - 1; k >= 0; --k) bwd += p.a.scaled_value(0, m, k) * p.b.scaled_value(0, n, k);
      EXPECT_EQ(double(fwd), r.value[m * 8 + n]);
      EXPECT_EQ(double(bwd), r.value[m * 8 + n]);
    }
  const HostFp32Problem f = make_fp32_problem(4, 4, 4096, 1, Tier::kExact, 3);
  const ReferenceOutput rf = reference_gemm(f.host_args());
  for (int m = 0; m < 4; ++m)
    for (int n = 0; n < 4; ++n) {
      float s = 0;
      for (int k = 4095; k >= 0; --k) s += f.A[m * 4096 + k] * f.B[n * 4096 + k];
      EXPECT_EQ(double(s), rf.value[m * 4 + n]);
    }
}

TEST(Compare, AcceptsAnFp32AccumulationAndRejectsOneWrongElement) {
  const HostFp32Problem p = make_fp32_problem(33, 17, 500, 2, Tier::kRealistic, 5);
  const ReferenceOutput ref = reference_gemm(p.host_args());
  std::vector<float> got(ref.value.size());
  for (int l = 0; l < 2; ++l)  // what a GPU would compute: float sums, in some order
    for (int m = 0; m < 33; ++m)
      for (int n = 0; n < 17; ++n) {
        float s = 0;
        for (int k = 499; k >= 0; --k) s += p.A[(l * 33 + m) * 500 + k] * p.B[(l * 17 + n) * 500 + k];
        got[(l * 33 + m) * 17 + n] = s;
      }
  const CompareShape shape{33, 17, 500, 2, 16, 8};
  EXPECT_TRUE(compare_fp32(got, ref, shape, Tier::kRealistic).ok());
  got[(1 * 33 + 20) * 17 + 9] *= 1.01f;
  const CompareResult bad = compare_fp32(got, ref, shape, Tier::kRealistic);
  EXPECT_FALSE(bad.ok());
  ASSERT_EQ(bad.mismatches, 1);
  EXPECT_EQ(bad.first[0].l, 1);
  EXPECT_EQ(bad.first[0].m, 20);
  EXPECT_EQ(bad.first[0].n, 9);
  EXPECT_NE(bad.describe().find("rows 16-31 x cols 8-15"), std::string::npos) << bad.describe();
}

TEST(Compare, FlagsNaNAndNeverPassesAnEmptyCheck) {
  const HostNvfp4Problem p = make_nvfp4_problem(3, 5, 32, 1, Tier::kExact, 6);
  const ReferenceOutput ref = reference_gemm(p.host_args());
  std::vector<uint16_t> got = ref.half;
  EXPECT_TRUE(compare_fp16(got, ref, {3, 5, 32, 1}, Tier::kExact).ok());
  got[7] = 0x7E00;  // NaN
  const CompareResult r = compare_fp16(got, ref, {3, 5, 32, 1}, Tier::kExact);
  EXPECT_EQ(r.nonfinite, 1);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(CompareResult{}.ok());
}

TEST(Compare, ExactTierRejectsOneUlp) {
  const HostNvfp4Problem p = make_nvfp4_problem(4, 4, 64, 1, Tier::kExact, 7);
  const ReferenceOutput ref = reference_gemm(p.host_args());
  std::vector<uint16_t> got = ref.half;
  got[5] ^= 1;
  EXPECT_EQ(compare_fp16(got, ref, {4, 4, 64, 1}, Tier::kExact).mismatches, 1);
}

TEST(Compare, SpotPositionsCoverCornersAndTails) {
  const SpotSet s = spot_positions(100, 70, 2, 400, 1);
  bool last_row = false, last_col = false, corner = false;
  for (size_t i = 0; i < s.l.size(); ++i) {
    last_row |= s.m[i] == 99 && s.n[i] != 69;
    last_col |= s.n[i] == 69 && s.m[i] != 99;
    corner |= s.l[i] == 1 && s.m[i] == 99 && s.n[i] == 69;
    ASSERT_LT(s.m[i], 100);
    ASSERT_LT(s.n[i], 70);
  }
  EXPECT_TRUE(last_row && last_col && corner);
}

TEST(Cases, IncludeTailsPrimesAndBatches) {
  const auto fp32 = KindOf<Fp32GemmArgs>::get().cases({64, 64, 8});
  const auto nvfp4 = KindOf<Nvfp4GemmArgs>::get().cases({128, 128, 128});
  auto has = [](const auto& cases, auto pred) {
    for (const auto& c : cases)
      if (pred(c)) return true;
    return false;
  };
  EXPECT_TRUE(has(fp32, [](auto& c) { return c.shape.M == 1 && c.shape.N == 1 && c.shape.K == 1; }));
  EXPECT_TRUE(has(fp32, [](auto& c) { return c.shape.M == 65 && c.shape.N == 65 && c.shape.K == 9; }));  // one past the tile
  EXPECT_TRUE(has(fp32, [](auto& c) { return c.shape.L > 1; }));
  EXPECT_TRUE(has(nvfp4, [](auto& c) { return c.shape.M == 129 && c.shape.K % 32 == 0; }));
  EXPECT_TRUE(has(nvfp4, [](auto& c) { return c.shape.L > 1 && c.tier == Tier::kLayout; }));
  for (const auto& c : nvfp4) EXPECT_EQ(c.shape.K % 32, 0) << c.name;
  std::set<std::string> names;
  for (const auto& c : fp32) EXPECT_TRUE(names.insert(c.name).second) << "duplicate case " << c.name;
}

TEST(Seeds, DependOnTheNameAndTheEnvironment) {
  EXPECT_NE(seed_for("a"), seed_for("b"));
  const uint64_t before = seed_for("a");
  setenv("GEMM_TEST_SEED", "42", 1);
  EXPECT_NE(seed_for("a"), before);
  unsetenv("GEMM_TEST_SEED");
  EXPECT_EQ(seed_for("a"), before);
}

TEST(Problems, RealisticDataIsNeverAllZeroAndHasOutliers) {
  const HostFp32Problem p = make_fp32_problem(64, 64, 64, 1, Tier::kRealistic, 1);
  int zeros = 0, outliers = 0;
  for (float x : p.A) {
    zeros += x == 0.0f;
    outliers += std::fabs(x) > 8.0f;
  }
  EXPECT_LT(zeros, 10);
  EXPECT_GT(outliers, 0);
}

// validate()'s rule that C must not overlap an input, at the edges of the ranges. The pointers are
// placeholders (never dereferenced), so these run without a GPU.

// The message validate() throws, or "" when it accepts.
template <class Args>
std::string rejection(const Args& a) {
  try {
    validate(a);
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

template <class T>
T* at(uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

struct Input {
  const char* name;
  uintptr_t begin;
  int64_t bytes;
};

// For each input: C ending exactly where it begins, and C beginning exactly where it ends, are
// accepted; C one element further in at either end (the smallest overlap C's alignment allows) is
// rejected by the overlap rule, naming the input; C one byte into it at either end is rejected too
// (by C's alignment rule, which comes first: an aligned C cannot overlap an input by one byte).
template <class Args>
void expect_edges(const Args& good, const char* api, const std::vector<Input>& inputs) {
  using CPtr = decltype(Args::C);
  using CElem = std::remove_pointer_t<CPtr>;
  const int64_t e = sizeof(CElem);
  const int64_t c_bytes = e * good.M * good.N * good.L;
  ASSERT_EQ(rejection(good), "");
  for (const Input& in : inputs) {
    SCOPED_TRACE(std::string("C against ") + in.name);
    auto with_c_at = [&](uintptr_t c) {
      Args a = good;
      a.C = at<CElem>(c);
      return rejection(a);
    };
    const std::string overlap = std::string(api) + ": C must not overlap " + in.name + " (got C in [";
    EXPECT_EQ(with_c_at(in.begin - c_bytes), "") << "C ends where the input begins";
    EXPECT_EQ(with_c_at(in.begin + in.bytes), "") << "C begins where the input ends";
    EXPECT_EQ(with_c_at(in.begin - c_bytes + e).rfind(overlap, 0), 0u) << "C's last element on the input's first";
    EXPECT_EQ(with_c_at(in.begin + in.bytes - e).rfind(overlap, 0), 0u) << "C's first element on the input's last";
    EXPECT_EQ(with_c_at(in.begin - c_bytes + 1).rfind(std::string(api) + ": C ", 0), 0u) << "one byte, C's end";
    EXPECT_EQ(with_c_at(in.begin + in.bytes - 1).rfind(std::string(api) + ": C ", 0), 0u) << "one byte, C's start";
  }
}

TEST(ValidateOverlap, Fp32AcceptsAdjacentRangesAndRejectsAnyOverlapAtEitherEnd) {
  const Fp32GemmArgs good{64, 48, 32, 2, at<const float>(0x100000), at<const float>(0x200000), at<float>(0x300000)};
  expect_edges(good, "Fp32GemmArgs", {{"A", 0x100000, 4 * 64 * 32 * 2}, {"B", 0x200000, 4 * 48 * 32 * 2}});
}

TEST(ValidateOverlap, Nvfp4AcceptsAdjacentRangesAndRejectsAnyOverlapAtEitherEnd) {
  const Nvfp4GemmArgs good{64, 48, 64, 2, at<const uint8_t>(0x100000), at<const uint8_t>(0x200000),
                           at<const uint8_t>(0x300000), at<const uint8_t>(0x400000), 1.0f, at<__half>(0x500000)};
  expect_edges(good, "Nvfp4GemmArgs",
               {{"A", 0x100000, packed_bytes(64, 64, 2)},
                {"SFA", 0x200000, sf_bytes(64, 64, 2)},
                {"B", 0x300000, packed_bytes(48, 64, 2)},
                {"SFB", 0x400000, sf_bytes(48, 64, 2)}});
}

TEST(ValidateOverlap, MessageNamesTheInputAndBothRanges) {
  Nvfp4GemmArgs a{64, 64, 64, 1, at<const uint8_t>(0x10000), at<const uint8_t>(0x20000), at<const uint8_t>(0x30000),
                  at<const uint8_t>(0x40000), 1.0f, at<__half>(0x20100)};
  EXPECT_EQ(rejection(a), "Nvfp4GemmArgs: C must not overlap SFA (got C in [0x20100, 0x22100), SFA in [0x20000, 0x20200))");
  Fp32GemmArgs f{64, 64, 64, 1, at<const float>(0x10000), at<const float>(0x20000), at<float>(0x13ffc)};
  EXPECT_EQ(rejection(f), "Fp32GemmArgs: C must not overlap A (got C in [0x13ffc, 0x17ffc), A in [0x10000, 0x14000))");
}

TEST(ValidateOverlap, RangesRunningPastTheTopOfTheAddressSpaceDoNotWrap) {
  // C's range (and A's) runs past the top of the address space: a comparison of wrapped end
  // addresses would miss this overlap.
  const uintptr_t top = UINTPTR_MAX - 0xFFF;
  const Fp32GemmArgs f{64, 64, 64, 1, at<const float>(top + 0x800), at<const float>(0x1000), at<float>(top)};
  EXPECT_EQ(rejection(f).rfind("Fp32GemmArgs: C must not overlap A (got C in [", 0), 0u) << rejection(f);
  Fp32GemmArgs apart = f;
  apart.A = at<const float>(0x100000);
  EXPECT_EQ(rejection(apart), "");
}

}  // namespace
}  // namespace gemm
