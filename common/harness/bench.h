// The benchmark procedure every stage's bench.cu runs (Google Benchmark, manual timing):
//   - the stage, its predecessor (from the registry, when linked) and the library peer, at the same
//     shapes in the same process, so ratios compare like with like;
//   - CUDA events around each launch; a warm-up before timing;
//   - inputs rotated over enough copies to cover at least twice the L2 cache, so no launch finds
//     its operands already cached by the previous one;
//   - counters: TFLOP/s (2 M N K L per launch), GB/s (the fewest bytes the GEMM must move), the
//     fraction of a named peak, and M, N, K, L; the label is the role (stage / predecessor / peer);
//   - context in the JSON: GPU, SM count, clocks, driver, CUDA runtime, commit, whether tcgen05 ran
//     emulated.
// Write the JSON with --benchmark_out=docs/data/<stage>.json --benchmark_out_format=json (the
// run_bench_stageNN and bench targets do).
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "common/registry.h"

namespace gemm::bench {

struct Shape {
  int M, N, K, L = 1;
};
std::vector<Shape> squares(std::initializer_list<int> sizes);

// The M = 128 shapes of a decode-like workload and the squares, for the NVFP4 stages.
std::vector<Shape> nvfp4_shapes();

// Registers and runs everything; returns the process exit code. `predecessor_id` is the stage the
// build lists before this one (bench.cu passes GEMM_PREDECESSOR_ID, which add_gemm_stage defines).
// `register_extra` may register further benchmarks (see time_launches) after the GEMMs.
int run(int argc, char** argv, const Stage& self, const char* predecessor_id, const std::vector<Shape>& shapes,
        const std::function<void()>& register_extra = {});

// The timing loop the GEMM benchmarks use, for a stage's own extra benchmarks: launch(set, stream)
// is timed with CUDA events, cycling through `sets` input sets after a warm-up; counters TFLOP/s
// (when flops > 0), GB/s and peak_fraction (of `peak_tflops`, when > 0) are set.
void time_launches(benchmark::State& state, int sets, const std::function<void(int, cudaStream_t)>& launch,
                   double flops, double bytes, double peak_tflops);
// How many copies of `bytes_per_set` cover at least twice the L2 cache.
int sets_covering_l2(double bytes_per_set);

}  // namespace gemm::bench
