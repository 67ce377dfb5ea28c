// CPU references, written to be obviously right rather than fast: decode every operand, multiply,
// accumulate in double. They take the same argument structs as the kernels (gemm_api.h), filled with
// host pointers; the C pointer is ignored.
#pragma once

#include <cstdint>
#include <vector>

#include "common/gemm_api.h"

namespace gemm {

struct ReferenceOutput {
  std::vector<double> value;    // the result before any rounding (times alpha for NVFP4), M*N*L
  std::vector<double> abs_sum;  // |alpha| * sum_k |a_k b_k|: what rounding errors scale with
  std::vector<uint16_t> half;   // NVFP4 only: value rounded to FP16 (nearest even)
};

ReferenceOutput reference_gemm(const Fp32GemmArgs& host);
ReferenceOutput reference_gemm(const Nvfp4GemmArgs& host);

// One element, for spot checks of problems too large to compute whole on the CPU.
double reference_at(const Fp32GemmArgs& host, int l, int m, int n, double* abs_sum = nullptr);
double reference_at(const Nvfp4GemmArgs& host, int l, int m, int n, double* abs_sum = nullptr);

// NVFP4 rows decoded to payload x block scale (exact in FP32), rows*K*L values, K-major.
std::vector<float> dequantize_nvfp4(const uint8_t* data, const uint8_t* sf, int rows, int K, int L);

}  // namespace gemm
