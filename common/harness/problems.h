// Host-side test problems of the GEMM kinds: seeded random inputs in tiers, built so that a broken
// kernel cannot pass. (The kind files, common/kinds/, turn them into test cases and problems.)
//
//   kExact      every partial sum is exactly representable, so the GPU must match the reference bit
//               for bit. FP32: small integers. NVFP4: every one of the 256 payload byte patterns
//               (each run of 256 bytes is a permutation of 0..255) with power-of-two block scales
//               2^-1, 2^0, 2^1 drawn per block, alpha = 1: products are multiples of 2^-4 below 144,
//               so sums stay exact in FP32 for K < 2^24 / (144 * 16), i.e. any K up to 7000.
//   kLayout     NVFP4: scales drawn from 40 different E4M3 codes per block, even-k nibbles positive
//               and odd-k nibbles negative, so a mis-tiled or transposed scale layout, or a nibble
//               swap on one operand, changes almost every output by O(1).
//   kScaleBit7  NVFP4: the exact tier with bit 7 set in a random half of the scale bytes, which every
//               reader must ignore (block scales are unsigned E4M3, common/formats.h): a kernel that
//               reads bit 7 as a sign flips the sign of those blocks' products. Compared exactly.
//   kRealistic  normal(0, 1) data with 1 in 64 entries an outlier x 16; NVFP4 inputs go through
//               the quantizer (common/nvfp4_quant.h) and alpha = 1/(gs_A gs_B).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/gemm_api.h"
#include "common/nvfp4_quant.h"

namespace gemm {

// The tiers themselves (enum Tier, tier_name, is_exact) are declared in common/kinds/kind.h.

// A seed that depends on the case's name (so cases differ) and on GEMM_TEST_SEED when it is set
// (so a run can be repeated with new data: every seed must pass).
uint64_t seed_for(std::string_view name);

struct HostFp32Problem {
  int M = 0, N = 0, K = 0, L = 1;
  std::vector<float> A, B;
  Fp32GemmArgs host_args() const { return {M, N, K, L, A.data(), B.data(), nullptr}; }
};

struct HostNvfp4Problem {
  int M = 0, N = 0, K = 0, L = 1;
  Nvfp4Tensor a, b;
  float alpha = 1.0f;
  std::vector<float> a_source, b_source;  // kRealistic: the unquantized inputs
  Nvfp4GemmArgs host_args() const {
    return {M, N, K, L, a.data.data(), a.sf.data(), b.data.data(), b.sf.data(), alpha, nullptr};
  }
};

HostFp32Problem make_fp32_problem(int M, int N, int K, int L, Tier tier, uint64_t seed);
HostNvfp4Problem make_nvfp4_problem(int M, int N, int K, int L, Tier tier, uint64_t seed);

// Random FP32 data of the realistic tier, exposed for quantizer tests and benchmarks.
std::vector<float> realistic_values(int64_t count, std::mt19937_64& rng);

}  // namespace gemm
