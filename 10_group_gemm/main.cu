// stage10: what one launch over many GEMMs needs: the table of per-group tensor maps (its size and the
// kernel-parameter limit), the linear schedule over every group's tiles (GPU MODE's problems on a
// B200, group by group), the MoE layout as a table; then the kernel run, checked and timed (EMULATED
// on Hopper) on --l groups of N x K sharing --m rows unevenly.  ./stage10 --help for options.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "kernel_table.cuh"
#include "kernel.cuh"

#include "common/device_info.h"
#include "common/harness/schedule_print.h"
#include "common/harness/stage_program.h"
#include "common/sf_layout.h"

namespace {

using gemm::program::section;

// Groups on placeholder pointers (the schedule only needs the sizes; nothing is encoded).
std::vector<gemm::Nvfp4Group> sizes_only(const std::vector<int>& ms, int N, int K) {
  std::vector<gemm::Nvfp4Group> groups;
  auto* p = reinterpret_cast<const uint8_t*>(0x10000);
  for (int m : ms) groups.push_back({m, N, K, p, p, p, p, 1.0f, reinterpret_cast<__half*>(0x20000)});
  return groups;
}

// One step's schedule of a problem: units, waves, the first unit of each group, and how much of the
// MMA's work multiplies real tokens (the rest multiplies rows or columns TMA filled with zeros).
template <class Table>
void print_step(const char* step, const Table& t, const std::vector<int>& ms, int token_tile, int pairs) {
  std::printf("    %s: %4d units = %.2f waves; MMA work on real tokens %3.0f%%; first unit per group:", step, t.units,
              double(t.units) / pairs, 100.0 * [&] {
                double used = 0, padded = 0;
                for (int m : ms) used += m, padded += (m + token_tile - 1) / token_tile * token_tile;
                return used / padded;
              }());
  for (int g = 0; g < t.groups; ++g) std::printf(" %d", t.info[g].first_unit);
  std::printf("\n");
}

void table_walkthrough() {
  section("The table: one __grid_constant__ parameter");
  std::printf("  per group: 5 tensor maps (A, B, SFA, SFB, C) = %zu B, sizes + alpha + C = %zu B\n",
              sizeof(stage10::GroupMaps), sizeof(stage10::GroupInfo));
  std::printf("  kernel parameters hold %d B (CUDA 12.1+): %d groups per launch (%zu B); a call with more groups\n"
              "  is split into launches of %d. Up to %d groups the launch takes a table of %d (%zu B).\n",
              stage10::kParamBytes, stage10::kGroupsPerLaunch, sizeof(stage10::GroupTable<stage10::kGroupsPerLaunch>),
              stage10::kGroupsPerLaunch, stage10::kSmallTable, stage10::kSmallTable,
              sizeof(stage10::GroupTable<stage10::kSmallTable>));
  std::printf("  encoded once per problem on the host and cached (%zu problems): a repeated call validates nothing\n"
              "  and encodes nothing\n", stage10::kCachedProblems);
}

void schedule_walkthrough() {
  section("The schedule: one unit index over every tile of every group (B200: 74 pairs)");
  struct Case {
    const char* name;
    std::vector<int> ms;
    int N, K;
  };
  const Case cases[] = {{"GPU MODE Q1", {80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168},
                        {"GPU MODE Q2", {40, 76, 168, 72, 164, 148, 196, 160}, 7168, 2048},
                        {"GPU MODE Q3", {192, 320}, 3072, 4096},
                        {"GPU MODE Q4", {128, 384}, 4096, 1536}};
  const int pairs = gemm::program::kB200Sms / stage10::kCtaGroup;
  for (const Case& c : cases) {
    const auto groups = sizes_only(c.ms, c.N, c.K);
    const int G = int(groups.size());
    std::printf("  %s (N %d, K %d), on %d pairs:\n", c.name, c.N, c.K, pairs);
    print_step("step 1, tokens on the MMA's M (256)", stage10_table::make_table<8>(groups, 0, G, false, false), c.ms,
               stage10_table::kBM, pairs);
    print_step("step 2, tokens on the MMA's N (128)", stage10::make_table<8>(groups, 0, G, false, false), c.ms,
               stage10::kBN, pairs);
  }
}

void moe_walkthrough() {
  section("The MoE layout through the same table (nvfp4_group_gemm.h)");
  const int offsets[] = {0, 200, 200, 270};
  std::printf("  3 experts, tokens sorted by expert: row_offsets = {0, 200, 200, 270}, N = 256, K = 512\n");
  for (int e = 0; e < 3; ++e) {
    if (offsets[e + 1] == offsets[e]) {
      std::printf("    expert %d: no tokens (M = 0: nothing read, nothing written, no units)\n", e);
      continue;
    }
    std::printf("    expert %d: A rows %d..%d, its scales from byte %lld (%lld B: rows padded to 128)\n", e, offsets[e],
                offsets[e + 1] - 1, static_cast<long long>(gemm::moe_sfa_offset(offsets, e, 512)),
                static_cast<long long>(gemm::sf_batch_bytes(offsets[e + 1] - offsets[e], 512)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const gemm::GpuInfo& g = gemm::gpu_info();
  const bool emulated = g.usable && !g.tcgen05_native();
  gemm::program::Options defaults;
  defaults.M = 1024, defaults.N = 4096, defaults.K = 7168, defaults.L = 8;  // 8 experts, 1024 routed rows
  if (emulated) {
    defaults.N = 512, defaults.K = 1024;
    defaults.iters = 3;
  }
  const auto opts = gemm::program::parse(argc, argv, stage10::kStage, defaults);
  gemm::program::banner(stage10::kStage);
  if (emulated)
    std::printf("\n  tcgen05 is EMULATED on this GPU (%s): the default problem is %d groups of %d x %d sharing %d rows\n"
                "  and %d timed runs; the time measures the emulator, not the kernel.\n",
                g.name.c_str(), defaults.L, defaults.N, defaults.K, defaults.M, defaults.iters);
  table_walkthrough();
  schedule_walkthrough();
  moe_walkthrough();
  // The stage's two steps, in teaching order: kernel_table.cuh, then kernel.cuh.
  int rc = 0;
  for (const gemm::Stage* step : {static_cast<const gemm::Stage*>(&stage10_table::kStage),
                                  static_cast<const gemm::Stage*>(&stage10::kStage)}) {
    gemm::program::section((std::string("Run, check, time: ") + step->id + ", " + step->idea).c_str());
    const auto result = gemm::program::run_and_check(*step, opts);
    rc = std::max(rc, gemm::program::finish(*step, opts, result));
  }
  return rc;
}
