// The FP32 GEMM (stages 00-02): C = A * B^T with both operands K-major, FP32 in and out.
//
//   A  M x K x L floats, row-major (element (m, k) of batch l at l*M*K + m*K + k)
//   B  N x K x L floats, row-major (so B^T is K-major: each column of B^T is contiguous)
//   C  M x N x L floats, row-major
//
// Rules, checked on the host before anything is launched (a violation throws std::invalid_argument
// naming the argument, the rule and the value; nothing is written): M, N, K >= 1; 1 <= L <= 65535;
// M*K*L, N*K*L, M*N*L below 2^46; every pointer non-null and float-aligned; C overlaps no input.
// The kind itself (cases, reference, peers, ...) is in fp32_gemm.cpp.
#pragma once

#include "common/kinds/kind.h"

namespace gemm {

struct Fp32GemmArgs {
  int M = 0, N = 0, K = 0, L = 1;
  const float* A = nullptr;
  const float* B = nullptr;
  float* C = nullptr;
};

// Throws std::invalid_argument when the arguments break the rules above.
void validate(const Fp32GemmArgs& args);
// The fewest bytes the GEMM must move through device memory (each input read once, C written once).
double min_bytes(const Fp32GemmArgs& args);

template <>
struct KindOf<Fp32GemmArgs> {
  static const Kind& get();  // "fp32_gemm"
};

}  // namespace gemm
