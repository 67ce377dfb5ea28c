// How long a bounded wait waits before it gives up and traps with a message: the debug-build
// mbarrier waits (common/ptx/mbarrier.cuh), and, under the tcgen05 emulator, tcgen05.alloc, the
// alloc rendezvous of a CTA pair and the waits on barriers that commits arrive on.
//
// A real wait in these kernels lasts microseconds; a deadline only has to separate "slow" from
// "never". What is slow depends on how the kernel runs:
//   default                        2 s
//   tcgen05 emulated (Hopper)      x 10: an emulated MMA takes milliseconds, a tile thousands of them
//   under an injected tool         x 50: compute-sanitizer and Nsight Compute slow kernels by one to
//                                  two orders of magnitude; compute-sanitizer sets
//                                  NV_SANITIZER_INJECTION_* in the program's environment, Nsight
//                                  Compute CUDA_INJECTION64_PATH: either is taken as the sign
//   GEMM_WAIT_TIMEOUT_S=<seconds>  overrides all of the above (a positive number)
#pragma once

namespace gemm {

inline constexpr unsigned long long kDefaultWaitTimeoutNs = 2'000'000'000ull;

// The deadline for this process, in nanoseconds (computed once).
unsigned long long bounded_wait_timeout_ns();

// Whether a tool that slows kernels down (compute-sanitizer, Nsight Compute) runs this process.
bool under_injected_tool();

}  // namespace gemm
