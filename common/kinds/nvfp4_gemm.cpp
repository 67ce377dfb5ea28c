// The NVFP4 GEMM as a kind (nvfp4_gemm.h has the contract): its rules, test cases, bad arguments,
// problems, benchmark inputs, peaks and peers.
#include "common/kinds/nvfp4_gemm.h"

#include <cmath>

#include "common/device_info.h"
#include "common/kinds/gemm_family.h"
#include "common/kinds/rules.h"
#include "common/peers.h"
#include "common/sf_layout.h"

namespace gemm {

void validate(const Nvfp4GemmArgs& a) {
  const char* api = "Nvfp4GemmArgs";
  rules::check_dims(api, a.M, a.N, a.K, a.L);
  if (a.K % kNvfp4KMultiple != 0) rules::reject(api, "K", "must be a multiple of 32", std::to_string(a.K));
  rules::check_pointer(api, "A", a.A, 16);
  rules::check_pointer(api, "SFA", a.SFA, 16);
  rules::check_pointer(api, "B", a.B, 16);
  rules::check_pointer(api, "SFB", a.SFB, 16);
  rules::check_pointer(api, "C", a.C, alignof(__half));
  if (!std::isfinite(a.alpha)) rules::reject(api, "alpha", "must be finite", std::to_string(a.alpha));
  // Sizes in bytes; check_dims bounds each element count below 2^46, so none overflows.
  const rules::ByteRange c = rules::range_of(a.C, 2 * int64_t(a.M) * a.N * a.L);
  rules::check_c_disjoint(api, c, "A", rules::range_of(a.A, packed_bytes(a.M, a.K, a.L)));
  rules::check_c_disjoint(api, c, "SFA", rules::range_of(a.SFA, sf_bytes(a.M, a.K, a.L)));
  rules::check_c_disjoint(api, c, "B", rules::range_of(a.B, packed_bytes(a.N, a.K, a.L)));
  rules::check_c_disjoint(api, c, "SFB", rules::range_of(a.SFB, sf_bytes(a.N, a.K, a.L)));
}

int64_t packed_bytes(int64_t rows, int64_t K, int64_t L) { return rows * (K / 2) * L; }
int64_t sf_bytes(int64_t rows, int64_t K, int64_t L) { return sf_batch_bytes(rows, K) * L; }

double min_bytes(const Nvfp4GemmArgs& a) {
  return double(packed_bytes(a.M, a.K, a.L) + packed_bytes(a.N, a.K, a.L) + sf_bytes(a.M, a.K, a.L) +
                sf_bytes(a.N, a.K, a.L)) +
         2.0 * a.L * double(a.M) * a.N;
}

namespace nvfp4 {

// Every rule of the NVFP4 contract broken once (shared with the GEMV's kind, whose struct has the
// same fields).
template <class Args>
std::vector<BadArgument> bad_arguments() {
  using F = Args;
  auto m = [](auto f) { return [f](AnyArgs& a) { f(a.as<F>()); }; };
  auto v = family::dims_and_pointers<F>();
  v.push_back({"K", m([](F& a) { a.K = 48; })});  // a multiple of 16 but not of 32
  v.push_back({"K", m([](F& a) { a.K = 31; })});
  v.push_back({"SFA", m([](F& a) { a.SFA = nullptr; })});
  v.push_back({"SFB", m([](F& a) { a.SFB = nullptr; })});
  v.push_back({"A", m([](F& a) { a.A += 8; })});  // not 16-byte aligned
  v.push_back({"SFB", m([](F& a) { a.SFB += 4; })});
  v.push_back({"alpha", m([](F& a) { a.alpha = NAN; })});
  v.push_back({"alpha", m([](F& a) { a.alpha = INFINITY; })});
  family::add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.A; },
                            [](const F& a) { return packed_bytes(a.M, a.K, a.L); });
  family::add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.SFA; },
                            [](const F& a) { return sf_bytes(a.M, a.K, a.L); });
  family::add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.B; },
                            [](const F& a) { return packed_bytes(a.N, a.K, a.L); });
  family::add_c_overlaps<F>(v, [](const F& a) -> const void* { return a.SFB; },
                            [](const F& a) { return sf_bytes(a.N, a.K, a.L); });
  return v;
}
template std::vector<BadArgument> bad_arguments<Nvfp4GemmArgs>();
template std::vector<BadArgument> bad_arguments<Nvfp4GemvArgs>();

template <class Args>
AnyArgs placeholder_args(int N) {
  Args a;
  static_cast<Nvfp4GemmArgs&>(a) = Nvfp4GemmArgs{64, N, 64, 1,
                                                 reinterpret_cast<const uint8_t*>(0x10000),
                                                 reinterpret_cast<const uint8_t*>(0x20000),
                                                 reinterpret_cast<const uint8_t*>(0x30000),
                                                 reinterpret_cast<const uint8_t*>(0x40000),
                                                 1.0f,
                                                 reinterpret_cast<__half*>(0x50000)};
  return AnyArgs(a);
}
template AnyArgs placeholder_args<Nvfp4GemmArgs>(int);
template AnyArgs placeholder_args<Nvfp4GemvArgs>(int);

const char* describe_inputs(Tier tier) {
  switch (tier) {
    case Tier::kExact: return "every E2M1 byte pattern with power-of-two scales: every sum exact in FP32";
    case Tier::kLayout: return "40 scale codes per block, signs by nibble position: layout errors change every output";
    case Tier::kScaleBit7: return "the exact tier with bit 7 set in half of the scale bytes (ignored, as by the hardware)";
    case Tier::kRealistic: break;
  }
  return "realistic normal(0,1) data with outliers, quantized to NVFP4 on the CPU";
}

// Device inputs and host memory of a problem: the packed operands and their scales, C; on the host
// also the FP32 data NVFP4 is quantized from.
double device_bytes(const Shape& s) {
  const double mk = double(s.M) * s.K * s.L, nk = double(s.N) * s.K * s.L, mn = double(s.M) * s.N * s.L;
  return 0.5625 * (mk + nk) + 2 * mn;
}
double host_bytes(const Shape& s) { return device_bytes(s) + 4.0 * s.L * (double(s.M) + s.N) * s.K; }
std::string k_size_rule(char which, long long v) {
  if (which == 'k' && v % kNvfp4KMultiple != 0)
    return "must be a multiple of 32 for an NVFP4 stage (each row of A and B is whole 16-byte chunks)";
  return "";
}

}  // namespace nvfp4

namespace {

class Nvfp4GemmKind final : public Kind {
 public:
  const char* name() const override { return "nvfp4_gemm"; }
  const char* title() const override { return "NVFP4 GEMM"; }
  const char* summary() const override {
    return "C = alpha * A * B^T (M x N, L batches, FP16), A (M x K) and B (N x K) K-major packed E2M1 with\n"
           "one E4M3 scale per 16 values in the blocked layout, alpha the per-tensor FP32 factor";
  }

  void validate(const AnyArgs& a) const override { gemm::validate(a.as<Nvfp4GemmArgs>()); }
  std::string size_rule(char which, long long v) const override { return nvfp4::k_size_rule(which, v); }
  std::string size_help(char which) const override {
    if (which == 'l') return "batches, C[l] = A[l] * B[l]^T: 1 to 65535";
    return which == 'k' ? "1 or more, a multiple of 32 (NVFP4)" : "1 or more";
  }

  // As the FP32 GEMM's, with K a multiple of 32, the layout tier, and scale bytes with bit 7 set.
  std::vector<Case> cases(Tile t) const override {
    family::CaseList c;
    const int k_tail = (t.k + 32) / 32 * 32;  // smallest multiple of 32 above the tile's K
    for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic}) {
      c.add(tier, 1, 1, 32, 1);
      c.add(tier, 1, 37, 64, 1);
      c.add(tier, 31, 1, 96, 1);
      c.add(tier, 17, 13, 160, 1);
      c.add(tier, t.m + 1, t.n + 1, k_tail, 1);
      c.add(tier, 2 * t.m - 1, 2 * t.n - 1, 2 * k_tail, 1);
      c.add(tier, 128, 128, 256, 1);
      c.add(tier, 129, 257, 544, 1);  // one past the 128-row scale tile; K not a multiple of 64
      c.add(tier, 67, 131, 1056, 1);
      c.add(tier, 29, 53, 96, 3);
      c.add(tier, 2 * t.m, 2 * t.n, 4 * k_tail, 2);
    }
    c.add(Tier::kRealistic, 509, 1021, 2048, 1);
    c.add(Tier::kRealistic, 1024, 1024, 1024, 1);
    // Scale bytes with bit 7 set, which the hardware ignores: a tail, a K past one tile, L > 1.
    c.add(Tier::kScaleBit7, 17, 13, 160, 1);
    c.add(Tier::kScaleBit7, t.m + 1, t.n + 1, 2 * k_tail, 1);
    c.add(Tier::kScaleBit7, 29, 53, 96, 3);
    return c.take();
  }
  Case element_aligned_c_case() const override { return family::element_aligned_c_case({67, 48, 96, 2}); }
  std::vector<BadArgument> bad_arguments() const override { return nvfp4::bad_arguments<Nvfp4GemmArgs>(); }
  AnyArgs placeholder_args() const override { return nvfp4::placeholder_args<Nvfp4GemmArgs>(64); }
  std::unique_ptr<Problem> make_problem(const Shape& s, Tier tier, uint64_t seed) const override {
    return std::make_unique<family::GemmProblem<HostNvfp4Problem, uint16_t>>(
        make_nvfp4_problem(s.M, s.N, s.K, s.L, tier, seed), tier, &family::Nvfp4Inputs<Nvfp4GemmArgs>::upload);
  }
  const char* describe_inputs(Tier tier) const override { return nvfp4::describe_inputs(tier); }

  int64_t output_bytes(const Shape& s) const override { return 2 * int64_t(s.M) * s.N * s.L; }
  int output_element_bytes() const override { return 2; }
  double flops(const Shape& s) const override { return gemm::flops(s.M, s.N, s.K, s.L); }
  double min_bytes(const Shape& s) const override { return gemm::min_bytes(Nvfp4GemmArgs{s.M, s.N, s.K, s.L}); }
  std::unique_ptr<DeviceInputs> bench_inputs(const Shape& s, int sets) const override {
    auto in = std::make_unique<family::Nvfp4Inputs<Nvfp4GemmArgs>>(s, sets, family::kBenchAlpha);
    in->fill_random();
    CUDA_CHECK(cudaDeviceSynchronize());
    return in;
  }
  // The M = 128 shapes of a decode-like workload, then the squares.
  std::vector<Shape> bench_shapes() const override {
    std::vector<Shape> v = {{128, 7168, 16384}, {128, 4096, 7168}, {128, 7168, 2048}};
    for (int s : {1024, 2048, 4096, 8192}) v.push_back({s, s, s});
    return v;
  }
  // The CUDA-core stages (03, 04) against the FP32 FMA peak; the tcgen05 stages against the dense
  // NVFP4 tensor-core peak on an sm_100 GPU, and against nothing where tcgen05 is emulated.
  Peak peak(bool uses_tcgen05) const override {
    const GpuInfo& g = gpu_info();
    if (!uses_tcgen05) return {"FP32 CUDA-core FMA peak at the max SM clock", g.fp32_peak_tflops()};
    if (g.tcgen05_native())
      return {"dense NVFP4 tensor-core peak at the max SM clock (assumed 32768 FLOP/clk/SM; see "
              "GpuInfo::nvfp4_dense_peak_tflops)",
              g.nvfp4_dense_peak_tflops()};
    return {"none: tcgen05 runs emulated, so there is no peak fraction", 0.0};
  }
  // On sm_100-class GPUs cuBLASLt's own NVFP4 GEMM; elsewhere (Hopper) what a user can run there:
  // dequantize to BF16, then cuBLAS BF16.
  std::vector<Peer> peers(std::string* note) const override {
    std::string why;
    if (cublaslt_nvfp4_supported(&why)) return {{kCublasLtNvfp4Name, &cublaslt_nvfp4}};
    if (note) *note = "cuBLASLt NVFP4 unsupported on this GPU: " + why + "; peer is dequantize-to-BF16 + cuBLAS BF16";
    return {{kDequantCublasBf16Name, &dequantize_cublas_bf16_launcher}};
  }
  double device_bytes(const Shape& s) const override { return nvfp4::device_bytes(s); }
  double host_bytes(const Shape& s) const override { return nvfp4::host_bytes(s); }
};

}  // namespace

const Kind& KindOf<Nvfp4GemmArgs>::get() {
  static const Nvfp4GemmKind kind;
  return kind;
}

}  // namespace gemm
