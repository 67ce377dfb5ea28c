// The FP32 GEMM as a kind (fp32_gemm.h has the contract): its rules, test cases, bad arguments,
// problems, benchmark inputs, peak and peer.
#include "common/kinds/fp32_gemm.h"

#include "common/device_info.h"
#include "common/kinds/gemm_family.h"
#include "common/kinds/rules.h"
#include "common/peers.h"

namespace gemm {

void validate(const Fp32GemmArgs& a) {
  const char* api = "Fp32GemmArgs";
  rules::check_dims(api, a.M, a.N, a.K, a.L);
  rules::check_pointer(api, "A", a.A, alignof(float));
  rules::check_pointer(api, "B", a.B, alignof(float));
  rules::check_pointer(api, "C", a.C, alignof(float));
  // Sizes in bytes; check_dims bounds each element count below 2^46, so none overflows.
  const rules::ByteRange c = rules::range_of(a.C, 4 * int64_t(a.M) * a.N * a.L);
  rules::check_c_disjoint(api, c, "A", rules::range_of(a.A, 4 * int64_t(a.M) * a.K * a.L));
  rules::check_c_disjoint(api, c, "B", rules::range_of(a.B, 4 * int64_t(a.N) * a.K * a.L));
}

double min_bytes(const Fp32GemmArgs& a) { return 4.0 * a.L * (double(a.M) * a.K + double(a.N) * a.K + double(a.M) * a.N); }

namespace {

std::unique_ptr<DeviceInputs> upload(const HostFp32Problem& p) {
  auto in = std::make_unique<family::Fp32Inputs>(Shape{p.M, p.N, p.K, p.L}, 1);
  in->A().upload(p.A);
  in->B().upload(p.B);
  return in;
}

class Fp32GemmKind final : public Kind {
 public:
  const char* name() const override { return "fp32_gemm"; }
  const char* title() const override { return "FP32 GEMM"; }
  const char* summary() const override {
    return "C = A * B^T (M x N, L batches), A (M x K) and B (N x K) K-major, FP32 in and out";
  }

  void validate(const AnyArgs& a) const override { gemm::validate(a.as<Fp32GemmArgs>()); }
  std::string size_rule(char, long long) const override { return ""; }
  std::string size_help(char which) const override {
    return which == 'l' ? "batches, C[l] = A[l] * B[l]^T: 1 to 65535" : "1 or more";
  }

  // Tails (1, primes, one past a tile), aligned sizes, K from tiny to long, L > 1, in both tiers.
  std::vector<Case> cases(Tile t) const override {
    family::CaseList c;
    for (Tier tier : {Tier::kExact, Tier::kRealistic}) {
      c.add(tier, 1, 1, 1, 1);
      c.add(tier, 1, 37, 19, 1);
      c.add(tier, 31, 1, 5, 1);
      c.add(tier, 17, 13, 31, 1);
      c.add(tier, t.m + 1, t.n + 1, t.k + 1, 1);
      c.add(tier, 2 * t.m - 1, 2 * t.n - 1, 2 * t.k - 1, 1);
      c.add(tier, 128, 128, 128, 1);
      c.add(tier, 256, 192, 320, 1);
      c.add(tier, 67, 131, 1031, 1);  // long K, primes
      c.add(tier, 29, 53, 97, 3);     // L > 1
      c.add(tier, 2 * t.m, 2 * t.n, 4 * t.k, 2);
    }
    c.add(Tier::kRealistic, 509, 1021, 257, 1);
    c.add(Tier::kRealistic, 1024, 1024, 1024, 1);
    return c.take();
  }
  Case element_aligned_c_case() const override { return family::element_aligned_c_case({67, 48, 96, 2}); }

  std::vector<BadArgument> bad_arguments() const override {
    using F = Fp32GemmArgs;
    auto v = family::dims_and_pointers<F>();
    v.push_back({"A", [](AnyArgs& a) {
                   F& f = a.as<F>();
                   f.A = reinterpret_cast<const float*>(reinterpret_cast<const char*>(f.A) + 2);
                 }});
    family::add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.A; },
                              [](const F& a) { return 4 * int64_t(a.M) * a.K * a.L; });
    family::add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.B; },
                              [](const F& a) { return 4 * int64_t(a.N) * a.K * a.L; });
    return v;
  }
  AnyArgs placeholder_args() const override {
    return AnyArgs(Fp32GemmArgs{64, 64, 64, 1, reinterpret_cast<const float*>(0x10000),
                                reinterpret_cast<const float*>(0x20000), reinterpret_cast<float*>(0x30000)});
  }
  std::unique_ptr<Problem> make_problem(const Shape& s, Tier tier, uint64_t seed) const override {
    return std::make_unique<family::GemmProblem<HostFp32Problem, float>>(make_fp32_problem(s.M, s.N, s.K, s.L, tier, seed),
                                                                        tier, &upload);
  }
  const char* describe_inputs(Tier tier) const override {
    return tier == Tier::kExact ? "small integers in [-4, 4]: every sum exact in FP32"
                                : "realistic normal(0,1) data with outliers (1 in 64 x 16)";
  }

  int64_t output_bytes(const Shape& s) const override { return 4 * int64_t(s.M) * s.N * s.L; }
  int output_element_bytes() const override { return 4; }
  double flops(const Shape& s) const override { return gemm::flops(s.M, s.N, s.K, s.L); }
  double min_bytes(const Shape& s) const override { return gemm::min_bytes(Fp32GemmArgs{s.M, s.N, s.K, s.L}); }
  std::unique_ptr<DeviceInputs> bench_inputs(const Shape& s, int sets) const override {
    auto in = std::make_unique<family::Fp32Inputs>(s, sets);
    fill_uniform(in->A().get(), in->A().size(), 1, -1.0f, 1.0f);
    fill_uniform(in->B().get(), in->B().size(), 2, -1.0f, 1.0f);
    CUDA_CHECK(cudaDeviceSynchronize());
    return in;
  }
  std::vector<Shape> bench_shapes() const override {
    return {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}};
  }
  Peak peak(bool) const override {
    return {"FP32 CUDA-core FMA peak at the max SM clock", gpu_info().fp32_peak_tflops()};
  }
  std::vector<Peer> peers(std::string*) const override { return {{kCublasSgemmName, &cublas_sgemm}}; }
  double device_bytes(const Shape& s) const override {
    return 4.0 * s.L * (double(s.M) * s.K + double(s.N) * s.K + double(s.M) * s.N);
  }
  double host_bytes(const Shape& s) const override { return device_bytes(s); }
};

}  // namespace

const Kind& KindOf<Fp32GemmArgs>::get() {
  static const Fp32GemmKind kind;
  return kind;
}

}  // namespace gemm
