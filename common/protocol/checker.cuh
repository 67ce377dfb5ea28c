// The protocol checker, device side: the hooks the PTX wrappers of common/ptx call around every TMA,
// mbarrier and tcgen05 operation, and the rules they enforce. The model is in checker_state.h and,
// with every rule and its PTX ISA section, in docs/protocol_checker.md.
//
// Compiled in only where GEMM_PROTOCOL_ACTIVE (common/ptx/arch.cuh): under the tcgen05 emulator on
// Hopper, and in the checked build. Elsewhere the wrappers call none of it.
//
// Concurrency: the state of one cluster is updated under that cluster's lock. The lanes of a warp are
// one logical thread, so most of what a lane records, another lane of its warp has often recorded
// already: each hook first looks, without the lock, whether its record would change anything (a wait
// whose phase the warp has learned, a fence with nothing new to cover, a barrier generation the warp
// has published into), and takes the lock only if it would. The lanes of a warp take their turns
// (WarpTurn, a lock per warp in shared memory) before the cluster's lock and look again once it is
// their turn, so a warp's 32 lanes arriving together cost one locked record, not 32, and at most one
// lane per warp waits for the cluster's lock. Counts that every thread contributes to (threads
// waiting, arrivals at CTA and cluster barriers, exits) are kept with atomics. A hook holds its turn
// and the lock through a Hold (detail/cluster.cuh), a scoped object that gives both back on every path
// out of the hook.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "common/protocol/checker_state.h"
#include "common/ptx/arch.cuh"
#include "common/tcgen05_desc.h"
#include "common/tcgen05_desc_kinds.h"

namespace gemm::protocol {

#if GEMM_PROTOCOL_CHECK
// This translation unit's copy of the checker's state pointers; bind() fills it.
static __device__ State g_protocol;

// Host: bind the checker to this source file's kernels (no-op where it is not needed). The launch door
// runs it before the file's first launch (registered by common/ptx/mbarrier.cuh).
static inline void bind() {
  static bool bound = false;
  if (bound) return;
  if (const State* s = checker_state_for(GEMM_PROTOCOL_CHECK)) {
    if (cudaMemcpyToSymbol(g_protocol, s, sizeof(*s)) != cudaSuccess) {
      std::fprintf(stderr, "protocol checker: could not bind its state\n");
      return;
    }
  }
  bound = true;
}
#else
static inline void bind() {}
#endif

}  // namespace gemm::protocol

// The checker's parts, in the order each needs the ones before it (each is a page or two; the hooks'
// own files say which wrappers call them):
#define GEMM_PROTOCOL_CHECKER_PARTS 1
#include "common/protocol/detail/identity.cuh"     // threads, agents, vector clocks
#include "common/protocol/detail/report.cuh"       // Violation and its message; trap or report mode
#include "common/protocol/detail/cluster.cuh"      // the cluster's state, its lock, a hook's Hold
#include "common/protocol/detail/barriers.cuh"     // shadow mbarriers, barrier generations, deadlock
#include "common/protocol/detail/memory.cuh"       // shared-memory lines and Tensor Memory cells
#include "common/protocol/detail/tensor_core.cuh"  // what an mma or cp reads and writes
#include "common/protocol/hooks/mbarrier.cuh"      // init, arrive, wait
#include "common/protocol/hooks/copies.cuh"        // TMA loads, multicast copies, TMA stores
#include "common/protocol/hooks/generic.cuh"       // declared generic accesses, fence.proxy.async
#include "common/protocol/hooks/tcgen05_mma.cuh"   // tcgen05 fences, mma, cp, commit
#include "common/protocol/hooks/tensor_memory.cuh" // tcgen05.ld, alloc, dealloc
#include "common/protocol/hooks/named.cuh"         // bar.sync / bar.arrive with an id
#include "common/protocol/hooks/sync.cuh"          // CTA and cluster barriers, kernel entry and exit
#undef GEMM_PROTOCOL_CHECKER_PARTS
