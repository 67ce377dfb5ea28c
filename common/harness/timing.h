// How the benchmarks and the stage programs time a kernel, in one place so that both report the same
// thing:
//   - inputs rotate over `input_sets()` copies: at least 4, and together at least 4x the L2 cache, so
//     no launch finds its operands left in the L2 by the launches before it (2x the L2 kept part of
//     them there on an H100: a 7168 x 16384 GEMV read 7% faster than from DRAM);
//   - where even kMaxSets copies of a small problem cover less than that (`flushes_l2()`), the L2 is
//     also flushed before every timed launch: 4x the L2 written to a scratch buffer (the traffic the
//     rotation has to reach), outside the timed interval;
//   - a CUDA graph of back-to-back launches cycling through the sets (whole cycles, enough for a
//     replay of >= 2 ms, at most 1000 launches) is replayed between one CUDA event pair, and each launch
//     counts as replay time / launches. Per-launch events would count the launch gap and the events'
//     own cost, which reads kernels under ~0.2 ms several percent slow, and shorter ones by more.
//     GEMM_BENCH_TIMING=events selects per-launch events instead; so does a failed capture, and so
//     does the flush, which a graph could not hold between its launches without timing it.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>

namespace gemm::timing {

inline constexpr int kMinSets = 4;          // at least this many input copies ...
inline constexpr double kL2Multiple = 4.0;  // ... covering at least this many times the L2 together
// At most this many copies: enough for a 1.1 MB problem to cover 4x a B200's 126 MB L2. A problem
// smaller than l2 * kL2Multiple / kMaxSets cannot meet the rule by rotation and is timed with the L2
// flushed (flushes_l2); the base's and the peers' rows at the small shapes of the emulated tcgen05
// stages' benchmarks are that small (their rotations covered 1.2x to 3.6x an H100's or H200's L2).
inline constexpr int kMaxSets = 512;

// The rule: the number of copies of `bytes_per_set` a timing rotates over, on an L2 of `l2_bytes`.
int input_sets(double bytes_per_set, double l2_bytes);
// The same on this process's GPU.
int input_sets(double bytes_per_set);
// The rule's fallback: whether `sets` copies of `bytes_per_set` cover less than kL2Multiple x an L2 of
// `l2_bytes`, so that the L2 must be flushed before every timed launch. With input_sets() copies,
// true exactly below l2 * kL2Multiple / kMaxSets bytes per set. Throws std::invalid_argument unless
// sets >= 1 and bytes_per_set > 0.
bool flushes_l2(int sets, double bytes_per_set, double l2_bytes);
// The same on this process's GPU.
bool flushes_l2(int sets, double bytes_per_set);
// Both decisions for one timing, in one place for the benchmarks and the stage programs: the copies to
// rotate over and whether the L2 is also flushed. An emulated tcgen05 kernel (milliseconds a launch, its
// time not performance) takes kMinSets copies and no flush: its warm-up and timing stay short.
struct Rotation {
  int sets;
  bool flush_l2;
};
Rotation rotation(double bytes_per_set, bool emulated, double l2_bytes);
// The same on this process's GPU.
Rotation rotation(double bytes_per_set, bool emulated);
// What the rule is, for the benchmarks' JSON.
std::string rotation_rule_text();

enum class Method { kGraph, kEvents };
// GEMM_BENCH_TIMING: "graph" (the default) or "events"; false (and *bad = the value) for anything else.
bool method_from_env(Method* m, std::string* bad);
const char* method_sentence(Method m);

// Times `launch(set, stream)`, cycling through `sets` input sets, by the method above. The launches
// must be capturable once warm: no allocation or synchronisation after the first launch of a set.
// With `flush_l2` (where flushes_l2() says so), every measurement is one launch between its own
// events, after a flush of the L2 on the same stream, whatever `method` says.
class LaunchTimer {
 public:
  using Launch = std::function<void(int set, cudaStream_t)>;
  LaunchTimer(int sets, Launch launch, Method method, bool flush_l2);
  ~LaunchTimer();
  LaunchTimer(const LaunchTimer&) = delete;
  LaunchTimer& operator=(const LaunchTimer&) = delete;

  // One measurement: a graph replay (launches_per_measurement() launches) or one launch with events.
  double measure_ms();
  int launches_per_measurement() const { return graph_ ? per_graph_ : 1; }
  int launches_per_graph() const { return graph_ ? per_graph_ : 0; }  // 0: per-launch events
  bool capture_failed() const { return capture_failed_; }
  bool flushing() const { return flush_ != nullptr; }
  const std::string& why_capture_failed() const { return why_; }

 private:
  int sets_;
  Launch launch_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  cudaGraphExec_t graph_ = nullptr;
  int per_graph_ = 0;
  int next_set_ = 0;
  void* flush_ = nullptr;  // the scratch buffer the flush writes, flush_bytes_ long
  size_t flush_bytes_ = 0;
  bool capture_failed_ = false;
  std::string why_;
  template <class Work>
  double time(Work&& work);
};

}  // namespace gemm::timing
