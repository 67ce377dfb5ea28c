// Stage 04 against the CPU reference (the common NVFP4 cases plus K from a fraction of one k-tile to
// many times the slot count), and the pieces it adds: where TMA puts swizzled bytes, the tensor-map
// parameters, and the debug-build trap of a stuck mbarrier wait.
#include "kernel.cuh"

#include <vector>

#include "common/device_buffer.h"
#include "common/harness/gemm_tests.h"

namespace {

using gemm::DeviceBuffer;
constexpr gemm::testing::Tile kTile{stage04::kBM, stage04::kBN, stage04::kTileK};

// The common cases, and the pipeline's: one partial k-tile, exactly one, exactly kSlots, one more
// than kSlots, and several times around the ring.
std::vector<gemm::testing::GemmCase> cases() {
  auto c = gemm::testing::kind_cases(stage04::kStage, kTile);
  const int S = stage04::kSlots, T = stage04::kTileK;
  for (int K : {32, T, S * T, (S + 1) * T + 32, 4 * S * T + 96}) {
    for (gemm::Tier tier : {gemm::Tier::kExact, gemm::Tier::kRealistic}) {
      const std::string name = std::string("pipeline_") + gemm::tier_name(tier) + "_K" + std::to_string(K);
      c.push_back({name, {130, 70, K, 1}, tier});
    }
  }
  return c;
}

GEMM_STAGE_TESTS(Nvfp4Tma, stage04::kStage, stage04::launch, cases(), kTile)

// ---- TMA writes the layout common/swizzle.h describes ------------------------------------------------

__global__ void tma_copy_one_box(const __grid_constant__ CUtensorMap map, int x, int y, int z, uint8_t* out) {
  gemm::ptx::ProtocolScope protocol_scope;  // the protocol checker sees each thread enter and leave (no code in release)
  extern __shared__ unsigned char raw[];
  unsigned char* tile = gemm::align_to_swizzle_atom(raw);
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    gemm::ptx::mbarrier_init(&bar, 1);
    gemm::ptx::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    gemm::ptx::mbarrier_arrive_expect_tx(&bar, 128 * 128);
    gemm::ptx::tma_load_3d(tile, &map, x, y, z, &bar, 128 * 128);
  }
  gemm::ptx::mbarrier_wait(&bar, 0, "tma test", 0);
  for (int i = threadIdx.x; i < 128 * 128; i += blockDim.x) out[i] = tile[i];  // shared memory as it is
}

TEST(GpuTmaSwizzle, BytesLandWhereSwizzle128BSays) {
  GEMM_REQUIRE_GPU();
  // A 300-row x 512-value (256-byte rows) x 2-batch operand whose byte (l, r, c) is unique enough:
  // the box at rows 128.., bytes 128.., batch 1 must arrive as shared[swizzle(row, col)] = src.
  const int rows = 300, K = 512, L = 2, pitch = K / 2;
  std::vector<uint8_t> src(size_t(rows) * pitch * L);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t((i * 2654435761u) >> 13);
  DeviceBuffer<uint8_t> d_src(src), d_out(128 * 128);
  d_out.fill_bytes(0xFF);  // poison: a byte TMA did not deliver cannot pass (the source is not all 0xFF)
  const CUtensorMap map = gemm::encode_tensor_map(gemm::plan_packed_operand(d_src.get(), rows, K, L, 128, 128));
  CUDA_CHECK(cudaFuncSetAttribute(tma_copy_one_box, cudaFuncAttributeMaxDynamicSharedMemorySize, 2 * 128 * 128));
  const int x = 128, y = 200, z = 1;  // rows 200..327: the last 28 are past the tensor and must be zeros
  tma_copy_one_box<<<1, 128, 2 * 128 * 128>>>(map, x, y, z, d_out.get());
  CUDA_CHECK_LAUNCH();
  const auto got = d_out.download();
  int64_t bad = 0;
  for (int r = 0; r < 128; ++r)
    for (int c = 0; c < 128; ++c) {
      const int gr = y + r;
      const uint8_t want = gr < rows ? src[(size_t(z) * rows + gr) * pitch + x + c] : 0;
      bad += got[gemm::swizzle_128b(uint32_t(r), uint32_t(c))] != want;
    }
  EXPECT_EQ(bad, 0) << "bytes not where common/swizzle.h puts them";
}

// ---- Tensor-map parameters ----------------------------------------------------------------------------

TEST(TensorMapPlan, DescribesThePackedOperand) {
  auto* base = reinterpret_cast<const uint8_t*>(0x100000);
  const gemm::TensorMapPlan p = gemm::plan_packed_operand(base, 300, 1024, 3, 128, 128);
  EXPECT_EQ(p.dims[0], 512u);  // bytes per row = K / 2
  EXPECT_EQ(p.dims[1], 300u);
  EXPECT_EQ(p.dims[2], 3u);
  EXPECT_EQ(p.strides[0], 512u);
  EXPECT_EQ(p.strides[1], 512u * 300u);
  EXPECT_EQ(p.box[0], 128u);
  EXPECT_EQ(p.box[1], 128u);
  EXPECT_EQ(p.box[2], 1u);
  EXPECT_EQ(p.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
}

TEST(TensorMapPlan, RejectsWhatTmaCannotAddress) {
  auto* base = reinterpret_cast<const uint8_t*>(0x100000);
  EXPECT_THROW(gemm::plan_packed_operand(base + 8, 128, 256, 1, 128, 128), std::invalid_argument);  // misaligned
  EXPECT_THROW(gemm::plan_packed_operand(base, 128, 48, 1, 128, 128), std::invalid_argument);  // pitch 24 bytes
  EXPECT_THROW(gemm::plan_packed_operand(base, 128, 256, 1, 128, 256), std::invalid_argument);  // box > 128 B
  EXPECT_THROW(gemm::plan_packed_operand(base, 128, 256, 1, 300, 128), std::invalid_argument);  // box > 256 rows
  EXPECT_THROW(gemm::plan_packed_operand(nullptr, 128, 256, 1, 128, 128), std::invalid_argument);
}

TEST(GpuTensorMap, TheDriverAcceptsThePlan) {
  GEMM_REQUIRE_GPU();
  DeviceBuffer<uint8_t> buf(size_t(257) * 1056 / 2 * 2);
  EXPECT_NO_THROW(gemm::encode_tensor_map(gemm::plan_packed_operand(buf.get(), 257, 1056, 2, 128, 128)));
}

// ---- A stuck wait traps with the barrier's name instead of hanging --------------------------------------

__global__ void wait_forever() {
  gemm::ptx::ProtocolScope protocol_scope;  // the protocol checker sees each thread enter and leave (no code in release)
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) gemm::ptx::mbarrier_init(&bar, 1);  // nobody will ever arrive
  __syncthreads();
  gemm::ptx::mbarrier_wait_bounded(&bar, 0, 20'000'000 /* 20 ms */, "never", 7);
}

[[noreturn]] void run_stuck_kernel_and_exit() {
  wait_forever<<<1, 32>>>();
  gemm::testing::exit_with_kernel_status();
}

TEST(GpuMbarrierDeathTest, BoundedWaitTrapsInsteadOfHanging) {
  GEMM_REQUIRE_GPU();
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child re-executes: a fresh CUDA context
  EXPECT_EXIT(run_stuck_kernel_and_exit(), ::testing::ExitedWithCode(gemm::testing::kKernelFailedExit),
              "kernel ended with: .+");
}

}  // namespace
