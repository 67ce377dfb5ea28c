// stage03: the NVFP4 format, one quantized block at a time, then the CUDA-core NVFP4 GEMM run,
// checked and timed.  ./stage03 --help for options.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernel.cuh"

#include "common/device_buffer.h"
#include "common/device_info.h"
#include "common/harness/problems.h"
#include "common/harness/stage_program.h"
#include "common/nvfp4_quant.h"
#include "common/nvfp4_quant_gpu.h"

namespace {

void show_block(uint64_t seed) {
  using gemm::program::section;
  // A small tensor (4 rows x 64), realistic values: normal data with an outlier now and then.
  const int rows = 4, K = 64;
  std::mt19937_64 rng(seed);
  const std::vector<float> x = gemm::realistic_values(rows * K, rng);
  gemm::Nvfp4Tensor q = gemm::quantize_nvfp4(x.data(), rows, K);
  const char* where = "CPU (common/nvfp4_quant.h)";
  if (gemm::gpu_info().usable) {  // the same tensor through the GPU quantizer: it must agree bit for bit
    gemm::DeviceBuffer<float> dx(x), scales(2);
    gemm::DeviceBuffer<uint8_t> data(q.data.size()), sf(q.sf.size());
    gemm::quantize_nvfp4_gpu(dx.get(), rows, K, 1, {data.get(), sf.get(), scales.get()}, nullptr);
    const bool same = data.download() == q.data && sf.download() == q.sf && scales.download()[1] == q.global_scale;
    where = same ? "GPU quantizer, identical to the CPU one" : "GPU quantizer DIFFERS from the CPU one";
  }
  float amax = 0;
  for (float v : x) amax = std::max(amax, std::fabs(v));

  section("One tensor, 4 x 64 FP32 values");
  std::printf("  amax = %.4f  ->  gs = 6 * 448 / amax = %.4f   (decode scale 1/gs = %.6f)\n", amax, q.global_scale,
              1.0f / q.global_scale);
  section("Its first block: row 0, k = 0..15");
  float bamax = 0;
  for (int k = 0; k < 16; ++k) bamax = std::max(bamax, std::fabs(x[k]));
  const uint8_t s = q.scale(0, 0, 0);
  std::printf("  inputs: ");
  for (int k = 0; k < 16; ++k) std::printf("%s%.3f", k ? " " : "", x[k]);
  // Scales are unsigned E4M3: readers ignore bit 7 (common/formats.h, ue4m3_to_float).
  std::printf("\n  block amax %.4f; scale = UE4M3(amax / 6 * gs) = UE4M3(%.4f) = 0x%02X (exponent %d, mantissa %d)"
              " = %g\n", bamax, bamax / 6 * q.global_scale, s, (s >> 3) & 15, s & 7, gemm::ue4m3_to_float(s));
  const float enc = q.global_scale / std::max(gemm::ue4m3_to_float(s), 1e-12f);
  std::printf("  each value x becomes E2M1(x * gs / scale) = E2M1(x * %.4f)\n", enc);
  std::printf("  byte  hex   low nibble (even k)      high nibble (odd k)\n");
  double err2 = 0, ref2 = 0;
  for (int i = 0; i < 8; ++i) {
    const uint8_t b = q.data[i];
    const uint8_t lo = gemm::e2m1_even(b), hi = gemm::e2m1_odd(b);
    std::printf("  %4d  0x%02X  0x%X = %4.1f <- %7.3f      0x%X = %4.1f <- %7.3f\n", i, b, lo, gemm::e2m1_to_float(lo),
                x[2 * i] * enc, hi, gemm::e2m1_to_float(hi), x[2 * i + 1] * enc);
    for (int j = 0; j < 2; ++j) {
      const float dec = gemm::e2m1_to_float(j ? hi : lo) * gemm::ue4m3_to_float(s) / q.global_scale;
      err2 += (dec - x[2 * i + j]) * (dec - x[2 * i + j]);
      ref2 += x[2 * i + j] * x[2 * i + j];
    }
  }
  std::printf("  decoded = code * scale / gs; this block's relative error: %.3f (quantized by the %s)\n",
              std::sqrt(err2 / ref2), where);
}

void show_bytes(const gemm::program::Options& o) {
  using gemm::program::section;
  section("Bytes");
  std::printf("  FP32: 4 bytes per value. NVFP4: 0.5 byte payload + 1/16 byte of scale = 0.5625 bytes: 7.1x less\n");
  const double M = o.M, N = o.N, K = o.K, flops = 2 * M * N * K;
  const double fp32 = 4 * (M * K + N * K) + 4 * M * N;
  const double fp4 = double(gemm::packed_bytes(o.M, o.K, 1) + gemm::packed_bytes(o.N, o.K, 1) +
                            gemm::sf_bytes(o.M, o.K, 1) + gemm::sf_bytes(o.N, o.K, 1)) + 2 * M * N;
  std::printf("  this GEMM (%d x %d x %d): %.1f MB as FP32, %.1f MB as NVFP4 with FP16 C: %.2e vs %.2e bytes per FLOP\n",
              o.M, o.N, o.K, fp32 * 1e-6, fp4 * 1e-6, fp32 / flops, fp4 / flops);
  section("How this kernel computes");
  std::printf("  packed tiles of %d x %d bytes (%d values of k) and %d bytes of scale atoms per operand reach shared\n"
              "  memory; each %d-value slice is decoded to FP32 (payload x block scale, exact) and stage 02's FMA\n"
              "  loop runs on it. CUDA cores cannot multiply FP4: the tensor cores of stage 05 can.\n",
              stage03::kBM, stage03::kPackedRowBytes, stage03::kTileK, stage03::kSfBlockBytes, stage03::kSliceK);
  gemm::program::print_resources("nvfp4_cuda_core_gemm", reinterpret_cast<const void*>(&stage03::nvfp4_cuda_core_gemm),
                                 stage03::kThreads, int(sizeof(stage03::SharedStorage)) + 1024);
}

}  // namespace

int main(int argc, char** argv) {
  const auto opts = gemm::program::parse(argc, argv, stage03::kStage, {});
  gemm::program::banner(stage03::kStage);
  show_block(opts.seed);
  show_bytes(opts);
  gemm::program::section("Run, check, time");
  const auto result = gemm::program::run_and_check(stage03::kStage, opts);
  return gemm::program::finish(stage03::kStage, opts, result);
}
