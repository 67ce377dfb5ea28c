// The benchmark procedure every stage's bench.cu runs (Google Benchmark, manual timing):
//   - the stage, its predecessor (from the registry, when linked) and the library peer, at the same
//     shapes in the same process, so ratios compare like with like. The NVFP4 stages' peer is
//     cuBLASLt's NVFP4 GEMM where cuBLASLt offers one (sm_100-class GPUs), else dequantize-to-BF16 +
//     cuBLAS BF16 (context "peer_note" says why);
//   - timing with a CUDA graph (the default, GEMM_BENCH_TIMING=graph): after warm-up launches, N
//     back-to-back launches cycling through the input sets are captured into one graph (N a whole
//     number of cycles, enough for a replay of >= 2 ms, at most 1000); after warm-up replays, each
//     replay is timed with one CUDA event pair and counts as N iterations (one per launch) of
//     replay time / N each. Per-launch events would count the launch gap and the events' own cost,
//     which reads kernels under ~0.2 ms several percent slow, and shorter ones by more.
//     GEMM_BENCH_TIMING=events selects that older method (one event pair around each launch); so
//     does a failed capture, for that benchmark only (counter graph_capture_failed = 1). The
//     method is in the JSON context ("timing");
//   - inputs rotated over enough copies to cover at least twice the L2 cache, so no launch finds
//     its operands already cached by the previous one;
//   - counters: TFLOP/s (2 M N K L per launch), GB/s (the fewest bytes the GEMM must move), the
//     fraction of a named peak (FP32 CUDA-core FMA for stages 00-04, dense NVFP4 tensor-core for
//     tcgen05 stages on sm_100, none for tcgen05 stages running emulated), M, N, K, L,
//     input_sets and launches_per_graph (0 when timed with per-launch events); the label is the
//     role (stage / predecessor / peer; "stage EMULATED" for a tcgen05 stage running emulated);
//   - context in the JSON: GPU, SM count, clocks, driver, CUDA runtime, commit, whether tcgen05 ran
//     emulated, the timing method, the peak's name and value.
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

struct Shape {
  int M, N, K, L = 1;
};
std::vector<Shape> squares(std::initializer_list<int> sizes);

// The M = 128 shapes of a decode-like workload and the squares, for the NVFP4 stages.
std::vector<Shape> nvfp4_shapes();

// Another configuration of the stage's kernel (e.g. a different tile width), timed beside it with
// label "variant" ("variant EMULATED" where the stage's tcgen05 runs emulated).
struct Variant {
  std::string name;
  Nvfp4Launcher nvfp4;
};

// Registers and runs everything; returns the process exit code. `predecessor_id` is the stage the
// build lists before this one (bench.cu passes GEMM_PREDECESSOR_ID, which add_gemm_stage defines).
// `register_extra` may register further benchmarks (see time_launches) after the GEMMs.
// `emulated_shapes`, when not empty, replaces `shapes` for every GEMM row (stage, predecessor, peer)
// where the stage uses tcgen05 and this GPU runs it emulated, which is far too slow for big shapes.
// `variants` are timed at every shape like the stage.
int run(int argc, char** argv, const Stage& self, const char* predecessor_id, const std::vector<Shape>& shapes,
        const std::function<void()>& register_extra = {}, const std::vector<Shape>& emulated_shapes = {},
        const std::vector<Variant>& variants = {});

// GEMV stages (N = 1; stage 09): the same timing, but the figure of merit is bandwidth. Per shape
// (N must be 1), in this order:
//   "stream read, c chunks per thread"  label "stream": common/stream_read.h over gemv_min_bytes of the
//                   shape (the ceiling), once per entry of `stream_chunks`;
//   the stage, its variants, the base (label "predecessor", at N = 1);
//   peers: cuBLAS FP16 on weights dequantized ahead of time (common/peers.h), and cuBLASLt's NVFP4
//   GEMM at N = 1 where it exists (sm_100).
// Every row counts GB/s in gemv_min_bytes (so GB/s compare times), and "of_stream", its GB/s over
// the fastest stream-read row of the same shape; the FP16 peer adds "own_GB/s", the bytes it moves.
int run_gemv(int argc, char** argv, const Stage& self, const char* base_id, const std::vector<Shape>& shapes,
             const std::vector<Variant>& variants = {}, const std::vector<int>& stream_chunks = {4});

// The timing loop the GEMM benchmarks use, for a stage's own extra benchmarks: launch(set, stream)
// is timed, cycling through `sets` input sets after a warm-up, by graph replays or per-launch events
// as described above (so `launch` must be capturable: no allocation or synchronisation once warm);
// counters TFLOP/s (when flops > 0), GB/s, peak_fraction (of `peak_tflops`, when > 0), input_sets
// and launches_per_graph are set.
void time_launches(benchmark::State& state, int sets, const std::function<void(int, cudaStream_t)>& launch,
                   double flops, double bytes, double peak_tflops);
// How many copies of `bytes_per_set` cover at least twice the L2 cache.
int sets_covering_l2(double bytes_per_set);

}  // namespace gemm::bench
