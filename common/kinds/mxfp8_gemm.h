// The MXFP8 GEMM (stage 11): C = A * B^T with both operands K-major, each value scaled by its
// block's power of two. The format and the scale layout are in common/mxfp8_quant.h and docs/mxfp8.md.
//
//   A    M x K x L one-byte values, E4M3 or E5M2 (a_type): byte (m, k) of batch l at l*M*K + m*K + k
//   B    N x K x L, the same (b_type; A and B may differ, as kind::mxf8f6f4 allows)
//   SFA  one UE8M0 scale (2^(code - 127); 0xFF is NaN) per 32 k of each row of A, in the blocked layout
//        of common/sf_layout.h with 32 values per scale (a 128-row x 4-column atom covers 128 k),
//        batch l at l * sf_batch_bytes(M, K, 32)
//   SFB  the same for B, batch stride sf_batch_bytes(N, K, 32)
//   C    M x N x L row-major, FP32 or BF16 (c_type): C = sum_k (A * SFA)(B * SFB), accumulated in FP32
//        and rounded once to C's type (nearest even). No alpha: the scales carry every factor.
//
// Rules, checked on the host before anything is launched (a violation throws std::invalid_argument
// naming the argument, the rule and the value; nothing is written): M, N, K >= 1; 1 <= L <= 65535;
// M*K*L, N*K*L, M*N*L below 2^46; K a multiple of 32 (one scale per 32 values, and every row of A and
// B whole 16-byte chunks for TMA); a_type and b_type E4M3 or E5M2; c_type FP32 or BF16; A, B, SFA,
// SFB non-null and 16-byte aligned; C non-null and aligned to its element; C overlaps no input.
//
// A Shape of this kind carries the types in `extra` = [c_type, a_type, b_type] (the enums' values);
// an empty `extra` is FP32 C from E4M3 x E4M3, the seed's contract.
#pragma once

#include <cstdint>
#include <vector>

#include "common/kinds/kind.h"
#include "common/mxfp8_quant.h"

namespace gemm {

enum class Mxfp8Output : uint8_t { kFp32 = 0, kBf16 = 1 };

struct Mxfp8GemmArgs {
  int M = 0, N = 0, K = 0, L = 1;
  const uint8_t* A = nullptr;
  const uint8_t* SFA = nullptr;
  const uint8_t* B = nullptr;
  const uint8_t* SFB = nullptr;
  void* C = nullptr;
  Mxfp8Output c_type = Mxfp8Output::kFp32;
  Mxfp8Element a_type = Mxfp8Element::kE4M3;
  Mxfp8Element b_type = Mxfp8Element::kE4M3;
};

inline constexpr int kMxfp8KMultiple = 32;

void validate(const Mxfp8GemmArgs& args);
double min_bytes(const Mxfp8GemmArgs& args);
inline int output_element_bytes(Mxfp8Output t) { return t == Mxfp8Output::kBf16 ? 2 : 4; }
inline const char* output_name(Mxfp8Output t) { return t == Mxfp8Output::kBf16 ? "BF16" : "FP32"; }

// Bytes of each operand of one call, all batches included.
int64_t mxfp8_data_bytes(int64_t rows, int64_t K, int64_t L);  // one byte per value
int64_t mxfp8_sf_bytes(int64_t rows, int64_t K, int64_t L);    // blocked UE8M0 scales

// The CPU reference: every operand decoded exactly, products and their sum in double, then one
// rounding to C's type. `value` is the sum before that rounding, `abs_sum` sum_k |a_k b_k| (what an
// FP32 accumulation's error scales with); `rounded` holds C as the kernel must write it (FP32 bits, or
// BF16 bits in the low 16 bits). Pointers are host pointers; args.C is ignored.
struct Mxfp8Reference {
  std::vector<double> value, abs_sum;
  std::vector<uint32_t> rounded;
};
Mxfp8Reference reference_gemm(const Mxfp8GemmArgs& host);
double reference_at(const Mxfp8GemmArgs& host, int l, int m, int n, double* abs_sum = nullptr);
// Correctly rounded double -> BF16 bits (nearest even; overflow to Inf), with no intermediate FP32.
uint16_t bf16_bits_from_double(double x);

// The types of a Shape of this kind (its `extra`, see above) and a Shape with them.
struct Mxfp8Types {
  Mxfp8Output c = Mxfp8Output::kFp32;
  Mxfp8Element a = Mxfp8Element::kE4M3, b = Mxfp8Element::kE4M3;
};
Mxfp8Types mxfp8_types(const Shape& s);
Shape mxfp8_shape(int M, int N, int K, int L, Mxfp8Types t);

// A test problem's host data, drawn for a tier as mxfp8_gemm.cpp describes (what make_problem
// uploads and compares against).
struct HostMxfp8Problem {
  int M = 0, N = 0, K = 0, L = 1;
  Mxfp8Types types;
  Mxfp8Tensor a, b;
  Mxfp8GemmArgs host_args() const {
    return {M, N, K, L, a.data.data(), a.sf.data(), b.data.data(), b.sf.data(), nullptr, types.c, types.a, types.b};
  }
};
HostMxfp8Problem make_mxfp8_problem(const Shape& s, Tier tier, uint64_t seed);

template <>
struct KindOf<Mxfp8GemmArgs> {
  static const Kind& get();  // "mxfp8_gemm"
};

}  // namespace gemm
