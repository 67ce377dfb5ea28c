// How many clusters of a kernel the GPU holds at once: the grid of a persistent kernel (stages 06+),
// asked of the occupancy API with the launch's own block size, cluster size and shared memory, never
// derived from a hard-coded SM count.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "common/cuda_check.h"

namespace gemm {

// `kernel` must carry its cluster shape (__cluster_dims__). Throws if not even one cluster fits.
template <class Kernel>
int resident_clusters(Kernel* kernel, int cluster_ctas, int threads, int dynamic_smem, const char* who) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic_smem));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(cluster_ctas));
  cfg.blockDim = dim3(unsigned(threads));
  cfg.dynamicSmemBytes = size_t(dynamic_smem);
  int clusters = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg));
  if (clusters < 1) throw std::runtime_error(std::string(who) + ": not even one cluster of this kernel fits on this GPU");
  return clusters;
}

}  // namespace gemm
