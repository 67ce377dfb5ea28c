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
  std::printf("%-18s %-8s %-16s %10s %10s %8s  %-15s %s\n", "stage", "check", "shape", "time ms", "TFLOP/s", "% peak",
              "of peak", "note");
  while (std::getline(in, line)) {
    const auto f = split_tabs(line);
    if (f.size() < 6) continue;
    const std::string& status = f[1];
    const std::string note = f.size() > 6 ? f[6] : "";
    const std::string peak = f.size() > 7 ? f[7] : "";
    if (status == "SKIPPED") {
      ++skipped;
      std::printf("%-18s %-8s %-16s %10s %10s %8s  %-15s %s\n", f[0].c_str(), status.c_str(), f[2].c_str(), "-", "-",
                  "-", "-", note.c_str());
      continue;
    }
    status == "PASSED" ? ++passed : ++failed;
    if (peak == "EMULATED")  // the emulator's time: no TFLOP/s, no fraction of any peak
      std::printf("%-18s %-8s %-16s %10.3f %10s %8s  %-15s %s\n", f[0].c_str(), status.c_str(), f[2].c_str(),
                  std::atof(f[3].c_str()), "-", "-", "emulated", "tcgen05 emulated: a correctness run");
    else
      std::printf("%-18s %-8s %-16s %10.3f %10.2f %7.1f%%  %-15s %s\n", f[0].c_str(), status.c_str(), f[2].c_str(),
                  std::atof(f[3].c_str()), std::atof(f[4].c_str()), 100.0 * std::atof(f[5].c_str()), peak.c_str(),
                  note.c_str());
  }
  std::remove(path);
  for (const auto& c : crashed) std::printf("CRASHED: %s\n", c.c_str());
  std::printf("(%% peak: of the FP32 CUDA-core FMA peak (stages 00-04) or, on an sm_100 GPU, of the dense NVFP4\n"
              " tensor-core peak (stages 05-07), at the GPU's max clock; tcgen05 stages run emulated elsewhere)\n");
  std::printf("\n%d passed, %d failed, %d skipped\n", passed, failed + int(crashed.size()), skipped);
  return (failed || !crashed.empty()) ? 1 : 0;
}
