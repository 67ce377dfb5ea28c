// stage02: the bank conflict of stage 01's layout, the swizzle that removes it, shown as the banks
// one warp touches; then run, checked and timed.  ./stage02 --help for options;
// --bank-map FILE writes the maps as JSON (docs/plot.py draws docs/plots/02_swizzle_bank_map.svg).
#include <cstdio>
#include <sstream>
#include <vector>

#include "kernel.cuh"

#include "common/bank_model.h"
#include "common/harness/stage_program.h"

namespace {

struct LaneAccess {
  int lane, row, chunk;
  uint32_t byte;
};

// The B-tile read of the compute loop, warp 0, logical chunk 0, j = 0: lane t reads row tx = t % 16.
std::vector<LaneAccess> b_read(bool swizzled) {
  std::vector<LaneAccess> v;
  for (int lane = 0; lane < 32; ++lane) {
    const int row = lane % stage02::kThreadsN;
    const uint32_t byte = swizzled ? stage02::smem_offset(row, 0) : uint32_t(row * gemm::kSwizzleRowBytes);
    v.push_back({lane, row, int(byte % gemm::kSwizzleRowBytes) / gemm::kSwizzleChunkBytes, byte});
  }
  return v;
}

std::vector<uint32_t> bytes_of(const std::vector<LaneAccess>& v) {
  std::vector<uint32_t> b;
  for (const auto& a : v) b.push_back(a.byte);
  return b;
}

void walkthrough() {
  using gemm::program::section;
  section("Stage 01's layout: rows of BK = 8 floats (32 bytes), read 16 bytes (4 k) at a time");
  std::vector<uint32_t> s01;
  for (int lane = 0; lane < 32; ++lane) s01.push_back(uint32_t((lane % 16) * 32));  // B row tx, k = 0..3
  std::printf("  lane:        ");
  for (int lane = 0; lane < 8; ++lane) std::printf("%7d", lane);
  std::printf("\n  byte offset: ");
  for (int lane = 0; lane < 8; ++lane) std::printf("%7u", s01[lane]);
  std::printf("\n  banks:       ");
  for (int lane = 0; lane < 8; ++lane) std::printf("  %2d-%-2d", gemm::bank_of(s01[lane]), gemm::bank_of(s01[lane]) + 3);
  const gemm::BankReport r01 = gemm::bank_conflicts(s01, 16);
  std::printf("\n  -> %d wavefronts for one warp's load, ideal %d: a %d-way conflict\n", r01.wavefronts, r01.ideal,
              r01.degree());

  section("This stage: 128-byte rows, 16-byte reads, without and with the swizzle");
  std::printf("  the 8 lanes of a phase read rows 0..7 at logical chunk 0 (bank group = 4 banks)\n");
  std::printf("  lane  row | plain: chunk  banks  | swizzled: chunk  banks\n");
  const auto plain = b_read(false), swz = b_read(true);
  for (int lane = 0; lane < 8; ++lane)
    std::printf("  %4d %4d |        %5d  %2d-%-2d  |           %5d  %2d-%-2d\n", lane, plain[lane].row, plain[lane].chunk,
                gemm::bank_of(plain[lane].byte), gemm::bank_of(plain[lane].byte) + 3, swz[lane].chunk,
                gemm::bank_of(swz[lane].byte), gemm::bank_of(swz[lane].byte) + 3);
  const gemm::BankReport rp = gemm::bank_conflicts(bytes_of(plain), 16), rs = gemm::bank_conflicts(bytes_of(swz), 16);
  std::printf("  plain:    %2d wavefronts for the warp's 16-byte load (ideal %d): %d-way conflict\n", rp.wavefronts,
              rp.ideal, rp.degree());
  std::printf("  swizzled: %2d wavefronts (ideal %d): conflict-free\n", rs.wavefronts, rs.ideal);

  section("The swizzle (common/swizzle.h): chunk c of row r is stored at chunk c ^ (r % 8)");
  for (int r = 0; r < 8; ++r) {
    std::printf("  row %d:", r);
    for (int c = 0; c < 8; ++c) std::printf(" %d", int(stage02::smem_offset(r, c) % 128 / 16));
    std::printf("\n");
  }

  section("What it costs");
  std::printf("  shared memory: 2 tiles x %d rows x 128 bytes = %d bytes per block; 16-byte loads: %d shared loads\n"
              "  per 4 k per thread instead of 64 (stage 01)\n",
              stage02::kBM, 2 * stage02::kBM * 128, stage02::kTM + stage02::kTN);
  gemm::program::print_resources("swizzled_gemm<vector>", reinterpret_cast<const void*>(&stage02::swizzled_gemm<true>),
                                 stage02::kThreads);
}

bool write_bank_map(const std::string& path) {
  std::ostringstream f;
  auto layout = [&](const char* name, const std::vector<LaneAccess>& v, bool last) {
    const gemm::BankReport r = gemm::bank_conflicts(bytes_of(v), 16);
    f << "    \"" << name << "\": {\"wavefronts\": " << r.wavefronts << ", \"ideal\": " << r.ideal << ", \"lanes\": [";
    for (size_t i = 0; i < v.size(); ++i)
      f << (i ? ", " : "") << "{\"lane\": " << v[i].lane << ", \"row\": " << v[i].row << ", \"chunk\": " << v[i].chunk
        << ", \"byte\": " << v[i].byte << ", \"bank\": " << gemm::bank_of(v[i].byte) << "}";
    f << "]}" << (last ? "\n" : ",\n");
  };
  f << "{\n  \"stage\": \"02_swizzle\",\n  \"access\": \"B-tile read of the compute loop: warp 0, logical chunk 0, "
       "16-byte loads, 8 lanes per phase\",\n  \"width_bytes\": 16,\n  \"layouts\": {\n";
  layout("plain", b_read(false), false);
  layout("swizzled", b_read(true), true);
  f << "  }\n}\n";
  return gemm::program::write_output_file("--bank-map", path, f.str());
}

}  // namespace

int main(int argc, char** argv) {
  const gemm::program::Flag bank_map{"--bank-map", "FILE",
                                     "write the plain and swizzled bank maps as JSON (docs/plot.py draws them)",
                                     gemm::program::Flag::Kind::kOutputFile};
  const auto opts = gemm::program::parse(argc, argv, stage02::kStage, {}, {bank_map});
  gemm::program::banner(stage02::kStage);
  walkthrough();
  if (opts.extra.count("--bank-map") && !write_bank_map(opts.extra.at("--bank-map"))) return 1;
  gemm::program::section("Run, check, time");
  const auto result = gemm::program::run_and_check(stage02::kStage, opts);
  return gemm::program::finish(stage02::kStage, opts, result);
}
