#include "common/emu/tcgen05_emu_state.h"

#include <cuda_runtime.h>

#include <vector>

#include "common/cuda_check.h"
#include "common/deadline.h"
#include "common/device_info.h"

namespace gemm::emu {
namespace {

template <class T>
T* zeroed(size_t count) {
  T* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
  CUDA_CHECK(cudaMemset(p, 0, count * sizeof(T)));
  return p;
}

}  // namespace

const State* emulator_state() {
  static const State* state = []() -> const State* {
    const GpuInfo& g = gpu_info();
    if (!g.usable || g.tcgen05_native()) return nullptr;
    auto* s = new State;  // lives as long as the process, like the allocations it describes
    const size_t sms = size_t(g.sm_count);
    s->num_sms = g.sm_count;
    s->tmem = zeroed<uint32_t>(sms * 128 * 512);
    s->allocators = zeroed<SmAllocator>(sms);
    s->columns = zeroed<ColumnState>(sms * 512);
    s->records = zeroed<CtaRecord>(sms * kUnits);
    s->rendezvous = zeroed<Rendezvous>(kRendezvousSlots);
    s->options = zeroed<Options>(1);
    const Options o{bounded_wait_timeout_ns(), 0};
    CUDA_CHECK(cudaMemcpy(s->options, &o, sizeof o, cudaMemcpyHostToDevice));
    return s;
  }();
  return state;
}

void set_strict(bool strict) {
  if (const State* s = emulator_state()) {
    const int v = strict ? 1 : 0;
    CUDA_CHECK(cudaMemcpy(&s->options->strict, &v, sizeof v, cudaMemcpyHostToDevice));
  }
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
  if (const State* s = emulator_state()) {
    CUDA_CHECK(cudaMemset(s->allocators, 0, size_t(s->num_sms) * sizeof(SmAllocator)));
    CUDA_CHECK(cudaMemset(s->rendezvous, 0, size_t(kRendezvousSlots) * sizeof(Rendezvous)));
  }
}

}  // namespace gemm::emu
