// Thread-block clusters: the rank of a CTA in its cluster, addresses in a peer CTA's shared memory
// (distributed shared memory), and the cluster-wide barrier. PTX ISA 9.1: %cluster_ctarank (10.16),
// mapa (9.7.9.23), ld.shared::cluster (9.7.9.8), barrier.cluster (9.7.13.3), fence (9.7.13.4).
// All exist on sm_90 and sm_100. A kernel launched without clusters is a cluster of one CTA.
#pragma once

#include <cstdint>

#include "common/protocol/checker.cuh"

namespace gemm::ptx {

__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// mapa.shared::cluster.u32 out, smem_addr, rank;   the address of the same shared-memory byte in
// CTA `rank` of this cluster.
__device__ __forceinline__ uint32_t map_to_rank(uint32_t smem_addr, uint32_t rank) {
  uint32_t out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(out) : "r"(smem_addr), "r"(rank));
  return out;
}

// ld.shared::cluster.u32: a 4-byte load from any CTA's shared memory of the cluster.
__device__ __forceinline__ uint32_t ld_cluster_u32(uint32_t cluster_addr) {
  uint32_t v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(cluster_addr) : "memory");
  return v;
}

// barrier.cluster.arrive.release + wait.acquire: every thread of every CTA of the cluster.
// The protocol checker sees it as every thread of the cluster publishing and learning (and as the proof,
// which a cta_group::2 alloc needs, that the peer CTA is running).
__device__ __forceinline__ void cluster_sync() {
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_cluster_sync_arrive();
#endif
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#if GEMM_PROTOCOL_ACTIVE
  protocol::dev::on_cluster_sync_depart();
#endif
}

// fence.acq_rel.cluster: orders this thread's memory accesses at cluster scope.
__device__ __forceinline__ void fence_acq_rel_cluster() { asm volatile("fence.acq_rel.cluster;" ::: "memory"); }

}  // namespace gemm::ptx
