// The inline-PTX original of handoff_kernel (common/test/test_protocol_sync.cu), written as public B200
// kernels write it: every TMA, mbarrier, tcgen05 and named-barrier operation a raw `asm volatile`.
// docs/protocol_checker.md ("Kernels written elsewhere") sets the two side by side: handoff_kernel is
// this kernel ported to common/ptx, line for line, and the lines that differ are the whole port.
//
// Warp 0 ("mma") allocates 32 columns of Tensor Memory, copies a 512-byte atom into shared memory with
// a bulk copy, tcgen05.cp's it into columns 0-3 of every quadrant and commits. Warp 1 ("epilogue")
// waits for the commit, reads its quadrant's 4 columns, finishes the loads and releases the columns
// with bar.arrive on named barrier 1; warp 0 waits there (bar.sync) and deallocates.
//
// No project header is included. The build compiles this file for sm_100a alone (target
// handoff_inline_ptx, an object library, skipped where CMAKE_CUDA_ARCHITECTURES has no 100a entry), so
// ptxas checks every instruction below; nothing launches it.
#include <cuda_runtime.h>

#include <cstdint>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM100_ALL)
#error "tcgen05 exists on sm_100a only: compile this file for 100a (CMake: target handoff_inline_ptx)"
#endif

namespace handoff_inline_ptx {

constexpr uint32_t kHandoffBarrier = 1;    // the named barrier (0 is __syncthreads')
constexpr uint32_t kHandoffThreads = 64;   // the two warps
constexpr uint32_t kAtomBytes = 512;       // one tcgen05.cp 32x128b atom: 32 rows of 16 bytes
constexpr uint32_t kTmemColumns = 32;      // the smallest allocation
constexpr uint32_t kEpilogueQuadrant = 1;  // warp 1 reads lanes 32-63

struct HandoffSmem {
  alignas(128) uint8_t atom[kAtomBytes];
  uint64_t full, done;
  uint32_t tmem;
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

// The shared-memory descriptor tcgen05.cp reads the atom with (PTX ISA 9.7.16.4.1): start address >> 4
// in bits 0-13, SBO 128 bytes >> 4 in bits 32-45 (8-row core matrices 128 bytes apart), the fixed 0b001
// in bits 46-48, no swizzle.
__device__ __forceinline__ uint64_t sf_atom_descriptor(uint32_t addr) {
  return uint64_t((addr & 0x3FFFF) >> 4) | uint64_t(128 >> 4) << 32 | uint64_t(1) << 46;
}

__global__ void __launch_bounds__(64) handoff_kernel(const uint8_t* src, uint32_t* out) {
  __shared__ HandoffSmem s;
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t full = smem_addr(&s.full), done = smem_addr(&s.done);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(full), "r"(1) : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(done), "r"(1) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (warp == 0) asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(smem_addr(&s.tmem)), "r"(kTmemColumns) : "memory");
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const uint32_t tmem = s.tmem;
  if (warp == 0) {
    if (lane == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(full), "r"(kAtomBytes) : "memory");
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_addr(s.atom)), "l"(src), "r"(kAtomBytes), "r"(full) : "memory");
    }
    asm volatile("{\n .reg .pred p;\n WAIT_FULL:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra WAIT_FULL;\n}" ::"r"(full), "r"(0) : "memory");
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    if (lane == 0) asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" ::"r"(tmem), "l"(sf_atom_descriptor(smem_addr(s.atom))) : "memory");
    if (lane == 0) asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(done) : "memory");
    asm volatile("bar.sync %0, %1;" ::"r"(kHandoffBarrier), "r"(kHandoffThreads) : "memory");  // the epilogue's release of the columns
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(tmem), "r"(kTmemColumns) : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  } else {
    asm volatile("{\n .reg .pred p;\n WAIT_DONE:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra WAIT_DONE;\n}" ::"r"(done), "r"(0) : "memory");
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    uint32_t r[4];
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(tmem + ((32 * kEpilogueQuadrant) << 16)));
    asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    asm volatile("bar.arrive %0, %1;" ::"r"(kHandoffBarrier), "r"(kHandoffThreads) : "memory");
    for (int j = 0; j < 4; ++j) out[4 * lane + j] = r[j];
  }
}

// One CTA of the two warps, on `stream`.
void launch_handoff(const uint8_t* src, uint32_t* out, cudaStream_t stream) {
  handoff_kernel<<<1, kHandoffThreads, 0, stream>>>(src, out);
}

}  // namespace handoff_inline_ptx
