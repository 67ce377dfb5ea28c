#include "common/protocol/checker_state.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cuda_check.h"
#include "common/device_info.h"
#include "common/emu/tcgen05_emu_state.h"

namespace gemm::protocol {

const State* checker_state() {
  static const State* state = []() -> const State* {
    if (!gpu_info().usable) return nullptr;
    auto* s = new State;  // lives as long as the process, like the allocations it describes
    CUDA_CHECK(cudaMalloc(&s->clusters, size_t(kClusterSlots) * sizeof(Cluster)));
    CUDA_CHECK(cudaMemset(s->clusters, 0, size_t(kClusterSlots) * sizeof(Cluster)));
    CUDA_CHECK(cudaMalloc(&s->control, sizeof(Control)));
    CUDA_CHECK(cudaMemset(s->control, 0, sizeof(Control)));
    // GEMM_PROTOCOL_MODE=report: a whole test run keeps going past a violation (each failing test
    // shows its message) instead of ending at the first trap.
    // GEMM_PROTOCOL_MODE=off: a checked binary runs unchecked (to time the checker's cost).
    if (const char* m = std::getenv("GEMM_PROTOCOL_MODE"); m && (std::string(m) == "report" || std::string(m) == "off")) {
      const int r = int(std::string(m) == "off" ? kOff : kReport);
      CUDA_CHECK(cudaMemcpy(&s->control->mode, &r, sizeof r, cudaMemcpyHostToDevice));
    }
    return s;
  }();
  return state;
}

const State* checker_state_for(int level) {
  if (level <= 0) return nullptr;
  // Level 1 compiles the checker only into device passes without tcgen05 (common/ptx/arch.cuh): a GPU
  // with native tcgen05 runs code that has none.
  if (level == 1 && gpu_info().tcgen05_native()) return nullptr;
  return checker_state();
}

// A mode asked for by the environment stays on for the whole process: report instead of trap, and
// off over anything.
static bool mode_from_environment(const char* which) {
  const char* m = std::getenv("GEMM_PROTOCOL_MODE");
  return m && std::string(m) == which;
}

void set_mode(Mode mode) {
  if (mode == kTrap && mode_from_environment("report")) mode = kReport;
  if (mode_from_environment("off")) mode = kOff;
  if (const State* s = checker_state()) {
    const int m = int(mode);
    CUDA_CHECK(cudaMemcpy(&s->control->mode, &m, sizeof m, cudaMemcpyHostToDevice));
  }
}

std::string take_violation() {
  const State* s = checker_state();
  if (!s) return "";
  Control c;
  CUDA_CHECK(cudaMemcpy(&c, s->control, sizeof c, cudaMemcpyDeviceToHost));
  if (!c.violations && !c.aborted) return "";
  c.message[kMessageBytes - 1] = 0;
  std::string text = c.message;
  // A kernel ended by a violation leaves its clusters' state (and, under the emulator, its Tensor
  // Memory) behind: clear both for the next launch.
  CUDA_CHECK(cudaMemset(s->clusters, 0, size_t(kClusterSlots) * sizeof(Cluster)));
  Control fresh{};
  fresh.mode = c.mode;
  CUDA_CHECK(cudaMemcpy(s->control, &fresh, sizeof fresh, cudaMemcpyHostToDevice));
  emu::reset_allocations();
  return text.empty() ? "protocol checker: a violation was recorded without a message" : text;
}

void throw_if_violation() {
  const std::string v = take_violation();
  if (!v.empty()) throw std::runtime_error(v);
}

}  // namespace gemm::protocol
