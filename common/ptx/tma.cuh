// TMA: the Tensor Memory Accelerator's bulk copies from global to shared memory, completing on an
// mbarrier. PTX ISA 9.1, section 9.7.9.27 (cp.async.bulk, cp.async.bulk.tensor). Available on sm_90
// and sm_100. One thread issues a copy; the hardware moves the bytes and performs complete_tx of
// that many bytes on the barrier, so the consumers' wait on the barrier is also the wait for data.
#pragma once

#include <cuda.h>  // CUtensorMap (the type only; nothing here links the driver library)

#include <cstdint>

#include "common/ptx/mbarrier.cuh"

namespace gemm::ptx {

// cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//     [dst], [tensor_map, {x, y, z}], [mbar];
// Copies the box the tensor map describes, whose first element is at coordinates (x, y, z) (x the
// innermost, in elements), into shared memory at `dst`, laid out (and swizzled) as the map says.
// Elements outside the tensor are filled with zeros and still count towards the transaction bytes:
// the barrier always receives the full box size. `dst` must be 128-byte aligned (1024 for the
// 128-byte swizzle, whose pattern repeats every 1024 bytes). The shared::cluster destination form
// also addresses the CTA's own shared memory, and exists on Hopper. `bytes` is the box size: the
// hardware takes it from the map; the protocol checker (which cannot read the opaque map) needs it to
// know the range written and the barrier's transaction count.
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, int x, int y, int z, uint64_t* bar,
                                            uint32_t bytes) {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_tma_load(smem_addr(dst), bytes, smem_addr(bar), own_rank());
  if (protocol_aborted()) return;  // report mode: no copy may land after the kernel's checked work ended
#else
  (void)bytes;
#endif
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
      ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(smem_addr(bar))
      : "memory");
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar];
// A plain contiguous copy of `bytes` (a multiple of 16; src and dst 16-byte aligned). The scale
// atoms travel this way: their 512-byte images need no tensor map.
__device__ __forceinline__ void bulk_copy_g2s(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_tma_load(smem_addr(dst), bytes, smem_addr(bar), own_rank());
  if (protocol_aborted()) return;
#endif
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
//     [dst], [src], size, [mbar], cta_mask;
// The same contiguous copy of `bytes` into dst's shared-memory offset in every CTA of the cluster whose
// rank is set in cta_mask; each CTA's share completes on the barrier at bar's offset in that CTA
// (PTX 9.7.9.25.4.1; sm_90, optimised for sm_90a and sm_100a). So every receiving CTA announces on its
// own barrier the bytes that land in it, whoever issues them, and an issuer refills a slot only after
// the consumers of every receiving CTA released it.
__device__ __forceinline__ void bulk_copy_g2s_multicast(void* dst, const void* src, uint32_t bytes, uint64_t* bar,
                                                        uint16_t cta_mask) {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_bulk_copy_multicast(smem_addr(dst), bytes, smem_addr(bar), cta_mask);
  if (protocol_aborted()) return;
#endif
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, [%3], %4;"
      ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)), "h"(cta_mask)
      : "memory");
}

// prefetch.tensormap [map];   fetch the 128-byte descriptor into the cache ahead of the first copy.
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// ---- TMA stores: shared -> global (PTX 9.7.9.27.1.2, 9.7.9.27.2) ---------------------------------------

// cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [tensor_map, {x, y, z}], [src];
// Writes the box at (x, y, z) from shared memory laid out (and swizzled) as the map says; elements
// outside the tensor are not written. Completion is tracked per issuing thread with bulk groups:
// the same thread commits and waits. The source must have been written before a
// fence.proxy.async.shared::cta (generic-proxy writes, read by the async proxy). `bytes`: the box
// size, for the protocol checker (as in tma_load_3d).
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, int x, int y, int z, const void* src,
                                             uint32_t bytes) {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_tma_store(smem_addr(src), bytes);
  if (protocol_aborted()) return;
#else
  (void)bytes;
#endif
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(smem_addr(src))
               : "memory");
}

// cp.async.bulk.commit_group;   the thread's bulk copies issued since the last commit form a group.
__device__ __forceinline__ void bulk_commit_group() {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_bulk_commit();
#endif
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// cp.async.bulk.wait_group.read N;   at most N of the thread's groups may still be reading their
// shared-memory source (the source may then be overwritten; the global writes may still be under way).
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_bulk_wait(N);
#endif
}

// cp.async.bulk.wait_group N;   at most N of the thread's groups are still incomplete (written).
template <int N>
__device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_bulk_wait(N);
#endif
}

}  // namespace gemm::ptx
