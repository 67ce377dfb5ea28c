// stage12: what SVDQuant's low-rank branch adds to stage 07's kernel (the low-rank k-tiles in the same
// ring, the kind::f16 descriptor, the low-rank accumulator's Tensor Memory columns and its barrier,
// the affine epilogue), the budgets and the schedule; what step 2's interleave changes (where each
// low-rank k-tile goes, its buffers' budget, where the MMA warp now waits); then both steps run,
// checked and timed (EMULATED on Hopper).  ./stage12 --help for options (--m --n --k --l; R = 32,
// FP16 C, BF16 low-rank operands).
#include <cstdio>
#include <string>

#include "kernel.cuh"
#include "kernel_interleaved.cuh"

#include "common/device_info.h"
#include "common/harness/schedule_print.h"
#include "common/harness/stage_program.h"

namespace {

using gemm::program::section;
namespace tc = gemm::tcgen05;

gemm::SvdquantGemmArgs shape_args(int M, int N, int K, int L, int R) {
  auto* base = reinterpret_cast<const uint8_t*>(0x10000);
  gemm::SvdquantGemmArgs a;
  a.M = M, a.N = N, a.K = K, a.L = L, a.R = R;
  a.A = a.B = a.SFA = a.SFB = base;
  a.lora_act = a.lora_up = reinterpret_cast<const uint16_t*>(base);
  return a;
}

void low_rank_walkthrough(const gemm::program::Options& o) {
  const int R = gemm::SvdquantSize{}.R;
  // A B200's pairs: the low-rank k-tiles and the descriptor do not depend on how many pairs run.
  const stage12::Schedule s =
      stage12::make_schedule(shape_args(o.M, o.N, o.K, o.L, R), gemm::program::kB200Sms / stage12::kCtaGroup);
  section("The low-rank term: R = 32 values of the rank, after the NVFP4 k-tiles, in the same ring");
  std::printf("  a unit: %d NVFP4 k-tiles of %d values, then %d low-rank k-tile(s) of %d values of the rank\n",
              (o.K + stage12::kTileK - 1) / stage12::kTileK, stage12::kTileK, s.lr_tiles, stage12::kLrTileR);
  std::printf("  a low-rank k-tile: lora_act's %d rows x %d B into a slot's A tile, lora_up's %d rows x %d B into\n"
              "  its B tile (64 16-bit values = one 128-byte swizzle row, as 256 FP4 values); no scales, so the\n"
              "  full barrier expects %d B a CTA, not the slot's %d\n",
              stage12::kCtaM, stage12::kPackedRowBytes, stage12::kBRowsPerCta, stage12::kPackedRowBytes,
              stage12::kLrTmaBytes, int(sizeof(stage12::Slot)));
  const auto d = tc::decode_f16_instr_descriptor(s.lr_idesc);
  std::printf("  tcgen05.mma.cta_group::2.kind::f16, M = %u, N = %u, K = %d: idesc 0x%08X (A, B %s, D FP32); each\n"
              "  MMA step advances the operand descriptors by %d B, as the FP4 steps do\n",
              d.m, d.n, stage12::kLrMmaK, s.lr_idesc, d.a_type == tc::kF16TypeBF16 ? "BF16" : "FP16",
              stage12::kMmaStepBytes);
  std::printf("  why its own accumulator: y = (alpha * acc + lowrank) * wcscale[n] + bias[n], and alpha scales\n"
              "  the NVFP4 sum only; one MMA into the same columns would give alpha * (acc + lowrank)\n");
  std::printf("  the protocol: the epilogue reads a unit's low-rank columns after its NVFP4 accumulator and then\n"
              "  arrives on the leader's lr_empty (%d arrivals a unit); before unit n > 0's first low-rank MMA the\n"
              "  MMA warp waits on lr_empty for phase n - 1\n",
              stage12::kCtaGroup * stage12::kEpilogueWarps);
}

void budget_walkthrough() {
  section("Tensor Memory (each CTA; 512 columns) and shared memory");
  std::printf("  NVFP4 accumulators: 2 x %d columns from 0; low-rank accumulator: %d columns from %u\n", stage12::kBN,
              stage12::kLrColumns, stage12::lr_column());
  std::printf("  scales: %d slots x %d columns from %u; used %d of %u\n", stage12::kSlots, stage12::kSfColumnsPerSlot,
              stage12::sfa_column(0, 0), stage12::kTmemColumnsUsed, stage12::kTmemColumns);
  std::printf("  slots: %d by shared memory (as stage 07), %d by Tensor Memory -> %d\n", stage12::kSlotsBySmem,
              stage12::kSlotsByTmem, stage12::kSlots);
  std::printf("  shared memory: %d B with staging, barriers and alignment; + %d B kept for static shared memory\n",
              stage12::kSmemBytes, stage12::kStaticSmemMargin);
  gemm::program::print_resources("svdquant_tcgen05_gemm<TMA store, FP16>",
                                 reinterpret_cast<const void*>(&stage12::svdquant_tcgen05_gemm<true, __half>),
                                 stage12::kThreads, stage12::kSmemBytes);
}

void interleave_walkthrough(const gemm::program::Options& o) {
  namespace s2 = stage12_interleaved;
  section("Step 2 (kernel_interleaved.cuh): the low-rank k-tiles inside the K loop, from buffers of their own");
  const int k_tiles = (o.K + s2::kTileK - 1) / s2::kTileK;
  for (const int R : {32, 128, 1024}) {
    const int lr_tiles = (R + s2::kLrTileR - 1) / s2::kLrTileR;
    std::printf("  R = %4d: %d low-rank k-tile(s) over %d NVFP4 k-tiles; low-rank k-tile lt after k-tile:", R,
                lr_tiles, k_tiles);
    for (int kt = 0, shown = 0; kt < k_tiles && shown < 8; ++kt)
      for (int lt = s2::lr_begin(kt, k_tiles, lr_tiles); lt < s2::lr_begin(kt + 1, k_tiles, lr_tiles) && shown < 8;
           ++lt, ++shown)
        std::printf(" %d->%d", lt, kt);
    std::printf("%s\n", lr_tiles > 8 ? " ..." : "");
  }
  std::printf("  buffers: %d x %d B a CTA (its %d rows of lora_act and %d of lora_up; sized for the pair they\n"
              "  would be %d B, which the LowRankBuffersOf budget rejects at compile time); slots: %d by shared\n"
              "  memory, %d by Tensor Memory -> %d, as in step 1\n",
              s2::kLrBuffers, int(sizeof(s2::LowRankBuffers)), s2::kBM / s2::kCtaGroup, s2::kBN / s2::kCtaGroup,
              (s2::kBM + s2::kBN) * s2::kPackedRowBytes, s2::kSlotsBySmem, s2::kSlotsByTmem, s2::kSlots);
  std::printf("  the cost: a unit's first low-rank MMA now follows its first NVFP4 k-tile, so the MMA warp waits on\n"
              "  lr_empty (the previous unit's epilogue done with the low-rank columns, after its last store) at the\n"
              "  start of the unit, where step 1 waited at its end\n");
}

void schedule_walkthrough(const gemm::program::Options& o) {
  const gemm::GpuInfo& g = gemm::gpu_info();
  section("The schedule (stage 07's: unit u runs on pair u mod P)");
  auto print = [](int M, int N, int K, int L, int pairs, const std::string& gpu) {
    const stage12::Schedule s = stage12::make_schedule(shape_args(M, N, K, L, 32), pairs);
    gemm::program::print_schedule({M, N, K, L, stage12::kBM, stage12::kBN, stage12::kTileK, s.tiles_m, s.tiles_n, 1,
                                   s.units, s.pairs},
                                  pairs, gpu);
  };
  if (g.usable) print(o.M, o.N, o.K, o.L, stage12::resident_pairs(), g.name);
  print(o.M, o.N, o.K, o.L, gemm::program::kB200Sms / stage12::kCtaGroup, "a B200 (148 SMs)");
}

}  // namespace

int main(int argc, char** argv) {
  const gemm::GpuInfo& g = gemm::gpu_info();
  const bool emulated = g.usable && !g.tcgen05_native();
  gemm::program::Options defaults;
  if (emulated) {
    defaults.M = defaults.N = defaults.K = 1024;
    defaults.iters = 3;
  }
  const auto opts = gemm::program::parse(argc, argv, stage12::kStage, defaults);
  gemm::program::banner(stage12::kStage);
  if (emulated)
    std::printf("\n  tcgen05 is EMULATED on this GPU (%s): the default problem is %d x %d x %d and %d timed runs;\n"
                "  the time measures the emulator, not the kernel.\n",
                g.name.c_str(), defaults.M, defaults.N, defaults.K, defaults.iters);
  low_rank_walkthrough(opts);
  budget_walkthrough();
  interleave_walkthrough(opts);
  schedule_walkthrough(opts);
  gemm::program::section("Step 2: run, check, time (R = 32, FP16 C, BF16 low-rank operands)");
  const auto step2 = gemm::program::run_and_check(stage12_interleaved::kStage, opts);
  std::printf("  step 2: check against the CPU reference: %s (%lld outputs compared)%s%s\n", step2.status.c_str(),
              (long long)step2.checked, step2.why.empty() ? "" : ": ", step2.why.c_str());
  if (step2.status == "PASSED")
    std::printf("  step 2: median %.3f ms per launch%s\n", step2.ms,
                step2.peak_name == "EMULATED" ? " (EMULATED: no performance meaning)" : "");
  gemm::program::section("Step 1 (the stage): run, check, time (R = 32, FP16 C, BF16 low-rank operands)");
  const auto result = gemm::program::run_and_check(stage12::kStage, opts);
  const int code = gemm::program::finish(stage12::kStage, opts, result);
  return step2.status == "FAILED" ? 1 : code;
}
