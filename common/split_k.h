// Split-K on the host (stage 08): how many K ranges to split each output tile into, and the workspace
// the splits meet in. The kernel side (who writes a partial, who adds them) is the stage's kernel.cuh.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cuda_check.h"
#include "common/device_buffer.h"

namespace gemm::split_k {

// ---- The heuristic ------------------------------------------------------------------------------------
//
// When a problem has fewer output tiles than the GPU has pairs (the M = 128 shapes), splitting K into s
// ranges puts up to s times as many pairs to work, but every split but the last to arrive writes an FP32
// partial of its rows that the last reads back: bytes the GEMM would not otherwise move. The choice is
// the s (1..kMaxSplits, every K range at least kMinKTilesPerSplit k-tiles) whose lower bound on a B200
// is smallest, by the model of docs/b200_model.py with the B200's published rates, whatever GPU this
// runs on (the pair count is this GPU's own):
//   tensor time = waves x (2 x tile_m x tile_n x tile_k x k-tiles of the longest range) / (2 SMs x 9e15/148)
//   DRAM time   = (min_bytes + (s - 1) x 2 x 4 x rows x columns of a tile x tiles) / 8e12 B/s
//   bound       = max(tensor time, DRAM time); ties (within 1%) go to the smaller s.
inline constexpr double kModelSmFlops = 9e15 / 148;       // B200 dense NVFP4 per SM (published: 9 PFLOP/s, 148 SMs)
inline constexpr double kModelDramBytesPerSecond = 8e12;  // B200 HBM3e (published: 8 TB/s)
inline constexpr int kMaxSplits = 16;                     // K ranges per tile at most
inline constexpr int kMinKTilesPerSplit = 2;              // a K range keeps at least two k-tiles in the pipeline
inline constexpr double kTie = 0.01;                      // a larger s must lower the bound by more than 1%

struct Problem {
  int tiles;                    // output tiles of all batches
  int k_tiles;                  // k-tiles of K
  int pairs;                    // pairs that run units at once
  double min_bytes;             // bytes the GEMM must move at least (gemm::min_bytes)
  double tile_rows, tile_cols;  // valid outputs of a full tile (M and N may be smaller than a tile)
  int tile_m, tile_n, tile_k;   // the kernel's output tile and k-tile
  int sms_per_pair;             // SMs that issue one unit's MMAs (2: a CTA pair)
};

inline double bound_seconds(const Problem& p, int s) {
  const int units = p.tiles * s, waves = (units + p.pairs - 1) / p.pairs;
  const int longest = (p.k_tiles + s - 1) / s;
  const double tensor = waves * (2.0 * p.tile_m * p.tile_n * p.tile_k * longest) / (p.sms_per_pair * kModelSmFlops);
  const double partial_bytes = double(s - 1) * 2.0 * 4.0 * p.tile_rows * p.tile_cols * p.tiles;
  const double dram = (p.min_bytes + partial_bytes) / kModelDramBytesPerSecond;
  return std::max(tensor, dram);
}

inline int max_splits(int k_tiles) { return std::min(kMaxSplits, std::max(1, k_tiles / kMinKTilesPerSplit)); }

inline int choose(const Problem& p) {
  if (p.tiles >= p.pairs) return 1;
  int best = 1;
  double best_t = bound_seconds(p, 1);
  for (int s = 2; s <= max_splits(p.k_tiles); ++s) {
    const double t = bound_seconds(p, s);
    if (t < (1.0 - kTie) * best_t) best = s, best_t = t;
  }
  return best;
}

// ---- The workspace ------------------------------------------------------------------------------------
//
// One device buffer per stream, so that launches on different streams never share counters or
// partials; launches on one stream run one after the other and take turns. Streams are told apart by
// their handle (cudaStreamGetId would be unique for the context's lifetime, but a stream that is
// capturing refuses it): a handle that CUDA hands out again after cudaStreamDestroy inherits the
// buffer, which is harmless once the destroyed stream's work has finished. It is allocated (or grown)
// on a stream's first launch that needs more, and zeroed by cudaMemsetAsync on that stream, ahead of the
// kernel in stream order; every launch leaves its counters at zero again. A buffer that is outgrown is
// kept, not freed, until the process ends: a CUDA graph captured before the growth still points at it.
// Rules that follow: a stream's first launch of a size must come before a capture on that stream (as
// the benchmarks' warm-up does; a capture that would allocate throws instead), and a graph uses the
// workspace of the stream it was captured on, so two replays of such graphs must not run at once.
class StreamWorkspaces {
 public:
  // One stream's workspace: `counters` (zero between launches) and `partials`, each at least as large
  // as asked. The counters always come first and keep their place for the buffer's life, so that no
  // launch's partials ever lie where another launch's counters are.
  struct Regions {
    int* counters;
    float* partials;
  };

  Regions get(cudaStream_t stream, size_t counter_bytes, size_t partial_bytes, const char* who) {
    std::lock_guard<std::mutex> guard(lock_);
    Entry& e = by_stream_[stream];
    if (e.buffer && e.counter_bytes >= counter_bytes && e.partial_bytes >= partial_bytes) return e.regions();
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    CUDA_CHECK(cudaStreamIsCapturing(stream, &capturing));
    if (capturing != cudaStreamCaptureStatusNone)
      throw std::runtime_error(std::string(who) + ": the split-K workspace of this stream must grow (to " +
                               std::to_string(counter_bytes) + " bytes of counters and " +
                               std::to_string(partial_bytes) + " of partials), which cannot happen during a "
                               "capture; launch once on this stream before capturing");
    if (e.buffer) retired_.push_back(std::move(e.buffer));  // a captured graph may still use it
    e.counter_bytes = std::max({(counter_bytes + 255) / 256 * 256, e.counter_bytes, size_t(4096)});
    e.partial_bytes = std::max({partial_bytes, 2 * e.partial_bytes, size_t(1) << 20});  // few growths
    e.buffer = std::make_unique<DeviceBuffer<unsigned char>>(e.counter_bytes + e.partial_bytes);
    CUDA_CHECK(cudaMemsetAsync(e.buffer->get(), 0, e.counter_bytes, stream));
    return e.regions();
  }

 private:
  struct Entry {
    std::unique_ptr<DeviceBuffer<unsigned char>> buffer;
    size_t counter_bytes = 0, partial_bytes = 0;
    Regions regions() const {
      return {reinterpret_cast<int*>(buffer->get()), reinterpret_cast<float*>(buffer->get() + counter_bytes)};
    }
  };
  std::mutex lock_;
  std::map<cudaStream_t, Entry> by_stream_;
  std::vector<std::unique_ptr<DeviceBuffer<unsigned char>>> retired_;
};

}  // namespace gemm::split_k
