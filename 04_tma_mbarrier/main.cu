// stage04: the tensor maps, the shared-memory budget and the pipeline it allows, then the TMA GEMM
// run, checked and timed.  ./stage04 --help for options.
#include <cstdio>

#include "kernel.cuh"

#include "common/device_buffer.h"
#include "common/harness/stage_program.h"

namespace {

void walkthrough(const gemm::program::Options& o) {
  using gemm::program::section;
  using namespace stage04;
  section("Tensor maps (one per operand, encoded on the host, passed to the kernel by value)");
  // Placeholder 16-byte-aligned bases: the plan needs only shapes and alignment.
  auto* base = reinterpret_cast<const uint8_t*>(0x10000);
  const gemm::Nvfp4GemmArgs a{o.M, o.N, o.K, o.L, base, base, base, base, 1.0f, nullptr};
  try {
    std::printf("  A: %s\n  B: %s\n", plan_a(a).describe().c_str(), plan_b(a).describe().c_str());
  } catch (const std::exception& e) {
    std::printf("  (this shape cannot be mapped: %s)\n", e.what());
  }
  std::printf("  one copy = one box = %d rows x %d bytes = %d values of k, swizzled as stage 02's tiles\n", kBM,
              kPackedRowBytes, kTileK);
  std::printf("  scale atoms: a bulk copy of 4 x 512 bytes per operand and k-tile (fewer at the end of K)\n");

  section("Shared-memory budget -> pipeline depth");
  std::printf("  one slot:   A tile %d + B tile %d + SFA %d + SFB %d = %zu bytes\n", kPackedTileBytes,
              kPackedTileBytes, kSfBlockBytes, kSfBlockBytes, sizeof(Slot));
  std::printf("  fixed:      decoded slices 2 x %d + barriers, table %d + alignment slack %d = %d bytes\n",
              kDecodedTileBytes, 1024, 1024, kFixedBytes);
  std::printf("  budget:     %d bytes per SM / %d blocks per SM - 1024 reserved = %d bytes per block\n", kSmemPerSm,
              kBlocksPerSm, kSmemBudget);
  std::printf("  slots:      (%d - %d) / %zu = %d   -> %d bytes used; up to %d k-tiles (%d values of k) in flight\n",
              kSmemBudget, kFixedBytes, sizeof(Slot), kSlots, kSmemBytes, kSlots - 1, (kSlots - 1) * kTileK);

  section("The protocol, per slot s (parities count the rounds around the ring)");
  std::printf("  producer (thread 0): wait empty[s] (parity 1 first: passes at once), arrive.expect_tx(full[s],\n"
              "           %d + %d + scale bytes), TMA A box, TMA B box, bulk-copy SFA, SFB -> all complete_tx on full[s]\n"
              "  consumers (8 warps): wait full[s], decode + compute the 8 slices, one arrive per warp on empty[s]\n",
              kPackedTileBytes, kPackedTileBytes);
  gemm::program::print_resources("nvfp4_tma_gemm", reinterpret_cast<const void*>(&nvfp4_tma_gemm), kThreads, kSmemBytes);
}

}  // namespace

int main(int argc, char** argv) {
  const auto opts = gemm::program::parse(argc, argv, stage04::kStage, {});
  gemm::program::banner(stage04::kStage);
  walkthrough(opts);
  gemm::program::section("Run, check, time");
  const auto result = gemm::program::run_and_check(stage04::kStage, opts);
  return gemm::program::finish(stage04::kStage, opts, result);
}
