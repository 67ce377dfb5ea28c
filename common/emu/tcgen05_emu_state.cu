#include "common/emu/tcgen05_emu_state.h"

#include <cuda_runtime.h>

#include <vector>

#include "common/cuda_check.h"
#include "common/device_info.h"

namespace gemm::emu {

const State* emulator_state() {
  static const State* state = []() -> const State* {
    const GpuInfo& g = gpu_info();
    if (!g.usable || g.tcgen05_native()) return nullptr;
    auto* s = new State;  // lives as long as the process, like the allocation it describes
    s->num_sms = g.sm_count;
    const size_t tmem_words = size_t(g.sm_count) * 128 * 512;
    CUDA_CHECK(cudaMalloc(&s->tmem, tmem_words * sizeof(uint32_t)));
    CUDA_CHECK(cudaMemset(s->tmem, 0, tmem_words * sizeof(uint32_t)));
    CUDA_CHECK(cudaMalloc(&s->allocators, size_t(g.sm_count) * sizeof(SmAllocator)));
    CUDA_CHECK(cudaMemset(s->allocators, 0, size_t(g.sm_count) * sizeof(SmAllocator)));
    return s;
  }();
  return state;
}

int allocated_units() {
  const State* s = emulator_state();
  if (!s) return 0;
  std::vector<SmAllocator> a(size_t(s->num_sms));
  CUDA_CHECK(cudaMemcpy(a.data(), s->allocators, a.size() * sizeof(SmAllocator), cudaMemcpyDeviceToHost));
  int n = 0;
  for (const auto& sm : a)
    for (uint32_t o : sm.owner) n += o != 0;
  return n;
}

void reset_allocations() {
  if (const State* s = emulator_state())
    CUDA_CHECK(cudaMemset(s->allocators, 0, size_t(s->num_sms) * sizeof(SmAllocator)));
}

}  // namespace gemm::emu
