#include "common/kinds/kind.h"

#include <cinttypes>
#include <cstdio>

#include "common/kinds/rules.h"

namespace gemm {

std::string shape_text(const Shape& s) {
  if (!s.name.empty()) return s.name;
  std::string t = std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K) +
                  (s.L > 1 ? "x" + std::to_string(s.L) : "");
  for (int e : s.extra) t += "+" + std::to_string(e);
  return t;
}

std::string case_name(Tier tier, const Shape& s) {
  std::string n = std::string(tier_name(tier)) + "_M" + std::to_string(s.M) + "_N" + std::to_string(s.N) + "_K" +
                  std::to_string(s.K) + "_L" + std::to_string(s.L);
  for (int e : s.extra) n += "_" + std::to_string(e);
  return n;
}

std::vector<AnyArgs> Kind::as_kind(const AnyArgs& args, const Kind& other) const {
  if (&other == this) return {args.clone()};
  throw std::invalid_argument(std::string(title()) + " arguments have no view as " + other.title() + " arguments");
}

namespace rules {

void reject(const char* api, const char* arg, const std::string& rule, const std::string& value) {
  throw std::invalid_argument(std::string(api) + ": " + arg + " " + rule + " (got " + value + ")");
}

void check_dims(const char* api, int M, int N, int K, int L) {
  if (M < 1) reject(api, "M", "must be >= 1", std::to_string(M));
  if (N < 1) reject(api, "N", "must be >= 1", std::to_string(N));
  if (K < 1) reject(api, "K", "must be >= 1", std::to_string(K));
  if (L < 1 || L > kMaxBatchRule) reject(api, "L", "must be in [1, 65535]", std::to_string(L));
  // Element counts are formed in 64 bits everywhere; keep them far from overflow.
  if (double(M) * K * L > kElementLimit || double(N) * K * L > kElementLimit || double(M) * N * L > kElementLimit)
    reject(api, "M*K*L, N*K*L and M*N*L", "must each be below 2^46", "a larger problem");
}

void check_pointer(const char* api, const char* arg, const void* p, size_t alignment) {
  if (p == nullptr) reject(api, arg, "must not be null", "nullptr");
  if (reinterpret_cast<uintptr_t>(p) % alignment != 0)
    reject(api, arg, "must be " + std::to_string(alignment) + "-byte aligned",
           std::to_string(reinterpret_cast<uintptr_t>(p) % alignment) + " bytes past alignment");
}

namespace {
// Half-open intervals overlap when each begins before the other ends. Written with differences so
// that nothing overflows, even for a range that would run past the top of the address space.
bool overlap(ByteRange x, ByteRange y) { return x.begin >= y.begin ? x.begin - y.begin < y.bytes : y.begin - x.begin < x.bytes; }

}  // namespace

uintptr_t end_of(ByteRange r) { return r.bytes > UINTPTR_MAX - r.begin ? UINTPTR_MAX : uintptr_t(r.begin + r.bytes); }

std::string hex_range(ByteRange r) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "[%#" PRIxPTR ", %#" PRIxPTR ")", r.begin, end_of(r));
  return buf;
}

void check_c_disjoint(const char* api, ByteRange c, const char* input, ByteRange in) {
  if (overlap(c, in))
    reject(api, "C", std::string("must not overlap ") + input, "C in " + hex_range(c) + ", " + input + " in " + hex_range(in));
}

}  // namespace rules
}  // namespace gemm
