// Stage 03: the GPU quantizer bit for bit against the CPU quantizer, the E2M1 decode of the GEMM,
// and the GEMM against the CPU reference (exact, layout-sensitive and realistic tiers, tails,
// L > 1, invalid arguments).
#include "kernel.cuh"

#include <cstring>
#include <random>
#include <vector>

#include "common/device_buffer.h"
#include "common/harness/compare.h"
#include "common/harness/gemm_tests.h"
#include "common/nvfp4_quant.h"
#include "common/nvfp4_quant_gpu.h"
#include "common/reference.h"

namespace {

using gemm::DeviceBuffer;
constexpr gemm::testing::Tile kTile{stage03::kBM, stage03::kBN, stage03::kTileK};

GEMM_STAGE_TESTS(Nvfp4CudaCore, stage03::kStage, stage03::launch, gemm::testing::kind_cases(stage03::kStage, kTile), kTile)

// ---- The quantizer -------------------------------------------------------------------------------

struct QuantCase {
  const char* name;
  int rows, K, L;
  enum Kind { kRealistic, kZeros, kOutlier, kExtremes } kind;
};

std::vector<float> make_input(const QuantCase& c) {
  std::mt19937_64 rng(gemm::seed_for(c.name));
  std::vector<float> x = gemm::realistic_values(int64_t(c.rows) * c.K * c.L, rng);
  switch (c.kind) {
    case QuantCase::kZeros:
      std::fill(x.begin(), x.end(), 0.0f);
      break;
    case QuantCase::kOutlier:
      x[x.size() / 3] = 1.0e6f;
      x[x.size() / 2] = -3.0e4f;
      break;
    case QuantCase::kExtremes: {  // the largest and smallest finite magnitudes, subnormals, signed zeros
      const float special[] = {3.0e38f, -3.0e38f, 1.0e-40f, -1.0e-45f, 0.0f, -0.0f, 1.17e-38f, 6.0f, 448.0f};
      for (size_t i = 0; i < x.size(); i += 7) x[i] = special[(i / 7) % 9] * (i % 2 ? 1.0f : 1e-20f);
      break;
    }
    default:
      break;
  }
  return x;
}

template <class T>
void expect_gpu_matches_cpu(const QuantCase& c, const std::vector<T>& input, const std::vector<float>& as_float) {
  const gemm::Nvfp4Tensor want = gemm::quantize_nvfp4(as_float.data(), c.rows, c.K, c.L);
  DeviceBuffer<T> x(input);
  DeviceBuffer<uint8_t> data(want.data.size()), sf(want.sf.size());
  DeviceBuffer<float> scales(2);
  data.fill_bytes(0xFF);  // poison: every byte, padding included, must be written
  sf.fill_bytes(0xFF);
  gemm::quantize_nvfp4_gpu(x.get(), c.rows, c.K, c.L, {data.get(), sf.get(), scales.get()}, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got_data = data.download(), got_sf = sf.download();
  const auto got_scales = scales.download();
  EXPECT_EQ(got_scales[1], want.global_scale) << "gs";
  int64_t bad_data = 0, bad_sf = 0;
  for (size_t i = 0; i < want.data.size(); ++i) bad_data += got_data[i] != want.data[i];
  for (size_t i = 0; i < want.sf.size(); ++i) bad_sf += got_sf[i] != want.sf[i];
  EXPECT_EQ(bad_data, 0) << "payload bytes differ from the CPU quantizer";
  EXPECT_EQ(bad_sf, 0) << "scale bytes (padding included) differ from the CPU quantizer";
}

class GpuQuantizer : public ::testing::TestWithParam<QuantCase> {};

TEST_P(GpuQuantizer, Fp32MatchesTheCpuQuantizerBitForBit) {
  GEMM_REQUIRE_GPU();
  const std::vector<float> x = make_input(GetParam());
  expect_gpu_matches_cpu(GetParam(), x, x);
}

TEST_P(GpuQuantizer, Bf16MatchesTheCpuQuantizerBitForBit) {
  GEMM_REQUIRE_GPU();
  const std::vector<float> x = make_input(GetParam());
  std::vector<__nv_bfloat16> b(x.size());
  std::vector<float> rounded(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    b[i] = __float2bfloat16_rn(x[i]);
    rounded[i] = __bfloat162float(b[i]);  // the CPU quantizes the very values the GPU reads
  }
  expect_gpu_matches_cpu(GetParam(), b, rounded);
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, GpuQuantizer,
    ::testing::Values(QuantCase{"one_block", 1, 16, 1, QuantCase::kRealistic},
                      QuantCase{"tiny", 3, 48, 1, QuantCase::kRealistic},
                      QuantCase{"rows_130_K80_L2", 130, 80, 2, QuantCase::kRealistic},
                      QuantCase{"rows_257_K1024", 257, 1024, 1, QuantCase::kRealistic},
                      QuantCase{"rows_128_K2048", 128, 2048, 1, QuantCase::kRealistic},
                      QuantCase{"prime_rows_K_4112", 37, 4112, 1, QuantCase::kRealistic},
                      QuantCase{"zeros", 129, 64, 1, QuantCase::kZeros},
                      QuantCase{"outliers", 200, 256, 1, QuantCase::kOutlier},
                      QuantCase{"extremes", 64, 512, 3, QuantCase::kExtremes}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(GpuQuantizerAmax, GivenAmaxMatchesBothPasses) {
  GEMM_REQUIRE_GPU();
  const QuantCase c{"given_amax", 300, 192, 1, QuantCase::kRealistic};
  const std::vector<float> x = make_input(c);
  const gemm::Nvfp4Tensor want = gemm::quantize_nvfp4(x.data(), c.rows, c.K, c.L);
  float amax = 0;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  DeviceBuffer<float> dx(x), scales(std::vector<float>{amax, 0.0f});
  DeviceBuffer<uint8_t> data(want.data.size()), sf(want.sf.size());
  gemm::quantize_nvfp4_gpu_given_amax(dx.get(), c.rows, c.K, c.L, {data.get(), sf.get(), scales.get()}, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(data.download(), want.data);
  EXPECT_EQ(sf.download(), want.sf);
}

TEST(QuantizerArgs, RejectsBadShapesAndPointers) {
  // Placeholder device addresses: the checks run before anything touches them.
  auto* x = reinterpret_cast<const float*>(0x10000);
  const gemm::Nvfp4DeviceTensor out{reinterpret_cast<uint8_t*>(0x20000), reinterpret_cast<uint8_t*>(0x30000),
                                    reinterpret_cast<float*>(0x40000)};
  EXPECT_THROW(gemm::quantize_nvfp4_gpu(x, 4, 24, 1, out, nullptr), std::invalid_argument);   // K % 16
  EXPECT_THROW(gemm::quantize_nvfp4_gpu(x, 0, 32, 1, out, nullptr), std::invalid_argument);   // rows
  EXPECT_THROW(gemm::quantize_nvfp4_gpu(x + 1, 4, 32, 1, out, nullptr), std::invalid_argument);  // alignment
  EXPECT_THROW(gemm::quantize_nvfp4_gpu(static_cast<const float*>(nullptr), 4, 32, 1, out, nullptr),
               std::invalid_argument);
}

// ---- The E2M1 decode the GEMM uses -----------------------------------------------------------------

__global__ void decode_all_bytes(float* out) {
  __shared__ __half table[16];
  gemm::init_e2m1_half_table(table);
  __syncthreads();
  const float2 v = __half22float2(gemm::e2m1x2_to_half2(uint8_t(threadIdx.x), table));
  out[2 * threadIdx.x] = v.x;
  out[2 * threadIdx.x + 1] = v.y;
}

TEST(GpuE2M1Decode, EveryByteDecodesToItsTwoValuesLowNibbleFirst) {
  GEMM_REQUIRE_GPU();
  DeviceBuffer<float> out(512);
  decode_all_bytes<<<1, 256>>>(out.get());
  CUDA_CHECK_LAUNCH();
  const auto v = out.download();
  for (int b = 0; b < 256; ++b) {
    EXPECT_EQ(v[2 * b], gemm::e2m1_to_float(gemm::e2m1_even(uint8_t(b)))) << "byte " << b;
    EXPECT_EQ(v[2 * b + 1], gemm::e2m1_to_float(gemm::e2m1_odd(uint8_t(b)))) << "byte " << b;
  }
}

// ---- What FP4 costs ----------------------------------------------------------------------------------

TEST(GpuNvfp4Error, QuantizedGemmAgainstTheFp32GemmOfTheUnquantizedInputs) {
  GEMM_REQUIRE_GPU();
  const int M = 256, N = 256, K = 2048;
  const gemm::HostNvfp4Problem p = gemm::make_nvfp4_problem(M, N, K, 1, gemm::Tier::kRealistic, gemm::seed_for("fp4_cost"));
  DeviceBuffer<uint8_t> A(p.a.data), SFA(p.a.sf), B(p.b.data), SFB(p.b.sf);
  DeviceBuffer<uint16_t> C(size_t(M) * N);
  C.fill_bytes(0xFF);
  stage03::launch({M, N, K, 1, A.get(), SFA.get(), B.get(), SFB.get(), p.alpha, reinterpret_cast<__half*>(C.get())},
                  nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto fp32 = gemm::reference_gemm(gemm::Fp32GemmArgs{M, N, K, 1, p.a_source.data(), p.b_source.data(), nullptr});
  const double err = gemm::normwise_rel_error(C.download(), fp32.value);
  RecordProperty("normwise_relative_error_vs_fp32", std::to_string(err));
  std::printf("NVFP4 GEMM vs FP32 GEMM of the unquantized inputs (%dx%dx%d): normwise relative error %.4f\n", M, N, K, err);
  EXPECT_GT(err, 0.0);
  EXPECT_LT(err, 0.2);
}

}  // namespace
