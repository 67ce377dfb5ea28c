// Filling large device buffers with deterministic pseudo-random data directly on the GPU (the
// benchmarks need gigabytes of inputs; generating those on the host would dominate their run time).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gemm {

// Uniform in [lo, hi), a function of (seed, index) only.
void fill_uniform(float* p, size_t n, uint64_t seed, float lo, float hi, cudaStream_t stream = nullptr);
// Uniform random bytes, each in [lo, hi] (for E2M1 payload: 0..255; for E4M3 scales: a code range).
void fill_bytes(uint8_t* p, size_t n, uint64_t seed, uint8_t lo, uint8_t hi, cudaStream_t stream = nullptr);

}  // namespace gemm
