// A model of shared-memory bank conflicts: 32 banks, 4 bytes wide; a request is served in
// "wavefronts", and lanes that need different 4-byte words of the same bank need different
// wavefronts (lanes reading the same word share it: a broadcast). Accesses wider than 4 bytes are
// split into phases of lanes that each move 128 bytes at most: 16 lanes for 8-byte accesses, 8 lanes
// for 16-byte accesses (CUDA C++ Programming Guide, "Shared Memory" of compute capability 5.x+).
// The stage programs print bank maps with it and the tests check swizzled layouts against it;
// Nsight Compute measures the real thing (docs/ncu_metrics.py).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace gemm {

inline constexpr int kBanks = 32;
inline constexpr int kBankBytes = 4;

inline int bank_of(uint32_t byte_address) { return int(byte_address / kBankBytes) % kBanks; }

struct BankReport {
  int wavefronts = 0;       // what the request costs
  int ideal = 0;            // what it would cost without conflicts
  int degree() const { return ideal ? wavefronts / ideal : 0; }  // 1 = conflict-free
};

// `addresses`: the byte address each of the 32 lanes accesses; `width`: 4, 8 or 16 bytes.
inline BankReport bank_conflicts(const std::vector<uint32_t>& addresses, int width) {
  const int lanes_per_phase = width == 16 ? 8 : width == 8 ? 16 : 32;
  BankReport r;
  for (size_t first = 0; first < addresses.size(); first += lanes_per_phase) {
    std::map<int, std::set<uint32_t>> words_per_bank;  // bank -> distinct 4-byte words it must serve
    for (size_t lane = first; lane < std::min(addresses.size(), first + lanes_per_phase); ++lane)
      for (int w = 0; w < width / kBankBytes; ++w) {
        const uint32_t word = addresses[lane] / kBankBytes + w;
        words_per_bank[int(word % kBanks)].insert(word);
      }
    int worst = 0;
    for (const auto& [bank, words] : words_per_bank) worst = std::max(worst, int(words.size()));
    r.wavefronts += worst;
    r.ideal += 1;
  }
  return r;
}

}  // namespace gemm
