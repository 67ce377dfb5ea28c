// The protocol checker's rules that the GEMM pipeline of test_tcgen05_protocol.cu does not reach:
// mbarrier lifecycle, generic loads of copied data, TMA stores and their bulk groups. Each small
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

// ---- A TMA store of a staging buffer, written twice ----------------------------------------------------

enum class StoreBug : int {
  kNone,
  kNoProxyFence,      // the stores are not fenced before the TMA store reads them
  kRewriteBeforeRead, // the staging buffer is rewritten before wait_group.read says the store read it
};

constexpr int kStoreRows = 32, kStoreCols = 32, kStagingBytes = kStoreRows * kStoreCols * 2;

__host__ __device__ float store_value(int tile, int r, int c) { return float(tile * 1000 + r * 32 + c) * 0.25f; }

__global__ void __launch_bounds__(32) store_kernel(const __grid_constant__ CUtensorMap map_c, StoreBug bug) {
  ProtocolScope protocol_scope;
  __shared__ alignas(1024) unsigned char staging[kStagingBytes];
  const int lane = int(threadIdx.x);
  protocol_role("epilogue");
  for (int tile = 0; tile < 2; ++tile) {
    if (tile == 1 && bug != StoreBug::kRewriteBeforeRead) {
      if (lane == 0) bulk_wait_group_read<0>();  // the first store has read the buffer
      __syncwarp();
    }
    for (int q = 0; q < 4; ++q) {  // row `lane`: 4 chunks of 8 halves, 64-byte swizzle as the map says
      __align__(16) __half h[8];
      for (int i = 0; i < 8; ++i) h[i] = __float2half_rn(store_value(tile, lane, 8 * q + i));
      *reinterpret_cast<uint4*>(staging + swizzle_64b(uint32_t(lane), uint32_t(16 * q))) = *reinterpret_cast<const uint4*>(h);
    }
    protocol_generic_write(staging, kStagingBytes);
    if (bug != StoreBug::kNoProxyFence) fence_proxy_async_shared();
    __syncwarp();
    if (lane == 0) {
      tma_store_3d(&map_c, 0, kStoreRows * tile, 0, staging, kStagingBytes);
      bulk_commit_group();
    }
    __syncwarp();
  }
  if (lane == 0) bulk_wait_group<0>();
  __syncwarp();
}

Outcome run_store(StoreBug bug) {
  bind_device_state();  // this file's deadline and checker (common/device_state.h)
  DeviceBuffer<__half> c(size_t(2 * kStoreRows) * kStoreCols);
  c.fill_bytes(0xFF);
  const CUtensorMap map = encode_tensor_map(plan_fp16_output(c.get(), 2 * kStoreRows, kStoreCols, 1, kStoreRows, kStoreCols));
  store_kernel<<<1, 32>>>(map, bug);
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

TEST_F(GpuProtocolChecker, StoreTwinWritesEveryValueAndIsSilent) {
  const Outcome o = run_store(StoreBug::kNone);
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
