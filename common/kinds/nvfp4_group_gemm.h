// The NVFP4 group GEMM (stage 10): G independent NVFP4 GEMMs in one call, the expert GEMMs of a
// mixture-of-experts layer. Group g computes, exactly as one NVFP4 GEMM (nvfp4_gemm.h) at L = 1:
//
//   C_g = alpha_g * A_g * B_g^T      A_g M_g x K_g, B_g N_g x K_g (K-major packed E2M1, two per byte,
//                                    even k in the low nibble), SFA_g / SFB_g their E4M3 scales in the
//                                    blocked layout, each padded to its own 128 rows (sf_batch_bytes),
//                                    C_g M_g x N_g FP16 row-major, accumulated in FP32
//
// Every group has its own sizes: M_g may be 0 (an expert no token was routed to: nothing of the group
// is read or written, and its A, SFA and C may be null; its N, K, B, SFB and alpha must still be
// valid); N_g >= 1; K_g >= 1 and a multiple of 32.
//
// Rules, checked on the host before anything is launched (a violation throws std::invalid_argument
// naming the group, the argument and the rule, e.g. "Nvfp4GroupGemmArgs: groups[3].K must be a
// multiple of 32 (got 48)"; no group's C is written): 1 <= G <= kMaxGroups; per group the NVFP4 GEMM's
// rules at L = 1 (M_g >= 0 instead of >= 1); alpha_g finite; no C_g overlaps any input of any group or
// another group's C_g (inputs may be shared between groups: two experts may read the same A).
//
// The MoE layout is the same table (moe_groups below): tokens sorted by expert and stacked into one A,
// expert e owning rows [row_offsets[e], row_offsets[e+1]); expert e's scales start at
// moe_sfa_offset(row_offsets, e, K), each expert's block padded to its own 128 rows; the experts'
// weights stacked in B (E x N x K) and SFB (E x sf_batch_bytes(N, K)); C stacked like A. Example,
// 3 experts, 200 / 0 / 70 tokens, N = 256, K = 512:
//
//   row_offsets = {0, 200, 200, 270}
//   expert 0: A rows 0..199,   SFA bytes [0, 256 * 32)         (200 rows padded to 256, 512 / 16 columns)
//   expert 1: no rows          (M = 0: nothing read, nothing written)
//   expert 2: A rows 200..269, SFA bytes [8192, 8192 + 128 * 32)
//   C rows as A's; B_e = B + e * 256 * 256 bytes, SFB_e = SFB + e * sf_batch_bytes(256, 512)
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/kinds/kind.h"

namespace gemm {

// One problem of the group: the fields of Nvfp4GemmArgs at L = 1.
struct Nvfp4Group {
  int M = 0, N = 0, K = 0;
  const uint8_t* A = nullptr;
  const uint8_t* SFA = nullptr;
  const uint8_t* B = nullptr;
  const uint8_t* SFB = nullptr;
  float alpha = 1.0f;
  __half* C = nullptr;
};
// Every field equal (alpha bit for bit): the same problem (stage 10 caches its tables by it).
inline bool operator==(const Nvfp4Group& x, const Nvfp4Group& y) {
  return x.M == y.M && x.N == y.N && x.K == y.K && x.A == y.A && x.SFA == y.SFA && x.B == y.B && x.SFB == y.SFB &&
         x.C == y.C && std::memcmp(&x.alpha, &y.alpha, sizeof(float)) == 0;
}
inline bool operator!=(const Nvfp4Group& x, const Nvfp4Group& y) { return !(x == y); }

struct Nvfp4GroupGemmArgs {
  std::vector<Nvfp4Group> groups;  // G = groups.size()
};

// At most this many groups per call (a bound for validation; a launcher may split them over launches).
inline constexpr int kMaxGroups = 4096;

void validate(const Nvfp4GroupGemmArgs& args);
// What must cross DRAM: the inputs of the groups with M_g >= 1, each byte once (weights two groups
// share count once), and every C_g once.
double min_bytes(const Nvfp4GroupGemmArgs& args);
double flops(const Nvfp4GroupGemmArgs& args);      // 2 * sum of M_g * N_g * K_g

// The MoE layout described above, as a table.
struct MoeLayout {
  int experts = 0;                     // E
  int N = 0, K = 0;                    // every expert's weights are N x K
  const int* row_offsets = nullptr;    // E + 1 non-decreasing entries, row_offsets[0] == 0
  const uint8_t* A = nullptr;          // row_offsets[E] x K packed, tokens sorted by expert
  const uint8_t* SFA = nullptr;        // the experts' scale blocks back to back (moe_sfa_offset)
  const uint8_t* B = nullptr;          // E x N x K packed
  const uint8_t* SFB = nullptr;        // E x sf_batch_bytes(N, K)
  const float* alpha = nullptr;        // E factors on the host, or nullptr: 1 for every expert
  __half* C = nullptr;                 // row_offsets[E] x N
};
// Where expert e's scales start in the stacked SFA, in bytes: the padded blocks of experts 0..e-1.
int64_t moe_sfa_offset(const int* row_offsets, int e, int K);
// The table of a MoE layout (std::invalid_argument for E < 1 or offsets that are not a
// non-decreasing sequence from 0; the table itself is validated when it is launched).
Nvfp4GroupGemmArgs moe_groups(const MoeLayout& moe);

template <>
struct KindOf<Nvfp4GroupGemmArgs> {
  static const Kind& get();  // "nvfp4_group_gemm"
};

// ---- The kind's Shape (nvfp4_group_gemm.cpp): extra = [M_0, N_0, K_0, M_1, N_1, K_1, ...], M the sum
// of the M_g, N and K the largest N_g and K_g, L = 1, `name` a short label ("gpumode_q1").
struct GroupSize {
  int M = 0, N = 0, K = 0;
};
Shape group_shape(const std::string& name, const std::vector<GroupSize>& groups);
// The groups of a Shape: its extra, or, where extra is empty, L groups of N x K sharing the M rows
// unevenly (what a stage program's --m --n --k --l mean for this kind). std::invalid_argument where
// extra does not hold whole triples.
std::vector<GroupSize> group_sizes(const Shape& s);

// For the CPU tests (common/test/test_group_kind.cpp): what the kind's make_problem built.
namespace group_detail {
// Group g's scale bytes on the host, padding included: operand 'A' (SFA) or 'B' (SFB).
const std::vector<uint8_t>& host_scales(const Problem& p, int g, char operand);
// The output a correct kernel leaves in C (Kind::output_bytes bytes): every group's reference rounded
// to FP16, the gaps between groups still 0xFF (as the tests poison them).
std::vector<uint8_t> expected_output(const Problem& p);
}  // namespace group_detail

}  // namespace gemm
