// The contracts every stage implements: C = A * B^T with both operands K-major, one kind of problem
// per family of stages (common/kinds/, docs/kinds.md):
//   common/kinds/fp32_gemm.h    FP32 in and out (stages 00-02's kind)
//   common/kinds/nvfp4_gemm.h   E2M1 + blocked E4M3 scales, FP16 out (from stage 03)
//   common/kinds/nvfp4_gemv.h   the NVFP4 GEMM at N = 1, memory-bound (stage 09)
// Each header states its layout and its rules; each kind validates on the host before anything is
// launched and throws std::invalid_argument naming the argument, the rule and the value (nothing is
// written).
#pragma once

#include "common/kinds/fp32_gemm.h"
#include "common/kinds/nvfp4_gemm.h"
#include "common/kinds/nvfp4_gemv.h"

namespace gemm {

inline constexpr int kMaxBatch = 65535;  // L rides in gridDim.y/z, whose limit this is
inline double flops(int M, int N, int K, int L) { return 2.0 * M * N * double(K) * L; }

}  // namespace gemm
