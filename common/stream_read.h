// The streaming-read ceiling: a kernel that only reads a buffer, as fast as this GPU's memory allows.
// A kernel that must read N bytes once cannot beat the time this takes for N bytes, so memory-bound
// kernels (the GEMV of stage 09) are measured as a fraction of it, in the same run and at the same
// byte count (launch and tail costs included on both sides).
//
// Every thread reads kChunksPerThread 16-byte chunks, a warp's loads covering contiguous 512-byte
// runs, with L1::no_allocate (nothing is reused); one CTA per 256 x kChunksPerThread chunks. The words
// are folded into one value per thread, which is stored only if it equals an impossible constant,
// so the loads cannot be removed and nothing is written.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gemm {

// Reads `bytes` (a multiple of 16) from the 16-byte-aligned `p`. `sink` is one word the kernel may
// write (it never does for real data); `chunks_per_thread` is 1, 2, 4 or 8 (the in-flight experiment).
void stream_read(const uint8_t* p, int64_t bytes, uint32_t* sink, int chunks_per_thread, cudaStream_t stream);

}  // namespace gemm
