// The NVFP4 group GEMM as a kind (nvfp4_group_gemm.h has the contract): its rules, the MoE table,
// test cases, problems, benchmark inputs, peak and peers.
//
// A Shape of this kind carries its groups in `extra`, three integers per group,
//
//   extra = [M_0, N_0, K_0, M_1, N_1, K_1, ...]
//
// with M = the sum of the M_g, N = the largest N_g, K = the largest K_g and L = 1 (what the harness
// prints, counts and checks against the size rules), and `name` a short label ("gpumode_q1",
// "mixed_nk"), because the numbers of a few dozen groups make no usable name. group_shape() builds
// one, group_sizes() reads it back. A Shape without extra (a stage program's --m --n --k --l) means
// L groups of N x K sharing the M rows unevenly (spread_shape).
//
// In memory, a problem's groups lie back to back: one device buffer per operand, each group's region
// on a 256-byte boundary, and every C_g inside the one C the harness gives, its start rounded up to 8
// elements (16 bytes). The elements between two groups' C are written by no correct kernel: the tests
// poison C, and the comparison checks that the gaps are still poisoned.
#include "common/kinds/nvfp4_group_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>

#include "common/kinds/gemm_family.h"
#include "common/kinds/rules.h"
#include "common/peers.h"
#include "common/sf_layout.h"

namespace gemm {
namespace {

constexpr const char* kApi = "Nvfp4GroupGemmArgs";

std::string group_arg(int64_t g, const char* field) { return "groups[" + std::to_string(g) + "]." + field; }

Nvfp4GemmArgs gemm_args(const Nvfp4Group& g) { return {g.M, g.N, g.K, 1, g.A, g.SFA, g.B, g.SFB, g.alpha, g.C}; }

// One operand of one group, for the overlap sweep.
struct Operand {
  rules::ByteRange range;
  uintptr_t end;
  int64_t group;
  const char* field;
  bool is_c;
};

std::string operand_name(const Operand& o) { return group_arg(o.group, o.field); }

[[noreturn]] void reject_overlap(const Operand& c, const Operand& other) {
  const std::string cn = operand_name(c), on = operand_name(other);
  rules::reject(kApi, cn.c_str(), "must not overlap " + on,
                cn + " in " + rules::hex_range(c.range) + ", " + on + " in " + rules::hex_range(other.range));
}

// Every C against every input and every other C, in O(G log G): in order of their first byte, an
// operand overlaps an earlier one exactly when it begins before the furthest end seen so far, so
// keeping the input and the C with the furthest end is enough to find an overlap where one exists.
// Of two overlapping C ranges, the group with the higher index is named first.
void check_outputs_disjoint(std::vector<Operand>& ops) {
  std::sort(ops.begin(), ops.end(), [](const Operand& x, const Operand& y) { return x.range.begin < y.range.begin; });
  const Operand* input = nullptr;
  const Operand* c = nullptr;
  for (const Operand& o : ops) {
    if (o.is_c) {
      if (input && input->end > o.range.begin) reject_overlap(o, *input);
      if (c && c->end > o.range.begin) o.group > c->group ? reject_overlap(o, *c) : reject_overlap(*c, o);
    } else if (c && c->end > o.range.begin) {
      reject_overlap(*c, o);
    }
    const Operand*& furthest = o.is_c ? c : input;
    if (!furthest || o.end > furthest->end) furthest = &o;
  }
}

}  // namespace

void validate(const Nvfp4GroupGemmArgs& a) {
  const int64_t G = int64_t(a.groups.size());
  if (G < 1 || G > kMaxGroups)
    rules::reject(kApi, "G", "must be in [1, " + std::to_string(kMaxGroups) + "]", std::to_string(G));
  std::vector<Operand> ops;
  ops.reserve(size_t(5 * G));
  auto add = [&](int64_t g, const char* field, const void* p, int64_t bytes, bool is_c) {
    if (bytes <= 0) return;  // an empty range overlaps nothing
    const rules::ByteRange r = rules::range_of(p, bytes);
    ops.push_back({r, rules::end_of(r), g, field, is_c});
  };
  for (int64_t g = 0; g < G; ++g) {
    const Nvfp4Group& x = a.groups[size_t(g)];
    auto arg = [g](const char* field) { return group_arg(g, field); };
    if (x.M < 0) rules::reject(kApi, arg("M").c_str(), "must be >= 0", std::to_string(x.M));
    if (x.N < 1) rules::reject(kApi, arg("N").c_str(), "must be >= 1", std::to_string(x.N));
    if (x.K < 1) rules::reject(kApi, arg("K").c_str(), "must be >= 1", std::to_string(x.K));
    if (x.K % kNvfp4KMultiple != 0) rules::reject(kApi, arg("K").c_str(), "must be a multiple of 32", std::to_string(x.K));
    // Element counts are formed in 64 bits everywhere; keep them far from overflow.
    if (double(x.M) * x.K > rules::kElementLimit || double(x.N) * x.K > rules::kElementLimit ||
        double(x.M) * x.N > rules::kElementLimit)
      rules::reject(kApi, arg("M*K, N*K and M*N").c_str(), "must each be below 2^46", "a larger problem");
    // A group without rows reads no A and writes no C: those pointers may be anything, null included.
    if (x.M > 0) {
      rules::check_pointer(kApi, arg("A").c_str(), x.A, 16);
      rules::check_pointer(kApi, arg("SFA").c_str(), x.SFA, 16);
    }
    rules::check_pointer(kApi, arg("B").c_str(), x.B, 16);
    rules::check_pointer(kApi, arg("SFB").c_str(), x.SFB, 16);
    if (x.M > 0) rules::check_pointer(kApi, arg("C").c_str(), x.C, alignof(__half));
    if (!std::isfinite(x.alpha)) rules::reject(kApi, arg("alpha").c_str(), "must be finite", std::to_string(x.alpha));
    add(g, "A", x.A, packed_bytes(x.M, x.K, 1), false);
    add(g, "SFA", x.SFA, sf_bytes(x.M, x.K, 1), false);
    add(g, "B", x.B, packed_bytes(x.N, x.K, 1), false);
    add(g, "SFB", x.SFB, sf_bytes(x.N, x.K, 1), false);
    add(g, "C", x.C, 2 * int64_t(x.M) * x.N, true);
  }
  check_outputs_disjoint(ops);
}

double min_bytes(const Nvfp4GroupGemmArgs& a) {
  std::vector<std::pair<uintptr_t, uintptr_t>> in;
  double c = 0;
  for (const Nvfp4Group& g : a.groups) {
    if (g.M < 1) continue;
    auto add = [&](const void* p, int64_t bytes) {
      const rules::ByteRange r = rules::range_of(p, bytes);
      in.emplace_back(r.begin, rules::end_of(r));
    };
    add(g.A, packed_bytes(g.M, g.K, 1));
    add(g.SFA, sf_bytes(g.M, g.K, 1));
    add(g.B, packed_bytes(g.N, g.K, 1));
    add(g.SFB, sf_bytes(g.N, g.K, 1));
    c += 2.0 * g.M * g.N;
  }
  // The union of the input ranges: bytes two groups share are read once.
  std::sort(in.begin(), in.end());
  double bytes = 0;
  uintptr_t covered = 0;  // the end of the union so far
  for (const auto& [b, e] : in) {
    const uintptr_t from = std::max(b, covered);
    if (e > from) bytes += double(e - from);
    covered = std::max(covered, e);
  }
  return bytes + c;
}

double flops(const Nvfp4GroupGemmArgs& a) {
  double f = 0;
  for (const Nvfp4Group& g : a.groups) f += gemm::flops(g.M, g.N, g.K, 1);
  return f;
}

int64_t moe_sfa_offset(const int* row_offsets, int e, int K) {
  int64_t at = 0;
  for (int i = 0; i < e; ++i) at += sf_batch_bytes(row_offsets[i + 1] - row_offsets[i], K);
  return at;
}

Nvfp4GroupGemmArgs moe_groups(const MoeLayout& moe) {
  if (moe.experts < 1)
    throw std::invalid_argument("MoeLayout: experts must be >= 1 (got " + std::to_string(moe.experts) + ")");
  if (!moe.row_offsets) throw std::invalid_argument("MoeLayout: row_offsets must not be null (got nullptr)");
  const int* off = moe.row_offsets;
  if (off[0] != 0)
    throw std::invalid_argument("MoeLayout: row_offsets must start at 0 and never decrease (row_offsets[0] = " +
                                std::to_string(off[0]) + ")");
  for (int e = 1; e <= moe.experts; ++e)
    if (off[e] < off[e - 1])
      throw std::invalid_argument("MoeLayout: row_offsets must start at 0 and never decrease (row_offsets[" +
                                  std::to_string(e) + "] = " + std::to_string(off[e]) + " after " +
                                  std::to_string(off[e - 1]) + ")");
  // Addresses are formed as integers: a table with bad sizes is validated at launch, never
  // dereferenced here, and must not be undefined behaviour on the way.
  auto at = [](const void* base, int64_t bytes) { return reinterpret_cast<uintptr_t>(base) + uintptr_t(bytes); };
  const int64_t b_bytes = packed_bytes(moe.N, moe.K, 1), sfb_bytes = sf_batch_bytes(moe.N, moe.K);
  Nvfp4GroupGemmArgs a;
  a.groups.resize(size_t(moe.experts));
  int64_t sfa = 0;
  for (int e = 0; e < moe.experts; ++e) {
    Nvfp4Group& g = a.groups[size_t(e)];
    g.M = off[e + 1] - off[e];
    g.N = moe.N;
    g.K = moe.K;
    g.A = reinterpret_cast<const uint8_t*>(at(moe.A, int64_t(off[e]) * (moe.K / 2)));
    g.SFA = reinterpret_cast<const uint8_t*>(at(moe.SFA, sfa));
    g.B = reinterpret_cast<const uint8_t*>(at(moe.B, e * b_bytes));
    g.SFB = reinterpret_cast<const uint8_t*>(at(moe.SFB, e * sfb_bytes));
    g.alpha = moe.alpha ? moe.alpha[e] : 1.0f;
    g.C = reinterpret_cast<__half*>(at(moe.C, 2 * int64_t(off[e]) * moe.N));
    sfa += sf_batch_bytes(g.M, moe.K);
  }
  return a;
}

// ---- Shapes ----------------------------------------------------------------------------------------

Shape group_shape(const std::string& name, const std::vector<GroupSize>& groups) {
  Shape s;
  s.L = 1;
  s.name = name;
  for (const GroupSize& g : groups) {
    s.M += g.M;
    s.N = std::max(s.N, g.N);
    s.K = std::max(s.K, g.K);
    s.extra.insert(s.extra.end(), {g.M, g.N, g.K});
  }
  return s;
}

namespace {

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
uint64_t group_seed(uint64_t seed, int64_t g) { return mix(seed ^ mix(uint64_t(g) + 1)); }

// `total` rows over `groups` groups, as unevenly as a router spreads tokens over experts: weights
// that are sums of two exponentials (a gamma(2) draw: the counts vary by about 70% of their mean),
// and one group in 16 left without rows. Drawn from the raw generator, not std:: distributions,
// whose algorithms differ between standard libraries: the shapes are the same everywhere.
std::vector<int> spread_rows(int64_t total, int groups, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto unit = [&] { return (double(rng() >> 11) + 0.5) * 0x1p-53; };  // in (0, 1)
  std::vector<double> w(static_cast<size_t>(groups));
  double sum = 0;
  for (double& x : w) {
    x = rng() % 16 == 0 ? 0.0 : -std::log(unit()) - std::log(unit());
    sum += x;
  }
  if (sum == 0) w[0] = sum = 1;
  std::vector<int> rows(static_cast<size_t>(groups));
  double cum = 0;
  int64_t done = 0;
  for (int g = 0; g < groups; ++g) {
    cum += w[size_t(g)];
    const int64_t end = g + 1 == groups ? total : std::min(total, int64_t(std::llround(double(total) * (cum / sum))));
    rows[size_t(g)] = int(end - done);
    done = end;
  }
  return rows;
}

// L groups of N x K sharing the M rows: what --m --n --k --l mean for a group GEMM.
Shape spread_shape(const Shape& s) {
  const int groups = std::max(1, s.L);
  const std::vector<int> rows = spread_rows(s.M, groups, 0x6D6F65ull);
  std::vector<GroupSize> g;
  for (int m : rows) g.push_back({m, s.N, s.K});
  return group_shape("G" + std::to_string(groups) + "_M" + std::to_string(s.M) + "_N" + std::to_string(s.N) + "_K" +
                         std::to_string(s.K),
                     g);
}

}  // namespace

std::vector<GroupSize> group_sizes(const Shape& s) {
  if (s.extra.empty()) return group_sizes(spread_shape(s));
  if (s.extra.size() % 3 != 0)
    throw std::invalid_argument("NVFP4 group GEMM shape " + shape_text(s) +
                                ": extra must hold M, N, K of every group (got " + std::to_string(s.extra.size()) +
                                " integers)");
  std::vector<GroupSize> g;
  for (size_t i = 0; i < s.extra.size(); i += 3) g.push_back({s.extra[i], s.extra[i + 1], s.extra[i + 2]});
  return g;
}

namespace {

// ---- Problems and inputs ---------------------------------------------------------------------------

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// Where each group's operands lie: byte offsets in the four input buffers (each region on a 256-byte
// boundary; a group without rows has no A or SFA region), element offsets in C (each on 8 elements).
struct Layout {
  std::vector<int64_t> a, sfa, b, sfb, c;
  int64_t a_bytes = 0, sfa_bytes = 0, b_bytes = 0, sfb_bytes = 0;  // one set, multiples of 256
  int64_t c_elements = 0;                                          // up to the end of the last group's C
};

Layout layout_of(const std::vector<GroupSize>& groups) {
  Layout l;
  auto place = [](int64_t& end, int64_t bytes) {
    const int64_t at = round_up(end, 256);
    end = at + bytes;
    return at;
  };
  for (const GroupSize& g : groups) {
    const int64_t rows = std::max(g.M, 0);
    l.a.push_back(place(l.a_bytes, packed_bytes(rows, g.K, 1)));
    l.sfa.push_back(place(l.sfa_bytes, sf_bytes(rows, g.K, 1)));
    l.b.push_back(place(l.b_bytes, packed_bytes(g.N, g.K, 1)));
    l.sfb.push_back(place(l.sfb_bytes, sf_bytes(g.N, g.K, 1)));
    const int64_t c = round_up(l.c_elements, 8);
    l.c.push_back(c);
    if (rows > 0) l.c_elements = c + rows * g.N;
  }
  for (int64_t* total : {&l.a_bytes, &l.sfa_bytes, &l.b_bytes, &l.sfb_bytes}) *total = round_up(*total, 256);
  return l;
}

// The four operands of every group on the device, in `sets` copies of the layout back to back.
class GroupInputs final : public DeviceInputs {
 public:
  GroupInputs(std::vector<GroupSize> groups, std::vector<float> alpha, int sets)
      : groups_(std::move(groups)), alpha_(std::move(alpha)), sets_(sets), l_(layout_of(groups_)),
        A_(size_t(l_.a_bytes * sets)), SFA_(size_t(l_.sfa_bytes * sets)), B_(size_t(l_.b_bytes * sets)),
        SFB_(size_t(l_.sfb_bytes * sets)) {}
  int sets() const override { return sets_; }
  // A group without rows gets null A, SFA and C, which the contract allows: a kernel that touches
  // them (or builds a descriptor from them) fails.
  AnyArgs args(int set, void* C) const override {
    Nvfp4GroupGemmArgs a;
    a.groups.reserve(groups_.size());
    for (size_t g = 0; g < groups_.size(); ++g) {
      const GroupSize& s = groups_[g];
      const bool rows = s.M > 0;
      Nvfp4Group x;
      x.M = s.M;
      x.N = s.N;
      x.K = s.K;
      x.A = rows ? A_.get() + set * l_.a_bytes + l_.a[g] : nullptr;
      x.SFA = rows ? SFA_.get() + set * l_.sfa_bytes + l_.sfa[g] : nullptr;
      x.B = B_.get() + set * l_.b_bytes + l_.b[g];
      x.SFB = SFB_.get() + set * l_.sfb_bytes + l_.sfb[g];
      x.alpha = alpha_[g];
      x.C = rows ? static_cast<__half*>(C) + l_.c[g] : nullptr;
      a.groups.push_back(x);
    }
    return AnyArgs(a);
  }
  const Layout& layout() const { return l_; }
  DeviceBuffer<uint8_t>& A() { return A_; }
  DeviceBuffer<uint8_t>& SFA() { return SFA_; }
  DeviceBuffer<uint8_t>& B() { return B_; }
  DeviceBuffer<uint8_t>& SFB() { return SFB_; }

 private:
  std::vector<GroupSize> groups_;
  std::vector<float> alpha_;
  int sets_;
  Layout l_;
  DeviceBuffer<uint8_t> A_, SFA_, B_, SFB_;
};

// A random non-zero finite E4M3 scale, 2^-1 .. 4 with bit 7 random (which readers ignore).
uint8_t padding_scale(std::mt19937_64& rng) {
  const uint64_t x = rng();
  return uint8_t(0x30 + x % 25) | ((x >> 32) & 1 ? 0x80 : 0x00);
}

// Random non-zero scales in every byte the blocked layout pads with (rows past the tensor's up to its
// 128-row block, scale columns past K/16 up to a multiple of 4), as GPU MODE's inputs have: zeros
// there would hide a kernel that lets a padding scale reach C (times data past K or past the rows,
// which is not zero where groups lie back to back).
void fill_scale_padding(std::vector<uint8_t>& sf, int rows, int K, std::mt19937_64& rng) {
  std::vector<bool> real(sf.size(), false);
  for (int r = 0; r < rows; ++r)
    for (int k16 = 0; k16 < K / kSfVector; ++k16) real[size_t(sf_offset(r, k16, K))] = true;
  for (size_t i = 0; i < sf.size(); ++i)
    if (!real[i]) sf[i] = padding_scale(rng);
}

class GroupProblem final : public Problem {
 public:
  GroupProblem(const Shape& s, Tier tier, uint64_t seed)
      : shape_(s), groups_(group_sizes(s)), layout_(layout_of(groups_)), tier_(tier), seed_(seed) {
    for (size_t g = 0; g < groups_.size(); ++g) {
      const GroupSize& x = groups_[g];
      // A group without rows still gets one row of A (never uploaded): its B is drawn as any other's.
      host_.push_back(make_nvfp4_problem(std::max(x.M, 1), x.N, x.K, 1, tier, group_seed(seed, int64_t(g))));
      std::mt19937_64 rng(mix(group_seed(seed, int64_t(g)) ^ 0x7061646469ull));
      fill_scale_padding(host_.back().a.sf, host_.back().M, x.K, rng);
      fill_scale_padding(host_.back().b.sf, x.N, x.K, rng);
    }
    reference_.resize(groups_.size());
  }

  // The bytes between groups' regions are random too (payload any byte, scales non-zero), so that a
  // read past a group's region does not find zeros.
  std::unique_ptr<DeviceInputs> upload() const override {
    std::vector<float> alpha;
    for (const HostNvfp4Problem& h : host_) alpha.push_back(h.alpha);
    auto in = std::make_unique<GroupInputs>(groups_, alpha, 1);
    std::mt19937_64 rng(mix(seed_ ^ 0x75706c6f6164ull));
    auto payload = [&](int64_t bytes) {
      std::vector<uint8_t> v(static_cast<size_t>(bytes));
      for (size_t i = 0; i < v.size(); i += 8) {
        const uint64_t x = rng();
        std::memcpy(v.data() + i, &x, std::min<size_t>(8, v.size() - i));
      }
      return v;
    };
    auto scales = [&](int64_t bytes) {
      std::vector<uint8_t> v(static_cast<size_t>(bytes));
      for (auto& b : v) b = padding_scale(rng);
      return v;
    };
    std::vector<uint8_t> a = payload(layout_.a_bytes), sfa = scales(layout_.sfa_bytes), b = payload(layout_.b_bytes),
                         sfb = scales(layout_.sfb_bytes);
    auto put = [](std::vector<uint8_t>& to, int64_t at, const std::vector<uint8_t>& from) {
      std::copy(from.begin(), from.end(), to.begin() + at);
    };
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (groups_[g].M > 0) {
        put(a, layout_.a[g], host_[g].a.data);
        put(sfa, layout_.sfa[g], host_[g].a.sf);
      }
      put(b, layout_.b[g], host_[g].b.data);
      put(sfb, layout_.sfb[g], host_[g].b.sf);
    }
    in->A().upload(a);
    in->SFA().upload(sfa);
    in->B().upload(b);
    in->SFB().upload(sfb);
    return in;
  }

  CompareResult compare(const void* got, Tile tile) const override {
    return merged(static_cast<const uint8_t*>(got), [&](size_t g, const std::vector<uint16_t>& part) {
      const GroupSize& x = groups_[g];
      return compare_fp16(part, reference(g), CompareShape{x.M, x.N, x.K, 1, tile.m, tile.n}, tier_);
    });
  }

  // Every group is sampled, at least 16 random positions each and otherwise in proportion to its
  // outputs, plus its corners and its last row and column.
  CompareResult compare_spots(const void* got, int random_count, uint64_t seed) const override {
    double outputs = 0;
    for (const GroupSize& x : groups_) outputs += double(std::max(x.M, 0)) * x.N;
    return merged(static_cast<const uint8_t*>(got), [&](size_t g, const std::vector<uint16_t>& part) {
      const GroupSize& x = groups_[g];
      const int count = std::max(16, int(random_count * (double(x.M) * x.N / outputs)));
      SpotSet spots = spot_positions(x.M, x.N, 1, count, group_seed(seed, int64_t(g)));
      for (size_t i = 0; i < spots.l.size(); ++i) {
        double abs_sum = 0;
        spots.want.push_back(reference_at(host_[g].host_args(), 0, spots.m[i], spots.n[i], &abs_sum));
        spots.abs_sum.push_back(abs_sum);
      }
      return compare_spots_fp16(part, spots, CompareShape{x.M, x.N, x.K, 1});
    });
  }

  const std::vector<uint8_t>& scales(int g, char operand) const {
    if (g < 0 || size_t(g) >= host_.size()) throw std::out_of_range("host_scales: no group " + std::to_string(g));
    return operand == 'A' ? host_[size_t(g)].a.sf : host_[size_t(g)].b.sf;
  }

  std::vector<uint8_t> expected() const {
    std::vector<uint8_t> out(size_t(2 * layout_.c_elements), 0xFF);
    for (size_t g = 0; g < groups_.size(); ++g)
      if (groups_[g].M > 0) {
        const std::vector<uint16_t>& h = reference(g).half;
        std::memcpy(out.data() + 2 * layout_.c[g], h.data(), 2 * h.size());
      }
    return out;
  }

 private:
  const ReferenceOutput& reference(size_t g) const {
    if (!reference_[g]) reference_[g] = reference_gemm(host_[g].host_args());
    return *reference_[g];
  }

  // One CompareResult of every group's (a mismatch's batch is its group; block labels name the group)
  // and of the gaps between the groups' C, which must still hold the poison.
  template <class PerGroup>
  CompareResult merged(const uint8_t* got, PerGroup per_group) const {
    CompareResult r;
    r.what = std::string(tier_name(tier_)) + " NVFP4 group GEMM " + shape_text(shape_) + ", " +
             std::to_string(groups_.size()) + " groups (a mismatch's batch is its group)";
    int64_t end = 0;  // the end of the previous group's C, in elements
    size_t previous = 0;
    for (size_t g = 0; g < groups_.size(); ++g) {
      const GroupSize& x = groups_[g];
      if (x.M < 1) continue;
      const int64_t at = layout_.c[g], n = int64_t(x.M) * x.N;
      int64_t written = 0;
      for (int64_t i = end; i < at; ++i) {
        uint16_t v;
        std::memcpy(&v, got + 2 * i, 2);
        written += v != 0xFFFF;
      }
      r.checked += at - end;
      if (written > 0) {
        r.mismatches += written;
        r.blocks.emplace_back("the gap between groups " + std::to_string(previous) + " and " + std::to_string(g) +
                                  " (C elements " + std::to_string(end) + "-" + std::to_string(at - 1) +
                                  ", no group's): written, must stay 0xFFFF",
                              written);
      }
      std::vector<uint16_t> part(static_cast<size_t>(n));
      std::memcpy(part.data(), got + 2 * at, size_t(2 * n));
      const CompareResult one = per_group(g, part);
      r.checked += one.checked;
      r.mismatches += one.mismatches;
      r.nonfinite += one.nonfinite;
      r.max_abs_error = std::max(r.max_abs_error, one.max_abs_error);
      r.normwise_rel_error = std::max(r.normwise_rel_error, one.normwise_rel_error);
      for (Mismatch m : one.first) {
        if (r.first.size() >= 12) break;
        m.l = int(g);
        r.first.push_back(m);
      }
      for (const auto& [label, count] : one.blocks) {
        std::string where = label;
        if (where.rfind("batch 0 ", 0) == 0) where.erase(0, 8);
        r.blocks.emplace_back("group " + std::to_string(g) + ": " + where, count);
      }
      end = at + n;
      previous = g;
    }
    std::stable_sort(r.blocks.begin(), r.blocks.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return r;
  }

  Shape shape_;
  std::vector<GroupSize> groups_;
  Layout layout_;
  Tier tier_;
  uint64_t seed_;
  std::vector<HostNvfp4Problem> host_;
  mutable std::vector<std::optional<ReferenceOutput>> reference_;
};

// ---- Peers -----------------------------------------------------------------------------------------

// What a user without a group GEMM runs: the library's NVFP4 GEMM once per group with rows.
void cublaslt_nvfp4_per_group(const Nvfp4GroupGemmArgs& a, cudaStream_t stream) {
  validate(a);
  for (const Nvfp4Group& g : a.groups)
    if (g.M > 0) cublaslt_nvfp4(gemm_args(g), stream);
}
void dequantize_cublas_bf16_per_group(const Nvfp4GroupGemmArgs& a, cudaStream_t stream) {
  validate(a);
  for (const Nvfp4Group& g : a.groups)
    if (g.M > 0) dequantize_cublas_bf16_launcher(gemm_args(g), stream);
}

// cuBLAS (checked against 13.1) has no grouped GEMM with block-scaled operands: cuBLASLt's batches
// (strided or pointer arrays) share one shape and one scale pointer per operand, and
// cublasGemmGroupedBatchedEx, which has per-group sizes, takes no block scales.
constexpr const char* kNoGroupedNvfp4 =
    "cuBLAS has no grouped NVFP4 GEMM (cuBLASLt batches share one shape and one scale pointer; "
    "cublasGemmGroupedBatchedEx takes no block scales), so the peer is one call per group with rows";

// ---- The kind --------------------------------------------------------------------------------------

// A case named after its tier and label (the name seeds its data, so labels differ).
Case group_case(Tier tier, const std::string& label, const std::vector<GroupSize>& groups) {
  return {std::string(tier_name(tier)) + "_" + label, group_shape(label, groups), tier};
}

// 5 to 12 groups, M in 0..300, N in 1..600, K a multiple of 32 up to 1024.
std::vector<GroupSize> random_groups(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<GroupSize> v(size_t(5 + rng() % 8));
  for (GroupSize& g : v) {
    g.M = int(rng() % 301);
    g.N = int(1 + rng() % 600);
    g.K = int(32 * (1 + rng() % 32));
  }
  if (std::all_of(v.begin(), v.end(), [](const GroupSize& g) { return g.M == 0; })) v[0].M = 1;
  return v;
}

// More groups than one launch's parameter table holds: 60 small ones, some empty.
std::vector<GroupSize> many_groups() {
  std::mt19937_64 rng(60);
  std::vector<GroupSize> v(60);
  for (GroupSize& g : v) {
    g.M = int(rng() % 41);
    g.N = int(8 + rng() % 65);
    g.K = int(32 * (1 + rng() % 8));
  }
  return v;
}

// `experts` groups of N x K sharing experts * mean_rows rows unevenly (spread_rows).
std::vector<GroupSize> experts(int count, int mean_rows, int N, int K, uint64_t seed) {
  std::vector<GroupSize> v;
  for (int m : spread_rows(int64_t(count) * mean_rows, count, seed)) v.push_back({m, N, K});
  return v;
}

// The four GPU MODE NVFP4 group GEMM benchmark problems.
const std::vector<std::pair<const char*, std::vector<GroupSize>>>& gpumode_cases() {
  static const std::vector<std::pair<const char*, std::vector<GroupSize>>> v = [] {
    auto same = [](std::vector<int> ms, int N, int K) {
      std::vector<GroupSize> g;
      for (int m : ms) g.push_back({m, N, K});
      return g;
    };
    return std::vector<std::pair<const char*, std::vector<GroupSize>>>{
        {"gpumode_q1", same({80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168)},
        {"gpumode_q2", same({40, 76, 168, 72, 164, 148, 196, 160}, 7168, 2048)},
        {"gpumode_q3", same({192, 320}, 3072, 4096)},
        {"gpumode_q4", same({128, 384}, 4096, 1536)},
    };
  }();
  return v;
}

class Nvfp4GroupGemmKind final : public Kind {
 public:
  const char* name() const override { return "nvfp4_group_gemm"; }
  const char* title() const override { return "NVFP4 group GEMM"; }
  const char* summary() const override {
    return "C_g = alpha_g * A_g * B_g^T for g = 0 .. G-1 (M_g x N_g FP16 each), every group an NVFP4 GEMM\n"
           "with its own sizes (M_g may be 0): the expert GEMMs of a mixture-of-experts layer. Here --l is G\n"
           "and --m the rows of all groups together, spread unevenly over them";
  }

  void validate(const AnyArgs& a) const override { gemm::validate(a.as<Nvfp4GroupGemmArgs>()); }
  std::string size_rule(char which, long long v) const override {
    if (which == 'k' && v % kNvfp4KMultiple != 0)
      return "must be a multiple of 32 for an NVFP4 stage (each row of A and B is whole 16-byte chunks)";
    if (which == 'l' && (v < 1 || v > kMaxGroups))
      return "must be in [1, " + std::to_string(kMaxGroups) + "] for a group GEMM (--l is the number of groups)";
    return "";
  }
  std::string size_help(char which) const override {
    switch (which) {
      case 'm': return "1 or more: the rows of all groups together, spread unevenly over the --l groups";
      case 'n': return "1 or more (every group's)";
      case 'k': return "1 or more, a multiple of 32 (NVFP4; every group's)";
      case 'l': return "1 to " + std::to_string(kMaxGroups) + ": the number of groups";
    }
    return "1 or more";
  }
  Shape program_shape(const Shape& s) const override { return s.extra.empty() ? spread_shape(s) : s; }

  std::vector<Case> cases(Tile t) const override {
    const int k_tail = (t.k + 32) / 32 * 32;  // smallest multiple of 32 above the tile's K
    const std::vector<GroupSize> empty_groups = {{0, 64, 128}, {100, 64, 128}, {0, 64, 128},
                                                 {0, 96, 64},  {37, 80, 192}, {0, 64, 128}};
    const std::vector<GroupSize> rows_1 = {{1, 128, 256}, {1, 40, 64}, {1, 257, 96}};
    const std::vector<GroupSize> tile_tails = {
        {t.m + 1, t.n + 1, k_tail}, {2 * t.m - 1, t.n, 2 * k_tail}, {127, 2 * t.n + 1, 64}, {129, 96, 160}};
    const std::vector<GroupSize> single = {{t.m + 1, t.n + 1, k_tail}};
    const std::vector<GroupSize> single_tile = {{t.m, t.n, t.k}};
    const std::vector<GroupSize> k_tails = {{70, 64, 32}, {33, 72, 96}, {130, 48, 160}, {65, 136, k_tail}};
    const std::vector<GroupSize> one_tile = {{t.m, t.n, t.k}, {t.m - 1, t.n - 1, t.k}, {17, 13, 64}};
    const std::vector<GroupSize> mixed_nk = {{64, 256, 512}, {200, 48, 1024}, {129, 384, 64}, {17, 1000, 160}};
    // N not a multiple of 8 (a group's rows are then not 16-byte aligned: no TMA store for them).
    const std::vector<GroupSize> n_odd = {{64, 13, 128}, {130, 257, 96}, {96, 64, 64}, {33, 7, 64}};
    const std::vector<GroupSize> moe_small = experts(8, 64, 512, 2048, 8);

    std::vector<Case> c;
    for (const auto& [label, groups] : gpumode_cases()) c.push_back(group_case(Tier::kExact, label, groups));
    for (Tier tier : {Tier::kExact, Tier::kLayout, Tier::kRealistic}) {
      c.push_back(group_case(tier, "random_a", random_groups(0xA)));
      c.push_back(group_case(tier, "random_b", random_groups(0xB)));
      c.push_back(group_case(tier, "mixed_nk", mixed_nk));
    }
    c.push_back(group_case(Tier::kExact, "random_c", random_groups(0xC)));
    for (Tier tier : {Tier::kExact, Tier::kLayout}) {
      c.push_back(group_case(tier, "empty_groups", empty_groups));
      c.push_back(group_case(tier, "tile_tails", tile_tails));
      c.push_back(group_case(tier, "n_odd", n_odd));
    }
    c.push_back(group_case(Tier::kExact, "rows_1", rows_1));
    c.push_back(group_case(Tier::kExact, "single", single));
    c.push_back(group_case(Tier::kExact, "single_tile", single_tile));
    c.push_back(group_case(Tier::kExact, "k_tails", k_tails));
    c.push_back(group_case(Tier::kExact, "one_tile", one_tile));
    c.push_back(group_case(Tier::kExact, "many_groups", many_groups()));
    c.push_back(group_case(Tier::kRealistic, "many_groups", many_groups()));
    c.push_back(group_case(Tier::kRealistic, "moe_small", moe_small));
    // Scale bytes with bit 7 set, which the hardware ignores.
    c.push_back(group_case(Tier::kScaleBit7, "mixed_nk", mixed_nk));
    c.push_back(group_case(Tier::kScaleBit7, "tile_tails", tile_tails));
    c.push_back(group_case(Tier::kScaleBit7, "k_tails", k_tails));
    return c;
  }
  Case element_aligned_c_case() const override {
    return {"c_offset_exact_three_groups",
            group_shape("c_offset_three_groups", {{67, 48, 96}, {0, 40, 64}, {33, 24, 160}}), Tier::kExact};
  }

  // Each rule broken once in a group other than the first, where a kernel checking only group 0
  // would miss it. Rules that need rows (A, SFA, C) are broken in group 2: both this kind's
  // placeholder table and its element-aligned case (the GPU variant's table) have rows there, where
  // group 1 of the latter has none.
  std::vector<BadArgument> bad_arguments() const override {
    using F = Nvfp4GroupGemmArgs;
    auto m = [](auto f) { return [f](AnyArgs& a) { f(a.as<F>()); }; };
    std::vector<BadArgument> v = {
        {"G", m([](F& a) { a.groups.clear(); }), "must be in [1, 4096]"},
        {"G", m([](F& a) { a.groups.resize(kMaxGroups + 1, a.groups[0]); }), "must be in [1, 4096]"},
        {"groups[1].M", m([](F& a) { a.groups[1].M = -1; }), "must be >= 0"},
        {"groups[1].N", m([](F& a) { a.groups[1].N = 0; }), "must be >= 1"},
        {"groups[1].K", m([](F& a) { a.groups[1].K = 0; }), "must be >= 1"},
        {"groups[1].K", m([](F& a) { a.groups[1].K = 48; }), "must be a multiple of 32"},
        {"groups[1].K", m([](F& a) { a.groups[1].K = 31; }), "must be a multiple of 32"},
        {"groups[2].M*K, N*K and M*N", m([](F& a) { a.groups[2].M = 1 << 30, a.groups[2].K = 1 << 20; }),
         "must each be below 2^46"},
        {"groups[2].A", m([](F& a) { a.groups[2].A = nullptr; }), "must not be null"},
        {"groups[2].A", m([](F& a) { a.groups[2].A += 8; }), "must be 16-byte aligned"},
        {"groups[2].SFA", m([](F& a) { a.groups[2].SFA = nullptr; }), "must not be null"},
        {"groups[1].B", m([](F& a) { a.groups[1].B = nullptr; }), "must not be null"},
        {"groups[1].B", m([](F& a) { a.groups[1].B += 8; }), "must be 16-byte aligned"},
        {"groups[1].SFB", m([](F& a) { a.groups[1].SFB = nullptr; }), "must not be null"},
        {"groups[1].SFB", m([](F& a) { a.groups[1].SFB += 4; }), "must be 16-byte aligned"},
        {"groups[1].alpha", m([](F& a) { a.groups[1].alpha = NAN; }), "must be finite"},
        {"groups[2].alpha", m([](F& a) { a.groups[2].alpha = INFINITY; }), "must be finite"},
        {"groups[2].C", m([](F& a) { a.groups[2].C = nullptr; }), "must not be null"},
        {"groups[2].C", m([](F& a) {
           a.groups[2].C = reinterpret_cast<__half*>(reinterpret_cast<uintptr_t>(a.groups[2].C) + 1);
         }),
         "must be 2-byte aligned"},
    };
    // Group 2's C onto inputs of groups 0 and 1 and onto group 0's C, at the places
    // family::add_c_overlaps puts it (first byte, middle, C's first element on the last bytes, C's last
    // element on the first bytes), always aligned so that only the overlap rule can catch it.
    using Pick = std::function<std::pair<uintptr_t, int64_t>(const F&)>;
    auto at = [](const void* p) { return reinterpret_cast<uintptr_t>(p); };
    const std::vector<Pick> targets = {
        [at](const F& a) { return std::pair{at(a.groups[0].A), packed_bytes(a.groups[0].M, a.groups[0].K, 1)}; },
        [at](const F& a) { return std::pair{at(a.groups[0].SFA), sf_bytes(a.groups[0].M, a.groups[0].K, 1)}; },
        [at](const F& a) { return std::pair{at(a.groups[1].B), packed_bytes(a.groups[1].N, a.groups[1].K, 1)}; },
        [at](const F& a) { return std::pair{at(a.groups[1].SFB), sf_bytes(a.groups[1].N, a.groups[1].K, 1)}; },
        [at](const F& a) { return std::pair{at(a.groups[0].C), 2 * int64_t(a.groups[0].M) * a.groups[0].N}; },
    };
    for (const Pick& target : targets)
      for (int where = 0; where < 4; ++where)
        v.push_back({"groups[2].C",
                     [target, where](AnyArgs& any) {
                       F& a = any.as<F>();
                       const auto [begin, bytes] = target(a);
                       const int64_t c_bytes = 2 * int64_t(a.groups[2].M) * a.groups[2].N;
                       const int64_t offset = where == 0 ? 0 : where == 1 ? bytes / 4 * 2 : where == 2 ? bytes - 2 : 2 - c_bytes;
                       a.groups[2].C = reinterpret_cast<__half*>(begin + uintptr_t(offset));  // wraps, never UB
                     },
                     "must not overlap "});
    return v;
  }
  // Three groups of different sizes at distinct addresses 1 MiB apart, each operand 64 KiB into its
  // group's, never dereferenced.
  AnyArgs placeholder_args() const override {
    const GroupSize sizes[] = {{64, 64, 64}, {48, 32, 128}, {32, 80, 96}};
    Nvfp4GroupGemmArgs a;
    for (int g = 0; g < 3; ++g) {
      const uintptr_t base = 0x100000 * uintptr_t(g + 1);
      Nvfp4Group x;
      x.M = sizes[g].M;
      x.N = sizes[g].N;
      x.K = sizes[g].K;
      x.A = reinterpret_cast<const uint8_t*>(base);
      x.SFA = reinterpret_cast<const uint8_t*>(base + 0x10000);
      x.B = reinterpret_cast<const uint8_t*>(base + 0x20000);
      x.SFB = reinterpret_cast<const uint8_t*>(base + 0x30000);
      x.alpha = 1.0f;
      x.C = reinterpret_cast<__half*>(base + 0x40000);
      a.groups.push_back(x);
    }
    return AnyArgs(a);
  }
  std::unique_ptr<Problem> make_problem(const Shape& s, Tier tier, uint64_t seed) const override {
    return std::make_unique<GroupProblem>(s, tier, seed);
  }
  const char* describe_inputs(Tier tier) const override {
    static const std::string text[] = {
        std::string(nvfp4::describe_inputs(Tier::kExact)) + kPadding,
        std::string(nvfp4::describe_inputs(Tier::kLayout)) + kPadding,
        std::string(nvfp4::describe_inputs(Tier::kRealistic)) + kPadding,
        std::string(nvfp4::describe_inputs(Tier::kScaleBit7)) + kPadding,
    };
    return text[int(tier)].c_str();
  }

  int64_t output_bytes(const Shape& s) const override { return 2 * layout_of(group_sizes(s)).c_elements; }
  int output_element_bytes() const override { return 2; }
  double flops(const Shape& s) const override {
    double f = 0;
    for (const GroupSize& g : group_sizes(s)) f += gemm::flops(g.M, g.N, g.K, 1);
    return f;
  }
  double min_bytes(const Shape& s) const override {
    double b = 0;
    for (const GroupSize& g : group_sizes(s))
      if (g.M > 0) b += gemm::min_bytes(Nvfp4GemmArgs{g.M, g.N, g.K, 1});
    return b;
  }
  std::unique_ptr<DeviceInputs> bench_inputs(const Shape& s, int sets) const override {
    const std::vector<GroupSize> groups = group_sizes(s);
    auto in = std::make_unique<GroupInputs>(groups, std::vector<float>(groups.size(), family::kBenchAlpha), sets);
    fill_bytes(in->A().get(), in->A().size(), 3, 0x00, 0xFF);
    fill_bytes(in->B().get(), in->B().size(), 4, 0x00, 0xFF);
    fill_bytes(in->SFA().get(), in->SFA().size(), 5, 0x30, 0x40);  // E4M3 codes of 0.5 .. 2
    fill_bytes(in->SFB().get(), in->SFB().size(), 6, 0x30, 0x40);
    CUDA_CHECK(cudaDeviceSynchronize());
    return in;
  }
  // The GPU MODE problems, then DeepSeek-V3's routed experts (gate and up projections fused, N 4096 x
  // K 7168; down, N 7168 x K 2048) at 8 experts of about 128 tokens and 32 of about 64.
  std::vector<Shape> bench_shapes() const override {
    std::vector<Shape> v;
    for (const auto& [label, groups] : gpumode_cases()) v.push_back(group_shape(label, groups));
    v.push_back(group_shape("dsv3_gate_up_e8", experts(8, 128, 4096, 7168, 0xE8)));
    v.push_back(group_shape("dsv3_down_e8", experts(8, 128, 7168, 2048, 0xE8)));
    v.push_back(group_shape("dsv3_gate_up_e32", experts(32, 64, 4096, 7168, 0xE32)));
    v.push_back(group_shape("dsv3_down_e32", experts(32, 64, 7168, 2048, 0xE32)));
    return v;
  }
  Peak peak(bool uses_tcgen05) const override { return KindOf<Nvfp4GemmArgs>::get().peak(uses_tcgen05); }
  std::vector<Peer> peers(std::string* note) const override {
    std::string why;
    if (cublaslt_nvfp4_supported(&why)) {
      if (note) *note = kNoGroupedNvfp4;
      return {{std::string(kCublasLtNvfp4Name) + ", one call per group", &cublaslt_nvfp4_per_group}};
    }
    if (note)
      *note = "cuBLASLt NVFP4 unsupported on this GPU: " + why +
              "; peer is dequantize-to-BF16 + cuBLAS BF16 once per group. " + kNoGroupedNvfp4;
    return {{std::string(kDequantCublasBf16Name) + ", one per group", &dequantize_cublas_bf16_per_group}};
  }
  // A group GEMM is one NVFP4 GEMM per group with rows: a GEMM stage can be its base.
  std::vector<AnyArgs> as_kind(const AnyArgs& args, const Kind& other) const override {
    if (&other != &KindOf<Nvfp4GemmArgs>::get()) return Kind::as_kind(args, other);
    std::vector<AnyArgs> calls;
    for (const Nvfp4Group& g : args.as<Nvfp4GroupGemmArgs>().groups)
      if (g.M > 0) calls.emplace_back(gemm_args(g));
    return calls;
  }
  double device_bytes(const Shape& s) const override {
    const Layout l = layout_of(group_sizes(s));
    return double(l.a_bytes + l.sfa_bytes + l.b_bytes + l.sfb_bytes) + 2.0 * double(l.c_elements);
  }
  // The host problems (one row of A where a group has none), their upload staged through one copy of
  // the device layout.
  double host_bytes(const Shape& s) const override {
    double b = device_bytes(s);
    for (const GroupSize& g : group_sizes(s)) b += nvfp4::host_bytes(Shape{std::max(g.M, 1), g.N, g.K, 1});
    return b;
  }

 private:
  static constexpr const char* kPadding = "; scale padding and the bytes between groups random, scales non-zero";
};

const GroupProblem& group_problem(const Problem& p) {
  const auto* g = dynamic_cast<const GroupProblem*>(&p);
  if (!g) throw std::invalid_argument("not a problem of the NVFP4 group GEMM kind");
  return *g;
}

}  // namespace

namespace group_detail {
const std::vector<uint8_t>& host_scales(const Problem& p, int g, char operand) {
  return group_problem(p).scales(g, operand);
}
std::vector<uint8_t> expected_output(const Problem& p) { return group_problem(p).expected(); }
}  // namespace group_detail

const Kind& KindOf<Nvfp4GroupGemmArgs>::get() {
  static const Nvfp4GroupGemmKind kind;
  return kind;
}

}  // namespace gemm
