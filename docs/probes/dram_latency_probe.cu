// DRAM latency and bandwidth of this GPU, for stage 09's Little's-law arithmetic (bytes in flight =
// bandwidth x latency).
//
//   nvcc -std=c++17 -O3 -arch=sm_90a docs/probes/dram_latency_probe.cu -o probe && ./probe
//
// latency: one thread chases pointers through a 1 GiB buffer, each hop to a random 256-byte-aligned
//          slot (far beyond L2's reach, so nearly every hop is a DRAM access), timed with clock64 and
//          converted with the SM clock the driver reports (clocks_now is printed too); reported
//          with and without a streaming kernel loading DRAM on the other SMs.
// bandwidth: a read-only kernel over 2 GiB (16-byte loads, L1::no_allocate), best of 5.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#define CHECK(x)                                                                       \
  do {                                                                                 \
    cudaError_t e = (x);                                                               \
    if (e != cudaSuccess) {                                                            \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e));                              \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

__global__ void chase(const uint64_t* next, int hops, uint64_t start, long long* cycles, uint64_t* sink) {
  uint64_t i = start;
  for (int h = 0; h < 64; ++h) i = next[i];  // warm the TLB path a little
  const long long t0 = clock64();
  for (int h = 0; h < hops; ++h) i = next[i];
  const long long t1 = clock64();
  *cycles = t1 - t0;
  *sink = i;
}

__global__ void stream(const uint4* p, int64_t n, int rounds, uint32_t* sink) {
  uint32_t f = 0;
  for (int r = 0; r < rounds; ++r)
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
      uint4 v;
      asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p + i));
      f ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  if (f == 0x12345678u && threadIdx.x == 1u << 20) *sink = f;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const size_t slots = (size_t(1) << 30) / 256;  // 256-byte slots of a 1 GiB buffer; one uint64 used per slot
  std::vector<uint64_t> host(slots * 32, 0);
  std::vector<uint64_t> order(slots);
  for (size_t i = 0; i < slots; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(1));
  for (size_t i = 0; i < slots; ++i) host[order[i] * 32] = order[(i + 1) % slots] * 32;
  uint64_t *next, *sink;
  long long* cycles;
  CHECK(cudaMalloc(&next, host.size() * 8));
  CHECK(cudaMalloc(&cycles, 8));
  CHECK(cudaMalloc(&sink, 8));
  CHECK(cudaMemcpy(next, host.data(), host.size() * 8, cudaMemcpyHostToDevice));

  const int64_t n16 = (int64_t(2) << 30) / 16;
  uint4* big;
  CHECK(cudaMalloc(&big, n16 * 16));
  CHECK(cudaMemset(big, 1, n16 * 16));
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    cudaEventRecord(a);
    stream<<<prop.multiProcessorCount * 8, 256>>>(big, n16, 1, reinterpret_cast<uint32_t*>(sink));
    cudaEventRecord(b);
    CHECK(cudaEventSynchronize(b));
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    best = ms < best ? ms : best;
  }
  const double gbps = n16 * 16.0 / (best * 1e-3) / 1e9;
  std::printf("gpu %s, %d SMs, SM clock %d MHz (driver's max)\n", prop.name, prop.multiProcessorCount, clock_khz / 1000);
  std::printf("stream read 2 GiB: %.3f ms, %.0f GB/s\n", best, gbps);

  const int hops = 20000;
  for (int loaded = 0; loaded < 2; ++loaded) {
    cudaStream_t s1, s2;
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    if (loaded)  // all SMs but the chaser's share: keep DRAM busy for longer than the chase takes
      stream<<<(prop.multiProcessorCount - 1) * 8, 256, 0, s2>>>(big, n16, 40, reinterpret_cast<uint32_t*>(sink));
    chase<<<1, 1, 0, s1>>>(next, hops, 0, cycles, sink);
    CHECK(cudaDeviceSynchronize());
    long long c = 0;
    CHECK(cudaMemcpy(&c, cycles, 8, cudaMemcpyDeviceToHost));
    const double ns = double(c) / hops / (clock_khz * 1e-6);
    std::printf("%s DRAM latency: %.0f cycles = %.0f ns per dependent load (at %d MHz)\n",
                loaded ? "loaded" : "idle", double(c) / hops, ns, clock_khz / 1000);
    std::printf("  -> Little's law: %.0f GB/s x %.0f ns = %.2f MB in flight, %.1f KB per SM\n", gbps, ns,
                gbps * ns / 1e3 / 1e3, gbps * ns / 1e3 / prop.multiProcessorCount);
  }
  return 0;
}
