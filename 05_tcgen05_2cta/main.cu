// stage05: the instruction and shared-memory descriptors decoded field by field, the Tensor Memory
// map, who in the CTA pair loads what and where each result lands, the budgets; then the kernel run,
// checked and timed (EMULATED on Hopper: the time is not performance).  ./stage05 --help for options.
#include <cstddef>
#include <cstdio>
#include <string>

#include "kernel.cuh"

#include "common/device_info.h"
#include "common/harness/stage_program.h"

namespace {

using gemm::tcgen05::decode_instr_descriptor;
using gemm::tcgen05::decode_smem_descriptor;

const char* layout_name(gemm::tcgen05::Layout l) {
  switch (l) {
    case gemm::tcgen05::Layout::kNone: return "none (interleaved core matrices)";
    case gemm::tcgen05::Layout::kSwizzle128BBase32B: return "128B with 32B atomicity";
    case gemm::tcgen05::Layout::kSwizzle128B: return "128B swizzle";
    case gemm::tcgen05::Layout::kSwizzle64B: return "64B swizzle";
    case gemm::tcgen05::Layout::kSwizzle32B: return "32B swizzle";
  }
  return "invalid";
}

void print_smem_descriptor(const char* what, uint64_t w) {
  const auto d = decode_smem_descriptor(w);
  std::printf("  %-28s 0x%016llx\n", what, static_cast<unsigned long long>(w));
  std::printf("      bits  0-13 start address %6u (field = address >> 4 = %u)   bits 16-29 LBO %4u bytes   "
              "bits 32-45 SBO %4u bytes\n", d.start, d.start >> 4, d.lbo, d.sbo);
  std::printf("      bits 46-48 fixed 0b%u%u%u        bits 49-51 base offset %u   bit 52 LBO mode %u   "
              "bits 61-63 layout %u = %s\n",
              (d.fixed_46_48 >> 2) & 1, (d.fixed_46_48 >> 1) & 1, d.fixed_46_48 & 1, d.base_offset, d.lbo_mode,
              unsigned(d.layout), layout_name(d.layout));
}

template <int BN>
void walkthrough() {
  using C = stage05::Config<BN>;
  using gemm::program::section;
  const int S = C::kStages;

  section("The instruction: tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.block16");
  const uint32_t idesc = C::instr_descriptor();
  const auto id = decode_instr_descriptor(idesc);
  std::printf("  instruction descriptor 0x%08x (PTX ISA 9.7.16.4.2, kind::mxf4nvf4)\n", idesc);
  std::printf("      bit  2     sparsity       %u   dense\n", id.sparse);
  std::printf("      bits 4-5   SFB id         %u   block16: four scales fill each 32-bit column, so 0\n", id.sfb_id);
  std::printf("      bits 7-9   A type         %u   E2M1\n", id.a_type);
  std::printf("      bits 10-11 B type         %u   E2M1\n", id.b_type);
  std::printf("      bits 13/14 negate A/B     %u/%u\n", id.negate_a, id.negate_b);
  std::printf("      bits 15/16 transpose A/B  %u/%u K-major (the only layout of kind::mxf4nvf4)\n", id.transpose_a,
              id.transpose_b);
  std::printf("      bits 17-22 N >> 3         %u   N = %u\n", id.n >> 3, id.n);
  std::printf("      bit  23    scale type     %u   UE4M3 (the NVFP4 block scale)\n", id.scale_type);
  std::printf("      bits 27-28 M >> 7         %u   M = %u: the pair's 256 rows, 128 per CTA\n", id.m >> 7, id.m);
  std::printf("      bits 29-30 SFA id         %u\n      bit  31    K = 96         %u   (K = 64 per MMA)\n",
              id.sfa_id, id.k96);

  section("Shared-memory descriptors (stage 0, at shared-memory offset 0 of the 1024-aligned buffer)");
  const uint32_t a_off = uint32_t(offsetof(stage05::SharedStorage<BN>, stage)) + uint32_t(offsetof(stage05::StageBuffers<BN>, a));
  const uint32_t b_off = uint32_t(offsetof(stage05::StageBuffers<BN>, b));
  const uint32_t sfa_off = uint32_t(offsetof(stage05::StageBuffers<BN>, sfa));
  const uint64_t a0 = gemm::tcgen05::kmajor_sw128_descriptor(a_off);
  print_smem_descriptor("A, k-step 0", a0);
  for (int j = 1; j < stage05::kStepsPerTile; ++j)
    std::printf("  A, k-step %d                  0x%016llx  start + %d bytes (start field + %d): the next 64 values\n", j,
                static_cast<unsigned long long>(gemm::tcgen05::advance_start(a0, uint32_t(32 * j))), 32 * j, 2 * j);
  print_smem_descriptor("B, k-step 0", gemm::tcgen05::kmajor_sw128_descriptor(b_off));
  print_smem_descriptor("scale atom (tcgen05.cp source)", gemm::tcgen05::sf_atom_descriptor(sfa_off));
  std::printf("  A and B: 8-row groups of 128-byte swizzled rows, SBO = 8 x 128; LBO unused (K-major, swizzled).\n"
              "  The scale atom: 32 rows of 16 bytes, 8-row core matrices 128 bytes apart, no swizzle.\n"
              "  The same descriptor values are used in both CTAs: each reads its own shared memory.\n");

  section("Tensor Memory (each CTA: 128 lanes x 512 columns of 32 bits; one allocation of 512 columns)");
  std::printf("  D      columns %3u..%3u   lane r = row 128*rank + r of the pair's tile, column n = column n; FP32\n",
              C::d_column(), C::d_column() + BN - 1);
  for (int st = 0; st < S; ++st)
    std::printf("  stage %d SFA columns %3u..%3u, SFB columns %3u..%3u   (k-step j: SFA +%d j, SFB +%d j)\n", st,
                C::sfa_column(st, 0), C::sfa_column(st, 0) + C::kSfaColumnsPerStage - 1, C::sfb_column(st, 0),
                C::sfb_column(st, 0) + C::kSfbColumnsPerStage - 1, stage05::kSfColumnsPerAtom,
                C::kSfbAtoms * stage05::kSfColumnsPerAtom);
  std::printf("  a scale of row r (of A, or of B's column r): lane r %% 32 of all four quadrants (tcgen05.cp .warpx4\n"
              "  writes them), column base + r / 32, byte s for the s-th 16 values of the MMA's 64.\n");
  std::printf("  used: %d of 512 columns (D %d + %d stages x %d scale columns)\n", C::kTmemColumnsUsed, BN, S,
              C::kSfColumnsPerStage);

  section("The CTA pair (cluster of 2; rank 0 = even = leader)");
  std::printf("  %-7s %-26s %-26s %-18s %-18s\n", "CTA", "A rows (of the 256)", "B rows (of the BN)", "SFA rows",
              "SFB rows");
  std::printf("  %-7s %-26s %-26s %-18s %-18s\n", "rank 0", "0..127", ("0.." + std::to_string(BN / 2 - 1)).c_str(),
              "0..127", ("all " + std::to_string(BN)).c_str());
  std::printf("  %-7s %-26s %-26s %-18s %-18s\n", "rank 1", "128..255",
              (std::to_string(BN / 2) + ".." + std::to_string(BN - 1)).c_str(), "128..255",
              ("all " + std::to_string(BN)).c_str());
  std::printf("  Each CTA's TMA loads complete on rank 0's full barrier (.cta_group::2), which expects %d bytes.\n"
              "  One thread of rank 0 issues each MMA; rows 0..127 of D land in rank 0's TMEM, 128..255 in rank 1's.\n"
              "  Commits arrive on both CTAs' barriers (multicast mask 0b11); each CTA's epilogue stores its rows.\n",
              stage05::kCtaGroup * C::kStageBytes);

  section("Budgets (per CTA)");
  std::printf("  one stage:   A %d + B %d + SFA %d + SFB %d = %d bytes of shared memory\n", C::kABytes, C::kBBytes,
              C::kSfaBytes, C::kSfbBytes, C::kStageBytes);
  std::printf("  stages:      min(shared memory (%d - %d) / %d = %d, TMEM (512 - %d) / %d = %d) = %d\n",
              C::kSmemPerBlock, C::kSmemReserve, C::kStageBytes, C::kStagesBySmem, BN, C::kSfColumnsPerStage,
              C::kStagesByTmem, S);
  std::printf("  total:       %d bytes of dynamic shared memory (with barriers and alignment slack)\n",
              stage05::kSmemBytes<BN>);
  std::printf("  per k-tile (256 values of k), per pair: %d bytes loaded, %d MMAs (M x N x K = %d x %d x %d), "
              "%d tcgen05.cp, %.1f MFLOP\n",
              stage05::kCtaGroup * C::kStageBytes, stage05::kStepsPerTile, stage05::kPairM, BN, stage05::kMmaK,
              stage05::kStepsPerTile * (1 + C::kSfbAtoms), 2.0 * 256 * BN * 256 / 1e6);
  gemm::program::print_resources("nvfp4_tcgen05_gemm", reinterpret_cast<const void*>(&stage05::nvfp4_tcgen05_gemm<BN>),
                                 stage05::kThreads, stage05::kSmemBytes<BN>);
}

}  // namespace

int main(int argc, char** argv) {
  // Under the emulator (Hopper) the default problem shrinks: the emulated tensor core does in
  // milliseconds what a B200 does in nanoseconds, and the tutorial runs every stage program.
  const gemm::GpuInfo& g = gemm::gpu_info();
  const bool emulated = g.usable && !g.tcgen05_native();
  gemm::program::Options defaults;
  if (emulated) {
    defaults.M = defaults.N = defaults.K = 1024;
    defaults.iters = 3;
  }
  gemm::program::Flag bn_flag{"--bn", "BN", "width of the pair's tile of C, its N extent (default 256)"};
  bn_flag.choices = {128, 256};
  const auto opts = gemm::program::parse(argc, argv, stage05::kStage, defaults, {bn_flag});
  const int bn = gemm::program::flag_int(opts, "--bn", 256);
  gemm::program::banner(stage05::kStage);
  if (emulated)
    std::printf("\n  tcgen05 is EMULATED on this GPU (%s): the default problem is %d x %d x %d and %d timed runs;\n"
                "  the time measures the emulator, not the kernel.\n",
                g.name.c_str(), defaults.M, defaults.N, defaults.K, defaults.iters);
  bn == 256 ? walkthrough<256>() : walkthrough<128>();
  gemm::program::section("Run, check, time");
  gemm::Stage stage = stage05::kStage;
  if (bn == 128) stage.nvfp4 = &stage05::launch_bn128;
  const auto result = gemm::program::run_and_check(stage, opts);
  return gemm::program::finish(stage, opts, result);
}
