// Host side of the tcgen05 emulator: the emulated Tensor Memory and its allocator live in global
// memory, one 128-lane x 512-column x 32-bit array (256 KB) and one allocation table per SM.
#pragma once

#include <cstdint>

namespace gemm::emu {

inline constexpr int kUnitColumns = 32;                    // allocation granule
inline constexpr int kUnits = 512 / kUnitColumns;          // 16 granules per SM

// Per SM: a spin lock and, per 32-column unit, 0 when free or (start_unit + 1) << 8 | size_units
// of the allocation that holds it.
struct SmAllocator {
  int lock;
  uint32_t owner[kUnits];
};

struct State {
  uint32_t* tmem = nullptr;            // [sm][lane 0..127][column 0..511]
  SmAllocator* allocators = nullptr;   // [sm]
  int num_sms = 0;
};

// Allocates the emulated Tensor Memory once per process (zeroed), or returns nullptr on a GPU with
// real Tensor Memory (sm_100) or without a usable GPU.
const State* emulator_state();

// Number of 32-column units still allocated on any SM (for tests: 0 after every kernel that
// deallocated what it allocated).
int allocated_units();

// Clears the allocation tables (for tests that deliberately leak or trap).
void reset_allocations();

}  // namespace gemm::emu
