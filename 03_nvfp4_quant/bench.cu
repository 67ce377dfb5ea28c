// Stage 03 against stage 02 (FP32, on FP32 data of the same shape) and against what a Hopper user
// would run on NVFP4 data (dequantize to BF16, then cuBLAS BF16), plus the quantizer's bandwidth
// against a device-to-device copy.
#include "kernel.cuh"

#include "common/cuda_check.h"
#include "common/device_buffer.h"
#include "common/device_fill.h"
#include "common/gemm_api.h"
#include "common/harness/bench.h"
#include "common/harness/timing.h"
#include "common/nvfp4_quant_gpu.h"

namespace {

void register_quantizer_benchmarks() {
  for (int size : {8192, 16384}) {
    const int rows = size, K = size;
    const size_t n = size_t(rows) * K;
    const std::string shape = std::to_string(rows) + "x" + std::to_string(K);
    // The ceiling: a device-to-device copy of the FP32 tensor (bytes read + bytes written).
    // Both rotate over the sets the benchmarks' rule asks for (common/harness/timing.h), sized by what
    // a launch reads.
    const int sets = gemm::timing::input_sets(4.0 * n);
    benchmark::RegisterBenchmark(("device copy/" + shape).c_str(), [=](benchmark::State& st) {
      gemm::DeviceBuffer<float> src(n * sets), dst(n);
      gemm::fill_uniform(src.get(), n * sets, 1, -1, 1);
      gemm::bench::time_launches(st, sets, [&](int i, cudaStream_t s) {
        CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get() + i * n, n * 4, cudaMemcpyDeviceToDevice, s));
      }, 0, 8.0 * n, 0, 4.0 * n);
      st.SetLabel("copy");
      st.counters["elements"] = double(n);
    })->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
    // The quantizer: pass 2 alone (amax known), and both passes.
    for (bool both : {false, true}) {
      const std::string name = std::string(both ? "quantize FP32, amax + quantize" : "quantize FP32, amax given") + "/" + shape;
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        gemm::DeviceBuffer<float> x(n * sets), scales(std::vector<float>{3.0f, 0.0f});  // amax of U(-3, 3)
        gemm::DeviceBuffer<uint8_t> data(size_t(gemm::packed_bytes(rows, K, 1))), sf(size_t(gemm::sf_bytes(rows, K, 1)));
        gemm::fill_uniform(x.get(), n * sets, 2, -3, 3);
        const gemm::Nvfp4DeviceTensor out{data.get(), sf.get(), scales.get()};
        gemm::bench::time_launches(st, sets, [&](int i, cudaStream_t s) {
          if (both)
            gemm::quantize_nvfp4_gpu(x.get() + i * n, rows, K, 1, out, s);
          else
            gemm::quantize_nvfp4_gpu_given_amax(x.get() + i * n, rows, K, 1, out, s);
        }, 0, 4.5625 * n, 0, 4.0 * n);  // the fewest bytes: read the FP32 tensor once, write payload and scales
        st.SetLabel("quantizer");
        st.counters["elements"] = double(n);
      })->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  gemm::bench::Plan plan;  // the kind's shapes: M = 128 decode-like ones, then the squares
  plan.register_extra = register_quantizer_benchmarks;
  return gemm::bench::run(argc, argv, stage03::kStage, GEMM_PREDECESSOR_ID, plan);
}
