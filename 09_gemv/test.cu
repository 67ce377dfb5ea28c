// Stage 09 against the CPU reference at N = 1: every tail of the GEMV case list (M = 1, odd M, rows
// past 32 and 128, K = 32, K not a multiple of 64, long K split over warps and clusters, L up to
// 8) in every tier, each run twice for identical bits; invalid arguments; and the pieces the stage
// adds: the E2M1 decode, the row groups, the launch plan. Every kernel configuration the benchmark
// times is tested too, and on the alignments the contract allows (operands only 16-byte aligned,
// rows that start 16 bytes off a 32-byte load). The precondition build compiles this file again
// (test_stage09_sm100_paths): on Hopper it then runs the sm_100a paths, with their rules checked.
#include "kernel.cuh"

#include <set>
#include <tuple>
#include <vector>

#include "common/device_buffer.h"
#include "common/formats.h"
#include "common/harness/gemm_tests.h"
#include "common/kinds/nvfp4_gemv.h"

namespace {

// A GEMV has no tile in N or K to speak of: comparisons count mismatches per 8 rows (a warp's rows).
constexpr gemm::testing::Tile kTile{8, 1, 1024};

GEMM_STAGE_TESTS(Nvfp4Gemv, stage09::kStage, stage09::launch, gemm::testing::kind_cases(stage09::kStage, kTile), kTile)

// The other configurations (the benchmark's variants): every one must be right on the tails too.
std::vector<gemm::testing::GemmCase> variant_cases() {
  std::vector<gemm::testing::GemmCase> c;
  for (const auto& g : gemm::testing::kind_cases(stage09::kStage, kTile))
    if (int64_t(g.shape.M) * g.shape.K * g.shape.L <= (int64_t(1) << 22)) c.push_back(g);
  return c;
}
class GpuGemvVariants : public ::testing::TestWithParam<gemm::testing::GemmCase> {};
TEST_P(GpuGemvVariants, Chunk32MatchesCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage09::launch_config<stage09::Blackwell>, GetParam(), {8, 1, 1024});
}
TEST_P(GpuGemvVariants, TwoGroupsPerCtaMatchCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage09::launch_config<stage09::Hopper16Rows>, GetParam(), {16, 1, 1024});
}
TEST_P(GpuGemvVariants, EightRowsPerCtaMatchCpuReference) {  // what launch takes for small grids, at every size
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage09::launch_config<stage09::Hopper>, GetParam(), {8, 1, 1024});
}
TEST_P(GpuGemvVariants, TwoCachedGroupsPerCtaMatchCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage09::launch_config<stage09::Config<16, 2, stage09::ALoad::kCached>>, GetParam(),
                          {16, 1, 1024});
}
TEST_P(GpuGemvVariants, Fp16ProductsMatchCpuReference) {
  GEMM_REQUIRE_GPU();
  using Half2 = stage09::Config<16, 1, stage09::ALoad::kNoAllocate, 6, true, stage09::Products::kHalf2>;
  gemm::testing::run_case(stage09::launch_config<Half2>, GetParam(), {8, 1, 1024});
}
TEST_P(GpuGemvVariants, UncappedRegistersMatchCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage09::launch_config<stage09::Config<16, 1, stage09::ALoad::kNoAllocatePrefetch256>>,
                          GetParam(), {8, 1, 1024});
}
TEST_P(GpuGemvVariants, TensorCoreProductsMatchCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage09::launch_mma<stage09::HopperMma>, GetParam(), {8, 1, 1024});
}
TEST_P(GpuGemvVariants, TensorCoreProductsFourWarpsMatchCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage09::launch_mma<stage09::HopperMma4Warps>, GetParam(), {8, 1, 1024});
}
// The balanced plans (WarpPlan): own rows (no K split over warps; a cluster splits K for small M) and
// warps dividing K's steps, up to 7 or 8 warps per CTA.
TEST_P(GpuGemvVariants, OwnRowsSixteenRowWarpsMatchCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage09::launch_config<stage09::HopperOwnRows>, GetParam(), {8, 1, 1024});
}
TEST_P(GpuGemvVariants, OwnRowsTwoWarpsMatchCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage09::launch_config<stage09::HopperOwnRows2Warps>, GetParam(), {8, 1, 1024});
}
TEST_P(GpuGemvVariants, OwnRowsEightRowWarpsMatchCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage09::launch_config<stage09::HopperOwnRows8>, GetParam(), {8, 1, 1024});
}
TEST_P(GpuGemvVariants, BalancedSixteenRowsMatchCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage09::launch_config<stage09::HopperBalanced16Rows>, GetParam(), {16, 1, 1024});
}
TEST_P(GpuGemvVariants, BalancedEightRowsMatchCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(stage09::launch_config<stage09::HopperBalanced>, GetParam(), {8, 1, 1024});
}
INSTANTIATE_TEST_SUITE_P(Shapes, GpuGemvVariants, ::testing::ValuesIn(variant_cases()), gemm::testing::case_name);

// ---- The alignments the contract allows ---------------------------------------------------------------
//
// The contract promises A, SFA, B and SFB 16-byte alignment, C 2-byte (element) alignment, K a
// multiple of 32. What a load sees of that: a 32-byte load of A (sm_100a) meets rows at 16 bytes off
// its alignment when K = 32 mod 64 (every other row, and every other batch when M is odd) or when
// A is only 16-byte aligned; a 16-byte load of A or B, and the 2- and 4-byte loads of the vector's
// scales, are aligned whatever the residue. So each configuration runs every combination of K = 0
// and 32 mod 64, odd and even M, L = 1 and 3, operands aligned as allocated or at the contract's
// least: the residues against both load widths.

// `kLaunch` on the same problem with A, SFA, B and SFB moved 16 bytes past a 32-byte boundary (cudaMalloc
// returns 256-byte aligned memory): aligned as the contract allows and no more.
constexpr int kLeastAlignment = 16;  // common/kinds/nvfp4_gemm.cpp, validate(): A, SFA, B, SFB
template <void (*kLaunch)(const gemm::Nvfp4GemvArgs&, cudaStream_t)>
void launch_least_aligned(const gemm::Nvfp4GemvArgs& args, cudaStream_t stream) {
  gemm::Nvfp4GemvArgs moved = args;
  const uint8_t** operands[] = {&moved.A, &moved.SFA, &moved.B, &moved.SFB};
  const int64_t bytes[] = {gemm::packed_bytes(args.M, args.K, args.L), gemm::sf_bytes(args.M, args.K, args.L),
                           gemm::packed_bytes(1, args.K, args.L), gemm::sf_bytes(1, args.K, args.L)};
  std::vector<gemm::DeviceBuffer<uint8_t>> copies;
  for (int i = 0; i < 4; ++i) {
    copies.emplace_back(size_t(bytes[i]) + kLeastAlignment);
    uint8_t* at = copies.back().get() + kLeastAlignment;
    CUDA_CHECK(cudaMemcpyAsync(at, *operands[i], size_t(bytes[i]), cudaMemcpyDeviceToDevice, stream));
    *operands[i] = at;
  }
  kLaunch(moved, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));  // before the copies are freed
}

std::vector<gemm::testing::GemmCase> alignment_cases() {
  std::vector<gemm::testing::GemmCase> c;
  for (int M : {67, 96})          // odd and even M: with K = 32 mod 64, odd M moves every other batch too
    for (int K : {2048, 2080})    // K = 0 and 32 mod 64: 1024 and 1040 bytes per row
      for (int L : {1, 3})
        c.push_back(gemm::testing::make_case("align", gemm::Tier::kExact, M, 1, K, L));
  return c;
}

// Which launcher a case runs through, and whether its operands are at the contract's least alignment.
struct AlignmentRun {
  const char* name;
  gemm::Launcher launch;
  int c_offset;  // C this many elements past an aligned start (1: 2-byte aligned)
};

const AlignmentRun kAlignmentRuns[] = {
    {"launch", stage09::launch, 0},
    {"launch_least_aligned", launch_least_aligned<stage09::launch>, 1},
    {"chunk32", stage09::launch_config<stage09::Blackwell>, 0},
    {"chunk32_least_aligned", launch_least_aligned<stage09::launch_config<stage09::Blackwell>>, 1},
    {"eight_rows_least_aligned", launch_least_aligned<stage09::launch_config<stage09::Hopper>>, 1},
    {"sixteen_rows_least_aligned", launch_least_aligned<stage09::launch_config<stage09::Hopper16Rows>>, 1},
    {"own_rows", stage09::launch_config<stage09::HopperOwnRows>, 0},
    {"own_rows_least_aligned", launch_least_aligned<stage09::launch_config<stage09::HopperOwnRows>>, 1},
    {"own_rows_two_warps_least_aligned", launch_least_aligned<stage09::launch_config<stage09::HopperOwnRows2Warps>>, 1},
    {"own_rows_eight_rows_least_aligned", launch_least_aligned<stage09::launch_config<stage09::HopperOwnRows8>>, 1},
    {"balanced_sixteen_rows_least_aligned", launch_least_aligned<stage09::launch_config<stage09::HopperBalanced16Rows>>, 1},
    {"balanced_eight_rows_least_aligned", launch_least_aligned<stage09::launch_config<stage09::HopperBalanced>>, 1},
    {"mma", stage09::launch_mma<stage09::HopperMma>, 0},
    {"mma_least_aligned", launch_least_aligned<stage09::launch_mma<stage09::HopperMma>>, 1},
    {"mma_four_warps_least_aligned", launch_least_aligned<stage09::launch_mma<stage09::HopperMma4Warps>>, 1},
};

class GpuGemvAlignment
    : public ::testing::TestWithParam<std::tuple<gemm::testing::GemmCase, AlignmentRun>> {};
TEST_P(GpuGemvAlignment, MatchesCpuReference) {
  GEMM_REQUIRE_GPU();
  const auto& [c, run] = GetParam();
  gemm::testing::run_case(run.launch, c, kTile, run.c_offset);
}
INSTANTIATE_TEST_SUITE_P(Residues, GpuGemvAlignment,
                         ::testing::Combine(::testing::ValuesIn(alignment_cases()), ::testing::ValuesIn(kAlignmentRuns)),
                         [](const auto& i) {
                           return std::get<0>(i.param).name + "_" + std::get<1>(i.param).name;
                         });

// ---- The E2M1 decode: every byte, both nibbles, against common/formats.h -------------------------------

__global__ void decode_all_bytes(uint32_t* out) {
  // Thread t decodes word t of the 64 words holding bytes 0..255 in order.
  const uint32_t t = threadIdx.x;
  const uint32_t w = (4 * t) | ((4 * t + 1) << 8) | ((4 * t + 2) << 16) | ((4 * t + 3) << 24);
  __half2 h[4];
  stage09::decode8(w, h);
  for (int i = 0; i < 4; ++i) out[4 * t + i] = *reinterpret_cast<uint32_t*>(&h[i]);
}

TEST(GpuGemvDecode, EveryByteDecodesToItsTwoValuesTimesTheFactor) {
  GEMM_REQUIRE_GPU();
  gemm::DeviceBuffer<uint32_t> out(256);
  out.fill_bytes(0xFF);
  decode_all_bytes<<<1, 64>>>(out.get());
  CUDA_CHECK_LAUNCH();
  const auto got = out.download();
  // Whatever the pairing of values into half2, word t must yield exactly the 8 values of its 4
  // bytes (as a multiset) times 1 / kDecodeFactor; the dot product pairs A and B the same way. The
  // sm_100a conversion (on a B200, or checked on Hopper in the precondition build) is exact.
  const double factor = stage09::sm100_paths(gemm::gpu_info()) ? 1.0 : 1.0 / 16384.0;
  for (int t = 0; t < 64; ++t) {
    std::multiset<double> want, have;
    for (int b = 0; b < 4; ++b) {
      const uint8_t byte = uint8_t(4 * t + b);
      want.insert(gemm::e2m1_to_float(gemm::e2m1_even(byte)) * factor);
      want.insert(gemm::e2m1_to_float(gemm::e2m1_odd(byte)) * factor);
    }
    for (int i = 0; i < 4; ++i) {
      const uint32_t v = got[4 * t + i];
      have.insert(gemm::half_bits_to_double(uint16_t(v & 0xFFFF)));
      have.insert(gemm::half_bits_to_double(uint16_t(v >> 16)));
    }
    EXPECT_EQ(want, have) << "word " << t;
  }
}

// The integer path: every byte of A's side (lookup4 of the codes and of the codes with flipped signs)
// and of the vector's side (signed4) against twice the values of common/formats.h, nibble by nibble,
// so a swapped nibble order or a wrong sign cannot pass.
__global__ void lookup_all_bytes(uint32_t* out) {
  const uint32_t t = threadIdx.x;  // word t holds bytes 4t .. 4t+3, the codes of 8 values
  const uint32_t w = (4 * t) | ((4 * t + 1) << 8) | ((4 * t + 2) << 16) | ((4 * t + 3) << 24);
  const uint32_t lo = stage09::table_register();
  out[8 * t + 0] = stage09::lookup4(lo, w);  // codes 0-3 (nibbles 0-3)
  out[8 * t + 1] = stage09::lookup4(lo, w ^ stage09::kSignBits);
  out[8 * t + 2] = stage09::lookup4(lo, w >> 16);  // codes 4-7
  out[8 * t + 3] = stage09::lookup4(lo, (w ^ stage09::kSignBits) >> 16);
  out[8 * t + 4] = stage09::signed4(lo, w);
  out[8 * t + 5] = stage09::signed4(lo, w >> 16);
}

TEST(GpuGemvDecode, IntegerLookupGivesTwiceEveryValueWithItsSign) {
  GEMM_REQUIRE_GPU();
  gemm::DeviceBuffer<uint32_t> out(512);  // 6 of every 8 words written; the rest stay poisoned, unread
  out.fill_bytes(0xFF);
  lookup_all_bytes<<<1, 64>>>(out.get());
  CUDA_CHECK_LAUNCH();
  const auto got = out.download();
  auto byte_of = [](uint32_t v, int i) { return int(int8_t(uint8_t(v >> (8 * i)))); };
  for (int t = 0; t < 64; ++t) {
    for (int half = 0; half < 2; ++half) {
      for (int i = 0; i < 4; ++i) {
        const int value = 4 * half + i;  // nibble `value` of word t: byte value / 2, low nibble if even
        const uint8_t byte = uint8_t(4 * t + value / 2);
        const uint8_t code = value % 2 == 0 ? gemm::e2m1_even(byte) : gemm::e2m1_odd(byte);
        const int twice = int(2.0 * gemm::e2m1_to_float(code));
        const int pos = byte_of(got[8 * t + 2 * half], i), neg = byte_of(got[8 * t + 2 * half + 1], i);
        EXPECT_EQ(pos, twice > 0 ? twice : 0) << "word " << t << " value " << value;
        EXPECT_EQ(neg, twice < 0 ? -twice : 0) << "word " << t << " value " << value;
        EXPECT_EQ(byte_of(got[8 * t + 4 + half], i), twice) << "word " << t << " value " << value;
      }
    }
  }
}

// ---- Row groups and the launch plan ---------------------------------------------------------------------

TEST(GemvRowGroups, EightRowsShareOneScaleSectorAndEveryRowIsInOneGroup) {
  std::vector<int> seen(256, 0);
  for (int g = 0; g < 32; ++g) {
    std::set<int64_t> sectors;
    for (int r = 0; r < 8; ++r) {
      const int64_t m = stage09::group_row(g, r);
      ASSERT_LT(m, 256);
      ++seen[m];
      sectors.insert(gemm::sf_offset(m, 0, 64) / 32);  // the 32-byte sector of the row's first scale
    }
    EXPECT_EQ(sectors.size(), 1u) << "group " << g;
  }
  for (int m = 0; m < 256; ++m) EXPECT_EQ(seen[m], 1) << "row " << m;
}

// launch() takes own rows (each warp its 16 rows over all of K) only for a short K with rows for half a
// wave: the one target shape where it led on both Hopper GPUs, and no shape it lost on.
TEST(GemvPlan, OwnRowsOnlyForShortKWithManyRows) {
  auto args = [](int M, int K, int L) {
    gemm::Nvfp4GemvArgs a{};
    a.M = M, a.N = 1, a.K = K, a.L = L;
    return a;
  };
  EXPECT_TRUE(stage09::own_rows(args(7168, 2048, 4), 132));
  EXPECT_TRUE(stage09::own_rows(args(7168, 2048, 4), 148));
  EXPECT_FALSE(stage09::own_rows(args(7168, 16384, 1), 132));  // long K: the split plan
  EXPECT_FALSE(stage09::own_rows(args(4096, 7168, 8), 132));   // mixed: better on the H200 only
  EXPECT_FALSE(stage09::own_rows(args(129, 2048, 1), 132));    // too few rows for half a wave
  EXPECT_FALSE(stage09::own_rows(args(7168, 2080, 4), 132));
}

TEST(GemvPlan, SplitsKOnlyWhenRowsAreFewAndNeverLaunchesAnEmptyGroup) {
  using C = stage09::Hopper;
  const auto big = stage09::plan<C>(7168, 16384, 1, 132);
  EXPECT_EQ(big.splits, 1);
  EXPECT_EQ(big.groups, 7168 / 8);
  // 896 CTAs do not all fit at 4 warps (6 per SM at 80 registers), so the one-wave rule halves the warps.
  EXPECT_EQ(big.warps, 2);
  EXPECT_LE(big.ctas_per_batch, stage09::ctas_per_sm<C>(2) * 132);
  // launch() takes 16 rows per CTA where that still leaves 2 CTAs per SM: 7168 rows do, 4096 x 1 do not.
  auto args = [](int M, int L) { gemm::Nvfp4GemmArgs a; a.M = M; a.N = 1; a.K = 1024; a.L = L; return a; };
  EXPECT_TRUE(stage09::sixteen_rows(args(7168, 1), 132));
  EXPECT_FALSE(stage09::sixteen_rows(args(4096, 1), 132));
  EXPECT_TRUE(stage09::sixteen_rows(args(4096, 2), 132));
  EXPECT_FALSE(stage09::sixteen_rows(args(1, 8), 132));
  const auto big16 = stage09::plan<stage09::Hopper16Rows>(7168, 16384, 1, 132);
  EXPECT_EQ(big16.groups, 7168 / 8);
  EXPECT_EQ(big16.ctas_per_batch, 7168 / 16);
  EXPECT_EQ(stage09::plan<C>(4096, 7168, 8, 132).warps, stage09::kMaxWarps);  // many waves at any width
  const auto one = stage09::plan<C>(1, 65536, 1, 132);
  EXPECT_EQ(one.groups, 1);
  EXPECT_EQ(one.splits, stage09::kMaxSplits);
  EXPECT_EQ(stage09::plan<C>(3, 64, 1, 132).groups, 2);   // rows 0,1 | 2
  EXPECT_EQ(stage09::plan<C>(33, 64, 1, 132).groups, 16);  // row 32 belongs to group 0
  EXPECT_EQ(stage09::plan<C>(129, 64, 1, 132).groups, 17);
  EXPECT_EQ(stage09::plan<C>(4096, 7168, 8, 132).splits, 1);
  EXPECT_EQ(stage09::plan<C>(1, 32, 1, 132).warps, 1);
}

// The balanced plans at the public shapes (132 SMs; without a GPU the register caps give the residency).
TEST(GemvPlan, BalancedPlansLeaveNoWarpIdle) {
  // The stage's plan at (4096, 7168, 8): 7 steps over 4 warps (2/2/2/1), the imbalance these plans remove.
  EXPECT_EQ(stage09::plan<stage09::Hopper16Rows>(4096, 7168, 8, 132).warps, 4);
  // Own rows: no K split over warps where the grid's warps fill the GPU.
  const auto own = stage09::plan<stage09::HopperOwnRows>(4096, 7168, 8, 132);
  EXPECT_TRUE(own.own_rows);
  EXPECT_EQ(own.warps, 4);
  EXPECT_EQ(own.splits, 1);
  EXPECT_EQ(own.ctas_per_batch, 4096 / 64);  // 64 rows per CTA: 4 warps of 16
  const auto own_short = stage09::plan<stage09::HopperOwnRows>(7168, 2048, 4, 132);
  EXPECT_EQ(own_short.splits, 1);
  EXPECT_EQ(own_short.ctas_per_batch, 7168 / 64);
  EXPECT_EQ(stage09::plan<stage09::HopperOwnRows2Warps>(7168, 2048, 4, 132).ctas_per_batch, 7168 / 32);
  EXPECT_EQ(stage09::plan<stage09::HopperOwnRows8>(4096, 7168, 8, 132).ctas_per_batch, 4096 / 32);
  // Few rows: a cluster splits K while twice the CTAs are still resident; fewer warps for fewer groups.
  const auto own_long = stage09::plan<stage09::HopperOwnRows>(7168, 16384, 1, 132);
  EXPECT_EQ(own_long.splits, 4);  // 112 CTAs x 4 = 448 <= 528 resident (4 per SM at 128 registers)
  const auto own_one = stage09::plan<stage09::HopperOwnRows>(1, 65536, 1, 132);
  EXPECT_EQ(own_one.warps, 1);
  EXPECT_EQ(own_one.ctas_per_batch, stage09::kMaxSplits);
  EXPECT_EQ(stage09::plan<stage09::HopperOwnRows>(67, 2048, 1, 132).warps, 4);  // 16 groups: 8 sets of 2
  EXPECT_EQ(stage09::plan<stage09::HopperOwnRows>(3, 64, 1, 132).warps, 1);     // 2 groups: one set
  // Warps dividing the steps: 7 for 7 steps; 2 for 2; at K = 16384 the 4 that keep one wave, not 8.
  EXPECT_EQ(stage09::plan<stage09::HopperBalanced16Rows>(4096, 7168, 8, 132).warps, 7);
  EXPECT_EQ(stage09::plan<stage09::HopperBalanced>(4096, 7168, 8, 132).warps, 7);
  EXPECT_EQ(stage09::plan<stage09::HopperBalanced16Rows>(7168, 2048, 4, 132).warps, 2);
  EXPECT_EQ(stage09::plan<stage09::HopperBalanced16Rows>(7168, 16384, 1, 132).warps, 4);
  EXPECT_EQ(stage09::plan<stage09::HopperBalanced>(7168, 16384, 1, 132).warps, 4);
  EXPECT_EQ(stage09::plan<stage09::HopperBalanced>(4096, 11264, 8, 132).warps, 6);  // 11 steps: 2 each but one
  EXPECT_EQ(stage09::plan<stage09::HopperBalanced>(1, 32, 1, 132).warps, 1);
}

// The tensor-core variant's CTA holds 64 rows, but its plan takes one warp (32 threads) where K has one
// 128-byte step (K <= 256), so the kernel's reduction and store must stride over the rows. Had each
// thread owned one row (threadIdx.x < 64), the rows of local index 32..63 would go unwritten: at
// (129, 160) that is 64 of 129 rows, the first of them row 8 -- what the GPU test saw before the fix.
TEST(GemvPlan, TensorCorePlanCanLaunchFewerThreadsThanRows) {
  using Cfg = stage09::HopperMma;
  const auto p = stage09::plan_mma<Cfg>(129, 160, 1, 132);
  EXPECT_EQ(p.warps, 1);
  EXPECT_EQ(p.splits, 1);
  EXPECT_EQ(p.ctas_per_batch, 3);  // 17 groups of 8 rows, 8 groups per CTA
  EXPECT_EQ(stage09::plan_mma<stage09::HopperMma4Warps>(129, 160, 1, 132).warps, 1);
  EXPECT_GE(stage09::plan_mma<Cfg>(129, 288, 1, 132).warps, 2);  // 2 steps: 64 threads
  int unowned = 0;
  int64_t first_unowned = -1;
  for (int cta = 0; cta < p.ctas_per_batch; ++cta)
    for (int i = p.warps * 32; i < Cfg::kRows; ++i) {
      const int64_t m = stage09::group_row(int64_t(cta) * Cfg::kGroups + i / stage09::kRowsPerGroup,
                                           i % stage09::kRowsPerGroup);
      if (m < 129) {
        ++unowned;
        if (first_unowned < 0 || m < first_unowned) first_unowned = m;
      }
    }
  EXPECT_EQ(unowned, 64);
  EXPECT_EQ(first_unowned, 8);
}

}  // namespace
