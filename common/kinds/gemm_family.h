// What the GEMM-shaped kinds (FP32 GEMM, NVFP4 GEMM, NVFP4 GEMV) share in their kind files: the case
// list builder, the bad arguments every GEMM contract has, a problem with a CPU reference, and device
// inputs in sets. Host code only (the kind files include it; kernels never do).
#pragma once

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/device_buffer.h"
#include "common/device_fill.h"
#include "common/gemm_api.h"
#include "common/harness/compare.h"
#include "common/harness/problems.h"
#include "common/reference.h"

namespace gemm::family {

// A case list without repeats.
class CaseList {
 public:
  void add(Tier tier, int M, int N, int K, int L) {
    const Shape s{M, N, K, L};
    const std::string name = case_name(tier, s);
    for (const Case& c : cases_)
      if (c.name == name) return;
    cases_.push_back({name, s, tier});
  }
  std::vector<Case> take() { return std::move(cases_); }

 private:
  std::vector<Case> cases_;
};

// The small exact case the C-offset test runs (C one element past an allocation's start).
inline Case element_aligned_c_case(const Shape& s) { return {"c_offset_" + case_name(Tier::kExact, s), s, Tier::kExact}; }

// The rules every GEMM contract has: sizes, L, the three operands that every kind names A, B, C.
template <class Args>
std::vector<BadArgument> dims_and_pointers() {
  auto m = [](auto f) { return [f](AnyArgs& a) { f(a.as<Args>()); }; };
  return {
      {"M", m([](Args& a) { a.M = 0; })},
      {"N", m([](Args& a) { a.N = 0; })},
      {"K", m([](Args& a) { a.K = 0; })},
      {"M", m([](Args& a) { a.M = -5; })},
      {"L", m([](Args& a) { a.L = 0; })},
      {"L", m([](Args& a) { a.L = kMaxBatch + 1; })},
      {"A", m([](Args& a) { a.A = nullptr; })},
      {"B", m([](Args& a) { a.B = nullptr; })},
      {"C", m([](Args& a) { a.C = nullptr; })},
  };
}

// Mutations that point C into one input (`at`, `bytes` long), each keeping C aligned so that the
// overlap rule, not the alignment rule, must catch it: C at the input's first byte; in its middle;
// with C's first element on the input's last bytes; with C's last element on the input's first
// bytes. Never dereferenced: the call must throw first. The message must name C and the rule; it need
// not name this input, because on a GPU the buffers come from cudaMalloc and C, being larger than the
// inputs, may reach into a neighbouring one that validate() checks first (test_harness.cpp's
// ValidateOverlap tests pin the input's name with addresses they control).
template <class Args, class At, class Bytes>
void add_c_overlaps(std::vector<BadArgument>& v, At at, Bytes bytes) {
  using CPtr = decltype(Args::C);
  constexpr int64_t e = sizeof(*CPtr{});  // bytes per element of C (also C's alignment)
  const auto c_bytes = [](const Args& a) { return e * a.M * a.N * a.L; };
  const auto c_at = [at](const Args& a, int64_t offset) {
    return reinterpret_cast<CPtr>(reinterpret_cast<uintptr_t>(at(a)) + uintptr_t(offset));  // wraps, never UB
  };
  const std::string rule = "must not overlap ";
  auto put = [&](auto offset) {
    v.push_back({"C", [=](AnyArgs& any) { Args& a = any.as<Args>(); a.C = c_at(a, offset(a)); }, rule});
  };
  put([](const Args&) { return int64_t(0); });
  put([bytes](const Args& a) { return int64_t(bytes(a)) / 2 / e * e; });
  put([bytes](const Args& a) { return int64_t(bytes(a)) - e; });
  put([c_bytes](const Args& a) { return e - c_bytes(a); });
}

// A problem of a GEMM-shaped kind: host data (HostFp32Problem or HostNvfp4Problem), its reference,
// and how to upload it. Out is the element type of C as the kernel writes it (float, or the bits of
// an FP16).
template <class Host, class Out>
class GemmProblem final : public Problem {
 public:
  using Upload = std::unique_ptr<DeviceInputs> (*)(const Host&);
  GemmProblem(Host host, Tier tier, Upload upload) : host_(std::move(host)), tier_(tier), upload_(upload) {}

  std::unique_ptr<DeviceInputs> upload() const override { return upload_(host_); }

  CompareResult compare(const void* got, Tile tile) const override {
    if (!reference_) reference_ = reference_gemm(host_.host_args());
    const std::vector<Out> g = elements(got, size_t(int64_t(host_.M) * host_.N * host_.L));
    const CompareShape s{host_.M, host_.N, host_.K, host_.L, tile.m, tile.n};
    if constexpr (std::is_same_v<Out, float>) return compare_fp32(g, *reference_, s, tier_);
    else return compare_fp16(g, *reference_, s, tier_);
  }

  CompareResult compare_spots(const void* got, int random_count, uint64_t seed) const override {
    SpotSet spots = spot_positions(host_.M, host_.N, host_.L, random_count, seed);
    for (size_t i = 0; i < spots.l.size(); ++i) {
      double abs_sum = 0;
      spots.want.push_back(reference_at(host_.host_args(), spots.l[i], spots.m[i], spots.n[i], &abs_sum));
      spots.abs_sum.push_back(abs_sum);
    }
    const std::vector<Out> g = elements(got, size_t(int64_t(host_.M) * host_.N * host_.L));
    const CompareShape s{host_.M, host_.N, host_.K, host_.L};
    if constexpr (std::is_same_v<Out, float>) return compare_spots_fp32(g, spots, s);
    else return compare_spots_fp16(g, spots, s);
  }

 private:
  static std::vector<Out> elements(const void* p, size_t n) {
    std::vector<Out> v(n);
    std::memcpy(v.data(), p, n * sizeof(Out));
    return v;
  }
  Host host_;
  Tier tier_;
  Upload upload_;
  mutable std::optional<ReferenceOutput> reference_;
};

// FP32 operands on the device, in `sets` copies back to back.
class Fp32Inputs final : public DeviceInputs {
 public:
  Fp32Inputs(const Shape& s, int sets) : s_(s), sets_(sets), A_(a_count() * sets), B_(b_count() * sets) {}
  int sets() const override { return sets_; }
  AnyArgs args(int i, void* C) const override {
    return AnyArgs(Fp32GemmArgs{s_.M, s_.N, s_.K, s_.L, A_.get() + size_t(i) * a_count(),
                                B_.get() + size_t(i) * b_count(), static_cast<float*>(C)});
  }
  size_t a_count() const { return size_t(s_.M) * s_.K * s_.L; }
  size_t b_count() const { return size_t(s_.N) * s_.K * s_.L; }
  DeviceBuffer<float>& A() { return A_; }
  DeviceBuffer<float>& B() { return B_; }

 private:
  Shape s_;
  int sets_;
  DeviceBuffer<float> A_, B_;
};

// NVFP4 operands (payload and blocked scales of A and B) on the device, in `sets` copies; `Args` is
// the kind's struct (Nvfp4GemmArgs, or Nvfp4GemvArgs for the GEMV, the same fields).
template <class Args>
class Nvfp4Inputs final : public DeviceInputs {
 public:
  Nvfp4Inputs(const Shape& s, int sets, float alpha)
      : s_(s), sets_(sets), alpha_(alpha),
        a_(size_t(packed_bytes(s.M, s.K, s.L))), b_(size_t(packed_bytes(s.N, s.K, s.L))),
        sfa_(size_t(sf_bytes(s.M, s.K, s.L))), sfb_(size_t(sf_bytes(s.N, s.K, s.L))),
        A_(a_ * sets), SFA_(sfa_ * sets), B_(b_ * sets), SFB_(sfb_ * sets) {}
  int sets() const override { return sets_; }
  AnyArgs args(int i, void* C) const override {
    Args a;
    static_cast<Nvfp4GemmArgs&>(a) = Nvfp4GemmArgs{s_.M, s_.N, s_.K, s_.L, A_.get() + i * a_, SFA_.get() + i * sfa_,
                                                   B_.get() + i * b_, SFB_.get() + i * sfb_, alpha_,
                                                   static_cast<__half*>(C)};
    return AnyArgs(a);
  }
  // One set from a host problem.
  static std::unique_ptr<DeviceInputs> upload(const HostNvfp4Problem& p) {
    auto in = std::make_unique<Nvfp4Inputs>(Shape{p.M, p.N, p.K, p.L}, 1, p.alpha);
    in->A_.upload(p.a.data);
    in->SFA_.upload(p.a.sf);
    in->B_.upload(p.b.data);
    in->SFB_.upload(p.b.sf);
    return in;
  }
  // Random E2M1 codes (every byte pattern) and scales 0.5 .. 2, for timing.
  void fill_random() {
    fill_bytes(A_.get(), A_.size(), 3, 0x00, 0xFF);
    fill_bytes(B_.get(), B_.size(), 4, 0x00, 0xFF);
    fill_bytes(SFA_.get(), SFA_.size(), 5, 0x30, 0x40);  // E4M3 codes of 0.5 .. 2
    fill_bytes(SFB_.get(), SFB_.size(), 6, 0x30, 0x40);
  }

 private:
  Shape s_;
  int sets_;
  float alpha_;
  size_t a_, b_, sfa_, sfb_;  // bytes per set
  DeviceBuffer<uint8_t> A_, SFA_, B_, SFB_;
};

// Random E2M1 codes (|x| <= 6) and scales in 0.5..2 give dot products up to about 24^2 K; this alpha
// keeps the FP16 outputs finite for every benchmarked K (timing does not depend on it).
inline constexpr float kBenchAlpha = 0.01f;

}  // namespace gemm::family

// What the two NVFP4 kinds (the GEMM and the GEMV, whose structs have the same fields) share; defined
// in nvfp4_gemm.cpp.
namespace gemm::nvfp4 {
template <class Args>
std::vector<BadArgument> bad_arguments();  // every rule of the NVFP4 contract broken once
template <class Args>
AnyArgs placeholder_args(int N);
const char* describe_inputs(Tier tier);
double device_bytes(const Shape& s);
double host_bytes(const Shape& s);
// K's rule for every kind whose A and B are NVFP4 (the GEMM, the GEMV, the SVDQuant GEMM): a multiple
// of 32, whole 16-byte chunks per row. "" where v obeys it (and for M and N, which have none here).
std::string k_size_rule(char which, long long v);
}  // namespace gemm::nvfp4
