#include "common/harness/problems.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <numeric>
#include <stdexcept>

#include "common/formats.h"
#include "common/sf_layout.h"

namespace gemm {
namespace {

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ uint8_t(c)) * 1099511628211ull;
  return h;
}

// Payload bytes for the exact tier: consecutive runs of 256 bytes are permutations of 0..255, so
// every E2M1 pair (and so every nibble in both positions) occurs.
std::vector<uint8_t> all_byte_patterns(int64_t count, std::mt19937_64& rng) {
  std::vector<uint8_t> out(count);
  std::array<uint8_t, 256> perm;
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t i = 0; i < count; i += 256) {
    std::shuffle(perm.begin(), perm.end(), rng);
    std::copy_n(perm.begin(), std::min<int64_t>(256, count - i), out.begin() + i);
  }
  return out;
}

// An NVFP4 operand whose scales come from `scale_of()` and payload from `payload`.
template <class ScaleFn>
Nvfp4Tensor make_operand(int rows, int K, int L, std::vector<uint8_t> payload, ScaleFn scale_of) {
  Nvfp4Tensor t;
  t.rows = rows;
  t.K = K;
  t.L = L;
  t.data = std::move(payload);
  t.sf.assign(size_t(sf_batch_bytes(rows, K) * L), 0);
  for (int l = 0; l < L; ++l)
    for (int r = 0; r < rows; ++r)
      for (int k16 = 0; k16 < K / kSfVector; ++k16)
        t.sf[l * sf_batch_bytes(rows, K) + sf_offset(r, k16, K)] = scale_of();
  return t;
}

}  // namespace

const char* tier_name(Tier t) {
  switch (t) {
    case Tier::kExact: return "exact";
    case Tier::kLayout: return "layout";
    case Tier::kRealistic: return "realistic";
    case Tier::kScaleBit7: return "scalebit7";
  }
  return "?";
}

uint64_t seed_for(std::string_view name) {
  uint64_t seed = fnv1a(name);
  if (const char* env = std::getenv("GEMM_TEST_SEED")) seed ^= fnv1a(env) * 0x9E3779B97F4A7C15ull;
  return seed;
}

std::vector<float> realistic_values(int64_t count, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> one_in_64(0, 63);
  std::vector<float> v(count);
  for (auto& x : v) x = normal(rng) * (one_in_64(rng) == 0 ? 16.0f : 1.0f);
  return v;
}

HostFp32Problem make_fp32_problem(int M, int N, int K, int L, Tier tier, uint64_t seed) {
  std::mt19937_64 rng(seed);
  HostFp32Problem p{M, N, K, L, {}, {}};
  auto fill = [&](int64_t count) {
    if (tier == Tier::kExact) {
      // Integers in [-4, 4]: |partial sums| <= 16 K < 2^24 for K < 2^20, so FP32 sums are exact.
      std::uniform_int_distribution<int> small(-4, 4);
      std::vector<float> v(count);
      for (auto& x : v) x = float(small(rng));
      return v;
    }
    return realistic_values(count, rng);
  };
  p.A = fill(int64_t(M) * K * L);
  p.B = fill(int64_t(N) * K * L);
  return p;
}

HostNvfp4Problem make_nvfp4_problem(int M, int N, int K, int L, Tier tier, uint64_t seed) {
  if (K % kNvfp4KMultiple != 0) throw std::invalid_argument("make_nvfp4_problem: K must be a multiple of 32");
  std::mt19937_64 rng(seed);
  HostNvfp4Problem p;
  p.M = M;
  p.N = N;
  p.K = K;
  p.L = L;
  switch (tier) {
    case Tier::kExact:
    case Tier::kScaleBit7: {
      static constexpr uint8_t kPow2[] = {0x30, 0x38, 0x40};  // E4M3 codes of 0.5, 1, 2
      std::uniform_int_distribution<int> pick(0, 2);
      std::bernoulli_distribution set_bit7(tier == Tier::kScaleBit7 ? 0.5 : 0.0);
      auto scale = [&] { return uint8_t(kPow2[pick(rng)] | (set_bit7(rng) ? 0x80 : 0x00)); };
      p.a = make_operand(M, K, L, all_byte_patterns(int64_t(M) * K / 2 * L, rng), scale);
      p.b = make_operand(N, K, L, all_byte_patterns(int64_t(N) * K / 2 * L, rng), scale);
      p.alpha = 1.0f;
      break;
    }
    case Tier::kLayout: {
      // Scales: 40 consecutive E4M3 codes, 2^-3 .. 2^2 with every mantissa.
      std::uniform_int_distribution<int> pick(0x20, 0x47);
      auto scale = [&] { return uint8_t(pick(rng)); };
      // Payload: even k positive (codes 1..7), odd k negative (codes 9..15).
      std::uniform_int_distribution<int> mag(1, 7);
      auto payload = [&](int64_t bytes) {
        std::vector<uint8_t> v(bytes);
        for (auto& b : v) b = pack_e2m1x2(uint8_t(mag(rng)), uint8_t(0x8 | mag(rng)));
        return v;
      };
      p.a = make_operand(M, K, L, payload(int64_t(M) * K / 2 * L), scale);
      p.b = make_operand(N, K, L, payload(int64_t(N) * K / 2 * L), scale);
      p.alpha = 0.75f;  // not 1, so a kernel that ignores alpha fails
      break;
    }
    case Tier::kRealistic: {
      p.a_source = realistic_values(int64_t(M) * K * L, rng);
      p.b_source = realistic_values(int64_t(N) * K * L, rng);
      p.a = quantize_nvfp4(p.a_source.data(), M, K, L);
      p.b = quantize_nvfp4(p.b_source.data(), N, K, L);
      p.alpha = nvfp4_alpha(p.a, p.b);
      break;
    }
  }
  return p;
}

}  // namespace gemm
