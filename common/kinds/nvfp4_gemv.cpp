// The NVFP4 GEMV as a kind (nvfp4_gemv.h has the contract): the NVFP4 GEMM's rules at N = 1, its own
// tails, and what a memory-bound kernel is measured against: the streaming read of the bytes it must
// move (the ceiling), a cuBLAS FP16 GEMV on weights dequantized ahead of time, and cuBLASLt's NVFP4
// GEMM at N = 1 where it exists.
#include "common/kinds/nvfp4_gemv.h"

#include <algorithm>

#include "common/device_info.h"
#include "common/kinds/gemm_family.h"
#include "common/kinds/rules.h"
#include "common/peers.h"
#include "common/sf_layout.h"
#include "common/stream_read.h"

namespace gemm {

void validate_gemv(const Nvfp4GemmArgs& a) {
  if (a.N != 1) rules::reject("Nvfp4GemvArgs", "N", "must be 1", std::to_string(a.N));
  validate(a);
}

double gemv_min_bytes(const Nvfp4GemmArgs& a) {
  const double per_batch = double(a.M) * (a.K / 2) + double(a.M) * (a.K / kSfVector) + a.K / 2 + a.K / kSfVector +
                           2.0 * a.M;
  return per_batch * a.L;
}

namespace {

Nvfp4GemmArgs gemv_args(const Shape& s) { return Nvfp4GemmArgs{s.M, 1, s.K, s.L}; }

// cuBLASLt's NVFP4 GEMM at N = 1, as a launcher of this kind.
void cublaslt_nvfp4_gemv(const Nvfp4GemvArgs& a, cudaStream_t stream) { cublaslt_nvfp4(a, stream); }

// The ceiling: a 16-byte non-allocating read of gemv_min_bytes, `chunks` 16-byte chunks per thread.
TimedWork stream_work(const Shape& s, SetsRule sets_for, int chunks) {
  struct Buffers {
    DeviceBuffer<uint8_t> data;
    DeviceBuffer<uint32_t> sink{1};
  };
  const int64_t per_set = (int64_t(gemv_min_bytes(gemv_args(s))) + 15) / 16 * 16;
  auto b = std::make_shared<Buffers>();
  TimedWork w;
  w.sets = sets_for(double(per_set));
  b->data = DeviceBuffer<uint8_t>(size_t(per_set) * w.sets);
  fill_bytes(b->data.get(), b->data.size(), 7, 0x00, 0xFF);
  CUDA_CHECK(cudaDeviceSynchronize());
  Buffers* raw = b.get();
  w.launch = [raw, per_set, chunks](int i, cudaStream_t st) {
    stream_read(raw->data.get() + size_t(i) * per_set, per_set, raw->sink.get(), chunks, st);
  };
  w.buffers = b;
  return w;
}

// What a user without an NVFP4 GEMV runs: the weights and the vector dequantized to FP16 once per
// input set (not timed), then one cuBLAS FP16 GEMV per launch. It moves 2 bytes per weight where the
// NVFP4 kernel moves 0.5625: own_bytes says how many.
TimedWork fp16_peer_work(const Shape& s, SetsRule sets_for) {
  struct Buffers {
    DeviceBuffer<__half> A, x, C;
  };
  const size_t a_vals = size_t(s.M) * s.K * s.L, x_vals = size_t(s.K) * s.L;
  TimedWork w;
  w.own_bytes = 2.0 * (double(a_vals) + double(x_vals) + double(s.M) * s.L);
  w.sets = sets_for(w.own_bytes);
  family::Nvfp4Inputs<Nvfp4GemvArgs> q(s, 1, family::kBenchAlpha);
  q.fill_random();
  const Nvfp4GemmArgs qa = q.args(0, nullptr).as<Nvfp4GemvArgs>();
  auto b = std::make_shared<Buffers>(Buffers{DeviceBuffer<__half>(a_vals * w.sets), DeviceBuffer<__half>(x_vals * w.sets),
                                             DeviceBuffer<__half>(size_t(s.M) * s.L)});
  for (int i = 0; i < w.sets; ++i) {  // the same weights in every set: only the addresses must differ
    dequantize_fp16(qa.A, qa.SFA, s.M, s.K, s.L, b->A.get() + i * a_vals, nullptr);
    dequantize_fp16(qa.B, qa.SFB, 1, s.K, s.L, b->x.get() + i * x_vals, nullptr);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  Buffers* raw = b.get();
  w.launch = [raw, s, a_vals, x_vals](int i, cudaStream_t st) {
    cublas_fp16_gemv(s.M, s.K, s.L, raw->A.get() + i * a_vals, raw->x.get() + i * x_vals, family::kBenchAlpha,
                     raw->C.get(), st);
  };
  w.buffers = b;
  return w;
}

class Nvfp4GemvKind final : public Kind {
 public:
  const char* name() const override { return "nvfp4_gemv"; }
  const char* title() const override { return "NVFP4 GEMV"; }
  const char* summary() const override {
    return "C = alpha * A * x (M x 1, L batches, FP16), A (M x K) packed E2M1 with one E4M3 scale per 16\n"
           "values in the blocked layout, x the vector (1 x K, the same format): the NVFP4 GEMM at N = 1";
  }
  Merit merit() const override { return Merit::kMemory; }

  void validate(const AnyArgs& a) const override { validate_gemv(a.as<Nvfp4GemvArgs>()); }
  std::string size_rule(char which, long long v) const override {
    if (which == 'n' && v != 1) return "must be 1 for a GEMV (the vector is one column)";
    if (which == 'k' && v % kNvfp4KMultiple != 0)
      return "must be a multiple of 32 for an NVFP4 stage (each row of A is whole 16-byte chunks)";
    return "";
  }
  std::string size_help(char which) const override {
    if (which == 'n') return "1 (a GEMV: the vector is one column)";
    if (which == 'l') return "batches, C[l] = A[l] * B[l]^T: 1 to 65535";
    return which == 'k' ? "1 or more, a multiple of 32 (NVFP4)" : "1 or more";
  }

  // M = 1, odd M, M past 32 and 128 rows, K = 32 and K not a multiple of 64, long K split over warps
  // and clusters, L up to 8, in every tier. The tile is not used: a GEMV's tails are its own.
  std::vector<Case> cases(Tile) const override {
    family::CaseList c;
    for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic}) {
      c.add(tier, 1, 1, 32, 1);        // one row, one 16-byte chunk
      c.add(tier, 2, 1, 64, 1);
      c.add(tier, 3, 1, 96, 1);        // odd M: a group with one row of its pair
      c.add(tier, 31, 1, 992, 1);      // K not a multiple of 64: a half chunk of 32 bytes
      c.add(tier, 33, 1, 1056, 1);     // past 32 rows: the second row of every scale line
      c.add(tier, 97, 1, 2080, 1);     // rows in all four 32-row quarters of a scale tile
      c.add(tier, 127, 1, 4096, 1);
      c.add(tier, 129, 1, 160, 1);     // one past a 128-row block
      c.add(tier, 257, 1, 4128, 1);    // several steps, one chunk past a step of 512 bytes per warp
      c.add(tier, 7, 1, 32, 8);        // L up to 8: batch strides of every operand
      c.add(tier, 67, 1, 1056, 3);
      c.add(tier, 300, 1, 7168, 2);
    }
    // K long enough that several warps and (small M) a cluster of CTAs split it.
    c.add(Tier::kExact, 5, 1, 6976, 1);         // exact tier: any K up to ~7000 stays exact
    c.add(Tier::kRealistic, 257, 1, 16416, 1);  // (the layout tier's sums overflow FP16 at this K)
    c.add(Tier::kRealistic, 1, 1, 65536, 1);    // one row: the widest cluster split
    c.add(Tier::kRealistic, 128, 1, 32768, 2);
    c.add(Tier::kRealistic, 4096, 1, 7168, 2);  // a public shape's M and K
    c.add(Tier::kRealistic, 1000, 1, 2048, 4);
    // Scale bytes with bit 7 set, in A's scales and the vector's (ignored, as by the hardware).
    c.add(Tier::kScaleBit7, 3, 1, 96, 1);
    c.add(Tier::kScaleBit7, 129, 1, 1056, 1);
    c.add(Tier::kScaleBit7, 67, 1, 1056, 3);
    return c.take();
  }
  Case element_aligned_c_case() const override { return family::element_aligned_c_case({67, 1, 96, 2}); }
  // Every rule of the NVFP4 contract, plus N = 2 and N = 64.
  std::vector<BadArgument> bad_arguments() const override {
    auto v = nvfp4::bad_arguments<Nvfp4GemvArgs>();
    v.push_back({"N", [](AnyArgs& a) { a.as<Nvfp4GemvArgs>().N = 2; }, "must be 1"});
    v.push_back({"N", [](AnyArgs& a) { a.as<Nvfp4GemvArgs>().N = 64; }, "must be 1"});
    return v;
  }
  AnyArgs placeholder_args() const override { return nvfp4::placeholder_args<Nvfp4GemvArgs>(1); }
  std::unique_ptr<Problem> make_problem(const Shape& s, Tier tier, uint64_t seed) const override {
    return std::make_unique<family::GemmProblem<HostNvfp4Problem, uint16_t>>(
        make_nvfp4_problem(s.M, s.N, s.K, s.L, tier, seed), tier, &family::Nvfp4Inputs<Nvfp4GemvArgs>::upload);
  }
  const char* describe_inputs(Tier tier) const override { return nvfp4::describe_inputs(tier); }

  int64_t output_bytes(const Shape& s) const override { return 2 * int64_t(s.M) * s.L; }
  int output_element_bytes() const override { return 2; }
  double flops(const Shape& s) const override { return gemm::flops(s.M, 1, s.K, s.L); }
  double min_bytes(const Shape& s) const override { return gemv_min_bytes(gemv_args(s)); }
  std::unique_ptr<DeviceInputs> bench_inputs(const Shape& s, int sets) const override {
    auto in = std::make_unique<family::Nvfp4Inputs<Nvfp4GemvArgs>>(s, sets, family::kBenchAlpha);
    in->fill_random();
    CUDA_CHECK(cudaDeviceSynchronize());
    return in;
  }
  // The public GEMV shapes (M x K x L = 7168 x 16384 x 1, 4096 x 7168 x 8, 7168 x 2048 x 4).
  std::vector<Shape> bench_shapes() const override { return {{7168, 1, 16384, 1}, {4096, 1, 7168, 8}, {7168, 1, 2048, 4}}; }
  Peak peak(bool) const override { return {"none: a GEMV is measured against the streaming read (of_stream)", 0.0}; }
  std::vector<Peer> peers(std::string* note) const override {
    std::string why;
    if (cublaslt_nvfp4_supported(&why)) return {{kCublasLtNvfp4Name, &cublaslt_nvfp4_gemv}};
    if (note) *note = "cuBLASLt NVFP4 unsupported on this GPU: " + why;
    return {};
  }
  std::vector<ExtraRow> extra_rows() const override {
    std::vector<ExtraRow> rows;
    for (int chunks : {1, 2})
      rows.push_back({"stream read, " + std::to_string(chunks) + " chunks per thread", "stream",
                      [chunks](const Shape& s, SetsRule r) { return stream_work(s, r, chunks); }});
    rows.push_back({kCublasFp16GemvName, "peer", &fp16_peer_work});
    return rows;
  }
  // A GEMV is the GEMM at N = 1: a GEMM stage can be its base.
  std::vector<AnyArgs> as_kind(const AnyArgs& args, const Kind& other) const override {
    if (&other == &KindOf<Nvfp4GemmArgs>::get())
      return {AnyArgs(static_cast<const Nvfp4GemmArgs&>(args.as<Nvfp4GemvArgs>()))};
    return Kind::as_kind(args, other);
  }
  double device_bytes(const Shape& s) const override { return nvfp4::device_bytes(s); }
  double host_bytes(const Shape& s) const override { return nvfp4::host_bytes(s); }
};

}  // namespace

const Kind& KindOf<Nvfp4GemvArgs>::get() {
  static const Nvfp4GemvKind kind;
  return kind;
}

}  // namespace gemm
