// The kinds of problems (common/kinds/) and the harness's view of them, on the CPU: a launcher's kind
// follows from its argument type, arguments of one kind cannot reach another's launcher, every kind's
// cases obey its own rules and every bad argument it lists breaks one, and the benchmarks' rotation
// rule covers 4x the L2 with at least 4 sets, or flushes the L2 where it cannot.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

#include "common/gemm_api.h"
#include "common/harness/gemm_tests.h"
#include "common/harness/stage_program.h"
#include "common/kinds/mxfp8_gemm.h"
#include "common/kinds/nvfp4_group_gemm.h"
#include "common/kinds/svdquant_gemm.h"
#include "common/harness/timing.h"

namespace gemm {
namespace {

int g_calls = 0;
void fp32_launch(const Fp32GemmArgs& a, cudaStream_t) {
  validate(a);
  ++g_calls;
}
void nvfp4_launch(const Nvfp4GemmArgs& a, cudaStream_t) {
  validate(a);
  ++g_calls;
}
void gemv_launch(const Nvfp4GemvArgs& a, cudaStream_t) {
  validate_gemv(a);
  ++g_calls;
}
void group_launch(const Nvfp4GroupGemmArgs& a, cudaStream_t) {
  validate(a);
  ++g_calls;
}

constexpr StageOf kFp32Stage{"90_fp32", "a test stage", &fp32_launch};
constexpr StageOf kGemvStage{"91_gemv", "a test stage", &gemv_launch, kUsesTcgen05};

// Every kind of common/kinds/: the rules below hold for each (the MXFP8 and SVDQuant GEMMs have no
// stage yet; their own tests are test_mxfp8_kind.cpp and test_svdquant_kind.cpp).
const Kind* const kKinds[] = {&KindOf<Fp32GemmArgs>::get(),       &KindOf<Nvfp4GemmArgs>::get(),
                              &KindOf<Nvfp4GemvArgs>::get(),      &KindOf<Nvfp4GroupGemmArgs>::get(),
                              &KindOf<Mxfp8GemmArgs>::get(),      &KindOf<SvdquantGemmArgs>::get()};

TEST(Kinds, FollowFromTheLaunchersArgumentType) {
  EXPECT_STREQ(Launcher(&fp32_launch).kind().name(), "fp32_gemm");
  EXPECT_STREQ(Launcher(&nvfp4_launch).kind().name(), "nvfp4_gemm");
  EXPECT_STREQ(Launcher(&gemv_launch).kind().name(), "nvfp4_gemv");
  EXPECT_STREQ(Launcher(&group_launch).kind().name(), "nvfp4_group_gemm");
  EXPECT_STREQ(kFp32Stage.kind().name(), "fp32_gemm");
  EXPECT_STREQ(kGemvStage.kind().name(), "nvfp4_gemv");
  EXPECT_FALSE(kFp32Stage.uses_tcgen05);
  EXPECT_TRUE(kGemvStage.uses_tcgen05);
  EXPECT_TRUE(testing::launches_with(kGemvStage, &gemv_launch));
  EXPECT_FALSE(testing::launches_with(kFp32Stage, &nvfp4_launch));
  EXPECT_TRUE(kGemvStage.launcher().is(&gemv_launch));
  std::set<std::string> names;
  for (const Kind* k : kKinds) EXPECT_TRUE(names.insert(k->name()).second) << "two kinds named " << k->name();
}

TEST(Kinds, ArgumentsOfOneKindNeverReachAnothersLauncher) {
  const AnyArgs fp32 = KindOf<Fp32GemmArgs>::get().placeholder_args();
  const Launcher nvfp4{&nvfp4_launch};
  EXPECT_THROW(nvfp4(fp32, nullptr), std::logic_error);
  EXPECT_THROW(fp32.as<Nvfp4GemmArgs>(), std::logic_error);
  // A GEMV's arguments are a GEMM's at N = 1 (the view a GEMM base is timed through); not the reverse.
  const Kind& gemv = KindOf<Nvfp4GemvArgs>::get();
  const Kind& gemm = KindOf<Nvfp4GemmArgs>::get();
  const std::vector<AnyArgs> calls = gemv.as_kind(gemv.placeholder_args(), gemm);
  ASSERT_EQ(calls.size(), 1u);
  const AnyArgs& as_gemm = calls[0];
  EXPECT_EQ(&as_gemm.kind(), &gemm);
  EXPECT_EQ(as_gemm.as<Nvfp4GemmArgs>().N, 1);
  g_calls = 0;
  nvfp4(as_gemm, nullptr);
  EXPECT_EQ(g_calls, 1);
  EXPECT_THROW(gemm.as_kind(gemm.placeholder_args(), gemv), std::invalid_argument);
}

TEST(Kinds, ClonesShareNothing) {
  const AnyArgs a = KindOf<Fp32GemmArgs>::get().placeholder_args();
  AnyArgs b = a.clone();
  b.as<Fp32GemmArgs>().M = 7;
  EXPECT_EQ(a.as<Fp32GemmArgs>().M, 64);
}

TEST(Kinds, CasesObeyTheirKindsRulesAndNamesAreUnique) {
  for (const Kind* k : kKinds) {
    SCOPED_TRACE(k->name());
    std::set<std::string> names;
    auto cases = k->cases({128, 128, 256});
    cases.push_back(k->element_aligned_c_case());
    EXPECT_GT(cases.size(), 20u);
    bool several = false, exact = false;  // several batches, or several groups (three sizes each in extra)
    for (const Case& c : cases) {
      EXPECT_TRUE(names.insert(c.name).second) << "duplicate case " << c.name;
      EXPECT_EQ(k->size_rule('m', c.shape.M), "") << c.name;
      EXPECT_EQ(k->size_rule('n', c.shape.N), "") << c.name;
      EXPECT_EQ(k->size_rule('k', c.shape.K), "") << c.name;
      several |= c.shape.L > 1 || c.shape.extra.size() > 3;
      exact |= is_exact(c.tier);
      EXPECT_GT(k->output_bytes(c.shape), 0);
      EXPECT_GT(k->flops(c.shape), 0);
      EXPECT_GT(k->min_bytes(c.shape), double(k->output_bytes(c.shape))) << "inputs must count";
    }
    EXPECT_TRUE(several);
    EXPECT_TRUE(exact);
  }
}

TEST(Kinds, EveryBadArgumentIsRejectedByValidationNamingItsArgument) {
  for (const Kind* k : kKinds) {
    SCOPED_TRACE(k->name());
    EXPECT_NO_THROW(k->validate(k->placeholder_args()));
    const auto bad = k->bad_arguments();
    EXPECT_GT(bad.size(), 10u);
    for (const BadArgument& b : bad) {
      AnyArgs a = k->placeholder_args().clone();
      b.mutate(a);
      try {
        k->validate(a);
        ADD_FAILURE() << "accepted: " << b.argument << " " << b.rule;
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(": " + b.argument + " "), std::string::npos) << e.what();
      }
    }
  }
}

TEST(Kinds, SizeRulesNameTheRule) {
  const Kind& gemv = KindOf<Nvfp4GemvArgs>::get();
  EXPECT_NE(gemv.size_rule('n', 2).find("must be 1"), std::string::npos);
  EXPECT_EQ(gemv.size_rule('n', 1), "");
  EXPECT_NE(KindOf<Nvfp4GemmArgs>::get().size_rule('k', 48).find("multiple of 32"), std::string::npos);
  EXPECT_EQ(KindOf<Fp32GemmArgs>::get().size_rule('k', 7), "");
  EXPECT_EQ(gemv.merit(), Merit::kMemory);
  EXPECT_EQ(KindOf<Nvfp4GemmArgs>::get().merit(), Merit::kCompute);
}

TEST(Stages, AnEarlierStepsIdFitsItsFolder) {
  EXPECT_TRUE(testing::id_fits_folder("05_tcgen05_2cta", "05_tcgen05_2cta"));
  EXPECT_TRUE(testing::id_fits_folder("05_tcgen05_1cta", "05_tcgen05_2cta"));
  EXPECT_FALSE(testing::id_fits_folder("06_persistent_ws", "05_tcgen05_2cta"));
  EXPECT_FALSE(testing::id_fits_folder("05", "05_tcgen05_2cta"));
}

// The rule itself, on the L2 sizes of the GPUs this project names (H100/H200: 50 MiB, B200: 126 MiB)
// and on problems from a tenth of the L2 to three times it.
TEST(InputRotation, AtLeastFourSetsCoveringFourTimesTheL2) {
  for (double l2 : {50.0 * (1 << 20), 60.0 * (1 << 20), 126.0 * (1 << 20)}) {
    for (double per_set : {1.2e6, 4.7e6, 8.4e6, 0.1 * l2, 0.5 * l2, 0.99 * l2, l2, 1.01 * l2, 3 * l2, 40 * l2}) {
      const int sets = timing::input_sets(per_set, l2);
      SCOPED_TRACE("L2 " + std::to_string(l2) + ", bytes per set " + std::to_string(per_set));
      EXPECT_GE(sets, timing::kMinSets);
      EXPECT_LE(sets, timing::kMaxSets);
      EXPECT_GE(sets * per_set, timing::kL2Multiple * l2) << sets << " sets";
      // ... and no more sets than the rule needs (beyond the minimum of 4).
      if (sets > timing::kMinSets) {
        EXPECT_LT((sets - 1) * per_set, timing::kL2Multiple * l2);
      }
    }
  }
  // 2x the L2 (the old rule) is not enough: a problem of exactly the L2 needs 4 sets, not 2.
  EXPECT_EQ(timing::input_sets(50.0 * (1 << 20), 50.0 * (1 << 20)), 4);
  EXPECT_EQ(timing::input_sets(60e6, 50.0 * (1 << 20)), 4);  // the 7168 x 16384 GEMV on an H100
  EXPECT_THROW(timing::input_sets(0, 1e6), std::invalid_argument);
  // Below l2 * 4 / kMaxSets per set rotation cannot meet the rule: the cap holds, and the L2 is flushed
  // instead (the next test).
  EXPECT_EQ(timing::input_sets(1e3, 126.0 * (1 << 20)), timing::kMaxSets);
}

// The fallback: with the rule's sets, the L2 is flushed exactly below l2 * kL2Multiple / kMaxSets bytes
// per set, where even kMaxSets copies cover less than kL2Multiple x the L2; from that size on, never.
TEST(InputRotation, FlushesTheL2ExactlyWhereTheCappedSetsFallShort) {
  for (double l2 : {50.0 * (1 << 20), 60.0 * (1 << 20), 126.0 * (1 << 20)}) {
    SCOPED_TRACE("L2 " + std::to_string(l2));
    const double edge = l2 * timing::kL2Multiple / timing::kMaxSets;
    auto flushes = [l2](double per_set) { return timing::flushes_l2(timing::input_sets(per_set, l2), per_set, l2); };
    for (double per_set : {1e3, 0.5 * edge, std::nextafter(edge, 0.0)}) EXPECT_TRUE(flushes(per_set)) << per_set;
    for (double per_set : {std::nextafter(edge, l2), 1.01 * edge, 0.1 * l2, l2, 3 * l2})
      EXPECT_FALSE(flushes(per_set)) << per_set;
    // At the edge itself kMaxSets copies cover exactly kL2Multiple x the L2: no flush.
    EXPECT_EQ(timing::input_sets(edge, l2), timing::kMaxSets);
    EXPECT_FALSE(flushes(edge));
  }
  // Sets chosen apart from the rule are judged as given: 4 copies of a tenth of the L2 fall short.
  EXPECT_TRUE(timing::flushes_l2(timing::kMinSets, 0.1 * 50.0 * (1 << 20), 50.0 * (1 << 20)));
  EXPECT_FALSE(timing::flushes_l2(timing::kMinSets, 50.0 * (1 << 20), 50.0 * (1 << 20)));
}

// What the benchmarks and the stage programs ask for: the rule's sets and flush, or, for an emulated
// kernel, the fewest sets and no flush whatever its size.
TEST(InputRotation, RotationCombinesTheRuleAndTheEmulatedException) {
  const double l2 = 50.0 * (1 << 20);
  for (double per_set : {1e3, 1e5, 0.1 * l2, 3 * l2}) {
    SCOPED_TRACE(per_set);
    const timing::Rotation real = timing::rotation(per_set, false, l2);
    EXPECT_EQ(real.sets, timing::input_sets(per_set, l2));
    EXPECT_EQ(real.flush_l2, timing::flushes_l2(real.sets, per_set, l2));
    const timing::Rotation emulated = timing::rotation(per_set, true, l2);
    EXPECT_EQ(emulated.sets, timing::kMinSets);
    EXPECT_FALSE(emulated.flush_l2);
  }
  EXPECT_TRUE(timing::rotation(1e3, false, l2).flush_l2);  // the small case the fallback exists for
  EXPECT_EQ(timing::rotation(1e3, false, l2).sets, timing::kMaxSets);
  EXPECT_FALSE(timing::rotation(3 * l2, false, l2).flush_l2);  // large: rotation alone defeats the L2
  EXPECT_EQ(timing::rotation(3 * l2, false, l2).sets, timing::kMinSets);
  EXPECT_THROW(timing::rotation(0, true, l2), std::invalid_argument);
}

TEST(InputRotation, FlushRuleRejectsNoBytesAndNoSets) {
  EXPECT_THROW(timing::flushes_l2(timing::kMaxSets, 0, 1e6), std::invalid_argument);
  EXPECT_THROW(timing::flushes_l2(timing::kMaxSets, -1e3, 1e6), std::invalid_argument);
  EXPECT_THROW(timing::flushes_l2(timing::kMaxSets, std::nan(""), 1e6), std::invalid_argument);
  EXPECT_THROW(timing::flushes_l2(0, 1e3, 1e6), std::invalid_argument);
}

// A stage option with named values: the word's index is its value, both spellings parse, the first word
// is the default, and a word not in the list ends the program with the bad-argument code and a message
// that names the option and the words it takes.
TEST(ProgramOptions, NamedValuesParseToTheirIndex) {
  program::Flag c{"--c", "TYPE", "C's type"};
  c.names = {"fp32", "bf16"};
  const char* given[] = {"prog", "--c", "bf16"};
  const program::Options o = program::parse(3, const_cast<char**>(given), kFp32Stage, {}, {c});
  EXPECT_EQ(program::flag_int(o, "--c", 0), 1);
  const char* equals[] = {"prog", "--c=fp32"};
  EXPECT_EQ(program::flag_int(program::parse(2, const_cast<char**>(equals), kFp32Stage, {}, {c}), "--c", 7), 0);
  const char* none[] = {"prog"};
  EXPECT_EQ(program::flag_int(program::parse(1, const_cast<char**>(none), kFp32Stage, {}, {c}), "--c", 0), 0);
  const char* bad[] = {"prog", "--c", "fp16"};
  EXPECT_EXIT(program::parse(3, const_cast<char**>(bad), kFp32Stage, {}, {c}),
              ::testing::ExitedWithCode(program::kBadArgumentsExit), "--c 'fp16': must be fp32 or bf16");
}

}  // namespace
}  // namespace gemm
