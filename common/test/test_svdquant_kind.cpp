// The SVDQuant GEMM kind on the CPU: every argument rule with its message, and nothing written when
// one is broken; the case list; the 16-bit conversions; the FP64 reference against a straightforward
// formulation of its own; and the comparison, which must pass simulated FP32 kernels that follow the
// contract in any order and fail each deliberately wrong one (low-rank operands swapped, wcscale
// before the low-rank sum, no bias, a wrong rank stride, alpha on the low-rank term, no low-rank
// term, batch 0's operands for every batch, nunchaku's early roundings).
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/formats.h"
#include "common/harness/compare.h"
#include "common/harness/problems.h"
#include "common/kinds/svdquant_gemm.h"
#include "common/peers.h"
#include "common/reference.h"
#include "common/sf_layout.h"

namespace gemm {
namespace {

const Kind& kind() { return KindOf<SvdquantGemmArgs>::get(); }

std::string rejection(const SvdquantGemmArgs& a) {
  try {
    validate(a);
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

SvdquantGemmArgs placeholder() { return kind().placeholder_args().as<SvdquantGemmArgs>(); }

template <class T>
T* shifted(T* p, int bytes) {
  return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(p) + bytes);
}

// ---- validation ------------------------------------------------------------------------------------

struct Rule {
  const char* what;
  void (*mutate)(SvdquantGemmArgs&);
  const char* message;  // after "SvdquantGemmArgs: "
};

TEST(SvdquantValidate, EveryRuleNamesTheArgumentTheRuleAndTheValue) {
  EXPECT_EQ(rejection(placeholder()), "");
  const Rule rules[] = {
      {"M = 0", [](SvdquantGemmArgs& a) { a.M = 0; }, "M must be >= 1 (got 0)"},
      {"N = 0", [](SvdquantGemmArgs& a) { a.N = 0; }, "N must be >= 1 (got 0)"},
      {"K = 0", [](SvdquantGemmArgs& a) { a.K = 0; }, "K must be >= 1 (got 0)"},
      {"L = 0", [](SvdquantGemmArgs& a) { a.L = 0; }, "L must be in [1, 65535] (got 0)"},
      {"K = 48", [](SvdquantGemmArgs& a) { a.K = 48; }, "K must be a multiple of 32 (got 48)"},
      {"R = 0", [](SvdquantGemmArgs& a) { a.R = 0; }, "R must be a positive multiple of 16 (got 0)"},
      {"R = -16", [](SvdquantGemmArgs& a) { a.R = -16; }, "R must be a positive multiple of 16 (got -16)"},
      {"R = 8", [](SvdquantGemmArgs& a) { a.R = 8; }, "R must be a positive multiple of 16 (got 8)"},
      {"R = 40", [](SvdquantGemmArgs& a) { a.R = 40; }, "R must be a positive multiple of 16 (got 40)"},
      {"R = 1040", [](SvdquantGemmArgs& a) { a.R = 1040; }, "R must be at most 1024 (got 1040)"},
      {"M*R*L", [](SvdquantGemmArgs& a) { a.M = INT_MAX, a.L = 1024, a.N = 1, a.K = 32, a.R = 1024; },
       "M*R*L and N*R*L must each be below 2^46 (got a larger problem)"},
      {"A null", [](SvdquantGemmArgs& a) { a.A = nullptr; }, "A must not be null (got nullptr)"},
      {"SFA + 4", [](SvdquantGemmArgs& a) { a.SFA += 4; }, "SFA must be 16-byte aligned (got 4 bytes past alignment)"},
      {"B + 8", [](SvdquantGemmArgs& a) { a.B += 8; }, "B must be 16-byte aligned (got 8 bytes past alignment)"},
      {"SFB null", [](SvdquantGemmArgs& a) { a.SFB = nullptr; }, "SFB must not be null (got nullptr)"},
      {"lora_act null", [](SvdquantGemmArgs& a) { a.lora_act = nullptr; }, "lora_act must not be null (got nullptr)"},
      {"lora_act + 8 bytes", [](SvdquantGemmArgs& a) { a.lora_act += 4; },
       "lora_act must be 16-byte aligned (got 8 bytes past alignment)"},
      {"lora_up null", [](SvdquantGemmArgs& a) { a.lora_up = nullptr; }, "lora_up must not be null (got nullptr)"},
      {"lora_up + 2 bytes", [](SvdquantGemmArgs& a) { a.lora_up += 1; },
       "lora_up must be 16-byte aligned (got 2 bytes past alignment)"},
      {"wcscale null", [](SvdquantGemmArgs& a) { a.wcscale = nullptr; }, "wcscale must not be null (got nullptr)"},
      {"wcscale + 2 bytes", [](SvdquantGemmArgs& a) { a.wcscale = shifted(a.wcscale, 2); },
       "wcscale must be 4-byte aligned (got 2 bytes past alignment)"},
      {"bias null", [](SvdquantGemmArgs& a) { a.bias = nullptr; }, "bias must not be null (got nullptr)"},
      {"bias + 1 byte", [](SvdquantGemmArgs& a) { a.bias = shifted(a.bias, 1); },
       "bias must be 4-byte aligned (got 1 bytes past alignment)"},
      {"C null", [](SvdquantGemmArgs& a) { a.C = nullptr; }, "C must not be null (got nullptr)"},
      {"C + 1 byte", [](SvdquantGemmArgs& a) { a.C = shifted(a.C, 1); }, "C must be 2-byte aligned (got 1 bytes past alignment)"},
      {"alpha NaN", [](SvdquantGemmArgs& a) { a.alpha = NAN; }, "alpha must be finite (got nan)"},
      {"alpha Inf", [](SvdquantGemmArgs& a) { a.alpha = INFINITY; }, "alpha must be finite (got inf)"},
      {"lora_format", [](SvdquantGemmArgs& a) { a.lora_format = Format16(2); },
       "lora_format must be Format16::kFp16 or Format16::kBf16 (got 2)"},
      {"c_format", [](SvdquantGemmArgs& a) { a.c_format = Format16(-1); },
       "c_format must be Format16::kFp16 or Format16::kBf16 (got -1)"},
  };
  for (const Rule& r : rules) {
    SCOPED_TRACE(r.what);
    SvdquantGemmArgs a = placeholder();
    r.mutate(a);
    EXPECT_EQ(rejection(a), std::string("SvdquantGemmArgs: ") + r.message);
  }
  // Every multiple of 16 up to the largest rank is a rank; wcscale and bias need only 4 bytes.
  for (int R = 16; R <= kSvdquantMaxRank; R += 16) {
    SvdquantGemmArgs a = placeholder();
    a.R = R;
    EXPECT_EQ(rejection(a), "") << R;
  }
  SvdquantGemmArgs a = placeholder();
  a.wcscale += 1;
  a.bias += 3;
  EXPECT_EQ(rejection(a), "");
}

// C laid over each input in turn at addresses the test controls, so the message can name the input.
TEST(SvdquantValidate, COverlappingAnyInputIsRejectedNamingIt) {
  const SvdquantGemmArgs good = placeholder();
  struct Input {
    const char* name;
    const void* at;
  };
  const Input inputs[] = {{"A", good.A},           {"SFA", good.SFA},         {"B", good.B},
                          {"SFB", good.SFB},       {"lora_act", good.lora_act}, {"lora_up", good.lora_up},
                          {"wcscale", good.wcscale}, {"bias", good.bias}};
  for (const Input& in : inputs) {
    SCOPED_TRACE(in.name);
    SvdquantGemmArgs a = good;
    a.C = reinterpret_cast<uint16_t*>(reinterpret_cast<uintptr_t>(in.at) + 2);
    const std::string msg = rejection(a);
    EXPECT_EQ(msg.rfind(std::string("SvdquantGemmArgs: C must not overlap ") + in.name + " (got C in [", 0), 0u) << msg;
  }
  // Just past the last byte of wcscale (64 floats) is no overlap; one element earlier is.
  SvdquantGemmArgs a = good;
  a.C = reinterpret_cast<uint16_t*>(reinterpret_cast<uintptr_t>(good.wcscale) + 4 * 64);
  a.bias = reinterpret_cast<const float*>(0x200000);
  EXPECT_EQ(rejection(a), "");
  a.C -= 1;
  EXPECT_NE(rejection(a).find("C must not overlap wcscale"), std::string::npos);
}

// A CPU launcher: validates, then writes the reference's bits to C (host pointers).
void cpu_launch(const SvdquantGemmArgs& a) {
  validate(a);
  const svdquant::Reference r = svdquant::reference(a);
  std::memcpy(a.C, r.bits.data(), r.bits.size() * sizeof(uint16_t));
}

// Every bad argument the kind lists, applied to real host buffers: the launcher throws naming the
// argument (and the rule, where listed), and neither C nor any input changes.
TEST(SvdquantValidate, EveryBadArgumentThrowsAndNothingIsWritten) {
  const Shape s = svdquant_shape(64, 64, 64, 1, {32, Format16::kFp16, Format16::kBf16});
  svdquant::HostProblem p = svdquant::make_problem(s, Tier::kExact, 11);
  // C and every input inside one arena, so that the overlap mutations point at real memory.
  std::vector<uint8_t> arena(1 << 20, 0x5A);
  size_t used = 0;
  auto place = [&](const auto& v) {
    used = (used + 255) / 256 * 256;
    const size_t bytes = v.size() * sizeof(v[0]);
    std::memcpy(arena.data() + used, v.data(), bytes);
    void* at = arena.data() + used;
    used += bytes;
    return at;
  };
  SvdquantGemmArgs a = p.host_args();
  a.A = static_cast<const uint8_t*>(place(p.a));
  a.SFA = static_cast<const uint8_t*>(place(p.sfa));
  a.B = static_cast<const uint8_t*>(place(p.b));
  a.SFB = static_cast<const uint8_t*>(place(p.sfb));
  a.lora_act = static_cast<const uint16_t*>(place(p.lora_act));
  a.lora_up = static_cast<const uint16_t*>(place(p.lora_up));
  a.wcscale = static_cast<const float*>(place(p.wcscale));
  a.bias = static_cast<const float*>(place(p.bias));
  a.C = static_cast<uint16_t*>(place(std::vector<uint16_t>(64 * 64, 0xFFFF)));
  const std::vector<uint8_t> before = arena;
  // The launcher does write for valid arguments (so the checks below could see a write).
  {
    std::vector<uint8_t> scratch = arena;
    SvdquantGemmArgs good = a;
    good.C = reinterpret_cast<uint16_t*>(scratch.data() + (reinterpret_cast<uint8_t*>(a.C) - arena.data()));
    cpu_launch(good);
    EXPECT_NE(scratch, arena);
  }
  const auto bad = kind().bad_arguments();
  EXPECT_GT(bad.size(), 40u);
  for (const BadArgument& b : bad) {
    SCOPED_TRACE(b.argument + " " + b.rule);
    AnyArgs any(a);
    b.mutate(any);
    try {
      cpu_launch(any.as<SvdquantGemmArgs>());
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind("SvdquantGemmArgs: " + b.argument + " ", 0), 0u) << msg;
      EXPECT_NE(msg.find(b.rule), std::string::npos) << msg;
    }
    EXPECT_TRUE(arena == before) << "written";
  }
}

// ---- cases and shapes ------------------------------------------------------------------------------

TEST(SvdquantKind, CasesCoverRanksTailsBatchesFormatsAndTiers) {
  auto cases = kind().cases({128, 128, 256});
  cases.push_back(kind().element_aligned_c_case());
  std::set<std::string> names;
  std::set<int> ranks;
  std::set<std::pair<int, int>> formats;
  bool batched = false, exact = false, rank_tail = false, m1 = false, n1 = false, k_tail = false;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate";
    const SvdquantSize z = svdquant_size(c.shape);
    ranks.insert(z.R);
    formats.insert({int(z.c_format), int(z.lora_format)});
    rank_tail |= z.R % 32 != 0 && z.R > 16;
    batched |= c.shape.L > 1;
    exact |= is_exact(c.tier);
    m1 |= c.shape.M == 1;
    n1 |= c.shape.N == 1;
    k_tail |= c.shape.K % 256 != 0 && c.shape.K > 256;
    EXPECT_EQ(kind().size_rule('k', c.shape.K), "");
    EXPECT_GT(kind().min_bytes(c.shape), double(kind().output_bytes(c.shape)));
    EXPECT_GT(kind().flops(c.shape), 0);
  }
  for (int R : {16, 32, 64, 128, 256}) EXPECT_EQ(ranks.count(R), 1u) << R;
  EXPECT_EQ(formats.size(), 4u);
  EXPECT_TRUE(batched && exact && rank_tail && m1 && n1 && k_tail);
  EXPECT_STREQ(kind().name(), "svdquant_gemm");
}

TEST(SvdquantKind, ShapeCarriesRankAndFormats) {
  const Shape s = svdquant_shape(5, 6, 64, 2, {48, Format16::kBf16, Format16::kFp16});
  const SvdquantSize z = svdquant_size(s);
  EXPECT_EQ(z.R, 48);
  EXPECT_EQ(z.c_format, Format16::kBf16);
  EXPECT_EQ(z.lora_format, Format16::kFp16);
  EXPECT_EQ(svdquant_size(Shape{5, 6, 64, 1}).R, 32);  // a program's shape: the defaults
  EXPECT_THROW(svdquant_size(Shape{5, 6, 64, 1, {32}}), std::invalid_argument);
  EXPECT_EQ(shape_text(s), "5x6x64x2+48+1+0");
}

TEST(SvdquantKind, BytesAndFlopsCountEveryOperand) {
  const Shape s = svdquant_shape(100, 200, 64, 2, {32, Format16::kFp16, Format16::kBf16});
  const double nvfp4 = min_bytes(Nvfp4GemmArgs{100, 200, 64, 2});
  EXPECT_DOUBLE_EQ(kind().min_bytes(s), nvfp4 + 2.0 * 32 * (100 + 200) * 2 + 2 * 4.0 * 200 * 2);
  EXPECT_DOUBLE_EQ(kind().flops(s), 2.0 * 100 * 200 * (64 + 32) * 2);
  // Presented as the NVFP4 GEMM (the base stage's view): the same operands, no low-rank term.
  const std::vector<AnyArgs> as = kind().as_kind(kind().placeholder_args(), KindOf<Nvfp4GemmArgs>::get());
  ASSERT_EQ(as.size(), 1u);
  const Nvfp4GemmArgs& g = as[0].as<Nvfp4GemmArgs>();
  EXPECT_EQ(g.A, placeholder().A);
  EXPECT_EQ(static_cast<const void*>(g.C), static_cast<const void*>(placeholder().C));
  // Its peer: the unfused baseline, with a note that says no library computes the kind in one call.
  std::string note;
  const std::vector<Peer> peers = kind().peers(&note);
  ASSERT_EQ(peers.size(), 1u);
  EXPECT_EQ(peers[0].name, kSvdquantUnfusedName);
  EXPECT_TRUE(peers[0].launch.is(&svdquant_unfused));
  EXPECT_NE(note.find("baseline"), std::string::npos);
}

// ---- 16-bit conversions ----------------------------------------------------------------------------

// BF16 nearest-even by the usual bit manipulation of an FP32 (exact for values that are floats).
uint16_t bf16_by_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;
  return uint16_t((u + 0x7FFFu + ((u >> 16) & 1)) >> 16);
}

TEST(SvdquantFormats, Bf16RoundingMatchesTheBitTrickOnFloats) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = uint32_t(rng());
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isnan(f)) continue;
    ASSERT_EQ(svdquant::bf16_bits_from_double(f), bf16_by_bits(f)) << std::hexfloat << f;
  }
  EXPECT_EQ(svdquant::bf16_bits_from_double(1.0 + 0x1p-8), 0x3F80);                // tie to even, down
  EXPECT_EQ(svdquant::bf16_bits_from_double(1.0 + 3 * 0x1p-8), 0x3F82);            // tie to even, up
  EXPECT_EQ(svdquant::bf16_bits_from_double(1.0 + 0x1p-8 + 0x1p-40), 0x3F81);      // above the tie: a float can't say
  EXPECT_EQ(svdquant::bf16_bits_from_double(-0x1p200), 0xFF80);
  EXPECT_EQ(svdquant::bits_to_double(svdquant::bits_from_double(-2.75, Format16::kBf16), Format16::kBf16), -2.75);
  EXPECT_EQ(svdquant::bits_to_double(svdquant::bits_from_double(-2.75, Format16::kFp16), Format16::kFp16), -2.75);
}

// ---- the reference ---------------------------------------------------------------------------------

// y written out once more, from the formats' float decoders and the scale layout, in long double.
long double straightforward(const SvdquantGemmArgs& h, int l, int m, int n) {
  auto nvfp4 = [&](const uint8_t* data, const uint8_t* sf, int rows, int row, int k) {
    const uint8_t byte = data[(int64_t(l) * rows + row) * (h.K / 2) + k / 2];
    const uint8_t code = k % 2 == 0 ? byte & 0xF : byte >> 4;
    return (long double)e2m1_to_float(code) *
           ue4m3_to_float(sf[l * sf_batch_bytes(rows, h.K) + sf_offset(row, k / 16, h.K)]);
  };
  auto half = [&](uint16_t b) {
    return (long double)(h.lora_format == Format16::kBf16 ? bf16_bits_to_float(b) : fp16_bits_to_float(b));
  };
  long double acc = 0, low = 0;
  for (int k = 0; k < h.K; ++k) acc += nvfp4(h.A, h.SFA, h.M, m, k) * nvfp4(h.B, h.SFB, h.N, n, k);
  for (int r = 0; r < h.R; ++r)
    low += half(h.lora_act[(int64_t(l) * h.M + m) * h.R + r]) * half(h.lora_up[(int64_t(l) * h.N + n) * h.R + r]);
  const int64_t col = int64_t(l) * h.N + n;
  return (h.alpha * acc + low) * h.wcscale[col] + h.bias[col];
}

// The neighbours of a 16-bit value (same sign, one step in magnitude either way).
double neighbour(uint16_t bits, int step, Format16 f) { return svdquant::bits_to_double(uint16_t(bits + step), f); }

TEST(SvdquantReference, AgreesWithAStraightforwardFormulationAndRoundsOnce) {
  for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic, Tier::kScaleBit7}) {
    for (const Shape& s : {svdquant_shape(3, 5, 64, 2, {16, Format16::kFp16, Format16::kBf16}),
                           svdquant_shape(7, 2, 96, 1, {48, Format16::kBf16, Format16::kFp16}),
                           svdquant_shape(1, 9, 32, 3, {32, Format16::kBf16, Format16::kBf16})}) {
      SCOPED_TRACE(case_name(tier, s));
      const svdquant::HostProblem p = svdquant::make_problem(s, tier, seed_for(case_name(tier, s)));
      const SvdquantGemmArgs h = p.host_args();
      const svdquant::Reference ref = svdquant::reference(h);
      for (int l = 0; l < s.L; ++l)
        for (int m = 0; m < s.M; ++m)
          for (int n = 0; n < s.N; ++n) {
            const size_t i = size_t((int64_t(l) * s.M + m) * s.N + n);
            const long double want = straightforward(h, l, m, n);
            ASSERT_NEAR(ref.value[i], double(want), 1e-12 * ref.abs_sum[i] + 1e-300);
            double abs_sum = 0;
            EXPECT_EQ(svdquant::reference_at(h, l, m, n, &abs_sum), ref.value[i]);
            EXPECT_EQ(abs_sum, ref.abs_sum[i]);
            EXPECT_GE(ref.abs_sum[i], std::fabs(ref.value[i]));
            // Rounded once, to the nearest (neither neighbour is closer; a tie goes to the even one).
            const double got = svdquant::bits_to_double(ref.bits[i], h.c_format), v = ref.value[i];
            const double up = neighbour(ref.bits[i], 1, h.c_format), down = neighbour(ref.bits[i], -1, h.c_format);
            EXPECT_LE(std::fabs(got - v), std::fabs(up - v));
            if ((ref.bits[i] & 0x7FFF) != 0) {
              EXPECT_LE(std::fabs(got - v), std::fabs(down - v));
            }
            if (std::fabs(got - v) == std::fabs(up - v)) {
              EXPECT_EQ(ref.bits[i] & 1, 0);
            }
          }
    }
  }
}

// The exact tier's data: no sum of the NVFP4 part alone is zero everywhere, the low-rank values are
// the promised grid, wcscale has zeros and negatives, bias is never 0.
TEST(SvdquantReference, ExactTierDataIsWhatTheContractTestsNeed) {
  const svdquant::HostProblem p =
      svdquant::make_problem(svdquant_shape(40, 40, 160, 2, {32, Format16::kFp16, Format16::kBf16}), Tier::kExact, 5);
  EXPECT_EQ(p.alpha, 0.5f);
  int zeros = 0, negatives = 0;
  for (float w : p.wcscale) zeros += w == 0, negatives += w < 0;
  EXPECT_GT(zeros, 0);
  EXPECT_GT(negatives, 0);
  for (float b : p.bias) ASSERT_NE(b, 0.0f);
  for (uint16_t x : p.lora_act) {
    const double v = svdquant::bits_to_double(x, p.lora_format) * 4;
    ASSERT_EQ(v, std::round(v));
    ASSERT_LE(std::fabs(v), 8);
  }
  EXPECT_THROW(svdquant::make_problem(svdquant_shape(1, 1, 7008, 1, {16, Format16::kFp16, Format16::kFp16}),
                                      Tier::kExact, 1),
               std::logic_error);
}

// ---- simulated kernels against the comparison ------------------------------------------------------

// An FP32 kernel of the contract, or one with a deliberate error.
struct Kernel {
  const char* name;
  int order = 0;  // 0: alpha*acc + t, then *wcscale + bias; 1: reversed sums and fused multiply-adds;
                  // 2: one accumulator acc + lora_act*(lora_up/alpha), then *(alpha*wcscale) + bias
  bool swap = false, wcscale_first = false, no_bias = false, alpha_on_lora = false, no_lora = false;
  bool batch0 = false, nunchaku = false;
  int pitch_extra = 0;  // read the low-rank rows at a pitch of R + this
};

std::vector<uint16_t> run(const SvdquantGemmArgs& h, const Kernel& k) {
  const std::vector<float> a = dequantize_nvfp4(h.A, h.SFA, h.M, h.K, h.L);
  const std::vector<float> b = dequantize_nvfp4(h.B, h.SFB, h.N, h.K, h.L);
  const int64_t act_count = int64_t(h.M) * h.R * h.L, up_count = int64_t(h.N) * h.R * h.L;
  auto half = [&](const uint16_t* p, int64_t count, int64_t i) {
    return i < count ? float(svdquant::bits_to_double(p[i], h.lora_format)) : 0.0f;
  };
  const int pitch = h.R + k.pitch_extra;
  auto rnd = [&](double x) { return svdquant::bits_to_double(svdquant::bits_from_double(x, h.c_format), h.c_format); };
  std::vector<uint16_t> out(size_t(int64_t(h.M) * h.N * h.L));
  for (int l = 0; l < h.L; ++l)
    for (int m = 0; m < h.M; ++m)
      for (int n = 0; n < h.N; ++n) {
        const int lb = k.batch0 ? 0 : l;  // the batch of lora_up, wcscale and bias
        const float* ar = &a[size_t((int64_t(l) * h.M + m) * h.K)];
        const float* br = &b[size_t((int64_t(l) * h.N + n) * h.K)];
        int64_t act_row = (int64_t(l) * h.M + m) * pitch, up_row = (int64_t(lb) * h.N + n) * pitch;
        if (k.swap) act_row = (int64_t(l) * h.M + n) * pitch, up_row = (int64_t(lb) * h.N + m) * pitch;
        const float wc = h.wcscale[int64_t(lb) * h.N + n], bias = k.no_bias ? 0.0f : h.bias[int64_t(lb) * h.N + n];
        float acc = 0, t = 0, y;
        if (k.order == 1) {
          for (int i = h.K - 1; i >= 0; --i) acc = std::fmaf(ar[i], br[i], acc);
          for (int r = h.R - 1; r >= 0; --r)
            t = std::fmaf(half(h.lora_act, act_count, act_row + r), half(h.lora_up, up_count, up_row + r), t);
        } else {
          for (int i = 0; i < h.K; ++i) acc += ar[i] * br[i];
          for (int r = 0; r < h.R; ++r) {
            const float up = half(h.lora_up, up_count, up_row + r);
            t += half(h.lora_act, act_count, act_row + r) * (k.order == 2 ? up / h.alpha : up);
          }
        }
        if (k.no_lora) t = 0;
        const size_t i = size_t((int64_t(l) * h.M + m) * h.N + n);
        if (k.nunchaku) {
          // alpha * acc rounded to 16 bits, the affine in one 16-bit fused multiply-add, the low-rank
          // sum added in FP32 and rounded again.
          const double h1 = rnd(double(h.alpha * acc));
          const double h2 = rnd(h1 * wc + bias);
          out[i] = svdquant::bits_from_double(float(float(h2) + t), h.c_format);
          continue;
        }
        if (k.order == 2) {
          y = (acc + t) * (h.alpha * wc) + bias;
        } else if (k.wcscale_first) {
          y = h.alpha * acc * wc + t + bias;
        } else if (k.alpha_on_lora) {
          y = h.alpha * (acc + t) * wc + bias;
        } else if (k.order == 1) {
          y = std::fmaf(std::fmaf(h.alpha, acc, t), wc, bias);
        } else {
          y = (h.alpha * acc + t) * wc + bias;
        }
        out[i] = svdquant::bits_from_double(y, h.c_format);
      }
  return out;
}

const Kernel kCorrect[] = {{"in order", 0}, {"reversed, fused", 1}, {"one accumulator, lora_up / alpha", 2}};
const Kernel kWrong[] = {
    {"lora_act and lora_up swapped", 0, true},
    {"wcscale before the low-rank sum", 0, false, true},
    {"no bias", 0, false, false, true},
    {"alpha on the low-rank term too", 0, false, false, false, true},
    {"no low-rank term", 0, false, false, false, false, true},
    {"batch 0's lora_up, wcscale and bias for every batch", 0, false, false, false, false, false, true},
    {"low-rank rows read at a pitch of R + 16", 0, false, false, false, false, false, false, false, 16},
};
const Kernel kNunchaku{"nunchaku's rounding order", 0, false, false, false, false, false, false, true};

// Square, batched, a rank that is not a multiple of 32, every pairing of formats.
std::vector<Shape> control_shapes() {
  return {svdquant_shape(40, 40, 160, 2, {48, Format16::kFp16, Format16::kBf16}),
          svdquant_shape(33, 33, 256, 2, {16, Format16::kBf16, Format16::kFp16}),
          svdquant_shape(24, 24, 96, 3, {128, Format16::kFp16, Format16::kFp16}),
          svdquant_shape(20, 20, 544, 2, {256, Format16::kBf16, Format16::kBf16})};
}

TEST(SvdquantCompare, KernelsOfTheContractPassInAnyOrder) {
  for (Tier tier : {Tier::kExact, Tier::kScaleBit7, Tier::kLayout, Tier::kRealistic}) {
    for (const Shape& s : control_shapes()) {
      const std::string name = case_name(tier, s);
      const svdquant::HostProblem p = svdquant::make_problem(s, tier, seed_for(name));
      const SvdquantGemmArgs h = p.host_args();
      const svdquant::Reference ref = svdquant::reference(h);
      for (const Kernel& k : kCorrect) {
        SCOPED_TRACE(name + ", " + k.name);
        const CompareResult r = svdquant::compare(run(h, k), ref, h, tier, {16, 16, 64});
        EXPECT_TRUE(r.ok()) << r.describe();
        // In the exact tiers every order gives the same bits as the reference.
        if (is_exact(tier)) {
          EXPECT_EQ(run(h, k), ref.bits);
        }
      }
    }
  }
}

TEST(SvdquantCompare, EveryWrongKernelFailsInEveryTier) {
  for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic}) {
    for (const Shape& s : control_shapes()) {
      const std::string name = case_name(tier, s);
      const svdquant::HostProblem p = svdquant::make_problem(s, tier, seed_for(name));
      const SvdquantGemmArgs h = p.host_args();
      const svdquant::Reference ref = svdquant::reference(h);
      for (const Kernel& k : kWrong) {
        SCOPED_TRACE(name + ", " + k.name);
        const CompareResult r = svdquant::compare(run(h, k), ref, h, tier, {16, 16, 64});
        EXPECT_FALSE(r.ok());
        // Not a few unlucky outputs: a large share of them (the pitch error spares only row 0 of
        // batch 0's lora_act and the first row of lora_up).
        EXPECT_GT(r.mismatches, r.checked / 4) << r.describe();
      }
    }
  }
}

// nunchaku rounds alpha * acc and the affine to 16 bits before the low-rank sum: the exact tier
// rejects it (its sums have more bits than FP16 or BF16 hold); in the realistic tier its outputs stay
// within a few ulps of the contract's where nothing cancels (docs/svdquant.md).
TEST(SvdquantCompare, NunchakusRoundingOrderIsNotTheContracts) {
  for (const Shape& s : control_shapes()) {
    const std::string name = case_name(Tier::kExact, s);
    const svdquant::HostProblem p = svdquant::make_problem(s, Tier::kExact, seed_for(name));
    const SvdquantGemmArgs h = p.host_args();
    const CompareResult r = svdquant::compare(run(h, kNunchaku), svdquant::reference(h), h, Tier::kExact, {16, 16, 64});
    SCOPED_TRACE(name);
    EXPECT_FALSE(r.ok());
  }
}

TEST(SvdquantCompare, SpotChecksCatchATailError) {
  const Shape s = svdquant_shape(37, 29, 96, 2, {32, Format16::kBf16, Format16::kBf16});
  const svdquant::HostProblem p = svdquant::make_problem(s, Tier::kRealistic, 3);
  const SvdquantGemmArgs h = p.host_args();
  std::vector<uint16_t> got = run(h, kCorrect[0]);
  EXPECT_TRUE(svdquant::compare_spots(got, h, 64, 9).ok());
  for (int m = 0; m < s.M; ++m) got[size_t((int64_t(1) * s.M + m) * s.N + s.N - 1)] ^= 0x4000;  // last column, batch 1
  const CompareResult r = svdquant::compare_spots(got, h, 64, 9);
  EXPECT_FALSE(r.ok());
}

// The kind's own Problem (what the GPU tests use) compares through the same reference.
TEST(SvdquantCompare, TheKindsProblemComparesTheSameWay) {
  const Shape s = svdquant_shape(17, 13, 160, 1, {48, Format16::kFp16, Format16::kFp16});
  const std::unique_ptr<Problem> problem = kind().make_problem(s, Tier::kExact, seed_for("kind_problem"));
  const svdquant::HostProblem p = svdquant::make_problem(s, Tier::kExact, seed_for("kind_problem"));
  const svdquant::Reference ref = svdquant::reference(p.host_args());
  EXPECT_TRUE(problem->compare(ref.bits.data(), {128, 128, 256}).ok());
  std::vector<uint16_t> wrong = run(p.host_args(), kWrong[1]);
  EXPECT_FALSE(problem->compare(wrong.data(), {128, 128, 256}).ok());
}

}  // namespace
}  // namespace gemm
