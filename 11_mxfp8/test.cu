// The three steps of stage 11 (kernel_format.cuh, kernel_n256.cuh, kernel.cuh) against the CPU reference:
// the MXFP8 kind's cases (tails, L > 1, the layout tier whose 17 scale exponents per block make a wrong
// scale byte or atom fail, BF16 output, E5M2 operands), every boundary of each step's tile (256 x 128,
// 256 x 256; k-tiles of 128 and 256), a K sweep through each ring, forced schedules that reuse both
// overlapping accumulators many times, and both epilogue paths for both outputs with C's neighbourhood
// guarded. On Hopper the tcgen05
// instructions run through the emulator, under the protocol checker.
#include "kernel_format.cuh"
#include "kernel_n256.cuh"
#include "kernel.cuh"

#include <algorithm>
#include <string>
#include <vector>

#include "common/harness/gemm_tests.h"

namespace {

using gemm::Mxfp8Element;
using gemm::Mxfp8Output;
using gemm::Mxfp8Types;
using gemm::Tier;
using gemm::testing::GemmCase;
constexpr gemm::testing::Tile kTileFormat{stage11_format::kBM, stage11_format::kBN, stage11_format::kTileK};
constexpr gemm::testing::Tile kTileN256{stage11_n256::kBM, stage11_n256::kBN, stage11_n256::kTileK};
constexpr gemm::testing::Tile kTile{stage11::kBM, stage11::kBN, stage11::kTileK};
constexpr Mxfp8Types kFp32{};
constexpr Mxfp8Types kBf16{Mxfp8Output::kBf16, Mxfp8Element::kE4M3, Mxfp8Element::kE4M3};

// A case of the MXFP8 kind at this shape, tier and types; the name seeds the data.
GemmCase mx_case(const std::string& what, Tier tier, int M, int N, int K, int L = 1, Mxfp8Types t = kFp32) {
  const gemm::Shape s = gemm::mxfp8_shape(M, N, K, L, t);
  return {what + "_" + gemm::case_name(tier, s), s, tier};
}

std::vector<GemmCase> cases(gemm::testing::Tile tile, int slots) {
  auto c = gemm::testing::kind_cases(stage11::kStage, tile);
  for (int M : {1, 127, 128, 129, 255, 256, 257})
    for (int N : {1, 16, 17, 127, 128, 129, 255, 256, 257, 384, 511, 513})
      c.push_back(mx_case("tail", Tier::kExact, M, N, 160));
  // K through the ring: one step, a partial tile (for k-tiles of 256: one whose second swizzle row is
  // empty, one that ends in it), whole tiles, one round of the slots and past it.
  const int T = tile.k, S = slots;
  std::vector<int> ks;
  for (int K : {32, 64, 96, T / 2 + 32, T, S * T, (S + 1) * T + 32, 3 * S * T + 96})
    if (std::find(ks.begin(), ks.end(), K) == ks.end()) ks.push_back(K);  // k-tiles of 128: T / 2 + 32 is 96 again
  for (int K : ks)
    for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic}) c.push_back(mx_case("pipeline", tier, 130, 260, K));
  for (int K : {32, 96, S * T + 32}) c.push_back(mx_case("pipeline_bf16", Tier::kLayout, 130, 260, K, 1, kBf16));
  // An M = 128 shape with a long K: fewer tiles than the pairs of any GPU.
  c.push_back(mx_case("small_m", Tier::kRealistic, 128, 4096, 7168));
  return c;
}

GEMM_STAGE_TESTS(Mxfp8Format, stage11_format::kStage, stage11_format::launch, cases(kTileFormat, stage11_format::kSlots),
                 kTileFormat)
GEMM_STAGE_TESTS(Mxfp8GemmN256, stage11_n256::kStage, stage11_n256::launch, cases(kTileN256, stage11_n256::kSlots),
                 kTileN256)
GEMM_STAGE_TESTS(Mxfp8Gemm, stage11::kStage, stage11::launch, cases(kTile, stage11::kSlots), kTile)

// ---- Forced schedules ---------------------------------------------------------------------------------

template <int kPairs>
void format_pairs(const gemm::Mxfp8GemmArgs& a, cudaStream_t s) { stage11_format::launch_with(a, s, {kPairs, {}}); }
template <int kPairs>
void n256_pairs(const gemm::Mxfp8GemmArgs& a, cudaStream_t s) { stage11_n256::launch_with(a, s, {kPairs, {}}); }
template <int kPairs>
void bk256_pairs(const gemm::Mxfp8GemmArgs& a, cudaStream_t s) { stage11::launch_with(a, s, {kPairs, {}}); }

struct ForcedCase {
  const char* name;
  gemm::Launcher launch;
  GemmCase shape;
};
class GpuMxfp8GemmSchedule : public ::testing::TestWithParam<ForcedCase> {};
TEST_P(GpuMxfp8GemmSchedule, MatchesCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(GetParam().launch, GetParam().shape, kTile);
}
INSTANTIATE_TEST_SUITE_P(
    Forced, GpuMxfp8GemmSchedule,
    ::testing::Values(
        // One pair does every unit: both accumulators reused many times (in step 2 overlapping), the
        // ring's phases carried from unit to unit.
        ForcedCase{"format_one_pair_many_units", format_pairs<1>, mx_case("one_pair", Tier::kExact, 1000, 700, 512)},
        ForcedCase{"format_two_pairs_bf16", format_pairs<2>, mx_case("two_pairs", Tier::kLayout, 777, 555, 800, 1, kBf16)},
        ForcedCase{"format_batches_crossed", format_pairs<5>, mx_case("batches", Tier::kLayout, 300, 200, 288, 3)},
        ForcedCase{"n256_one_pair_many_units", n256_pairs<1>, mx_case("one_pair", Tier::kExact, 1000, 1300, 512)},
        ForcedCase{"n256_one_pair_short_k", n256_pairs<1>, mx_case("one_pair_short_k", Tier::kLayout, 900, 1100, 32)},
        ForcedCase{"n256_two_pairs_many_units", n256_pairs<2>, mx_case("two_pairs", Tier::kRealistic, 777, 1555, 800)},
        ForcedCase{"n256_two_pairs_bf16", n256_pairs<2>, mx_case("two_pairs", Tier::kLayout, 777, 555, 800, 1, kBf16)},
        // The schedule crosses batches: 3 batches of 2 x 2 tiles over 5 pairs (step 1), 3 x 2 x 1 (step 2).
        ForcedCase{"n256_batches_crossed", n256_pairs<5>, mx_case("batches", Tier::kLayout, 300, 200, 288, 3)},
        // Step 3: the 3-slot ring wraps many times in one unit and across units; K = 800 ends in a k-tile
        // of one step, K = 160 in a k-tile whose second swizzle row holds one step.
        ForcedCase{"bk256_one_pair_many_units", bk256_pairs<1>, mx_case("one_pair", Tier::kExact, 1000, 1300, 800)},
        ForcedCase{"bk256_one_pair_half_tile", bk256_pairs<1>, mx_case("one_pair_half", Tier::kLayout, 600, 700, 160)},
        ForcedCase{"bk256_two_pairs_bf16", bk256_pairs<2>, mx_case("two_pairs", Tier::kLayout, 777, 555, 1312, 1, kBf16)},
        ForcedCase{"bk256_batches_crossed", bk256_pairs<5>, mx_case("batches", Tier::kRealistic, 300, 200, 2336, 3)}),
    [](const ::testing::TestParamInfo<ForcedCase>& i) { return std::string(i.param.name); });

// ---- Both epilogue paths, both outputs, with C's neighbourhood guarded ---------------------------------

struct GuardCase {
  const char* name;
  GemmCase shape;
  int c_offset;
};
class GpuMxfp8GemmGuards : public ::testing::TestWithParam<GuardCase> {};
TEST_P(GpuMxfp8GemmGuards, WritesCAndNothingElse) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case_with_guards(stage11_format::launch, GetParam().shape, kTileFormat, GetParam().c_offset);
  gemm::testing::run_case_with_guards(stage11_n256::launch, GetParam().shape, kTileN256, GetParam().c_offset);
  gemm::testing::run_case_with_guards(stage11::launch, GetParam().shape, kTile, GetParam().c_offset);
}
INSTANTIATE_TEST_SUITE_P(
    Paths, GpuMxfp8GemmGuards,
    ::testing::Values(
        // TMA path, FP32 (N % 4 == 0): tails clipped in M and N; N = 132 leaves the second 16-column
        // sub-tile of the last chunk wholly past N (skipped), N = 140 cuts one.
        GuardCase{"tma_fp32_tails", mx_case("guard_tma", Tier::kExact, 129, 132, 288), 0},
        GuardCase{"tma_fp32_second_half", mx_case("guard_tma_half", Tier::kLayout, 300, 388, 160), 0},  // 256 + 132
        GuardCase{"tma_fp32_cut_sub_tile", mx_case("guard_tma_cut", Tier::kLayout, 257, 140, 160), 0},
        GuardCase{"tma_fp32_small", mx_case("guard_tma_small", Tier::kExact, 1, 4, 32), 0},
        GuardCase{"tma_fp32_batches", mx_case("guard_tma_l3", Tier::kRealistic, 300, 200, 512, 3), 0},
        // Step 2, N = 264: the unit at n0 = 256 has nothing to store in its shared half (columns 384..511),
        // so its first stores come after the release, in the other half.
        GuardCase{"tma_fp32_empty_shared_half", mx_case("guard_tma_empty", Tier::kLayout, 300, 264, 256, 2), 0},
        GuardCase{"tma_bf16_empty_shared_half_l1", mx_case("guard_tma_empty", Tier::kExact, 300, 264, 256, 1, kBf16), 0},
        GuardCase{"tma_bf16_empty_shared_half_one_tile_row", mx_case("guard_tma_empty", Tier::kExact, 64, 264, 256, 1, kBf16), 0},
        // TMA path, BF16 (N % 8 == 0).
        GuardCase{"tma_bf16_tails", mx_case("guard_tma", Tier::kExact, 129, 136, 288, 1, kBf16), 0},
        GuardCase{"tma_bf16_batches", mx_case("guard_tma_l2", Tier::kLayout, 300, 264, 256, 2, kBf16), 0},
        // Direct path: rows not on 16-byte boundaries, or C not 16-byte aligned.
        GuardCase{"direct_fp32_odd_n", mx_case("guard_direct", Tier::kExact, 129, 131, 288), 0},
        GuardCase{"direct_bf16_n_mod_8", mx_case("guard_direct", Tier::kExact, 129, 132, 288, 1, kBf16), 0},
        GuardCase{"direct_fp32_misaligned_c", mx_case("guard_direct_c", Tier::kExact, 200, 64, 256), 1},
        GuardCase{"direct_bf16_misaligned_c", mx_case("guard_direct_c", Tier::kLayout, 200, 64, 256, 1, kBf16), 1}),
    [](const ::testing::TestParamInfo<GuardCase>& i) { return std::string(i.param.name); });

// Step 2 alone on the shape whose guard test once stopped under the checker (README, "What was seen": lane 0
// stored before the other lanes had written): the same launcher, no step-1 launch before it in the process.
TEST(GpuMxfp8GemmStep2Alone, Bf16EmptySharedHalfWithBatches) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case_with_guards(stage11_n256::launch,
                                      mx_case("guard_tma_l2", Tier::kLayout, 300, 264, 256, 2, kBf16), kTileN256, 0);
}

// ---- The pieces (CPU) -------------------------------------------------------------------------------------

auto* const kBase = reinterpret_cast<const uint8_t*>(0x10000);

TEST(Mxfp8GemmSchedule, EveryTileIsCoveredExactlyOnce) {
  for (int pairs : {1, 7, 74}) {
    const gemm::Mxfp8GemmArgs a{1000, 900, 512, 2, kBase, kBase, kBase, kBase, nullptr};
    const stage11::Schedule s = stage11::make_schedule(a, pairs);
    ASSERT_EQ(s.units, 4 * 4 * 2);
    ASSERT_EQ(s.pairs, std::min(pairs, s.units));
    std::vector<int> covered(size_t(s.units), 0);
    for (int p = 0; p < s.pairs; ++p)
      for (int u = p; u < s.units; u += s.pairs) {
        const stage11::Unit w = stage11::unit_at(s, u);
        ++covered[(size_t(w.batch) * s.tiles_m + w.m0 / stage11::kBM) * s.tiles_n + w.n0 / stage11::kBN];
      }
    for (int n : covered) ASSERT_EQ(n, 1) << "pairs " << pairs;
  }
}

TEST(Mxfp8GemmLayout, BudgetsFit) {
  EXPECT_EQ(sizeof(stage11_format::Slot), 25600u);  // 16 KB of A, 8 KB of B, one 512-byte atom of each scale
  EXPECT_EQ(stage11_format::kSlots, 8);             // one more than stage 07's 7 slots of 28 KB
  EXPECT_LE(stage11_format::kTmemColumnsUsed, 512);
  EXPECT_LE(stage11_format::kSmemBytes + stage11_format::kStaticSmemMargin, stage11_format::kSmemPerBlock);
  EXPECT_EQ(stage11_format::d_column(1), 128u);
  EXPECT_EQ(stage11_format::sfa_column(0), 256u);
  EXPECT_EQ(stage11_format::sfb_column(0), 260u);  // SFA's atom takes 4 columns
  EXPECT_EQ(stage11_format::sfa_column(1), 264u);
  // Step 2: 16 KB of A and of B, an atom of SFA and two of SFB (33.5 KB, kept 1024-byte aligned).
  EXPECT_EQ(sizeof(stage11_n256::Slot), 34816u);
  EXPECT_EQ(stage11_n256::kSlots, 6);
  EXPECT_LE(stage11_n256::kSmemBytes + stage11_n256::kStaticSmemMargin, stage11_n256::kSmemPerBlock);
  EXPECT_LE(stage11_n256::kTmemColumnsUsed, 512);
  // Step 3: twice step 2's data (67 KB, no padding); 3 slots by shared memory (5 would fit Tensor Memory).
  EXPECT_EQ(sizeof(stage11::Slot), 68608u);
  EXPECT_EQ(stage11::kSlotTmaBytes, int(sizeof(stage11::Slot)));
  EXPECT_EQ(stage11::kSlotsBySmem, 3);
  EXPECT_EQ(stage11::kSlotsByTmem, 5);
  EXPECT_EQ(stage11::kSlots, 3);
  EXPECT_EQ(stage11::kSlots * stage11::kTileK, stage11_n256::kSlots * stage11_n256::kTileK);  // the same 768 values
  EXPECT_LE(stage11::kSmemBytes + stage11::kStaticSmemMargin, stage11::kSmemPerBlock);
  // Each slot's 24 scale columns: SFA's two k-atoms, then SFB's two k-atoms of two row blocks each.
  EXPECT_EQ(stage11::sfa_column(0), 384u);
  EXPECT_EQ(stage11::sfb_column(0), 392u);
  EXPECT_EQ(stage11::sfa_column(1), 408u);
  EXPECT_EQ(stage11::kTmemColumnsUsed, 384 + 3 * 24);
}

// Step 2's accumulators share 128 columns: two of 256 would leave no room for the scales. Accumulator 0's
// second half and accumulator 1's first half are the same columns, which the epilogue reads first.
TEST(Mxfp8GemmLayout, AccumulatorsOverlapByOneHalf) {
  namespace s2 = stage11_n256;
  EXPECT_EQ(s2::kAccColumns, 384);
  EXPECT_EQ(s2::d_column(0), 0u);
  EXPECT_EQ(s2::d_column(1), 128u);
  EXPECT_EQ(s2::d_column(0) + uint32_t(s2::shared_half(0) * s2::kHalfColumns),
            s2::d_column(1) + uint32_t(s2::shared_half(1) * s2::kHalfColumns));
  EXPECT_EQ(s2::sfa_column(0), 384u);  // the scales start after both accumulators
  EXPECT_GT(2 * s2::kBN + s2::kSlots * s2::kSfColumnsPerSlot, 512);  // why they must overlap
  EXPECT_EQ(stage11::kAccColumns, s2::kAccColumns);  // step 3 keeps the overlap
}

// MMA step j of a k-tile reads byte j of each scale cell: the descriptor's two scale ids, and nothing
// else, change from step to step; the types are the call's.
TEST(Mxfp8GemmDescriptor, StepSelectsTheScaleByte) {
  namespace tc = gemm::tcgen05;
  for (uint32_t a : {tc::kMxTypeE4M3, tc::kMxTypeE5M2})
    for (uint32_t b : {tc::kMxTypeE4M3, tc::kMxTypeE5M2})
      for (int j = 0; j < stage11::kStepsPerAtom; ++j) {  // step 3: the 4 steps of each k-atom
        const auto d = tc::decode_mxf8f6f4_instr_descriptor(stage11::instr_descriptor(a, b, j));
        EXPECT_EQ(d.sfa_id, uint32_t(j));
        EXPECT_EQ(d.sfb_id, uint32_t(j));
        EXPECT_EQ(d.a_type, a);
        EXPECT_EQ(d.b_type, b);
        EXPECT_EQ(d.m, uint32_t(stage11::kBM));
        EXPECT_EQ(d.n, uint32_t(stage11::kBN));
        EXPECT_EQ(d.scale_type, tc::kScaleUE8M0);
        EXPECT_EQ(tc::check_mxf8f6f4(stage11::instr_descriptor(a, b, j), stage11::kCtaGroup, tc::ScaleVec::kBlock32).what,
                  nullptr);
      }
  const gemm::Mxfp8GemmArgs e5{256, 128, 128, 1, kBase, kBase, kBase, kBase, nullptr, Mxfp8Output::kFp32,
                               Mxfp8Element::kE5M2, Mxfp8Element::kE4M3};
  const stage11::Schedule s = stage11::make_schedule(e5, 1);
  EXPECT_EQ(s.a_type, tc::kMxTypeE5M2);
  EXPECT_EQ(s.b_type, tc::kMxTypeE4M3);
}

TEST(Mxfp8GemmRule, TmaStoresNeedRowsOn16ByteBoundaries) {
  auto* c = reinterpret_cast<void*>(0x100000);
  gemm::Mxfp8GemmArgs a{};
  a.M = 100, a.N = 4, a.C = c;  // FP32: 16-byte rows
  EXPECT_TRUE(stage11::uses_tma_store(a));
  a.c_type = Mxfp8Output::kBf16;  // BF16: 8-byte rows
  EXPECT_FALSE(stage11::uses_tma_store(a));
  a.N = 8;
  EXPECT_TRUE(stage11::uses_tma_store(a));
  a.C = static_cast<char*>(c) + 4;  // rows on 16-byte boundaries, the base not
  EXPECT_FALSE(stage11::uses_tma_store(a));
  EXPECT_THROW(gemm::plan_output(c, 10, 6, 1, 32, 16, CU_TENSOR_MAP_DATA_TYPE_FLOAT32), std::invalid_argument);
  EXPECT_THROW(gemm::plan_output(c, 10, 4, 1, 32, 32, CU_TENSOR_MAP_DATA_TYPE_FLOAT32), std::invalid_argument);  // 128 B
  EXPECT_NO_THROW(gemm::plan_output(c, 10, 4, 1, 32, 16, CU_TENSOR_MAP_DATA_TYPE_FLOAT32));
  EXPECT_NO_THROW(gemm::plan_output(c, 10, 8, 1, 32, 32, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16));
}

// The operand maps count one byte per value (a 128-byte box row is 128 values of k) and the scale maps
// 32 values per scale (K = 160 has 5 scale columns, padded to 8: two atoms per 128-row block).
TEST(Mxfp8GemmMaps, OneBytePerValueAndThirtyTwoPerScale) {
  const gemm::Mxfp8GemmArgs a{300, 200, 160, 2, kBase, kBase, kBase, kBase, nullptr};
  const gemm::TensorMapPlan pa = stage11::plan_a(a), psa = stage11::plan_sfa(a);
  EXPECT_EQ(pa.dims[0], 160u);
  EXPECT_EQ(pa.strides[1], 160u * 300u);
  EXPECT_EQ(pa.box[0], 128u);
  EXPECT_EQ(psa.dims[1], uint64_t(3 * 2 * 512 / 16));  // 3 row blocks x 2 atoms, in 16-byte lines
  EXPECT_EQ(psa.box[1], 32u);                          // one atom
  gemm::Mxfp8GemmArgs bad = a;
  bad.K = 48;  // 48 bytes a row: TMA could address it, the MXFP8 contract does not allow it
  EXPECT_THROW(stage11::launch(bad, nullptr), std::invalid_argument);
}

}  // namespace
