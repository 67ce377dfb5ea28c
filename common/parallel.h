// parallel_for: split [0, n) into contiguous chunks over the machine's cores. Used by the CPU
// reference so that a 2048^3 check takes seconds, not minutes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace gemm {

template <class Fn>
void parallel_for(int64_t n, Fn&& fn) {
  const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(n, std::thread::hardware_concurrency()));
  if (workers <= 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::vector<std::thread> pool;
  const int64_t chunk = (n + workers - 1) / workers;
  for (int64_t w = 0; w < workers; ++w) {
    const int64_t begin = w * chunk, end = std::min(n, begin + chunk);
    if (begin >= end) break;
    pool.emplace_back([begin, end, &fn] {
      for (int64_t i = begin; i < end; ++i) fn(i);
    });
  }
  for (auto& t : pool) t.join();
}

}  // namespace gemm
