// stage05: for each of the stage's two steps (one CTA, then the CTA pair): the instruction and
// shared-memory descriptors decoded field by field, the Tensor Memory map, who in the pair loads what,
// the budgets; then the step's kernel run, checked and timed (EMULATED on Hopper: the time is not
// performance).  ./stage05 --help for options.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>

#include "kernel_1cta.cuh"
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

// What the walkthrough prints about a step, read from that step's kernel constants (both kernel
// files spell them the same way, so one macro collects them).
struct Step {
  const gemm::Stage& stage;
  int cta_group, bm, bn, cta_m, b_rows_per_cta, sfb_atoms, slots, slots_by_smem, slots_by_tmem;
  int packed_tile_bytes, sf_block_bytes, slot_bytes, smem_per_block, fixed_bytes, static_margin, smem_bytes;
  int sfa_columns_per_slot, sfb_columns_per_slot, sf_columns_per_slot, tmem_columns_used;
  uint32_t idesc, a_off, b_off, sfa_off;
  uint32_t (*sfa_column)(int, int);
  uint32_t (*sfb_column)(int, int);
  const void* kernel;
};
#define GEMM_STEP(ns)                                                                                             \
  Step {                                                                                                          \
    ns::kStage, ns::kCtaGroup, ns::kBM, ns::kBN, ns::kCtaM, ns::kBRowsPerCta, ns::kSfbAtoms, ns::kSlots,          \
        ns::kSlotsBySmem, ns::kSlotsByTmem, ns::kPackedTileBytes, ns::kSfBlockBytes, int(sizeof(ns::Slot)),       \
        ns::kSmemPerBlock, ns::kFixedBytes, ns::kStaticSmemMargin, ns::kSmemBytes, ns::kSfaColumnsPerSlot,        \
        ns::kSfbColumnsPerSlot, ns::kSfColumnsPerSlot, ns::kTmemColumnsUsed, ns::instr_descriptor(),             \
        uint32_t(offsetof(ns::SharedStorage, ring) + offsetof(ns::Slot, a)), uint32_t(offsetof(ns::Slot, b)),     \
        uint32_t(offsetof(ns::Slot, sfa)), &ns::sfa_column, &ns::sfb_column,                                      \
        reinterpret_cast<const void*>(&ns::nvfp4_tcgen05_gemm)                                                    \
  }

void walkthrough(const Step& s) {
  using gemm::program::section;
  const bool pair = s.cta_group == 2;
  const std::string insn = "tcgen05.mma.cta_group::" + std::to_string(s.cta_group) +
                           ".kind::mxf4nvf4.block_scale.block16";
  section(("The instruction: " + insn).c_str());
  const auto id = decode_instr_descriptor(s.idesc);
  std::printf("  instruction descriptor 0x%08x (PTX ISA 9.7.16.4.2, kind::mxf4nvf4)\n", s.idesc);
  std::printf("      bit  2     sparsity       %u   dense\n", id.sparse);
  std::printf("      bits 4-5   SFB id         %u   block16: four scales fill each 32-bit column, so 0\n", id.sfb_id);
  std::printf("      bits 7-9   A type         %u   E2M1\n", id.a_type);
  std::printf("      bits 10-11 B type         %u   E2M1\n", id.b_type);
  std::printf("      bits 13/14 negate A/B     %u/%u\n", id.negate_a, id.negate_b);
  std::printf("      bits 15/16 transpose A/B  %u/%u K-major (the only layout of kind::mxf4nvf4)\n", id.transpose_a,
              id.transpose_b);
  std::printf("      bits 17-22 N >> 3         %u   N = %u\n", id.n >> 3, id.n);
  std::printf("      bit  23    scale type     %u   UE4M3 (the NVFP4 block scale)\n", id.scale_type);
  std::printf("      bits 27-28 M >> 7         %u   M = %u: %s\n", id.m >> 7, id.m,
              pair ? ("the pair's rows, " + std::to_string(s.cta_m) + " per CTA").c_str() : "one CTA's rows");
  std::printf("      bits 29-30 SFA id         %u\n      bit  31    K = 96         %u   (K = %d per MMA)\n",
              id.sfa_id, id.k96, stage05::kMmaK);

  section("Shared-memory descriptors (slot 0, at shared-memory offset 0 of the 1024-aligned buffer)");
  const uint64_t a0 = gemm::tcgen05::kmajor_sw128_descriptor(s.a_off);
  print_smem_descriptor("A, k-step 0", a0);
  for (int j = 1; j < stage05::kStepsPerTile; ++j)
    std::printf("  A, k-step %d                  0x%016llx  start + %d bytes (start field + %d): the next %d values\n",
                j, static_cast<unsigned long long>(gemm::tcgen05::advance_start(a0, uint32_t(stage05::kMmaStepBytes * j))),
                stage05::kMmaStepBytes * j, stage05::kMmaStepBytes * j / 16, stage05::kMmaK);
  print_smem_descriptor("B, k-step 0", gemm::tcgen05::kmajor_sw128_descriptor(s.b_off));
  print_smem_descriptor("scale atom (tcgen05.cp source)", gemm::tcgen05::sf_atom_descriptor(s.sfa_off));
  std::printf("  A and B: 8-row groups of 128-byte swizzled rows, SBO = 8 x 128; LBO unused (K-major, swizzled).\n"
              "  The scale atom: 32 rows of 16 bytes, 8-row core matrices 128 bytes apart, no swizzle.\n");
  if (pair) std::printf("  The same descriptor values are used in both CTAs: each reads its own shared memory.\n");

  section("Tensor Memory (128 lanes x 512 columns of 32 bits per SM; one allocation of 512 columns)");
  std::printf("  D      columns %3u..%3u   lane r = row %sr of the tile, column n = column n; FP32\n", 0u,
              uint32_t(s.bn - 1), pair ? "128*rank + " : "");
  for (int slot = 0; slot < s.slots; ++slot)
    std::printf("  slot %d SFA columns %3u..%3u, SFB columns %3u..%3u   (k-step j: SFA +%d j, SFB +%d j)\n", slot,
                s.sfa_column(slot, 0), s.sfa_column(slot, 0) + s.sfa_columns_per_slot - 1, s.sfb_column(slot, 0),
                s.sfb_column(slot, 0) + s.sfb_columns_per_slot - 1, stage05::kSfColumnsPerAtom,
                s.sfb_atoms * stage05::kSfColumnsPerAtom);
  std::printf("  a scale of row r (of A, or of B's column r): lane r %% 32 of all four quadrants (tcgen05.cp .warpx4\n"
              "  writes them), column base + r / 32, byte s for the s-th 16 values of the MMA's %d.\n", stage05::kMmaK);
  std::printf("  used: %d of %u columns (D %d + %d slots x %d scale columns)\n", s.tmem_columns_used,
              stage05::kTmemColumns, s.bn, s.slots, s.sf_columns_per_slot);

  if (pair) {
    section("The CTA pair (cluster of 2; rank 0 = the leader, rank 1 = its peer)");
    std::printf("  %-7s %-26s %-26s %-18s %-18s\n", "CTA", "A rows (of the tile)", "B rows (of the tile)", "SFA rows",
                "SFB rows");
    for (int rank = 0; rank < s.cta_group; ++rank) {
      auto range = [](int first, int count) { return std::to_string(first) + ".." + std::to_string(first + count - 1); };
      std::printf("  rank %-2d %-26s %-26s %-18s %-18s\n", rank, range(rank * s.cta_m, s.cta_m).c_str(),
                  range(rank * s.b_rows_per_cta, s.b_rows_per_cta).c_str(), range(rank * s.cta_m, s.cta_m).c_str(),
                  ("all " + std::to_string(s.bn)).c_str());
    }
    std::printf("  Each CTA's TMA loads complete on the leader's full barrier (.cta_group::2), which expects %d bytes.\n"
                "  One thread of the leader issues each MMA; rows 0..%d of D land in the leader's TMEM, the rest in\n"
                "  the peer's. Commits arrive on both CTAs' barriers (multicast mask 0b%d%d); each CTA stores its rows.\n",
                s.cta_group * s.slot_bytes, s.cta_m - 1, (stage05::kPairMask >> 1) & 1, stage05::kPairMask & 1);
  }

  section(pair ? "Budgets (per CTA)" : "Budgets");
  std::printf("  one slot:    A %d + B %d + SFA %d + SFB %d = %d bytes of shared memory\n", s.packed_tile_bytes,
              s.packed_tile_bytes, s.sf_block_bytes, s.sfb_atoms * s.sf_block_bytes, s.slot_bytes);
  std::printf("  slots:       min(shared memory (%d - %d) / %d = %d, TMEM (%u - %d) / %d = %d) = %d\n",
              s.smem_per_block, s.fixed_bytes, s.slot_bytes, s.slots_by_smem, stage05::kTmemColumns, s.bn,
              s.sf_columns_per_slot, s.slots_by_tmem, s.slots);
  std::printf("  total:       %d bytes of dynamic shared memory (with barriers and alignment slack) + a margin of\n"
              "               %d for static shared memory = %d of the %d a block may have (%d to spare)\n",
              s.smem_bytes, s.static_margin, s.smem_bytes + s.static_margin, s.smem_per_block,
              s.smem_per_block - s.smem_bytes - s.static_margin);
  std::printf("  per k-tile (%d values of k)%s: %d bytes loaded, %d MMAs (M x N x K = %d x %d x %d), %d tcgen05.cp, "
              "%.1f MFLOP\n", stage05::kTileK, pair ? ", per pair" : "", s.cta_group * s.slot_bytes,
              stage05::kStepsPerTile, s.bm, s.bn, stage05::kMmaK, stage05::kStepsPerTile * (1 + s.sfb_atoms),
              2.0 * s.bm * s.bn * stage05::kTileK / 1e6);
  gemm::program::print_resources("nvfp4_tcgen05_gemm", s.kernel, stage05::kThreads, s.smem_bytes);
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
  const auto opts = gemm::program::parse(argc, argv, stage05::kStage, defaults);
  gemm::program::banner(stage05::kStage);
  if (emulated)
    std::printf("\n  tcgen05 is EMULATED on this GPU (%s): the default problem is %d x %d x %d and %d timed runs;\n"
                "  the time measures the emulator, not the kernel.\n",
                g.name.c_str(), defaults.M, defaults.N, defaults.K, defaults.iters);
  // The stage's two steps, in teaching order: kernel_1cta.cuh, then kernel.cuh.
  int rc = 0;
  for (const Step& step : {GEMM_STEP(stage05_1cta), GEMM_STEP(stage05)}) {
    gemm::program::section((std::string("Step ") + step.stage.id + ": " + step.stage.idea).c_str());
    walkthrough(step);
    gemm::program::section("Run, check, time");
    const auto result = gemm::program::run_and_check(step.stage, opts);
    rc = std::max(rc, gemm::program::finish(step.stage, opts, result));
  }
  return rc;
}
