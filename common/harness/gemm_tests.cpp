#include "common/harness/gemm_tests.h"

#include "common/protocol/checker_state.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "common/cuda_check.h"
#include "common/device_buffer.h"
#include "common/harness/compare.h"
#include "common/reference.h"

namespace gemm::testing {
namespace {

constexpr int kPoisonByte = 0xFF;  // every float and every half made of 0xFF bytes is a NaN

std::string shape_name(const char* tier, int M, int N, int K, int L) {
  return std::string(tier) + "_M" + std::to_string(M) + "_N" + std::to_string(N) + "_K" + std::to_string(K) + "_L" +
         std::to_string(L);
}

void add(std::vector<GemmCase>& cases, Tier tier, int M, int N, int K, int L) {
  for (const auto& c : cases)
    if (c.M == M && c.N == N && c.K == K && c.L == L && c.tier == tier) return;
  cases.push_back({shape_name(tier_name(tier), M, N, K, L), M, N, K, L, tier});
}

template <class T>
bool all_bytes_are(const std::vector<T>& v, int byte) {
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(T); ++i)
    if (p[i] != byte) return false;
  return true;
}

// Runs `launch` once with a poisoned C, returns C.
template <class T, class Launch>
std::vector<T> run_poisoned(DeviceBuffer<T>& C, Launch&& launch) {
  C.fill_bytes(kPoisonByte);
  launch();
  CUDA_CHECK(cudaDeviceSynchronize());
  // The protocol checker, where it runs, traps on a violation; in its report mode it records one.
  EXPECT_EQ(protocol::take_violation(), "");
  return C.download();
}

// C lies between kGuardElements poisoned elements on each side (128 bytes for FP16 C, so C keeps the
// buffer's 128-byte alignment): a kernel that writes one element past either end of C fails the case.
constexpr size_t kGuardElements = 64;
template <class T>
void expect_guards_untouched(const std::vector<T>& all, size_t first, size_t count) {
  auto poisoned = [](const T& v) {
    const auto* b = reinterpret_cast<const unsigned char*>(&v);
    for (size_t i = 0; i < sizeof(T); ++i)
      if (b[i] != kPoisonByte) return false;
    return true;
  };
  size_t bad = 0, where = 0;
  for (size_t i = 0; i < all.size(); ++i)
    if ((i < first || i >= first + count) && !poisoned(all[i]) && bad++ == 0) where = i;
  EXPECT_EQ(bad, 0u) << bad << " element(s) written outside C, the first " << (where < first ? "before" : "after")
                     << " C at distance " << (where < first ? first - where : where - (first + count) + 1);
}

// Each entry: a name for the message, a mutation that breaks exactly one rule, and optionally a
// further text the message must contain (which rule fired, where several apply to one argument).
template <class Args>
struct BadArgs {
  const char* expect_in_message;
  std::function<void(Args&)> mutate;
  std::string also_in_message = {};
};

template <class Args>
std::vector<BadArgs<Args>> common_bad_args() {
  return {
      {"M", [](Args& a) { a.M = 0; }},
      {"N", [](Args& a) { a.N = 0; }},
      {"K", [](Args& a) { a.K = 0; }},
      {"M", [](Args& a) { a.M = -5; }},
      {"L", [](Args& a) { a.L = 0; }},
      {"L", [](Args& a) { a.L = kMaxBatch + 1; }},
      {"A", [](Args& a) { a.A = nullptr; }},
      {"B", [](Args& a) { a.B = nullptr; }},
      {"C", [](Args& a) { a.C = nullptr; }},
  };
}

// Mutations that point C into one input (at at(args), bytes(args) long), each keeping C aligned so
// that the overlap rule, not the alignment rule, must catch it: C at the input's first byte; in its
// middle; with C's first element on the input's last bytes; with C's last element on the input's
// first bytes. Never dereferenced: the call must throw first. The message must name C and the rule;
// it need not name this input, because in the GPU variant the buffers come from cudaMalloc and C,
// being larger than the inputs, may reach into a neighbouring one that validate() checks first
// (test_harness.cpp's ValidateOverlap tests pin the input's name with addresses they control).
template <class Args>
void add_c_overlaps(std::vector<BadArgs<Args>>& v, const void* (*at)(const Args&), int64_t (*bytes)(const Args&)) {
  using CPtr = decltype(Args::C);
  constexpr int64_t e = sizeof(*CPtr{});  // bytes per element of C (also C's alignment)
  const auto c_bytes = [](const Args& a) { return e * a.M * a.N * a.L; };
  const auto c_at = [at](const Args& a, int64_t offset) {
    return reinterpret_cast<CPtr>(reinterpret_cast<uintptr_t>(at(a)) + uintptr_t(offset));  // wraps, never UB
  };
  const std::string rule = "must not overlap ";
  v.push_back({"C", [=](Args& a) { a.C = c_at(a, 0); }, rule});
  v.push_back({"C", [=](Args& a) { a.C = c_at(a, bytes(a) / 2 / e * e); }, rule});
  v.push_back({"C", [=](Args& a) { a.C = c_at(a, bytes(a) - e); }, rule});
  v.push_back({"C", [=](Args& a) { a.C = c_at(a, e - c_bytes(a)); }, rule});
}

std::vector<BadArgs<Fp32GemmArgs>> fp32_bad_args() {
  auto v = common_bad_args<Fp32GemmArgs>();
  v.push_back({"A", [](Fp32GemmArgs& a) { a.A = reinterpret_cast<const float*>(reinterpret_cast<const char*>(a.A) + 2); }});
  using F = Fp32GemmArgs;
  add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.A; },
                    [](const F& a) { return 4 * int64_t(a.M) * a.K * a.L; });
  add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.B; },
                    [](const F& a) { return 4 * int64_t(a.N) * a.K * a.L; });
  return v;
}

std::vector<BadArgs<Nvfp4GemmArgs>> nvfp4_bad_args() {
  auto v = common_bad_args<Nvfp4GemmArgs>();
  v.push_back({"K", [](Nvfp4GemmArgs& a) { a.K = 48; }});   // a multiple of 16 but not of 32
  v.push_back({"K", [](Nvfp4GemmArgs& a) { a.K = 31; }});
  v.push_back({"SFA", [](Nvfp4GemmArgs& a) { a.SFA = nullptr; }});
  v.push_back({"SFB", [](Nvfp4GemmArgs& a) { a.SFB = nullptr; }});
  v.push_back({"A", [](Nvfp4GemmArgs& a) { a.A += 8; }});     // not 16-byte aligned
  v.push_back({"SFB", [](Nvfp4GemmArgs& a) { a.SFB += 4; }});
  v.push_back({"alpha", [](Nvfp4GemmArgs& a) { a.alpha = NAN; }});
  v.push_back({"alpha", [](Nvfp4GemmArgs& a) { a.alpha = INFINITY; }});
  using F = Nvfp4GemmArgs;
  add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.A; },
                    [](const F& a) { return packed_bytes(a.M, a.K, a.L); });
  add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.SFA; },
                    [](const F& a) { return sf_bytes(a.M, a.K, a.L); });
  add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.B; },
                    [](const F& a) { return packed_bytes(a.N, a.K, a.L); });
  add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.SFB; },
                    [](const F& a) { return sf_bytes(a.N, a.K, a.L); });
  return v;
}

template <class Args, class Launcher>
void expect_all_rejected(Launcher launch, const Args& good, const std::vector<BadArgs<Args>>& bad) {
  for (const auto& b : bad) {
    Args a = good;
    b.mutate(a);
    try {
      launch(a, cudaStream_t{});
      ADD_FAILURE() << "accepted invalid arguments (expected a complaint about " << b.expect_in_message
                    << (b.also_in_message.empty() ? "" : ": " + b.also_in_message) << ")";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(": ") + b.expect_in_message + " "), std::string::npos)
          << "message does not name " << b.expect_in_message << ": " << e.what();
      if (!b.also_in_message.empty()) {
        EXPECT_NE(std::string(e.what()).find(b.also_in_message), std::string::npos)
            << "message does not say \"" << b.also_in_message << "\": " << e.what();
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw something other than std::invalid_argument: " << e.what();
    }
  }
}

// Placeholder device addresses for the CPU-only checks: aligned, never dereferenced.
template <class T>
T* placeholder(uintptr_t at) {
  return reinterpret_cast<T*>(at);
}

}  // namespace

std::string case_name(const ::testing::TestParamInfo<GemmCase>& info) { return info.param.name; }

void exit_with_kernel_status() {
  const cudaError_t err = cudaDeviceSynchronize();
  std::fprintf(stderr, "kernel ended with: %s\n", cudaGetErrorString(err));
  std::exit(err == cudaSuccess ? 0 : kKernelFailedExit);
}

std::vector<GemmCase> fp32_cases(Tile t) {
  std::vector<GemmCase> c;
  for (Tier tier : {Tier::kExact, Tier::kRealistic}) {
    add(c, tier, 1, 1, 1, 1);
    add(c, tier, 1, 37, 19, 1);
    add(c, tier, 31, 1, 5, 1);
    add(c, tier, 17, 13, 31, 1);
    add(c, tier, t.m + 1, t.n + 1, t.k + 1, 1);
    add(c, tier, 2 * t.m - 1, 2 * t.n - 1, 2 * t.k - 1, 1);
    add(c, tier, 128, 128, 128, 1);
    add(c, tier, 256, 192, 320, 1);
    add(c, tier, 67, 131, 1031, 1);  // long K, primes
    add(c, tier, 29, 53, 97, 3);     // L > 1
    add(c, tier, 2 * t.m, 2 * t.n, 4 * t.k, 2);
  }
  add(c, Tier::kRealistic, 509, 1021, 257, 1);
  add(c, Tier::kRealistic, 1024, 1024, 1024, 1);
  return c;
}

std::vector<GemmCase> nvfp4_cases(Tile t) {
  std::vector<GemmCase> c;
  const int k_tail = (t.k + 32) / 32 * 32;  // smallest multiple of 32 above the tile's K
  for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic}) {
    add(c, tier, 1, 1, 32, 1);
    add(c, tier, 1, 37, 64, 1);
    add(c, tier, 31, 1, 96, 1);
    add(c, tier, 17, 13, 160, 1);
    add(c, tier, t.m + 1, t.n + 1, k_tail, 1);
    add(c, tier, 2 * t.m - 1, 2 * t.n - 1, 2 * k_tail, 1);
    add(c, tier, 128, 128, 256, 1);
    add(c, tier, 129, 257, 544, 1);  // one past the 128-row scale tile; K not a multiple of 64
    add(c, tier, 67, 131, 1056, 1);
    add(c, tier, 29, 53, 96, 3);
    add(c, tier, 2 * t.m, 2 * t.n, 4 * k_tail, 2);
  }
  add(c, Tier::kRealistic, 509, 1021, 2048, 1);
  add(c, Tier::kRealistic, 1024, 1024, 1024, 1);
  // Scale bytes with bit 7 set, which the hardware ignores: a tail, a K past one tile, L > 1.
  add(c, Tier::kScaleBit7, 17, 13, 160, 1);
  add(c, Tier::kScaleBit7, t.m + 1, t.n + 1, 2 * k_tail, 1);
  add(c, Tier::kScaleBit7, 29, 53, 96, 3);
  return c;
}

// C is allocated kGuardElements + `c_offset` elements past the start of a buffer (cudaMalloc aligns to
// 256 bytes, the guard keeps 128), so c_offset = 1 gives a C that is only element-aligned: what the
// contract promises and no more. The guards on both sides must still hold the poison afterwards.
void run_case(Fp32Launcher launch, const GemmCase& c, Tile tile, int c_offset) {
  SCOPED_TRACE("case " + c.name + ", seed " + std::to_string(seed_for(c.name)) +
               " (set GEMM_TEST_SEED to draw other data)" + (c_offset ? ", C offset by one element" : ""));
  const HostFp32Problem p = make_fp32_problem(c.M, c.N, c.K, c.L, c.tier, seed_for(c.name));
  const size_t count = size_t(int64_t(c.M) * c.N * c.L);
  const size_t first_c = kGuardElements + size_t(c_offset);
  DeviceBuffer<float> A(p.A), B(p.B), C(first_c + count + kGuardElements);
  const Fp32GemmArgs args{c.M, c.N, c.K, c.L, A.get(), B.get(), C.get() + first_c};
  auto run = [&] {
    auto all = run_poisoned(C, [&] { launch(args, cudaStream_t{}); });
    expect_guards_untouched(all, first_c, count);
    return std::vector<float>(all.begin() + first_c, all.begin() + first_c + count);
  };
  const auto first = run();
  const ReferenceOutput ref = reference_gemm(p.host_args());
  const CompareResult r = compare_fp32(first, ref, {c.M, c.N, c.K, c.L, tile.m, tile.n}, c.tier);
  EXPECT_TRUE(r.ok()) << r.describe();
  const auto second = run();
  EXPECT_EQ(0, std::memcmp(first.data(), second.data(), first.size() * sizeof(float)))
      << "two runs on the same inputs differ: a race";
}

void run_case(Nvfp4Launcher launch, const GemmCase& c, Tile tile, int c_offset) {
  SCOPED_TRACE("case " + c.name + ", seed " + std::to_string(seed_for(c.name)) +
               " (set GEMM_TEST_SEED to draw other data)" + (c_offset ? ", C offset by one element" : ""));
  const HostNvfp4Problem p = make_nvfp4_problem(c.M, c.N, c.K, c.L, c.tier, seed_for(c.name));
  DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
  const size_t count = size_t(int64_t(c.M) * c.N * c.L);
  const size_t first_c = kGuardElements + size_t(c_offset);
  DeviceBuffer<uint16_t> C(first_c + count + kGuardElements);
  const Nvfp4GemmArgs args{c.M, c.N, c.K, c.L, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha,
                           reinterpret_cast<__half*>(C.get() + first_c)};
  auto run = [&] {
    auto all = run_poisoned(C, [&] { launch(args, cudaStream_t{}); });
    expect_guards_untouched(all, first_c, count);
    return std::vector<uint16_t>(all.begin() + first_c, all.begin() + first_c + count);
  };
  const auto first = run();
  const ReferenceOutput ref = reference_gemm(p.host_args());
  const CompareResult r = compare_fp16(first, ref, {c.M, c.N, c.K, c.L, tile.m, tile.n}, c.tier);
  EXPECT_TRUE(r.ok()) << r.describe();
  const auto second = run();
  EXPECT_EQ(first, second) << "two runs on the same inputs differ: a race";
}

void run_case_with_guards(Nvfp4Launcher launch, const GemmCase& c, Tile tile, int c_offset) {
  SCOPED_TRACE("case " + c.name + ", seed " + std::to_string(seed_for(c.name)) + ", guard bytes around C");
  const HostNvfp4Problem p = make_nvfp4_problem(c.M, c.N, c.K, c.L, c.tier, seed_for(c.name));
  DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
  const size_t count = size_t(int64_t(c.M) * c.N * c.L), guard = 4096;  // halves of guard on each side
  DeviceBuffer<uint16_t> buf(guard + count + guard + 8);
  std::vector<uint16_t> pattern(buf.size());
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = uint16_t(0xA5A5u ^ (i * 40503u));
  buf.upload(pattern);
  uint16_t* C = buf.get() + guard + c_offset;
  CUDA_CHECK(cudaMemset(C, kPoisonByte, count * 2));
  const Nvfp4GemmArgs args{c.M, c.N, c.K, c.L, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha,
                           reinterpret_cast<__half*>(C)};
  launch(args, cudaStream_t{});
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<uint16_t> got = buf.download();
  const size_t first = guard + size_t(c_offset), last = first + count;
  size_t touched = 0;
  for (size_t i = 0; i < got.size(); ++i) touched += (i < first || i >= last) && got[i] != pattern[i];
  EXPECT_EQ(touched, 0u) << "bytes outside C were written";
  const std::vector<uint16_t> out(got.begin() + long(first), got.begin() + long(last));
  const CompareResult r = compare_fp16(out, reference_gemm(p.host_args()), {c.M, c.N, c.K, c.L, tile.m, tile.n}, c.tier);
  EXPECT_TRUE(r.ok()) << r.describe();
}

void expect_rejects_invalid_arguments_cpu(Fp32Launcher launch) {
  const Fp32GemmArgs good{64, 64, 64, 1, placeholder<const float>(0x10000), placeholder<const float>(0x20000),
                          placeholder<float>(0x30000)};
  expect_all_rejected(launch, good, fp32_bad_args());
}

namespace {

void nvfp4_rejects_cpu(Nvfp4Launcher launch, int N, const std::vector<BadArgs<Nvfp4GemmArgs>>& bad) {
  const Nvfp4GemmArgs good{64,  N, 64, 1, placeholder<const uint8_t>(0x10000), placeholder<const uint8_t>(0x20000),
                           placeholder<const uint8_t>(0x30000), placeholder<const uint8_t>(0x40000), 1.0f,
                           placeholder<__half>(0x50000)};
  expect_all_rejected(launch, good, bad);
}

void nvfp4_rejects_gpu(Nvfp4Launcher launch, int N, const std::vector<BadArgs<Nvfp4GemmArgs>>& bad) {
  const int M = 64, K = 64;
  const HostNvfp4Problem p = make_nvfp4_problem(M, N, K, 1, Tier::kRealistic, seed_for("invalid"));
  DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
  DeviceBuffer<uint16_t> C(size_t(M) * N);
  C.fill_bytes(kPoisonByte);
  expect_all_rejected(launch,
                      Nvfp4GemmArgs{M, N, K, 1, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha,
                                    reinterpret_cast<__half*>(C.get())},
                      bad);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(all_bytes_are(C.download(), kPoisonByte)) << "a rejected call wrote to C";
}

// A GEMV takes N = 1 only: every rule of the NVFP4 contract, plus N = 2 and N = 64.
std::vector<BadArgs<Nvfp4GemmArgs>> gemv_bad_args() {
  auto v = nvfp4_bad_args();
  v.push_back({"N", [](Nvfp4GemmArgs& a) { a.N = 2; }, "must be 1"});
  v.push_back({"N", [](Nvfp4GemmArgs& a) { a.N = 64; }, "must be 1"});
  return v;
}

}  // namespace

void expect_rejects_invalid_arguments_cpu(Nvfp4Launcher launch) { nvfp4_rejects_cpu(launch, 64, nvfp4_bad_args()); }
void expect_rejects_invalid_gemv_arguments_cpu(Nvfp4Launcher launch) { nvfp4_rejects_cpu(launch, 1, gemv_bad_args()); }
void expect_rejects_invalid_gemv_arguments_gpu(Nvfp4Launcher launch) { nvfp4_rejects_gpu(launch, 1, gemv_bad_args()); }

std::vector<GemmCase> nvfp4_gemv_cases() {
  std::vector<GemmCase> c;
  for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic}) {
    add(c, tier, 1, 1, 32, 1);        // one row, one 16-byte chunk
    add(c, tier, 2, 1, 64, 1);
    add(c, tier, 3, 1, 96, 1);        // odd M: a group with one row of its pair
    add(c, tier, 31, 1, 992, 1);      // K not a multiple of 64: a half chunk of 32 bytes
    add(c, tier, 33, 1, 1056, 1);     // past 32 rows: the second row of every scale line
    add(c, tier, 97, 1, 2080, 1);     // rows in all four 32-row quarters of a scale tile
    add(c, tier, 127, 1, 4096, 1);
    add(c, tier, 129, 1, 160, 1);     // one past a 128-row block
    add(c, tier, 257, 1, 4128, 1);    // several steps, one chunk past a step of 512 bytes per warp
    add(c, tier, 7, 1, 32, 8);        // L up to 8: batch strides of every operand
    add(c, tier, 67, 1, 1056, 3);
    add(c, tier, 300, 1, 7168, 2);
  }
  // K long enough that several warps and (small M) a cluster of CTAs split it.
  add(c, Tier::kExact, 5, 1, 6976, 1);        // exact tier: any K up to ~7000 stays exact
  add(c, Tier::kRealistic, 257, 1, 16416, 1);  // (the layout tier's sums overflow FP16 at this K)
  add(c, Tier::kRealistic, 1, 1, 65536, 1);   // one row: the widest cluster split
  add(c, Tier::kRealistic, 128, 1, 32768, 2);
  add(c, Tier::kRealistic, 4096, 1, 7168, 2);  // a public shape's M and K
  add(c, Tier::kRealistic, 1000, 1, 2048, 4);
  // Scale bytes with bit 7 set, in A's scales and the vector's (ignored, as by the hardware).
  add(c, Tier::kScaleBit7, 3, 1, 96, 1);
  add(c, Tier::kScaleBit7, 129, 1, 1056, 1);
  add(c, Tier::kScaleBit7, 67, 1, 1056, 3);
  return c;
}

void expect_rejects_invalid_arguments_gpu(Fp32Launcher launch) {
  const int M = 64, N = 64, K = 64;
  const HostFp32Problem p = make_fp32_problem(M, N, K, 1, Tier::kRealistic, seed_for("invalid"));
  DeviceBuffer<float> A(p.A), B(p.B), C(size_t(M) * N);
  C.fill_bytes(kPoisonByte);
  expect_all_rejected(launch, Fp32GemmArgs{M, N, K, 1, A.get(), B.get(), C.get()}, fp32_bad_args());
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(all_bytes_are(C.download(), kPoisonByte)) << "a rejected call wrote to C";
}

void expect_rejects_invalid_arguments_gpu(Nvfp4Launcher launch) { nvfp4_rejects_gpu(launch, 64, nvfp4_bad_args()); }

}  // namespace gemm::testing
