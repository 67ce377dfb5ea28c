// The tutorial runner: runs every stage program in order (their walkthroughs stream to the
// terminal), collects each one's summary line, and ends with one table. Exit code 1 if any stage's
// check failed or a program crashed.
//
// usage: tutorial_runner <stage program> [<stage program> ...]    (the `tutorial` target passes them)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string field;
  while (std::getline(ss, field, '\t')) out.push_back(field);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <stage program>...\n", argv[0]);
    return 2;
  }
  char path[] = "/tmp/gemm_tutorial_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) {
    std::perror("mkstemp");
    return 2;
  }
  close(fd);

  std::vector<std::string> crashed;
  for (int i = 1; i < argc; ++i) {
    const std::string cmd = std::string("'") + argv[i] + "' --summary '" + path + "'";
    std::fflush(stdout);
    const int rc = std::system(cmd.c_str());
    if (rc != 0 && rc != (1 << 8)) crashed.push_back(std::string(argv[i]) + " (exit status " + std::to_string(rc) + ")");
  }

  std::ifstream in(path);
  std::string line;
  int failed = 0, skipped = 0, passed = 0;
  std::printf("\n================================================================================\n");
  std::printf(" Summary\n");
  std::printf("================================================================================\n");
  // Each line (common/harness/stage_program.cpp): id, check, shape, ms per launch, the figure of merit
  // and its unit (TFLOP/s for compute-bound stages, GB/s for memory-bound ones), the fraction of what
  // it is measured against, that ceiling's name, a note.
  std::printf("%-16s %-7s %-16s %10s %12s %7s  %-15s %s\n", "stage", "check", "shape", "ms/launch", "result", "%",
              "of", "note");
  while (std::getline(in, line)) {
    const auto f = split_tabs(line);
    if (f.size() < 8) continue;
    const std::string& status = f[1];
    const std::string note = f.size() > 8 ? f[8] : "";
    const std::string& of = f[7];
    if (status == "SKIPPED") {
      ++skipped;
      std::printf("%-16s %-7s %-16s %10s %12s %7s  %-15s %s\n", f[0].c_str(), status.c_str(), f[2].c_str(), "-", "-",
                  "-", "-", note.c_str());
      continue;
    }
    status == "PASSED" ? ++passed : ++failed;
    char result[64];
    std::snprintf(result, sizeof result, "%.2f %s", std::atof(f[4].c_str()), f[5] == "GB/s" ? "GB/s" : "TF/s");
    if (of == "EMULATED")  // the emulator's time: no TFLOP/s, no fraction of any peak
      std::printf("%-16s %-7s %-16s %10.4f %12s %7s  %-15s %s\n", f[0].c_str(), status.c_str(), f[2].c_str(),
                  std::atof(f[3].c_str()), "-", "-", "emulated", "tcgen05 emulated: a correctness run");
    else
      std::printf("%-16s %-7s %-16s %10.4f %12s %6.1f%%  %-15s %s\n", f[0].c_str(), status.c_str(), f[2].c_str(),
                  std::atof(f[3].c_str()), result, 100.0 * std::atof(f[6].c_str()), of.c_str(), note.c_str());
  }
  std::remove(path);
  for (const auto& c : crashed) std::printf("CRASHED: %s\n", c.c_str());
  std::printf("(ms/launch: median per launch, timed as the benchmarks time it (CUDA graphs over input sets rotated\n"
              " past the L2; a problem too small for that, launches after an L2 flush). %%: compute-bound stages\n"
              " against the FP32 CUDA-core FMA peak or, for the tcgen05 stages on an sm_100 GPU, the dense NVFP4\n"
              " tensor-core peak, at the GPU's max clock; memory-bound stages (the GEMV) in GB/s against a\n"
              " streaming read of the same bytes timed beside them. The tcgen05 stages run emulated on other\n"
              " GPUs: their times are not performance.)\n");
  std::printf("\n%d passed, %d failed, %d skipped\n", passed, failed + int(crashed.size()), skipped);
  return (failed || !crashed.empty()) ? 1 : 0;
}
