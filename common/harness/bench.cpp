#include "common/harness/bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "common/cuda_check.h"
#include "common/device_buffer.h"
#include "common/device_info.h"
#include "common/harness/timing.h"

#ifndef GEMM_SOURCE_DIR
#define GEMM_SOURCE_DIR "."
#endif

namespace gemm::bench {
namespace {

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


// One row of the benchmark at every shape: a launcher of some kind (the stage, a variant, the base,
// a peer), or work the kind times itself (a ceiling, a peer with inputs of its own).
struct Row {
  std::string name;
  std::string role;  // "stage", "variant", "predecessor", "peer", "stream"; + " EMULATED" for emulated tcgen05
  std::optional<Launcher> launch;
  std::function<TimedWork(const Shape&, SetsRule)> work;  // when there is no launcher
  double peak_tflops = 0;                                 // 0: no peak_fraction
};

// time_launches with the flush decided by the caller, so that an emulated row can decline it.
void time_row(benchmark::State& state, int sets, bool flush_l2, const std::function<void(int, cudaStream_t)>& launch,
              double flops, double bytes, double peak_tflops, double bytes_per_set) {
  timing::Method method = timing::Method::kGraph;
  std::string bad;
  timing::method_from_env(&method, &bad);  // run() has refused a bad value already
  timing::LaunchTimer timer(sets, launch, method, flush_l2);
  // One benchmark iteration is one launch under both methods, so Google Benchmark's iteration counts
  // and --benchmark_min_time mean the same (were an iteration a whole replay reported as one launch's
  // time, a benchmark would run N times longer than its minimum time). Every N iterations one replay
  // is timed; it and the N - 1 iterations after it each report replay time / N.
  double total_s = 0.0, per_launch_s = 0.0;
  int64_t n = 0;
  int left = 0;  // iterations still to report from the last measurement
  for (auto _ : state) {
    if (left == 0) {
      left = timer.launches_per_measurement();
      per_launch_s = timer.measure_ms() * 1e-3 / left;
    }
    state.SetIterationTime(per_launch_s);
    total_s += per_launch_s;
    ++n;
    --left;
  }
  const double tflops = flops * n / total_s * 1e-12;
  if (flops > 0) state.counters["TFLOP/s"] = tflops;
  state.counters["GB/s"] = bytes * n / total_s * 1e-9;
  if (peak_tflops > 0 && flops > 0) state.counters["peak_fraction"] = tflops / peak_tflops;
  state.counters["input_sets"] = sets;
  if (bytes_per_set > 0) state.counters["l2_multiple"] = sets * bytes_per_set / double(gpu_info().l2_bytes);
  state.counters["l2_flush"] = timer.flushing() ? 1 : 0;
  state.counters["launches_per_graph"] = timer.launches_per_graph();
  if (timer.capture_failed()) state.counters["graph_capture_failed"] = 1;
}

// The fastest streaming-read bandwidth measured so far per shape (the stream rows of a shape run first).
std::map<std::string, double>& stream_gbps() {
  static std::map<std::string, double> m;
  return m;
}

void count_shape(benchmark::State& state, const Kind& kind, const Shape& s, const std::string& role) {
  state.SetLabel(role);
  state.counters["M"] = s.M;
  state.counters["N"] = s.N;
  state.counters["K"] = s.K;
  state.counters["L"] = s.L;
  state.counters["bytes"] = kind.min_bytes(s);
  state.counters["bytes_per_flop"] = kind.min_bytes(s) / kind.flops(s);
  if (kind.merit() == Merit::kMemory && state.counters.count("GB/s")) {
    double& best = stream_gbps()[shape_text(s)];
    if (role == "stream") best = std::max(best, double(state.counters["GB/s"]));
    else if (best > 0) state.counters["of_stream"] = double(state.counters["GB/s"]) / best;
  }
}

// Whether arguments of `from` can be presented as arguments of `to` (Kind::as_kind).
bool has_view(const Kind& from, const Kind& to) {
  if (&from == &to) return true;
  try {
    from.as_kind(from.placeholder_args(), to);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

void bench_row(benchmark::State& state, const Kind& kind, const Row& row, const Shape& s) {
  const bool emulated = row.role.find("EMULATED") != std::string::npos;
  const Kind* counted = &kind;  // whose FLOPs and bytes the row's counters are in
  if (row.launch) {
    // A launcher of another kind runs on this kind's inputs where this kind has a view of them as its
    // own (a GEMV as a GEMM at N = 1), and otherwise on its own kind's inputs of the same shape (the
    // FP32 stage 02 as stage 03's base): FLOPs and bytes are then that kind's.
    const Kind& own = row.launch->kind();
    const bool view = has_view(kind, own);
    const Kind& data = view ? kind : own;
    counted = &data;
    // The inputs' bytes set how many copies cover the L2 (C is written, not re-read).
    const double input_bytes = std::max(1.0, data.min_bytes(s) - double(data.output_bytes(s)));
    const timing::Rotation rotation = timing::rotation(input_bytes, emulated);
    const std::unique_ptr<DeviceInputs> in = data.bench_inputs(s, rotation.sets);
    DeviceBuffer<uint8_t> C(size_t(data.output_bytes(s)));
    std::vector<std::vector<AnyArgs>> calls;  // per set: one call, or the calls of the view
    for (int i = 0; i < in->sets(); ++i) {
      const AnyArgs a = in->args(i, C.get());
      calls.push_back(&own == &data ? std::vector<AnyArgs>{a} : data.as_kind(a, own));
    }
    const Launcher& launch = *row.launch;
    time_row(
        state, in->sets(), rotation.flush_l2,
        [&](int i, cudaStream_t st) {
          for (const AnyArgs& a : calls[size_t(i)]) launch(a, st);
        },
        data.flops(s),
        data.min_bytes(s), row.peak_tflops, input_bytes);
  } else {
    const TimedWork w = row.work(s, [](double bytes) { return timing::input_sets(bytes); });
    time_launches(state, w.sets, w.launch, row.role == "stream" ? 0.0 : kind.flops(s), kind.min_bytes(s), 0.0,
                  w.own_bytes > 0 ? w.own_bytes : kind.min_bytes(s));
    if (w.own_bytes > 0) state.counters["own_GB/s"] = double(state.counters["GB/s"]) * w.own_bytes / kind.min_bytes(s);
  }
  count_shape(state, *counted, s, row.role);
}

// A row that fails (an exception from a launcher, an allocation) is reported as that benchmark's
// error, with its message, and the others still run.
void run_row(benchmark::State& state, const Kind& kind, const Row& row, const Shape& s) {
  try {
    bench_row(state, kind, row, s);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void add_context(const Stage& self, timing::Method method) {
  const GpuInfo& g = gpu_info();
  const Kind& kind = self.kind();
  benchmark::AddCustomContext("stage", self.id);
  benchmark::AddCustomContext("stage_idea", self.idea);
  benchmark::AddCustomContext("kind", kind.name());
  benchmark::AddCustomContext("kind_title", kind.title());
  benchmark::AddCustomContext("merit", kind.merit() == Merit::kMemory ? "memory-bound: GB/s, of_stream"
                                                                      : "compute-bound: TFLOP/s, peak_fraction");
  benchmark::AddCustomContext("gpu", g.name);
  benchmark::AddCustomContext("compute_capability", g.compute_capability());
  benchmark::AddCustomContext("sm_count", std::to_string(g.sm_count));
  benchmark::AddCustomContext("sm_clock_max_mhz", std::to_string(g.sm_clock_khz / 1000));
  benchmark::AddCustomContext("mem_clock_max_mhz", std::to_string(g.mem_clock_khz / 1000));
  benchmark::AddCustomContext("clocks_now", gpu_clocks_now());
  benchmark::AddCustomContext("l2_bytes", std::to_string(g.l2_bytes));
  benchmark::AddCustomContext("dram_peak_gbps", std::to_string(int(g.dram_peak_gbps())));
  benchmark::AddCustomContext("driver_cuda_version", cuda_version_string(g.driver_version));
  benchmark::AddCustomContext("runtime_cuda_version", cuda_version_string(g.runtime_version));
  benchmark::AddCustomContext("commit", commit());
  benchmark::AddCustomContext("tcgen05", !self.uses_tcgen05 ? "not used"
                                         : g.tcgen05_native() ? "native"
                                                              : "EMULATED (timings are not performance)");
  benchmark::AddCustomContext("flop_convention", "2*M*N*K*L per launch (N = 1 for a GEMV)");
  benchmark::AddCustomContext("bytes_convention",
                              "GB/s = bytes / time: the fewest bytes the problem must move through DRAM (each input "
                              "once, C once; for a GEMV without the vector's scale padding)" +
                                  std::string(kind.merit() == Merit::kMemory
                                                  ? "; of_stream = GB/s over the fastest stream-read row of the shape"
                                                  : ""));
  benchmark::AddCustomContext("input_rotation", timing::rotation_rule_text() +
                                                    "; emulated tcgen05 rows (not performance) use " +
                                                    std::to_string(timing::kMinSets) + " sets and no flush");
  benchmark::AddCustomContext("timing", timing::method_sentence(method));
}

std::string tflops_text(double t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", t);
  return buf;
}

}  // namespace

void time_launches(benchmark::State& state, int sets, const std::function<void(int, cudaStream_t)>& launch,
                   double flops, double bytes, double peak_tflops, double bytes_per_set) {
  time_row(state, sets, bytes_per_set > 0 && timing::flushes_l2(sets, bytes_per_set), launch, flops, bytes,
           peak_tflops, bytes_per_set);
}

Variant registered_variant(const char* id) {
  const Stage* s = find_stage(id);
  if (!s) throw std::runtime_error(std::string("benchmark: no stage '") + id + "' is linked into this program");
  return {s->id, s->launcher()};
}

int run(int argc, char** argv, const Stage& self, const char* base_id, const Plan& plan) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  timing::Method method = timing::Method::kGraph;
  if (std::string bad; !timing::method_from_env(&method, &bad)) {
    std::fprintf(stderr, "bench_%s: GEMM_BENCH_TIMING must be \"graph\" (the default) or \"events\", not \"%s\"\n",
                 self.id, bad.c_str());
    return 1;
  }
  const GpuInfo& g = gpu_info();
  if (!g.usable) {
    std::fprintf(stderr, "bench_%s: benchmarks need a GPU: %s\n", self.id, g.why_not.c_str());
    return 2;
  }
  const Kind& kind = self.kind();
  std::vector<Shape> shapes = plan.shapes.empty() ? kind.bench_shapes() : plan.shapes;
  for (const Shape& s : shapes)
    for (char which : {'m', 'n', 'k'})
      if (const std::string rule = kind.size_rule(which, which == 'm' ? s.M : which == 'n' ? s.N : s.K); !rule.empty()) {
        std::fprintf(stderr, "bench_%s: shape %s: %c %s\n", self.id, shape_text(s).c_str(), which - 32, rule.c_str());
        return 1;
      }
  add_context(self, method);

  // A tcgen05 stage on a GPU without tcgen05 runs through the emulator, far too slowly for the big
  // shapes: it may name a reduced list for that case, used for every row, so that the base and the
  // peer are still timed at the same shapes as the stage.
  auto emulated = [&](const Stage& s) { return s.uses_tcgen05 && !g.tcgen05_native(); };
  if (emulated(self) && !plan.emulated_shapes.empty()) {
    shapes = plan.emulated_shapes;
    benchmark::AddCustomContext("shape_list", "reduced list for emulated tcgen05 (emulated_shapes)");
  }
  auto role = [&](const char* r, const Stage& s) { return std::string(r) + (emulated(s) ? " EMULATED" : ""); };

  std::vector<Row> rows;
  for (const ExtraRow& e : kind.extra_rows())
    if (e.role == "stream") rows.push_back({e.name, e.role, std::nullopt, e.prepare});
  const Peak own = kind.peak(self.uses_tcgen05);
  rows.push_back({self.id, role("stage", self), self.launcher(), {}, own.tflops});
  for (const Variant& v : plan.variants) rows.push_back({v.name, role("variant", self), v.launch, {}, own.tflops});
  benchmark::AddCustomContext("peak_name", own.name);
  benchmark::AddCustomContext("peak_tflops", own.tflops > 0 ? tflops_text(own.tflops) : "n/a");
  if (const Stage* base = find_stage(base_id)) {
    // An emulated base says nothing beside a stage that runs natively; it is left out.
    if (!emulated(*base) || emulated(self)) {
      const Peak p = base->kind().peak(base->uses_tcgen05);
      rows.push_back({base->id, role("predecessor", *base), base->launcher(), {}, p.tflops});
      if (p.name != own.name) {
        benchmark::AddCustomContext("predecessor_peak_name", p.name);
        benchmark::AddCustomContext("predecessor_peak_tflops", p.tflops > 0 ? tflops_text(p.tflops) : "n/a");
      }
    }
  }
  std::string note;
  for (const Peer& p : kind.peers(&note)) rows.push_back({p.name, "peer", p.launch, {}, 0.0});
  if (!note.empty()) benchmark::AddCustomContext("peer_note", note);
  for (const ExtraRow& e : kind.extra_rows())
    if (e.role != "stream") rows.push_back({e.name, e.role, std::nullopt, e.prepare});

  // Memory-bound kernels run for microseconds: their rows print in microseconds.
  const benchmark::TimeUnit unit = kind.merit() == Merit::kMemory ? benchmark::kMicrosecond : benchmark::kMillisecond;
  const double min_time = kind.merit() == Merit::kMemory ? 0.2 : 0.5;
  for (const Shape& s : shapes)
    for (const Row& row : rows) {
      const std::string name = row.name + "/" + shape_text(s);
      benchmark::RegisterBenchmark(name.c_str(), [&kind, row, s](benchmark::State& st) { run_row(st, kind, row, s); })
          ->UseManualTime()
          ->Unit(unit)
          ->MinTime(min_time);
    }
  if (plan.register_extra) plan.register_extra();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace gemm::bench
