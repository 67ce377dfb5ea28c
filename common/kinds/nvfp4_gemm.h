// The NVFP4 GEMM (stages 03-08): C = A * B^T with both operands K-major.
//
//   A    M x K x L E2M1, two per byte, even k in the low nibble: byte (m, k/2) of batch l at
//        l*M*K/2 + m*K/2 + k/2
//   B    N x K x L, the same
//   SFA  one E4M3 scale per 16 k of each row of A, blocked layout (common/sf_layout.h),
//        batch l at l * sf_batch_bytes(M, K)
//   SFB  the same for B, batch stride sf_batch_bytes(N, K)
//   alpha  FP32 per-tensor factor: the product of the two tensors' decode scales
//   C    M x N x L FP16, row-major:  C = alpha * sum_k (A * SFA)(B * SFB), accumulated in FP32
//
// Rules, checked on the host before anything is launched (a violation throws std::invalid_argument
// naming the argument, the rule and the value; nothing is written): M, N, K >= 1; 1 <= L <= 65535;
// M*K*L, N*K*L, M*N*L below 2^46; K a multiple of 32 (so every row of A and B is a whole number of
// 16-byte chunks, which TMA needs from stage 04); A, B, SFA, SFB non-null and 16-byte aligned; C
// non-null and element-aligned; alpha finite; C overlaps no input. The kind itself (cases,
// reference, peers, ...) is in nvfp4_gemm.cpp.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "common/kinds/kind.h"

namespace gemm {

struct Nvfp4GemmArgs {
  int M = 0, N = 0, K = 0, L = 1;
  const uint8_t* A = nullptr;
  const uint8_t* SFA = nullptr;
  const uint8_t* B = nullptr;
  const uint8_t* SFB = nullptr;
  float alpha = 1.0f;
  __half* C = nullptr;
};

inline constexpr int kNvfp4KMultiple = 32;

void validate(const Nvfp4GemmArgs& args);
double min_bytes(const Nvfp4GemmArgs& args);

// Bytes of each operand of one call, all batches included.
int64_t packed_bytes(int64_t rows, int64_t K, int64_t L);  // E2M1 payload
int64_t sf_bytes(int64_t rows, int64_t K, int64_t L);      // blocked scales

template <>
struct KindOf<Nvfp4GemmArgs> {
  static const Kind& get();  // "nvfp4_gemm"
};

}  // namespace gemm
