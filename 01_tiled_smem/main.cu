// stage01: shared-memory and register tiling, explained with this stage's tile sizes, then run,
// checked and timed.  ./stage01 --help for options.
#include <cstdio>
#include <vector>

#include "kernel.cuh"

#include "common/bank_model.h"
#include "common/harness/stage_program.h"

namespace {

void walkthrough(const gemm::program::Options& o) {
  using gemm::program::section;
  using namespace stage01;
  section("The tiles");
  std::printf("  block tile BM x BN = %d x %d of C, K in chunks of BK = %d; %d threads, each a TM x TN = %d x %d\n"
              "  sub-tile of C (thread (ty, tx) owns rows ty + %d i and columns tx + %d j)\n",
              kBM, kBN, kBK, kThreads, kTM, kTN, kThreadsM, kThreadsN);

  section("Reuse, per chunk of K");
  const double global_floats = double(kBM + kBN) * kBK, fmas = double(kBM) * kBN * kBK;
  std::printf("  global -> shared: (BM + BN) * BK = %.0f floats for BM * BN * BK = %.0f FMAs:\n", global_floats, fmas);
  std::printf("    %.0f FMAs per float loaded, %.0f FLOP per byte of global traffic (stage 00: 0.25)\n",
              fmas / global_floats, 2 * fmas / (4 * global_floats));
  std::printf("  shared -> registers, per thread and k: TM + TN = %d loads for TM * TN = %d FMAs: %.0f FMAs per load\n",
              kTM + kTN, kTM * kTN, double(kTM * kTN) / (kTM + kTN));
  std::printf("  (with TM = TN = 1 it would be 0.5 FMAs per shared load: shared memory would set the pace)\n");
  const double tiles = double((o.M + kBM - 1) / kBM) * ((o.N + kBN - 1) / kBN) * o.L;
  std::printf("  at %d x %d x %d: %.0f blocks; global traffic %.2f GB (A read %d times, B %d times) vs %.2f GB in "
              "stage 00\n", o.M, o.N, o.K, tiles, tiles * (kBM + kBN) * double(o.K) * 4 * 1e-9, (o.N + kBN - 1) / kBN,
              (o.M + kBM - 1) / kBM, 8.0 * o.M * o.N * double(o.K) * o.L * 1e-9);

  section("Hiding global-memory latency");
  std::printf("  each thread loads chunk k+1 into %d registers before computing chunk k, and stores it to shared\n"
              "  memory after the barrier: the loads are in flight while the FMAs run.\n", 2 * kLoadsPerThread);

  section("What it costs");
  std::printf("  shared memory: 2 tiles x %d x %d floats = %d bytes per block\n", kBM, kBK, 2 * kBM * kBK * 4);
  std::printf("  registers: %d accumulators + %d operands per thread, before addressing\n", kTM * kTN, kTM + kTN);
  gemm::program::print_resources("tiled_gemm", reinterpret_cast<const void*>(&tiled_gemm), kThreads);

  section("The catch: shared-memory banks");
  // The compiler merges four consecutive k of one tile row into one 16-byte load (LDS.128), since
  // the row is contiguous and the k loop is unrolled. A warp's 16-byte B load at k = 0: lane t reads
  // row t % 16, and rows are BK * 4 = 32 bytes apart.
  std::vector<uint32_t> b_rows;
  for (int lane = 0; lane < 32; ++lane) b_rows.push_back(uint32_t((lane % kThreadsN) * kBK * 4));
  const gemm::BankReport r = gemm::bank_conflicts(b_rows, 16);
  std::printf("  the compiler reads 4 consecutive k of a row with one 16-byte load (LDS.128); rows are %d bytes\n"
              "  apart, so the 8 lanes of a phase read rows 0..7 at byte offsets 0, 32, ..., 224: only 4 of the 8\n"
              "  16-byte bank groups. One B load costs %d wavefronts instead of %d: a %d-way conflict.\n"
              "  (The A loads are broadcasts: a half-warp shares its row.) Stage 02 measures it and removes it.\n",
              kBK * 4, r.wavefronts, r.ideal, r.degree());
}

}  // namespace

int main(int argc, char** argv) {
  const auto opts = gemm::program::parse(argc, argv, stage01::kStage, {});
  gemm::program::banner(stage01::kStage);
  walkthrough(opts);
  gemm::program::section("Run, check, time");
  const auto result = gemm::program::run_and_check(stage01::kStage, opts);
  return gemm::program::finish(stage01::kStage, opts, result);
}
