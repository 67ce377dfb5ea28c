// What the size of a kernel's parameter block costs the host per launch: stage 10 passes its group
// table as one __grid_constant__ parameter (5.4 KB for up to 8 groups, 31.5 KB for up to 47), stage 07
// about 0.7 KB. Each kernel below does nothing but read one byte of its parameter; each launch is
// timed on the CPU (steady_clock around cudaLaunchKernelEx, with a 2-CTA cluster as stages 05-10
// launch), and the GPU is waited for outside the timed span every 64 launches.
//
//   nvcc -std=c++17 -O3 -arch=sm_90a docs/probes/param_size_probe.cu -o probe && ./probe
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#define CHECK(x)                                                                       \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                    \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

template <int Bytes>
struct alignas(64) Block {
  unsigned char b[Bytes];
};

template <int Bytes>
__global__ void __cluster_dims__(2, 1, 1) touch(const __grid_constant__ Block<Bytes> p, unsigned char* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = p.b[Bytes - 1];
}

// Median host time of one launch, in microseconds.
template <int Bytes>
double host_us(unsigned char* out) {
  static Block<Bytes> p{};
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(2);
  config.blockDim = dim3(192);
  std::vector<double> t;
  for (int i = 0; i < 64 * 40; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    cudaLaunchKernelEx(&config, touch<Bytes>, p, out);
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= 64) t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());  // the first 64: warm-up
    if (i % 64 == 63) cudaDeviceSynchronize();
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  unsigned char* out = nullptr;
  CHECK(cudaMalloc(&out, 1));
  std::printf("%s: host time of one cudaLaunchKernelEx (2-CTA cluster, median of 2496)\n", prop.name);
  std::printf("  parameter bytes   host us\n");
  std::printf("  %15d   %7.2f\n", 704, host_us<704>(out));      // stage 07: 5 maps + a few scalars
  std::printf("  %15d   %7.2f\n", 4032, host_us<4032>(out));    // just under 4 KB
  std::printf("  %15d   %7.2f\n", 4160, host_us<4160>(out));    // just over
  std::printf("  %15d   %7.2f\n", 5504, host_us<5504>(out));    // stage 10's table of 8 groups
  std::printf("  %15d   %7.2f\n", 32000, host_us<32000>(out));  // stage 10's table of 47 groups
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  return 0;
}
