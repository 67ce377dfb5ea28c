// Who acts and what each knows: the calling thread's identity (cluster rank, warp, lane), the agents
// a vector clock counts (warps, the tensor core, bulk-copy units, barrier phases), records of accesses
// as (agent, epoch), and the clocks' join and copy.
//
// Part of the protocol checker: included by common/protocol/checker.cuh only, in its order.
#pragma once

#ifndef GEMM_PROTOCOL_CHECKER_PARTS
#error "include common/protocol/checker.cuh, not its parts"
#endif

#if GEMM_PROTOCOL_ACTIVE
namespace gemm::protocol::dev {

__device__ __forceinline__ uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
__device__ __forceinline__ uint32_t sreg(int which) {
  uint32_t v = 0;
  switch (which) {
    case 0: asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(v)); break;
    case 1: asm volatile("mov.u32 %0, %%clusterid.y;" : "=r"(v)); break;
    case 2: asm volatile("mov.u32 %0, %%clusterid.z;" : "=r"(v)); break;
    case 3: asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(v)); break;
    case 4: asm volatile("mov.u32 %0, %%nclusterid.y;" : "=r"(v)); break;
    default: asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(v)); break;
  }
  return v;
}
__device__ __forceinline__ uint32_t ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t ptx_mapa(uint32_t smem_address, uint32_t rank) {
  uint32_t out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(out) : "r"(smem_address), "r"(rank));
  return out;
}
__device__ __forceinline__ uint32_t lin_thread() { return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ uint32_t warp_id() { return lin_thread() / 32; }
__device__ __forceinline__ uint32_t lane_id() { return lin_thread() % 32; }
__device__ __forceinline__ uint32_t block_threads() { return blockDim.x * blockDim.y * blockDim.z; }
__device__ __forceinline__ uint32_t smem_offset(uint32_t smem_address) { return smem_address & 0x3FFFFu; }

__device__ __forceinline__ bool enabled() {
  return g_protocol.clusters != nullptr && *reinterpret_cast<const volatile int*>(&g_protocol.control->mode) != kOff;
}
__device__ __forceinline__ bool aborted() {
  return g_protocol.control && *reinterpret_cast<volatile int*>(&g_protocol.control->aborted) != 0;
}

// ---- Agents and clocks -----------------------------------------------------------------------------

__device__ __forceinline__ uint32_t warp_agent(uint32_t rank, uint32_t w) { return rank * kAgentsPerCta + w; }
__device__ __forceinline__ uint32_t tc_agent(uint32_t rank) { return rank * kAgentsPerCta + kMaxWarps; }
__device__ __forceinline__ uint32_t bulk_agent(uint32_t rank, uint32_t w) { return rank * kAgentsPerCta + kMaxWarps + 1 + w; }
__device__ __forceinline__ uint32_t bar_agent(uint32_t rank, uint32_t b) { return kBarrierAgents + rank * kMaxBarriers + b; }
__device__ __forceinline__ uint32_t record(uint32_t agent, uint32_t epoch) { return (agent + 1) << kEpochBits | epoch; }
__device__ __forceinline__ uint32_t rec_agent(uint32_t r) { return (r >> kEpochBits) - 1; }
__device__ __forceinline__ uint32_t rec_epoch(uint32_t r) { return r & kEpochMask; }

// Reads outside the lock (the hooks' fast paths, which only ever skip work another lane of the same
// warp already did): volatile, so they come from L2, never from a stale L1 line.
template <class T>
__device__ __forceinline__ T relaxed(const T& x) {
  return *reinterpret_cast<const volatile T*>(&x);
}

// Whether access `r` is visible as finished to a thread that knows clock `vc`.
__device__ __forceinline__ bool visible(const uint32_t* vc, uint32_t r) {
  if (r == 0) return true;
  const uint32_t e = rec_epoch(r);
  return e != kPendingEpoch && vc[rec_agent(r)] >= e;
}
// Clocks move 16 bytes at a time, 11 loads in flight (33 words = 3 rounds): these run under the
// cluster's lock, after its fence has emptied L1, so each round costs an L2 round trip.
static __device__ __noinline__ void join(uint32_t* into, const uint32_t* from) {
  uint4* d = reinterpret_cast<uint4*>(into);
  const uint4* f = reinterpret_cast<const uint4*>(from);
#pragma unroll 11
  for (int i = 0; i < kClockWords / 4; ++i) {
    uint4 a = d[i];
    const uint4 b = f[i];
    a.x = max(a.x, b.x);
    a.y = max(a.y, b.y);
    a.z = max(a.z, b.z);
    a.w = max(a.w, b.w);
    d[i] = a;
  }
}
static __device__ __noinline__ void copy_clock(uint32_t* into, const uint32_t* from) {
  uint4* d = reinterpret_cast<uint4*>(into);
  const uint4* f = reinterpret_cast<const uint4*>(from);
#pragma unroll 11
  for (int i = 0; i < kClockWords / 4; ++i) d[i] = f[i];
}
static __device__ __noinline__ void zero_clock(uint32_t* c) {
  uint4* d = reinterpret_cast<uint4*>(c);
#pragma unroll 11
  for (int i = 0; i < kClockWords / 4; ++i) d[i] = make_uint4(0, 0, 0, 0);
}

}  // namespace gemm::protocol::dev
#endif  // GEMM_PROTOCOL_ACTIVE
