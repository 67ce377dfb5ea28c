#include "common/device_info.h"

#include <cuda_runtime.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace gemm {
namespace {

// A kernel with no work, only to ask whether common/'s code (compiled like every stage's from
// sm_80 on) loads on this GPU.
__global__ void probe_kernel() {}

#ifndef GEMM_COMMON_ARCHITECTURES
#define GEMM_COMMON_ARCHITECTURES "?"
#endif

ProgramNeeds& declared_needs() {
  static ProgramNeeds needs;  // function-local: safe during static initialisation
  return needs;
}

// What a compute capability (x 10) gives a program, for the messages.
std::string describe_need(int min_sm) {
  const std::string cc = std::to_string(min_sm / 10) + "." + std::to_string(min_sm % 10);
  if (min_sm >= 100) return "tcgen05 tensor cores, compute capability " + cc;
  if (min_sm >= 90) return "TMA and thread-block clusters, compute capability " + cc + " or newer";
  return "compute capability " + cc + " or newer";
}

// `built` says whose code (this program's, or common/'s) was built for what; none of it loads here.
std::string no_code_text(const GpuInfo& g, cudaError_t err, const std::string& built) {
  std::string s = "no code in this build loads on " + g.name + " (sm_" + std::to_string(g.cc_major) +
                  std::to_string(g.cc_minor) + "): " + built;
  if (err != cudaErrorNoKernelImageForDevice) s += std::string(" (") + cudaGetErrorString(err) + ")";
  if (err == cudaErrorUnsupportedPtxVersion) s += "; the driver is older than the toolkit that wrote the PTX";
  const char* jit = std::getenv("CUDA_FORCE_PTX_JIT");
  if (jit && *jit && std::string(jit) != "0")
    s += "; CUDA_FORCE_PTX_JIT is set: the driver ignores machine code, and -real targets carry no PTX";
  return s + " (README.md, \"Which GPU runs what\")";
}

cudaError_t load(const void* kernel) {
  cudaFuncAttributes attr{};
  const cudaError_t err = cudaFuncGetAttributes(&attr, kernel);
  cudaGetLastError();
  return err;
}

GpuInfo probe() {
  GpuInfo g;
  cudaRuntimeGetVersion(&g.runtime_version);
  if (cudaDriverGetVersion(&g.driver_version) != cudaSuccess || g.driver_version == 0) {
    g.why_not = "no CUDA driver on this machine";
    return g;
  }
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    g.why_not = std::string("no CUDA device (") + cudaGetErrorString(err) + ")";
    if (err == cudaErrorInsufficientDriver)
      g.why_not += ": the driver (CUDA " + cuda_version_string(g.driver_version) + ") is older than this build's CUDA " +
                   cuda_version_string(g.runtime_version) + " runtime; README.md, \"Troubleshooting\"";
    cudaGetLastError();
    return g;
  }
  cudaGetDevice(&g.device);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, g.device);
  g.present = true;
  g.name = prop.name;
  g.cc_major = prop.major;
  g.cc_minor = prop.minor;
  g.sm_count = prop.multiProcessorCount;
  g.l2_bytes = prop.l2CacheSize;
  g.smem_per_block_optin = int(prop.sharedMemPerBlockOptin);
  g.mem_bus_bits = prop.memoryBusWidth;
  cudaDeviceGetAttribute(&g.sm_clock_khz, cudaDevAttrClockRate, g.device);
  cudaDeviceGetAttribute(&g.mem_clock_khz, cudaDevAttrMemoryClockRate, g.device);

  const ProgramNeeds& needs = declared_needs();
  const int sm = 10 * g.cc_major + g.cc_minor;
  if (sm < needs.min_sm) {
    g.why_not = g.name + " is compute capability " + g.compute_capability() + "; this program needs " +
                describe_need(needs.min_sm) + " (README.md, \"Which GPU runs what\")";
    return g;
  }
  if (const cudaError_t e = load(reinterpret_cast<const void*>(&probe_kernel)); e != cudaSuccess) {
    g.why_not = no_code_text(g, e, std::string("common/ was built for ") + GEMM_COMMON_ARCHITECTURES);
    return g;
  }
  if (needs.load_probe) {
    if (const cudaError_t e = needs.load_probe(); e != cudaSuccess) {
      g.why_not = no_code_text(g, e, "this program needs " + describe_need(needs.min_sm) + ", and was built for " +
                                         needs.architectures);
      return g;
    }
  }
  g.usable = true;
  return g;
}

}  // namespace

void declare_program_needs(const ProgramNeeds& needs) { declared_needs() = needs; }

const GpuInfo& gpu_info() {
  static const GpuInfo info = probe();
  return info;
}

std::string gpu_clocks_now() {
  const GpuInfo& g = gpu_info();
  if (!g.usable) return "unavailable";
  // nvidia-smi numbers GPUs in its own order; the PCI bus id names the same one CUDA uses.
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, g.device) != cudaSuccess) return "unavailable";
  const std::string cmd = std::string("nvidia-smi -i ") + bus_id +
                          " --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,power.draw --format=csv,noheader 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return "unavailable";
  std::array<char, 256> buf{};
  std::string out;
  while (fgets(buf.data(), int(buf.size()), pipe.get())) out += buf.data();
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.empty()) return "unavailable";
  return "sm, mem, max sm, power: " + out;
}

std::string cuda_version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace gemm
