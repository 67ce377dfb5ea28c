// The protocol checker's rules that the GEMM pipeline of test_tcgen05_protocol.cu does not reach:
// mbarrier lifecycle, generic loads of copied data, stage 04's TMA ring without tcgen05, TMA stores
// and their bulk groups. Each small
// kernel moves known bytes (a bulk copy in, or a TMA store out) so its fixed twin is checked against
// what it must produce; each broken variant breaks one rule and must be reported, in every
// repetition, with that rule's message. The checker runs here wherever this binary's kernels run
// under it: on Hopper (where the tcgen05 emulator is), and on any GPU in the checked build.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cuda_fp16.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/device_buffer.h"
#include "common/harness/gemm_tests.h"
#include "common/harness/problems.h"
#include "common/launch.cuh"
#include "common/protocol/checker_state.h"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/tma.cuh"
#include "common/swizzle.h"
#include "common/tensor_map.h"

namespace gemm {
namespace {

using namespace gemm::ptx;

// ---- A bulk copy into shared memory, read out by another warp ------------------------------------------

enum class CopyBug : int {
  kNone,
  kWaitUninitialised,    // the consumer waits on a barrier no one initialised
  kArriveUninitialised,  // the producer arrives on it
  kReinitialiseLive,     // the barrier is initialised twice
  kExtraArrival,         // a second arrival in a phase that expects one
  kTooManyBytes,         // expect_tx announces 16 bytes fewer than the copy brings
  kReadBeforeLanded,     // the consumer reads once the copy is issued, without waiting
  kWaiterBehind,         // a barrier runs three phases while its waiter sleeps
};

constexpr int kCopyBytes = 4096;

struct CopySmem {
  alignas(128) uint8_t buf[kCopyBytes];
  uint64_t full, spare, tick;
  volatile uint32_t issued;
};

__global__ void __launch_bounds__(64) copy_kernel(const uint8_t* src, uint8_t* out, CopyBug bug) {
  ProtocolScope protocol_scope;
  __shared__ CopySmem s;
  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  if (threadIdx.x == 0) {
    mbarrier_init(&s.full, 1, "full", 0);
    if (bug == CopyBug::kReinitialiseLive) mbarrier_init(&s.full, 1, "full", 0);
    mbarrier_init(&s.tick, 1, "tick", 0);
    s.issued = 0;
    fence_mbarrier_init();
  }
  protocol_role(warp == 0 ? "producer" : "consumer");
  cta_sync();
  if (warp == 0 && lane == 0) {
    if (bug == CopyBug::kArriveUninitialised) mbarrier_arrive(&s.spare);
    const uint32_t announced = bug == CopyBug::kTooManyBytes ? kCopyBytes - 16 : kCopyBytes;
    mbarrier_arrive_expect_tx(&s.full, announced);
    if (bug == CopyBug::kExtraArrival) mbarrier_arrive(&s.full);
    bulk_copy_g2s(s.buf, src, kCopyBytes, &s.full);
    s.issued = 1;
    for (int i = 0; i < (bug == CopyBug::kWaiterBehind ? 3 : 1); ++i) mbarrier_arrive(&s.tick);
    s.issued = 2;
  }
  if (warp == 1) {
    if (bug == CopyBug::kWaitUninitialised) mbarrier_wait(&s.spare, 0, "spare", 0);
    if (bug == CopyBug::kReadBeforeLanded || bug == CopyBug::kWaiterBehind) {
      while (s.issued < 2) {
      }
    }
    if (bug == CopyBug::kWaiterBehind) mbarrier_wait(&s.tick, 0, "tick", 0);
    if (bug != CopyBug::kReadBeforeLanded) mbarrier_wait(&s.full, 0, "full", 0);
    for (int i = lane; i < kCopyBytes / 16; i += 32) reinterpret_cast<uint4*>(out)[i] = reinterpret_cast<const uint4*>(s.buf)[i];
    protocol_generic_read(s.buf, kCopyBytes);
  }
  if (bug != CopyBug::kWaiterBehind && warp == 1) mbarrier_wait(&s.tick, 0, "tick", 0);
  cta_sync();
}

struct Outcome {
  std::string violation;
  bool exact = false;
};

Outcome run_copy(CopyBug bug) {
  bind_device_state();  // this file's deadline and checker (common/device_state.h)
  std::vector<uint8_t> host(kCopyBytes);
  uint64_t x = seed_for("protocol copy");
  for (auto& b : host) b = uint8_t((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 56);
  DeviceBuffer<uint8_t> src(host), out(kCopyBytes);
  out.fill_bytes(0xFF);
  copy_kernel<<<1, 64>>>(src.get(), out.get(), bug);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  Outcome o;
  o.violation = protocol::take_violation();
  o.exact = out.download() == host;
  return o;
}

// ---- Stage 04's protocol: a ring of slots filled by TMA, read by every warp with generic loads ------------
//
// The pipeline of 04_tma_mbarrier/kernel.cuh without its arithmetic: thread 0 is the producer and, with
// its warp, a consumer; each slot has a "full" barrier (the producer's arrive.expect_tx, then the bytes of
// a tensor-map copy and a bulk copy) and an "empty" barrier (one arrival per warp once it is done with the
// slot). Each warp copies its 16 rows of the tile and its 128 bytes of the small block out, so the twin is
// checked byte for byte. Three rounds of the ring: every slot is refilled twice.
//
// The broken variant's consumers skip the wait on "full" from the second round on, when a slot holds a
// refill. The order of what the checker sees is fixed by the kernel, not by timing: the refill of k-tile
// kt is issued by thread 0 at the end of k-tile kt - kRingSlots, before thread 0 reaches the CTA barrier
// of k-tile kt - 1, which every warp passes before it reads k-tile kt. So the copy is always recorded
// before the reads, and the reads are always reported as reads of a write their warp has not seen land
// (load-before-write-visible), however the copy and the warps are timed. (Skipping the wait in the first
// round as well would race the reads against the first copies' issue: then either that rule or, if the
// reads came first, the copy's overwrite of unreleased reads would be reported.)

enum class RingBug : int {
  kNone,
  kSkipFullWait,  // consumers read a refilled slot without waiting on its full barrier
};

constexpr int kRingSlots = 2, kRingTiles = 3 * kRingSlots, kRingWarps = 4;
constexpr int kRingRows = 16 * kRingWarps;                  // 64 rows: 16 per warp
constexpr int kRingRowBytes = 128;                          // one 128-byte swizzle row (256 E2M1 values)
constexpr int kRingTileBytes = kRingRows * kRingRowBytes;   // 8 KB, the TMA box
constexpr int kRingBlockBytes = 128 * kRingWarps;           // 512 bytes by bulk copy, like a scale atom

struct RingSlot {
  alignas(1024) uint8_t tile[kRingTileBytes];  // 128-byte swizzle, as the map says
  alignas(16) uint8_t block[kRingBlockBytes];
};
struct RingSmem {
  RingSlot slot[kRingSlots];
  uint64_t full[kRingSlots], empty[kRingSlots];
};

__global__ void __launch_bounds__(32 * kRingWarps) ring_kernel(const __grid_constant__ CUtensorMap map, const uint8_t* blocks,
                                                               uint8_t* out_tiles, uint8_t* out_blocks, RingBug bug) {
  ProtocolScope protocol_scope;
  __shared__ RingSmem s;
  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  const bool producer = threadIdx.x == 0;
  if (producer) {
    for (int i = 0; i < kRingSlots; ++i) {
      mbarrier_init(&s.full[i], 1, "full", i);
      mbarrier_init(&s.empty[i], kRingWarps, "empty", i);
    }
    fence_mbarrier_init();
  }
  protocol_role(warp == 0 ? "producer" : "consumer");  // warp 0 consumes too, as in stage 04
  __syncthreads();  // stage 04's CTA barriers, plain: none hands the checker's memory from warp to warp

  auto produce = [&](int kt) {
    const int slot = kt % kRingSlots;
    mbarrier_wait(&s.empty[slot], ((kt / kRingSlots) & 1) ^ 1, "empty", slot);
    mbarrier_arrive_expect_tx(&s.full[slot], kRingTileBytes + kRingBlockBytes);
    tma_load_3d(s.slot[slot].tile, &map, kt * kRingRowBytes, 0, 0, &s.full[slot], kRingTileBytes);
    bulk_copy_g2s(s.slot[slot].block, blocks + kt * kRingBlockBytes, kRingBlockBytes, &s.full[slot]);
  };
  if (producer)
    for (int kt = 0; kt < kRingSlots; ++kt) produce(kt);

  for (int kt = 0; kt < kRingTiles; ++kt) {
    const int slot = kt % kRingSlots;
    if (bug != RingBug::kSkipFullWait || kt < kRingSlots) mbarrier_wait(&s.full[slot], (kt / kRingSlots) & 1, "full", slot);
    const RingSlot& buf = s.slot[slot];
    for (int i = lane; i < 16 * kRingRowBytes / 16; i += 32)  // the warp's 16 rows, as they lie in shared memory
      reinterpret_cast<uint4*>(out_tiles + kt * kRingTileBytes + warp * 16 * kRingRowBytes)[i] =
          reinterpret_cast<const uint4*>(buf.tile + warp * 16 * kRingRowBytes)[i];
    if (lane < 8)
      reinterpret_cast<uint4*>(out_blocks + kt * kRingBlockBytes + warp * 128)[lane] =
          reinterpret_cast<const uint4*>(buf.block + warp * 128)[lane];
    __syncthreads();
    if (lane == 0) {  // stage 04's release: declare the warp's reads of the slot, then arrive on "empty"
      protocol_generic_read(&buf, sizeof(RingSlot));
      mbarrier_arrive(&s.empty[slot]);
    }
    if (producer && kt + kRingSlots < kRingTiles) produce(kt + kRingSlots);
  }
}

Outcome run_ring(RingBug bug) {
  const int pitch = kRingTiles * kRingRowBytes;  // bytes per row of the source: every k-tile side by side
  std::vector<uint8_t> tiles(size_t(kRingRows) * pitch), blocks(size_t(kRingTiles) * kRingBlockBytes);
  uint64_t x = seed_for("protocol ring");
  for (auto& b : tiles) b = uint8_t((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 56);
  for (auto& b : blocks) b = uint8_t((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 56);
  DeviceBuffer<uint8_t> d_tiles(tiles), d_blocks(blocks), out_tiles(size_t(kRingTiles) * kRingTileBytes),
      out_blocks(blocks.size());
  out_tiles.fill_bytes(0xFF);
  out_blocks.fill_bytes(0xFF);
  const CUtensorMap map = encode_tensor_map(plan_packed_operand(d_tiles.get(), kRingRows, 2 * pitch, 1, kRingRows, kRingRowBytes));
  launch_kernel(ring_kernel, {1, 32 * kRingWarps}, map, d_blocks.get(), out_tiles.get(), out_blocks.get(), bug);
  CUDA_CHECK(cudaDeviceSynchronize());
  Outcome o;
  o.violation = protocol::take_violation();
  const std::vector<uint8_t> got = out_tiles.download();
  o.exact = out_blocks.download() == blocks;
  for (int kt = 0; kt < kRingTiles; ++kt)
    for (int r = 0; r < kRingRows; ++r)
      for (int c = 0; c < kRingRowBytes; ++c)
        o.exact = o.exact && got[size_t(kt) * kRingTileBytes + swizzle_128b(uint32_t(r), uint32_t(c))] ==
                                 tiles[size_t(r) * pitch + kt * kRingRowBytes + c];
  return o;
}

// ---- A TMA store of a staging buffer, written twice ----------------------------------------------------
//
// Warp 0 writes the staging buffer, fences and stores it; then, once wait_group.read says the store has
// read it, the buffer is written again and stored a second time. In the two-writer forms warp 1 writes
// the second tile: warp 0 hands it the read buffer (a CTA barrier after the wait), and warp 1 must hand
// it back, written and fenced, before warp 0 issues the store. A proxy fence alone does not: it orders
// the writer's stores before the writer's later async-proxy accesses, and the store is warp 0's.

enum class StoreBug : int {
  kNone,
  kNoProxyFence,      // the stores are not fenced before the TMA store reads them
  kRewriteBeforeRead, // the staging buffer is rewritten before wait_group.read says the store read it
  kSecondWriter,      // not a bug: warp 1 writes the second tile, fences, and hands it over with a CTA barrier
  kSecondWriterNoHandOver,  // ... fences, then raises a plain flag the issuing warp spins on: no hand-over
};

constexpr int kStoreRows = 32, kStoreCols = 32, kStagingBytes = kStoreRows * kStoreCols * 2;

__host__ __device__ float store_value(int tile, int r, int c) { return float(tile * 1000 + r * 32 + c) * 0.25f; }
__host__ __device__ bool two_writers(StoreBug bug) {
  return bug == StoreBug::kSecondWriter || bug == StoreBug::kSecondWriterNoHandOver;
}

__global__ void __launch_bounds__(64) store_kernel(const __grid_constant__ CUtensorMap map_c, StoreBug bug) {
  ProtocolScope protocol_scope;
  __shared__ alignas(1024) unsigned char staging[kStagingBytes];
  __shared__ volatile uint32_t written;  // kSecondWriterNoHandOver: warp 1's flag, which no checker sees
  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  const bool two = two_writers(bug);
  if (threadIdx.x == 0) written = 0;
  protocol_role("epilogue");
  for (int tile = 0; tile < 2; ++tile) {
    if (tile == 1 && bug != StoreBug::kRewriteBeforeRead && warp == 0) {
      if (lane == 0) bulk_wait_group_read<0>();  // the first store has read the buffer
      __syncwarp();
    }
    if (tile == 1 && two) cta_sync();  // warp 0 hands the read buffer to warp 1 (and `written` is 0 by now)
    const int writer = tile == 1 && two ? 1 : 0;
    if (warp == writer) {
      for (int q = 0; q < 4; ++q) {  // row `lane`: 4 chunks of 8 halves, 64-byte swizzle as the map says
        __align__(16) __half h[8];
        for (int i = 0; i < 8; ++i) h[i] = __float2half_rn(store_value(tile, lane, 8 * q + i));
        *reinterpret_cast<uint4*>(staging + swizzle_64b(uint32_t(lane), uint32_t(16 * q))) = *reinterpret_cast<const uint4*>(h);
      }
      protocol_generic_write(staging, kStagingBytes);
      if (bug != StoreBug::kNoProxyFence) fence_proxy_async_shared();
      __syncwarp();
    }
    if (writer == 1) {
      if (bug == StoreBug::kSecondWriter) {
        cta_sync();
      } else if (warp == 1) {
        if (lane == 0) written = 1;
      } else {
        if (lane == 0)
          while (written == 0) {
          }
        __syncwarp();
      }
    }
    if (warp == 0) {
      if (lane == 0) {
        tma_store_3d(&map_c, 0, kStoreRows * tile, 0, staging, kStagingBytes);
        bulk_commit_group();
      }
      __syncwarp();
    }
  }
  if (warp == 0) {
    if (lane == 0) bulk_wait_group<0>();
    __syncwarp();
  }
}

Outcome run_store(StoreBug bug) {
  bind_device_state();  // this file's deadline and checker (common/device_state.h)
  DeviceBuffer<__half> c(size_t(2 * kStoreRows) * kStoreCols);
  c.fill_bytes(0xFF);
  const CUtensorMap map = encode_tensor_map(plan_fp16_output(c.get(), 2 * kStoreRows, kStoreCols, 1, kStoreRows, kStoreCols));
  store_kernel<<<1, two_writers(bug) ? 64 : 32>>>(map, bug);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  Outcome o;
  o.violation = protocol::take_violation();
  const std::vector<__half> got = c.download();
  o.exact = true;
  for (int r = 0; r < 2 * kStoreRows; ++r)
    for (int col = 0; col < kStoreCols; ++col)
      o.exact = o.exact && __half2float(got[size_t(r) * kStoreCols + col]) == store_value(r / kStoreRows, r % kStoreRows, col);
  return o;
}

// ---- The cases ------------------------------------------------------------------------------------------

class GpuProtocolChecker : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_info().usable) GTEST_SKIP() << "no usable GPU: " << gpu_info().why_not;
    if (!protocol::checker_state_for(GEMM_PROTOCOL_CHECK)) GTEST_SKIP() << "the checker does not run on this GPU in this build";
    protocol::set_mode(protocol::kReport);
  }
  void TearDown() override { protocol::set_mode(protocol::kTrap); }
};

TEST_F(GpuProtocolChecker, CopyTwinMovesEveryByteAndIsSilent) {
  const Outcome o = run_copy(CopyBug::kNone);
  EXPECT_EQ(o.violation, "");
  EXPECT_TRUE(o.exact);
}

TEST_F(GpuProtocolChecker, RingTwinMovesEveryByteAndIsSilent) {
  for (int i = 0; i < 10; ++i) {  // a few rounds: a correct ring is silent in every one
    const Outcome o = run_ring(RingBug::kNone);
    ASSERT_EQ(o.violation, "") << "repetition " << i;
    ASSERT_TRUE(o.exact) << "repetition " << i;
  }
}

TEST_F(GpuProtocolChecker, StoreTwinWritesEveryValueAndIsSilent) {
  const Outcome o = run_store(StoreBug::kNone);
  EXPECT_EQ(o.violation, "");
  EXPECT_TRUE(o.exact);
}

TEST_F(GpuProtocolChecker, StoreTwinOfTwoWritersWritesEveryValueAndIsSilent) {
  const Outcome o = run_store(StoreBug::kSecondWriter);
  EXPECT_EQ(o.violation, "");
  EXPECT_TRUE(o.exact);
}

struct CopyCase {
  const char* name;
  CopyBug bug;
  const char* message;
};
const CopyCase kCopyCases[] = {
    {"wait_on_an_uninitialised_barrier", CopyBug::kWaitUninitialised,
     "protocol checker: barrier-uninitialised: a wait on a barrier never initialised\n  by: warp 1 \\(consumer\\)"},
    {"arrive_on_an_uninitialised_barrier", CopyBug::kArriveUninitialised,
     "protocol checker: barrier-uninitialised: an arrive on a barrier never initialised\n  by: warp 0 \\(producer\\)"},
    {"reinitialise_a_live_barrier", CopyBug::kReinitialiseLive,
     "protocol checker: barrier-reinitialised: .*barrier 'full' \\[0\\] of CTA rank 0"},
    {"one_arrival_too_many", CopyBug::kExtraArrival,
     "protocol checker: arrive-overflow: .*barrier 'full' \\[0\\] of CTA rank 0, current phase 0 \\(parity 0\\): 0 of 1 "
     "arrivals and 4096 transaction bytes still missing"},
    {"copy_brings_more_bytes_than_announced", CopyBug::kTooManyBytes,
     "protocol checker: tx-overflow: .*barrier 'full' \\[0\\].*-16 transaction bytes still missing.*\\(bytes of this "
     "copy, bytes counted in the phase\\) 4096, 4096"},
    {"generic_load_before_the_copy_landed", CopyBug::kReadBeforeLanded,
     "protocol checker: load-before-write-visible: .*warp 1 \\(consumer\\).*operand: generic load, shared memory.*"
     "a TMA load completing on barrier 'full' \\[0\\] of CTA rank 0, in its phase 0"},
    {"waiter_two_phases_behind", CopyBug::kWaiterBehind,
     "protocol checker: waiter-behind: .*barrier 'tick' \\[0\\].*\\(phases completed at this warp's last wait, now\\) 0, 3"},
};

// 100 by default; GEMM_PROTOCOL_REPETITIONS=n to print each message quickly.
const int kRepetitions = std::getenv("GEMM_PROTOCOL_REPETITIONS") ? std::atoi(std::getenv("GEMM_PROTOCOL_REPETITIONS")) : 100;

class GpuProtocolCheckerCopy : public GpuProtocolChecker, public ::testing::WithParamInterface<CopyCase> {};
TEST_P(GpuProtocolCheckerCopy, CaughtInEveryRepetitionWithItsMessage) {
  const CopyCase c = GetParam();
  std::string first;
  for (int i = 0; i < kRepetitions; ++i) {
    const Outcome o = run_copy(c.bug);
    if (i == 0) first = o.violation;
    ASSERT_THAT(o.violation, ::testing::ContainsRegex(c.message)) << "repetition " << i;
  }
  std::printf("%s\n", first.c_str());
}
INSTANTIATE_TEST_SUITE_P(Broken, GpuProtocolCheckerCopy, ::testing::ValuesIn(kCopyCases),
                         [](const ::testing::TestParamInfo<CopyCase>& i) { return std::string(i.param.name); });

// Stage 04's broken twin. The first reads reported are those of k-tile kRingSlots: slot 0 in its second
// phase (phase 1), by whichever warp declares first.
struct RingCase {
  const char* name;
  RingBug bug;
  const char* message;
};
const RingCase kRingCases[] = {
    {"consumer_skips_the_full_wait", RingBug::kSkipFullWait,
     "protocol checker: load-before-write-visible: generic loads read shared memory whose last write is not "
     "visible to the reading warp\n  by: warp [0-3] \\((producer|consumer)\\) of CTA rank 0.*operand: generic "
     "load, shared memory.*earlier write not visible: by a TMA load completing on barrier 'full' \\[0\\] of "
     "CTA rank 0, in its phase 1"},
};

class GpuProtocolCheckerRing : public GpuProtocolChecker, public ::testing::WithParamInterface<RingCase> {};
TEST_P(GpuProtocolCheckerRing, CaughtInEveryRepetitionWithItsMessage) {
  const RingCase c = GetParam();
  std::string first;
  for (int i = 0; i < kRepetitions; ++i) {
    const Outcome o = run_ring(c.bug);
    if (i == 0) first = o.violation;
    ASSERT_THAT(o.violation, ::testing::ContainsRegex(c.message)) << "repetition " << i;
  }
  std::printf("%s\n", first.c_str());
}
INSTANTIATE_TEST_SUITE_P(Broken, GpuProtocolCheckerRing, ::testing::ValuesIn(kRingCases),
                         [](const ::testing::TestParamInfo<RingCase>& i) { return std::string(i.param.name); });

struct StoreCase {
  const char* name;
  StoreBug bug;
  const char* message;
};
const StoreCase kStoreCases[] = {
    {"tma_store_of_unfenced_stores", StoreBug::kNoProxyFence,
     "protocol checker: missing-proxy-fence: .*warp 0 \\(epilogue\\).*operand: TMA store source, shared memory.*"
     "earlier write not visible: by warp 0 \\(epilogue\\) of CTA rank 0"},
    {"staging_rewritten_before_the_store_read_it", StoreBug::kRewriteBeforeRead,
     "protocol checker: store-overwrites-unfinished: .*operand: generic store, shared memory.*earlier read not visible "
     "as finished: by the bulk-copy unit reading for warp 0 of CTA rank 0 \\(TMA store\\)"},
    // Warp 1's stores are fenced, so the proxy-fence rule would pass them; what the store lacks is their
    // hand-over, and visibility is checked first.
    {"staging_written_by_another_warp_not_handed_over", StoreBug::kSecondWriterNoHandOver,
     "protocol checker: tma-store-reads-unfinished: .*by: warp 0 \\(epilogue\\).*operand: TMA store source, shared "
     "memory.*earlier write not visible: by warp 1 \\(epilogue\\) of CTA rank 0"},
};

class GpuProtocolCheckerStore : public GpuProtocolChecker, public ::testing::WithParamInterface<StoreCase> {};
TEST_P(GpuProtocolCheckerStore, CaughtInEveryRepetitionWithItsMessage) {
  const StoreCase c = GetParam();
  std::string first;
  for (int i = 0; i < kRepetitions; ++i) {
    const Outcome o = run_store(c.bug);
    if (i == 0) first = o.violation;
    ASSERT_THAT(o.violation, ::testing::ContainsRegex(c.message)) << "repetition " << i;
  }
  std::printf("%s\n", first.c_str());
}
INSTANTIATE_TEST_SUITE_P(Broken, GpuProtocolCheckerStore, ::testing::ValuesIn(kStoreCases),
                         [](const ::testing::TestParamInfo<StoreCase>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace gemm
