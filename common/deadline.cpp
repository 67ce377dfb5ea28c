#include "common/deadline.h"

#include <cstdio>
#include <cstdlib>

#include "common/device_info.h"

namespace gemm {

// compute-sanitizer announces itself to the programs it runs with NV_SANITIZER_INJECTION_* variables,
// Nsight Compute (and other tools that inject into the CUDA runtime) with CUDA_INJECTION64_PATH.
bool under_injected_tool() {
  for (const char* name : {"NV_SANITIZER_INJECTION_PORT_BASE", "NV_SANITIZER_INJECTION_TRANSPORT_TYPE", "CUDA_INJECTION64_PATH"})
    if (const char* v = std::getenv(name); v && *v) return true;
  return false;
}

namespace {

unsigned long long compute_timeout_ns() {
  if (const char* env = std::getenv("GEMM_WAIT_TIMEOUT_S"); env && *env) {
    char* end = nullptr;
    const double s = std::strtod(env, &end);
    if (end != env && *end == '\0' && s > 0 && s < 1e6) return static_cast<unsigned long long>(s * 1e9);
    std::fprintf(stderr, "GEMM_WAIT_TIMEOUT_S='%s' is not a positive number of seconds; using the default\n", env);
  }
  unsigned long long t = kDefaultWaitTimeoutNs;
  const GpuInfo& g = gpu_info();
  if (g.usable && !g.tcgen05_native()) t *= 10;
  if (under_injected_tool()) t *= 50;
  return t;
}

}  // namespace

unsigned long long bounded_wait_timeout_ns() {
  static const unsigned long long t = compute_timeout_ns();
  return t;
}

}  // namespace gemm
