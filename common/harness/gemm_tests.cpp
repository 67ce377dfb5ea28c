#include "common/harness/gemm_tests.h"

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
  return C.download();
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

// C is allocated `c_offset` elements past the start of a buffer (cudaMalloc aligns to 256 bytes), so
// c_offset = 1 gives a C that is only element-aligned: what the contract promises and no more.
void run_case(Fp32Launcher launch, const GemmCase& c, Tile tile, int c_offset) {
  SCOPED_TRACE("case " + c.name + ", seed " + std::to_string(seed_for(c.name)) +
               " (set GEMM_TEST_SEED to draw other data)" + (c_offset ? ", C offset by one element" : ""));
  const HostFp32Problem p = make_fp32_problem(c.M, c.N, c.K, c.L, c.tier, seed_for(c.name));
  const size_t count = size_t(int64_t(c.M) * c.N * c.L);
  DeviceBuffer<float> A(p.A), B(p.B), C(count + size_t(c_offset));
  const Fp32GemmArgs args{c.M, c.N, c.K, c.L, A.get(), B.get(), C.get() + c_offset};
  auto run = [&] {
    auto all = run_poisoned(C, [&] { launch(args, cudaStream_t{}); });
    return std::vector<float>(all.begin() + c_offset, all.end());
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
  DeviceBuffer<uint16_t> C(count + size_t(c_offset));
  const Nvfp4GemmArgs args{c.M, c.N, c.K, c.L, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha,
                           reinterpret_cast<__half*>(C.get() + c_offset)};
  auto run = [&] {
    auto all = run_poisoned(C, [&] { launch(args, cudaStream_t{}); });
    return std::vector<uint16_t>(all.begin() + c_offset, all.end());
  };
  const auto first = run();
  const ReferenceOutput ref = reference_gemm(p.host_args());
  const CompareResult r = compare_fp16(first, ref, {c.M, c.N, c.K, c.L, tile.m, tile.n}, c.tier);
  EXPECT_TRUE(r.ok()) << r.describe();
  const auto second = run();
  EXPECT_EQ(first, second) << "two runs on the same inputs differ: a race";
}

void expect_rejects_invalid_arguments_cpu(Fp32Launcher launch) {
  const Fp32GemmArgs good{64, 64, 64, 1, placeholder<const float>(0x10000), placeholder<const float>(0x20000),
                          placeholder<float>(0x30000)};
  expect_all_rejected(launch, good, fp32_bad_args());
}

void expect_rejects_invalid_arguments_cpu(Nvfp4Launcher launch) {
  const Nvfp4GemmArgs good{64,  64, 64, 1, placeholder<const uint8_t>(0x10000), placeholder<const uint8_t>(0x20000),
                           placeholder<const uint8_t>(0x30000), placeholder<const uint8_t>(0x40000), 1.0f,
                           placeholder<__half>(0x50000)};
  expect_all_rejected(launch, good, nvfp4_bad_args());
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

void expect_rejects_invalid_arguments_gpu(Nvfp4Launcher launch) {
  const int M = 64, N = 64, K = 64;
  const HostNvfp4Problem p = make_nvfp4_problem(M, N, K, 1, Tier::kRealistic, seed_for("invalid"));
  DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
  DeviceBuffer<uint16_t> C(size_t(M) * N);
  C.fill_bytes(kPoisonByte);
  expect_all_rejected(launch,
                      Nvfp4GemmArgs{M, N, K, 1, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha,
                                    reinterpret_cast<__half*>(C.get())},
                      nvfp4_bad_args());
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(all_bytes_are(C.download(), kPoisonByte)) << "a rejected call wrote to C";
}

}  // namespace gemm::testing
