// What GPU (if any) this process can use, and the numbers the programs report about it.
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace gemm {

struct GpuInfo {
  bool present = false;    // a driver and a device answered
  bool usable = false;     // present, and this program's kernels run on it (see ProgramNeeds)
  std::string why_not;     // set when !usable, in one line: no driver, no device, a GPU older than
                           // this program needs, or no code for this GPU in this build
  int device = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int sm_clock_khz = 0;    // peak SM clock the driver reports
  int mem_clock_khz = 0;   // peak memory clock
  int mem_bus_bits = 0;
  long long l2_bytes = 0;
  int smem_per_block_optin = 0;
  int driver_version = 0;  // e.g. 13000 for CUDA 13.0
  int runtime_version = 0;

  // tcgen05 exists only on sm_100-class GPUs; elsewhere stages 05-07 run through the emulator.
  bool tcgen05_native() const { return cc_major == 10; }
  // FP32 FMA peak of the CUDA cores at the peak clock: SMs x 128 lanes x 2 FLOP x clock.
  double fp32_peak_tflops() const { return sm_count * 128.0 * 2.0 * sm_clock_khz * 1e3 / 1e12; }
  // Dense NVFP4 tensor-core peak (tcgen05 block-scaled FP4 MMAs) at the peak clock, for sm_100-class
  // GPUs (cc 10.x); 0 elsewhere, where tcgen05 does not exist. NVIDIA publishes the B200's NVFP4 rate
  // as 9 PFLOP/s dense (18 sparse) at 148 SMs; at a 1.965 GHz clock that is 9e15 / (148 * 1.965e9) =
  // 30945 FLOP per clock per SM. This takes the round per-SM rate that figure suggests, an
  // ASSUMPTION (no per-SM rate is published): 8192 MACs/clk/SM at FP8, x 2 for FP4, x 2 FLOP per MAC
  // = 32768 FLOP/clk/SM, scaled by this GPU's SMs and peak clock (for a B200 at 1.965 GHz: 9.5
  // PFLOP/s, 6% above the published figure, so fractions of it err low, never high).
  double nvfp4_dense_peak_tflops() const {
    return cc_major == 10 ? sm_count * 32768.0 * sm_clock_khz * 1e3 / 1e12 : 0.0;
  }
  // DRAM bandwidth from the memory clock and bus width (double data rate).
  double dram_peak_gbps() const { return 2.0 * mem_clock_khz * 1e3 * (mem_bus_bits / 8.0) / 1e9; }
  std::string compute_capability() const { return std::to_string(cc_major) + "." + std::to_string(cc_minor); }
};

// What a program's kernels need: the lowest compute capability they run on (x 10: 80 = 8.0) and the
// architectures the build compiled them for. add_gemm_stage() links a unit into each stage's program,
// test and benchmark that declares its stage's MIN_SM (common/program_needs.cu); a program that
// declares nothing needs 80, the minimum of common/.
struct ProgramNeeds {
  int min_sm = 80;
  const char* architectures = "";  // as configured, e.g. "90a-real, 100a-real"
  // Loads a kernel compiled like the program's own: cudaSuccess where the build has code for this GPU.
  cudaError_t (*load_probe)() = nullptr;
};
// Called during static initialisation, before anything asks gpu_info().
void declare_program_needs(const ProgramNeeds& needs);

// Probed once, on first use; never throws. A GPU is "usable" when the driver answers, the GPU has at
// least the program's compute capability, and the build has code for it that loads (machine code
// for it, or PTX the driver can compile for it).
const GpuInfo& gpu_info();

// Current clocks as nvidia-smi reports them (a program on PATH, not a linked library), or
// "unavailable".
std::string gpu_clocks_now();

// "13.0" style version strings.
std::string cuda_version_string(int version);

}  // namespace gemm
