#include "common/gemm_api.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/sf_layout.h"

namespace gemm {
namespace {

[[noreturn]] void reject(const char* api, const char* arg, const std::string& rule, const std::string& value) {
  throw std::invalid_argument(std::string(api) + ": " + arg + " " + rule + " (got " + value + ")");
}

void check_dims(const char* api, int M, int N, int K, int L) {
  if (M < 1) reject(api, "M", "must be >= 1", std::to_string(M));
  if (N < 1) reject(api, "N", "must be >= 1", std::to_string(N));
  if (K < 1) reject(api, "K", "must be >= 1", std::to_string(K));
  if (L < 1 || L > kMaxBatch) reject(api, "L", "must be in [1, 65535]", std::to_string(L));
  // Element counts are formed in 64 bits everywhere; keep them far from overflow.
  const double limit = double(int64_t(1) << 46);
  if (double(M) * K * L > limit || double(N) * K * L > limit || double(M) * N * L > limit)
    reject(api, "M*K*L, N*K*L and M*N*L", "must each be below 2^46", "a larger problem");
}

template <class T>
void check_pointer(const char* api, const char* arg, const T* p, size_t alignment) {
  if (p == nullptr) reject(api, arg, "must not be null", "nullptr");
  if (reinterpret_cast<uintptr_t>(p) % alignment != 0)
    reject(api, arg, "must be " + std::to_string(alignment) + "-byte aligned",
           std::to_string(reinterpret_cast<uintptr_t>(p) % alignment) + " bytes past alignment");
}

// A byte range [begin, begin + bytes) of one operand, bytes >= 1.
struct ByteRange {
  uintptr_t begin;
  uint64_t bytes;
};

template <class T>
ByteRange range_of(const T* p, int64_t bytes) {
  return {reinterpret_cast<uintptr_t>(p), uint64_t(bytes)};
}

// Half-open intervals overlap when each begins before the other ends. Written with differences so
// that nothing overflows, even for a range that would run past the top of the address space.
bool overlap(ByteRange x, ByteRange y) { return x.begin >= y.begin ? x.begin - y.begin < y.bytes : y.begin - x.begin < x.bytes; }

std::string hex_range(ByteRange r) {
  // The printed end saturates at the top of the address space (only a bogus pointer gets there).
  const uintptr_t end = r.bytes > UINTPTR_MAX - r.begin ? UINTPTR_MAX : uintptr_t(r.begin + r.bytes);
  char buf[64];
  std::snprintf(buf, sizeof buf, "[%#" PRIxPTR ", %#" PRIxPTR ")", r.begin, end);
  return buf;
}

// The kernels write C while reading the inputs; an overlap would let a launch overwrite its own
// operands (and makes the result depend on the order in which tiles run).
void check_c_disjoint(const char* api, ByteRange c, const char* input, ByteRange in) {
  if (overlap(c, in))
    reject(api, "C", std::string("must not overlap ") + input, "C in " + hex_range(c) + ", " + input + " in " + hex_range(in));
}

}  // namespace

void validate(const Fp32GemmArgs& a) {
  const char* api = "Fp32GemmArgs";
  check_dims(api, a.M, a.N, a.K, a.L);
  check_pointer(api, "A", a.A, alignof(float));
  check_pointer(api, "B", a.B, alignof(float));
  check_pointer(api, "C", a.C, alignof(float));
  // Sizes in bytes; check_dims bounds each element count below 2^46, so none overflows.
  const ByteRange c = range_of(a.C, 4 * int64_t(a.M) * a.N * a.L);
  check_c_disjoint(api, c, "A", range_of(a.A, 4 * int64_t(a.M) * a.K * a.L));
  check_c_disjoint(api, c, "B", range_of(a.B, 4 * int64_t(a.N) * a.K * a.L));
}

void validate(const Nvfp4GemmArgs& a) {
  const char* api = "Nvfp4GemmArgs";
  check_dims(api, a.M, a.N, a.K, a.L);
  if (a.K % kNvfp4KMultiple != 0) reject(api, "K", "must be a multiple of 32", std::to_string(a.K));
  check_pointer(api, "A", a.A, 16);
  check_pointer(api, "SFA", a.SFA, 16);
  check_pointer(api, "B", a.B, 16);
  check_pointer(api, "SFB", a.SFB, 16);
  check_pointer(api, "C", a.C, alignof(__half));
  if (!std::isfinite(a.alpha)) reject(api, "alpha", "must be finite", std::to_string(a.alpha));
  // Sizes in bytes; check_dims bounds each element count below 2^46, so none overflows.
  const ByteRange c = range_of(a.C, 2 * int64_t(a.M) * a.N * a.L);
  check_c_disjoint(api, c, "A", range_of(a.A, packed_bytes(a.M, a.K, a.L)));
  check_c_disjoint(api, c, "SFA", range_of(a.SFA, sf_bytes(a.M, a.K, a.L)));
  check_c_disjoint(api, c, "B", range_of(a.B, packed_bytes(a.N, a.K, a.L)));
  check_c_disjoint(api, c, "SFB", range_of(a.SFB, sf_bytes(a.N, a.K, a.L)));
}

void validate_gemv(const Nvfp4GemmArgs& a) {
  if (a.N != 1) reject("Nvfp4GemmArgs (GEMV)", "N", "must be 1", std::to_string(a.N));
  validate(a);
}

double gemv_min_bytes(const Nvfp4GemmArgs& a) {
  const double per_batch = double(a.M) * (a.K / 2) + double(a.M) * (a.K / kSfVector) + a.K / 2 + a.K / kSfVector +
                           2.0 * a.M;
  return per_batch * a.L;
}

int64_t packed_bytes(int64_t rows, int64_t K, int64_t L) { return rows * (K / 2) * L; }
int64_t sf_bytes(int64_t rows, int64_t K, int64_t L) { return sf_batch_bytes(rows, K) * L; }

double min_bytes(const Fp32GemmArgs& a) {
  return 4.0 * a.L * (double(a.M) * a.K + double(a.N) * a.K + double(a.M) * a.N);
}
double min_bytes(const Nvfp4GemmArgs& a) {
  return double(packed_bytes(a.M, a.K, a.L) + packed_bytes(a.N, a.K, a.L) + sf_bytes(a.M, a.K, a.L) +
                sf_bytes(a.N, a.K, a.L)) +
         2.0 * a.L * double(a.M) * a.N;
}

}  // namespace gemm
