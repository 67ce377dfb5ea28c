#include "common/harness/bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/cuda_check.h"
#include "common/device_buffer.h"
#include "common/device_fill.h"
#include "common/device_info.h"
#include "common/peers.h"
#include "common/stream_read.h"

#ifndef GEMM_SOURCE_DIR
#define GEMM_SOURCE_DIR "."
#endif

namespace gemm::bench {
namespace {

// Input copies per benchmark at most: tiny problems would otherwise need thousands to cover 2x L2;
// 64 distinct copies already make a launch find its operands evicted.
constexpr int kMaxSets = 64;

// Graph timing: a graph holds enough launches that one replay takes at least this long, so the one
// event pair around it costs well under 1% of what it measures ...
constexpr double kTargetReplayMs = 2.0;
// ... but at most this many (a capture records every launch on the host; 1000 is ample for a 2 us
// kernel). Always a whole number of cycles through the input sets.
constexpr int kMaxLaunchesPerGraph = 1000;

enum class Timing { kGraph, kEvents };

// GEMM_BENCH_TIMING: "graph" (the default) or "events". Anything else is refused by run().
bool parse_timing(Timing* t, std::string* text) {
  const char* env = std::getenv("GEMM_BENCH_TIMING");
  const std::string_view v = env && *env ? env : "graph";
  if (v == "graph") *t = Timing::kGraph;
  else if (v == "events") *t = Timing::kEvents;
  else {
    *text = std::string(v);
    return false;
  }
  return true;
}

Timing timing_method() {
  Timing t = Timing::kGraph;
  std::string bad;
  parse_timing(&t, &bad);  // run() has refused a bad value already; time_launches alone falls back to graph
  return t;
}

const char* timing_sentence(Timing t) {
  return t == Timing::kGraph
             ? "graph: a CUDA graph of launches_per_graph back-to-back launches (cycling through the input "
               "sets) is replayed between one CUDA event pair, and each of its launches is an iteration "
               "whose time is replay time / launches_per_graph, so no launch gap or event overhead is "
               "counted (a benchmark whose launches cannot be captured is timed with per-launch events "
               "instead and has graph_capture_failed = 1)"
             : "events: each iteration is one launch between a CUDA event pair (GEMM_BENCH_TIMING=events); the "
               "gap between launches and the events' own overhead are counted, which reads kernels under "
               "~0.2 ms several percent slow, and shorter ones by more";
}

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
  std::string role;  // "stage", "variant", "predecessor" or "peer"; "stage EMULATED" / "variant EMULATED"
                     // where the stage's tcgen05 is emulated
  Precision precision;
  Fp32Launcher fp32 = nullptr;
  Nvfp4Launcher nvfp4 = nullptr;
  bool uses_tcgen05 = false;
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

// The peak a stage's fraction is of: the FP32 CUDA-core FMA peak for the stages that compute on the
// CUDA cores (00-04); the dense NVFP4 tensor-core peak for tcgen05 stages on an sm_100 GPU; none for
// tcgen05 stages running emulated (their timings are not performance). A library peer on the tensor
// cores would exceed the CUDA-core peak, so peers get no peak fraction. 0 = no fraction.
double peak_for(const Impl& impl) {
  if (impl.role == "peer") return 0.0;
  const GpuInfo& g = gpu_info();
  if (impl.uses_tcgen05) return g.tcgen05_native() ? g.nvfp4_dense_peak_tflops() : 0.0;
  return g.fp32_peak_tflops();
}

// The name of that peak, for the JSON context.
std::string peak_name_for(bool uses_tcgen05) {
  if (!uses_tcgen05) return "FP32 CUDA-core FMA peak at the max SM clock";
  if (gpu_info().tcgen05_native())
    return "dense NVFP4 tensor-core peak at the max SM clock (assumed 32768 FLOP/clk/SM; see "
           "GpuInfo::nvfp4_dense_peak_tflops)";
  return "none: tcgen05 runs emulated, so there is no peak fraction";
}

std::string tflops_text(double t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", t);
  return buf;
}

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

namespace {

// Events around one interval of stream work.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  // Milliseconds that `work` keeps `stream` busy.
  template <class Work>
  double time(cudaStream_t stream, Work&& work) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    work();
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }
};

// Launches per graph: whole cycles through the sets, enough for kTargetReplayMs at `ms_per_launch`,
// at most kMaxLaunchesPerGraph (but always at least one cycle).
int launches_per_graph(double ms_per_launch, int sets) {
  const double cycle_ms = std::max(ms_per_launch, 1e-6) * sets;
  const int cycles = int(std::min(1e6, std::ceil(kTargetReplayMs / cycle_ms)));
  return sets * std::clamp(cycles, 1, std::max(1, kMaxLaunchesPerGraph / sets));
}

// Captures `count` launches, set i % sets for the i-th, into an executable graph. Returns nullptr,
// with *why set, when the capture or the instantiation fails; the stream is usable afterwards.
//
// Why capture is safe here. It runs in cudaStreamCaptureModeThreadLocal: this thread may not make a
// potentially unsafe call (cudaMalloc, a synchronisation, a legacy-stream copy) while it captures;
// one would invalidate the capture, which then lands in the fallback below instead of baking a
// one-off side effect into the graph. What the launchers do during a launch is allowed: the stages
// call validate(), cudaFuncSetAttribute and encode TMA tensor maps on the host (cuTensorMapEncodeTiled
// touches no stream; each map is passed by value, so every captured launch keeps its own set's
// pointers); cuBLAS calls are capturable (since CUDA 12.2 cuBLAS takes its workspace with
// cudaMallocAsync while its stream captures); the BF16 peer (common/peers.cu) keeps a process-wide
// workspace and output that grow with cudaMalloc on first use of a larger shape, and the warm-up
// launches before the capture have already grown them to this shape, so the captured launches
// allocate nothing; the cuBLASLt peer (common/peers_cublaslt.cu) builds, allocates for and caches a
// plan on the first call for a shape and pointer-alignment class, and the warm-up launches on every
// input set; the tcgen05 emulator allocates its state once per process, in the first launch. The
// warm-up therefore leaves nothing to allocate. ThreadLocal rather than Relaxed because nothing here
// needs an unsafe call (Relaxed would let one through into a graph that no longer repeats it), and
// rather than Global because other threads' calls do not concern this capture.
cudaGraphExec_t capture_launches(cudaStream_t stream, int sets, int count,
                                 const std::function<void(int, cudaStream_t)>& launch, std::string* why) {
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  std::string failure;
  try {
    for (int i = 0; i < count; ++i) launch(i % sets, stream);
  } catch (const std::exception& e) {
    failure = std::string("a launch failed during capture: ") + e.what();
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);  // always, so the stream leaves capture
  if (failure.empty() && ended != cudaSuccess)
    failure = std::string("cudaStreamEndCapture: ") + cudaGetErrorName(ended) + " (" + cudaGetErrorString(ended) + ")";
  cudaGraphExec_t exec = nullptr;
  if (failure.empty()) {
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    if (made != cudaSuccess) {
      failure = std::string("cudaGraphInstantiate: ") + cudaGetErrorName(made) + " (" + cudaGetErrorString(made) + ")";
      exec = nullptr;
    }
  }
  if (graph) cudaGraphDestroy(graph);
  if (!failure.empty()) {
    (void)cudaGetLastError();  // clear the capture's error so the next checked call does not report it
    *why = failure;
    return nullptr;
  }
  return exec;
}

}  // namespace

void time_launches(benchmark::State& state, int sets, const std::function<void(int, cudaStream_t)>& launch,
                   double flops, double bytes, double peak_tflops) {
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  EventPair events;
  // Warm-up: module load, first-touch, cuBLAS heuristics and the peers' first allocations stay out of
  // the numbers (and out of the graph). Launches after the first are timed together: a rough time
  // per launch (host gaps included) that sizes the graph.
  const int warmups = std::max(2, sets);
  launch(0, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const double warm_ms = events.time(stream, [&] {
    for (int i = 1; i < warmups; ++i) launch(i % sets, stream);
  });
  double ms_per_launch = warm_ms / (warmups - 1);

  int per_graph = 0;  // launches per graph replay; 0 = per-launch events
  cudaGraphExec_t graph = nullptr;
  bool capture_failed = false;
  if (timing_method() == Timing::kGraph) {
    std::string why;
    per_graph = launches_per_graph(ms_per_launch, sets);
    graph = capture_launches(stream, sets, per_graph, launch, &why);
    if (graph) {
      CUDA_CHECK(cudaGraphUpload(graph, stream));
      // Warm-up replay, timed: without host gaps it measures the launch time properly. Where the
      // estimate from the warm-up launches was too high (host gaps, a host-bound launcher) and the
      // replay falls short of the target, capture once more with the count this replay implies.
      const double replay_ms = events.time(stream, [&] { CUDA_CHECK(cudaGraphLaunch(graph, stream)); });
      ms_per_launch = replay_ms / per_graph;
      const int better = launches_per_graph(ms_per_launch, sets);
      if (replay_ms < kTargetReplayMs && better > per_graph) {
        if (cudaGraphExec_t bigger = capture_launches(stream, sets, better, launch, &why)) {
          CUDA_CHECK(cudaGraphExecDestroy(graph));
          graph = bigger;
          per_graph = better;
          CUDA_CHECK(cudaGraphUpload(graph, stream));
        }
      }
      CUDA_CHECK(cudaGraphLaunch(graph, stream));  // the second warm-up replay
      CUDA_CHECK(cudaStreamSynchronize(stream));
    } else {
      std::fprintf(stderr, "graph capture failed, timing this benchmark with per-launch events: %s\n", why.c_str());
      capture_failed = true;
      per_graph = 0;
    }
  }

  double total_s = 0.0;
  int64_t n = 0, set = 0;
  if (graph) {
    // One benchmark iteration is one launch, as with per-launch events, so Google Benchmark's
    // iteration counts and --benchmark_min_time mean the same under both methods (were an iteration
    // a whole replay reported as one launch's time, a benchmark would run N times longer than its
    // minimum time). Every N iterations one replay is timed; it and the N - 1 iterations after it
    // each report replay time / N.
    double per_launch_s = 0.0;
    int left = 0;  // iterations still to report from the last replay
    for (auto _ : state) {
      if (left == 0) {
        per_launch_s = events.time(stream, [&] { CUDA_CHECK(cudaGraphLaunch(graph, stream)); }) * 1e-3 / per_graph;
        left = per_graph;
      }
      state.SetIterationTime(per_launch_s);
      total_s += per_launch_s;
      ++n;
      --left;
    }
    CUDA_CHECK(cudaGraphExecDestroy(graph));
  } else {
    for (auto _ : state) {
      const double ms = events.time(stream, [&] { launch(int(set), stream); });
      state.SetIterationTime(ms * 1e-3);
      total_s += ms * 1e-3;
      ++n;
      set = (set + 1) % sets;
    }
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  const double tflops = flops * n / total_s * 1e-12;
  if (flops > 0) state.counters["TFLOP/s"] = tflops;
  state.counters["GB/s"] = bytes * n / total_s * 1e-9;
  if (peak_tflops > 0 && flops > 0) state.counters["peak_fraction"] = tflops / peak_tflops;
  state.counters["input_sets"] = sets;
  state.counters["launches_per_graph"] = per_graph;
  if (capture_failed) state.counters["graph_capture_failed"] = 1;
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

Nvfp4Inputs make_nvfp4_inputs(const Shape& s, int max_sets = kMaxSets) {
  Nvfp4Inputs in;
  in.a_bytes = size_t(packed_bytes(s.M, s.K, s.L));
  in.b_bytes = size_t(packed_bytes(s.N, s.K, s.L));
  in.sfa_bytes = size_t(sf_bytes(s.M, s.K, s.L));
  in.sfb_bytes = size_t(sf_bytes(s.N, s.K, s.L));
  in.sets = std::min(max_sets, sets_covering_l2(double(in.a_bytes + in.b_bytes + in.sfa_bytes + in.sfb_bytes)));
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

// An emulated tcgen05 kernel takes milliseconds a launch and its time means nothing about caches:
// two input sets are enough, and keep its warm-up and graph short.
constexpr int kEmulatedSets = 2;

void bench_nvfp4(benchmark::State& state, const Impl& impl, const Shape& s) {
  const bool emulated = impl.role.find("EMULATED") != std::string::npos;
  Nvfp4Inputs in = make_nvfp4_inputs(s, emulated ? kEmulatedSets : kMaxSets);
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

void add_context(const Stage& self, Timing timing) {
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
  benchmark::AddCustomContext("flop_convention", "2*M*N*K*L per GEMM");
  benchmark::AddCustomContext("input_rotation", "inputs rotated over >= 2x L2 (" + std::to_string(g.l2_bytes >> 20) + " MiB)");
  benchmark::AddCustomContext("timing", timing_sentence(timing));
}

// The peak the stage's peak_fraction counters are of; the predecessor's too where it differs (stage
// 05's predecessor runs on the CUDA cores).
void add_peak_context(const Impl& stage, const Impl* predecessor) {
  const double peak = peak_for(stage);
  benchmark::AddCustomContext("peak_name", peak_name_for(stage.uses_tcgen05));
  benchmark::AddCustomContext("peak_tflops", peak > 0 ? tflops_text(peak) : "n/a");
  if (predecessor && peak_name_for(predecessor->uses_tcgen05) != peak_name_for(stage.uses_tcgen05)) {
    const double p = peak_for(*predecessor);
    benchmark::AddCustomContext("predecessor_peak_name", peak_name_for(predecessor->uses_tcgen05));
    benchmark::AddCustomContext("predecessor_peak_tflops", p > 0 ? tflops_text(p) : "n/a");
  }
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
        const std::function<void()>& register_extra, const std::vector<Shape>& emulated_shapes,
        const std::vector<Variant>& variants) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  Timing timing = Timing::kGraph;
  if (std::string bad; !parse_timing(&timing, &bad)) {
    std::fprintf(stderr, "bench_%s: GEMM_BENCH_TIMING must be \"graph\" (the default) or \"events\", not \"%s\"\n",
                 self.id, bad.c_str());
    return 1;
  }
  const GpuInfo& g = gpu_info();
  if (!g.usable) {
    std::fprintf(stderr, "bench_%s: benchmarks need a GPU: %s\n", self.id, g.why_not.c_str());
    return 2;
  }
  add_context(self, timing);

  // A tcgen05 stage on a GPU without tcgen05 runs through the emulator, far too slowly for the big
  // shapes: it may name a reduced list for that case, used for every row, so that the predecessor
  // and the peer are still timed at the same shapes as the stage.
  const bool emulated = self.uses_tcgen05 && !g.tcgen05_native();
  const bool reduced = emulated && !emulated_shapes.empty();
  const std::vector<Shape>& rows = reduced ? emulated_shapes : shapes;
  if (reduced) benchmark::AddCustomContext("shape_list", "reduced list for emulated tcgen05 (emulated_shapes)");

  std::vector<Impl> impls;
  impls.push_back({self.id, emulated ? "stage EMULATED" : "stage", self.precision, self.fp32, self.nvfp4,
                   self.uses_tcgen05});
  for (const Variant& v : variants)
    impls.push_back({v.name, emulated ? "variant EMULATED" : "variant", Precision::kNvfp4, nullptr, v.nvfp4,
                     self.uses_tcgen05});
  if (const Stage* pred = find_stage(predecessor_id))
    impls.push_back({pred->id, pred->uses_tcgen05 && !g.tcgen05_native() ? "predecessor EMULATED" : "predecessor",
                     pred->precision, pred->fp32, pred->nvfp4, pred->uses_tcgen05});
  const Impl* pred_impl = nullptr;
  for (const Impl& i : impls)
    if (i.role.rfind("predecessor", 0) == 0) pred_impl = &i;
  add_peak_context(impls[0], pred_impl);
  if (self.precision == Precision::kFp32) impls.push_back({kCublasSgemmName, "peer", Precision::kFp32, cublas_sgemm, nullptr});
  if (self.precision == Precision::kNvfp4) {
    // On sm_100-class GPUs the NVFP4 stages meet cuBLASLt's own NVFP4 GEMM; elsewhere (Hopper) what a
    // user can run there: dequantize to BF16, then cuBLAS BF16.
    std::string why;
    if (cublaslt_nvfp4_supported(&why)) {
      impls.push_back({kCublasLtNvfp4Name, "peer", Precision::kNvfp4, nullptr, cublaslt_nvfp4});
    } else {
      impls.push_back({kDequantCublasBf16Name, "peer", Precision::kNvfp4, nullptr, dequantize_cublas_bf16_launcher});
      benchmark::AddCustomContext("peer_note", "cuBLASLt NVFP4 unsupported on this GPU: " + why +
                                                   "; peer is dequantize-to-BF16 + cuBLAS BF16");
    }
  }

  for (const Shape& s : rows)
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

namespace {

std::string gemv_shape_text(const Shape& s) {
  return std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K) +
         (s.L > 1 ? "x" + std::to_string(s.L) : "");
}

// The fastest stream-read bandwidth measured so far per shape (the stream rows of a shape run first).
std::map<std::string, double>& stream_gbps() {
  static std::map<std::string, double> m;
  return m;
}

void count_gemv(benchmark::State& state, const Shape& s, double bytes) {
  state.counters["M"] = s.M;
  state.counters["N"] = s.N;
  state.counters["K"] = s.K;
  state.counters["L"] = s.L;
  state.counters["bytes"] = bytes;
  const auto it = stream_gbps().find(gemv_shape_text(s));
  if (it != stream_gbps().end() && state.counters.count("GB/s"))
    state.counters["of_stream"] = double(state.counters["GB/s"]) / it->second;
}

double gemv_bytes(const Shape& s) {
  Nvfp4GemmArgs a;
  a.M = s.M, a.N = 1, a.K = s.K, a.L = s.L;
  return gemv_min_bytes(a);
}

void bench_stream(benchmark::State& state, const Shape& s, int chunks) {
  const double bytes = gemv_bytes(s);
  const int64_t per_set = (int64_t(bytes) + 15) / 16 * 16;
  const int sets = sets_covering_l2(double(per_set));
  DeviceBuffer<uint8_t> buf(size_t(per_set) * sets);
  DeviceBuffer<uint32_t> sink(1);
  fill_bytes(buf.get(), buf.size(), 7, 0x00, 0xFF);
  CUDA_CHECK(cudaDeviceSynchronize());
  time_launches(
      state, sets, [&](int i, cudaStream_t st) { stream_read(buf.get() + size_t(i) * per_set, per_set, sink.get(), chunks, st); },
      0.0, bytes, 0.0);
  state.SetLabel("stream");
  count_gemv(state, s, bytes);
  double& best = stream_gbps()[gemv_shape_text(s)];
  best = std::max(best, double(state.counters["GB/s"]));
}

void bench_gemv(benchmark::State& state, const Impl& impl, const Shape& s) {
  Nvfp4Inputs in = make_nvfp4_inputs(s);
  const double bytes = gemv_bytes(s);
  time_launches(
      state, in.sets, [&](int i, cudaStream_t st) { impl.nvfp4(in.args(s, i), st); }, flops(s.M, 1, s.K, s.L), bytes,
      0.0);
  state.SetLabel(impl.role);
  count_gemv(state, s, bytes);
}

// The weights and the vector dequantized to FP16 once per input set (not timed), then one cuBLAS
// call per launch.
void bench_fp16_peer(benchmark::State& state, const Shape& s) {
  const size_t a_vals = size_t(s.M) * s.K * s.L, x_vals = size_t(s.K) * s.L;
  const double own = 2.0 * (double(a_vals) + double(x_vals) + double(s.M) * s.L);
  const int sets = sets_covering_l2(own);
  Nvfp4Inputs q = make_nvfp4_inputs(s, 1);
  DeviceBuffer<__half> A(a_vals * sets), x(x_vals * sets), C(size_t(s.M) * s.L);
  for (int i = 0; i < sets; ++i) {  // the same weights in every set: only the addresses must differ
    dequantize_fp16(q.A.get(), q.SFA.get(), s.M, s.K, s.L, A.get() + i * a_vals, nullptr);
    dequantize_fp16(q.B.get(), q.SFB.get(), 1, s.K, s.L, x.get() + i * x_vals, nullptr);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  time_launches(
      state, sets,
      [&](int i, cudaStream_t st) {
        cublas_fp16_gemv(s.M, s.K, s.L, A.get() + i * a_vals, x.get() + i * x_vals, kAlpha, C.get(), st);
      },
      flops(s.M, 1, s.K, s.L), gemv_bytes(s), 0.0);
  state.SetLabel("peer");
  count_gemv(state, s, gemv_bytes(s));
  state.counters["own_GB/s"] = double(state.counters["GB/s"]) * own / gemv_bytes(s);
}

}  // namespace

int run_gemv(int argc, char** argv, const Stage& self, const char* base_id, const std::vector<Shape>& shapes,
             const std::vector<Variant>& variants, const std::vector<int>& stream_chunks) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  Timing timing = Timing::kGraph;
  if (std::string bad; !parse_timing(&timing, &bad)) {
    std::fprintf(stderr, "bench_%s: GEMM_BENCH_TIMING must be \"graph\" (the default) or \"events\", not \"%s\"\n",
                 self.id, bad.c_str());
    return 1;
  }
  const GpuInfo& g = gpu_info();
  if (!g.usable) {
    std::fprintf(stderr, "bench_%s: benchmarks need a GPU: %s\n", self.id, g.why_not.c_str());
    return 2;
  }
  for (const Shape& s : shapes)
    if (s.N != 1) {
      std::fprintf(stderr, "bench_%s: a GEMV shape has N = 1 (got %s)\n", self.id, gemv_shape_text(s).c_str());
      return 1;
    }
  add_context(self, timing);
  benchmark::AddCustomContext("kind", "gemv");
  benchmark::AddCustomContext("bytes_convention",
                              "GB/s = gemv_min_bytes / time for every row: A + its scales (M*K/16) + the vector + its "
                              "scales (K/16) + C (2*M), per batch (common/gemm_api.h); of_stream = GB/s over the fastest "
                              "stream-read row of the same shape");
  benchmark::AddCustomContext("dram_peak_gbps", std::to_string(int(g.dram_peak_gbps())));

  std::vector<Impl> impls;
  impls.push_back({self.id, "stage", self.precision, nullptr, self.nvfp4, false});
  for (const Variant& v : variants) impls.push_back({v.name, "variant", Precision::kNvfp4, nullptr, v.nvfp4, false});
  if (const Stage* base = find_stage(base_id))
    impls.push_back({base->id, "predecessor", base->precision, nullptr, base->nvfp4, base->uses_tcgen05});
  std::string why;
  const bool lt = cublaslt_nvfp4_supported(&why);
  if (lt) impls.push_back({kCublasLtNvfp4Name, "peer", Precision::kNvfp4, nullptr, cublaslt_nvfp4, false});
  else benchmark::AddCustomContext("peer_note", "cuBLASLt NVFP4 unsupported on this GPU: " + why);

  for (const Shape& s : shapes) {
    const std::string shape = "/" + gemv_shape_text(s);
    for (int c : stream_chunks) {
      const std::string name = "stream read, " + std::to_string(c) + " chunks per thread" + shape;
      benchmark::RegisterBenchmark(name.c_str(), [s, c](benchmark::State& st) { bench_stream(st, s, c); })
          ->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.2);
    }
    for (const Impl& impl : impls) {
      if (impl.uses_tcgen05 && !g.tcgen05_native()) continue;  // an emulated base would say nothing here
      benchmark::RegisterBenchmark((impl.name + shape).c_str(), [impl, s](benchmark::State& st) { bench_gemv(st, impl, s); })
          ->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.2);
    }
    benchmark::RegisterBenchmark((std::string(kCublasFp16GemvName) + shape).c_str(),
                                 [s](benchmark::State& st) { bench_fp16_peer(st, s); })
        ->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.2);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace gemm::bench
