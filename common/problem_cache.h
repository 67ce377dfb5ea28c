// The host's per-problem work (validated arguments, encoded tensor maps, schedules), kept for the
// problems a program launched last. A layer of a model launches the same problem every step; a
// launcher that encodes several tensor maps per call pays microseconds of host time for work whose
// result depends on nothing but its arguments (stage 10: 5 maps per group).
//
//   static gemm::ProblemCache<std::vector<Nvfp4Group>, Tables> cache(16);
//   std::shared_ptr<const Tables> t = cache.get(args.groups, [&] { return make_tables(args); });
//
// The key is the whole of what the value is computed from (so a hit is always right, even for
// buffers freed and allocated again at the same addresses), compared with ==. `make` runs outside
// the lock and may throw: nothing is cached then. Thread-safe; least recently used entries go first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <utility>

namespace gemm {

template <class Key, class Value>
class ProblemCache {
 public:
  struct Stats {
    int64_t hits = 0, misses = 0;
  };

  explicit ProblemCache(size_t capacity) : capacity_(capacity) {}

  template <class Make>
  std::shared_ptr<const Value> get(const Key& key, Make&& make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto e = entries_.begin(); e != entries_.end(); ++e)
        if (e->first == key) {
          ++stats_.hits;
          entries_.splice(entries_.begin(), entries_, e);
          return entries_.front().second;
        }
    }
    auto value = std::make_shared<const Value>(make());
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.misses;
    entries_.emplace_front(key, value);
    if (entries_.size() > capacity_) entries_.pop_back();
    return value;
  }

  Stats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.clear();
  }

 private:
  size_t capacity_;
  std::mutex mutex_;
  std::list<std::pair<Key, std::shared_ptr<const Value>>> entries_;
  Stats stats_;
};

}  // namespace gemm
