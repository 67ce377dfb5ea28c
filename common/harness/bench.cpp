#include "common/harness/bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <string>

#include "common/cuda_check.h"
#include "common/device_buffer.h"
#include "common/device_fill.h"
#include "common/device_info.h"
#include "common/peers.h"

#ifndef GEMM_SOURCE_DIR
#define GEMM_SOURCE_DIR "."
#endif

namespace gemm::bench {
namespace {

// Input copies per benchmark at most: tiny problems would otherwise need thousands to cover 2x L2;
// 64 distinct copies already make a launch find its operands evicted.
constexpr int kMaxSets = 64;

std::string run_command(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return "";
  char buf[256];
  std::string out;
  while (fgets(buf, sizeof buf, pipe.get())) out += buf;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// The source's commit: $GEMM_COMMIT when set (a copy of the tree without .git), else git's answer.
std::string commit() {
  if (const char* env = std::getenv("GEMM_COMMIT"); env && *env) return env;
  const std::string dir = GEMM_SOURCE_DIR;
  std::string c = run_command("git -C '" + dir + "' rev-parse --short=12 HEAD 2>/dev/null");
  if (c.empty()) return "unknown";
  if (!run_command("git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null").empty()) c += "-dirty";
  return c;
}

// One implementation under test: a stage, or a library peer.
struct Impl {
  std::string name;
  std::string role;  // "stage", "predecessor" or "peer"
  Precision precision;
  Fp32Launcher fp32 = nullptr;
  Nvfp4Launcher nvfp4 = nullptr;
};

// The label (the implementation's role) and the shape counters docs/plot.py reads.
void label_gemm(benchmark::State& state, const Impl& impl, const Shape& s, double bytes) {
  state.SetLabel(impl.role);
  state.counters["M"] = s.M;
  state.counters["N"] = s.N;
  state.counters["K"] = s.K;
  state.counters["L"] = s.L;
  state.counters["bytes_per_flop"] = bytes / flops(s.M, s.N, s.K, s.L);
}

// The named peak (FP32 CUDA-core FMA) applies to the stages; a library peer on the tensor cores
// would exceed it, so peers get no peak fraction.
double peak_for(const Impl& impl) { return impl.role == "peer" ? 0.0 : gpu_info().fp32_peak_tflops(); }

// Device inputs for one shape, in `sets` copies whose total covers at least 2x L2.
struct Fp32Inputs {
  int sets = 1;
  DeviceBuffer<float> A, B, C;
  Fp32GemmArgs args(const Shape& s, int i) const {
    return {s.M, s.N, s.K, s.L, A.get() + size_t(i) * s.M * s.K * s.L, B.get() + size_t(i) * s.N * s.K * s.L, C.get()};
  }
};

Fp32Inputs make_fp32_inputs(const Shape& s) {
  Fp32Inputs in;
  const size_t a = size_t(s.M) * s.K * s.L, b = size_t(s.N) * s.K * s.L;
  in.sets = sets_covering_l2(4.0 * (a + b));
  in.A = DeviceBuffer<float>(a * in.sets);
  in.B = DeviceBuffer<float>(b * in.sets);
  in.C = DeviceBuffer<float>(size_t(s.M) * s.N * s.L);
  fill_uniform(in.A.get(), in.A.size(), 1, -1.0f, 1.0f);
  fill_uniform(in.B.get(), in.B.size(), 2, -1.0f, 1.0f);
  CUDA_CHECK(cudaDeviceSynchronize());
  return in;
}

}  // namespace

int sets_covering_l2(double bytes_per_set) {
  const double l2 = double(gpu_info().l2_bytes);
  return std::clamp(int(std::ceil(2.0 * l2 / bytes_per_set)), 1, kMaxSets);
}

void time_launches(benchmark::State& state, int sets, const std::function<void(int, cudaStream_t)>& launch,
                   double flops, double bytes, double peak_tflops) {
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  // Warm-up: module load, first-touch and cuBLAS heuristics stay out of the numbers.
  for (int i = 0; i < std::max(2, sets); ++i) launch(i % sets, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  double total_s = 0.0;
  int64_t n = 0, set = 0;
  for (auto _ : state) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    launch(int(set), stream);
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    state.SetIterationTime(ms * 1e-3);
    total_s += ms * 1e-3;
    ++n;
    set = (set + 1) % sets;
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaStreamDestroy(stream));
  const double tflops = flops * n / total_s * 1e-12;
  if (flops > 0) state.counters["TFLOP/s"] = tflops;
  state.counters["GB/s"] = bytes * n / total_s * 1e-9;
  if (peak_tflops > 0 && flops > 0) state.counters["peak_fraction"] = tflops / peak_tflops;
  state.counters["input_sets"] = sets;
}

namespace {

// Random E2M1 codes (|x| <= 6) and scales in 0.5..2 give dot products up to about 24^2 K; alpha keeps
// the FP16 outputs finite for every benchmarked K (timing does not depend on it).
constexpr float kAlpha = 0.01f;

struct Nvfp4Inputs {
  int sets = 1;
  size_t a_bytes = 0, b_bytes = 0, sfa_bytes = 0, sfb_bytes = 0;
  DeviceBuffer<uint8_t> A, SFA, B, SFB;
  DeviceBuffer<uint16_t> C;
  Nvfp4GemmArgs args(const Shape& s, int i) const {
    return {s.M, s.N, s.K, s.L, A.get() + i * a_bytes, SFA.get() + i * sfa_bytes, B.get() + i * b_bytes,
            SFB.get() + i * sfb_bytes, kAlpha, reinterpret_cast<__half*>(C.get())};
  }
};

Nvfp4Inputs make_nvfp4_inputs(const Shape& s) {
  Nvfp4Inputs in;
  in.a_bytes = size_t(packed_bytes(s.M, s.K, s.L));
  in.b_bytes = size_t(packed_bytes(s.N, s.K, s.L));
  in.sfa_bytes = size_t(sf_bytes(s.M, s.K, s.L));
  in.sfb_bytes = size_t(sf_bytes(s.N, s.K, s.L));
  in.sets = sets_covering_l2(double(in.a_bytes + in.b_bytes + in.sfa_bytes + in.sfb_bytes));
  in.A = DeviceBuffer<uint8_t>(in.a_bytes * in.sets);
  in.B = DeviceBuffer<uint8_t>(in.b_bytes * in.sets);
  in.SFA = DeviceBuffer<uint8_t>(in.sfa_bytes * in.sets);
  in.SFB = DeviceBuffer<uint8_t>(in.sfb_bytes * in.sets);
  in.C = DeviceBuffer<uint16_t>(size_t(s.M) * s.N * s.L);
  fill_bytes(in.A.get(), in.A.size(), 3, 0x00, 0xFF);     // every E2M1 pair
  fill_bytes(in.B.get(), in.B.size(), 4, 0x00, 0xFF);
  fill_bytes(in.SFA.get(), in.SFA.size(), 5, 0x30, 0x40);  // E4M3 scales 0.5 .. 2
  fill_bytes(in.SFB.get(), in.SFB.size(), 6, 0x30, 0x40);
  CUDA_CHECK(cudaDeviceSynchronize());
  return in;
}

void bench_nvfp4(benchmark::State& state, const Impl& impl, const Shape& s) {
  Nvfp4Inputs in = make_nvfp4_inputs(s);
  const Nvfp4GemmArgs probe = in.args(s, 0);
  time_launches(
      state, in.sets, [&](int i, cudaStream_t st) { impl.nvfp4(in.args(s, i), st); }, flops(s.M, s.N, s.K, s.L),
      min_bytes(probe), peak_for(impl));
  label_gemm(state, impl, s, min_bytes(probe));
}

void bench_fp32(benchmark::State& state, const Impl& impl, const Shape& s) {
  Fp32Inputs in = make_fp32_inputs(s);
  const Fp32GemmArgs probe = in.args(s, 0);
  time_launches(
      state, in.sets, [&](int i, cudaStream_t st) { impl.fp32(in.args(s, i), st); }, flops(s.M, s.N, s.K, s.L),
      min_bytes(probe), peak_for(impl));
  label_gemm(state, impl, s, min_bytes(probe));
}

void add_context(const Stage& self) {
  const GpuInfo& g = gpu_info();
  benchmark::AddCustomContext("stage", self.id);
  benchmark::AddCustomContext("stage_idea", self.idea);
  benchmark::AddCustomContext("gpu", g.name);
  benchmark::AddCustomContext("compute_capability", g.compute_capability());
  benchmark::AddCustomContext("sm_count", std::to_string(g.sm_count));
  benchmark::AddCustomContext("sm_clock_max_mhz", std::to_string(g.sm_clock_khz / 1000));
  benchmark::AddCustomContext("mem_clock_max_mhz", std::to_string(g.mem_clock_khz / 1000));
  benchmark::AddCustomContext("clocks_now", gpu_clocks_now());
  benchmark::AddCustomContext("l2_bytes", std::to_string(g.l2_bytes));
  benchmark::AddCustomContext("driver_cuda_version", cuda_version_string(g.driver_version));
  benchmark::AddCustomContext("runtime_cuda_version", cuda_version_string(g.runtime_version));
  benchmark::AddCustomContext("commit", commit());
  benchmark::AddCustomContext("tcgen05", !self.uses_tcgen05 ? "not used"
                                         : g.tcgen05_native() ? "native"
                                                              : "EMULATED (timings are not performance)");
  char peak[64];
  std::snprintf(peak, sizeof peak, "%.1f", g.fp32_peak_tflops());
  benchmark::AddCustomContext("peak_name", "FP32 CUDA-core FMA peak at the max SM clock");
  benchmark::AddCustomContext("peak_tflops", peak);
  benchmark::AddCustomContext("flop_convention", "2*M*N*K*L per GEMM");
  benchmark::AddCustomContext("input_rotation", "inputs rotated over >= 2x L2 (" + std::to_string(g.l2_bytes >> 20) + " MiB)");
}

}  // namespace

std::vector<Shape> nvfp4_shapes() {
  std::vector<Shape> v = {{128, 7168, 16384}, {128, 4096, 7168}, {128, 7168, 2048}};
  for (int s : {1024, 2048, 4096, 8192}) v.push_back({s, s, s});
  return v;
}

std::vector<Shape> squares(std::initializer_list<int> sizes) {
  std::vector<Shape> v;
  for (int s : sizes) v.push_back({s, s, s, 1});
  return v;
}

int run(int argc, char** argv, const Stage& self, const char* predecessor_id, const std::vector<Shape>& shapes,
        const std::function<void()>& register_extra) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const GpuInfo& g = gpu_info();
  if (!g.usable) {
    std::fprintf(stderr, "bench_%s: benchmarks need a GPU: %s\n", self.id, g.why_not.c_str());
    return 2;
  }
  add_context(self);

  std::vector<Impl> impls;
  impls.push_back({self.id, "stage", self.precision, self.fp32, self.nvfp4});
  if (const Stage* pred = find_stage(predecessor_id))
    impls.push_back({pred->id, "predecessor", pred->precision, pred->fp32, pred->nvfp4});
  if (self.precision == Precision::kFp32) impls.push_back({kCublasSgemmName, "peer", Precision::kFp32, cublas_sgemm, nullptr});
  if (self.precision == Precision::kNvfp4)
    impls.push_back({kDequantCublasBf16Name, "peer", Precision::kNvfp4, nullptr, dequantize_cublas_bf16_launcher});

  for (const Shape& s : shapes)
    for (const Impl& impl : impls) {
      const std::string name = impl.name + "/" + std::to_string(s.M) + "x" + std::to_string(s.N) + "x" +
                               std::to_string(s.K) + (s.L > 1 ? "x" + std::to_string(s.L) : "");
      auto* b = impl.precision == Precision::kFp32
                    ? benchmark::RegisterBenchmark(name.c_str(), [impl, s](benchmark::State& st) { bench_fp32(st, impl, s); })
                    : benchmark::RegisterBenchmark(name.c_str(), [impl, s](benchmark::State& st) { bench_nvfp4(st, impl, s); });
      b->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
    }
  if (register_extra) register_extra();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace gemm::bench
