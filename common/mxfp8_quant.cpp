// The CPU MXFP8 quantizer of whole tensors and the exact decoder (mxfp8_quant.h has the arithmetic).
#include "common/mxfp8_quant.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace gemm {

Mxfp8Tensor quantize_mxfp8(const float* x, int rows, int K, int L, Mxfp8Element element, Mxfp8ScaleRounding rounding) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("quantize_mxfp8: " + what); };
  if (rows < 1) fail("rows must be >= 1 (got " + std::to_string(rows) + ")");
  if (L < 1) fail("L must be >= 1 (got " + std::to_string(L) + ")");
  if (K < kMxSfVector || K % kMxSfVector != 0) fail("K must be a positive multiple of 32 (got " + std::to_string(K) + ")");
  if (element != Mxfp8Element::kE4M3 && element != Mxfp8Element::kE5M2)
    fail("element must be E4M3 or E5M2 (got " + std::to_string(int(element)) + ")");
  if (rounding != Mxfp8ScaleRounding::kFloor && rounding != Mxfp8ScaleRounding::kRceil)
    fail("rounding must be FLOOR or RCEIL (got " + std::to_string(int(rounding)) + ")");
  if (!x) fail("x must not be null");
  const int64_t n = int64_t(rows) * K * L;
  // Refuse before writing anything: a NaN or Inf has no MXFP8 value (see the header).
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) {
      const int64_t l = i / (int64_t(rows) * K), r = i / K % rows, k = i % K;
      fail("x must be finite (got " + std::to_string(x[i]) + " at batch " + std::to_string(l) + ", row " +
           std::to_string(r) + ", k " + std::to_string(k) + ")");
    }
  Mxfp8Tensor t;
  t.rows = rows;
  t.K = K;
  t.L = L;
  t.element = element;
  t.data.assign(size_t(n), 0);
  t.sf.assign(size_t(t.batch_sf_bytes() * L), 0);
  for (int l = 0; l < L; ++l)
    for (int r = 0; r < rows; ++r)
      for (int b = 0; b < K / kMxSfVector; ++b) {
        const int64_t at = (int64_t(l) * rows + r) * K + int64_t(b) * kMxSfVector;
        mxfp8_quantize_block(x + at, element, rounding, &t.sf[l * t.batch_sf_bytes() + sf_offset(r, b, K, kMxSfVector)],
                             &t.data[at]);
      }
  return t;
}

double mxfp8_value(uint8_t code, uint8_t scale, Mxfp8Element t) {
  if (scale == kUe8m0NaN) return NAN;
  return std::ldexp(double(mx_decode(code, t)), int(scale) - kUe8m0Bias);
}

std::vector<double> dequantize_mxfp8(const uint8_t* data, const uint8_t* sf, int rows, int K, int L, Mxfp8Element t) {
  std::vector<double> out(size_t(int64_t(rows) * K * L));
  const int64_t batch_sf = sf_batch_bytes(rows, K, kMxSfVector);
  for (int l = 0; l < L; ++l)
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < K; ++k) {
        const int64_t i = (int64_t(l) * rows + r) * K + k;
        out[size_t(i)] = mxfp8_value(data[i], sf[l * batch_sf + sf_offset(r, k / kMxSfVector, K, kMxSfVector)], t);
      }
  return out;
}

}  // namespace gemm
