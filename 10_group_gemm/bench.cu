// Stage 10 (step 2, kernel.cuh; step 1, kernel_table.cuh, label "variant", through the registry) against stage 07 called once per group (its base: the kind presents a group GEMM as one
// NVFP4 GEMM per non-empty group) and the library peer, at GPU MODE's four group-GEMM problems and
// DeepSeek-V3's expert shapes at 8 and 32 experts. On a B200 the peer is cuBLASLt's NVFP4 GEMM once
// per group; on Hopper it is dequantize-to-BF16 + cuBLAS once per group, and the tcgen05 rows run
// EMULATED at small shapes only (their times measure the emulator).
//
// Plus the host's time per call, which no GPU time shows: the first call of a problem (validation and
// 5 G tensor-map encodes), every later call (the cached table), and one stage-07 call (validation and
// 5 encodes, for one GEMM) beside them, at 8 groups.
#include "kernel.cuh"

#include <chrono>
#include <string>
#include <vector>

#include "common/device_buffer.h"
#include "common/harness/bench.h"

namespace {

// GPU MODE Q1's expert sizes (M per group) at a small N and K: the host's work does not depend on them,
// and the kernel behind it stays short where it runs emulated.
const gemm::Shape& host_time_shape() {
  static const gemm::Shape s = [] {
    std::vector<gemm::GroupSize> g;
    for (int m : {80, 176, 128, 72, 64, 248, 96, 160}) g.push_back({m, 256, 256});
    return gemm::group_shape("host_time_8_groups", g);
  }();
  return s;
}

// kLookup and kLaunch split the cached call into its two parts: the cache's lookup (hashing and
// comparing the problem) and the launch of the table found.
enum class HostCall { kFirst, kCached, kLookup, kLaunch, kStage07OneGroup };

// The CPU time of one launcher call, taken while the GPU is busy, as in a model's forward pass where
// the host runs ahead of the GPU: every kBatch calls the GPU is waited for and then held by a short
// kernel (untimed), so no timed call is the first after a wait. (Timed right after waiting for an
// emulated kernel of about 15 ms, a call cost 45-58 us on an H200, varying by 10 us from run to run;
// the README has the measurements.)
constexpr int kBatch = 16;

__global__ void hold_gpu(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

void host_time(benchmark::State& state, HostCall which) {
  const gemm::Kind& kind = stage10::kStage.kind();
  const gemm::Shape& s = host_time_shape();
  const auto in = kind.bench_inputs(s, 1);
  gemm::DeviceBuffer<uint8_t> C(size_t(kind.output_bytes(s)));
  const gemm::AnyArgs any = in->args(0, C.get());
  const auto& args = any.as<gemm::Nvfp4GroupGemmArgs>();
  const gemm::Stage* base = gemm::find_stage("07_epilogue_tma");
  if (which == HostCall::kStage07OneGroup && !base) {
    state.SkipWithError("stage 07 is not registered in this program");
    return;
  }
  const gemm::AnyArgs one_group = kind.as_kind(any, base ? base->kind() : kind)[0];
  auto lookup = [&] { return stage10::table_cache().get(args.groups, [&] { return stage10::make_tables(args); }); };
  const auto tables = lookup();  // kLaunch: the table found, before the timed span
  auto call = [&] {
    if (which == HostCall::kStage07OneGroup) base->launcher()(one_group, nullptr);
    else if (which == HostCall::kLookup) benchmark::DoNotOptimize(lookup());
    else if (which == HostCall::kLaunch) stage10::launch_table(tables->small.at(0), tables->tma_store, nullptr, {});
    else stage10::launch(args, nullptr);
  };
  call();  // module load, occupancy query, first cache entry
  CUDA_CHECK(cudaDeviceSynchronize());
  int calls = 0;
  for (auto _ : state) {
    if (calls++ % kBatch == 0) {
      CUDA_CHECK(cudaDeviceSynchronize());
      hold_gpu<<<1, 1>>>(2'000'000);  // about 1 ms: the batch's calls queue behind it
      CUDA_CHECK_LAUNCH();
    }
    if (which == HostCall::kFirst) stage10::table_cache().clear();
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  state.SetLabel("host");
  state.counters["groups"] = double(args.groups.size());
}

}  // namespace

int main(int argc, char** argv) {
  gemm::bench::Plan plan;  // the kind's shapes: GPU MODE's four problems, then DeepSeek-V3 experts
  plan.variants = {gemm::bench::registered_variant("10_group_table")};  // step 1: tokens on the MMA's M side
  plan.emulated_shapes = {gemm::group_shape("emulated_4_groups", {{64, 512, 512}, {200, 512, 512}, {0, 512, 512}, {130, 512, 512}}),
                          gemm::group_shape("emulated_8_groups", {{80, 256, 1024}, {176, 256, 1024}, {128, 256, 1024}, {72, 256, 1024},
                                                            {64, 256, 1024}, {248, 256, 1024}, {96, 256, 1024}, {160, 256, 1024}})};
  plan.register_extra = [] {
    benchmark::RegisterBenchmark("host time per call/10 first call (validate + 40 encodes)", host_time, HostCall::kFirst)
        ->UseManualTime();
    benchmark::RegisterBenchmark("host time per call/10 cached table", host_time, HostCall::kCached)->UseManualTime();
    benchmark::RegisterBenchmark("host time per call/10 cached: the lookup alone", host_time, HostCall::kLookup)
        ->UseManualTime();
    benchmark::RegisterBenchmark("host time per call/10 cached: the launch alone", host_time, HostCall::kLaunch)
        ->UseManualTime();
    benchmark::RegisterBenchmark("host time per call/07 one GEMM (validate + 5 encodes)", host_time,
                                 HostCall::kStage07OneGroup)
        ->UseManualTime();
  };
  return gemm::bench::run(argc, argv, stage10::kStage, GEMM_PREDECESSOR_ID, plan);
}
