// 256-bit global loads, new on sm_100: ld.global.nc{.L1::no_allocate{.L2::256B}}.v8.b32 moves eight
// 32-bit words from one address in one instruction. PTX ISA 9.1, 9.7.9.9 (ld.global.nc: .v8 with
// .b32 needs PTX ISA 8.8 and sm_100) and 6.4.1 (Addresses as Operands).
//
// Compiled for sm_100a each wrapper is its instruction and nothing else. Compiled for Hopper in the
// precondition build (common/ptx/arch.cuh), each first checks what the instruction requires of its
// address, trapping with the rule's name (common/ptx/precondition.cuh), then moves the same bytes
// with two 16-byte loads of the same cache policy:
//   - the address is a global address: 9.7.9.9, "The address operand a shall contain a global
//     address", and .v8 exists only for the .global state space;
//   - it is aligned to the access size, 32 bytes: 6.4.1, "The address must be naturally aligned to a
//     multiple of the access size"; otherwise the behaviour is undefined (the low address bits may
//     be dropped silently, or the load may fault).
// Not checked: .nc also asks that the bytes do not change while the kernel runs.
// No other build calls these wrappers on Hopper: the code that uses them takes that path only where
// GEMM_SM100_PATHS is set.
#pragma once

#include <cstdint>

#include "common/ptx/arch.cuh"
#include "common/ptx/precondition.cuh"

namespace gemm::ptx {

inline constexpr uint32_t kV8B32Bytes = 32;  // the access size of .v8.b32: eight 4-byte words

// Hopper, precondition build: the address rules of a .v8.b32 load, checked before the work is done.
__device__ __forceinline__ void check_v8_b32_address(const char* instruction, const void* p) {
  const uint64_t address = reinterpret_cast<uintptr_t>(p);
  if (!__isGlobal(p))
    precondition_failed(instruction, "the address must be a global address (PTX ISA 9.7.9.9)", address);
  if (address % kV8B32Bytes != 0)
    precondition_failed(instruction, "the address must be 32-byte aligned, the access size (PTX ISA 6.4.1)", address);
}

// ld.global.nc.v8.b32: through L1 (the read-only path).
__device__ __forceinline__ void ld_global_nc_v8_b32(const void* p, uint32_t (&w)[8]) {
#if GEMM_HAS_SM100A_INSTRUCTIONS
  asm volatile("ld.global.nc.v8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];"
               : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]), "=r"(w[4]), "=r"(w[5]), "=r"(w[6]), "=r"(w[7])
               : "l"(p));
#else
  check_v8_b32_address("ld.global.nc.v8.b32", p);
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4+16];" : "=r"(w[4]), "=r"(w[5]), "=r"(w[6]), "=r"(w[7]) : "l"(p));
#endif
}

// ld.global.nc.L1::no_allocate.v8.b32: bytes used once, kept out of L1.
__device__ __forceinline__ void ld_global_nc_L1_no_allocate_v8_b32(const void* p, uint32_t (&w)[8]) {
#if GEMM_HAS_SM100A_INSTRUCTIONS
  asm volatile("ld.global.nc.L1::no_allocate.v8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];"
               : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]), "=r"(w[4]), "=r"(w[5]), "=r"(w[6]), "=r"(w[7])
               : "l"(p));
#else
  check_v8_b32_address("ld.global.nc.L1::no_allocate.v8.b32", p);
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4+16];"
               : "=r"(w[4]), "=r"(w[5]), "=r"(w[6]), "=r"(w[7]) : "l"(p));
#endif
}

// ld.global.nc.L1::no_allocate.L2::256B.v8.b32: as above, and L2 asked to fetch the 256-byte line.
__device__ __forceinline__ void ld_global_nc_L1_no_allocate_L2_256B_v8_b32(const void* p, uint32_t (&w)[8]) {
#if GEMM_HAS_SM100A_INSTRUCTIONS
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];"
               : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]), "=r"(w[4]), "=r"(w[5]), "=r"(w[6]), "=r"(w[7])
               : "l"(p));
#else
  check_v8_b32_address("ld.global.nc.L1::no_allocate.L2::256B.v8.b32", p);
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4+16];"
               : "=r"(w[4]), "=r"(w[5]), "=r"(w[6]), "=r"(w[7]) : "l"(p));
#endif
}

}  // namespace gemm::ptx
