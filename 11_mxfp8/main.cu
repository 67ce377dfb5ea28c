// stage11: what MXFP8 changes in stage 07's kernel (step 1: one byte per value, the k-tile of 128
// values and its one scale atom, the four MMAs that read the four bytes of each scale cell through
// their scale ids), then what step 2 adds (MMA_N = 256, the two accumulators sharing 128 Tensor Memory
// columns and the barrier that makes it safe), the budgets, step 3's k-tiles of 256 values and the
// schedule; then the kernel run,
// checked and timed (EMULATED on Hopper).  ./stage11 --help for options (--c fp32|bf16, --a and --b
// e4m3|e5m2: C's type and the operands' element types).
#include <cstdio>
#include <string>

#include "kernel_format.cuh"
#include "kernel_n256.cuh"
#include "kernel.cuh"

#include "common/device_info.h"
#include "common/harness/schedule_print.h"
#include "common/harness/stage_program.h"
#include "common/sf_layout.h"

namespace {

using gemm::program::section;
namespace tc = gemm::tcgen05;

void format_walkthrough(const gemm::program::Options& o) {
  section("The format: one byte per value, one UE8M0 scale per 32 values");
  std::printf("  A (M x K) and B (N x K): E4M3 or E5M2 bytes, K-major; a 128-byte TMA box row = %d values of k\n",
              stage11_format::kTileK);
  std::printf("  SFA, SFB: one scale 2^(e - 127) per 32 values, in the blocked atoms of NVFP4: 128 rows x 4 scale\n"
              "  columns = 512 B, row r at byte (r %% 32) * 16 + (r / 32) * 4 + column; one atom now covers %d values\n"
              "  of k (NVFP4's covers 64)\n", 4 * gemm::kMxSfVector);
  std::printf("  at K = %d: %lld scale columns, padded to %lld (%lld atoms per 128-row block)\n", o.K,
              (long long)((o.K + gemm::kMxSfVector - 1) / gemm::kMxSfVector),
              (long long)gemm::sf_padded_cols(o.K, gemm::kMxSfVector),
              (long long)(gemm::sf_padded_cols(o.K, gemm::kMxSfVector) / gemm::kSfTileCols));

  section("Per k-tile of 128 values: one atom of each scale, four MMAs of K = 32");
  std::printf("  tcgen05.cp .32x128b.warpx4: SFA's atom -> 4 TMEM columns, SFB's atom -> 4 columns; each row's\n"
              "  4-byte cell holds the k-tile's 4 scales, byte j for k = 32 j .. 32 j + 31\n");
  std::printf("  tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale.block32, M = %d, N = %d, K = %d:\n",
              stage11_format::kBM, stage11_format::kBN, stage11_format::kMmaK);
  for (int j = 0; j < stage11_format::kStepsPerTile; ++j) {
    const uint32_t d = stage11_format::instr_descriptor(tc::kMxTypeE4M3, tc::kMxTypeE4M3, j);
    const auto f = tc::decode_mxf8f6f4_instr_descriptor(d);
    std::printf("    step %d: A, B descriptors +%3d B into the swizzle row; idesc 0x%08X (E4M3 x E4M3, UE8M0,\n"
                "            SFA_ID %u, SFB_ID %u: byte %u of each scale cell)\n",
                j, j * stage11_format::kMmaStepBytes, d, f.sfa_id, f.sfb_id, f.sfa_id);
  }
  std::printf("  E5M2 operands change only the A and B type fields (E5M2 x E4M3, step 0: idesc 0x%08X)\n",
              stage11_format::instr_descriptor(tc::kMxTypeE5M2, tc::kMxTypeE4M3, 0));
}

void overlap_walkthrough() {
  section("Step 2: MMA_N = 256, two accumulators sharing 128 Tensor Memory columns");
  std::printf("  tile per pair: %d x %d (step 1: %d x %d); per k-tile each CTA loads %d rows of A and %d of B, SFA's\n"
              "  atom and SFB's %d atoms; one MMA of N = %d does the work of two of N = %d\n",
              stage11_n256::kBM, stage11_n256::kBN, stage11_format::kBM, stage11_format::kBN, stage11_n256::kCtaM,
              stage11_n256::kBRowsPerCta, stage11_n256::kSfbAtoms, stage11_n256::kBN, stage11_format::kBN);
  std::printf("  two accumulators of %d columns and %d slots x %d scale columns = %d > %u columns: they must share\n",
              stage11_n256::kBN, stage11_n256::kSlots, stage11_n256::kSfColumnsPerSlot,
              2 * stage11_n256::kBN + stage11_n256::kSlots * stage11_n256::kSfColumnsPerSlot, stage11_n256::kTmemColumns);
  for (int acc = 0; acc < stage11_n256::kAccBuffers; ++acc)
    std::printf("  accumulator %d: columns %3u..%3u, shared half: columns %3u..%3u (its %s half)\n", acc,
                stage11_n256::d_column(acc), stage11_n256::d_column(acc) + stage11_n256::kBN - 1,
                stage11_n256::d_column(acc) + uint32_t(stage11_n256::shared_half(acc) * stage11_n256::kHalfColumns),
                stage11_n256::d_column(acc) + uint32_t(stage11_n256::shared_half(acc) * stage11_n256::kHalfColumns) + stage11_n256::kHalfColumns - 1,
                stage11_n256::shared_half(acc) ? "second" : "first");
  std::printf("  the protocol, unit n in accumulator n %% 2:\n"
              "    epilogue warp: wait acc_full[n %% 2]; tcgen05.ld the shared half, wait::ld, fence::before_thread_sync,\n"
              "                   arrive on the leader's overlap_free (%d arrivals a unit); then load and store the other half\n"
              "    MMA warp:      before unit n > 0, wait overlap_free for phase n - 1 (parity (n - 1) & 1): every\n"
              "                   epilogue warp has read unit n - 1's shared half, and (reading units in order) all of unit n - 2\n",
              stage11_n256::kCtaGroup * stage11_n256::kEpilogueWarps);
}

void budget_walkthrough() {
  section("Tensor Memory (each CTA; 512 columns) and shared memory: step 2 (step 1)");
  std::printf("  accumulators: %d columns (step 1: %d)\n", stage11_n256::kAccColumns, stage11_format::kAccColumns);
  std::printf("  scales: %d slots x %d columns from column %u = %d columns (step 1: %d x %d); used %d of %u\n",
              stage11_n256::kSlots, stage11_n256::kSfColumnsPerSlot, stage11_n256::sfa_column(0),
              stage11_n256::kSlots * stage11_n256::kSfColumnsPerSlot, stage11_format::kSlots, stage11_format::kSfColumnsPerSlot,
              stage11_n256::kTmemColumnsUsed, stage11_n256::kTmemColumns);
  std::printf("  a slot: A %d B + B %d B + SFA %d B + SFB %d B = %d B (step 1: %d; stage 07: 28672)\n",
              stage11_n256::kPackedTileBytes, stage11_n256::kBBytes, stage11_n256::kSfBlockBytes,
              stage11_n256::kSfBlockBytes * stage11_n256::kSfbAtoms, int(sizeof(stage11_n256::Slot)), int(sizeof(stage11_format::Slot)));
  std::printf("  slots: %d by shared memory, %d by Tensor Memory -> %d (step 1: %d)\n", stage11_n256::kSlotsBySmem,
              stage11_n256::kSlotsByTmem, stage11_n256::kSlots, stage11_format::kSlots);
  std::printf("  shared memory: %d B with staging, barriers and alignment; + %d B kept for static shared memory = %d B\n"
              "  of the %d B a block may use\n",
              stage11_n256::kSmemBytes, stage11_n256::kStaticSmemMargin, stage11_n256::kSmemBytes + stage11_n256::kStaticSmemMargin,
              stage11_n256::kSmemPerBlock);
  std::printf("  epilogue: 64-byte staging rows = %d FP32 or %d BF16 columns a TMA store box\n",
              stage11_n256::kSubTileCols<float>, stage11_n256::kSubTileCols<__nv_bfloat16>);
}

void bk256_walkthrough() {
  section("Step 3: k-tiles of 256 values, 8 MMAs per ring slot");
  std::printf("  a k-tile: %d swizzle rows of 128 bytes (k-atoms) of A and of B, each its own TMA box, and %d scale atoms\n"
              "  of SFA and of each SFB row block; MMA step j reads k-atom j / 4 at byte 32 (j %% 4) and scale id j %% 4\n",
              stage11::kKAtoms, stage11::kKAtoms);
  std::printf("  a slot: %d B (step 2: %d B): %d slots by shared memory, %d by Tensor Memory -> %d (step 2: %d)\n",
              int(sizeof(stage11::Slot)), int(sizeof(stage11_n256::Slot)), stage11::kSlotsBySmem, stage11::kSlotsByTmem,
              stage11::kSlots, stage11_n256::kSlots);
  std::printf("  the ring holds %d values of k (step 2: %d); per %d values of k the MMA warp waits on one full barrier\n"
              "  and commits once (step 2: %d times each)\n",
              stage11::kSlots * stage11::kTileK, stage11_n256::kSlots * stage11_n256::kTileK, stage11::kTileK,
              stage11::kTileK / stage11_n256::kTileK);
  std::printf("  Tensor Memory: %d accumulator columns + %d slots x %d scale columns = %d of %u\n", stage11::kAccColumns,
              stage11::kSlots, stage11::kSfColumnsPerSlot, stage11::kTmemColumnsUsed, stage11::kTmemColumns);
  gemm::program::print_resources("mxfp8_tcgen05_gemm<TMA store, FP32>",
                                 reinterpret_cast<const void*>(&stage11::mxfp8_tcgen05_gemm<true, float>),
                                 stage11::kThreads, stage11::kSmemBytes);
}

void schedule_walkthrough(const gemm::program::Options& o) {
  const gemm::GpuInfo& g = gemm::gpu_info();
  section("The schedule (stage 07's: unit u runs on pair u mod P)");
  auto print = [](int M, int N, int K, int L, int pairs, const std::string& gpu) {
    auto* base = reinterpret_cast<const uint8_t*>(0x10000);
    const gemm::Mxfp8GemmArgs a{M, N, K, L, base, base, base, base, nullptr};
    const stage11::Schedule s = stage11::make_schedule(a, pairs);
    gemm::program::print_schedule({M, N, K, L, stage11::kBM, stage11::kBN, stage11::kTileK, s.tiles_m, s.tiles_n, 1,
                                   s.units, s.pairs},
                                  pairs, gpu);
  };
  const int shapes[3][4] = {{o.M, o.N, o.K, o.L}, {4096, 4096, 4096, 1}, {8192, 8192, 8192, 1}};
  for (const auto& e : shapes) {
    if (g.usable) print(e[0], e[1], e[2], e[3], stage11::resident_pairs(), g.name);
    print(e[0], e[1], e[2], e[3], gemm::program::kB200Sms / stage11::kCtaGroup, "a B200 (148 SMs)");
  }
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
  // --c, --a, --b: C's type and the operands' element types (the kind's Shape::extra for the run).
  using Flag = gemm::program::Flag;
  Flag c_flag{"--c", "TYPE", "C's type"}, a_flag{"--a", "TYPE", "A's element type"},
      b_flag{"--b", "TYPE", "B's element type"};
  c_flag.names = {"fp32", "bf16"};  // in the order of gemm::Mxfp8Output
  a_flag.names = b_flag.names = {"e4m3", "e5m2"};  // in the order of gemm::Mxfp8Element
  auto opts = gemm::program::parse(argc, argv, stage11::kStage, defaults, {c_flag, a_flag, b_flag});
  const gemm::Mxfp8Types types{gemm::Mxfp8Output(gemm::program::flag_int(opts, "--c", 0)),
                               gemm::Mxfp8Element(gemm::program::flag_int(opts, "--a", 0)),
                               gemm::Mxfp8Element(gemm::program::flag_int(opts, "--b", 0))};
  opts.shape_extra = gemm::mxfp8_shape(opts.M, opts.N, opts.K, opts.L, types).extra;
  gemm::program::banner(stage11::kStage);
  if (emulated)
    std::printf("\n  tcgen05 is EMULATED on this GPU (%s): the default problem is %d x %d x %d and %d timed runs;\n"
                "  the time measures the emulator, not the kernel.\n",
                g.name.c_str(), defaults.M, defaults.N, defaults.K, defaults.iters);
  format_walkthrough(opts);
  overlap_walkthrough();
  budget_walkthrough();
  bk256_walkthrough();
  schedule_walkthrough(opts);
  auto name = [](gemm::Mxfp8Element e) { return e == gemm::Mxfp8Element::kE5M2 ? "E5M2" : "E4M3"; };
  const std::string what = std::string("Run, check, time (") + gemm::output_name(types.c) + " C from " +
                           name(types.a) + " x " + name(types.b) + ")";
  gemm::program::section(what.c_str());
  const auto result = gemm::program::run_and_check(stage11::kStage, opts);
  return gemm::program::finish(stage11::kStage, opts, result);
}
