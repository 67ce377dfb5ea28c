// What makes one launch of a stage 05-10 kernel cost the host tens of microseconds on Hopper, where a
// bare launch costs a few. Each row changes one thing against a bare 2-CTA cluster kernel and times the
// host's span of one launch (steady_clock around the calls), with the GPU waited for after every launch
// (as the stage benchmarks' host-time rows do) or only every 64 launches (as a queue of work would).
//
//   nvcc -std=c++17 -O3 -arch=sm_90a docs/probes/launch_cost_probe.cu -o probe && ./probe
//
// The things that differ between a bare kernel and a stage's: the dynamic shared-memory attribute set
// before every launch (common/launch.cuh does), a large dynamic shared-memory size, per-thread local
// memory (the emulated tcgen05 kernels use about 5 KB of stack per thread), and a large parameter block.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#define CHECK(x)                                                    \
  do {                                                              \
    cudaError_t e_ = (x);                                           \
    if (e_ != cudaSuccess) {                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                 \
    }                                                               \
  } while (0)

struct alignas(64) Table {
  unsigned char b[5504];  // stage 10's table of 8 groups
};

__global__ void __cluster_dims__(2, 1, 1) bare(int* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = 1;
}

__global__ void __cluster_dims__(2, 1, 1) big_param(const __grid_constant__ Table t, int* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = t.b[5503];
}

__global__ void __cluster_dims__(2, 1, 1) smem(int* out) {
  extern __shared__ int s[];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = s[5];
}

// About 5 KB of stack per thread: a local array indexed by a value the compiler cannot see.
__global__ void __cluster_dims__(2, 1, 1) stack(int* out, int i) {
  volatile int local[1200];
  for (int k = 0; k < 1200; k += 97) local[k] = k;
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = local[i];
}

// Holds the GPU for about `ns` nanoseconds (one thread).
__global__ void hold(long long ns) {
  const long long start = clock64();
  const long long cycles = ns * 2;  // at most 2 GHz: at least ns nanoseconds
  while (clock64() - start < cycles) {
  }
}

enum Sync { kEveryLaunch, kEvery64 };

template <class F>
double median_us(F&& launch, Sync sync) {
  std::vector<double> t;
  for (int i = 0; i < 64 * 20; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    launch();
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= 64) t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if (sync == kEveryLaunch || i % 64 == 63) CHECK(cudaDeviceSynchronize());
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int* out = nullptr;
  CHECK(cudaMalloc(&out, sizeof(int)));
  const int grid = 2 * (prop.multiProcessorCount / 2);
  const size_t big_smem = 200 * 1024;
  CHECK(cudaFuncSetAttribute(smem, cudaFuncAttributeMaxDynamicSharedMemorySize, int(big_smem)));
  static Table table{};

  auto config = [&](size_t dyn) {
    cudaLaunchConfig_t c = {};
    c.gridDim = dim3(grid);
    c.blockDim = dim3(192);
    c.dynamicSmemBytes = dyn;
    return c;
  };
  struct Row {
    const char* what;
    double every, every64;
  };
  std::vector<Row> rows;
  auto row = [&](const char* what, auto&& f) {
    rows.push_back({what, median_us(f, kEveryLaunch), median_us(f, kEvery64)});
  };

  row("bare", [&] {
    auto c = config(0);
    CHECK(cudaLaunchKernelEx(&c, bare, out));
  });
  row("5.4 KB parameter block", [&] {
    auto c = config(0);
    CHECK(cudaLaunchKernelEx(&c, big_param, table, out));
  });
  row("200 KB dynamic shared memory", [&] {
    auto c = config(big_smem);
    CHECK(cudaLaunchKernelEx(&c, smem, out));
  });
  row("200 KB + attribute set per launch", [&] {
    CHECK(cudaFuncSetAttribute(smem, cudaFuncAttributeMaxDynamicSharedMemorySize, int(big_smem)));
    auto c = config(big_smem);
    CHECK(cudaLaunchKernelEx(&c, smem, out));
  });
  row("cudaFuncSetAttribute alone", [&] {
    CHECK(cudaFuncSetAttribute(smem, cudaFuncAttributeMaxDynamicSharedMemorySize, int(big_smem)));
  });
  row("about 5 KB of stack per thread", [&] {
    auto c = config(0);
    CHECK(cudaLaunchKernelEx(&c, stack, out, 7));
  });
  // The stage benchmarks' first host-time rows waited for a kernel of milliseconds (emulated tcgen05)
  // before each timed call: the call right after such a wait, and the same with a busy GPU.
  auto after_long_kernel = [&](bool busy) {
    std::vector<double> t;
    for (int i = 0; i < 200; ++i) {
      hold<<<1, 1>>>(2'000'000);  // 2 ms
      if (!busy) CHECK(cudaDeviceSynchronize());
      const auto t0 = std::chrono::steady_clock::now();
      auto c = config(0);
      CHECK(cudaLaunchKernelEx(&c, bare, out));
      const auto t1 = std::chrono::steady_clock::now();
      t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      CHECK(cudaDeviceSynchronize());
    }
    std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
    return t[t.size() / 2];
  };
  const double idle_after = after_long_kernel(false), busy_after = after_long_kernel(true);
  cudaFuncAttributes a{};
  CHECK(cudaFuncGetAttributes(&a, stack));

  std::printf("%s, %d SMs: host time of one launch (us, median of 1216), grid %d, 192 threads, 2-CTA clusters\n",
              prop.name, prop.multiProcessorCount, grid);
  std::printf("  %-36s %14s %14s\n", "kernel", "sync each", "sync every 64");
  for (const Row& r : rows) std::printf("  %-36s %14.2f %14.2f\n", r.what, r.every, r.every64);
  std::printf("  bare, right after a 2 ms kernel and its wait: %.2f us; while the 2 ms kernel runs: %.2f us "
              "(median of 200)\n", idle_after, busy_after);
  std::printf("  (the stack kernel uses %zu bytes of local memory per thread)\n", size_t(a.localSizeBytes));
  CHECK(cudaDeviceSynchronize());
  return 0;
}
