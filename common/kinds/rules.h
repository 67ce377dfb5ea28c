// The argument rules the kinds share, each throwing std::invalid_argument as
// "<api>: <argument> <rule> (got <value>)", which the tests look for (": <argument> ").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gemm::rules {

inline constexpr int kMaxBatchRule = 65535;                         // gemm_api.h's kMaxBatch
inline constexpr double kElementLimit = double(int64_t(1) << 46);   // element counts stay far from overflow

[[noreturn]] void reject(const char* api, const char* arg, const std::string& rule, const std::string& value);
// M, N, K >= 1, 1 <= L <= 65535, M*K*L, N*K*L and M*N*L below 2^46.
void check_dims(const char* api, int M, int N, int K, int L);
// Non-null and `alignment`-byte aligned.
void check_pointer(const char* api, const char* arg, const void* p, size_t alignment);

// A byte range [begin, begin + bytes) of one operand, bytes >= 1.
struct ByteRange {
  uintptr_t begin;
  uint64_t bytes;
};
inline ByteRange range_of(const void* p, int64_t bytes) { return {reinterpret_cast<uintptr_t>(p), uint64_t(bytes)}; }
// The end of a range, saturated at the top of the address space (only a bogus pointer gets there).
uintptr_t end_of(ByteRange r);
// "[0x20000, 0x20200)": how messages print a range.
std::string hex_range(ByteRange r);
// The kernels write C while reading the inputs; an overlap would let a launch overwrite its own
// operands (and makes the result depend on the order in which tiles run).
void check_c_disjoint(const char* api, ByteRange c, const char* input, ByteRange in);

}  // namespace gemm::rules
