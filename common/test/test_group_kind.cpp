// The NVFP4 group GEMM kind on the CPU: every argument rule with its message (the group named), the
// overlap sweep across groups, groups without rows, the MoE table, the Shape encoding, the view as
// NVFP4 GEMMs, the case list, and problems whose scale padding and comparison can catch what they
// exist for.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/formats.h"
#include "common/gemm_api.h"
#include "common/harness/compare.h"
#include "common/harness/gemm_tests.h"
#include "common/harness/problems.h"
#include "common/kinds/nvfp4_group_gemm.h"
#include "common/reference.h"
#include "common/sf_layout.h"

namespace gemm {
namespace {

const Kind& group_kind() { return KindOf<Nvfp4GroupGemmArgs>::get(); }

template <class T>
T* at(uintptr_t address) {
  return reinterpret_cast<T*>(address);
}
uintptr_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

std::string hex(uintptr_t begin, int64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "[%#" PRIxPTR ", %#" PRIxPTR ")", begin, begin + uintptr_t(bytes));
  return buf;
}

std::string rejection(const Nvfp4GroupGemmArgs& a) {
  try {
    validate(a);
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

// G valid groups 1 MiB apart from 16 MiB on, each operand 64 KiB into its group's MiB.
constexpr uintptr_t kBase = 0x1000000, kGroupStride = 0x100000;
Nvfp4GroupGemmArgs table(int G, int M = 64, int N = 48, int K = 64) {
  Nvfp4GroupGemmArgs a;
  for (int g = 0; g < G; ++g) {
    const uintptr_t base = kBase + uintptr_t(g) * kGroupStride;
    a.groups.push_back({M, N, K, at<const uint8_t>(base), at<const uint8_t>(base + 0x10000),
                        at<const uint8_t>(base + 0x20000), at<const uint8_t>(base + 0x30000), 1.0f,
                        at<__half>(base + 0x40000)});
  }
  return a;
}

constexpr const char* kApi = "Nvfp4GroupGemmArgs: ";

// ---- validation ----------------------------------------------------------------------------------

TEST(GroupValidate, GroupCountMustBeFrom1To4096) {
  EXPECT_EQ(rejection(table(1)), "");
  EXPECT_EQ(rejection(Nvfp4GroupGemmArgs{}), std::string(kApi) + "G must be in [1, 4096] (got 0)");
  Nvfp4GroupGemmArgs most = table(kMaxGroups);
  EXPECT_EQ(rejection(most), "");
  most.groups.push_back(most.groups.back());
  EXPECT_EQ(rejection(most), std::string(kApi) + "G must be in [1, 4096] (got 4097)");
}

struct Rule {
  const char* what;
  void (*mutate)(Nvfp4Group&);
  const char* message;  // after "Nvfp4GroupGemmArgs: groups[3]."
};

TEST(GroupValidate, EveryRuleOfAGroupNamesTheGroupTheFieldAndTheValue) {
  const Rule rules[] = {
      {"M < 0", [](Nvfp4Group& g) { g.M = -1; }, "M must be >= 0 (got -1)"},
      {"N = 0", [](Nvfp4Group& g) { g.N = 0; }, "N must be >= 1 (got 0)"},
      {"K = 0", [](Nvfp4Group& g) { g.K = 0; }, "K must be >= 1 (got 0)"},
      {"K = 48", [](Nvfp4Group& g) { g.K = 48; }, "K must be a multiple of 32 (got 48)"},
      {"K = 31", [](Nvfp4Group& g) { g.K = 31; }, "K must be a multiple of 32 (got 31)"},
      {"M*K", [](Nvfp4Group& g) { g.M = 1 << 27, g.K = 1 << 20; },
       "M*K, N*K and M*N must each be below 2^46 (got a larger problem)"},
      {"N*K", [](Nvfp4Group& g) { g.N = 1 << 27, g.K = 1 << 20; },
       "M*K, N*K and M*N must each be below 2^46 (got a larger problem)"},
      {"M*N", [](Nvfp4Group& g) { g.M = 1 << 24, g.N = 1 << 23; },
       "M*K, N*K and M*N must each be below 2^46 (got a larger problem)"},
      {"A null", [](Nvfp4Group& g) { g.A = nullptr; }, "A must not be null (got nullptr)"},
      {"A + 8", [](Nvfp4Group& g) { g.A += 8; }, "A must be 16-byte aligned (got 8 bytes past alignment)"},
      {"SFA null", [](Nvfp4Group& g) { g.SFA = nullptr; }, "SFA must not be null (got nullptr)"},
      {"SFA + 1", [](Nvfp4Group& g) { g.SFA += 1; }, "SFA must be 16-byte aligned (got 1 bytes past alignment)"},
      {"B null", [](Nvfp4Group& g) { g.B = nullptr; }, "B must not be null (got nullptr)"},
      {"B + 8", [](Nvfp4Group& g) { g.B += 8; }, "B must be 16-byte aligned (got 8 bytes past alignment)"},
      {"SFB null", [](Nvfp4Group& g) { g.SFB = nullptr; }, "SFB must not be null (got nullptr)"},
      {"SFB + 4", [](Nvfp4Group& g) { g.SFB += 4; }, "SFB must be 16-byte aligned (got 4 bytes past alignment)"},
      {"C null", [](Nvfp4Group& g) { g.C = nullptr; }, "C must not be null (got nullptr)"},
      {"C + 1 byte", [](Nvfp4Group& g) { g.C = at<__half>(addr(g.C) + 1); },
       "C must be 2-byte aligned (got 1 bytes past alignment)"},
      {"alpha NaN", [](Nvfp4Group& g) { g.alpha = NAN; }, "alpha must be finite (got nan)"},
      {"alpha Inf", [](Nvfp4Group& g) { g.alpha = -INFINITY; }, "alpha must be finite (got -inf)"},
  };
  for (const Rule& r : rules) {
    SCOPED_TRACE(r.what);
    Nvfp4GroupGemmArgs a = table(5);
    r.mutate(a.groups[3]);
    EXPECT_EQ(rejection(a), std::string(kApi) + "groups[3]." + r.message);
    // The first group that breaks a rule is the one named.
    r.mutate(a.groups[4]);
    EXPECT_EQ(rejection(a), std::string(kApi) + "groups[3]." + r.message);
  }
}

TEST(GroupValidate, TheHeadersExampleMessage) {
  Nvfp4GroupGemmArgs a = table(4);
  a.groups[3].K = 48;
  EXPECT_EQ(rejection(a), "Nvfp4GroupGemmArgs: groups[3].K must be a multiple of 32 (got 48)");
}

TEST(GroupValidate, AGroupWithoutRowsNeedsNoAOrCButValidSizesAndWeights) {
  Nvfp4GroupGemmArgs a = table(3);
  for (Nvfp4Group* g : {&a.groups[0], &a.groups[2]}) {
    g->M = 0;
    g->A = nullptr;
    g->SFA = nullptr;
    g->C = nullptr;
  }
  EXPECT_EQ(rejection(a), "");
  a.groups[0].A = at<const uint8_t>(0x3);  // nothing is read: neither its alignment nor its range matters
  a.groups[0].C = at<__half>(addr(a.groups[1].B) + 1);
  EXPECT_EQ(rejection(a), "");
  Nvfp4GroupGemmArgs b = a;
  b.groups[2].B = nullptr;
  EXPECT_EQ(rejection(b), std::string(kApi) + "groups[2].B must not be null (got nullptr)");
  b = a;
  b.groups[2].SFB += 4;
  EXPECT_EQ(rejection(b), std::string(kApi) + "groups[2].SFB must be 16-byte aligned (got 4 bytes past alignment)");
  b = a;
  b.groups[2].K = 48;
  EXPECT_EQ(rejection(b), std::string(kApi) + "groups[2].K must be a multiple of 32 (got 48)");
  b = a;
  b.groups[2].N = 0;
  EXPECT_EQ(rejection(b), std::string(kApi) + "groups[2].N must be >= 1 (got 0)");
  // An empty group's weights still must not lie under another group's C.
  b = a;
  b.groups[1].C = at<__half>(addr(b.groups[2].B));
  EXPECT_EQ(rejection(b).rfind(std::string(kApi) + "groups[1].C must not overlap groups[2].B (got ", 0), 0u)
      << rejection(b);
}

TEST(GroupValidate, InputsMayBeSharedBetweenGroups) {
  Nvfp4GroupGemmArgs a = table(4);
  for (Nvfp4Group& g : a.groups) {  // every group reads the same A and B
    g.A = a.groups[0].A;
    g.SFA = a.groups[0].SFA;
    g.B = a.groups[0].B;
    g.SFB = a.groups[0].SFB;
  }
  EXPECT_EQ(rejection(a), "");
  a.groups[2].A = a.groups[0].A + 64;  // and partly overlapping inputs
  a.groups[3].B = a.groups[0].A + 16;
  EXPECT_EQ(rejection(a), "");
}

TEST(GroupValidate, CMustNotOverlapAnyInputOfAnyGroupNamingBothGroups) {
  const Nvfp4GroupGemmArgs good = table(3);
  const int64_t a_bytes = packed_bytes(64, 64, 1), c_bytes = 2 * 64 * 48;
  Nvfp4GroupGemmArgs a = good;
  a.groups[1].C = at<__half>(addr(good.groups[0].A) + 32);
  EXPECT_EQ(rejection(a), std::string(kApi) + "groups[1].C must not overlap groups[0].A (got groups[1].C in " +
                              hex(addr(a.groups[1].C), c_bytes) + ", groups[0].A in " +
                              hex(addr(good.groups[0].A), a_bytes) + ")");
  // C beginning where an input ends, or ending where it begins, is fine; one element in is not.
  for (const char* which : {"A", "SFA", "B", "SFB"}) {
    SCOPED_TRACE(which);
    const std::string w = which;
    const Nvfp4Group& g0 = good.groups[0];
    const uintptr_t begin = addr(w == "A" ? (const void*)g0.A : w == "SFA" ? g0.SFA : w == "B" ? g0.B : g0.SFB);
    const int64_t bytes = w == "A" || w == "B" ? packed_bytes(w == "A" ? 64 : 48, 64, 1) : sf_bytes(64, 64, 1);
    auto with_c2_at = [&](uintptr_t c) {
      Nvfp4GroupGemmArgs x = good;
      x.groups[2].C = at<__half>(c);
      return rejection(x);
    };
    const std::string overlap = std::string(kApi) + "groups[2].C must not overlap groups[0]." + w + " (got ";
    EXPECT_EQ(with_c2_at(begin - c_bytes), "");
    EXPECT_EQ(with_c2_at(begin + bytes), "");
    EXPECT_EQ(with_c2_at(begin - c_bytes + 2).rfind(overlap, 0), 0u) << with_c2_at(begin - c_bytes + 2);
    EXPECT_EQ(with_c2_at(begin + bytes - 2).rfind(overlap, 0), 0u) << with_c2_at(begin + bytes - 2);
  }
  // An input that begins inside an earlier C.
  a = good;
  a.groups[1].B = at<const uint8_t>(addr(good.groups[0].C) + 0x100);
  EXPECT_EQ(rejection(a).rfind(std::string(kApi) + "groups[0].C must not overlap groups[1].B (got groups[0].C in ", 0), 0u)
      << rejection(a);
  // A C over its own group's input.
  a = good;
  a.groups[0].C = at<__half>(addr(good.groups[0].SFB) + 16);
  EXPECT_EQ(rejection(a).rfind(std::string(kApi) + "groups[0].C must not overlap groups[0].SFB (got ", 0), 0u)
      << rejection(a);
}

TEST(GroupValidate, TwoGroupsCMustNotOverlapTheLaterGroupNamedFirst) {
  const Nvfp4GroupGemmArgs good = table(3);
  const int64_t c_bytes = 2 * 64 * 48;
  Nvfp4GroupGemmArgs a = good;
  a.groups[2].C = at<__half>(addr(good.groups[1].C) + 0x100);  // above group 1's C
  EXPECT_EQ(rejection(a), std::string(kApi) + "groups[2].C must not overlap groups[1].C (got groups[2].C in " +
                              hex(addr(a.groups[2].C), c_bytes) + ", groups[1].C in " +
                              hex(addr(good.groups[1].C), c_bytes) + ")");
  a = good;
  a.groups[0].C = at<__half>(addr(good.groups[2].C) + 0x100);  // group 0's C above group 2's
  EXPECT_EQ(rejection(a).rfind(std::string(kApi) + "groups[2].C must not overlap groups[0].C (got ", 0), 0u)
      << rejection(a);
  a = good;
  a.groups[1].C = good.groups[0].C;  // the same C
  EXPECT_EQ(rejection(a).rfind(std::string(kApi) + "groups[1].C must not overlap groups[0].C (got ", 0), 0u)
      << rejection(a);
  a = good;
  a.groups[1].C = at<__half>(addr(good.groups[0].C) + c_bytes);  // back to back: fine
  EXPECT_EQ(rejection(a), "");
}

// An input that spans the groups after it (legal) hides the C of a later group from a check that
// looks only at the range just before each one: the sweep keeps the range that reaches furthest.
TEST(GroupValidate, AnOverlapFarApartInAddressOrderIsFound) {
  Nvfp4GroupGemmArgs a = table(3);
  a.groups[0].M = 4096;
  a.groups[0].K = 1024;  // A_0: 2 MiB, over every input and the C of group 1
  a.groups[0].C = at<__half>(0x9000000);
  EXPECT_EQ(rejection(a).rfind(std::string(kApi) + "groups[1].C must not overlap groups[0].A (got ", 0), 0u)
      << rejection(a);
  a.groups[1].C = at<__half>(0xA000000);
  a.groups[2].C = at<__half>(0xB000000);
  EXPECT_EQ(rejection(a), "");
  // The first and the last of 4096 groups.
  Nvfp4GroupGemmArgs many = table(kMaxGroups);
  many.groups[kMaxGroups - 1].B = at<const uint8_t>(addr(many.groups[0].C) + 0x10);
  EXPECT_EQ(rejection(many).rfind(std::string(kApi) + "groups[0].C must not overlap groups[4095].B (got ", 0), 0u)
      << rejection(many);
}

TEST(GroupValidate, RangesRunningPastTheTopOfTheAddressSpaceDoNotWrap) {
  Nvfp4GroupGemmArgs a = table(2);
  a.groups[1].C = at<__half>(UINTPTR_MAX - 0xFFF);      // 6144 bytes: past the top
  a.groups[1].A = at<const uint8_t>(UINTPTR_MAX - 0x7FF);  // inside C's true range
  EXPECT_EQ(rejection(a).rfind(std::string(kApi) + "groups[1].C must not overlap groups[1].A (got ", 0), 0u)
      << rejection(a);
  a.groups[1].A = at<const uint8_t>(0x100);
  EXPECT_EQ(rejection(a), "");
}

TEST(GroupValidate, MinBytesCountsSharedInputsOnceAndSkipsEmptyGroups) {
  Nvfp4GroupGemmArgs a = table(3);
  const double one = double(packed_bytes(64, 64, 1) + sf_bytes(64, 64, 1) + packed_bytes(48, 64, 1) +
                            sf_bytes(48, 64, 1)) + 2.0 * 64 * 48;
  EXPECT_EQ(min_bytes(a), 3 * one);
  a.groups[1].B = a.groups[0].B;  // shared weights: read once
  a.groups[1].SFB = a.groups[0].SFB;
  EXPECT_EQ(min_bytes(a), 3 * one - double(packed_bytes(48, 64, 1) + sf_bytes(48, 64, 1)));
  a.groups[2].M = 0;
  EXPECT_EQ(min_bytes(a), 2 * one - double(packed_bytes(48, 64, 1) + sf_bytes(48, 64, 1)));
  EXPECT_EQ(flops(a), 2.0 * 2 * 64 * 48 * 64);
}

// ---- the MoE layout --------------------------------------------------------------------------------

TEST(GroupMoe, TheHeadersExample) {
  const int off[] = {0, 200, 200, 270};
  const float alpha[] = {0.5f, 2.0f, 3.0f};
  MoeLayout moe;
  moe.experts = 3;
  moe.N = 256;
  moe.K = 512;
  moe.row_offsets = off;
  moe.A = at<const uint8_t>(0x1000000);
  moe.SFA = at<const uint8_t>(0x2000000);
  moe.B = at<const uint8_t>(0x3000000);
  moe.SFB = at<const uint8_t>(0x4000000);
  moe.alpha = alpha;
  moe.C = at<__half>(0x5000000);
  EXPECT_EQ(moe_sfa_offset(off, 0, 512), 0);
  EXPECT_EQ(moe_sfa_offset(off, 1, 512), 256 * 32);
  EXPECT_EQ(moe_sfa_offset(off, 2, 512), 8192);
  EXPECT_EQ(moe_sfa_offset(off, 3, 512), 8192 + 128 * 32);
  const Nvfp4GroupGemmArgs a = moe_groups(moe);
  ASSERT_EQ(a.groups.size(), 3u);
  const int64_t sfb = sf_batch_bytes(256, 512);
  EXPECT_EQ(sfb, 256 * 32);
  struct Want {
    int M;
    uintptr_t A, SFA, B, SFB, C;
    float alpha;
  };
  const Want want[] = {
      {200, 0x1000000, 0x2000000, 0x3000000, 0x4000000, 0x5000000, 0.5f},
      {0, 0x1000000 + 200 * 256, 0x2000000 + 8192, 0x3000000 + 256 * 256, 0x4000000 + uintptr_t(sfb),
       0x5000000 + 2 * 200 * 256, 2.0f},
      {70, 0x1000000 + 200 * 256, 0x2000000 + 8192, 0x3000000 + 2 * 256 * 256, 0x4000000 + 2 * uintptr_t(sfb),
       0x5000000 + 2 * 200 * 256, 3.0f},
  };
  for (int e = 0; e < 3; ++e) {
    SCOPED_TRACE("expert " + std::to_string(e));
    const Nvfp4Group& g = a.groups[size_t(e)];
    EXPECT_EQ(g.M, want[e].M);
    EXPECT_EQ(g.N, 256);
    EXPECT_EQ(g.K, 512);
    EXPECT_EQ(addr(g.A), want[e].A);
    EXPECT_EQ(addr(g.SFA), want[e].SFA);
    EXPECT_EQ(addr(g.B), want[e].B);
    EXPECT_EQ(addr(g.SFB), want[e].SFB);
    EXPECT_EQ(addr(g.C), want[e].C);
    EXPECT_EQ(g.alpha, want[e].alpha);
  }
  EXPECT_EQ(rejection(a), "");
  moe.alpha = nullptr;
  for (const Nvfp4Group& g : moe_groups(moe).groups) EXPECT_EQ(g.alpha, 1.0f);
}

TEST(GroupMoe, BadOffsetsAreRejected) {
  auto why = [](int experts, const int* off) {
    MoeLayout moe;
    moe.experts = experts;
    moe.N = 64;
    moe.K = 64;
    moe.row_offsets = off;
    try {
      moe_groups(moe);
      return std::string();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
  };
  const int good[] = {0, 3, 7, 9};
  EXPECT_EQ(why(3, good), "");
  EXPECT_EQ(why(0, good), "MoeLayout: experts must be >= 1 (got 0)");
  EXPECT_EQ(why(2, nullptr), "MoeLayout: row_offsets must not be null (got nullptr)");
  const int decreasing[] = {0, 3, 7, 5};
  EXPECT_EQ(why(3, decreasing), "MoeLayout: row_offsets must start at 0 and never decrease (row_offsets[3] = 5 after 7)");
  EXPECT_EQ(why(2, decreasing), "");  // only E + 1 entries are read
  const int late_start[] = {1, 3};
  EXPECT_EQ(why(1, late_start), "MoeLayout: row_offsets must start at 0 and never decrease (row_offsets[0] = 1)");
}

// ---- shapes, the view as GEMMs, the case list --------------------------------------------------------

TEST(GroupShape, EncodingRoundTrip) {
  const std::vector<GroupSize> groups = {{5, 64, 128}, {0, 200, 32}, {130, 8, 1024}};
  const Shape s = group_shape("mixed", groups);
  EXPECT_EQ(s.M, 135);
  EXPECT_EQ(s.N, 200);
  EXPECT_EQ(s.K, 1024);
  EXPECT_EQ(s.L, 1);
  EXPECT_EQ(s.extra, (std::vector<int>{5, 64, 128, 0, 200, 32, 130, 8, 1024}));
  EXPECT_EQ(shape_text(s), "mixed");
  const std::vector<GroupSize> back = group_sizes(s);
  ASSERT_EQ(back.size(), groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    EXPECT_EQ(back[g].M, groups[g].M);
    EXPECT_EQ(back[g].N, groups[g].N);
    EXPECT_EQ(back[g].K, groups[g].K);
  }
  Shape bad = s;
  bad.extra.pop_back();
  EXPECT_THROW(group_sizes(bad), std::invalid_argument);
  const Kind& k = group_kind();
  EXPECT_EQ(k.flops(s), 2.0 * (5 * 64 * 128 + 130 * 8 * 1024));
  // C: group 0 at 0 (320 elements), group 2 at 320 (no gap: 320 is a multiple of 8).
  EXPECT_EQ(k.output_bytes(s), 2 * (320 + 130 * 8));
  EXPECT_EQ(k.output_bytes(group_shape("gap", {{3, 3, 32}, {2, 5, 32}})), 2 * (16 + 10));
  EXPECT_GT(k.min_bytes(s), double(k.output_bytes(s)));
}

TEST(GroupShape, ProgramOptionsSpreadTheRowsUnevenlyOverLGroups) {
  const Kind& k = group_kind();
  const Shape s = k.program_shape(Shape{1024, 4096, 7168, 8});
  EXPECT_EQ(s.name, "G8_M1024_N4096_K7168");
  EXPECT_EQ(s.L, 1);
  EXPECT_EQ(s.M, 1024);
  const std::vector<GroupSize> g = group_sizes(s);
  ASSERT_EQ(g.size(), 8u);
  std::set<int> distinct;
  int total = 0;
  for (const GroupSize& x : g) {
    EXPECT_GE(x.M, 0);
    EXPECT_EQ(x.N, 4096);
    EXPECT_EQ(x.K, 7168);
    total += x.M;
    distinct.insert(x.M);
  }
  EXPECT_EQ(total, 1024);
  EXPECT_GT(distinct.size(), 4u) << "the rows should be spread unevenly";
  EXPECT_EQ(group_sizes(k.program_shape(Shape{1024, 4096, 7168, 8})).front().M, g.front().M) << "a fixed seed";
  // Fewer rows than groups: some groups get none, the total stays.
  const std::vector<GroupSize> few = group_sizes(k.program_shape(Shape{3, 64, 64, 16}));
  int rows = 0, empty = 0;
  for (const GroupSize& x : few) rows += x.M, empty += x.M == 0;
  EXPECT_EQ(rows, 3);
  EXPECT_GE(empty, 13);
  // A shape with its groups is left alone; the GEMM kinds keep theirs.
  const Shape named = group_shape("x", {{1, 2, 32}});
  EXPECT_EQ(k.program_shape(named).extra, named.extra);
  EXPECT_EQ(KindOf<Nvfp4GemmArgs>::get().program_shape(Shape{1, 2, 32, 3}).L, 3);
  // The size rules: K a multiple of 32, L the number of groups.
  EXPECT_NE(k.size_rule('k', 48).find("multiple of 32"), std::string::npos);
  EXPECT_EQ(k.size_rule('k', 64), "");
  EXPECT_EQ(k.size_rule('l', kMaxGroups), "");
  EXPECT_NE(k.size_rule('l', kMaxGroups + 1).find("must be in [1, 4096]"), std::string::npos);
  EXPECT_EQ(k.size_rule('m', 1), "");
}

TEST(GroupKind, AsTheNvfp4GemmOneCallPerGroupWithRows) {
  Nvfp4GroupGemmArgs a = table(3);
  a.groups[1].M = 0;
  a.groups[1].A = nullptr;
  a.groups[1].C = nullptr;
  a.groups[2].alpha = 0.25f;
  const Kind& gemm = KindOf<Nvfp4GemmArgs>::get();
  const std::vector<AnyArgs> calls = group_kind().as_kind(AnyArgs(a), gemm);
  ASSERT_EQ(calls.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const Nvfp4Group& g = a.groups[i == 0 ? 0 : 2];
    EXPECT_EQ(&calls[i].kind(), &gemm);
    const Nvfp4GemmArgs& c = calls[i].as<Nvfp4GemmArgs>();
    EXPECT_EQ(c.M, g.M);
    EXPECT_EQ(c.N, g.N);
    EXPECT_EQ(c.K, g.K);
    EXPECT_EQ(c.L, 1);
    EXPECT_EQ(c.A, g.A);
    EXPECT_EQ(c.SFA, g.SFA);
    EXPECT_EQ(c.B, g.B);
    EXPECT_EQ(c.SFB, g.SFB);
    EXPECT_EQ(c.alpha, g.alpha);
    EXPECT_EQ(c.C, g.C);
    EXPECT_NO_THROW(validate(c));
  }
  EXPECT_THROW(group_kind().as_kind(AnyArgs(a), KindOf<Nvfp4GemvArgs>::get()), std::invalid_argument);
  EXPECT_THROW(gemm.as_kind(gemm.placeholder_args(), group_kind()), std::invalid_argument);
  EXPECT_EQ(group_kind().as_kind(AnyArgs(a), group_kind()).size(), 1u);
}

std::vector<GroupSize> sizes_of(const Case& c) { return group_sizes(c.shape); }

TEST(GroupKind, CasesAreUniqueValidAndCoverWhatTheKernelsGetWrong) {
  const Tile t{256, 128, 256};
  std::vector<Case> cases = group_kind().cases(t);
  cases.push_back(group_kind().element_aligned_c_case());
  std::set<std::string> names;
  bool gpumode[4] = {}, many = false, n_odd = false, empty_between = false, empty_ends = false, one_row = false,
       past_tile = false, single = false;
  std::set<int> k_tails;
  std::set<Tier> tiers;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case";
    EXPECT_EQ(c.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"),
              std::string::npos) << "a gtest parameter name";
    tiers.insert(c.tier);
    const std::vector<GroupSize> g = sizes_of(c);
    ASSERT_FALSE(g.empty());
    int rows = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      EXPECT_GE(g[i].M, 0);
      EXPECT_GE(g[i].N, 1);
      EXPECT_EQ(g[i].K % 32, 0);
      EXPECT_GE(g[i].K, 32);
      rows += g[i].M;
      n_odd |= g[i].M > 0 && g[i].N % 8 != 0;
      one_row |= g[i].M == 1;
      past_tile |= g[i].M == t.m + 1;
      k_tails.insert(g[i].K);
    }
    for (size_t i = 0; i < g.size(); ++i) {  // an empty group with rows somewhere before and after it
      auto rows_in = [&](size_t from, size_t to) {
        for (size_t j = from; j < to; ++j)
          if (g[j].M > 0) return true;
        return false;
      };
      empty_between |= g[i].M == 0 && rows_in(0, i) && rows_in(i + 1, g.size());
    }
    EXPECT_GT(rows, 0);
    empty_ends |= g.front().M == 0 && g.back().M == 0;
    many |= g.size() > 48;
    single |= g.size() == 1;
    for (int q = 0; q < 4; ++q) gpumode[q] |= c.name == "exact_gpumode_q" + std::to_string(q + 1);
  }
  for (int q = 0; q < 4; ++q) EXPECT_TRUE(gpumode[q]) << "GPU MODE case " << q + 1;
  EXPECT_TRUE(many);
  EXPECT_TRUE(n_odd);
  EXPECT_TRUE(empty_between);
  EXPECT_TRUE(empty_ends);
  EXPECT_TRUE(one_row);
  EXPECT_TRUE(past_tile);
  EXPECT_TRUE(single);
  for (int k : {32, 96, 160, t.k + 32}) EXPECT_TRUE(k_tails.count(k)) << "K = " << k;
  EXPECT_EQ(tiers.size(), 4u);
  // The GPU MODE problems as published.
  for (const Case& c : cases)
    if (c.name == "exact_gpumode_q1") {
      const std::vector<GroupSize> g = sizes_of(c);
      const int m[] = {80, 176, 128, 72, 64, 248, 96, 160};
      ASSERT_EQ(g.size(), 8u);
      for (int i = 0; i < 8; ++i) EXPECT_EQ(g[size_t(i)].M, m[i]);
      EXPECT_EQ(c.shape.N, 4096);
      EXPECT_EQ(c.shape.K, 7168);
    }
  const std::vector<Shape> bench = group_kind().bench_shapes();
  ASSERT_EQ(bench.size(), 8u);
  EXPECT_EQ(bench[0].name, "gpumode_q1");
  for (const Shape& s : bench)
    if (s.name.rfind("dsv3_", 0) == 0) {
      const int experts = s.name.find("_e32") != std::string::npos ? 32 : 8;
      EXPECT_EQ(group_sizes(s).size(), size_t(experts)) << s.name;
      EXPECT_EQ(s.M, experts * (experts == 32 ? 64 : 128)) << s.name;
    }
}

// The bad arguments break their rule both in the placeholder table and in a table shaped like the one
// the GPU variant builds from the element-aligned case (group 1 without rows, its A, SFA and C null).
TEST(GroupKind, EveryBadArgumentIsRejectedWithItsRuleInBothTables) {
  const Kind& k = group_kind();
  Nvfp4GroupGemmArgs gpu_like;
  const std::vector<GroupSize> sizes = group_sizes(k.element_aligned_c_case().shape);
  ASSERT_EQ(sizes.size(), 3u);
  ASSERT_EQ(sizes[1].M, 0);
  for (size_t g = 0; g < sizes.size(); ++g) {
    const uintptr_t base = 0x7000000 + g * 0x4000;  // regions 256-byte aligned and close together, as uploaded
    const bool rows = sizes[g].M > 0;
    gpu_like.groups.push_back({sizes[g].M, sizes[g].N, sizes[g].K, rows ? at<const uint8_t>(base) : nullptr,
                               rows ? at<const uint8_t>(base + 0x1000) : nullptr, at<const uint8_t>(base + 0x2000),
                               at<const uint8_t>(base + 0x3000), 1.0f,
                               rows ? at<__half>(0x9000000 + 0x4000 * g + 2) : nullptr});
  }
  ASSERT_EQ(rejection(gpu_like), "");
  const std::vector<BadArgument> bad = k.bad_arguments();
  EXPECT_GT(bad.size(), 30u);
  for (const AnyArgs& good : {k.placeholder_args(), AnyArgs(gpu_like)}) {
    EXPECT_NO_THROW(k.validate(good));
    for (const BadArgument& b : bad) {
      AnyArgs a = good.clone();
      b.mutate(a);
      try {
        k.validate(a);
        ADD_FAILURE() << "accepted: " << b.argument << " " << b.rule;
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(": " + b.argument + " "), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(b.rule), std::string::npos) << e.what();
      }
    }
  }
}

void validating_launch(const Nvfp4GroupGemmArgs& a, cudaStream_t) { validate(a); }

TEST(GroupKind, TheHarnessChecksItsBadArguments) {
  testing::expect_rejects_invalid_arguments_cpu(Launcher(&validating_launch));
}

// ---- problems ----------------------------------------------------------------------------------------

bool is_padding(int64_t byte, int rows, int K) {
  for (int r = 0; r < rows; ++r)
    for (int k16 = 0; k16 < K / kSfVector; ++k16)
      if (sf_offset(r, k16, K) == byte) return false;
  return true;
}

const Shape kSmall = group_shape("small", {{5, 13, 32}, {0, 40, 64}, {130, 8, 96}, {64, 24, 160}, {64, 24, 160}});

TEST(GroupProblem, ScalePaddingIsRandomNonZeroAndFinite) {
  for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic, Tier::kScaleBit7}) {
    SCOPED_TRACE(tier_name(tier));
    const std::unique_ptr<Problem> p = group_kind().make_problem(kSmall, tier, 42);
    const std::vector<GroupSize> g = group_sizes(kSmall);
    for (size_t i = 0; i < g.size(); ++i) {
      for (char op : {'A', 'B'}) {
        const int rows = op == 'A' ? std::max(g[i].M, 1) : g[i].N;
        const std::vector<uint8_t>& sf = group_detail::host_scales(*p, int(i), op);
        ASSERT_EQ(int64_t(sf.size()), sf_batch_bytes(rows, g[i].K));
        int64_t padding = 0, bit7 = 0;
        std::set<uint8_t> codes;
        for (int64_t b = 0; b < int64_t(sf.size()); ++b) {
          if (!is_padding(b, rows, g[i].K)) continue;
          ++padding;
          const uint8_t s = sf[size_t(b)];
          EXPECT_NE(s & 0x7F, 0) << "group " << i << " " << op << " byte " << b;
          EXPECT_NE(s & 0x7F, 0x7F) << "a NaN scale at group " << i << " " << op << " byte " << b;
          bit7 += s >> 7;
          codes.insert(s);
        }
        // Every tensor here has padding rows (fewer than 128) or columns (K/16 not a multiple of 4).
        EXPECT_GT(padding, 0);
        EXPECT_GT(codes.size(), 8u) << "random codes";
        EXPECT_GT(bit7, 0);
      }
    }
    EXPECT_THROW(group_detail::host_scales(*p, 5, 'A'), std::out_of_range);
  }
}

TEST(GroupProblem, TheReferenceIgnoresScalePadding) {
  HostNvfp4Problem h = make_nvfp4_problem(5, 13, 96, 1, Tier::kLayout, 7);
  const ReferenceOutput before = reference_gemm(h.host_args());
  for (int64_t b = 0; b < int64_t(h.a.sf.size()); ++b)
    if (is_padding(b, 5, 96)) h.a.sf[size_t(b)] = 0x7E;  // 448, the largest E4M3
  for (int64_t b = 0; b < int64_t(h.b.sf.size()); ++b)
    if (is_padding(b, 13, 96)) h.b.sf[size_t(b)] = 0x7E;
  EXPECT_EQ(reference_gemm(h.host_args()).half, before.half);
}

std::vector<uint16_t> as_halves(const std::vector<uint8_t>& bytes) {
  std::vector<uint16_t> h(bytes.size() / 2);
  std::memcpy(h.data(), bytes.data(), bytes.size());
  return h;
}
void set_half(std::vector<uint8_t>& bytes, int64_t element, uint16_t v) { std::memcpy(&bytes[size_t(2 * element)], &v, 2); }

TEST(GroupProblem, GroupsHaveTheirOwnData) {
  const std::unique_ptr<Problem> p = group_kind().make_problem(kSmall, Tier::kExact, 42);
  // Groups 3 and 4 have the same sizes: their scales and their outputs differ.
  EXPECT_NE(group_detail::host_scales(*p, 3, 'A'), group_detail::host_scales(*p, 4, 'A'));
  EXPECT_NE(group_detail::host_scales(*p, 3, 'B'), group_detail::host_scales(*p, 4, 'B'));
  const std::vector<uint16_t> out = as_halves(group_detail::expected_output(*p));
  // C: group 0 at 0 (65), group 2 at 72 (1040), group 3 at 1112 (1536), group 4 at 2648 (1536).
  ASSERT_EQ(out.size(), size_t(2648 + 1536));
  ASSERT_EQ(int64_t(2 * out.size()), group_kind().output_bytes(kSmall));
  EXPECT_NE(std::vector<uint16_t>(out.begin() + 1112, out.begin() + 2648),
            std::vector<uint16_t>(out.begin() + 2648, out.end()));
  // Another seed, other data.
  const std::unique_ptr<Problem> q = group_kind().make_problem(kSmall, Tier::kExact, 43);
  EXPECT_NE(group_detail::host_scales(*p, 0, 'B'), group_detail::host_scales(*q, 0, 'B'));
}

TEST(GroupProblem, CompareChecksEveryGroupAndTheGapsBetweenThem) {
  const std::unique_ptr<Problem> p = group_kind().make_problem(kSmall, Tier::kExact, 42);
  const Tile tile{128, 128, 256};
  const std::vector<uint8_t> good = group_detail::expected_output(*p);
  CompareResult r = p->compare(good.data(), tile);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.checked, 65 + 7 + 1040 + 1536 + 1536) << "every output of every group, and the gap after group 0";
  EXPECT_NE(r.what.find("small"), std::string::npos) << r.what;

  std::vector<uint8_t> bad = good;  // one output of group 3, row 2, column 5
  set_half(bad, 1112 + 2 * 24 + 5, uint16_t(as_halves(good)[1112 + 2 * 24 + 5] ^ 0x0400));
  r = p->compare(bad.data(), tile);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.mismatches, 1);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].l, 3) << "a mismatch's batch is its group";
  EXPECT_EQ(r.first[0].m, 2);
  EXPECT_EQ(r.first[0].n, 5);
  ASSERT_EQ(r.blocks.size(), 1u);
  EXPECT_EQ(r.blocks[0].first.rfind("group 3: rows 0-63 x cols 0-23", 0), 0u) << r.blocks[0].first;

  bad = good;  // an element of the gap between groups 0 and 2 (elements 65..71)
  set_half(bad, 70, 0x3C00);
  r = p->compare(bad.data(), tile);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.mismatches, 1);
  ASSERT_EQ(r.blocks.size(), 1u);
  EXPECT_NE(r.blocks[0].first.find("gap between groups 0 and 2 (C elements 65-71"), std::string::npos)
      << r.blocks[0].first;

  const std::vector<uint8_t> poison(good.size(), 0xFF);  // nothing written
  r = p->compare(poison.data(), tile);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.nonfinite, 65 + 1040 + 1536 + 1536);
}

TEST(GroupProblem, SpotChecksSampleEveryGroupsCorners) {
  const std::unique_ptr<Problem> p = group_kind().make_problem(kSmall, Tier::kRealistic, 5);
  const std::vector<uint8_t> good = group_detail::expected_output(*p);
  CompareResult r = p->compare_spots(good.data(), 64, 9);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_GE(r.checked, 4 * 16);
  std::vector<uint8_t> bad = good;
  set_half(bad, 72 + 1040 - 1, 0x7BFF);  // the last element of group 2: a corner, always sampled
  r = p->compare_spots(bad.data(), 64, 9);
  EXPECT_FALSE(r.ok());
  ASSERT_FALSE(r.first.empty());
  EXPECT_EQ(r.first[0].l, 2);
  EXPECT_EQ(r.first[0].m, 129);
  EXPECT_EQ(r.first[0].n, 7);
}

TEST(GroupKind, WhatItIs) {
  const Kind& k = group_kind();
  EXPECT_STREQ(k.name(), "nvfp4_group_gemm");
  EXPECT_STREQ(k.title(), "NVFP4 group GEMM");
  EXPECT_EQ(k.merit(), Merit::kCompute);
  EXPECT_EQ(k.output_element_bytes(), 2);
  EXPECT_NE(std::string(k.describe_inputs(Tier::kExact)).find("scale padding"), std::string::npos);
  EXPECT_NE(std::string(k.describe_inputs(Tier::kLayout)).find("40 scale codes"), std::string::npos);
  EXPECT_GT(k.device_bytes(kSmall), double(k.output_bytes(kSmall)));
  EXPECT_GT(k.host_bytes(kSmall), k.device_bytes(kSmall));
}

}  // namespace
}  // namespace gemm
