// The SVDQuant GEMM (stage 12): the NVFP4 GEMM of nvfp4_gemm.h plus a 16-bit low-rank term and a
// per-column affine epilogue, the linear layer of SVDQuant (arXiv 2411.05007), where the outliers the
// 4-bit operands cannot hold are carried by a rank-R branch. Per batch l, row m, column n:
//
//   y[m, n] = (alpha * acc[m, n] + sum_r lora_act[m, r] * lora_up[n, r]) * wcscale[n] + bias[n]
//   acc[m, n] = sum_k (A * SFA)[m, k] (B * SFB)[n, k]          (the NVFP4 GEMM's sum)
//
// computed in FP32 and rounded once, to nearest even, to the output format (FP16 or BF16; an FP16
// overflow becomes Inf, as cvt.rn.f16.f32 does). The low-rank term joins alpha * acc before wcscale
// and bias, so one FP32 accumulator can hold both sums and the epilogue is one affine map per column
// (docs/svdquant.md compares this with nunchaku's and FlashInfer's conventions and converts theirs).
//
//   A, SFA, B, SFB, alpha   as the NVFP4 GEMM (packed E2M1, E4M3 scales in the blocked layout, L
//                           batches at the same strides)
//   lora_act   L x M x R, 16-bit (lora_format), row-major: element (l, m, r) at (l*M + m)*R + r
//   lora_up    L x N x R, the same format and layout: the low-rank term is lora_act * lora_up^T
//   wcscale    L x N FP32, one factor per output column (zeros and negatives allowed)
//   bias       L x N FP32
//   C          L x M x N, 16-bit (c_format), row-major
//
// L >= 1 as in the NVFP4 GEMM, every operand batched (batch l of each at l times its size): the stage
// builds on stage 07, whose kernel already walks L batches, so the batch costs a kernel four more
// pointer strides and lets the kind present itself as an NVFP4 GEMM of the same L (as_kind: stage 07
// is the benchmark's base); the tests at L > 1 catch a kernel that forgets a stride on a new operand.
//
// Rules, checked on the host before anything is launched (a violation throws std::invalid_argument
// naming the argument, the rule and the value; nothing is written): the NVFP4 GEMM's rules (sizes, K a
// multiple of 32, A, SFA, B, SFB non-null and 16-byte aligned, alpha finite); R a positive multiple of
// 16 (kind::f16 MMAs take 16 values of the rank per instruction, and a row of R 16-bit values is then
// 32*j bytes, the 16-byte multiple TMA needs as a row pitch), at most kSvdquantMaxRank; M*R*L and
// N*R*L below 2^46; lora_act and lora_up non-null and 16-byte aligned (TMA's global address rule);
// wcscale and bias non-null and 4-byte aligned (the epilogue reads them with ordinary loads: with N
// any size, the batch stride of N floats keeps no larger alignment anyway); lora_format and c_format
// one of the two formats; C non-null and 2-byte aligned, overlapping no input. A layer without a bias
// passes zeros (N * 4 bytes), so the kernels keep one epilogue.
#pragma once

#include <cstdint>
#include <vector>

#include "common/kinds/kind.h"

namespace gemm {

struct CompareResult;

// The 16-bit float formats of the low-rank operands and of C (PTX ISA 9.1, 5.2.3).
enum class Format16 : int { kFp16 = 0, kBf16 = 1 };
const char* format16_name(Format16 f);  // "fp16", "bf16", "?" for a value out of range

struct SvdquantGemmArgs {
  int M = 0, N = 0, K = 0, L = 1;
  int R = 0;
  const uint8_t* A = nullptr;
  const uint8_t* SFA = nullptr;
  const uint8_t* B = nullptr;
  const uint8_t* SFB = nullptr;
  float alpha = 1.0f;
  const uint16_t* lora_act = nullptr;  // bits of lora_format values
  const uint16_t* lora_up = nullptr;
  Format16 lora_format = Format16::kBf16;
  const float* wcscale = nullptr;
  const float* bias = nullptr;
  Format16 c_format = Format16::kFp16;
  uint16_t* C = nullptr;  // bits of c_format values
};

inline constexpr int kSvdquantRankMultiple = 16;  // the K of one kind::f16 MMA
// The largest rank: nunchaku's MAX_RANK (src/kernels/zgemm/lora.cuh), so every nunchaku checkpoint
// converts; the published ranks are 16 to 256 (32 in practice).
inline constexpr int kSvdquantMaxRank = 1024;

void validate(const SvdquantGemmArgs& args);
// What must cross DRAM: every input once (A, B, their scales, lora_act, lora_up, wcscale, bias) and C.
double min_bytes(const SvdquantGemmArgs& args);
// 2 M N (K + R) L: the NVFP4 product and the low-rank product (the epilogue's 2 M N L are not counted).
double flops(const SvdquantGemmArgs& args);

template <>
struct KindOf<SvdquantGemmArgs> {
  static const Kind& get();  // "svdquant_gemm"
};

// ---- The kind's Shape: extra = [R, c_format, lora_format] (the formats as their enum values). A Shape
// without extra (a stage program's --m --n --k --l) means R = 32, FP16 C, BF16 low-rank operands.
struct SvdquantSize {
  int R = 32;
  Format16 c_format = Format16::kFp16;
  Format16 lora_format = Format16::kBf16;
};
Shape svdquant_shape(int M, int N, int K, int L, SvdquantSize size);
SvdquantSize svdquant_size(const Shape& s);  // std::invalid_argument for an extra of another form

// ---- What the kind's problems are made of (svdquant_gemm.cpp), for its CPU tests ------------------

namespace svdquant {

// Host data of one problem: the NVFP4 operands and alpha, the low-rank operands as bits, the affine.
struct HostProblem {
  int M = 0, N = 0, K = 0, L = 1, R = 0;
  Format16 lora_format = Format16::kBf16, c_format = Format16::kFp16;
  std::vector<uint8_t> a, sfa, b, sfb;
  float alpha = 1.0f;
  std::vector<uint16_t> lora_act, lora_up;
  std::vector<float> wcscale, bias;
  // Host pointers in the kind's struct (C null).
  SvdquantGemmArgs host_args() const;
};
HostProblem make_problem(const Shape& s, Tier tier, uint64_t seed);

// The FP64 reference: y before rounding, the sum of the magnitudes of every term of y (what FP32
// rounding errors scale with), and y rounded once to the output format.
struct Reference {
  std::vector<double> value, abs_sum;
  std::vector<uint16_t> bits;
};
// `host` holds host pointers (C ignored).
Reference reference(const SvdquantGemmArgs& host);
// One element, for spot checks of problems too large to compute whole.
double reference_at(const SvdquantGemmArgs& host, int l, int m, int n, double* abs_sum = nullptr);

// The realistic tiers' bound for one output (svdquant_gemm.cpp derives it).
double tolerance(double want, double abs_sum, int K, int R, Format16 c_format);
// got (M*N*L output bits) against the reference: bit for bit in the exact tiers, else within
// tolerance(); mismatches counted per `tile`.
CompareResult compare(const std::vector<uint16_t>& got, const Reference& ref, const SvdquantGemmArgs& host, Tier tier,
                      Tile tile);
// The corners, the last row and column of every batch and `random_count` random outputs, each within
// tolerance() of its own FP64 reference (for problems too large to compute whole).
CompareResult compare_spots(const std::vector<uint16_t>& got, const SvdquantGemmArgs& host, int random_count,
                            uint64_t seed);

// 16-bit conversions, correctly rounded from double (nearest even; overflow to Inf), and exact back.
uint16_t bits_from_double(double x, Format16 f);
double bits_to_double(uint16_t bits, Format16 f);
uint16_t bf16_bits_from_double(double x);

}  // namespace svdquant
}  // namespace gemm
