// Stage 02 against the CPU reference (the common case list: K not a multiple of 4 exercises the
// scalar copy path, the rest the 16-byte one), plus the layout itself checked with the bank model.
#include "kernel.cuh"

#include <set>
#include <vector>

#include "common/bank_model.h"
#include "common/device_buffer.h"
#include "common/harness/compare.h"
#include "common/harness/gemm_tests.h"
#include "common/reference.h"

namespace {

constexpr gemm::testing::Tile kTile{stage02::kBM, stage02::kBN, stage02::kBK};

GEMM_STAGE_TESTS(Swizzled, stage02::kStage, stage02::launch, gemm::testing::kind_cases(stage02::kStage, kTile), kTile)

using stage02::kThreadsN;

// Byte addresses the 32 lanes of warp `w` access when reading chunk `ch` of their i-th A row or
// j-th B row in the compute loop (thread t: tx = t % 16, ty = t / 16, as in the kernel).
std::vector<uint32_t> compute_loop_addresses(int w, int ch, int ij, bool operand_b, bool swizzled) {
  std::vector<uint32_t> a;
  for (int lane = 0; lane < 32; ++lane) {
    const int t = 32 * w + lane, tx = t % kThreadsN, ty = t / kThreadsN;
    const int row = operand_b ? tx + stage02::kThreadsN * ij : ty + stage02::kThreadsM * ij;
    a.push_back(swizzled ? stage02::smem_offset(row, ch) : uint32_t(row * 128 + ch * 16));
  }
  return a;
}

TEST(SwizzledLayout, ComputeLoopReadsAreConflictFree) {
  for (int w = 0; w < stage02::kThreads / 32; ++w)
    for (int ch = 0; ch < stage02::kChunksPerRow; ++ch)
      for (int ij = 0; ij < 8; ++ij)
        for (bool b : {false, true}) {
          const gemm::BankReport r = gemm::bank_conflicts(compute_loop_addresses(w, ch, ij, b, true), 16);
          ASSERT_EQ(r.degree(), 1) << (b ? "B" : "A") << " warp " << w << " chunk " << ch << " i/j " << ij;
        }
}

TEST(SwizzledLayout, WithoutTheSwizzleTheBReadsConflictEightWays) {
  const gemm::BankReport r = gemm::bank_conflicts(compute_loop_addresses(0, 0, 0, true, false), 16);
  EXPECT_EQ(r.degree(), 8);
  // ... while the A reads are broadcasts and never conflict.
  EXPECT_EQ(gemm::bank_conflicts(compute_loop_addresses(0, 0, 0, false, false), 16).degree(), 1);
}

TEST(SwizzledLayout, CopyStoresAreConflictFreeAndCoverTheTile) {
  std::set<uint32_t> written;
  for (int s = 0; s < stage02::kChunkLoadsPerThread; ++s)
    for (int w = 0; w < stage02::kThreads / 32; ++w) {
      std::vector<uint32_t> a;
      for (int lane = 0; lane < 32; ++lane) {
        const int c = 32 * w + lane + s * stage02::kThreads;
        a.push_back(stage02::smem_offset(c / stage02::kChunksPerRow, c % stage02::kChunksPerRow));
        written.insert(a.back());
      }
      ASSERT_EQ(gemm::bank_conflicts(a, 16).degree(), 1) << "copy step " << s << " warp " << w;
    }
  EXPECT_EQ(written.size(), size_t(stage02::kBM * stage02::kChunksPerRow));  // every chunk exactly once
}

// 4-byte aligned but not 16-byte aligned operands must take the scalar path and stay correct.
TEST(GpuSwizzledAlignment, UnalignedOperandsTakeTheScalarPath) {
  GEMM_REQUIRE_GPU();
  const int M = 130, N = 70, K = 64;
  const gemm::HostFp32Problem p = gemm::make_fp32_problem(M, N, K, 1, gemm::Tier::kExact, gemm::seed_for("unaligned"));
  std::vector<float> a(p.A.size() + 1), b(p.B.size() + 1);
  std::copy(p.A.begin(), p.A.end(), a.begin() + 1);
  std::copy(p.B.begin(), p.B.end(), b.begin() + 1);
  gemm::DeviceBuffer<float> dA(a), dB(b), dC(size_t(M) * N);
  dC.fill_bytes(0xFF);
  stage02::launch({M, N, K, 1, dA.get() + 1, dB.get() + 1, dC.get()}, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto r = gemm::compare_fp32(dC.download(), gemm::reference_gemm(p.host_args()), {M, N, K, 1}, gemm::Tier::kExact);
  EXPECT_TRUE(r.ok()) << r.describe();
}

}  // namespace
