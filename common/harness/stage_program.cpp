#include "common/harness/stage_program.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
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

int to_int(const char* flag, const char* v) {
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (!*v || *end || x < -2147483647L || x > 2147483647L) {
    std::fprintf(stderr, "%s expects an integer, got '%s'\n", flag, v);
    std::exit(2);
  }
  return int(x);
}

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

Options parse(int argc, char** argv, const Stage& stage, Options o, const std::vector<std::string>& extra_flags) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(a, "--m")) o.M = to_int(a, value(a));
    else if (!std::strcmp(a, "--n")) o.N = to_int(a, value(a));
    else if (!std::strcmp(a, "--k")) o.K = to_int(a, value(a));
    else if (!std::strcmp(a, "--l")) o.L = to_int(a, value(a));
    else if (!std::strcmp(a, "--iters")) o.iters = to_int(a, value(a));
    else if (!std::strcmp(a, "--seed")) o.seed = uint64_t(to_int(a, value(a)));
    else if (!std::strcmp(a, "--summary")) o.summary = value(a);
    else if (std::find(extra_flags.begin(), extra_flags.end(), a) != extra_flags.end()) o.extra[a] = value(a);
    else {
      std::string extras;
      for (const auto& f : extra_flags) extras += " [" + f + " VALUE]";
      const bool help = !std::strcmp(a, "--help") || !std::strcmp(a, "-h");
      std::fprintf(help ? stdout : stderr,
                   "%s%s: %s\n\nusage: %s [--m M] [--n N] [--k K] [--l L] [--iters I] [--seed S] [--summary FILE]%s\n"
                   "  runs the stage's walkthrough, then its kernel at C = A * B^T (M x N x K, L batches;\n"
                   "  defaults %d x %d x %d, L = %d), checks it against the CPU reference and times it.\n",
                   help ? "" : "unknown option; ", stage.id, stage.idea, argv[0], extras.c_str(), o.M, o.N, o.K, o.L);
      std::exit(help ? 0 : 2);
    }
  }
  return o;
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
  const std::string shape = std::to_string(o.M) + "x" + std::to_string(o.N) + "x" + std::to_string(o.K) +
                            (o.L > 1 ? "x" + std::to_string(o.L) : "");
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
  if (!o.summary.empty()) {
    std::ofstream f(o.summary, std::ios::app);
    char line[768];
    std::snprintf(line, sizeof line, "%s\t%s\t%s\t%.4f\t%.3f\t%.4f\t%s\t%s\n", stage.id, r.status.c_str(),
                  shape.c_str(), r.ms, r.tflops, r.peak_fraction, r.status == "SKIPPED" ? r.why.c_str() : r.note.c_str(),
                  r.peak_name.c_str());
    f << line;
  }
  return r.status == "FAILED" ? 1 : 0;
}

}  // namespace gemm::program
