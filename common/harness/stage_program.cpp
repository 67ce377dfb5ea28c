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
#include "common/reference.h"

namespace gemm::program {
namespace {

// Below this many multiply-adds the whole output is checked; above it, spots.
constexpr double kFullCheckMacs = 1ull << 31;
constexpr int kSpotSamples = 4096;

template <class Launch>
double median_ms(int iters, Launch&& launch) {
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  std::vector<float> ms(std::max(1, iters));
  for (int w = 0; w < 2; ++w) launch();  // warm-up
  for (auto& t : ms) {
    CUDA_CHECK(cudaEventRecord(a));
    launch();
    CUDA_CHECK(cudaEventRecord(b));
    CUDA_CHECK(cudaEventSynchronize(b));
    CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
  }
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Run once on a NaN-poisoned C (an output the kernel forgets cannot pass), compare with the CPU
// reference (every output of a small problem; corners, tails and random spots of a large one),
// then time `iters` launches.
template <class Args, class Out, class Launch, class CompareFull, class CompareSpots>
Result check_and_time(const Options& o, const Args& host, const Args& args, DeviceBuffer<Out>& C, Launch launch,
                      CompareFull compare_full, CompareSpots compare_spots) {
  Result r;
  C.fill_bytes(0xFF);
  launch();
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<Out> got = C.download();
  const CompareShape shape{o.M, o.N, o.K, o.L};
  CompareResult cmp;
  if (double(o.M) * o.N * o.K * o.L <= kFullCheckMacs) {
    cmp = compare_full(got, reference_gemm(host), shape);
  } else {
    SpotSet s = spot_positions(o.M, o.N, o.L, kSpotSamples, o.seed);
    for (size_t i = 0; i < s.l.size(); ++i) {
      double abs_sum;
      s.want.push_back(reference_at(host, s.l[i], s.m[i], s.n[i], &abs_sum));
      s.abs_sum.push_back(abs_sum);
    }
    cmp = compare_spots(got, s, shape);
  }
  r.checked = cmp.checked;
  r.status = cmp.ok() ? "PASSED" : "FAILED";
  if (!cmp.ok()) r.why = cmp.describe();
  r.ms = median_ms(o.iters, launch);
  r.tflops = flops(o.M, o.N, o.K, o.L) / (r.ms * 1e-3) * 1e-12;
  r.gbps = min_bytes(args) / (r.ms * 1e-3) * 1e-9;
  return r;
}

Result check_and_time_fp32(const Stage& stage, const Options& o) {
  std::printf("  inputs: realistic normal(0,1) data with outliers, seed %llu\n", (unsigned long long)o.seed);
  const HostFp32Problem p = make_fp32_problem(o.M, o.N, o.K, o.L, Tier::kRealistic, o.seed);
  DeviceBuffer<float> A(p.A), B(p.B), C(size_t(int64_t(o.M) * o.N * o.L));
  const Fp32GemmArgs args{o.M, o.N, o.K, o.L, A.get(), B.get(), C.get()};
  return check_and_time(
      o, p.host_args(), args, C, [&] { stage.fp32(args, nullptr); },
      [](const auto& got, const ReferenceOutput& ref, const CompareShape& sh) {
        return compare_fp32(got, ref, sh, Tier::kRealistic);
      },
      compare_spots_fp32);
}

Result check_and_time_nvfp4(const Stage& stage, const Options& o) {
  std::printf("  inputs: realistic normal(0,1) data with outliers, quantized to NVFP4 on the CPU, seed %llu\n",
              (unsigned long long)o.seed);
  const HostNvfp4Problem p = make_nvfp4_problem(o.M, o.N, o.K, o.L, Tier::kRealistic, o.seed);
  DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
  DeviceBuffer<uint16_t> C(size_t(int64_t(o.M) * o.N * o.L));
  const Nvfp4GemmArgs args{o.M, o.N, o.K, o.L, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha,
                           reinterpret_cast<__half*>(C.get())};
  return check_and_time(
      o, p.host_args(), args, C, [&] { stage.nvfp4(args, nullptr); },
      [](const auto& got, const ReferenceOutput& ref, const CompareShape& sh) {
        return compare_fp16(got, ref, sh, Tier::kRealistic);
      },
      compare_spots_fp16);
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
  char line[1024];
  std::snprintf(line, sizeof line, "%s\t%s\t%s\t%.4f\t%.3f\t%.4f\t%s\t%s\n", stage.id, r.status.c_str(),
                shape_text(o).c_str(), r.ms, r.tflops, r.peak_fraction,
                r.status == "SKIPPED" ? r.why.c_str() : r.note.c_str(), r.peak_name.c_str());
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
  const bool nvfp4 = stage.precision == Precision::kNvfp4;
  std::printf("  --m M          rows of A and of C (default %d): 1 or more\n", d.M);
  std::printf("  --n N          rows of B, columns of C (default %d): 1 or more\n", d.N);
  std::printf("  --k K          length of the dot products (default %d): 1 or more%s\n", d.K,
              nvfp4 ? ", a multiple of 32 (NVFP4)" : "");
  std::printf("  --l L          batches: C[l] = A[l] * B[l]^T (default %d): 1 to %d\n", d.L, kMaxBatch);
  std::printf("                 (M*K*L, N*K*L and M*N*L must each stay below 2^46)\n");
  std::printf("  --iters I      timed launches, the median is reported (default %d): 1 to 1000000\n", d.iters);
  std::printf("  --seed S       seed of the random inputs (default %llu): 0 to 2^64 - 1\n", (unsigned long long)d.seed);
  std::printf("  --summary FILE append the result as one tab-separated line to FILE (the tutorial runner\n"
              "                 reads it); FILE must be writable\n");
  for (const Flag& f : flags) {
    std::string rule;
    if (f.kind == Flag::Kind::kOutputFile) {
      rule = "FILE must be writable";
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
  const bool nvfp4 = stage.precision == Precision::kNvfp4;
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
    if (a == "--m") o.M = int(parse_integer(a, value, 1, kIntMax, "from 1 to 2147483647"));
    else if (a == "--n") o.N = int(parse_integer(a, value, 1, kIntMax, "from 1 to 2147483647"));
    else if (a == "--k") {
      o.K = int(parse_integer(a, value, 1, kIntMax, "from 1 to 2147483647"));
      if (nvfp4 && o.K % kNvfp4KMultiple != 0)
        reject(given(a, value) + "must be a multiple of 32 for an NVFP4 stage (each row of A and B is whole "
               "16-byte chunks)");
    } else if (a == "--l") o.L = int(parse_integer(a, value, 1, kMaxBatch, "from 1 to 65535"));
    else if (a == "--iters") o.iters = int(parse_integer(a, value, 1, 1000000, "from 1 to 1000000"));
    else if (a == "--seed") o.seed = parse_seed(a, value);
    else if (a == "--summary") {
      check_writable(a, value);
      o.summary = value;
    } else if (extra->kind == Flag::Kind::kOutputFile) {
      check_writable(a, value);
      o.extra[a] = value;
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
    const double mk = double(o.M) * o.K * o.L, nk = double(o.N) * o.K * o.L, mn = double(o.M) * o.N * o.L;
    const double device = nvfp4 ? 0.5625 * (mk + nk) + 2 * mn : 4 * (mk + nk + mn);
    const double host = device + (nvfp4 ? 4 * (mk + nk) : 0);
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
    Result r = stage.precision == Precision::kFp32 ? check_and_time_fp32(stage, o) : check_and_time_nvfp4(stage, o);
    // The peak a stage's time is measured against: the tensor cores' dense NVFP4 rate for the tcgen05
    // stages on an sm_100 GPU, the CUDA cores' FP32 FMA rate for the others; none where tcgen05 is
    // emulated, because that time is the emulator's.
    if (stage.uses_tcgen05 && !g.tcgen05_native()) {
      r.note = "tcgen05 EMULATED on this GPU: the time is not performance";
      r.peak_name = "EMULATED";
    } else if (stage.uses_tcgen05) {
      r.peak_fraction = r.tflops / g.nvfp4_dense_peak_tflops();
      r.peak_name = "NVFP4 tensor";
    } else {
      r.peak_fraction = r.tflops / g.fp32_peak_tflops();
      r.peak_name = "FP32 CUDA-core";
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
      std::printf("  %s: median %.3f ms over %d runs (EMULATED: no performance meaning)\n", shape.c_str(), r.ms, o.iters);
    else
      std::printf("  %s: median %.3f ms over %d runs = %.2f TFLOP/s, %.0f GB/s, %.1f%% of the %s peak\n", shape.c_str(),
                  r.ms, o.iters, r.tflops, r.gbps, 100.0 * r.peak_fraction, r.peak_name.c_str());
    if (!r.note.empty()) std::printf("  NOTE: %s\n", r.note.c_str());
  }
  const bool summary_ok = append_summary(stage, o, r);
  return r.status == "FAILED" || !summary_ok ? 1 : 0;
}

}  // namespace gemm::program
