// A timeline of what each role of a warp-specialised kernel does: one event per step (a wait, the
// MMAs of a work unit, an epilogue), with %globaltimer stamps, recorded into a device buffer during
// one run. docs/timeline.py turns the JSON this writes into a Chrome/Perfetto trace and an SVG.
//
// Recording is off unless the launcher is given a buffer (a null Buffer costs one branch per step).
// Under the tcgen05 emulator the stamps show the order and overlap of the roles, not their speed.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/cuda_check.h"
#include "common/device_buffer.h"

namespace gemm::timeline {

enum Role : uint32_t { kProducer = 0, kMma = 1, kEpilogue = 2 };
enum Step : uint32_t {
  kLoadUnit = 0,        // producer: every k-tile of a unit, waits for free slots included
  kWaitAccEmpty = 1,    // MMA: waiting for the epilogue to release an accumulator buffer
  kIssueUnit = 2,       // MMA: the unit's cp/mma/commit, waits for full slots included
  kWaitAccFull = 3,     // epilogue: waiting for the unit's final commit
  kDrainTmem = 4,       // epilogue: tcgen05.ld of the accumulator, until it is released
  kStoreC = 5,          // epilogue: alpha, FP16, stores (or the split-K partial and its reduction)
};
inline const char* role_name(uint32_t r) { return r == kProducer ? "producer" : r == kMma ? "mma" : "epilogue"; }
inline const char* step_name(uint32_t s) {
  static const char* const kNames[] = {"load unit", "wait acc empty", "issue unit", "wait acc full", "drain TMEM",
                                       "store C"};
  return s < 6 ? kNames[s] : "?";
}

struct Event {
  unsigned long long start_ns, end_ns;
  uint32_t block, role, step, unit;
};

// What the kernel gets: where to write, or nothing (events == nullptr).
struct Buffer {
  Event* events = nullptr;
  uint32_t* count = nullptr;
  uint32_t capacity = 0;
};

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void record(const Buffer& b, uint32_t role, uint32_t step, uint32_t unit,
                                       unsigned long long start, unsigned long long end) {
  if (!b.events) return;
  const uint32_t i = atomicAdd(b.count, 1u);
  if (i < b.capacity) b.events[i] = Event{start, end, blockIdx.x, role, step, unit};
}

// The steps of one role in one unit, in one line each: `Steps t(trace, kMma, u, lane == 0);` at the
// unit's start, then `t.mark(kWaitAccEmpty)` where a step ends; each mark records the time since the
// previous one. `on` picks the thread that records (one per role and CTA).
struct Steps {
  const Buffer& b;
  uint32_t role, unit;
  bool on;
  unsigned long long last;
  __device__ Steps(const Buffer& buffer, uint32_t r, uint32_t u, bool recorder)
      : b(buffer), role(r), unit(u), on(recorder && buffer.events != nullptr), last(on ? now_ns() : 0) {}
  __device__ void mark(uint32_t step) {
    if (!on) return;
    const unsigned long long t = now_ns();
    record(b, role, step, unit, last, t);
    last = t;
  }
};

// Host side: owns the device buffer, and writes what was recorded as JSON.
class Recorder {
 public:
  explicit Recorder(uint32_t capacity) : events_(capacity), count_(1) { count_.fill_bytes(0); }
  Buffer buffer() const { return Buffer{events_.get(), count_.get(), uint32_t(events_.size())}; }

  // {"meta": {...}, "events": [[block, role, step, unit, start_ns, end_ns], ...]}; times relative to
  // the first event. `meta` is a list of (key, value) strings (GPU, shape, "EMULATED", ...).
  void write_json(const std::string& path, const std::vector<std::pair<std::string, std::string>>& meta) const {
    const uint32_t n = std::min<uint32_t>(count_.download()[0], uint32_t(events_.size()));
    std::vector<Event> ev = events_.download();
    ev.resize(n);
    unsigned long long t0 = ~0ull;
    for (const Event& e : ev) t0 = std::min(t0, e.start_ns);
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw std::runtime_error("cannot write " + path);
    std::fprintf(f, "{\"meta\": {");
    for (size_t i = 0; i < meta.size(); ++i)
      std::fprintf(f, "%s\"%s\": \"%s\"", i ? ", " : "", meta[i].first.c_str(), meta[i].second.c_str());
    std::fprintf(f, "%s\"dropped_events\": \"%u\"},\n \"columns\": [\"block\", \"role\", \"step\", \"unit\", "
                 "\"start_ns\", \"end_ns\"],\n \"events\": [",
                 meta.empty() ? "" : ", ", count_.download()[0] > n ? count_.download()[0] - n : 0u);
    for (size_t i = 0; i < ev.size(); ++i)
      std::fprintf(f, "%s\n  [%u, %u, %u, %u, %llu, %llu]", i ? "," : "", ev[i].block, ev[i].role, ev[i].step,
                   ev[i].unit, ev[i].start_ns - t0, ev[i].end_ns - t0);
    std::fprintf(f, "\n]}\n");
    const bool failed = std::ferror(f) != 0;
    if (std::fclose(f) != 0 || failed) throw std::runtime_error("could not write all of " + path);
  }

 private:
  DeviceBuffer<Event> events_;
  DeviceBuffer<uint32_t> count_;
};

}  // namespace gemm::timeline
