// The tcgen05 wrappers, instruction by instruction, on the GPU. On Hopper this exercises the
// emulator; on a B200 the same tests run the hardware. Operands are placed the way a kernel places
// them: A and B by TMA with the 128-byte swizzle, scale atoms by bulk copy and tcgen05.cp. The data
// is exact-tier NVFP4 (common/harness/problems.h), so results must match the CPU reference bit for bit.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/deadline.h"
#include "common/device_buffer.h"
#include "common/device_info.h"
#include "common/harness/gemm_tests.h"
#include "common/harness/problems.h"
#include "common/ptx/cluster.cuh"
#include "common/ptx/tcgen05.cuh"
#include "common/ptx/tma.cuh"
#include "common/reference.h"
#include "common/swizzle.h"
#include "common/tensor_map.h"

namespace gemm {
namespace {

using namespace gemm::ptx;
// Waits in these kernels are bounded by the process's deadline (common/deadline.h): a lost arrive
// fails the test, never hangs it. Waits on barriers that commits arrive on go through wait_commit.

// What a test MMA kernel does differently (the negative tests break one thing each).
struct Mutation {
  uint32_t sbo_override = 0;     // nonzero: A's descriptor gets this SBO
  int layout_override = -1;      // >= 0: A's descriptor gets this layout type
  bool swap_sf_steps = false;    // read the scales of K step j ^ 1
  bool restart_last = false;     // after the K loop, one more MMA of step 0 with enable-input-d off
  bool warp_collective = true;   // _warp wrappers (else: one thread, the PTX convention)
};

constexpr int kSfColumn = 256;  // TMEM: D in columns [0, N), scale factors from column 256

struct MmaParams {
  int K, N;            // this CTA pair's N (B rows in all, both CTAs)
  int n_total;         // columns of the output matrix
  const uint8_t* sfa;  // blocked scales of A (rows of the whole problem)
  const uint8_t* sfb;
  int sfa_tiles_per_row_block, sfb_tiles_per_row_block;
  float* out;          // M_total x n_total
  Mutation mut;
};

// One CTA (kCtaGroup 1: M = 128) or one CTA pair (kCtaGroup 2: M = 256) computes a 128*kCtaGroup x N
// tile of D = A B^T over the whole K, with every operand resident in shared memory.
template <int kCtaGroup>
__global__ void __launch_bounds__(128) mma_tile_kernel(const __grid_constant__ CUtensorMap map_a,
                                                        const __grid_constant__ CUtensorMap map_b, MmaParams p) {
  ProtocolScope protocol_scope;  // the protocol checker sees each thread enter and leave (no code in release)
  extern __shared__ unsigned char raw[];
  unsigned char* smem = align_to_swizzle_atom(raw);
  __shared__ uint64_t full, done;
  __shared__ uint32_t tmem_base;

  const int rank = kCtaGroup == 2 ? int(cluster_ctarank()) : 0;
  const bool leader = rank == 0;
  const int k_steps = p.K / 64, atoms = p.K / 256 > 0 ? p.K / 256 : 1;
  const int b_rows = p.N / kCtaGroup;
  const int m0 = int(blockIdx.x / kCtaGroup) * 128 * kCtaGroup + 128 * rank;  // this CTA's A rows
  const int n0 = int(blockIdx.y) * p.N;                                         // the pair's B rows
  unsigned char* a_tiles = smem;                                   // atoms x 128 rows x 128 B
  unsigned char* b_tiles = a_tiles + atoms * 128 * 128;            // atoms x b_rows x 128 B
  uint8_t* sfa = b_tiles + atoms * b_rows * 128;                   // k_steps x 512 B
  const int sfb_atoms = (p.N + 127) / 128;
  uint8_t* sfb = sfa + k_steps * 512;                              // k_steps x sfb_atoms x 512 B

  if (threadIdx.x == 0) {
    mbarrier_init(&full, 1);
    mbarrier_init(&done, 1);
    fence_mbarrier_init();
  }
  // A pair's collective alloc needs the peer CTA known to be running: a cluster barrier first.
  if constexpr (kCtaGroup == 2) cluster_sync();
  if (threadIdx.x < 32) tcgen05_alloc<kCtaGroup>(&tmem_base, 512);
  tcgen05_fence_before_thread_sync();
  cta_sync();  // a CTA barrier the checker sees (it orders Tensor Memory work across warps)
  if constexpr (kCtaGroup == 2) cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem = tmem_base;

  // Every CTA loads its own operands: its 128 rows of A, its share of B, its scales of A, all of SFB.
  if (threadIdx.x == 0) {
    const uint32_t bytes = uint32_t(atoms * 128 * 128 + atoms * b_rows * 128 + k_steps * 512 + k_steps * sfb_atoms * 512);
    mbarrier_arrive_expect_tx(&full, bytes);
    for (int a = 0; a < atoms; ++a) {
      tma_load_3d(a_tiles + a * 128 * 128, &map_a, a * 128, m0, 0, &full, 128 * 128);
      tma_load_3d(b_tiles + a * b_rows * 128, &map_b, a * 128, n0 + rank * b_rows, 0, &full, uint32_t(b_rows * 128));
    }
    for (int j = 0; j < k_steps; ++j) {
      bulk_copy_g2s(sfa + j * 512, p.sfa + (int64_t(m0 / 128) * p.sfa_tiles_per_row_block + j) * 512, 512, &full);
      for (int t = 0; t < sfb_atoms; ++t)
        bulk_copy_g2s(sfb + (j * sfb_atoms + t) * 512,
                      p.sfb + (int64_t(n0 / 128 + t) * p.sfb_tiles_per_row_block + j) * 512, 512, &full);
    }
  }
  mbarrier_wait_bounded(&full, 0, wait_timeout_ns(), "full", 0);
  if constexpr (kCtaGroup == 2) cluster_sync();
  tcgen05_fence_after_thread_sync();

  const uint32_t idesc = tcgen05::nvfp4_instr_descriptor(128 * kCtaGroup, uint32_t(p.N));
  auto a_desc = [&](int j) {
    uint64_t d = tcgen05::kmajor_sw128_descriptor(smem_addr(a_tiles + (j / 4) * 128 * 128));
    if (p.mut.sbo_override || p.mut.layout_override >= 0) {
      tcgen05::SmemDescriptor s = tcgen05::decode_smem_descriptor(d);
      if (p.mut.sbo_override) s.sbo = p.mut.sbo_override;
      if (p.mut.layout_override >= 0) s.layout = tcgen05::Layout(p.mut.layout_override);
      d = tcgen05::encode(s);
    }
    return tcgen05::advance_start(d, 32 * (j % 4));
  };
  auto b_desc = [&](int j) {
    return tcgen05::advance_start(tcgen05::kmajor_sw128_descriptor(smem_addr(b_tiles + (j / 4) * b_rows * 128)), 32 * (j % 4));
  };
  auto sfa_col = [&](int j) { return uint32_t(kSfColumn + 4 * j); };
  auto sfb_col = [&](int j) { return uint32_t(kSfColumn + 4 * k_steps + 4 * sfb_atoms * j); };
  auto issue = [&](bool warp) {
    for (int j = 0; j < k_steps; ++j) {
      const int js = p.mut.swap_sf_steps ? (j ^ 1) % k_steps : j;
      if (warp) {
        tcgen05_cp_32x128b_warpx4_warp<kCtaGroup>(tmem + sfa_col(j), tcgen05::sf_atom_descriptor(smem_addr(sfa + js * 512)));
        for (int t = 0; t < sfb_atoms; ++t)
          tcgen05_cp_32x128b_warpx4_warp<kCtaGroup>(tmem + sfb_col(j) + 4 * t,
                                                    tcgen05::sf_atom_descriptor(smem_addr(sfb + (js * sfb_atoms + t) * 512)));
        tcgen05_mma_nvfp4_warp<kCtaGroup>(tmem, a_desc(j), b_desc(j), idesc, tmem + sfa_col(j), tmem + sfb_col(j), j > 0);
      } else {
        tcgen05_cp_32x128b_warpx4<kCtaGroup>(tmem + sfa_col(j), tcgen05::sf_atom_descriptor(smem_addr(sfa + js * 512)));
        for (int t = 0; t < sfb_atoms; ++t)
          tcgen05_cp_32x128b_warpx4<kCtaGroup>(tmem + sfb_col(j) + 4 * t,
                                               tcgen05::sf_atom_descriptor(smem_addr(sfb + (js * sfb_atoms + t) * 512)));
        tcgen05_mma_nvfp4<kCtaGroup>(tmem, a_desc(j), b_desc(j), idesc, tmem + sfa_col(j), tmem + sfb_col(j), j > 0);
      }
    }
    if (p.mut.restart_last) {  // D = A_0 B_0 only: the accumulated value must be ignored
      if (warp)
        tcgen05_mma_nvfp4_warp<kCtaGroup>(tmem, a_desc(0), b_desc(0), idesc, tmem + sfa_col(0), tmem + sfb_col(0), false);
      else
        tcgen05_mma_nvfp4<kCtaGroup>(tmem, a_desc(0), b_desc(0), idesc, tmem + sfa_col(0), tmem + sfb_col(0), false);
    }
  };
  const uint16_t pair_mask = kCtaGroup == 2 ? 0x3 : 0x1;
  if (leader && threadIdx.x < 32) {
    if (p.mut.warp_collective) {
      issue(true);
      tcgen05_commit_multicast_warp<kCtaGroup>(&done, pair_mask);
    } else if (elect_one_sync()) {
      issue(false);
      tcgen05_commit_multicast<kCtaGroup>(&done, pair_mask);
    }
  }
  // Every CTA's 128 rows of D arrive in its own Tensor Memory; each warp reads its 32 lanes.
  wait_commit(&done, 0, "done", 0);
  tcgen05_fence_after_thread_sync();
  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  for (int c = 0; c < p.N; c += 32) {
    uint32_t r[32];
    tcgen05_ld_32x32b<32>(tmem + tcgen05::tmem_address(32 * warp, uint32_t(c)), r);
    tcgen05_wait_ld();
    for (int i = 0; i < 32 && c + i < p.N; ++i)
      p.out[int64_t(m0 + 32 * warp + lane) * p.n_total + n0 + c + i] = __uint_as_float(r[i]);
  }
  tcgen05_fence_before_thread_sync();
  cta_sync();  // a CTA barrier the checker sees (it orders Tensor Memory work across warps)
  if constexpr (kCtaGroup == 2) cluster_sync();
  if (threadIdx.x < 32) {
    tcgen05_relinquish_alloc_permit<kCtaGroup>();
    tcgen05_dealloc<kCtaGroup>(tmem, 512);
  }
}

struct MmaRun {
  std::vector<float> got;
  ReferenceOutput ref;
  int M, N;
  int64_t mismatches() const {
    int64_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) bad += !(double(got[i]) == ref.value[i]);
    return bad;
  }
};

// M x n_total x K exact-tier problem, tiles of 128 * kCtaGroup x N, run through mma_tile_kernel.
template <int kCtaGroup>
MmaRun run_mma(int M, int n_total, int N, int K, Mutation mut, float* ms = nullptr) {
  bind_device_state();  // this file's deadline, checker and emulator (common/device_state.h)
  const HostNvfp4Problem prob = make_nvfp4_problem(M, n_total, K, 1, Tier::kExact, seed_for("tcgen05_" + std::to_string(K)));
  DeviceBuffer<uint8_t> A(prob.a.data), SFA(prob.a.sf), B(prob.b.data), SFB(prob.b.sf);
  DeviceBuffer<float> out(size_t(M) * n_total);
  out.fill_bytes(0xFF);
  const int b_rows = N / kCtaGroup, atoms = std::max(1, K / 256), k_steps = K / 64;
  const int box_bytes = std::min(128, K / 2);
  const CUtensorMap ma = encode_tensor_map(plan_packed_operand(A.get(), M, K, 1, 128, box_bytes));
  const CUtensorMap mb = encode_tensor_map(plan_packed_operand(B.get(), n_total, K, 1, b_rows, box_bytes));
  MmaParams p{K, N, n_total, SFA.get(), SFB.get(), int(sf_padded_cols(K) / 4), int(sf_padded_cols(K) / 4), out.get(), mut};
  const int smem = 1024 + atoms * 128 * 128 + atoms * b_rows * 128 + k_steps * 512 + k_steps * ((N + 127) / 128) * 512;
  CUDA_CHECK(cudaFuncSetAttribute(mma_tile_kernel<kCtaGroup>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(M / 128), unsigned(n_total / N));
  cfg.blockDim = dim3(128);
  cfg.dynamicSmemBytes = size_t(smem);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = kCtaGroup;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, mma_tile_kernel<kCtaGroup>, ma, mb, p));
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaDeviceSynchronize());
  if (ms) CUDA_CHECK(cudaEventElapsedTime(ms, start, stop));
  MmaRun r{out.download(), {}, M, n_total};
  Nvfp4GemmArgs h = prob.host_args();
  if (mut.restart_last) h.K = 64;  // the last MMA saw only the first 64 values of k
  if (mut.restart_last) {
    // Reference of K = 64: the same rows with only their first 64 values (32 bytes) and scales.
    HostNvfp4Problem p64 = make_nvfp4_problem(M, n_total, 64, 1, Tier::kExact, 1);
    for (int i = 0; i < M; ++i)
      for (int b = 0; b < 32; ++b) p64.a.data[size_t(i) * 32 + b] = prob.a.data[size_t(i) * (K / 2) + b];
    for (int i = 0; i < n_total; ++i)
      for (int b = 0; b < 32; ++b) p64.b.data[size_t(i) * 32 + b] = prob.b.data[size_t(i) * (K / 2) + b];
    for (int i = 0; i < M; ++i)
      for (int s = 0; s < 4; ++s) p64.a.sf[sf_offset(i, s, 64)] = prob.a.sf[sf_offset(i, s, K)];
    for (int i = 0; i < n_total; ++i)
      for (int s = 0; s < 4; ++s) p64.b.sf[sf_offset(i, s, 64)] = prob.b.sf[sf_offset(i, s, K)];
    r.ref = reference_gemm(p64.host_args());
  } else {
    r.ref = reference_gemm(h);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return r;
}

// ---- One MMA tile, exact --------------------------------------------------------------------------------

struct MmaCase {
  int cta_group, N, K;
  bool warp;
};

class GpuTcgen05Mma : public ::testing::TestWithParam<MmaCase> {};

TEST_P(GpuTcgen05Mma, MatchesTheReferenceBitForBit) {
  GEMM_REQUIRE_GPU();
  const MmaCase c = GetParam();
  Mutation mut;
  mut.warp_collective = c.warp;
  const MmaRun r = c.cta_group == 1 ? run_mma<1>(128, c.N, c.N, c.K, mut) : run_mma<2>(256, c.N, c.N, c.K, mut);
  EXPECT_EQ(r.mismatches(), 0) << "of " << r.got.size();
  EXPECT_EQ(emu::allocated_units(), 0) << "Tensor Memory left allocated";
}

std::string mma_case_name(const ::testing::TestParamInfo<MmaCase>& info) {
  const MmaCase& c = info.param;
  return "cta_group" + std::to_string(c.cta_group) + "_M" + std::to_string(128 * c.cta_group) + "_N" +
         std::to_string(c.N) + "_K" + std::to_string(c.K) + (c.warp ? "_warp" : "_one_thread");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuTcgen05Mma,
    ::testing::Values(MmaCase{1, 64, 256, true}, MmaCase{1, 128, 256, true}, MmaCase{1, 256, 512, true},
                      MmaCase{1, 128, 512, false}, MmaCase{2, 64, 256, true}, MmaCase{2, 128, 512, true},
                      MmaCase{2, 256, 512, true}, MmaCase{2, 256, 256, false}),
    mma_case_name);

TEST(GpuTcgen05MmaInputD, EnableInputDOffIgnoresTheAccumulator) {
  GEMM_REQUIRE_GPU();
  Mutation mut;
  mut.restart_last = true;
  const MmaRun r = run_mma<1>(128, 128, 128, 256, mut);
  EXPECT_EQ(r.mismatches(), 0) << "enable-input-d = false must give A_0 B_0 alone";
}

// ---- Negative tests: a broken descriptor or scale layout cannot pass ------------------------------------

TEST(GpuTcgen05MmaNegative, WrongSboGivesAWrongResult) {
  GEMM_REQUIRE_GPU();
  Mutation mut;
  mut.sbo_override = 512;
  EXPECT_GT(run_mma<1>(128, 128, 128, 256, mut).mismatches(), 128 * 128 / 2);
}

TEST(GpuTcgen05MmaNegative, WrongSwizzleModeGivesAWrongResult) {
  GEMM_REQUIRE_GPU();
  Mutation mut;
  mut.layout_override = int(tcgen05::Layout::kSwizzle64B);
  EXPECT_GT(run_mma<1>(128, 128, 128, 256, mut).mismatches(), 128 * 128 / 2);
}

TEST(GpuTcgen05MmaNegative, SwappedScaleStepsGiveAWrongResult) {
  GEMM_REQUIRE_GPU();
  Mutation mut;
  mut.swap_sf_steps = true;
  EXPECT_GT(run_mma<1>(128, 128, 128, 256, mut).mismatches(), 128 * 128 / 2);
}

// ---- A whole GEMM through the wrappers, timed -------------------------------------------------------------

TEST(GpuTcgen05Gemm, Emulated1024CubedIsExactAndTakesSeconds) {
  GEMM_REQUIRE_GPU();
  Mutation mut;
  float ms = 0;
  const MmaRun r = run_mma<1>(1024, 1024, 256, 1024, mut, &ms);
  EXPECT_EQ(r.mismatches(), 0);
  const bool emulated = !gpu_info().tcgen05_native();
  RecordProperty("ms", std::to_string(ms));
  std::printf("1024^3 NVFP4 GEMM through the tcgen05 wrappers (%s, 32 CTAs of 128 x 256, 16 MMAs each): %.1f ms\n",
              (emulated ? "EMULATED on " + gpu_info().name : std::string("native")).c_str(), double(ms));
  // The emulator must stay fast enough to test kernels with: under 5 s for this GEMM (unless a
  // sanitizer slows every kernel down by orders of magnitude).
  if (emulated && !under_injected_tool()) EXPECT_LT(ms, 5000.0f);
}

// ---- tcgen05.cp and tcgen05.ld round trip ------------------------------------------------------------------

__global__ void cp_ld_round_trip(const uint8_t* pattern, uint32_t* out) {
  ProtocolScope protocol_scope;  // the protocol checker sees each thread enter and leave (no code in release)
  __shared__ __align__(128) uint8_t atom[512];
  __shared__ uint32_t tmem_base;
  __shared__ uint64_t done;
  for (int i = threadIdx.x; i < 512; i += blockDim.x) atom[i] = pattern[i];
  fence_proxy_async_shared();  // generic-proxy writes, read by tcgen05.cp (async proxy)
  if (threadIdx.x == 0) {
    mbarrier_init(&done, 1);
    fence_mbarrier_init();
  }
  if (threadIdx.x < 32) tcgen05_alloc<1>(&tmem_base, 32);
  tcgen05_fence_before_thread_sync();
  cta_sync();  // a CTA barrier the checker sees (it orders Tensor Memory work across warps)
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem = tmem_base;
  if (threadIdx.x < 32) {
    tcgen05_cp_32x128b_warpx4_warp<1>(tmem + 8, tcgen05::sf_atom_descriptor(smem_addr(atom)));
    tcgen05_commit_warp<1>(&done);
  }
  wait_commit(&done, 0, "done", 0);
  tcgen05_fence_after_thread_sync();
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  uint32_t r[4];
  tcgen05_ld_32x32b<4>(tmem + tcgen05::tmem_address(32 * warp, 8), r);
  tcgen05_wait_ld();
  for (int j = 0; j < 4; ++j) out[(warp * 32 + lane) * 4 + j] = r[j];
  tcgen05_fence_before_thread_sync();
  cta_sync();  // a CTA barrier the checker sees (it orders Tensor Memory work across warps)
  if (threadIdx.x < 32) tcgen05_dealloc<1>(tmem, 32);
}

TEST(GpuTcgen05CpLd, AtomLandsInAllFourQuadrants) {
  GEMM_REQUIRE_GPU();
  bind_device_state();  // this file's deadline, checker and emulator (common/device_state.h)
  std::vector<uint8_t> pattern(512);
  for (int i = 0; i < 512; ++i) pattern[i] = uint8_t(i * 37 + 11);
  DeviceBuffer<uint8_t> d_pattern(pattern);
  DeviceBuffer<uint32_t> out(128 * 4);
  out.fill_bytes(0xFF);  // poison (no word of the pattern is 0xFFFFFFFF)
  cp_ld_round_trip<<<1, 128>>>(d_pattern.get(), out.get());
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = out.download();
  for (int lane = 0; lane < 128; ++lane)
    for (int j = 0; j < 4; ++j) {
      const int line = lane % 32;
      const uint32_t want = uint32_t(pattern[line * 16 + 4 * j]) | uint32_t(pattern[line * 16 + 4 * j + 1]) << 8 |
                            uint32_t(pattern[line * 16 + 4 * j + 2]) << 16 | uint32_t(pattern[line * 16 + 4 * j + 3]) << 24;
      ASSERT_EQ(got[lane * 4 + j], want) << "lane " << lane << " column " << j;
    }
  EXPECT_EQ(emu::allocated_units(), 0);
}

// ---- TMA with .cta_group::2 completes on the leader's barrier --------------------------------------------

__global__ void tma_pair_kernel(const __grid_constant__ CUtensorMap map, uint8_t* out) {
  ProtocolScope protocol_scope;  // the protocol checker sees each thread enter and leave (no code in release)
  extern __shared__ unsigned char raw[];
  unsigned char* tile = align_to_swizzle_atom(raw);
  __shared__ uint64_t full;
  const uint32_t rank = cluster_ctarank();
  if (threadIdx.x == 0) {
    mbarrier_init(&full, 1);
    fence_mbarrier_init();
  }
  cluster_sync();
  if (threadIdx.x == 0) {
    if (rank == 0) mbarrier_arrive_expect_tx(&full, 2 * 128 * 128);  // the leader expects both CTAs' bytes
    tma_load_3d_cta_group2(tile, &map, 0, 128 * int(rank), 0, &full, 128 * 128);
  }
  if (rank == 0) mbarrier_wait_bounded(&full, 0, wait_timeout_ns(), "full (leader)", 0);
  cluster_sync();
  for (int i = threadIdx.x; i < 128 * 128; i += blockDim.x) out[rank * 128 * 128 + i] = tile[i];
}

TEST(GpuTcgen05Tma, CtaGroup2LoadCompletesOnTheLeadersBarrier) {
  GEMM_REQUIRE_GPU();
  bind_device_state();  // this file's deadline, checker and emulator (common/device_state.h)
  std::vector<uint8_t> src(256 * 128);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 7 + i / 128);
  DeviceBuffer<uint8_t> d_src(src), out(2 * 128 * 128);
  out.fill_bytes(0xFF);  // poison
  const CUtensorMap map = encode_tensor_map(plan_packed_operand(d_src.get(), 256, 256, 1, 128, 128));
  CUDA_CHECK(cudaFuncSetAttribute(tma_pair_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 2 * 128 * 128));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(2);
  cfg.blockDim = dim3(128);
  cfg.dynamicSmemBytes = 2 * 128 * 128;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 2;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, tma_pair_kernel, map, out.get()));
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = out.download();
  for (int cta = 0; cta < 2; ++cta)
    for (int r = 0; r < 128; ++r)
      for (int c = 0; c < 128; ++c)
        ASSERT_EQ(got[cta * 128 * 128 + swizzle_128b(uint32_t(r), uint32_t(c))], src[(cta * 128 + r) * 128 + c]);
}

// ---- Misuse becomes a trap with a message (emulator only: on hardware these are undefined) ----------------

__global__ void misuse_kernel(int what) {
  ProtocolScope protocol_scope;  // the protocol checker sees each thread enter and leave (no code in release)
  __shared__ uint32_t tmem_base;
  if (threadIdx.x < 32) tcgen05_alloc<1>(&tmem_base, 64);
  cta_sync();  // a CTA barrier the checker sees (it orders Tensor Memory work across warps)
  const uint32_t tmem = tmem_base, warp = threadIdx.x / 32;
  if (what == 0 && warp == 1) {  // warp 1 reads lanes 0..31, which belong to warp 0
    uint32_t r[4];
    tcgen05_ld_32x32b<4>(tmem, r);
    if (r[0] == 12345) printf("unreachable\n");
  }
  if (what == 1 && warp == 0) tcgen05_dealloc<1>(tmem + 32, 32);  // not what alloc returned
  if (what == 2 && warp == 0) {                                   // a Hopper-style descriptor: bit 46 clear
    const uint64_t bad = tcgen05::kmajor_sw128_descriptor(0) & ~(uint64_t(1) << 46);
    tcgen05_mma_nvfp4_warp<1>(tmem, bad, bad, tcgen05::nvfp4_instr_descriptor(128, 64), tmem, tmem, false);
  }
  if (what == 4 && warp == 0)  // scale factors at an odd column
    tcgen05_mma_nvfp4_warp<1>(tmem, tcgen05::kmajor_sw128_descriptor(0), tcgen05::kmajor_sw128_descriptor(0),
                              tcgen05::nvfp4_instr_descriptor(128, 64), tmem + 33, tmem + 40, false);
#if !GEMM_HAS_TCGEN05  // ptxas itself rejects a kernel that mixes cta_group values
  if (what == 3 && warp == 0)  // allocated with cta_group::1, then a cta_group::2 copy
    tcgen05_cp_32x128b_warpx4_warp<2>(tmem, tcgen05::sf_atom_descriptor(0));
#endif
  cta_sync();  // a CTA barrier the checker sees (it orders Tensor Memory work across warps)
  if (threadIdx.x < 32) tcgen05_dealloc<1>(tmem, 64);
}

[[noreturn]] void run_misuse_and_exit(int what) {
  bind_device_state();  // this file's deadline, checker and emulator (common/device_state.h)
  // These kernels break the protocol on purpose before their misuse (they read Tensor Memory nothing
  // wrote, for one); the checker would stop them there. What is tested here is the emulator's own trap.
  protocol::set_mode(protocol::kOff);
  std::fflush(stdout);
  dup2(2, 1);  // the trap message (device printf, stdout) to stderr, which the death test matches
  misuse_kernel<<<1, 64>>>(what);
  testing::exit_with_kernel_status();
}

// The message each misuse must print: a protocol rule in the checker's format (the emulator finds it,
// common/protocol/rules.h), or one of the emulator's own refusals.
const char* const kMisuseMessages[] = {
    "protocol checker: emu-ld-outside-quadrant: .*a warp may only access the 32 lanes of its quadrant",
    "tcgen05 emulator: tcgen05.dealloc: dealloc of what was not allocated",
    "tcgen05 emulator: tcgen05.mma: descriptor bits 46-48 must be 0b001",
    "tcgen05 emulator: tcgen05.cp: mixed cta_group values in one kernel",
    "tcgen05 emulator: tcgen05.mma: scale-factor addresses must be 2-column aligned",
};

class GpuTcgen05MisuseDeathTest : public ::testing::TestWithParam<int> {};

TEST_P(GpuTcgen05MisuseDeathTest, Traps) {
  GEMM_REQUIRE_GPU();
  if (gpu_info().tcgen05_native()) GTEST_SKIP() << "misuse traps are the emulator's; hardware behaviour is undefined";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_misuse_and_exit(GetParam()), ::testing::ExitedWithCode(testing::kKernelFailedExit),
              std::string(kMisuseMessages[GetParam()]) + "(.|\\n)*kernel ended with: .+");
}

std::string misuse_name(const ::testing::TestParamInfo<int>& info) {
  static const char* const kNames[] = {"ld_outside_its_quadrant", "dealloc_of_what_was_not_allocated",
                                       "descriptor_fixed_bits", "mixed_cta_group", "scale_column_not_2_aligned"};
  return kNames[info.param];
}

INSTANTIATE_TEST_SUITE_P(Misuse, GpuTcgen05MisuseDeathTest, ::testing::Values(0, 1, 2, 3, 4), misuse_name);

}  // namespace
}  // namespace gemm
