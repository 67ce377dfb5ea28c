// The NVFP4 GEMV (stage 09): the NVFP4 GEMM's contract at N = 1. The vector is B, 1 x K x L, with its
// scales in the same blocked layout (sf_batch_bytes(1, K) per batch: one 128-row atom column, of
// which row 0 is used); C is M x 1 x L. Every rule of the NVFP4 GEMM (nvfp4_gemm.h) holds, plus
// N == 1. A GEMV is memory-bound: it is judged by GB/s against a streaming read of the bytes it must
// move (gemv_min_bytes), not by TFLOP/s.
#pragma once

#include "common/kinds/nvfp4_gemm.h"

namespace gemm {

// The same fields as the GEMM's (a GEMV is one): a type of its own so that a launcher's kind follows
// from its argument type, and so that a GEMM launcher cannot be registered as a GEMV by mistake.
struct Nvfp4GemvArgs : Nvfp4GemmArgs {};

// validate() of the GEMM plus "N must be 1".
void validate_gemv(const Nvfp4GemmArgs& args);
// The bytes a GEMV must move through device memory: A and its scales (M x K/16 bytes, layout
// padding not counted), the vector and its K/16 scales, and C, once each. What GEMV bandwidths are
// counted in (min_bytes would count the vector's scale padding, 128 rows' worth).
double gemv_min_bytes(const Nvfp4GemmArgs& args);

template <>
struct KindOf<Nvfp4GemvArgs> {
  static const Kind& get();  // "nvfp4_gemv"
};

}  // namespace gemm
