// Stage 08 against the CPU reference: stage 07's cases (the common NVFP4 cases, every boundary of the
// 256 x 128 tile, the K sweep, forced schedules, both epilogue paths, guard bytes), plus what split-K
// adds: K split in even and uneven parts, several splits of a tile on one pair, the same bits on every
// run, four streams launching at once (each with its own workspace), a workspace that grows under a
// CUDA graph captured before, and the schedule and the split choice on the CPU. On Hopper the tcgen05
// instructions run through the emulator.
#include "kernel.cuh"

#include <algorithm>
#include <functional>
#include <string>
#include <memory>
#include <vector>

#include "common/device_buffer.h"
#include "common/emu/tcgen05_emu_state.h"
#include "common/harness/compare.h"
#include "common/harness/gemm_tests.h"
#include "common/reference.h"

namespace {

using gemm::Tier;
using gemm::testing::GemmCase;
constexpr gemm::testing::Tile kTile{stage08::kBM, stage08::kBN, stage08::kTileK};

using gemm::testing::make_case;

std::vector<GemmCase> cases() {
  auto c = gemm::testing::kind_cases(stage08::kStage, kTile);
  for (int M : {1, 127, 128, 129, 255, 256, 257})
    for (int N : {1, 16, 17, 127, 128, 129, 255, 257}) c.push_back(make_case("tail", Tier::kExact, M, N, 160));
  const int T = stage08::kTileK, S = stage08::kSlots;
  for (int K : {32, 64, 96, T, S * T, (S + 1) * T + 32, 4 * S * T + 96})
    for (Tier tier : {Tier::kExact, Tier::kRealistic}) c.push_back(make_case("pipeline", tier, 130, 260, K));
  // Fewer tiles than pairs: the schedule splits K (32 tiles, 28 k-tiles).
  for (Tier tier : {Tier::kExact, Tier::kRealistic}) c.push_back(make_case("split", tier, 128, 4096, 7168));
  return c;
}

GEMM_STAGE_TESTS(Nvfp4SplitK, stage08::kStage, stage08::launch, cases(), kTile)

// ---- Forced schedules ---------------------------------------------------------------------------------

void one_pair(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage08::launch_with(a, s, {1, 0, {}}); }
void five_pairs(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage08::launch_with(a, s, {5, 0, {}}); }
void split3(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage08::launch_with(a, s, {0, 3, {}}); }
void split3_two_pairs(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage08::launch_with(a, s, {2, 3, {}}); }
void split4_one_pair(const gemm::Nvfp4GemmArgs& a, cudaStream_t s) { stage08::launch_with(a, s, {1, 4, {}}); }

struct ForcedCase {
  const char* name;
  gemm::Launcher launch;
  GemmCase shape;
};

class GpuNvfp4SplitKSchedule : public ::testing::TestWithParam<ForcedCase> {};
TEST_P(GpuNvfp4SplitKSchedule, MatchesCpuReference) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case(GetParam().launch, GetParam().shape, kTile);
}
INSTANTIATE_TEST_SUITE_P(
    Forced, GpuNvfp4SplitKSchedule,
    ::testing::Values(
        ForcedCase{"one_pair_many_units", one_pair, make_case("one_pair", Tier::kExact, 1000, 700, 512)},
        ForcedCase{"batches_crossed", five_pairs, make_case("batches", Tier::kExact, 300, 200, 288, 3)},
        // K split in 3 uneven parts (7 k-tiles: 2, 2, 3), with the tiles' splits on different pairs
        // and, with two pairs, one pair doing several splits of a tile.
        ForcedCase{"split_uneven", split3, make_case("split3", Tier::kExact, 129, 300, 7 * 256)},
        ForcedCase{"split_uneven_two_pairs", split3_two_pairs,
                   make_case("split3_2p", Tier::kRealistic, 257, 257, 7 * 256 - 32, 2)},
        // One pair runs every split of every tile, one after the other: the last split of a tile is
        // always this pair, and the others' partials were written by its own earlier units.
        ForcedCase{"split_one_pair_direct_store", split4_one_pair,
                   make_case("split4_1p", Tier::kExact, 200, 131, 4 * 256)}),
    [](const ::testing::TestParamInfo<ForcedCase>& i) { return std::string(i.param.name); });

// Guard bytes around C, split K on both epilogue paths.
struct GuardCase {
  const char* name;
  GemmCase shape;
  int c_offset;
};
class GpuNvfp4SplitKGuards : public ::testing::TestWithParam<GuardCase> {};
TEST_P(GpuNvfp4SplitKGuards, WritesCAndNothingElse) {
  GEMM_REQUIRE_GPU();
  gemm::testing::run_case_with_guards(split3, GetParam().shape, kTile, GetParam().c_offset);
}
INSTANTIATE_TEST_SUITE_P(
    Paths, GpuNvfp4SplitKGuards,
    ::testing::Values(GuardCase{"tma_tails", make_case("guard_tma", Tier::kExact, 129, 136, 768), 0},
                      GuardCase{"direct_odd_n", make_case("guard_direct", Tier::kExact, 129, 131, 800), 0},
                      GuardCase{"direct_misaligned_c", make_case("guard_direct_c", Tier::kRealistic, 200, 64, 768, 2), 1}),
    [](const ::testing::TestParamInfo<GuardCase>& i) { return std::string(i.param.name); });

// ---- The reduction: determinism, concurrency, graphs --------------------------------------------------

// One problem on the device with its CPU reference, for the tests below.
struct Problem {
  gemm::HostNvfp4Problem host;
  gemm::DeviceBuffer<uint8_t> A, SFA, B, SFB;
  gemm::DeviceBuffer<uint16_t> C;
  gemm::Nvfp4GemmArgs args;
  GemmCase c;
  gemm::ReferenceOutput ref;  // computed once: the tests below compare many runs with it
  explicit Problem(const GemmCase& gc)
      : host(gemm::make_nvfp4_problem(gc.shape.M, gc.shape.N, gc.shape.K, gc.shape.L, gc.tier, gemm::seed_for(gc.name))),
        A(host.a.data), SFA(host.a.sf), B(host.b.data), SFB(host.b.sf), C(size_t(gc.shape.M) * gc.shape.N * gc.shape.L), c(gc),
        ref(gemm::reference_gemm(host.host_args())) {
    args = {gc.shape.M, gc.shape.N, gc.shape.K, gc.shape.L, A.get(), SFA.get(), B.get(), SFB.get(), host.alpha,
            reinterpret_cast<__half*>(C.get())};
  }
  void expect_exact(const std::string& when) const {
    const gemm::CompareResult r = gemm::compare_fp16(C.download(), ref, {c.shape.M, c.shape.N, c.shape.K, c.shape.L, kTile.m, kTile.n}, c.tier);
    EXPECT_TRUE(r.ok()) << when << ": " << r.describe();
  }
};

TEST(GpuNvfp4SplitKDeterminism, SplitKGivesTheSameBitsEveryRun) {
  GEMM_REQUIRE_GPU();
  Problem p(make_case("determinism", Tier::kRealistic, 128, 4096, 7168));  // the benchmark shape the model splits
  const stage08::Schedule s = stage08::make_schedule(p.args, stage08::resident_pairs());
  ASSERT_GT(s.splits, 1) << "this shape must split K";
  std::vector<uint16_t> first;
  for (int run = 0; run < 4; ++run) {
    p.C.fill_bytes(0xFF);
    stage08::launch(p.args, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    if (run == 0) p.expect_exact("run 0");  // within the realistic tier's tolerance, every output written
    if (run == 0) first = p.C.download();
    else EXPECT_EQ(p.C.download(), first) << "run " << run << " differs from run 0";
  }
  EXPECT_EQ(gemm::emu::allocated_units(), 0);
}

// Four non-blocking streams launch split-K GEMMs at once, 100 times over, both epilogue paths and
// different sizes. A workspace shared between streams would mix counters and partials of concurrent
// launches: a wrong or missing tile, or a spin that never ends. Every result must be exact.
TEST(GpuNvfp4SplitKStreams, FourStreamsAtOnceEveryResultExact) {
  GEMM_REQUIRE_GPU();
  constexpr int kStreams = 4, kRepeats = 100;
  const GemmCase shapes[kStreams] = {make_case("streams0", Tier::kExact, 200, 136, 768),
                                     make_case("streams1", Tier::kExact, 129, 264, 1024),
                                     make_case("streams2", Tier::kExact, 255, 131, 768),
                                     make_case("streams3", Tier::kExact, 60, 200, 512, 2)};
  const int splits[kStreams] = {3, 4, 3, 2};
  std::vector<std::unique_ptr<Problem>> problems;
  cudaStream_t streams[kStreams];
  for (int i = 0; i < kStreams; ++i) {
    problems.push_back(std::make_unique<Problem>(shapes[i]));
    CUDA_CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
  }
  for (int rep = 0; rep < kRepeats; ++rep) {
    for (int i = 0; i < kStreams; ++i) {
      CUDA_CHECK(cudaMemsetAsync(problems[i]->C.get(), 0xFF, problems[i]->C.bytes(), streams[i]));
      stage08::launch_with(problems[i]->args, streams[i], {0, splits[i], {}});
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < kStreams; ++i) problems[i]->expect_exact("repeat " + std::to_string(rep) + ", stream " + std::to_string(i));
    if (::testing::Test::HasFailure()) break;
  }
  for (cudaStream_t s : streams) CUDA_CHECK(cudaStreamDestroy(s));
}

// One stream, problems of different tile counts one after another: a launch's counters must never lie
// where an earlier launch wrote partials (a stale counter leaves a tile unwritten), also when the
// counters outgrow their region (more than 256 tiles).
TEST(GpuNvfp4SplitKStreams, ProblemsOfEverySizeOnOneStream) {
  GEMM_REQUIRE_GPU();
  Problem few(make_case("sizes_few", Tier::kExact, 128, 264, 768));          // 3 tiles
  Problem more(make_case("sizes_more", Tier::kExact, 129, 4096, 512));       // 32 tiles
  Problem most(make_case("sizes_most", Tier::kExact, 100, 300 * 128, 512));  // 300 tiles
  for (Problem* p : {&few, &more, &few, &most, &more, &few}) {
    p->C.fill_bytes(0xFF);
    stage08::launch_with(p->args, nullptr, {0, 2, {}});
    CUDA_CHECK(cudaDeviceSynchronize());
    p->expect_exact(p->c.name);
  }
}

// Captures what `launch` enqueues on `stream` into an executable graph; the capture always ends, so a
// launch that throws leaves the stream usable. Returns nullptr (and the exception) when it threw.
cudaGraphExec_t capture(cudaStream_t stream, const std::function<void()>& launch, std::string* error) {
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    launch();
  } catch (const std::exception& e) {
    *error = e.what();
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  cudaGraphExec_t exec = nullptr;
  if (error->empty() && ended == cudaSuccess) CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  if (graph) cudaGraphDestroy(graph);
  if (ended != cudaSuccess && error->empty()) *error = cudaGetErrorString(ended);
  cudaGetLastError();
  return exec;
}

// A graph captured on a stream keeps the workspace the stream had then. The workspace grows after the
// capture (a larger problem on the same stream); the graph, replayed, must still find its workspace
// (kept, not freed) with its counters at zero, and the larger launch must be exact too.
TEST(GpuNvfp4SplitKGraphs, GraphCapturedBeforeTheWorkspaceGrewStillWorks) {
  GEMM_REQUIRE_GPU();
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Problem small(make_case("graph_small", Tier::kExact, 128, 136, 512));
  Problem large(make_case("graph_large", Tier::kExact, 512, 1024, 1024));  // 16 tiles x 4 splits: > 1 MB
  const stage08::LaunchOptions small_opts{0, 2, {}}, large_opts{0, 4, {}};
  CUDA_CHECK(cudaMemsetAsync(small.C.get(), 0xFF, small.C.bytes(), stream));
  stage08::launch_with(small.args, stream, small_opts);  // 1: allocates this stream's workspace
  CUDA_CHECK(cudaStreamSynchronize(stream));
  small.expect_exact("first launch");

  std::string error;
  cudaGraphExec_t exec = capture(stream, [&] { stage08::launch_with(small.args, stream, small_opts); }, &error);
  ASSERT_NE(exec, nullptr) << error;
  // A capture that would have to grow the workspace is refused with a clear message.
  std::string refused;
  EXPECT_EQ(capture(stream, [&] { stage08::launch_with(large.args, stream, large_opts); }, &refused), nullptr);
  EXPECT_NE(refused.find("cannot happen during a capture"), std::string::npos) << refused;

  // Poisoned on `stream`: fill_bytes runs on the legacy stream, which a non-blocking stream does not
  // wait for (a poison landing after the kernel's stores failed this test once under ctest -j 16).
  CUDA_CHECK(cudaMemsetAsync(large.C.get(), 0xFF, large.C.bytes(), stream));
  stage08::launch_with(large.args, stream, large_opts);  // 2: the workspace grows
  CUDA_CHECK(cudaStreamSynchronize(stream));
  large.expect_exact("the launch that grew the workspace");

  for (int replay = 0; replay < 3; ++replay) {  // 3: the graph captured before the growth
    CUDA_CHECK(cudaMemsetAsync(small.C.get(), 0xFF, small.C.bytes(), stream));
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    small.expect_exact("graph replay " + std::to_string(replay));
  }
  CUDA_CHECK(cudaMemsetAsync(large.C.get(), 0xFF, large.C.bytes(), stream));
  stage08::launch_with(large.args, stream, large_opts);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  large.expect_exact("a launch after the replays");
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaStreamDestroy(stream));
}

// ---- The schedule and the split choice (CPU) ------------------------------------------------------------

TEST(SplitKSchedule, EveryTileAndKTileIsCoveredExactlyOnce) {
  auto* base = reinterpret_cast<const uint8_t*>(0x10000);
  const gemm::Nvfp4GemmArgs a{1000, 900, 7 * 256 + 64, 2, base, base, base, base, 1.0f, nullptr};
  for (int splits : {1, 3, 5})
    for (int pairs : {1, 7, 74}) {
      const stage08::Schedule s = stage08::make_schedule(a, pairs, {0, splits, {}});
      ASSERT_EQ(s.splits, splits);
      ASSERT_EQ(s.k_tiles, 8);
      std::vector<int> covered(size_t(s.tiles_m) * s.tiles_n * s.L * s.k_tiles, 0);
      for (int p = 0; p < s.pairs; ++p)
        for (int u = p; u < s.units; u += s.pairs) {
          const stage08::Unit w = stage08::unit_at(s, u);
          const stage08::KRange k = stage08::k_range(s, u);
          ASSERT_GE(k.end, k.begin + 1) << "empty K range";
          for (int kt = k.begin; kt < k.end; ++kt)
            ++covered[((size_t(w.batch) * s.tiles_m + w.m0 / 256) * s.tiles_n + w.n0 / 128) * s.k_tiles + kt];
        }
      for (int c : covered) ASSERT_EQ(c, 1) << "splits " << splits << ", pairs " << pairs;
    }
}

TEST(SplitKSchedule, SplitsOfATileAreNeighbouringUnits) {
  auto* base = reinterpret_cast<const uint8_t*>(0x10000);
  const gemm::Nvfp4GemmArgs a{128, 4096, 7168, 1, base, base, base, base, 1.0f, nullptr};
  const stage08::Schedule s = stage08::make_schedule(a, 74, {0, 4, {}});
  for (int u = 0; u < s.units; u += 4)
    for (int j = 1; j < 4; ++j) EXPECT_EQ(stage08::unit_at(s, u + j).n0, stage08::unit_at(s, u).n0);
}

TEST(SplitKChoice, SplitsMinimiseTheModelBoundOfTheBenchmarkShapes) {
  // 74 pairs (a B200). The chosen split must be the best of all allowed ones under the model, and
  // on the M = 128 shapes the bound must be within 1.5x of the speed of light (max of the tensor
  // time on all 148 SMs and the DRAM time of the bytes the GEMM must move).
  struct Shape { int M, N, K; };
  for (const Shape e : {Shape{128, 7168, 16384}, Shape{128, 4096, 7168}, Shape{128, 7168, 2048},
                        Shape{1024, 1024, 1024}, Shape{2048, 2048, 2048}, Shape{8192, 8192, 8192}}) {
    auto* base = reinterpret_cast<const uint8_t*>(0x10000);
    const gemm::Nvfp4GemmArgs a{e.M, e.N, e.K, 1, base, base, base, base, 1.0f, nullptr};
    const stage08::Schedule s = stage08::make_schedule(a, 74);
    const int tiles = s.units / s.splits;
    const gemm::split_k::Problem p{tiles, s.k_tiles, 74, gemm::min_bytes(a), double(std::min(e.M, 256)),
                                   double(std::min(e.N, 128)), 256, 128, 256, 2};
    const double chosen = gemm::split_k::bound_seconds(p, s.splits);
    for (int t = 1; t <= gemm::split_k::max_splits(s.k_tiles); ++t)
      if (tiles < 74) EXPECT_LE(chosen, 1.0101 * gemm::split_k::bound_seconds(p, t));
    const double sol = std::max(2.0 * e.M * e.N * double(e.K) / (148 * gemm::split_k::kModelSmFlops),
                                gemm::min_bytes(a) / gemm::split_k::kModelDramBytesPerSecond);
    if (e.M == 128) EXPECT_LE(chosen, 1.5 * sol) << e.M << "x" << e.N << "x" << e.K << ", " << s.splits << " splits";
    if (e.N == 4096 && e.K == 7168) {  // where split-K pays: 32 tiles, tensor-bound without a split
      EXPECT_EQ(s.splits, 2);
      EXPECT_LT(chosen, 0.75 * gemm::split_k::bound_seconds(p, 1));
    }
    if (tiles >= 74) EXPECT_EQ(s.splits, 1);
  }
}

TEST(SplitKChoice, ForcedSplitsAreClampedToTheKTiles) {
  auto* base = reinterpret_cast<const uint8_t*>(0x10000);
  const gemm::Nvfp4GemmArgs a{128, 128, 512, 1, base, base, base, base, 1.0f, nullptr};  // 2 k-tiles
  EXPECT_EQ(stage08::make_schedule(a, 74, {0, 16, {}}).splits, 2);
  EXPECT_EQ(stage08::make_schedule(a, 74, {0, 1, {}}).splits, 1);
}

TEST(SplitKLayout, BudgetsFit) {
  EXPECT_EQ(stage08::kSlots, 7);
  EXPECT_LE(stage08::kTmemColumnsUsed, 512);
  EXPECT_LE(stage08::kSmemBytes + stage08::kStaticSmemMargin, stage08::kSmemPerBlock);
}

}  // namespace
