// The static schedule of a persistent kernel (stages 06-08), printed the same way by every stage
// program: what a problem becomes (tiles, K ranges, units of work) and how the units fall on the pairs.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace gemm::program {

// A B200 has 148 SMs (NVIDIA's published figure), so 74 CTA pairs: the GPU the kernels are built for,
// shown next to the GPU a program runs on.
inline constexpr int kB200Sms = 148;

struct ScheduleSummary {
  int M, N, K, L;
  int tile_m, tile_n, tile_k;  // output tile of a pair and k-tile
  int tiles_m, tiles_n;        // output tiles per batch
  int splits;                  // K ranges per tile (1: K is not split)
  int units;                   // units of work: tiles x L x splits
  int pairs;                   // pairs launched (no more than units)
};

// Two lines: the problem in tiles, then the units on `pairs_available` pairs of `gpu`.
inline void print_schedule(const ScheduleSummary& s, int pairs_available, const std::string& gpu) {
  const int tiles = s.tiles_m * s.tiles_n * s.L, k_tiles = (s.K + s.tile_k - 1) / s.tile_k;
  const int waves = (s.units + s.pairs - 1) / s.pairs;
  std::printf("  %d x %d x %d (L = %d): %d x %d tiles of %d x %d per batch = %d tiles; %d k-tiles of %d\n", s.M, s.N,
              s.K, s.L, s.tiles_m, s.tiles_n, s.tile_m, s.tile_n, tiles, k_tiles, s.tile_k);
  const std::string split = s.splits > 1 ? "K split in " + std::to_string(s.splits) : "K not split";
  std::printf("    on %s, %d pairs: %s -> %d units on %d pairs (pair p: units p, p + %d, ...), %d wave%s, %.0f%% of "
              "the pairs busy on average\n",
              gpu.c_str(), pairs_available, split.c_str(), s.units, s.pairs, s.pairs, waves, waves == 1 ? "" : "s",
              100.0 * s.units / (double(waves) * pairs_available));
}

// The unit number of every tile of a tiles_m x tiles_n grid (one batch, K not split), as a table;
// `tile_of(u, tm, tn)` gives the tile of unit u. Rows past `group_m` end a group of tile-rows.
inline void print_tile_order(int tiles_m, int tiles_n, int group_m,
                             const std::function<void(int u, int& tm, int& tn)>& tile_of) {
  std::vector<int> order(size_t(tiles_m) * tiles_n, -1);
  for (int u = 0; u < tiles_m * tiles_n; ++u) {
    int tm = 0, tn = 0;
    tile_of(u, tm, tn);
    order[size_t(tm) * tiles_n + tn] = u;
  }
  std::printf("           ");
  for (int n = 0; n < tiles_n; ++n) std::printf(" n%-3d", n);
  std::printf("\n");
  for (int m = 0; m < tiles_m; ++m) {
    std::printf("  tile m%-2d ", m);
    for (int n = 0; n < tiles_n; ++n) std::printf(" %3d ", order[size_t(m) * tiles_n + n]);
    std::printf("%s\n", (m + 1) % group_m == 0 ? "   <- end of a group of tile-rows" : "");
  }
  std::printf("  Pairs busy at the same time work on neighbouring units: a few rows of A, a few columns of B.\n");
}

}  // namespace gemm::program
