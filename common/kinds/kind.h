// A kind of problem: what a family of stages computes, and everything needed to test, time and
// explain it. The FP32 GEMM (stages 00-02's contract), the NVFP4 GEMM, the NVFP4 GEMV and the NVFP4
// group GEMM are kinds;
// each lives in one file pair, common/kinds/<kind>.{h,cpp} (docs/kinds.md says what a new one supplies).
//
// The harness (the test macro, the benchmark runner, the stage program, the plots) works through
// this interface and never asks which kind it holds, so a stage of an existing kind needs nothing
// outside its folder but its CMake line, and a new kind adds one kind file pair.
//
//   Kind         the contract's rules, the test cases and bad arguments, problems with a CPU reference,
//                benchmark inputs, FLOPs and bytes, library peers and ceilings
//   AnyArgs      a copy of one kind's argument struct (Fp32GemmArgs, ...), which the harness holds
//                without knowing its type
//   Launcher     a launcher `void launch(const Args&, cudaStream_t)` of any kind, its kind deduced from
//                its argument type
//   StageOf<A>   what a stage's kernel.cuh declares about itself (`inline constexpr gemm::StageOf
//                kStage{"08_split_k", "idea", &launch};`); the registry holds it as a `gemm::Stage`
//
// This header is included by every kernel file (through its kind's header), so it stays light: the
// heavy types (CompareResult, GpuInfo) are only named here.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

namespace gemm {

struct CompareResult;  // common/harness/compare.h
class Kind;

// Which kind a launcher's argument type belongs to: each kind's header specialises it,
//   template <> struct KindOf<Nvfp4GemmArgs> { static const Kind& get(); };
// and its .cpp defines get() (a function, so that a stage's constexpr declaration can name it).
template <class Args>
struct KindOf;

// ---- Problems --------------------------------------------------------------------------------------

// Input tiers, each built so that a broken kernel cannot pass (common/harness/problems.h says how).
enum class Tier { kExact, kLayout, kRealistic, kScaleBit7 };
const char* tier_name(Tier t);
// Tiers whose results must match the reference bit for bit.
inline bool is_exact(Tier t) { return t == Tier::kExact || t == Tier::kScaleBit7; }

// The size of one problem. `extra` holds a kind's further integers (a group GEMM's per-group sizes,
// a low-rank term's rank): the kind's file says what they mean; the GEMM kinds leave it empty. `name`
// names a shape whose numbers do not fit in a short text (a group GEMM's "gpumode_q1").
struct Shape {
  int M = 0, N = 0, K = 0, L = 1;
  std::vector<int> extra = {};
  std::string name = {};
};
// "4096x4096x4096", "7168x1x2048x4" (x L when L > 1), or the shape's name where it has one.
std::string shape_text(const Shape& s);

// One test case: a shape in a tier; the name is also the seed of its data (common/harness/problems.h).
struct Case {
  std::string name;
  Shape shape;
  Tier tier;
};
// "exact_M17_N13_K160_L1": the name the kinds give their cases.
std::string case_name(Tier tier, const Shape& s);

// The tile a kernel computes per block: case lists add shapes one past it and one short of two, and
// comparisons count mismatches per tile.
struct Tile {
  int m, n, k;
};

// ---- Arguments of any kind -------------------------------------------------------------------------

// A copy of one kind's argument struct. Copies share nothing: clone() before changing one.
class AnyArgs {
 public:
  template <class Args>
  explicit AnyArgs(const Args& a)
      : kind_(&KindOf<Args>::get()), type_(&typeid(Args)), p_(std::make_shared<Args>(a)), copy_(&copy_of<Args>) {}

  const Kind& kind() const { return *kind_; }
  const void* get() const { return p_.get(); }
  AnyArgs clone() const { return AnyArgs(kind_, type_, copy_(p_.get()), copy_); }

  // The struct itself; throws std::logic_error when it is another kind's.
  template <class Args>
  Args& as() {
    check(typeid(Args));
    return *static_cast<Args*>(p_.get());
  }
  template <class Args>
  const Args& as() const {
    check(typeid(Args));
    return *static_cast<const Args*>(p_.get());
  }

 private:
  using Copy = std::shared_ptr<void> (*)(const void*);
  template <class Args>
  static std::shared_ptr<void> copy_of(const void* p) {
    return std::make_shared<Args>(*static_cast<const Args*>(p));
  }
  AnyArgs(const Kind* k, const std::type_info* t, std::shared_ptr<void> p, Copy c)
      : kind_(k), type_(t), p_(std::move(p)), copy_(c) {}
  void check(const std::type_info& want) const {
    if (want != *type_) throw std::logic_error(std::string("AnyArgs holds ") + type_->name() + ", not " + want.name());
  }

  const Kind* kind_;
  const std::type_info* type_;
  std::shared_ptr<void> p_;
  Copy copy_;
};

// A launcher of any kind: `void launch(const Args&, cudaStream_t)`, remembered with its kind.
class Launcher {
 public:
  template <class Args>
  Launcher(void (*f)(const Args&, cudaStream_t))  // NOLINT: implicit, so every launcher converts
      : kind_(&KindOf<Args>::get()), fn_(reinterpret_cast<void (*)()>(f)), call_(&call<Args>) {}

  const Kind& kind() const { return *kind_; }
  // Launches on `args`, which must be of this launcher's kind (std::logic_error otherwise).
  void operator()(const AnyArgs& args, cudaStream_t stream) const { call_(fn_, args, stream); }
  // Whether this is `f` (the registration tests ask).
  template <class Args>
  bool is(void (*f)(const Args&, cudaStream_t)) const {
    return kind_ == &KindOf<Args>::get() && fn_ == reinterpret_cast<void (*)()>(f) && call_ == &call<Args>;
  }

 private:
  using Erased = void (*)();
  template <class Args>
  static void call(Erased fn, const AnyArgs& args, cudaStream_t stream) {
    reinterpret_cast<void (*)(const Args&, cudaStream_t)>(fn)(args.as<Args>(), stream);
  }
  const Kind* kind_;
  Erased fn_;
  void (*call_)(Erased, const AnyArgs&, cudaStream_t);
};

// ---- What a kind supplies --------------------------------------------------------------------------

// Inputs on the device, in one or more sets (benchmarks rotate over sets so the L2 cannot help).
class DeviceInputs {
 public:
  virtual ~DeviceInputs() = default;
  virtual int sets() const = 0;
  // The kind's arguments for input set `set`, writing the output to `C` (a device buffer of
  // Kind::output_bytes(shape) bytes).
  virtual AnyArgs args(int set, void* C) const = 0;
};

// A problem with host data and its CPU reference (computed when first asked for).
class Problem {
 public:
  virtual ~Problem() = default;
  virtual std::unique_ptr<DeviceInputs> upload() const = 0;  // one set
  // The output as the kernel wrote it (Kind::output_bytes(shape) bytes on the host), against the
  // reference: every element, with mismatches counted per `tile`.
  virtual CompareResult compare(const void* got, Tile tile) const = 0;
  // The same at the corners, the last row and column of every batch, and `random_count` random
  // positions (for problems too large to compute whole on the CPU).
  virtual CompareResult compare_spots(const void* got, int random_count, uint64_t seed) const = 0;
};

// One argument rule broken: `mutate` changes valid arguments so that exactly this rule fails, and
// the launcher must throw std::invalid_argument whose message contains ": <argument> " and `rule`.
struct BadArgument {
  std::string argument;
  std::function<void(AnyArgs&)> mutate;
  std::string rule = {};
};

// Work the benchmark times that is not a launcher of the kind's arguments: a ceiling (the streaming
// read a memory-bound kernel is measured against) or a peer that needs inputs of its own.
struct TimedWork {
  int sets = 1;
  std::function<void(int set, cudaStream_t)> launch;
  std::shared_ptr<void> buffers;  // what `launch` uses, kept alive with it
  double own_bytes = 0;           // a peer that moves other bytes than the kind counts: its own count
};
// How many copies of its inputs a benchmark rotates over, from the bytes of one copy (the
// benchmark runner's rule: common/harness/bench.h).
using SetsRule = int (*)(double bytes_per_set);
struct ExtraRow {
  std::string name;
  std::string role;  // "stream" (a ceiling: runs first at each shape) or "peer"
  std::function<TimedWork(const Shape&, SetsRule)> prepare;
};

// A library peer that takes the kind's own arguments.
struct Peer {
  std::string name;
  Launcher launch;
};

// What a stage's time is measured against.
struct Peak {
  std::string name;   // "FP32 CUDA-core FMA peak at the max SM clock", ...
  double tflops = 0;  // 0: no fraction (a peer, an emulated run, a memory-bound kind)
};

// The figure a kind is judged by: compute-bound kinds by TFLOP/s (and a fraction of a peak),
// memory-bound kinds by GB/s (and a fraction of the streaming read).
enum class Merit { kCompute, kMemory };

class Kind {
 public:
  virtual ~Kind() = default;
  virtual const char* name() const = 0;   // "nvfp4_gemm": the benchmarks' JSON "kind", the plots' choice
  virtual const char* title() const = 0;  // "NVFP4 GEMM"
  // What the stage programs' --help says the problem is, in two or three lines.
  virtual const char* summary() const = 0;
  virtual Merit merit() const { return Merit::kCompute; }

  // -- the contract
  virtual void validate(const AnyArgs& args) const = 0;  // std::invalid_argument naming the rule
  // "" when a program option's value is allowed for this kind ('m', 'n', 'k', 'l'), else the rule broken.
  virtual std::string size_rule(char which, long long value) const = 0;
  // The rule --help prints for that option ("1 or more", "a multiple of 32", "1 (a GEMV)").
  virtual std::string size_help(char which) const = 0;
  // The problem a stage program's --m --n --k --l stand for: {M, N, K, L} itself for the GEMM kinds;
  // a group GEMM makes L groups of N x K that share the M rows.
  virtual Shape program_shape(const Shape& s) const { return s; }

  // -- tests
  virtual std::vector<Case> cases(Tile tile) const = 0;
  virtual Case element_aligned_c_case() const = 0;  // a small case the C-offset test runs
  virtual std::vector<BadArgument> bad_arguments() const = 0;
  // Valid arguments whose pointers are placeholders (never dereferenced: validation comes first).
  virtual AnyArgs placeholder_args() const = 0;
  virtual std::unique_ptr<Problem> make_problem(const Shape& s, Tier tier, uint64_t seed) const = 0;
  virtual const char* describe_inputs(Tier tier) const = 0;  // a line for the stage programs

  // -- measurements
  virtual int64_t output_bytes(const Shape& s) const = 0;
  // Bytes of one element of the output (its alignment: the tests offset C by one element).
  virtual int output_element_bytes() const = 0;
  virtual double flops(const Shape& s) const = 0;
  virtual double min_bytes(const Shape& s) const = 0;  // what must cross DRAM: each input once, C once
  // Random inputs in `sets` copies, for timing only.
  virtual std::unique_ptr<DeviceInputs> bench_inputs(const Shape& s, int sets) const = 0;
  virtual std::vector<Shape> bench_shapes() const = 0;
  // The peak of a stage of this kind: `uses_tcgen05` stages on a GPU with tcgen05 are measured
  // against the tensor cores, emulated ones against nothing.
  virtual Peak peak(bool uses_tcgen05) const = 0;
  // The library peers on this GPU (*note: why the one a user would want is missing, if it is).
  virtual std::vector<Peer> peers(std::string* note) const = 0;
  virtual std::vector<ExtraRow> extra_rows() const { return {}; }
  // Arguments of this kind presented as calls of another kind, where one is made of the other (a GEMV
  // is one GEMM at N = 1; a group GEMM is one GEMM per non-empty group): how a stage is timed against
  // a base of another kind, the calls launched one after another. Throws std::invalid_argument where
  // there is no such view.
  virtual std::vector<AnyArgs> as_kind(const AnyArgs& args, const Kind& other) const;
  // Bytes a problem occupies on the device and on the host (the program refuses what does not fit).
  virtual double device_bytes(const Shape& s) const = 0;
  virtual double host_bytes(const Shape& s) const = 0;
};

// ---- Stages ----------------------------------------------------------------------------------------

inline constexpr bool kUsesTcgen05 = true;

// What the registry holds: a stage (or a step of one) with its kind and its launcher.
class Stage {
 public:
  const char* id;     // folder name, e.g. "00_naive" (an earlier step: "05_tcgen05_1cta")
  const char* idea;   // the one idea the stage adds, in a line
  bool uses_tcgen05;  // on Hopper its kernels run through the tcgen05 emulator

  const Kind& kind() const { return kind_(); }
  Launcher launcher() const { return erase_(*this); }

 protected:
  constexpr Stage(const char* i, const char* d, const Kind& (*k)(), bool t, Launcher (*e)(const Stage&))
      : id(i), idea(d), uses_tcgen05(t), kind_(k), erase_(e) {}

 private:
  const Kind& (*kind_)();
  Launcher (*erase_)(const Stage&);
};

// `inline constexpr gemm::StageOf kStage{"00_naive", "idea", &launch};` (+ gemm::kUsesTcgen05): the
// kind follows from the launcher's argument type.
template <class Args>
class StageOf : public Stage {
 public:
  using Launch = void (*)(const Args&, cudaStream_t);
  // (The parameter is spelled out, not `Launch`, so that class template argument deduction sees Args.)
  constexpr StageOf(const char* i, const char* d, void (*f)(const Args&, cudaStream_t), bool uses_tcgen05 = false)
      : Stage(i, d, &KindOf<Args>::get, uses_tcgen05, &erase), launch(f) {}
  Launch launch;

 private:
  static Launcher erase(const Stage& s) { return Launcher(static_cast<const StageOf&>(s).launch); }
};

}  // namespace gemm
