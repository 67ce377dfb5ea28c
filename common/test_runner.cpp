// The test runner: runs ctest on a build, then ends with one honest line,
//   "N passed, M skipped (why), F failed"
// where ctest's own summary counts skipped tests among the passed ("100% tests passed"). The `check`
// target runs it as the test workflow's last step; the exit code is ctest's, so a failure fails CI.
//
// Tests run in parallel, one per core up to 16 (`ctest -j N`), unless the arguments or
// CTEST_PARALLEL_LEVEL say otherwise. That is safe with a GPU too: every GPU test counts as 2 or 4
// processors (common/stage.cmake, gemm_discover_tests), so at most 8 share the GPU at once, few enough
// that the time-sliced GPU still meets the bounded waits' deadlines; on a machine with fewer cores
// than a test's weight ctest runs that test alone.
//
// usage: test_runner <ctest> <build dir> [more ctest arguments]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

namespace {

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string unescape_xml(std::string s) {
  const std::pair<const char*, const char*> entities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities)
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + 1)) s.replace(at, std::string(from).size(), to);
  return s;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Why a skipped test skipped: GoogleTest prints "<file>:<line>: Skipped" and then GTEST_SKIP()'s
// message; other tests (exit code 77) say why on their last line of output.
std::string skip_reason(const std::string& testcase) {
  std::string out;
  if (const size_t b = testcase.find("<system-out>"); b != std::string::npos) {
    const size_t e = testcase.find("</system-out>", b);
    out = unescape_xml(testcase.substr(b + 12, e == std::string::npos ? std::string::npos : e - b - 12));
  }
  if (const size_t at = out.find(": Skipped\n"); at != std::string::npos) {
    const size_t b = at + 10, e = out.find('\n', b);
    return trim(out.substr(b, e == std::string::npos ? std::string::npos : e - b));
  }
  out = trim(out);
  const size_t nl = out.find_last_of('\n');
  const std::string last = trim(nl == std::string::npos ? out : out.substr(nl + 1));
  return last.empty() ? "no reason given" : last;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <ctest> <build dir> [ctest arguments]\n", argv[0]);
    return 2;
  }
  const std::string build = argv[2];
  const std::string junit = build + "/Testing/results.xml";
  std::remove(junit.c_str());
  std::string cmd = quoted(argv[1]) + " --test-dir " + quoted(build) +
                    " --output-on-failure --no-tests=error --test-output-size-passed 8192 --output-junit " +
                    quoted(junit);
  bool parallel_given = std::getenv("CTEST_PARALLEL_LEVEL") != nullptr;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    parallel_given |= a.rfind("-j", 0) == 0 || a.rfind("--parallel", 0) == 0;
    cmd += " " + quoted(a);
  }
  if (!parallel_given) {
    const int jobs = std::clamp(int(std::thread::hardware_concurrency()), 1, 16);
    cmd += " -j " + std::to_string(jobs);
    std::printf("running the tests %d at a time (ctest -j %d; CTEST_PARALLEL_LEVEL overrides)\n", jobs, jobs);
  }
  std::fflush(stdout);
  const int status = std::system(cmd.c_str());
  const int rc = status == -1 ? 1 : WIFEXITED(status) ? WEXITSTATUS(status) : 1;

  std::ifstream in(junit);
  if (!in) {
    std::printf("\nno test results were written (ctest exit status %d)\n", rc);
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string xml = ss.str();
  int passed = 0, skipped = 0, failed = 0;
  std::map<std::string, int> reasons;
  for (size_t at = xml.find("<testcase "); at != std::string::npos; at = xml.find("<testcase ", at + 1)) {
    const size_t end = xml.find("</testcase>", at);
    const std::string tc = xml.substr(at, end == std::string::npos ? std::string::npos : end - at);
    const size_t s = tc.find("status=\"");
    const std::string status_text = s == std::string::npos ? "" : tc.substr(s + 8, tc.find('"', s + 8) - s - 8);
    if (status_text == "run") {
      ++passed;
    } else if (status_text == "notrun" || status_text == "disabled") {
      ++skipped;
      ++reasons[skip_reason(tc)];
    } else {
      ++failed;
    }
  }
  // The reasons, most frequent first.
  std::vector<std::pair<int, std::string>> by_count;
  for (const auto& [why, n] : reasons) by_count.push_back({n, why});
  std::sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string why;
  for (const auto& [n, text] : by_count) why += (why.empty() ? "" : "; ") + std::to_string(n) + ": " + text;
  std::printf("\n%d passed, %d skipped%s, %d failed\n", passed, skipped, why.empty() ? "" : (" (" + why + ")").c_str(),
              failed);
  return rc != 0 ? rc : (failed ? 1 : 0);
}
