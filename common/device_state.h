// A translation unit's device state, and the one place that binds it before a launch.
//
// Without relocatable device code every CUDA source file is compiled on its own, and each gets its own
// copy of every device variable its headers define. Three such variables must be filled by the host
// before the file's kernels run, and two headers register the binders that fill them:
//   common/ptx/mbarrier.cuh      the deadline of bounded waits (common/deadline.h), and the protocol
//                                checker's state pointers (defined in common/protocol/checker.cuh;
//                                mbarrier.cuh says why it registers them)
//   common/emu/tcgen05_emu.cuh   the tcgen05 emulator's state (Hopper)
// A launcher cannot know which of them its file includes, nor in which order, so each of these headers
// registers its binders here, and the launch door (common/launch.cuh) runs every binder of the file
// before its first launch: bind_device_state().
//
// Stage 09 shows the registration at work: its file includes the cluster barrier, whose wrapper has
// checker hooks, but not mbarrier.cuh, so nothing binds the checker there and its hooks stay silent.
//
// Why a list filled at static initialisation. Each header adds its binder through a namespace-scope
// object whose constructor runs before main(), whatever order the headers were included in: the list
// is complete before any launcher runs, and a header included after the launcher's definition is
// still bound. (A compile-time alternative, such as template specialisations that the door looks up,
// would bind only what was declared before the door's first use, which is exactly the order dependence
// this avoids.) The list holds plain function pointers in a zero-initialised array, which needs no
// constructor of its own, so no registration can run before it exists.
//
// Why an unnamed namespace. Everything here must be this file's own: the list, the registrations and
// bind_device_state(), which touches this file's device variables. With external linkage the linker
// would keep one copy of each for the whole program, and one file's launch would bind another file's
// variables. Internal linkage gives every translation unit its own list.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace gemm::device_state {
namespace {

using Binder = void (*)();

// Three headers register a binder today; room for a few more.
inline constexpr int kMaxBinders = 8;

struct Binders {
  Binder binder[kMaxBinders];
  int count;
};
// Zero-initialised before any dynamic initialisation (constant initialisation), so the registrations
// below may run in any order.
inline Binders g_binders;

// A header that defines per-file device state registers its binder with one namespace-scope object:
//   namespace { const gemm::device_state::Registration kBindMyState{&bind_my_state}; }
struct Registration {
  explicit Registration(Binder b) {
    if (g_binders.count == kMaxBinders) {  // runs before main(): no exception could be caught
      std::fputs("common/device_state.h: more device-state binders than kMaxBinders\n", stderr);
      std::abort();
    }
    g_binders.binder[g_binders.count++] = b;
  }
};

}  // namespace
}  // namespace gemm::device_state

namespace gemm {
namespace {

// Host: runs every binder this translation unit registered, once (each copies host-side state into this
// file's device variables: cudaMemcpyToSymbol). Later calls cost one check of a static. The launch door
// calls it; a test that launches its own kernels with <<<>>> calls it first. A binder that throws (no
// usable GPU) leaves the file unbound, and the next call tries again: a function-local static is
// initialised only when its initialiser returns, and that initialisation is thread-safe.
inline void bind_device_state() {
  static const bool bound = [] {
    for (int i = 0; i < device_state::g_binders.count; ++i) device_state::g_binders.binder[i]();
    return true;
  }();
  (void)bound;
}

}  // namespace
}  // namespace gemm
