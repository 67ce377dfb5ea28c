#include "common/nvfp4_quant.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gemm {

float nvfp4_global_scale(float amax) {
  const float gs = (kE2M1Max * kE4M3Max) / amax;
  return (amax == 0.0f || !std::isfinite(gs)) ? 1.0f : gs;
}

void nvfp4_quantize_block(const float* x16, float gs, uint8_t* scale, uint8_t payload[8]) {
  float amax = 0.0f;
  for (int i = 0; i < kSfVector; ++i) amax = std::max(amax, std::fabs(x16[i]));
  const uint8_t s = e4m3_from_float(std::min(amax / kE2M1Max * gs, kE4M3Max));
  const float enc = gs / std::max(ue4m3_to_float(s), 1e-12f);
  for (int i = 0; i < kSfVector / 2; ++i)
    payload[i] = pack_e2m1x2(e2m1_from_float(x16[2 * i] * enc), e2m1_from_float(x16[2 * i + 1] * enc));
  *scale = s;
}

Nvfp4Tensor quantize_nvfp4(const float* x, int rows, int K, int L) {
  if (rows < 1 || K < 1 || L < 1 || K % kSfVector != 0)
    throw std::invalid_argument("quantize_nvfp4: rows, L >= 1 and K a positive multiple of 16 required");
  Nvfp4Tensor t;
  t.rows = rows;
  t.K = K;
  t.L = L;
  const int64_t n = int64_t(rows) * K * L;
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  t.global_scale = nvfp4_global_scale(amax);
  t.data.assign(n / 2, 0);
  t.sf.assign(size_t(sf_batch_bytes(rows, K) * L), 0);
  for (int l = 0; l < L; ++l)
    for (int r = 0; r < rows; ++r)
      for (int k16 = 0; k16 < K / kSfVector; ++k16) {
        const int64_t row_start = (int64_t(l) * rows + r) * K;
        nvfp4_quantize_block(x + row_start + k16 * kSfVector, t.global_scale,
                             &t.sf[l * sf_batch_bytes(rows, K) + sf_offset(r, k16, K)],
                             &t.data[(row_start + k16 * kSfVector) / 2]);
      }
  return t;
}

}  // namespace gemm
