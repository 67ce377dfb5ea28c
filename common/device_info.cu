#include "common/device_info.h"

#include <cuda_runtime.h>

#include <array>
#include <cstdio>
#include <memory>

namespace gemm {
namespace {

// A kernel with no work, only to ask whether this binary has code the GPU can load.
__global__ void probe_kernel() {}

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
    cudaGetLastError();
    return g;
  }
  cudaGetDevice(&g.device);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, g.device);
  g.name = prop.name;
  g.cc_major = prop.major;
  g.cc_minor = prop.minor;
  g.sm_count = prop.multiProcessorCount;
  g.l2_bytes = prop.l2CacheSize;
  g.smem_per_block_optin = int(prop.sharedMemPerBlockOptin);
  g.mem_bus_bits = prop.memoryBusWidth;
  cudaDeviceGetAttribute(&g.sm_clock_khz, cudaDevAttrClockRate, g.device);
  cudaDeviceGetAttribute(&g.mem_clock_khz, cudaDevAttrMemoryClockRate, g.device);

  cudaFuncAttributes attr{};
  err = cudaFuncGetAttributes(&attr, probe_kernel);
  if (err != cudaSuccess) {
    g.why_not = "this build has no code for " + g.name + " (sm_" + std::to_string(g.cc_major) +
                std::to_string(g.cc_minor) + "); it targets sm_90a and sm_100a: " + cudaGetErrorString(err);
    cudaGetLastError();
    return g;
  }
  g.usable = true;
  return g;
}

}  // namespace

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
