// The protocol checker's records of what kernels written elsewhere use (common/protocol/hooks/named.cuh, copies.cuh, tensor_memory.cuh):
// named barriers, an arrive.expect_tx on the peer CTA's barrier, 1-D bulk copies multicast into both
// CTAs of a pair, and the pair's 1-D tensor copies completing on the leader's barrier (.cta_group::2). Each small kernel moves known bytes, so its correct twin is checked bit for bit and
// must be silent; each broken twin breaks one rule and must be reported, with that rule's message, in
// every one of 100 repetitions with no injected delay. The kernels fix the order the checker sees
// (a cluster barrier between the announcements and the copies, a named barrier between the release and
// the dealloc), so the report never depends on timing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/device_buffer.h"
#include "common/harness/gemm_tests.h"
#include "common/harness/problems.h"
#include "common/launch.cuh"
#include "common/protocol/checker_state.h"
#include "common/ptx/barrier.cuh"
#include "common/ptx/cluster.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/tcgen05.cuh"
#include "common/ptx/tma.cuh"
#include "common/tcgen05_desc.h"
#include "common/tensor_map.h"

namespace gemm {
namespace {

using namespace gemm::ptx;

struct Outcome {
  std::string violation;
  bool exact = false;
};

std::vector<uint8_t> random_bytes(size_t n, const char* what) {
  std::vector<uint8_t> v(n);
  uint64_t x = seed_for(what);
  for (auto& b : v) b = uint8_t((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 56);
  return v;
}

// ---- Tensor Memory handed from warp to warp through a named barrier ------------------------------------
//
// Warp 0 ("mma") allocates 32 columns, copies a 512-byte atom into shared memory, tcgen05.cp's it into
// columns 0-3 of every quadrant and commits. Warp 1 ("epilogue") waits for the commit, reads its
// quadrant's 4 columns (lane l gets bytes 16 l .. 16 l + 15 of the atom), finishes the loads and
// releases the columns with bar.arrive on named barrier 1; warp 0 waits there (bar.sync) and
// deallocates. Warp 0 has no tcgen05.fence::after_thread_sync before the dealloc: dealloc is a
// synchronous tcgen05 instruction, which the fence does not order (docs/protocol_checker.md).

enum class HandoffBug : int {
  kNone,
  kReleaseBeforeLoadsFinished,  // the epilogue arrives before tcgen05.wait::ld and the fence
  kCountsAThirdWarp,            // both warps name 96 threads where only 64 come: a deadlock
  kCountsPartOfAWarp,           // both warps name 80 threads: barriers count whole warps
};

constexpr uint32_t kHandoffBarrier = 1;  // the named barrier (0 is __syncthreads')
constexpr uint32_t kHandoffThreads = 64;  // the two warps
constexpr uint32_t kHandoffWrongThreads = 96;
constexpr uint32_t kHandoffPartialWarpThreads = 80;  // not a multiple of the warp size
constexpr uint32_t kAtomBytes = 512;      // one tcgen05.cp 32x128b atom: 32 rows of 16 bytes
constexpr uint32_t kTmemColumns = 32;     // the smallest allocation
constexpr uint32_t kEpilogueQuadrant = 1;  // warp 1 reads lanes 32-63

struct HandoffSmem {
  alignas(128) uint8_t atom[kAtomBytes];
  uint64_t full, done;
  uint32_t tmem;
};

__global__ void __launch_bounds__(64) handoff_kernel(const uint8_t* src, uint32_t* out, HandoffBug bug) {
  ProtocolScope protocol_scope;
  __shared__ HandoffSmem s;
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t threads = bug == HandoffBug::kCountsAThirdWarp     ? kHandoffWrongThreads
                           : bug == HandoffBug::kCountsPartOfAWarp ? kHandoffPartialWarpThreads
                                                                   : kHandoffThreads;
  if (threadIdx.x == 0) {
    mbarrier_init(&s.full, 1, "full", 0);
    mbarrier_init(&s.done, 1, "done", 0);
    fence_mbarrier_init();
  }
  protocol_role(warp == 0 ? "mma" : "epilogue");
  if (warp == 0) tcgen05_alloc<1>(&s.tmem, kTmemColumns);
  tcgen05_fence_before_thread_sync();
  cta_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem = s.tmem;
  if (warp == 0) {
    if (lane == 0) {
      mbarrier_arrive_expect_tx(&s.full, kAtomBytes);
      bulk_copy_g2s(s.atom, src, kAtomBytes, &s.full);
    }
    mbarrier_wait(&s.full, 0, "full", 0);
    tcgen05_fence_after_thread_sync();
    tcgen05_cp_32x128b_warpx4_warp<1>(tmem, tcgen05::sf_atom_descriptor(smem_addr(s.atom)));
    tcgen05_commit_warp<1>(&s.done);
    named_barrier_sync(kHandoffBarrier, threads);  // the epilogue's release of the columns
    tcgen05_dealloc<1>(tmem, kTmemColumns);
    tcgen05_relinquish_alloc_permit<1>();
  } else {
    wait_commit(&s.done, 0, "done", 0);
    tcgen05_fence_after_thread_sync();
    uint32_t r[4];
    tcgen05_ld_32x32b<4>(tmem + ((32 * kEpilogueQuadrant) << 16), r);
    if (bug == HandoffBug::kReleaseBeforeLoadsFinished) named_barrier_arrive(kHandoffBarrier, threads);
    tcgen05_wait_ld();
    tcgen05_fence_before_thread_sync();
    if (bug != HandoffBug::kReleaseBeforeLoadsFinished) named_barrier_arrive(kHandoffBarrier, threads);
    for (int j = 0; j < 4; ++j) out[4 * lane + j] = r[j];
  }
}

Outcome run_handoff(HandoffBug bug) {
  const std::vector<uint8_t> host = random_bytes(kAtomBytes, "protocol named barrier");
  DeviceBuffer<uint8_t> src(host);
  DeviceBuffer<uint32_t> out(kAtomBytes / 4);
  out.fill_bytes(0xFF);
  launch_kernel(handoff_kernel, {dim3(1), dim3(kHandoffThreads)}, src.get(), out.get(), bug);
  CUDA_CHECK(cudaDeviceSynchronize());
  Outcome o;
  o.violation = protocol::take_violation();
  const std::vector<uint32_t> got = out.download();
  o.exact = std::memcmp(got.data(), host.data(), kAtomBytes) == 0;  // lane l, column j: word 4 l + j of the atom
  return o;
}

// ---- A CTA pair: copies of both CTAs completing on one barrier, multicast copies -------------------------
//
// Two CTAs, each with one producer thread and a consumer warp. Each CTA brings one half (kHalfBytes) of
// an 8 KB block. In the peer expect_tx kernel both halves land in the leader's shared memory and
// complete on the leader's barrier "full" (count 2): the odd CTA's copy is a multicast to the leader
// alone, and the odd CTA announces its bytes there with arrive.expect_tx on the peer's barrier. In the
// multicast kernel each CTA multicasts its half into both CTAs, so each CTA's "full" (count 1) expects
// the whole block. Cluster barriers order the announcements, the leader's copy, the odd CTA's copy and
// the reads. A CTA that announces only its own half sees its phase complete at the leader's copy; the
// odd CTA's bytes then count towards the next phase, and the reads of them are reads of a write the
// reader has not seen land (the symptom on the hardware: a consumer reading bytes still in flight).
//
// In the cta_group::2 kernel each CTA copies its half into its own shared memory with 1-D tensor copies
// (ptx::tma_load_1d_cta_group2) whose bytes complete on the leader's "full" (count 1), which the leader
// arms with both halves, as a pair's producer arms a slot for both CTAs' operands. Only the leader's
// wait sees the odd CTA's bytes land, so the leader's consumer passes that on (an arrive on the odd
// CTA's "handed") before the odd CTA's consumer reads its half. A leader that announces only its own
// bytes sees its phase complete without the odd CTA's, and the odd CTA reads bytes of the next phase.

enum class PairBug : int {
  kNone,
  kPeerAnnouncesOnItsOwnBarrier,  // peer expect_tx: the odd CTA arrives on its own barrier, not the leader's
  kEachAnnouncesOnlyItsOwnCopy,   // multicast: a CTA expects the bytes it issues, not those landing in it
  kLeaderAnnouncesOnlyItsOwnHalf,  // cta_group::2: the leader's expect_tx leaves out the odd CTA's copies
};
enum class PairKernel : int { kPeerExpectTx, kMulticast, kCtaGroup2 };

constexpr uint32_t kHalfBytes = 4096;
constexpr uint32_t kBlockBytes = 2 * kHalfBytes;
constexpr uint32_t kBox1dBytes = 2048;  // one 1-D copy; a CTA's half takes two
constexpr uint32_t kWordBytes = 8;      // plan_bytes_1d's element: 1-D coordinates count these
constexpr uint16_t kLeaderOnly = 0b01, kBothCtas = 0b11;

struct PairSmem {
  alignas(128) uint8_t buf[kBlockBytes];
  uint64_t full, handed;
};

__global__ void __launch_bounds__(64) pair_kernel(const __grid_constant__ CUtensorMap map, const uint8_t* src,
                                                  uint8_t* out, PairKernel kind, PairBug bug) {
  ProtocolScope protocol_scope;
  __shared__ PairSmem s;
  const uint32_t rank = cluster_ctarank(), warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool peer_kernel = kind == PairKernel::kPeerExpectTx, cta_group2 = kind == PairKernel::kCtaGroup2;
  if (threadIdx.x == 0) {
    mbarrier_init(&s.full, peer_kernel ? 2 : 1, "full", 0);
    if (cta_group2) mbarrier_init(&s.handed, 1, "handed", 0);
    fence_mbarrier_init();
  }
  protocol_role(warp == 0 ? "producer" : "consumer");
  cluster_sync();  // every barrier initialised before any CTA names it
  const bool producer = warp == 0 && lane == 0;
  if (producer) {
    if (cta_group2) {
      if (rank == 0) mbarrier_arrive_expect_tx(&s.full, bug == PairBug::kLeaderAnnouncesOnlyItsOwnHalf ? kHalfBytes : kBlockBytes);
    } else if (!peer_kernel) {
      mbarrier_arrive_expect_tx(&s.full, bug == PairBug::kEachAnnouncesOnlyItsOwnCopy ? kHalfBytes : kBlockBytes);
    } else if (rank == 0) {
      mbarrier_arrive_expect_tx(&s.full, kHalfBytes);
    } else if (bug == PairBug::kPeerAnnouncesOnItsOwnBarrier) {
      mbarrier_arrive_expect_tx(&s.full, kHalfBytes);
    } else {
      mbarrier_arrive_expect_tx_cluster(&s.full, 0, kHalfBytes);
    }
  }
  // Every announcement before any copy, the leader's copy before the odd CTA's, and both before any
  // read: the order the checker sees is fixed.
  for (uint32_t turn = 0; turn < 2; ++turn) {
    cluster_sync();
    if (producer && rank == turn) {
      uint8_t* half = s.buf + rank * kHalfBytes;
      if (cta_group2) {
        for (uint32_t b = 0; b < kHalfBytes; b += kBox1dBytes)
          tma_load_1d_cta_group2(s.buf + b, &map, int((rank * kHalfBytes + b) / kWordBytes), &s.full, kBox1dBytes);
      } else if (peer_kernel && rank == 0) {
        bulk_copy_g2s(half, src, kHalfBytes, &s.full);
      } else {
        bulk_copy_g2s_multicast(half, src + rank * kHalfBytes, kHalfBytes, &s.full, peer_kernel ? kLeaderOnly : kBothCtas);
      }
    }
  }
  cluster_sync();
  if (cta_group2) {
    if (warp == 1) {
      if (rank == 0) mbarrier_wait(&s.full, 0, "full", 0);
      else mbarrier_wait(&s.handed, 0, "handed", 0);
      for (uint32_t i = lane; i < kHalfBytes / 16; i += 32)
        reinterpret_cast<uint4*>(out + rank * kHalfBytes)[i] = reinterpret_cast<const uint4*>(s.buf)[i];
      protocol_generic_read(s.buf, kHalfBytes);
      __syncwarp();
      if (rank == 0 && lane == 0) mbarrier_arrive_cluster(&s.handed, 1);
    }
  } else if (warp == 1 && (!peer_kernel || rank == 0)) {
    mbarrier_wait(&s.full, 0, "full", 0);
    for (uint32_t i = lane; i < kBlockBytes / 16; i += 32)
      reinterpret_cast<uint4*>(out + rank * kBlockBytes)[i] = reinterpret_cast<const uint4*>(s.buf)[i];
    protocol_generic_read(s.buf, kBlockBytes);
  }
  cluster_sync();  // no CTA exits while a copy may still land in it
}

Outcome run_pair(PairKernel kind, PairBug bug) {
  const std::vector<uint8_t> host = random_bytes(kBlockBytes, "protocol pair copies");
  DeviceBuffer<uint8_t> src(host), out(2 * kBlockBytes);
  out.fill_bytes(0xFF);
  const CUtensorMap map = encode_tensor_map(plan_bytes_1d(src.get(), kBlockBytes, kBox1dBytes));
  launch_kernel(pair_kernel, {dim3(2), dim3(64), 0, nullptr, dim3(2)}, map, src.get(), out.get(), kind, bug);
  CUDA_CHECK(cudaDeviceSynchronize());
  Outcome o;
  o.violation = protocol::take_violation();
  const std::vector<uint8_t> got = out.download();
  // Whole copies of the block, one per reading CTA; the cta_group::2 kernel's two CTAs write a half each.
  const int copies = kind == PairKernel::kMulticast ? 2 : 1;
  o.exact = true;
  for (int r = 0; r < copies; ++r)
    o.exact = o.exact && std::equal(host.begin(), host.end(), got.begin() + r * kBlockBytes);
  return o;
}

// ---- The cases ------------------------------------------------------------------------------------------

class GpuProtocolSync : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_info().usable) GTEST_SKIP() << "no usable GPU: " << gpu_info().why_not;
    if (!protocol::checker_state_for(GEMM_PROTOCOL_CHECK)) GTEST_SKIP() << "the checker does not run on this GPU in this build";
    protocol::set_mode(protocol::kReport);
  }
  void TearDown() override { protocol::set_mode(protocol::kTrap); }
};

TEST_F(GpuProtocolSync, NamedBarrierHandoffTwinIsExactAndSilent) {
  for (int i = 0; i < 10; ++i) {  // a few rounds: a correct hand-off is silent in every one
    const Outcome o = run_handoff(HandoffBug::kNone);
    ASSERT_EQ(o.violation, "") << "repetition " << i;
    ASSERT_TRUE(o.exact) << "repetition " << i;
  }
}

TEST_F(GpuProtocolSync, PeerExpectTxTwinIsExactAndSilent) {
  const Outcome o = run_pair(PairKernel::kPeerExpectTx, PairBug::kNone);
  EXPECT_EQ(o.violation, "");
  EXPECT_TRUE(o.exact);
}

TEST_F(GpuProtocolSync, MulticastTwinIsExactAndSilent) {
  const Outcome o = run_pair(PairKernel::kMulticast, PairBug::kNone);
  EXPECT_EQ(o.violation, "");
  EXPECT_TRUE(o.exact);
}

TEST_F(GpuProtocolSync, CtaGroup2OneDimensionalCopiesTwinIsExactAndSilent) {
  const Outcome o = run_pair(PairKernel::kCtaGroup2, PairBug::kNone);
  EXPECT_EQ(o.violation, "");
  EXPECT_TRUE(o.exact);
}

struct SyncCase {
  const char* name;
  HandoffBug handoff;  // kNone: a pair case
  PairKernel kind;
  PairBug pair;
  const char* message;
};
const SyncCase kSyncCases[] = {
    {"tensor_memory_released_through_a_named_barrier_before_its_loads_finished",
     HandoffBug::kReleaseBeforeLoadsFinished, PairKernel::kPeerExpectTx, PairBug::kNone,
     "protocol checker: dealloc-pending: .*by: warp 0 \\(mma\\).*operand: deallocated columns, Tensor Memory columns "
     "\\[0, 1\\), lanes 32-63.*earlier read not visible as finished: by warp 1 \\(epilogue\\) of CTA rank 0"},
    {"named_barrier_counts_a_warp_that_never_comes", HandoffBug::kCountsAThirdWarp, PairKernel::kPeerExpectTx,
     PairBug::kNone,
     "protocol checker: deadlock: .*32 threads of CTA rank 0 wait at named barrier 1 \\(bar.sync 1, 96\\), 64 of 96 "
     "threads arrived; warps 0 \\(mma\\)"},
    {"named_barrier_counts_part_of_a_warp", HandoffBug::kCountsPartOfAWarp, PairKernel::kPeerExpectTx, PairBug::kNone,
     "protocol checker: named-barrier-operands: .*\\(barrier id, thread count\\) 1, 80"},
    {"peer_announces_its_bytes_on_its_own_barrier", HandoffBug::kNone, PairKernel::kPeerExpectTx,
     PairBug::kPeerAnnouncesOnItsOwnBarrier,
     "protocol checker: deadlock: .*barrier 'full' \\[0\\] of CTA rank 0, current phase 0 \\(parity 0\\): 1 of 2 "
     "arrivals and -4096 transaction bytes still missing; waited for with parity 0 by 32 threads of warps 1 "
     "\\(consumer\\)"},
    {"multicast_bytes_not_announced_by_the_receiving_cta", HandoffBug::kNone, PairKernel::kMulticast,
     PairBug::kEachAnnouncesOnlyItsOwnCopy,
     "protocol checker: load-before-write-visible: .*by: warp 1 \\(consumer\\) of CTA rank [01].*operand: generic "
     "load, shared memory.*earlier write not visible: by a TMA load completing on barrier 'full' \\[0\\] of CTA rank "
     "[01], in its phase 1"},
    {"pair_leader_announces_only_its_own_1d_copies", HandoffBug::kNone, PairKernel::kCtaGroup2,
     PairBug::kLeaderAnnouncesOnlyItsOwnHalf,
     "protocol checker: load-before-write-visible: .*by: warp 1 \\(consumer\\) of CTA rank 1.*operand: generic "
     "load, shared memory \\[[0-9a-fx]+, [0-9a-fx]+\\) of CTA rank 1\n.*earlier write not visible: by a TMA load "
     "completing on barrier 'full' \\[0\\] of CTA rank 0, in its phase 1"},
};

Outcome run_sync_case(const SyncCase& c) {
  return c.handoff != HandoffBug::kNone ? run_handoff(c.handoff) : run_pair(c.kind, c.pair);
}

// 100 by default; GEMM_PROTOCOL_REPETITIONS=n to print each message quickly.
const int kRepetitions = std::getenv("GEMM_PROTOCOL_REPETITIONS") ? std::atoi(std::getenv("GEMM_PROTOCOL_REPETITIONS")) : 100;

class GpuProtocolSyncBroken : public GpuProtocolSync, public ::testing::WithParamInterface<SyncCase> {};
TEST_P(GpuProtocolSyncBroken, CaughtInEveryRepetitionWithItsMessage) {
  const SyncCase c = GetParam();
  if (c.handoff == HandoffBug::kReleaseBeforeLoadsFinished && gpu_info().tcgen05_native())
    GTEST_SKIP() << "a broken tcgen05 protocol is undefined behaviour on the hardware";
  // The odd CTA's bytes may still be landing when the pair exits (nothing waits for the phase they
  // complete): on the hardware that is undefined behaviour, under the emulator each copy has landed
  // before its issuing thread goes on.
  if (c.pair == PairBug::kLeaderAnnouncesOnlyItsOwnHalf && gpu_info().tcgen05_native())
    GTEST_SKIP() << "a cta_group::2 copy still landing at exit is undefined behaviour on the hardware";
  std::string first;
  for (int i = 0; i < kRepetitions; ++i) {
    const Outcome o = run_sync_case(c);
    if (i == 0) first = o.violation;
    ASSERT_THAT(o.violation, ::testing::ContainsRegex(c.message)) << "repetition " << i;
  }
  std::printf("%s\n", first.c_str());  // the message as the GPU printed it (docs/protocol_checker.md)
}
INSTANTIATE_TEST_SUITE_P(Broken, GpuProtocolSyncBroken, ::testing::ValuesIn(kSyncCases),
                         [](const ::testing::TestParamInfo<SyncCase>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace gemm
