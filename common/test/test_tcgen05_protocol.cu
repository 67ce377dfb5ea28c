// The barrier protocol of a pipelined tcgen05 GEMM, broken on purpose. Each broken kernel below is
// wrong on a B200 in a way no single run there is guaranteed to show; under the emulator each must
// trap with its own message, and its fixed twin (the same kernel with the protocol right) must match
// the CPU reference bit for bit. On a B200 the twins run natively; the broken kernels are skipped
// (their behaviour is undefined there).
//
// The kernel: one CTA (cta_group::1, M = 128) or a CTA pair (cta_group::2, M = 256) computes a
// M x 128 tile of D = A B^T over K = k_tiles x 256, through a 2-stage ring:
//   warp 0, lane 0   producer: wait empty[s], arm full[s], TMA A, B, SFA, SFB (16-byte-line maps)
//   warp 1 (leader)  MMA: wait full[s], 4 x (cp SFA, cp SFB, mma), commit -> empty[s] of the pair;
//                    after the last k-tile, commit -> acc_full of the pair
//   warp 2           Tensor Memory allocation and deallocation
//   all 4 warps      epilogue: wait acc_full, tcgen05.ld their 32 lanes, store FP32
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/device_buffer.h"
#include "common/device_info.h"
#include "common/emu/tcgen05_emu_state.h"
#include "common/harness/gemm_tests.h"
#include "common/harness/problems.h"
#include "common/ptx/cluster.cuh"
#include "common/ptx/tcgen05.cuh"
#include "common/ptx/tma.cuh"
#include "common/reference.h"
#include "common/sf_layout.h"
#include "common/swizzle.h"
#include "common/tensor_map.h"

namespace gemm {
namespace {

using namespace gemm::ptx;

// What is broken. kNone is every twin.
enum class Bug : int {
  kNone,
  kMmaIgnoresFull,        // 1. the MMA warp does not wait on full[s] before k-tile 0, whose copy is late
  kPlainArriveOnEmpty,    // 2. the MMA warp releases a stage with a plain arrive, not a commit
  kEpilogueNoWait,        // 3a. the epilogue reads the accumulator without waiting for the final commit
  kEpilogueEarlyBarrier,  // 3b. ... after waiting on a barrier committed after k-tile 0, not the final one
  kSingleSfColumns,       // 4. one set of scale columns for every k-step (strict mode)
  kFollowerNoWait,        // 5. cta_group::2: the odd CTA's epilogue does not wait for the final commit
  kPlainWaitOnAccFull,    // a plain mbarrier wait (not wait_commit) on the barrier a commit arrives on
  kNoFinalCommit,         // the last k-tile's work is never committed, and the CTA deallocates
  kDeallocPending,        // committed, never waited for, deallocated
  kOddCtaLaneOffset,      // not a bug: the odd CTA of a pair reads its lanes as 128 + 32 w
  kEvenCtaLaneOffset,     // the even CTA uses 128 + 32 w: not an address the hardware is known to take
  kLateOddAlloc,          // not a bug: the odd CTA allocates 50 ms after the even one
};

constexpr int kStages = 2;
constexpr int kBN = 128;                 // N of the pair's tile
constexpr int kTileK = 256;              // values of k per stage: one 128-byte swizzle row
constexpr int kStepsPerTile = kTileK / 64;
constexpr uint32_t kSfColumn = 256;      // D in columns [0, 128); scales from here
constexpr uint32_t kSfColumnsPerStage = 32;
constexpr unsigned long long kLateCopyNs = 100'000'000ull;  // bug 1: the first copy starts 100 ms late

struct Params {
  int K;
  float* out;  // (128 * cta_group) x kBN
  Bug bug;
};

template <int kCtaGroup>
struct Stage {
  alignas(1024) uint8_t a[128 * 128];
  alignas(1024) uint8_t b[kBN / kCtaGroup * 128];
  alignas(128) uint8_t sfa[kStepsPerTile * 512];
  alignas(128) uint8_t sfb[kStepsPerTile * 512];
};

template <int kCtaGroup>
struct Smem {
  Stage<kCtaGroup> stage[kStages];
  uint64_t full[kStages], empty[kStages], acc_full;
  uint64_t first_tile_done;      // bug 3b: a commit after k-tile 0 arrives here
  volatile uint32_t odd_cta_read;  // bug 5: the odd CTA has read its accumulator
  uint32_t tmem;
  volatile uint32_t all_issued;  // set by the MMA warp: only the broken epilogues spin on it
};

__device__ void spin_ns(unsigned long long ns) {
  const unsigned long long start = global_timer_ns();
  while (global_timer_ns() - start < ns) {
  }
}

// Spins until the flag at this address in CTA `rank` of the cluster is nonzero.
__device__ void wait_flag(const volatile uint32_t* flag, uint32_t rank) {
  const uint32_t addr = map_to_rank(smem_addr(const_cast<const uint32_t*>(flag)), rank);
  uint32_t v = 0;
  do {
    asm volatile("ld.acquire.cluster.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  } while (v == 0);
}

template <int kCtaGroup>
__global__ void __launch_bounds__(128) pipeline_kernel(const __grid_constant__ CUtensorMap map_a,
                                                       const __grid_constant__ CUtensorMap map_b,
                                                       const __grid_constant__ CUtensorMap map_sfa,
                                                       const __grid_constant__ CUtensorMap map_sfb, Params p) {
  extern __shared__ unsigned char raw[];
  Smem<kCtaGroup>& s = *reinterpret_cast<Smem<kCtaGroup>*>(align_to_swizzle_atom(raw));
  const uint32_t rank = kCtaGroup == 2 ? cluster_ctarank() : 0;
  const bool leader = rank == 0;
  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  const uint16_t pair_mask = kCtaGroup == 2 ? 0x3 : 0x1;
  const int k_tiles = p.K / kTileK;
  const int b_rows = kBN / kCtaGroup;
  const uint32_t stage_bytes = uint32_t(128 * 128 + b_rows * 128 + 2 * kStepsPerTile * 512);
  const int sf_lines_per_row_block = int(sf_padded_cols(p.K) / kSfTileCols) * 32;

  // Stage buffers hold a pattern no operand has, so an MMA that reads them before TMA lands cannot
  // read the right bytes by accident (left over from an earlier kernel on this SM).
  for (int i = int(threadIdx.x); i < int(sizeof(s.stage)) / 4; i += blockDim.x)
    reinterpret_cast<uint32_t*>(s.stage)[i] = 0xA5A5A5A5u ^ uint32_t(i);
  fence_proxy_async_shared();  // those generic writes come before the async-proxy ones (TMA, tcgen05)
  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) {
      mbarrier_init(&s.full[i], 1);
      mbarrier_init(&s.empty[i], 1);
    }
    mbarrier_init(&s.acc_full, 1);
    mbarrier_init(&s.first_tile_done, 1);
    s.all_issued = 0;
    s.odd_cta_read = 0;
    fence_mbarrier_init();
  }
  __syncthreads();
  if constexpr (kCtaGroup == 2) cluster_sync();
  if (warp == 2) {
    if (p.bug == Bug::kLateOddAlloc && rank == 1 && lane == 0) spin_ns(50'000'000ull);
    __syncwarp();
    tcgen05_alloc<kCtaGroup>(&s.tmem, 512);
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  if constexpr (kCtaGroup == 2) cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem = s.tmem;

  if (warp == 0 && lane == 0) {  // producer
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int st = kt % kStages;
      wait_commit(&s.empty[st], ((kt / kStages) & 1) ^ 1, "empty", st);
      if (leader) mbarrier_arrive_expect_tx(&s.full[st], kCtaGroup * stage_bytes);
      if (p.bug == Bug::kMmaIgnoresFull && kt == 0) spin_ns(kLateCopyNs);
      Stage<kCtaGroup>& b = s.stage[st];
      const int sfa_line = int(rank) * sf_lines_per_row_block + kt * kStepsPerTile * 32;
      const int sfb_line = kt * kStepsPerTile * 32;
      if constexpr (kCtaGroup == 1) {
        tma_load_3d(b.a, &map_a, kt * 128, 0, 0, &s.full[st]);
        tma_load_3d(b.b, &map_b, kt * 128, 0, 0, &s.full[st]);
        tma_load_3d(b.sfa, &map_sfa, 0, sfa_line, 0, &s.full[st]);
        tma_load_3d(b.sfb, &map_sfb, 0, sfb_line, 0, &s.full[st]);
        // Bug 1: the producer makes sure the late data has landed before it next looks at a commit.
        if (p.bug == Bug::kMmaIgnoresFull && kt == 0) mbarrier_wait_bounded(&s.full[0], 0, wait_timeout_ns(), "full", 0);
      } else {
        tma_load_3d_cta_group2(b.a, &map_a, kt * 128, 128 * int(rank), 0, &s.full[st], 128 * 128);
        tma_load_3d_cta_group2(b.b, &map_b, kt * 128, b_rows * int(rank), 0, &s.full[st], uint32_t(b_rows * 128));
        tma_load_3d_cta_group2(b.sfa, &map_sfa, 0, sfa_line, 0, &s.full[st], kStepsPerTile * 512);
        tma_load_3d_cta_group2(b.sfb, &map_sfb, 0, sfb_line, 0, &s.full[st], kStepsPerTile * 512);
      }
    }
  }
  if (warp == 1 && leader) {  // MMA warp, all 32 lanes (one elected lane issues on a B200)
    const uint32_t idesc = tcgen05::nvfp4_instr_descriptor(128 * kCtaGroup, kBN);
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int st = kt % kStages;
      if (!(p.bug == Bug::kMmaIgnoresFull && kt == 0)) mbarrier_wait_bounded(&s.full[st], (kt / kStages) & 1, wait_timeout_ns(), "full", st);
      tcgen05_fence_after_thread_sync();
      const Stage<kCtaGroup>& b = s.stage[st];
      for (int j = 0; j < kStepsPerTile; ++j) {
        const bool single = p.bug == Bug::kSingleSfColumns;
        const uint32_t sfa = kSfColumn + (single ? 0 : st * kSfColumnsPerStage + 4 * j);
        const uint32_t sfb = kSfColumn + 16 + (single ? 0 : st * kSfColumnsPerStage + 4 * j);
        tcgen05_cp_32x128b_warpx4_warp<kCtaGroup>(tmem + sfa, tcgen05::sf_atom_descriptor(smem_addr(b.sfa + 512 * j)));
        tcgen05_cp_32x128b_warpx4_warp<kCtaGroup>(tmem + sfb, tcgen05::sf_atom_descriptor(smem_addr(b.sfb + 512 * j)));
        const uint64_t a_desc = tcgen05::advance_start(tcgen05::kmajor_sw128_descriptor(smem_addr(b.a)), 32 * j);
        const uint64_t b_desc = tcgen05::advance_start(tcgen05::kmajor_sw128_descriptor(smem_addr(b.b)), 32 * j);
        tcgen05_mma_nvfp4_warp<kCtaGroup>(tmem, a_desc, b_desc, idesc, tmem + sfa, tmem + sfb, kt > 0 || j > 0);
      }
      const bool last = kt == k_tiles - 1;
      if (p.bug == Bug::kEpilogueEarlyBarrier && kt == 0) tcgen05_commit_multicast_warp<kCtaGroup>(&s.first_tile_done, pair_mask);
      if (p.bug == Bug::kPlainArriveOnEmpty) {
        __syncwarp();
        if (lane == 0)
          for (uint32_t r = 0; r < uint32_t(kCtaGroup); ++r) mbarrier_arrive_cluster(&s.empty[st], r);
      } else if (!(last && p.bug == Bug::kNoFinalCommit)) {
        tcgen05_commit_multicast_warp<kCtaGroup>(&s.empty[st], pair_mask);
      }
      if (last && p.bug != Bug::kNoFinalCommit) tcgen05_commit_multicast_warp<kCtaGroup>(&s.acc_full, pair_mask);
    }
    __syncwarp();
    if (lane == 0) s.all_issued = 1;
  }
  __syncwarp();

  // Epilogue. The broken variants wait for the wrong thing, or for a plain flag that says "all work
  // was issued": the moment a B200 would race, made certain.
  auto wait_all_issued = [&] {
    if (lane == 0) wait_flag(&s.all_issued, 0);
    __syncwarp();
  };
  const bool skip_ld = p.bug == Bug::kNoFinalCommit || p.bug == Bug::kDeallocPending;
  if (p.bug == Bug::kEpilogueNoWait || skip_ld || (p.bug == Bug::kFollowerNoWait && rank == 1)) {
    wait_all_issued();
  } else if (p.bug == Bug::kEpilogueEarlyBarrier) {
    wait_commit(&s.first_tile_done, 0, "first_tile_done", 0);
    wait_all_issued();
  } else if (p.bug == Bug::kPlainWaitOnAccFull) {
    mbarrier_wait_bounded(&s.acc_full, 0, wait_timeout_ns(), "acc_full", 0);
  } else {
    // Bug 5: the even CTA observes the final commit only after the odd one has read (so the odd
    // CTA's read cannot be made right by the even CTA's observation).
    if (p.bug == Bug::kFollowerNoWait && rank == 0) wait_flag(&s.odd_cta_read, 1);
    wait_commit(&s.acc_full, 0, "acc_full", 0);
  }
  tcgen05_fence_after_thread_sync();
  if (!skip_ld) {
    const uint32_t lane_field = 32 * uint32_t(warp) + (((p.bug == Bug::kOddCtaLaneOffset && rank == 1) ||
                                                         (p.bug == Bug::kEvenCtaLaneOffset && rank == 0)) ? 128 : 0);
    const int row = 128 * int(rank) + 32 * warp + lane;
    for (int c = 0; c < kBN; c += 32) {
      uint32_t r[32];
      tcgen05_ld_32x32b<32>(tmem + tcgen05::tmem_address(lane_field, uint32_t(c)), r);
      tcgen05_wait_ld();
      for (int i = 0; i < 32; ++i) p.out[row * kBN + c + i] = __uint_as_float(r[i]);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) s.odd_cta_read = 1;
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  if constexpr (kCtaGroup == 2) cluster_sync();
  if (warp == 2) tcgen05_dealloc<kCtaGroup>(tmem, 512);
}

struct PipelineRun {
  int64_t mismatches = -1;
  size_t outputs = 0;
};

// Builds the problem, launches the kernel, compares with the CPU reference (exact tier: bit for bit).
template <int kCtaGroup>
PipelineRun run_pipeline(Bug bug, int k_tiles) {
  tcgen05::prepare_launch();
  const int M = 128 * kCtaGroup, K = k_tiles * kTileK;
  const HostNvfp4Problem prob = make_nvfp4_problem(M, kBN, K, 1, Tier::kExact, seed_for("protocol" + std::to_string(K)));
  DeviceBuffer<uint8_t> A(prob.a.data), SFA(prob.a.sf), B(prob.b.data), SFB(prob.b.sf);
  DeviceBuffer<float> out(size_t(M) * kBN);
  out.fill_bytes(0xFF);
  const CUtensorMap ma = encode_tensor_map(plan_packed_operand(A.get(), M, K, 1, 128, 128));
  const CUtensorMap mb = encode_tensor_map(plan_packed_operand(B.get(), kBN, K, 1, kBN / kCtaGroup, 128));
  const CUtensorMap msfa = encode_tensor_map(plan_sf_lines(SFA.get(), M, K, 1, kStepsPerTile * 32));
  const CUtensorMap msfb = encode_tensor_map(plan_sf_lines(SFB.get(), kBN, K, 1, kStepsPerTile * 32));
  const int smem = int(sizeof(Smem<kCtaGroup>)) + 1024;
  CUDA_CHECK(cudaFuncSetAttribute(pipeline_kernel<kCtaGroup>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(kCtaGroup);
  cfg.blockDim = dim3(128);
  cfg.dynamicSmemBytes = size_t(smem);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = kCtaGroup;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, pipeline_kernel<kCtaGroup>, ma, mb, msfa, msfb, Params{K, out.get(), bug}));
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> got = out.download();
  const ReferenceOutput ref = reference_gemm(prob.host_args());
  PipelineRun r;
  r.outputs = got.size();
  r.mismatches = 0;
  for (size_t i = 0; i < got.size(); ++i) r.mismatches += !(double(got[i]) == ref.value[i]);
  return r;
}

// In the death tests' child: device printf (the emulator's trap message) goes to stdout; send it to
// stderr, which is what a death test matches.
// Strict mode is on only for the bug it exists for: the others must be caught by the model of
// asynchrony alone (with strict mode on, bugs 1 and 2 would first show as scale columns refilled
// early, which they also are).
template <int kCtaGroup>
[[noreturn]] void run_broken_and_exit(Bug bug, int k_tiles) {
  std::fflush(stdout);
  dup2(2, 1);
  emu::set_strict(bug == Bug::kSingleSfColumns);
  try {
    run_pipeline<kCtaGroup>(bug, k_tiles);
  } catch (const std::exception&) {  // the kernel's failure; reported below
  }
  testing::exit_with_kernel_status();
}

constexpr int kKTiles = 5;  // more k-tiles than stages: every stage is refilled at least once

// ---- The fixed twins, and what is not a bug --------------------------------------------------------

struct TwinCase {
  const char* name;
  int cta_group;
  Bug bug;
};

class GpuTcgen05Protocol : public ::testing::TestWithParam<TwinCase> {};

TEST_P(GpuTcgen05Protocol, CorrectProtocolMatchesTheReferenceBitForBit) {
  GEMM_REQUIRE_GPU();
  const TwinCase c = GetParam();
  const PipelineRun r = c.cta_group == 1 ? run_pipeline<1>(c.bug, kKTiles) : run_pipeline<2>(c.bug, kKTiles);
  EXPECT_EQ(r.mismatches, 0) << "of " << r.outputs;
  EXPECT_EQ(emu::allocated_units(), 0) << "Tensor Memory left allocated";
}

INSTANTIATE_TEST_SUITE_P(
    Twins, GpuTcgen05Protocol,
    ::testing::Values(TwinCase{"cta_group1", 1, Bug::kNone}, TwinCase{"cta_group2", 2, Bug::kNone},
                      TwinCase{"cta_group2_odd_cta_reads_lanes_128_plus", 2, Bug::kOddCtaLaneOffset},
                      TwinCase{"cta_group2_odd_cta_allocates_late", 2, Bug::kLateOddAlloc}),
    [](const ::testing::TestParamInfo<TwinCase>& i) { return std::string(i.param.name); });

// Strict mode is what flags single-buffered scale columns; without it the emulator, like the
// in-order hardware, computes the right result.
TEST(GpuTcgen05ProtocolStrictness, SingleBufferedScaleColumnsAreExactWithoutStrictMode) {
  GEMM_REQUIRE_GPU();
  if (gpu_info().tcgen05_native()) GTEST_SKIP() << "strict mode is the emulator's";
  emu::set_strict(false);
  const PipelineRun r = run_pipeline<1>(Bug::kSingleSfColumns, kKTiles);
  emu::set_strict(true);
  EXPECT_EQ(r.mismatches, 0) << "of " << r.outputs;
}

// ---- The broken kernels trap, each with its message --------------------------------------------------

struct BrokenCase {
  const char* name;
  int cta_group;
  Bug bug;
  const char* message;  // a regular expression the trap message must match
};

class GpuTcgen05ProtocolDeathTest : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(GpuTcgen05ProtocolDeathTest, TrapsWithItsMessage) {
  GEMM_REQUIRE_GPU();
  if (gpu_info().tcgen05_native()) GTEST_SKIP() << "a broken protocol is undefined behaviour on the hardware";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const BrokenCase c = GetParam();
  if (c.cta_group == 1)
    EXPECT_EXIT(run_broken_and_exit<1>(c.bug, kKTiles), ::testing::ExitedWithCode(testing::kKernelFailedExit), c.message);
  else
    EXPECT_EXIT(run_broken_and_exit<2>(c.bug, kKTiles), ::testing::ExitedWithCode(testing::kKernelFailedExit), c.message);
}

const BrokenCase kBroken[] = {
        BrokenCase{"1_mma_issued_before_its_data_landed", 1, Bug::kMmaIgnoresFull,
                   "HAZARD: .* changed in shared memory between issue and completion: tcgen05\\.cp #1 \\(k-step 0,"
                   ".*found at the wait on barrier 'empty' \\[0\\]"},
        BrokenCase{"2_stage_refilled_after_a_plain_arrive", 1, Bug::kPlainArriveOnEmpty,
                   "HAZARD: .* changed in shared memory between issue and completion: tcgen05\\.cp #1 \\(k-step 0,"
                   ".*found at the wait on barrier 'acc_full' \\[0\\]"},
        BrokenCase{"3a_accumulator_read_without_waiting", 1, Bug::kEpilogueNoWait,
                   "HAZARD: tcgen05.ld of a column with a pending write.*tcgen05.mma #[0-9]+ \\(k-step 19,"},
        BrokenCase{"3b_accumulator_read_after_an_earlier_commit", 1, Bug::kEpilogueEarlyBarrier,
                   "HAZARD: tcgen05.ld of a column with a pending write.*tcgen05.mma #[0-9]+ \\(k-step 19,"},
        BrokenCase{"4_single_buffered_scale_columns", 1, Bug::kSingleSfColumns,
                   "HAZARD: tcgen05.cp overwrites scale-factor columns that an issued mma still reads.*strict mode.*"
                   "tcgen05.mma #[0-9]+ \\(k-step 0,"},
        BrokenCase{"5_pair_odd_cta_reads_without_waiting", 2, Bug::kFollowerNoWait,
                   "HAZARD: tcgen05.ld of a column with a pending write.*of CTA rank 1; found at tcgen05.ld"},
        BrokenCase{"plain_wait_on_a_commit_barrier", 1, Bug::kPlainWaitOnAccFull,
                   "HAZARD: tcgen05.ld of a column with a pending write"},
        BrokenCase{"work_never_committed", 1, Bug::kNoFinalCommit,
                   "HAZARD: the kernel ends with work never committed.*found at tcgen05.dealloc"},
        BrokenCase{"dealloc_with_pending_work", 1, Bug::kDeallocPending,
                   "HAZARD: dealloc of Tensor Memory columns with pending work"},
        BrokenCase{"even_cta_reads_lanes_128_plus", 2, Bug::kEvenCtaLaneOffset,
                   "tcgen05.ld: a warp may only access the 32 lanes of its quadrant"}};

INSTANTIATE_TEST_SUITE_P(Broken, GpuTcgen05ProtocolDeathTest, ::testing::ValuesIn(kBroken),
                         [](const ::testing::TestParamInfo<BrokenCase>& i) { return std::string(i.param.name); });

// Not run by default: runs the broken kernel GEMM_TRAP_CASE=<name> in this process, so its trap
// message can be read (docs/emulator.md lists them):
//   GEMM_TRAP_CASE=3a_accumulator_read_without_waiting ./build/common/test_common \
//       --gtest_also_run_disabled_tests --gtest_filter='*ShowTrapMessage*'
TEST(DISABLED_GpuTcgen05Protocol, ShowTrapMessage) {
  GEMM_REQUIRE_GPU();
  const char* name = std::getenv("GEMM_TRAP_CASE");
  ASSERT_NE(name, nullptr) << "set GEMM_TRAP_CASE to one of the Broken/ cases";
  for (const BrokenCase& c : kBroken)
    if (std::string(name) == c.name) {
      if (c.cta_group == 1) run_broken_and_exit<1>(c.bug, kKTiles);
      run_broken_and_exit<2>(c.bug, kKTiles);
    }
  FAIL() << "no broken case named " << name;
}

}  // namespace
}  // namespace gemm
