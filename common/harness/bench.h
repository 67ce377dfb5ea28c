// The benchmark procedure every stage's bench.cu runs (Google Benchmark, manual timing), for every kind
// of problem (common/kinds/):
//   - rows, at each shape, in this order: the kind's ceilings (label "stream": the streaming read a
//     memory-bound kind is measured against), the stage, its variants, its base (the stage it builds
//     on, from the registry; label "predecessor"), the kind's library peers (label "peer"). All in the
//     same process, so ratios compare like with like. A base of another kind runs on this kind's
//     arguments where the kind has a view of them as the base's (Kind::as_kind: a GEMV is a GEMM at
//     N = 1);
//   - timing as common/harness/timing.h describes: inputs rotated over at least 4 copies covering at
//     least 4x the L2, CUDA-graph replays (GEMM_BENCH_TIMING=events: per-launch events); a problem too
//     small for the copies to cover that has the L2 flushed before each launch, timed with per-launch
//     events (emulated tcgen05 rows excepted: 4 copies, no flush);
//   - counters: TFLOP/s (the kind's FLOPs per launch), GB/s (the bytes the kind says must cross DRAM),
//     peak_fraction (compute-bound kinds: of the kind's peak for the row), of_stream (memory-bound
//     kinds: GB/s over the fastest "stream" row of the shape), own_GB/s (a peer that moves other
//     bytes), M, N, K, L, bytes_per_flop, input_sets, l2_multiple, l2_flush (1 where the L2 was
//     flushed before each launch, else 0), launches_per_graph (0 with per-launch events); the label is
//     the role, with " EMULATED" where a tcgen05 row runs emulated;
//   - context in the JSON: the stage, its idea and kind, GPU, SM count, clocks, driver, CUDA runtime,
//     commit, whether tcgen05 ran emulated, the timing method, the rotation rule, the peak's name and
//     value.
// Write the JSON with --benchmark_out=docs/data/<stage>.json --benchmark_out_format=json (the
// run_bench_stageNN and bench targets do).
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "common/registry.h"

namespace gemm::bench {

// Another configuration of the stage's kernel (e.g. a different tile width), timed beside it with
// label "variant" ("variant EMULATED" where the stage's tcgen05 runs emulated).
struct Variant {
  std::string name;
  Launcher launch;
};

// Another step of the same stage, as a variant, reached through the registry (common/registry.h): the
// benchmark links its stage's registration units, so bench.cu need not include that step's header and
// compile its kernels once more. Throws std::runtime_error when no stage of that id is linked in.
Variant registered_variant(const char* id);

// What a stage's bench.cu asks for beyond its stage and its base.
struct Plan {
  std::vector<Shape> shapes = {};           // empty: the kind's benchmark shapes
  // Where the stage uses tcgen05 and this GPU runs it emulated (far too slowly for big shapes), these
  // replace `shapes` for every row, so the base and the peers are still timed at the stage's shapes.
  std::vector<Shape> emulated_shapes = {};
  std::vector<Variant> variants = {};       // timed at every shape like the stage
  std::function<void()> register_extra = {};  // further benchmarks (see time_launches), after the rest
};

// Registers and runs everything; returns the process exit code. `base_id` is the stage this one
// builds on (bench.cu passes GEMM_PREDECESSOR_ID, which add_gemm_stage defines).
int run(int argc, char** argv, const Stage& self, const char* base_id, const Plan& plan = {});

// The timing loop the rows use, for a stage's own extra benchmarks: launch(set, stream) is timed,
// cycling through `sets` input sets (timing::input_sets gives the rule's count), with the L2 flushed
// before each launch where those sets of `bytes_per_set` cover less than the rule asks
// (timing::flushes_l2), and the counters TFLOP/s (when flops > 0), GB/s, peak_fraction (when
// peak_tflops > 0), input_sets, l2_multiple (from bytes_per_set), l2_flush and launches_per_graph are set.
void time_launches(benchmark::State& state, int sets, const std::function<void(int, cudaStream_t)>& launch,
                   double flops, double bytes, double peak_tflops, double bytes_per_set = 0);

}  // namespace gemm::bench
