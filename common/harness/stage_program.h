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
  std::map<std::string, std::string> extra;  // a stage's own options that were given, validated
  std::vector<int> shape_extra;  // the kind's Shape::extra for the run (a stage's own options set it)
};

// A stage's own option, always "--name VALUE" (or "--name=VALUE").
struct Flag {
  enum class Kind { kInteger, kOutputFile };
  const char* name;      // "--bn"
  const char* value;     // what --help calls the value: "BN", "FILE"
  const char* help;      // one or two lines for --help
  Kind kind = Kind::kInteger;
  int min = 1, max = 65535;         // kInteger: the allowed range...
  std::vector<int> choices = {};    // ...or, when not empty, the allowed values
  const char* requires_flag = nullptr;  // only meaningful together with this other option
  std::vector<const char*> names = {};  // kInteger: when not empty, the value is one of these words and
                                        // flag_int gives its index (the first is the default)
};

// The exit code of a program given bad arguments.
inline constexpr int kBadArgumentsExit = 2;

// Reads --m --n --k --l --iters --seed --summary and the stage's `flags`, each as "--name VALUE" or
// "--name=VALUE", and checks every value against its rule (sizes and L as the GEMM API requires them
// for the stage's precision, K a multiple of 32 for NVFP4, iterations >= 1, output files writable).
// A bad argument prints one message naming the option and the rule and exits with
// kBadArgumentsExit; --help prints every option and exits 0. Then, where a GPU is present that
// cannot run this program (common/device_info.h), prints one line saying what it needs, appends a
// SKIPPED line to --summary and exits 0. Also installs a last-resort handler: an exception that
// escapes main is reported in one line (exit 1), never as an abort.
Options parse(int argc, char** argv, const Stage& stage, Options defaults, const std::vector<Flag>& flags = {});

// A stage option's value as an integer (already validated by parse), or `fallback` when not given.
int flag_int(const Options& o, const char* name, int fallback);

void banner(const Stage& stage);
void section(const char* title);

// What the compiler gave a kernel (registers, shared and local memory per thread) and the occupancy
// that follows, read from the GPU's function attributes; prints why not where there is no GPU.
void print_resources(const char* name, const void* kernel, int threads_per_block, int dynamic_smem_bytes = 0);

struct Result {
  std::string status = "SKIPPED";  // PASSED, FAILED or SKIPPED (no GPU)
  std::string why;                  // for SKIPPED/FAILED
  double ms = 0, tflops = 0, gbps = 0, peak_fraction = 0;
  std::string peak_name;            // what peak_fraction is of ("stream read" for a memory-bound kind);
                                    // "EMULATED" where the time is not performance
  double ceiling_gbps = 0;          // a memory-bound kind: its streaming read, timed beside it
  std::string timing;               // how it was timed ("CUDA graphs, 8 input sets")
  int64_t checked = 0;
  std::string note;                 // e.g. "tcgen05 emulated: timing is not performance"
};

// Realistic-tier inputs at the options' shape: run once on a NaN-poisoned C, check against the CPU
// reference (every output for small problems, otherwise corners, tails and random samples), then
// time `iters` measurements as the benchmarks do (common/harness/timing.h: graph replays over inputs
// rotated past the L2, or, for a problem too small for that, launches after an L2 flush) and report
// the median per launch, with the kind's figure of merit (TFLOP/s and a fraction of a peak; GB/s and
// a fraction of the streaming read). No GPU: status SKIPPED.
Result run_and_check(const Stage& stage, const Options& o);

// Writes `contents` to `path` (an output file option, `flag`, that parse checked) and prints "wrote
// PATH" only when every byte reached the file; otherwise an error naming the option. Returns success.
bool write_output_file(const char* flag, const std::string& path, const std::string& contents);

// Prints the result, appends the summary line, and returns the exit code (1 when FAILED or when the
// summary line could not be written).
int finish(const Stage& stage, const Options& o, const Result& r);

}  // namespace gemm::program
