#include "common/harness/stage_program.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cuda_check.h"
#include "common/device_buffer.h"
#include "common/device_info.h"
#include "common/harness/compare.h"
#include "common/harness/problems.h"
#include "common/harness/timing.h"

namespace gemm::program {
namespace {

// Below this many multiply-adds the whole output is checked; above it, spots.
constexpr double kFullCheckMacs = 1ull << 31;
constexpr int kSpotSamples = 4096;

// The median of `iters` measurements of timing::LaunchTimer (the benchmarks' method: graph replays
// over input sets rotated past the L2, or launches after an L2 flush), in ms per launch.
double median_ms(int iters, timing::LaunchTimer& timer) {
  std::vector<double> ms(size_t(std::max(1, iters)));
  for (auto& t : ms) t = timer.measure_ms() / timer.launches_per_measurement();
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Run once on realistic inputs with a NaN-poisoned C (an output the kernel forgets cannot pass) and
// compare with the CPU reference (every output of a small problem; corners, tails and random spots of
// a large one). Then time `iters` measurements the way the benchmarks do, on random inputs of the
// same shape rotated over enough copies to defeat the L2 (or, too small for that, with the L2 flushed
// before each launch); a memory-bound kind's streaming read (its ceiling) is timed the same way, and
// the result is given as a fraction of it.
Result check_and_time(const Stage& stage, const Options& o) {
  const Kind& kind = stage.kind();
  const Shape shape = kind.program_shape(Shape{o.M, o.N, o.K, o.L, o.shape_extra});
  std::printf("  inputs: %s, seed %llu\n", kind.describe_inputs(Tier::kRealistic), (unsigned long long)o.seed);
  Result r;
  {
    const std::unique_ptr<Problem> p = kind.make_problem(shape, Tier::kRealistic, o.seed);
    const std::unique_ptr<DeviceInputs> in = p->upload();
    DeviceBuffer<uint8_t> C(size_t(kind.output_bytes(shape)));
    C.fill_bytes(0xFF);
    stage.launcher()(in->args(0, C.get()), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<uint8_t> got = C.download();
    const CompareResult cmp = kind.flops(shape) / 2 <= kFullCheckMacs
                                  ? p->compare(got.data(), Tile{128, 128, 128})
                                  : p->compare_spots(got.data(), kSpotSamples, o.seed);
    r.checked = cmp.checked;
    r.status = cmp.ok() ? "PASSED" : "FAILED";
    if (!cmp.ok()) r.why = cmp.describe();
  }
  timing::Method method = timing::Method::kGraph;
  std::string bad;
  timing::method_from_env(&method, &bad);
  const bool emulated = stage.uses_tcgen05 && !gpu_info().tcgen05_native();
  const double input_bytes = std::max(1.0, kind.min_bytes(shape) - double(kind.output_bytes(shape)));
  const timing::Rotation rotation = timing::rotation(input_bytes, emulated);  // as the benchmarks
  const int sets = rotation.sets;
  {
    const std::unique_ptr<DeviceInputs> in = kind.bench_inputs(shape, sets);
    DeviceBuffer<uint8_t> C(size_t(kind.output_bytes(shape)));
    std::vector<AnyArgs> args;
    for (int i = 0; i < sets; ++i) args.push_back(in->args(i, C.get()));
    const Launcher launch = stage.launcher();
    timing::LaunchTimer timer(sets, [&](int i, cudaStream_t st) { launch(args[size_t(i)], st); }, method,
                              rotation.flush_l2);
    r.ms = median_ms(o.iters, timer);
    r.timing = std::string(timer.launches_per_graph() > 0 ? "CUDA graphs" : "per-launch events") + ", " +
               std::to_string(sets) + " input sets" + (timer.flushing() ? ", the L2 flushed before each launch" : "");
  }
  r.tflops = kind.flops(shape) / (r.ms * 1e-3) * 1e-12;
  r.gbps = kind.min_bytes(shape) / (r.ms * 1e-3) * 1e-9;
  if (kind.merit() == Merit::kMemory && !emulated) {
    for (const ExtraRow& e : kind.extra_rows()) {
      if (e.role != "stream") continue;
      const TimedWork w = e.prepare(shape, [](double b) { return timing::input_sets(b); });
      timing::LaunchTimer timer(w.sets, w.launch, method, timing::flushes_l2(w.sets, kind.min_bytes(shape)));
      r.ceiling_gbps = std::max(r.ceiling_gbps, kind.min_bytes(shape) / (median_ms(o.iters, timer) * 1e-3) * 1e-9);
    }
  }
  return r;
}

}  // namespace

namespace {

// The program's name for messages: "stage03" (argv[0] without its directory).
std::string g_program = "stage";

[[noreturn]] void reject(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n%s: run with --help for the options\n", g_program.c_str(), message.c_str(),
               g_program.c_str());
  std::exit(kBadArgumentsExit);
}

// "--k 33: ": how a message names the option and the value it was given.
std::string given(const std::string& flag, const std::string& value) { return flag + " '" + value + "': "; }

// "fp32 or bf16", "e4m3, e5m2 or ..." : the words a named option takes.
std::string names_rule(const Flag& f) {
  std::string rule;
  for (size_t i = 0; i < f.names.size(); ++i)
    rule += std::string(i ? (i + 1 == f.names.size() ? " or " : ", ") : "") + f.names[i];
  return rule;
}

// A decimal integer, the whole string, within [lo, hi].
long long parse_integer(const std::string& flag, const std::string& v, long long lo, long long hi, const std::string& rule) {
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  const bool digits = !v.empty() && (std::isdigit(static_cast<unsigned char>(v[0])) ||
                                     ((v[0] == '-' || v[0] == '+') && v.size() > 1));
  if (!digits || *end || errno == ERANGE) reject(given(flag, v) + "is not an integer; it must be " + rule);
  if (x < lo || x > hi) reject(given(flag, v) + "must be " + rule);
  return x;
}

uint64_t parse_seed(const std::string& flag, const std::string& v) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0])) || *end || errno == ERANGE)
    reject(given(flag, v) + "is not an integer; it must be from 0 to 2^64 - 1");
  return uint64_t(x);
}

// Empty when `path` can be written (created, or appended to) without touching it now; otherwise why not.
std::string why_not_writable(const std::string& path) {
  if (path.empty()) return "an empty file name";
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return "is a directory";
    if (access(path.c_str(), W_OK) != 0) return std::string("cannot be written (") + std::strerror(errno) + ")";
    return "";
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "its directory " + dir + " does not exist";
  if (access(dir.c_str(), W_OK) != 0) return "its directory " + dir + " cannot be written to";
  return "";
}

void check_writable(const std::string& flag, const std::string& path) {
  const std::string why = why_not_writable(path);
  if (!why.empty()) reject(given(flag, path) + "the file must be writable, and " + why);
}

std::string shape_text(const Options& o) {
  return std::to_string(o.M) + "x" + std::to_string(o.N) + "x" + std::to_string(o.K) +
         (o.L > 1 ? "x" + std::to_string(o.L) : "");
}

// Appends the tutorial runner's line; false (with a message) if the file could not be written.
bool append_summary(const Stage& stage, const Options& o, const Result& r) {
  if (o.summary.empty()) return true;
  // id, check, shape, ms per launch, the kind's figure of merit and its unit (TFLOP/s or GB/s), the
  // fraction of what it is measured against, that ceiling's name, a note (or why it was skipped).
  const bool memory = stage.kind().merit() == Merit::kMemory;
  char line[1024];
  std::snprintf(line, sizeof line, "%s\t%s\t%s\t%.4f\t%.3f\t%s\t%.4f\t%s\t%s\n", stage.id, r.status.c_str(),
                shape_text(o).c_str(), r.ms, memory ? r.gbps : r.tflops, memory ? "GB/s" : "TFLOP/s", r.peak_fraction,
                r.peak_name.c_str(), r.status == "SKIPPED" ? r.why.c_str() : r.note.c_str());
  std::ofstream f(o.summary, std::ios::app);
  f << line;
  f.close();
  if (!f) {
    std::fprintf(stderr, "%s: --summary '%s': could not append the result line\n", g_program.c_str(), o.summary.c_str());
    return false;
  }
  return true;
}

void print_help(const Stage& stage, const Options& d, const std::vector<Flag>& flags) {
  std::printf("%s: stage %s\n  %s\n\n", g_program.c_str(), stage.id, stage.idea);
  std::printf("usage: %s [OPTION VALUE]...   (or --option=VALUE)\n", g_program.c_str());
  std::printf("  Explains the stage with the numbers of the problem, then runs its kernel on C = A * B^T (M x N x K,\n"
              "  L batches), checks the result against the CPU reference and times it. Without a GPU only the\n"
              "  explanation runs; on a GPU this program cannot use, it says so in one line.\n\n");
  const Kind& kind = stage.kind();
  std::string problem = kind.summary();  // indented under its heading, line by line
  for (size_t at = problem.find('\n'); at != std::string::npos; at = problem.find('\n', at + 1)) problem.insert(at + 1, "  ");
  std::printf("  The problem (%s):\n    %s\n\n", kind.title(), problem.c_str());
  std::printf("  --m M          rows of A and of C (default %d): %s\n", d.M, kind.size_help('m').c_str());
  std::printf("  --n N          rows of B, columns of C (default %d): %s\n", d.N, kind.size_help('n').c_str());
  std::printf("  --k K          length of the dot products (default %d): %s\n", d.K, kind.size_help('k').c_str());
  std::printf("  --l L          (default %d): %s\n", d.L, kind.size_help('l').c_str());
  std::printf("                 (M*K*L, N*K*L and M*N*L must each stay below 2^46)\n");
  std::printf("  --iters I      timed measurements (graph replays), the median is reported (default %d): 1 to\n"
              "                 1000000\n", d.iters);
  std::printf("  --seed S       seed of the random inputs (default %llu): 0 to 2^64 - 1\n", (unsigned long long)d.seed);
  std::printf("  --summary FILE append the result as one tab-separated line to FILE (the tutorial runner\n"
              "                 reads it); FILE must be writable\n");
  for (const Flag& f : flags) {
    std::string rule;
    if (f.kind == Flag::Kind::kOutputFile) {
      rule = "FILE must be writable";
    } else if (!f.names.empty()) {
      rule = names_rule(f) + " (default " + f.names[0] + ")";
    } else if (!f.choices.empty()) {
      for (size_t i = 0; i < f.choices.size(); ++i)
        rule += (i ? (i + 1 == f.choices.size() ? " or " : ", ") : "") + std::to_string(f.choices[i]);
    } else {
      rule = std::to_string(f.min) + " to " + std::to_string(f.max);
    }
    if (f.requires_flag) rule += std::string("; only with ") + f.requires_flag;
    char head[64];
    std::snprintf(head, sizeof head, "%s %s", f.name, f.value);
    std::printf("  %-14s %s: %s\n", head, f.help, rule.c_str());
  }
  std::printf("  --help, -h     this text\n");
}

}  // namespace

int flag_int(const Options& o, const char* name, int fallback) {
  const auto it = o.extra.find(name);
  return it == o.extra.end() ? fallback : std::atoi(it->second.c_str());
}

Options parse(int argc, char** argv, const Stage& stage, Options o, const std::vector<Flag>& flags) {
  if (argc > 0 && argv[0]) {
    g_program = argv[0];
    if (const size_t slash = g_program.find_last_of('/'); slash != std::string::npos) g_program.erase(0, slash + 1);
  }
  // Last resort: an exception that escapes main is a message, not an abort. std::invalid_argument
  // means the options asked for something the stage cannot do (e.g. more tiles than its scheduler
  // counts): exit code 2, as for any bad argument; anything else is an error, exit code 1.
  std::set_terminate([] {
    std::string what = "terminated without an exception";
    int code = 1;
    if (const std::exception_ptr e = std::current_exception()) {
      try {
        std::rethrow_exception(e);
      } catch (const std::invalid_argument& x) {
        what = std::string("the options give a problem this stage cannot run: ") + x.what();
        code = kBadArgumentsExit;
      } catch (const std::exception& x) {
        what = x.what();
      } catch (...) {
        what = "an exception that is not a std::exception";
      }
    }
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", g_program.c_str(), what.c_str());
    std::_Exit(code);
  });

  const Options defaults = o;
  const Kind& kind = stage.kind();
  // A size the kind does not allow ("--n 2" for a GEMV, a K that is no multiple of 32 for NVFP4).
  auto check_size = [&](const std::string& flag, const std::string& value, char which, long long v) {
    if (const std::string rule = kind.size_rule(which, v); !rule.empty()) reject(given(flag, value) + rule);
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      print_help(stage, defaults, flags);
      std::exit(0);
    }
    if (a.rfind("--", 0) != 0) reject("unexpected argument '" + a + "' (options start with --)");
    std::string value;
    bool has_value = false;
    if (const size_t eq = a.find('='); eq != std::string::npos) {
      value = a.substr(eq + 1);
      a.erase(eq);
      has_value = true;
    }
    const Flag* extra = nullptr;
    for (const Flag& f : flags)
      if (a == f.name) extra = &f;
    static const char* const kCommon[] = {"--m", "--n", "--k", "--l", "--iters", "--seed", "--summary"};
    const bool known = extra || std::find_if(std::begin(kCommon), std::end(kCommon),
                                             [&](const char* c) { return a == c; }) != std::end(kCommon);
    if (!known) {
      std::string names;
      for (const char* c : kCommon) names += std::string(" ") + c;
      for (const Flag& f : flags) names += std::string(" ") + f.name;
      reject("unknown option '" + a + "' (the options are" + names + ", --help)");
    }
    if (!has_value) {
      if (i + 1 >= argc) reject(a + " needs a value");
      value = argv[++i];
    }
    constexpr long long kIntMax = 2147483647;
    if (a == "--m") {
      o.M = int(parse_integer(a, value, 1, kIntMax, "from 1 to 2147483647"));
      check_size(a, value, 'm', o.M);
    } else if (a == "--n") {
      o.N = int(parse_integer(a, value, 1, kIntMax, "from 1 to 2147483647"));
      check_size(a, value, 'n', o.N);
    } else if (a == "--k") {
      o.K = int(parse_integer(a, value, 1, kIntMax, "from 1 to 2147483647"));
      check_size(a, value, 'k', o.K);
    } else if (a == "--l") {
      o.L = int(parse_integer(a, value, 1, kMaxBatch, "from 1 to 65535"));
      check_size(a, value, 'l', o.L);
    } else if (a == "--iters") o.iters = int(parse_integer(a, value, 1, 1000000, "from 1 to 1000000"));
    else if (a == "--seed") o.seed = parse_seed(a, value);
    else if (a == "--summary") {
      check_writable(a, value);
      o.summary = value;
    } else if (extra->kind == Flag::Kind::kOutputFile) {
      check_writable(a, value);
      o.extra[a] = value;
    } else if (!extra->names.empty()) {
      const auto at = std::find_if(extra->names.begin(), extra->names.end(), [&](const char* n) { return value == n; });
      if (at == extra->names.end()) reject(given(a, value) + "must be " + names_rule(*extra));
      o.extra[a] = std::to_string(at - extra->names.begin());
    } else if (!extra->choices.empty()) {
      std::string rule;
      for (size_t c = 0; c < extra->choices.size(); ++c)
        rule += (c ? (c + 1 == extra->choices.size() ? " or " : ", ") : "") + std::to_string(extra->choices[c]);
      const long long x = parse_integer(a, value, INT32_MIN, INT32_MAX, rule);
      if (std::find(extra->choices.begin(), extra->choices.end(), x) == extra->choices.end())
        reject(given(a, value) + "must be " + rule);
      o.extra[a] = std::to_string(x);
    } else {
      const std::string rule = "from " + std::to_string(extra->min) + " to " + std::to_string(extra->max);
      o.extra[a] = std::to_string(parse_integer(a, value, extra->min, extra->max, rule));
    }
  }
  for (const Flag& f : flags)
    if (f.requires_flag && o.extra.count(f.name) && !o.extra.count(f.requires_flag))
      reject(std::string(f.name) + " applies only together with " + f.requires_flag);
  // The GEMM API's size rule (common/gemm_api.h): element counts far from overflow.
  const double limit = double(int64_t(1) << 46);
  if (double(o.M) * o.K * o.L > limit || double(o.N) * o.K * o.L > limit || double(o.M) * o.N * o.L > limit)
    reject("--m " + std::to_string(o.M) + " --n " + std::to_string(o.N) + " --k " + std::to_string(o.K) + " --l " +
           std::to_string(o.L) + ": M*K*L, N*K*L and M*N*L must each be below 2^46");

  // A GPU that cannot run this program: one line, and the tutorial runner's SKIPPED line.
  const GpuInfo& g = gpu_info();
  if (g.present && !g.usable) {
    std::printf("%s: not run on this GPU: %s\n", g_program.c_str(), g.why_not.c_str());
    Result r;
    r.why = g.why_not;
    std::exit(append_summary(stage, o, r) ? 0 : 1);
  }
  // A problem too big for this GPU's memory, or for this machine's, before anything is allocated:
  // the operands and C on the GPU; on the host the same, plus the FP32 inputs NVFP4 is quantized from.
  if (g.usable) {
    const Shape shape = kind.program_shape(Shape{o.M, o.N, o.K, o.L});
    const double device = kind.device_bytes(shape), host = kind.host_bytes(shape);
    const double host_memory = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
    const std::string sizes = "--m " + std::to_string(o.M) + " --n " + std::to_string(o.N) + " --k " +
                              std::to_string(o.K) + " --l " + std::to_string(o.L);
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) cudaGetLastError();
    char why[256];
    if (total_bytes > 0 && device > 0.9 * double(free_bytes)) {
      std::snprintf(why, sizeof why, ": the problem needs %.1f GB of GPU memory, more than 90%% of the %.1f GB free on %s",
                    device * 1e-9, free_bytes * 1e-9, g.name.c_str());
      reject(sizes + why);
    }
    if (host_memory > 0 && host > 0.8 * host_memory) {
      std::snprintf(why, sizeof why, ": the problem needs %.1f GB of host memory, more than 80%% of this machine's %.1f GB",
                    host * 1e-9, host_memory * 1e-9);
      reject(sizes + why);
    }
  }
  return o;
}

bool write_output_file(const char* flag, const std::string& path, const std::string& contents) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << contents;
  f.close();
  if (!f) {
    std::fprintf(stderr, "%s: %s '%s': could not write the file\n", g_program.c_str(), flag, path.c_str());
    return false;
  }
  std::printf("  wrote %s\n", path.c_str());
  return true;
}

void banner(const Stage& stage) {
  std::printf("\n================================================================================\n");
  std::printf(" Stage %s: %s\n", stage.id, stage.idea);
  std::printf("================================================================================\n");
}

void section(const char* title) { std::printf("\n-- %s\n", title); }

void print_resources(const char* name, const void* kernel, int threads, int dynamic_smem) {
  const GpuInfo& g = gpu_info();
  if (!g.usable) {
    std::printf("  %s: registers and occupancy need a GPU (%s); see `cmake --build build --target sass_...`\n",
                name, g.why_not.c_str());
    return;
  }
  cudaFuncAttributes attr{};
  int blocks = 0;
  if (dynamic_smem > 48 * 1024)  // what the launcher does too: allow more than the default 48 KB
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic_smem);
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dynamic_smem) != cudaSuccess) {
    cudaGetLastError();
    std::printf("  %s: function attributes unavailable\n", name);
    return;
  }
  std::printf("  %s on %s: %d registers/thread, %zu B static + %d B dynamic shared memory/block, %zu B local "
              "(spills)/thread\n", name, g.name.c_str(), attr.numRegs, attr.sharedSizeBytes, dynamic_smem,
              attr.localSizeBytes);
  std::printf("  -> %d block(s) of %d threads per SM = %d warps of 64 (%.0f%% occupancy)\n", blocks, threads,
              blocks * threads / 32, 100.0 * blocks * threads / 32 / 64);
}

Result run_and_check(const Stage& stage, const Options& o) {
  const GpuInfo& g = gpu_info();
  if (!g.usable) {
    Result r;
    r.why = "no usable GPU: " + g.why_not;
    return r;
  }
  std::printf("  GPU: %s (sm_%d%d, %d SMs, %.0f MHz peak), CUDA runtime %s, driver %s\n", g.name.c_str(), g.cc_major,
              g.cc_minor, g.sm_count, g.sm_clock_khz / 1e3, cuda_version_string(g.runtime_version).c_str(),
              cuda_version_string(g.driver_version).c_str());
  try {
    Result r = check_and_time(stage, o);
    // What the time is measured against: a memory-bound kind's streaming read, timed beside it; the
    // tensor cores' dense NVFP4 rate for the tcgen05 stages on an sm_100 GPU; the CUDA cores' FP32 FMA
    // rate for the other compute-bound stages; nothing where tcgen05 is emulated, because that time
    // is the emulator's.
    const Kind& kind = stage.kind();
    if (stage.uses_tcgen05 && !g.tcgen05_native()) {
      r.note = "tcgen05 EMULATED on this GPU: the time is not performance";
      r.peak_name = "EMULATED";
    } else if (kind.merit() == Merit::kMemory) {
      r.peak_fraction = r.ceiling_gbps > 0 ? r.gbps / r.ceiling_gbps : 0;
      r.peak_name = "stream read";
    } else {
      r.peak_fraction = r.tflops / kind.peak(stage.uses_tcgen05).tflops;
      r.peak_name = stage.uses_tcgen05 ? "NVFP4 tensor" : "FP32 CUDA-core";
    }
    return r;
  } catch (const std::exception& e) {
    Result r;
    r.status = "FAILED";
    r.why = e.what();
    return r;
  }
}

int finish(const Stage& stage, const Options& o, const Result& r) {
  const std::string shape = shape_text(o);
  section("result");
  if (r.status == "SKIPPED") {
    std::printf("  GPU part skipped: %s\n", r.why.c_str());
  } else {
    std::printf("  check against the CPU reference: %s (%lld outputs compared)\n", r.status.c_str(), (long long)r.checked);
    if (!r.why.empty()) std::printf("%s\n", r.why.c_str());
    if (r.peak_name == "EMULATED")
      std::printf("  %s: median %.3f ms over %d measurements (EMULATED: no performance meaning)\n", shape.c_str(), r.ms,
                  o.iters);
    else if (stage.kind().merit() == Merit::kMemory)
      std::printf("  %s: median %.4f ms over %d measurements = %.0f GB/s, %.1f%% of the streaming read (%.0f GB/s)"
                  " measured beside it\n", shape.c_str(), r.ms, o.iters, r.gbps, 100.0 * r.peak_fraction, r.ceiling_gbps);
    else
      std::printf("  %s: median %.3f ms over %d measurements = %.2f TFLOP/s, %.0f GB/s, %.1f%% of the %s peak\n",
                  shape.c_str(), r.ms, o.iters, r.tflops, r.gbps, 100.0 * r.peak_fraction, r.peak_name.c_str());
    std::printf("  timed as the benchmarks do: %s (common/harness/timing.h), each measurement a graph replay or\n"
                "  one launch; the ms are per launch\n", r.timing.c_str());
    if (!r.note.empty()) std::printf("  NOTE: %s\n", r.note.c_str());
  }
  const bool summary_ok = append_summary(stage, o, r);
  return r.status == "FAILED" || !summary_ok ? 1 : 0;
}

}  // namespace gemm::program
