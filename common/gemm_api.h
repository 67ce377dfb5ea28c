// The one contract every stage implements: C = A * B^T with both operands K-major.
//
// FP32 stages (00-02):
//   A  M x K x L floats, row-major (element (m, k) of batch l at l*M*K + m*K + k)
//   B  N x K x L floats, row-major (so B^T is K-major: each column of B^T is contiguous)
//   C  M x N x L floats, row-major
// NVFP4 stages (03-07):
//   A    M x K x L E2M1, two per byte, even k in the low nibble: byte (m, k/2) of batch l at
//        l*M*K/2 + m*K/2 + k/2
//   B    N x K x L, the same
//   SFA  one E4M3 scale per 16 k of each row of A, blocked layout (common/sf_layout.h),
//        batch l at l * sf_batch_bytes(M, K)
//   SFB  the same for B, batch stride sf_batch_bytes(N, K)
//   alpha  FP32 per-tensor factor: the product of the two tensors' decode scales
//   C    M x N x L FP16, row-major:  C = alpha * sum_k (A * SFA)(B * SFB), accumulated in FP32
//
// Constraints, checked on the host before anything is launched (a violation throws
// std::invalid_argument naming the argument, the rule and the value; nothing is written):
//   M, N, K >= 1; 1 <= L <= 65535; every pointer non-null; for NVFP4, K a multiple of 32 (so every
//   row of A and B is a whole number of 16-byte chunks, which TMA needs from stage 04), A/B/SFA/SFB
//   16-byte aligned, alpha finite. FP32 pointers must be float-aligned. C must not overlap inputs.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace gemm {

struct Fp32GemmArgs {
  int M = 0, N = 0, K = 0, L = 1;
  const float* A = nullptr;
  const float* B = nullptr;
  float* C = nullptr;
};

struct Nvfp4GemmArgs {
  int M = 0, N = 0, K = 0, L = 1;
  const uint8_t* A = nullptr;
  const uint8_t* SFA = nullptr;
  const uint8_t* B = nullptr;
  const uint8_t* SFB = nullptr;
  float alpha = 1.0f;
  __half* C = nullptr;
};

inline constexpr int kMaxBatch = 65535;   // L rides in gridDim.y/z, whose limit this is
inline constexpr int kNvfp4KMultiple = 32;

// Throw std::invalid_argument if the arguments break the contract above.
void validate(const Fp32GemmArgs& args);
void validate(const Nvfp4GemmArgs& args);

// GEMV (stage 09): the NVFP4 contract at N = 1, the vector B being 1 x K x L with its scales in the
// same blocked layout (sf_batch_bytes(1, K) per batch). validate() plus "N must be 1".
void validate_gemv(const Nvfp4GemmArgs& args);
// The bytes a GEMV must move through device memory: A and its scales (M x K/16 bytes, layout
// padding not counted), the vector and its K/16 scales, and C, once each. This is what GEMV
// bandwidths are counted in (min_bytes would count the vector's scale padding, 128 rows' worth).
double gemv_min_bytes(const Nvfp4GemmArgs& args);

// Bytes of each operand of one call, all batches included.
int64_t packed_bytes(int64_t rows, int64_t K, int64_t L);   // E2M1 payload
int64_t sf_bytes(int64_t rows, int64_t K, int64_t L);       // blocked scales

// The fewest bytes a GEMM must move through device memory (each input read once, C written once).
double min_bytes(const Fp32GemmArgs& args);
double min_bytes(const Nvfp4GemmArgs& args);
inline double flops(int M, int N, int K, int L) { return 2.0 * M * N * double(K) * L; }

}  // namespace gemm
