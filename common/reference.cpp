#include "common/reference.h"

#include <cmath>

#include "common/formats.h"
#include "common/parallel.h"
#include "common/sf_layout.h"

namespace gemm {
namespace {

// sum_k a[k] * b[k] in double, and the sum of magnitudes. Products of two floats are exact in double.
template <class T>
void dot(const T* a, const T* b, int K, double* sum, double* abs_sum) {
  double s = 0.0, s_abs = 0.0;
  for (int k = 0; k < K; ++k) {
    const double p = double(a[k]) * double(b[k]);
    s += p;
    s_abs += std::fabs(p);
  }
  *sum = s;
  *abs_sum = s_abs;
}

float decode_one(const uint8_t* data, const uint8_t* sf, int rows, int K, int l, int row, int k) {
  const uint8_t byte = data[(int64_t(l) * rows + row) * (K / 2) + k / 2];
  const uint8_t code = (k & 1) ? e2m1_odd(byte) : e2m1_even(byte);
  const uint8_t scale = sf[l * sf_batch_bytes(rows, K) + sf_offset(row, k / kSfVector, K)];
  return e2m1_to_float(code) * ue4m3_to_float(scale);
}

}  // namespace

std::vector<float> dequantize_nvfp4(const uint8_t* data, const uint8_t* sf, int rows, int K, int L) {
  std::vector<float> out(size_t(int64_t(rows) * K * L));
  parallel_for(int64_t(rows) * L, [&](int64_t lr) {
    const int l = int(lr / rows), r = int(lr % rows);
    for (int k = 0; k < K; ++k) out[lr * K + k] = decode_one(data, sf, rows, K, l, r, k);
  });
  return out;
}

ReferenceOutput reference_gemm(const Fp32GemmArgs& h) {
  const int64_t M = h.M, N = h.N, K = h.K;
  ReferenceOutput out;
  out.value.resize(M * N * h.L);
  out.abs_sum.resize(M * N * h.L);
  parallel_for(M * h.L, [&](int64_t lm) {
    const int64_t l = lm / M;
    const float* a = h.A + lm * K;
    for (int64_t n = 0; n < N; ++n) {
      const float* b = h.B + (l * N + n) * K;
      dot(a, b, int(K), &out.value[lm * N + n], &out.abs_sum[lm * N + n]);
    }
  });
  return out;
}

ReferenceOutput reference_gemm(const Nvfp4GemmArgs& h) {
  const int64_t M = h.M, N = h.N, K = h.K;
  const std::vector<float> a = dequantize_nvfp4(h.A, h.SFA, h.M, h.K, h.L);
  const std::vector<float> b = dequantize_nvfp4(h.B, h.SFB, h.N, h.K, h.L);
  ReferenceOutput out;
  out.value.resize(M * N * h.L);
  out.abs_sum.resize(M * N * h.L);
  out.half.resize(M * N * h.L);
  const double alpha = h.alpha;
  parallel_for(M * h.L, [&](int64_t lm) {
    const int64_t l = lm / M;
    for (int64_t n = 0; n < N; ++n) {
      double sum, abs_sum;
      dot(&a[lm * K], &b[(l * N + n) * K], int(K), &sum, &abs_sum);
      const int64_t i = lm * N + n;
      out.value[i] = alpha * sum;
      out.abs_sum[i] = std::fabs(alpha) * abs_sum;
      out.half[i] = half_bits_from_double(out.value[i]);
    }
  });
  return out;
}

double reference_at(const Fp32GemmArgs& h, int l, int m, int n, double* abs_sum) {
  double sum, s_abs;
  dot(h.A + (int64_t(l) * h.M + m) * h.K, h.B + (int64_t(l) * h.N + n) * h.K, h.K, &sum, &s_abs);
  if (abs_sum) *abs_sum = s_abs;
  return sum;
}

double reference_at(const Nvfp4GemmArgs& h, int l, int m, int n, double* abs_sum) {
  double sum = 0.0, s_abs = 0.0;
  for (int k = 0; k < h.K; ++k) {
    const double p = double(decode_one(h.A, h.SFA, h.M, h.K, l, m, k)) * decode_one(h.B, h.SFB, h.N, h.K, l, n, k);
    sum += p;
    s_abs += std::fabs(p);
  }
  if (abs_sum) *abs_sum = std::fabs(double(h.alpha)) * s_abs;
  return double(h.alpha) * sum;
}

}  // namespace gemm
