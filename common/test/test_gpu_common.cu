// GPU checks of common/ itself: the library peers the benchmarks compare against (the FP32, NVFP4
// and MXFP8 GEMMs'), the device fill the benchmarks feed, and the benchmarks' timer. Skipped where
// there is no usable GPU (the CublasLtNvfp4 and Mxfp8Peer* suites without "Gpu" in their names are
// the CPU checks of those peers).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/device_buffer.h"
#include "common/device_fill.h"
#include "common/formats.h"
#include "common/harness/compare.h"
#include "common/harness/gemm_tests.h"
#include "common/harness/timing.h"
#include "common/kinds/mxfp8_gemm.h"
#include "common/kinds/svdquant_gemm.h"
#include "common/peers.h"
#include "common/reference.h"

namespace gemm {
namespace {

class GpuCublasPeer : public ::testing::TestWithParam<testing::GemmCase> {};

TEST_P(GpuCublasPeer, MatchesCpuReference) {
  GEMM_REQUIRE_GPU();
  testing::run_case(cublas_sgemm, GetParam(), {128, 128, 32});
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuCublasPeer, ::testing::ValuesIn(KindOf<Fp32GemmArgs>::get().cases({128, 128, 32})),
                         testing::case_name);

TEST(GpuCublasPeerArgs, RejectsInvalidArguments) {
  GEMM_REQUIRE_GPU();
  testing::expect_rejects_invalid_arguments_gpu(cublas_sgemm);
}

TEST(GpuDequantCublasPeer, MatchesCpuReferenceWithinBf16Rounding) {
  GEMM_REQUIRE_GPU();
  for (auto [M, N, K, L] : {std::array<int, 4>{1, 1, 32, 1}, {67, 131, 544, 2}, {256, 128, 1024, 1}}) {
    const HostNvfp4Problem p = make_nvfp4_problem(M, N, K, L, Tier::kRealistic, seed_for("bf16_peer"));
    DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
    DeviceBuffer<__nv_bfloat16> C(size_t(M) * N * L);
    C.fill_bytes(0xFF);
    Bf16PeerWorkspace ws;
    dequantize_cublas_bf16({M, N, K, L, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha, nullptr}, C.get(), ws, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto got = C.download();
    const ReferenceOutput ref = reference_gemm(p.host_args());
    int64_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double g = double(__bfloat162float(got[i])), w = ref.value[i];
      // FP32 accumulation (gamma_K) plus BF16 output rounding (2^-8 relative).
      const double tol = K * std::ldexp(1.0, -23) * ref.abs_sum[i] + std::ldexp(std::fabs(w), -8) + 1e-30;
      bad += !(std::fabs(g - w) <= tol);
    }
    EXPECT_EQ(bad, 0) << M << "x" << N << "x" << K << "x" << L;
  }
}

// ---- cuBLASLt NVFP4 ------------------------------------------------------------------------------
// The peer runs only on cc 10.x (B200). What can be checked elsewhere is checked elsewhere: that it
// refuses cleanly (here and on Hopper), that invalid arguments are rejected first, and (the FP8
// self-test below) that its operand mapping, batching, padding, staging and plan cache compute the
// right thing through cuBLASLt on Hopper.

std::vector<testing::GemmCase> cublaslt_nvfp4_cases() {
  std::vector<testing::GemmCase> cases;
  for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic})
    for (auto [M, N, K, L] : {std::array<int, 4>{1, 1, 32, 1}, {129, 257, 544, 1}, {256, 256, 1024, 2}, {29, 53, 96, 3}})
      cases.push_back({case_name(tier, {M, N, K, L}), {M, N, K, L}, tier});
  return cases;
}

template <class T>
bool all_bytes(const std::vector<T>& v, uint8_t byte) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(T); ++i)
    if (p[i] != byte) return false;
  return true;
}

// Runs `launch(stream)` once plainly, then captures it into a CUDA graph (global capture mode, in
// which an allocation or a synchronisation inside the launch is an error) and replays the graph into
// a poisoned C: the replay must reproduce the first result bit for bit.
template <class Launch>
void expect_capturable(DeviceBuffer<uint16_t>& C, Launch&& launch) {
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  C.fill_bytes(0xFF);
  CUDA_CHECK(cudaDeviceSynchronize());  // the fill runs on the legacy stream, which `stream` does not wait for
  launch(stream);  // builds the plan
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto first = C.download();
  ASSERT_FALSE(all_bytes(first, 0xFF)) << "the plain launch wrote nothing";
  C.fill_bytes(0xFF);
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  try {
    launch(stream);
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  EXPECT_TRUE(all_bytes(C.download(), 0xFF)) << "capturing ran the launch instead of recording it";
  CUDA_CHECK(cudaGraphLaunch(exec, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_EQ(first, C.download()) << "the graph replay differs from the plain launch";
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST(CublasLtNvfp4, ReportsUnsupportedWithoutAUsableDevice) {
  if (gpu_info().usable) GTEST_SKIP() << "a GPU is usable here; the GpuCublasLtNvfp4 tests cover this machine";
  std::string why;
  EXPECT_FALSE(cublaslt_nvfp4_supported(&why));
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(cublaslt_nvfp4_supported(nullptr));
  // Valid arguments with placeholder device addresses (never dereferenced): the call must refuse
  // before it reaches CUDA, with the same reason.
  const auto at = [](uintptr_t a) { return reinterpret_cast<const uint8_t*>(a); };
  const Nvfp4GemmArgs args{64, 64, 64, 1, at(0x10000), at(0x20000), at(0x30000), at(0x40000), 1.0f,
                           reinterpret_cast<__half*>(uintptr_t(0x50000))};
  try {
    cublaslt_nvfp4(args, nullptr);
    ADD_FAILURE() << "cublaslt_nvfp4 returned without a GPU";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(CublasLtNvfp4Args, RejectsInvalidArgumentsBeforeAnyLaunch) {
  testing::expect_rejects_invalid_arguments_cpu(cublaslt_nvfp4);
}

TEST(GpuCublasLtNvfp4Args, RejectsInvalidArgumentsAndWritesNothing) {
  GEMM_REQUIRE_GPU();
  testing::expect_rejects_invalid_arguments_gpu(cublaslt_nvfp4);
}

class GpuCublasLtNvfp4 : public ::testing::TestWithParam<testing::GemmCase> {};

TEST_F(GpuCublasLtNvfp4, ReportsUnsupportedCleanlyOffBlackwell) {
  GEMM_REQUIRE_GPU();
  const GpuInfo& g = gpu_info();
  if (g.cc_major == 10)
    GTEST_SKIP() << "compute capability " << g.compute_capability() << ": cuBLASLt NVFP4 is expected here";
  std::string why;
  EXPECT_FALSE(cublaslt_nvfp4_supported(&why));
  EXPECT_NE(why.find(g.compute_capability()), std::string::npos)
      << "the reason does not name the compute capability: " << why;
  const int M = 64, N = 64, K = 64;
  const HostNvfp4Problem p = make_nvfp4_problem(M, N, K, 1, Tier::kRealistic, seed_for("cublaslt_unsupported"));
  DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
  DeviceBuffer<uint16_t> C(size_t(M) * N);
  C.fill_bytes(0xFF);
  const Nvfp4GemmArgs args{M, N, K, 1, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha,
                           reinterpret_cast<__half*>(C.get())};
  EXPECT_THROW(cublaslt_nvfp4(args, nullptr), std::runtime_error);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(all_bytes(C.download(), 0xFF)) << "an unsupported call wrote to C";
}

TEST_P(GpuCublasLtNvfp4, MatchesTheCpuReference) {
  GEMM_REQUIRE_GPU();
  std::string why;
  if (!cublaslt_nvfp4_supported(&why)) GTEST_SKIP() << why;
  testing::run_case(cublaslt_nvfp4, GetParam(), {128, 128, 256});
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuCublasLtNvfp4, ::testing::ValuesIn(cublaslt_nvfp4_cases()), testing::case_name);

TEST_F(GpuCublasLtNvfp4, IsCapturableAfterTheFirstCall) {
  GEMM_REQUIRE_GPU();
  std::string why;
  if (!cublaslt_nvfp4_supported(&why)) GTEST_SKIP() << why;
  for (auto [M, N, K, L] : {std::array<int, 4>{256, 256, 512, 2}, {29, 53, 96, 3}}) {
    SCOPED_TRACE(std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + "x" + std::to_string(L));
    const HostNvfp4Problem p = make_nvfp4_problem(M, N, K, L, Tier::kRealistic, seed_for("cublaslt_graph"));
    DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
    DeviceBuffer<uint16_t> C(size_t(M) * N * L);
    const Nvfp4GemmArgs args{M, N, K, L, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha,
                             reinterpret_cast<__half*>(C.get())};
    expect_capturable(C, [&](cudaStream_t s) { cublaslt_nvfp4(args, s); });
  }
}

// ---- The same machinery on FP8 (any GPU with cuBLASLt FP8: Hopper and Blackwell) -----------------
// kExact: values in {0, +-0.5, +-1, +-1.5, +-2}, power-of-two scales and alpha, so every product and
// partial sum is exact and the FP16 result must equal the rounded exact value bit for bit.
// wide: any finite E4M3 code up to 4 in magnitude, per-batch scales that are not powers of two, and
// a tolerance loose enough for the tensor cores' FP8 accumulation yet far below the O(1) error a
// swapped operand, a wrong leading dimension, a wrong batch offset or a lost tail would cause.

struct Fp8Case {
  std::string name;
  int M, N, K, L;
  bool exact;
};
void PrintTo(const Fp8Case& c, std::ostream* os) { *os << c.name; }

std::vector<Fp8Case> fp8_cases() {
  std::vector<Fp8Case> cases;
  for (bool exact : {true, false})
    for (auto [M, N, K, L] : {std::array<int, 4>{1, 1, 32, 1}, {129, 257, 544, 1}, {256, 256, 1024, 2},
                              {29, 53, 96, 3}, {67, 131, 1056, 1}, {128, 128, 256, 1}, {1, 37, 64, 2}, {31, 1, 96, 1}})
      cases.push_back({std::string(exact ? "exact" : "wide") + "_M" + std::to_string(M) + "_N" + std::to_string(N) +
                           "_K" + std::to_string(K) + "_L" + std::to_string(L),
                       M, N, K, L, exact});
  return cases;
}

struct HostFp8Problem {
  int M, N, K, L;
  std::vector<uint8_t> A, B;
  std::vector<float> a_scales, b_scales;  // batch l's at 4 l (see CublasLtFp8SelftestArgs)
  float alpha;
};

HostFp8Problem make_fp8_problem(const Fp8Case& c) {
  std::mt19937_64 rng(seed_for("cublaslt_fp8_" + c.name));
  std::vector<uint8_t> codes;
  if (c.exact) {
    for (float v : {0.0f, 0.5f, -0.5f, 1.0f, -1.0f, 1.5f, -1.5f, 2.0f, -2.0f}) codes.push_back(e4m3_from_float(v));
  } else {
    for (int code = 0; code < 256; ++code)
      if (std::isfinite(e4m3_to_float(uint8_t(code))) && std::fabs(e4m3_to_float(uint8_t(code))) <= 4.0f)
        codes.push_back(uint8_t(code));
  }
  std::uniform_int_distribution<size_t> pick(0, codes.size() - 1);
  HostFp8Problem p{c.M, c.N, c.K, c.L, {}, {}, {}, {}, c.exact ? 0.5f : 0.3f};
  p.A.resize(size_t(c.M) * c.K * c.L);
  p.B.resize(size_t(c.N) * c.K * c.L);
  for (auto& x : p.A) x = codes[pick(rng)];
  for (auto& x : p.B) x = codes[pick(rng)];
  p.a_scales.assign(4 * size_t(c.L), NAN);
  p.b_scales.assign(4 * size_t(c.L), NAN);
  for (int l = 0; l < c.L; ++l) {
    p.a_scales[4 * l] = c.exact ? std::ldexp(1.0f, l % 3 - 1) : 0.75f + 0.5f * l;
    p.b_scales[4 * l] = c.exact ? std::ldexp(1.0f, -(l % 2)) : 1.25f - 0.125f * l;
  }
  return p;
}

class GpuCublasLtFp8Selftest : public ::testing::TestWithParam<Fp8Case> {};

TEST_P(GpuCublasLtFp8Selftest, MatchesTheCpuReference) {
  GEMM_REQUIRE_GPU();
  const Fp8Case& c = GetParam();
  const HostFp8Problem p = make_fp8_problem(c);
  DeviceBuffer<uint8_t> A(p.A), B(p.B);
  DeviceBuffer<float> SA(p.a_scales), SB(p.b_scales);
  DeviceBuffer<uint16_t> C(size_t(c.M) * c.N * c.L);
  const CublasLtFp8SelftestArgs args{c.M, c.N, c.K, c.L, A.get(), SA.get(), B.get(), SB.get(), p.alpha,
                                     reinterpret_cast<__half*>(C.get())};
  std::vector<std::vector<uint16_t>> runs;
  std::string plan;
  for (int run = 0; run < 2; ++run) {
    C.fill_bytes(0xFF);
    plan = cublaslt_fp8_selftest(args, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    runs.push_back(C.download());
  }
  std::printf("[          ] %s: cuBLASLt plan: %s\n", c.name.c_str(), plan.c_str());
  EXPECT_EQ(runs[0], runs[1]) << "two runs on the same inputs differ";
  int64_t bad = 0;
  for (int l = 0; l < c.L; ++l)
    for (int m = 0; m < c.M; ++m)
      for (int n = 0; n < c.N; ++n) {
        double sum = 0, abs_sum = 0;
        for (int k = 0; k < c.K; ++k) {
          const double prod = double(e4m3_to_float(p.A[(size_t(l) * c.M + m) * c.K + k])) *
                              double(e4m3_to_float(p.B[(size_t(l) * c.N + n) * c.K + k]));
          sum += prod;
          abs_sum += std::fabs(prod);
        }
        const double f = double(p.alpha) * p.a_scales[4 * l] * p.b_scales[4 * l];
        const double want = f * sum;
        const uint16_t got_bits = runs[0][(size_t(l) * c.M + m) * c.N + n];
        const double got = half_bits_to_double(got_bits);
        const bool ok = c.exact ? got_bits == half_bits_from_double(want) || (got == 0 && want == 0)
                                : std::fabs(got - want) <= std::ldexp(std::fabs(f) * abs_sum, -10) +
                                                               std::ldexp(std::fabs(want), -10) + 1e-30;
        if (!ok && ++bad <= 8)
          ADD_FAILURE() << "l " << l << " m " << m << " n " << n << ": got " << got << ", want " << want
                        << " (plan: " << plan << ")";
      }
  EXPECT_EQ(bad, 0) << "mismatches of " << int64_t(c.M) * c.N * c.L << " outputs (plan: " << plan << ")";
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuCublasLtFp8Selftest, ::testing::ValuesIn(fp8_cases()),
                         [](const ::testing::TestParamInfo<Fp8Case>& info) { return info.param.name; });

TEST(GpuCublasLtFp8SelftestGraph, IsCapturableAfterTheFirstCall) {
  GEMM_REQUIRE_GPU();
  // One shape that runs as given and one that needs padding and staging (odd M*N with L > 1).
  for (const Fp8Case& c : {Fp8Case{"graph_a", 256, 256, 512, 2, false}, Fp8Case{"graph_b", 29, 53, 96, 3, false}}) {
    SCOPED_TRACE(c.name);
    const HostFp8Problem p = make_fp8_problem(c);
    DeviceBuffer<uint8_t> A(p.A), B(p.B);
    DeviceBuffer<float> SA(p.a_scales), SB(p.b_scales);
    DeviceBuffer<uint16_t> C(size_t(c.M) * c.N * c.L);
    const CublasLtFp8SelftestArgs args{c.M, c.N, c.K, c.L, A.get(), SA.get(), B.get(), SB.get(), p.alpha,
                                       reinterpret_cast<__half*>(C.get())};
    expect_capturable(C, [&](cudaStream_t s) { cublaslt_fp8_selftest(args, s); });
  }
}

// ---- The SVDQuant GEMM's peer: the unfused baseline ------------------------------------------------
// Through the kind's own test procedure, as the MXFP8 peers: the kind's cases (ranks, tails, L > 1,
// both formats of C and of the low-rank operands), bit for bit in the exact tier.
constexpr Tile kSvdquantPeerTile{128, 128, 128};

class GpuSvdquantPeerUnfused : public ::testing::TestWithParam<testing::GemmCase> {};

TEST_P(GpuSvdquantPeerUnfused, MatchesTheKindsComparison) {
  GEMM_REQUIRE_GPU();
  testing::run_case(svdquant_unfused, GetParam(), kSvdquantPeerTile);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuSvdquantPeerUnfused,
                         ::testing::ValuesIn(KindOf<SvdquantGemmArgs>::get().cases(kSvdquantPeerTile)),
                         testing::case_name);

TEST(GpuSvdquantPeerUnfusedCOffset, WorksWithAnElementAlignedC) {
  GEMM_REQUIRE_GPU();
  testing::run_case(svdquant_unfused, KindOf<SvdquantGemmArgs>::get().element_aligned_c_case(), kSvdquantPeerTile, 1);
}

// The comparison rejects a baseline that drops the low-rank term, applies the wrong batch's affine or
// writes nothing: the tests above can fail.
TEST(GpuSvdquantPeerUnfusedBroken, EachBrokenCallFailsTheComparison) {
  GEMM_REQUIRE_GPU();
  const Kind& kind = KindOf<SvdquantGemmArgs>::get();
  const Shape s = svdquant_shape(67, 131, 160, 2, {32, Format16::kFp16, Format16::kBf16});
  struct Break {
    const char* what;
    void (*mutate)(SvdquantGemmArgs&);
  };
  const Break breaks[] = {
      {"BF16 low-rank operands read as FP16", [](SvdquantGemmArgs& a) { a.lora_format = Format16::kFp16; }},
      {"bias read as wcscale", [](SvdquantGemmArgs& a) { a.wcscale = a.bias; }},
      {"C not written", [](SvdquantGemmArgs& a) { a.C = nullptr; }},
  };
  for (const Break& b : breaks) {
    SCOPED_TRACE(b.what);
    const std::unique_ptr<Problem> p = kind.make_problem(s, Tier::kExact, seed_for("svdquant_peer_broken"));
    const std::unique_ptr<DeviceInputs> in = p->upload();
    DeviceBuffer<uint8_t> C(size_t(kind.output_bytes(s)));
    C.fill_bytes(0xFF);
    SvdquantGemmArgs args = in->args(0, C.get()).as<SvdquantGemmArgs>();
    b.mutate(args);
    if (args.C) svdquant_unfused(args, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<uint8_t> got = C.download();
    EXPECT_FALSE(p->compare(got.data(), kSvdquantPeerTile).ok());
  }
}

TEST(SvdquantPeerUnfusedArgs, RejectsInvalidArgumentsBeforeAnyLaunch) {
  testing::expect_rejects_invalid_arguments_cpu(svdquant_unfused);
}

TEST(GpuSvdquantPeerUnfusedArgs, RejectsInvalidArgumentsAndWritesNothing) {
  GEMM_REQUIRE_GPU();
  testing::expect_rejects_invalid_arguments_gpu(svdquant_unfused);
}

// ---- The MXFP8 GEMM's peers ------------------------------------------------------------------------
// Both run through the kind's own test procedure (gemm::testing::run_case: the kind's seeded
// problem, C poisoned with NaN between guard bytes, the kind's comparison: bit for bit in the exact
// tier, within FP32-accumulation error otherwise; then a second run that must match the first).
// Off sm_100 the peer is dequantize-to-BF16 + cuBLAS BF16, which runs on any GPU; cuBLASLt's MXFP8
// GEMM runs only on cc 10.x and skips with its reason elsewhere. Every suite's name holds "Mxfp8Peer".

std::vector<testing::GemmCase> mxfp8_peer_cases() {
  using E = Mxfp8Element;
  const Mxfp8Types fp32{Mxfp8Output::kFp32, E::kE4M3, E::kE4M3}, bf16{Mxfp8Output::kBf16, E::kE4M3, E::kE4M3};
  const Mxfp8Types e5m2_a{Mxfp8Output::kFp32, E::kE5M2, E::kE4M3}, e5m2_b{Mxfp8Output::kBf16, E::kE4M3, E::kE5M2};
  const Mxfp8Types e5m2_both{Mxfp8Output::kBf16, E::kE5M2, E::kE5M2};
  struct Row {
    int M, N, K, L;
    Mxfp8Types t;
  };
  const Row rows[] = {
      {1, 1, 32, 1, fp32},        // the smallest problem
      {67, 131, 1056, 1, fp32},   // tails in M and N; 33 scale columns, 9 atoms of K
      {67, 131, 1056, 1, bf16},
      {129, 257, 544, 2, bf16},   // one past the 128-row atom; 17 scale columns; L = 2
      {256, 128, 1024, 2, fp32},  // whole atoms; L = 2
      {29, 53, 96, 2, e5m2_a},    // E5M2 A; 3 scale columns (one atom, padded); L = 2
      {17, 13, 160, 1, e5m2_b},   // E5M2 B
      {17, 13, 160, 1, e5m2_both},
  };
  std::vector<testing::GemmCase> cases;
  for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic})
    for (const Row& r : rows) {
      const Shape s = mxfp8_shape(r.M, r.N, r.K, r.L, r.t);
      cases.push_back({"mxfp8_peer_" + case_name(tier, s), s, tier});
    }
  return cases;
}
constexpr Tile kMxfp8PeerTile{128, 128, 128};  // comparisons count mismatches per block of this size

class GpuMxfp8PeerDequant : public ::testing::TestWithParam<testing::GemmCase> {};

TEST_P(GpuMxfp8PeerDequant, MatchesTheKindsComparison) {
  GEMM_REQUIRE_GPU();
  testing::run_case(dequantize_cublas_bf16_mxfp8, GetParam(), kMxfp8PeerTile);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuMxfp8PeerDequant, ::testing::ValuesIn(mxfp8_peer_cases()), testing::case_name);

TEST(GpuMxfp8PeerDequantCOffset, WorksWithAnElementAlignedC) {
  GEMM_REQUIRE_GPU();
  testing::run_case(dequantize_cublas_bf16_mxfp8, KindOf<Mxfp8GemmArgs>::get().element_aligned_c_case(),
                    kMxfp8PeerTile, 1);
}

// The comparison the tests above rely on rejects a peer that decodes the wrong type, reads the other
// operand's scales or writes nothing: the tests can fail.
TEST(GpuMxfp8PeerDequantBroken, EachBrokenCallFailsTheComparison) {
  GEMM_REQUIRE_GPU();
  const Kind& kind = KindOf<Mxfp8GemmArgs>::get();
  const Shape s = mxfp8_shape(67, 131, 1056, 1, {});
  struct Break {
    const char* what;
    void (*mutate)(Mxfp8GemmArgs&);
  };
  const Break breaks[] = {
      {"A decoded as E5M2", [](Mxfp8GemmArgs& a) { a.a_type = Mxfp8Element::kE5M2; }},
      {"A read with B's scales", [](Mxfp8GemmArgs& a) { a.SFA = a.SFB; }},  // B's are larger: in bounds
      {"C not written", [](Mxfp8GemmArgs& a) { a.C = nullptr; }},
  };
  for (const Break& b : breaks) {
    SCOPED_TRACE(b.what);
    const std::unique_ptr<Problem> p = kind.make_problem(s, Tier::kExact, seed_for("mxfp8_peer_broken"));
    const std::unique_ptr<DeviceInputs> in = p->upload();
    DeviceBuffer<uint8_t> C(size_t(kind.output_bytes(s)));
    C.fill_bytes(0xFF);
    Mxfp8GemmArgs args = in->args(0, C.get()).as<Mxfp8GemmArgs>();
    b.mutate(args);
    if (args.C) dequantize_cublas_bf16_mxfp8(args, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<uint8_t> got = C.download();
    EXPECT_FALSE(p->compare(got.data(), kMxfp8PeerTile).ok());
  }
}

TEST(Mxfp8PeerDequantArgs, RejectsInvalidArgumentsBeforeAnyLaunch) {
  testing::expect_rejects_invalid_arguments_cpu(dequantize_cublas_bf16_mxfp8);
}

TEST(GpuMxfp8PeerDequantArgs, RejectsInvalidArgumentsAndWritesNothing) {
  GEMM_REQUIRE_GPU();
  testing::expect_rejects_invalid_arguments_gpu(dequantize_cublas_bf16_mxfp8);
}

// The kind names exactly one peer: cuBLASLt's where it is supported, else the dequantizing one with
// a note that says why.
TEST(Mxfp8PeerWiring, TheKindNamesCublasLtWhereSupportedElseTheDequantizingPeer) {
  std::string note, why;
  const std::vector<Peer> peers = KindOf<Mxfp8GemmArgs>::get().peers(&note);
  ASSERT_EQ(peers.size(), 1u);
  if (cublaslt_mxfp8_supported(&why)) {
    EXPECT_EQ(peers[0].name, kCublasLtMxfp8Name);
    EXPECT_TRUE(peers[0].launch.is(&cublaslt_mxfp8));
  } else {
    EXPECT_EQ(peers[0].name, kDequantCublasBf16Name);
    EXPECT_TRUE(peers[0].launch.is(&dequantize_cublas_bf16_mxfp8));
    EXPECT_NE(note.find(why), std::string::npos) << note;
  }
}

TEST(Mxfp8PeerCublasLt, ReportsUnsupportedWithoutAUsableDevice) {
  if (gpu_info().usable) GTEST_SKIP() << "a GPU is usable here; the GpuMxfp8PeerCublasLt tests cover this machine";
  std::string why;
  EXPECT_FALSE(cublaslt_mxfp8_supported(&why));
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(cublaslt_mxfp8_supported(nullptr));
  // Valid arguments with placeholder device addresses (never dereferenced): the call must refuse
  // before it reaches CUDA, with the same reason.
  const AnyArgs placeholder = KindOf<Mxfp8GemmArgs>::get().placeholder_args();
  try {
    cublaslt_mxfp8(placeholder.as<Mxfp8GemmArgs>(), nullptr);
    ADD_FAILURE() << "cublaslt_mxfp8 returned without a GPU";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(Mxfp8PeerCublasLtArgs, RejectsInvalidArgumentsBeforeAnyLaunch) {
  testing::expect_rejects_invalid_arguments_cpu(cublaslt_mxfp8);
}

TEST(GpuMxfp8PeerCublasLtArgs, RejectsInvalidArgumentsAndWritesNothing) {
  GEMM_REQUIRE_GPU();
  testing::expect_rejects_invalid_arguments_gpu(cublaslt_mxfp8);
}

class GpuMxfp8PeerCublasLt : public ::testing::TestWithParam<testing::GemmCase> {};

TEST_F(GpuMxfp8PeerCublasLt, ReportsUnsupportedCleanlyOffBlackwell) {
  GEMM_REQUIRE_GPU();
  const GpuInfo& g = gpu_info();
  if (g.cc_major == 10)
    GTEST_SKIP() << "compute capability " << g.compute_capability() << ": cuBLASLt MXFP8 is expected here";
  std::string why;
  EXPECT_FALSE(cublaslt_mxfp8_supported(&why));
  EXPECT_NE(why.find(g.compute_capability()), std::string::npos)
      << "the reason does not name the compute capability: " << why;
  const Kind& kind = KindOf<Mxfp8GemmArgs>::get();
  const Shape s = mxfp8_shape(64, 64, 64, 1, {});
  const std::unique_ptr<Problem> p = kind.make_problem(s, Tier::kRealistic, seed_for("cublaslt_mxfp8_unsupported"));
  const std::unique_ptr<DeviceInputs> in = p->upload();
  DeviceBuffer<uint8_t> C(size_t(kind.output_bytes(s)));
  C.fill_bytes(0xFF);
  EXPECT_THROW(cublaslt_mxfp8(in->args(0, C.get()).as<Mxfp8GemmArgs>(), nullptr), std::runtime_error);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(all_bytes(C.download(), 0xFF)) << "an unsupported call wrote to C";
}

TEST_P(GpuMxfp8PeerCublasLt, MatchesTheKindsComparison) {
  GEMM_REQUIRE_GPU();
  std::string why;
  if (!cublaslt_mxfp8_supported(&why)) GTEST_SKIP() << why;
  const testing::GemmCase& c = GetParam();
  const Mxfp8Types t = mxfp8_types(c.shape);
  if (t.a == Mxfp8Element::kE5M2 && t.b == Mxfp8Element::kE5M2) {
    // cuBLAS documents E5M2 x E5M2 as unsupported for its tensor-wide-scaled FP8 GEMMs; if its
    // heuristic refuses the block-scaled one too, say so rather than fail. Any other refusal fails.
    const Kind& kind = KindOf<Mxfp8GemmArgs>::get();
    const std::unique_ptr<Problem> p = kind.make_problem(c.shape, c.tier, seed_for(c.name));
    const std::unique_ptr<DeviceInputs> in = p->upload();
    DeviceBuffer<uint8_t> C(size_t(kind.output_bytes(c.shape)));
    try {
      cublaslt_mxfp8(in->args(0, C.get()).as<Mxfp8GemmArgs>(), nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
    } catch (const std::runtime_error& e) {
      if (std::string(e.what()).find("cuBLASLt offers no MXFP8 (E5M2 x E5M2") == std::string::npos) throw;
      GTEST_SKIP() << e.what();
    }
  }
  testing::run_case(cublaslt_mxfp8, c, kMxfp8PeerTile);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuMxfp8PeerCublasLt, ::testing::ValuesIn(mxfp8_peer_cases()), testing::case_name);

TEST_F(GpuMxfp8PeerCublasLt, WorksWithAnElementAlignedC) {
  GEMM_REQUIRE_GPU();
  std::string why;
  if (!cublaslt_mxfp8_supported(&why)) GTEST_SKIP() << why;
  testing::run_case(cublaslt_mxfp8, KindOf<Mxfp8GemmArgs>::get().element_aligned_c_case(), kMxfp8PeerTile, 1);
}

TEST_F(GpuMxfp8PeerCublasLt, IsCapturableAfterTheFirstCall) {
  GEMM_REQUIRE_GPU();
  std::string why;
  if (!cublaslt_mxfp8_supported(&why)) GTEST_SKIP() << why;
  const Kind& kind = KindOf<Mxfp8GemmArgs>::get();
  const Mxfp8Types bf16{Mxfp8Output::kBf16, Mxfp8Element::kE4M3, Mxfp8Element::kE4M3};
  for (auto [M, N, K, L] : {std::array<int, 4>{256, 256, 512, 2}, {29, 53, 96, 3}}) {
    SCOPED_TRACE(std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + "x" + std::to_string(L));
    const Shape s = mxfp8_shape(M, N, K, L, bf16);
    const std::unique_ptr<Problem> p = kind.make_problem(s, Tier::kRealistic, seed_for("cublaslt_mxfp8_graph"));
    const std::unique_ptr<DeviceInputs> in = p->upload();
    DeviceBuffer<uint16_t> C(size_t(M) * N * L);
    const Mxfp8GemmArgs args = in->args(0, C.get()).as<Mxfp8GemmArgs>();
    expect_capturable(C, [&](cudaStream_t st) { cublaslt_mxfp8(args, st); });
  }
}

TEST(GpuDeviceFill, IsDeterministicInRangeAndNotConstant) {
  GEMM_REQUIRE_GPU();
  DeviceBuffer<float> a(100000), b(100000);
  fill_uniform(a.get(), a.size(), 5, -2.0f, 3.0f);
  fill_uniform(b.get(), b.size(), 5, -2.0f, 3.0f);
  DeviceBuffer<uint8_t> bytes(4096);
  fill_bytes(bytes.get(), bytes.size(), 9, 0x30, 0x40);
  const auto ha = a.download(), hb = b.download();
  EXPECT_EQ(ha, hb);
  std::set<float> distinct(ha.begin(), ha.end());
  EXPECT_GT(distinct.size(), 90000u);
  for (float x : ha) ASSERT_TRUE(x >= -2.0f && x < 3.0f) << x;
  std::set<uint8_t> codes;
  for (uint8_t x : bytes.download()) {
    ASSERT_TRUE(x >= 0x30 && x <= 0x40) << int(x);
    codes.insert(x);
  }
  EXPECT_EQ(codes.size(), 17u);
}

// The timer's flush (common/harness/timing.h): each measurement is one launch between its own events,
// even where graph timing is asked for; the same launches without the flush are replayed in a graph.
TEST(GpuLaunchTimer, FlushTimesEachLaunchWithItsOwnEvents) {
  GEMM_REQUIRE_GPU();
  constexpr size_t kSetBytes = 1 << 20;
  DeviceBuffer<uint8_t> data(4 * kSetBytes);
  const timing::LaunchTimer::Launch launch = [&](int set, cudaStream_t s) {
    CUDA_CHECK(cudaMemsetAsync(data.get() + set * kSetBytes, set, kSetBytes, s));
  };
  timing::LaunchTimer flushed(4, launch, timing::Method::kGraph, true);
  EXPECT_TRUE(flushed.flushing());
  EXPECT_EQ(flushed.launches_per_graph(), 0);
  EXPECT_EQ(flushed.launches_per_measurement(), 1);
  EXPECT_GT(flushed.measure_ms(), 0.0);
  timing::LaunchTimer replayed(4, launch, timing::Method::kGraph, false);
  EXPECT_FALSE(replayed.flushing());
  EXPECT_GT(replayed.launches_per_graph(), 0);
}

TEST(GpuDeviceInfo, ReportsAPlausibleGpu) {
  GEMM_REQUIRE_GPU();
  const GpuInfo& g = gpu_info();
  EXPECT_GT(g.sm_count, 0);
  EXPECT_GT(g.sm_clock_khz, 100000);
  EXPECT_GT(g.l2_bytes, 1 << 20);
  EXPECT_GT(g.fp32_peak_tflops(), 1.0);
  EXPECT_TRUE(g.cc_major == 9 || g.cc_major == 10) << g.compute_capability();
}

}  // namespace
}  // namespace gemm
