// The launch door: every stage's launcher ends in one call,
//
//   gemm::launch_kernel(kernel, {grid, block, smem_bytes, stream[, cluster]}, kernel arguments...);
//
// which does, in this order, what each launcher used to repeat (and one of them forgot):
//   1. bind_device_state()   this source file's device state: the deadline of bounded waits, the
//                            protocol checker, the tcgen05 emulator, whichever its headers define
//                            (common/device_state.h says how, without depending on header order);
//   2. allow_dynamic_smem()  the kernel's dynamic shared-memory attribute, where it uses any;
//   3. cudaLaunchKernelEx    the launch, with a cluster shape where the launch names one;
//   4. the check             of the launch's return code: a bad configuration throws here, naming the
//                            kernel and the shape, instead of surfacing at a later unrelated call.
//
// Why one door. The binding is the step a launcher can forget without any visible failure: an unbound
// file runs its kernels with the checker's hooks returning at once and the default deadline, so a
// protocol bug goes unreported instead of failing. With the door, a launcher that launches binds.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/cuda_check.h"
#include "common/device_state.h"

namespace gemm {

// How a kernel is launched: the grid, block, dynamic shared memory and stream of the <<<...>>> syntax,
// in that order, and the cluster shape.
struct LaunchShape {
  dim3 grid;
  dim3 block;
  size_t smem_bytes = 0;          // dynamic shared memory per CTA
  cudaStream_t stream = nullptr;
  // CTAs per thread-block cluster, chosen at launch (stage 09 picks its split count per problem, 1
  // included: its launches are cluster launches whatever the count). Left at (0, 0, 0), the launch
  // carries no cluster attribute: it is then a cluster of one CTA, or of the shape the kernel declares
  // with __cluster_dims__ (the CTA pairs of stages 05-08), which a launch-time shape may not contradict.
  dim3 cluster = dim3(0, 0, 0);
};

// Throws the launch's error with what was launched (the kernel's name as the runtime knows it).
[[noreturn]] inline void throw_launch_error(const void* kernel, const LaunchShape& s, const char* step,
                                            cudaError_t err) {
  (void)cudaGetLastError();  // the error is reported here; it must not resurface at the next checked call
  const char* name = nullptr;
  if (cudaFuncGetName(&name, kernel) != cudaSuccess || name == nullptr) {
    (void)cudaGetLastError();
    name = "(unnamed kernel)";
  }
  auto d3 = [](dim3 d) {
    return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
  };
  throw std::runtime_error(std::string(step) + " of " + name + " failed: " + cudaGetErrorName(err) + " (" +
                           cudaGetErrorString(err) + "); grid " + d3(s.grid) + ", block " + d3(s.block) +
                           ", dynamic shared memory " + std::to_string(s.smem_bytes) + " bytes, cluster " +
                           d3(s.cluster));
}

// The door and its templated step live in an unnamed namespace: launch_kernel() calls this file's own
// bind_device_state(). A template with external linkage, instantiated for the same kernel signature in
// two source files, would be kept once by the linker, and one file's launches would bind the other's
// device variables.
namespace {

// Step 2. A kernel may use more than 48 KB of dynamic shared memory only after opting in. The attribute
// is set on every launch that asks for dynamic shared memory, not only above 48 KB: how much a kernel
// gets without it depends on its static shared memory too, and setting it is a host-side call with no
// stream work (a captured graph does not record it). A kernel without dynamic shared memory needs none.
template <class... Params>
inline void allow_dynamic_smem(void (*kernel)(Params...), const LaunchShape& shape) {
  if (shape.smem_bytes == 0) return;
  const cudaError_t err =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shape.smem_bytes));
  if (err != cudaSuccess)
    throw_launch_error(reinterpret_cast<const void*>(kernel), shape, "setting the dynamic shared memory", err);
}

// The door. cudaLaunchKernelEx (the launch API that takes attributes, such as a cluster shape) for every
// launch, so that launches with and without clusters take the same path; it converts each argument to
// the kernel's parameter type, as <<<...>>> does.
template <class... Params, class... Args>
inline void launch_kernel(void (*kernel)(Params...), const LaunchShape& shape, Args&&... args) {
  bind_device_state();                // 1
  allow_dynamic_smem(kernel, shape);  // 2
  cudaLaunchConfig_t config = {};     // 3
  config.gridDim = shape.grid;
  config.blockDim = shape.block;
  config.dynamicSmemBytes = shape.smem_bytes;
  config.stream = shape.stream;
  cudaLaunchAttribute cluster[1] = {};
  if (shape.cluster.x != 0) {
    cluster[0].id = cudaLaunchAttributeClusterDimension;
    cluster[0].val.clusterDim.x = shape.cluster.x;
    cluster[0].val.clusterDim.y = shape.cluster.y;
    cluster[0].val.clusterDim.z = shape.cluster.z;
    config.attrs = cluster;
    config.numAttrs = 1;
  }
  const cudaError_t err = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (err != cudaSuccess) throw_launch_error(reinterpret_cast<const void*>(kernel), shape, "the launch", err);  // 4
}

}  // namespace
}  // namespace gemm
