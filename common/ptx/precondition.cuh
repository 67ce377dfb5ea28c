// The trap of the precondition build (common/ptx/arch.cuh, GEMM_SM100_PATHS_ON_HOPPER): where an
// sm_100a-only instruction, run on Hopper as Hopper instructions, is given an operand that the
// instruction itself would not accept, the kernel stops with a message naming the instruction, the
// rule and the operand, the way the tcgen05 emulator stops on a misused tcgen05 instruction. On the
// B200 such an operand is undefined behaviour (a fault at best, wrong bytes at worst); here it is the
// same trap every time. The death tests of common/test/test_sm100_paths.cu match the message.
#pragma once

#include <cstdint>
#include <cstdio>

// The prefix of every message: what a death test and a reader look for.
#define GEMM_PRECONDITION_PREFIX "sm_100a precondition"

namespace gemm::ptx {

// Prints "sm_100a precondition: <instruction>: <rule>: got 0x<value> (block x,y,z thread t)" once per
// warp (the lowest lane that got here) and traps.
static __device__ __noinline__ void precondition_failed(const char* instruction, const char* rule, uint64_t value) {
  uint32_t lower_lanes;
  asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(lower_lanes));
  if ((__activemask() & lower_lanes) == 0)
    printf(GEMM_PRECONDITION_PREFIX ": %s: %s: got 0x%llx (block %d,%d,%d thread %d)\n", instruction, rule,
           (unsigned long long)value, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x);
  __trap();
}

}  // namespace gemm::ptx
