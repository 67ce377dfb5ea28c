#include "common/harness/timing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "common/cuda_check.h"
#include "common/device_info.h"

namespace gemm::timing {
namespace {

// Graph timing: a graph holds enough launches that one replay takes at least this long, so the one
// event pair around it costs well under 1% of what it measures ...
constexpr double kTargetReplayMs = 2.0;
// ... but at most this many (a capture records every launch on the host; 1000 is ample for a 2 us
// kernel). Always a whole number of cycles through the input sets.
constexpr int kMaxLaunchesPerGraph = 1000;

// Launches per graph: whole cycles through the sets, enough for kTargetReplayMs at `ms_per_launch`,
// at most kMaxLaunchesPerGraph (but always at least one cycle).
int graph_size(double ms_per_launch, int sets) {
  const double cycle_ms = std::max(ms_per_launch, 1e-6) * sets;
  const int cycles = int(std::min(1e6, std::ceil(kTargetReplayMs / cycle_ms)));
  return sets * std::clamp(cycles, 1, std::max(1, kMaxLaunchesPerGraph / sets));
}

// Captures `count` launches, set i % sets for the i-th, into an executable graph. Returns nullptr,
// with *why set, when the capture or the instantiation fails; the stream is usable afterwards.
//
// Why capture is safe here. It runs in cudaStreamCaptureModeThreadLocal: this thread may not make a
// potentially unsafe call (cudaMalloc, a synchronisation, a legacy-stream copy) while it captures;
// one would invalidate the capture, which then lands in the fallback instead of baking a one-off
// side effect into the graph. What the launchers do during a launch is allowed: the stages call
// validate(), cudaFuncSetAttribute and encode TMA tensor maps on the host (cuTensorMapEncodeTiled
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
cudaGraphExec_t capture(cudaStream_t stream, int sets, int count, const LaunchTimer::Launch& launch, std::string* why) {
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

int input_sets(double bytes_per_set, double l2_bytes) {
  if (!(bytes_per_set > 0)) throw std::invalid_argument("input_sets: bytes per set must be positive");
  const double covering = std::ceil(kL2Multiple * std::max(l2_bytes, 0.0) / bytes_per_set);
  return int(std::clamp(covering, double(kMinSets), double(kMaxSets)));
}

int input_sets(double bytes_per_set) { return input_sets(bytes_per_set, double(gpu_info().l2_bytes)); }

bool flushes_l2(int sets, double bytes_per_set, double l2_bytes) {
  if (!(bytes_per_set > 0)) throw std::invalid_argument("flushes_l2: bytes per set must be positive");
  if (sets < 1) throw std::invalid_argument("flushes_l2: sets must be at least 1");
  return sets * bytes_per_set < kL2Multiple * std::max(l2_bytes, 0.0);
}

bool flushes_l2(int sets, double bytes_per_set) {
  return flushes_l2(sets, bytes_per_set, double(gpu_info().l2_bytes));
}

Rotation rotation(double bytes_per_set, bool emulated, double l2_bytes) {
  const int sets = input_sets(bytes_per_set, l2_bytes);  // also refuses a size that is not positive
  if (emulated) return {kMinSets, false};
  return {sets, flushes_l2(sets, bytes_per_set, l2_bytes)};
}

Rotation rotation(double bytes_per_set, bool emulated) {
  return rotation(bytes_per_set, emulated, double(gpu_info().l2_bytes));
}

std::string rotation_rule_text() {
  const std::string multiple = std::to_string(int(kL2Multiple)), most = std::to_string(kMaxSets);
  return "inputs rotated over input_sets copies: at least " + std::to_string(kMinSets) + ", covering at least " +
         multiple + "x the L2 (" + std::to_string(gpu_info().l2_bytes >> 20) + " MiB) together, at most " + most +
         " (l2_multiple = input_sets x bytes per set / L2); where " + most + " copies cover less (a set under " +
         multiple + "/" + most + " of the L2), the L2 is also flushed before every timed launch by writing " +
         multiple + "x the L2 to a scratch buffer outside the timed interval, and each launch is timed with its "
         "own CUDA event pair, since a graph could not hold the flushes without timing them (l2_flush = 1)";
}

bool method_from_env(Method* m, std::string* bad) {
  const char* env = std::getenv("GEMM_BENCH_TIMING");
  const std::string_view v = env && *env ? env : "graph";
  if (v == "graph") *m = Method::kGraph;
  else if (v == "events") *m = Method::kEvents;
  else {
    *bad = std::string(v);
    return false;
  }
  return true;
}

const char* method_sentence(Method m) {
  return m == Method::kGraph
             ? "graph: a CUDA graph of launches_per_graph back-to-back launches (cycling through the input "
               "sets) is replayed between one CUDA event pair, and each of its launches is an iteration "
               "whose time is replay time / launches_per_graph, so no launch gap or event overhead is "
               "counted (a benchmark whose launches cannot be captured is timed with per-launch events "
               "instead and has graph_capture_failed = 1; so is one with l2_flush = 1, each launch after a "
               "flush of the L2, which a graph could not hold between its launches without timing it)"
             : "events: each iteration is one launch between a CUDA event pair (GEMM_BENCH_TIMING=events); the "
               "gap between launches and the events' own overhead are counted, which reads kernels under "
               "~0.2 ms several percent slow, and shorter ones by more (with l2_flush = 1, each launch "
               "follows a flush of the L2, outside the event pair)";
}

template <class Work>
double LaunchTimer::time(Work&& work) {
  CUDA_CHECK(cudaEventRecord(start_, stream_));
  work();
  CUDA_CHECK(cudaEventRecord(stop_, stream_));
  CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return ms;
}

LaunchTimer::LaunchTimer(int sets, Launch launch, Method method, bool flush_l2)
    : sets_(std::max(1, sets)), launch_(std::move(launch)) {
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreate(&start_));
  CUDA_CHECK(cudaEventCreate(&stop_));
  if (flush_l2) {
    flush_bytes_ = size_t(kL2Multiple * double(gpu_info().l2_bytes));
    CUDA_CHECK(cudaMalloc(&flush_, flush_bytes_));
  }
  // Warm-up: module load, first-touch, cuBLAS heuristics and the peers' first allocations stay out of
  // the numbers (and out of the graph), on every input set. Launches after the first are timed
  // together: a rough time per launch (host gaps included) that sizes the graph.
  const int warmups = std::max(2, sets_);
  launch_(0, stream_);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  double ms_per_launch = time([&] {
                           for (int i = 1; i < warmups; ++i) launch_(i % sets_, stream_);
                         }) / (warmups - 1);
  if (method != Method::kGraph || flush_) return;
  per_graph_ = graph_size(ms_per_launch, sets_);
  graph_ = capture(stream_, sets_, per_graph_, launch_, &why_);
  if (!graph_) {
    std::fprintf(stderr, "graph capture failed, timing with per-launch events: %s\n", why_.c_str());
    capture_failed_ = true;
    per_graph_ = 0;
    return;
  }
  CUDA_CHECK(cudaGraphUpload(graph_, stream_));
  // Warm-up replay, timed: without host gaps it measures the launch time properly. Where the estimate
  // from the warm-up launches was too high (host gaps, a host-bound launcher) and the replay falls
  // short of the target, capture once more with the count this replay implies.
  const double replay_ms = time([&] { CUDA_CHECK(cudaGraphLaunch(graph_, stream_)); });
  const int better = graph_size(replay_ms / per_graph_, sets_);
  if (replay_ms < kTargetReplayMs && better > per_graph_) {
    std::string why;
    if (cudaGraphExec_t bigger = capture(stream_, sets_, better, launch_, &why)) {
      CUDA_CHECK(cudaGraphExecDestroy(graph_));
      graph_ = bigger;
      per_graph_ = better;
      CUDA_CHECK(cudaGraphUpload(graph_, stream_));
    }
  }
  CUDA_CHECK(cudaGraphLaunch(graph_, stream_));  // the second warm-up replay
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

LaunchTimer::~LaunchTimer() {
  if (graph_) cudaGraphExecDestroy(graph_);
  if (flush_) cudaFree(flush_);
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaStreamDestroy(stream_);
}

double LaunchTimer::measure_ms() {
  if (graph_) return time([&] { CUDA_CHECK(cudaGraphLaunch(graph_, stream_)); });
  const int set = next_set_;
  next_set_ = (next_set_ + 1) % sets_;
  // On the timer's stream before the start event: the interval begins with the L2 flushed, and
  // without the flush in it.
  if (flush_) CUDA_CHECK(cudaMemsetAsync(flush_, 0, flush_bytes_, stream_));
  return time([&] { launch_(set, stream_); });
}

}  // namespace gemm::timing
