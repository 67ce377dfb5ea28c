// What every stageNN program shares: its options, its run-check-time step and its summary line. The
// walkthrough text itself (the part worth reading) lives in each stage's main.cu.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/registry.h"

namespace gemm::program {

struct Options {
  int M = 4096, N = 4096, K = 4096, L = 1;
  uint64_t seed = 1;
  int iters = 20;
  std::string summary;  // --summary FILE: append one tab-separated result line (the tutorial runner reads it)
  std::map<std::string, std::string> extra;  // a stage's own "--flag value" options
};

// --m --n --k --l --seed --iters --summary, plus the stage's own `extra_flags` (each taking a
// value); --help prints usage and exits.
Options parse(int argc, char** argv, const Stage& stage, Options defaults,
              const std::vector<std::string>& extra_flags = {});

void banner(const Stage& stage);
void section(const char* title);

// What the compiler gave a kernel (registers, shared and local memory per thread) and the occupancy
// that follows, read from the GPU's function attributes; prints why not where there is no GPU.
void print_resources(const char* name, const void* kernel, int threads_per_block, int dynamic_smem_bytes = 0);

struct Result {
  std::string status = "SKIPPED";  // PASSED, FAILED or SKIPPED (no GPU)
  std::string why;                  // for SKIPPED/FAILED
  double ms = 0, tflops = 0, gbps = 0, peak_fraction = 0;
  std::string peak_name;            // what peak_fraction is of; "EMULATED" where the time is not performance
  int64_t checked = 0;
  std::string note;                 // e.g. "tcgen05 emulated: timing is not performance"
};

// Realistic-tier inputs at the options' shape: run once on a NaN-poisoned C, check against the CPU
// reference (every output for small problems, otherwise corners, tails and random samples), then
// time `iters` launches with CUDA events and report the median. No GPU: status SKIPPED.
Result run_and_check(const Stage& stage, const Options& o);

// Prints the result, appends the summary line, and returns the exit code (1 when FAILED).
int finish(const Stage& stage, const Options& o, const Result& r);

}  // namespace gemm::program
