#include "common/harness/gemm_tests.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/cuda_check.h"
#include "common/device_buffer.h"
#include "common/harness/compare.h"
#include "common/harness/problems.h"
#include "common/protocol/checker_state.h"

namespace gemm::testing {
namespace {

constexpr int kPoisonByte = 0xFF;  // every float and every half made of 0xFF bytes is a NaN

// C lies between kGuardBytes poisoned bytes on each side (128: 64 FP16 or 32 FP32 elements, and C
// keeps the buffer's 128-byte alignment): a kernel that writes one element past either end of C
// fails the case.
constexpr size_t kGuardBytes = 128;

bool all_bytes_are(const std::vector<uint8_t>& v, size_t from, size_t to, int byte) {
  for (size_t i = from; i < to; ++i)
    if (v[i] != byte) return false;
  return true;
}

void expect_guards_untouched(const std::vector<uint8_t>& all, size_t first, size_t count) {
  size_t bad = 0, where = 0;
  for (size_t i = 0; i < all.size(); ++i)
    if ((i < first || i >= first + count) && all[i] != kPoisonByte && bad++ == 0) where = i;
  EXPECT_EQ(bad, 0u) << bad << " byte(s) written outside C, the first " << (where < first ? "before" : "after")
                     << " C at distance " << (where < first ? first - where : where - (first + count) + 1)
                     << " byte(s)";
}

void expect_all_rejected(const Launcher& launch, const AnyArgs& good) {
  for (const BadArgument& b : launch.kind().bad_arguments()) {
    AnyArgs a = good.clone();
    b.mutate(a);
    try {
      launch(a, cudaStream_t{});
      ADD_FAILURE() << "accepted invalid arguments (expected a complaint about " << b.argument
                    << (b.rule.empty() ? "" : ": " + b.rule) << ")";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(": " + b.argument + " "), std::string::npos)
          << "message does not name " << b.argument << ": " << e.what();
      if (!b.rule.empty()) {
        EXPECT_NE(std::string(e.what()).find(b.rule), std::string::npos)
            << "message does not say \"" << b.rule << "\": " << e.what();
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw something other than std::invalid_argument: " << e.what();
    }
  }
}

}  // namespace

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }

Case make_case(const std::string& what, Tier tier, int M, int N, int K, int L) {
  const Shape s{M, N, K, L};
  return {what + "_" + gemm::case_name(tier, s), s, tier};
}

bool id_fits_folder(const char* id, const char* folder) {
  const std::string i = id, f = folder;
  return i == f || (i.size() > 3 && f.size() > 3 && i.compare(0, 3, f, 0, 3) == 0 && i[2] == '_');
}

void exit_with_kernel_status() {
  const cudaError_t err = cudaDeviceSynchronize();
  std::fprintf(stderr, "kernel ended with: %s\n", cudaGetErrorString(err));
  std::exit(err == cudaSuccess ? 0 : kKernelFailedExit);
}

void run_case(const Launcher& launch, const Case& c, Tile tile, int c_offset) {
  SCOPED_TRACE("case " + c.name + ", seed " + std::to_string(seed_for(c.name)) +
               " (set GEMM_TEST_SEED to draw other data)" + (c_offset ? ", C offset by one element" : ""));
  const Kind& kind = launch.kind();
  const std::unique_ptr<Problem> p = kind.make_problem(c.shape, c.tier, seed_for(c.name));
  const std::unique_ptr<DeviceInputs> in = p->upload();
  const size_t bytes = size_t(kind.output_bytes(c.shape));
  const size_t first = kGuardBytes + size_t(c_offset) * size_t(kind.output_element_bytes());
  DeviceBuffer<uint8_t> C(first + bytes + kGuardBytes);
  const AnyArgs args = in->args(0, C.get() + first);
  auto run = [&] {
    C.fill_bytes(kPoisonByte);
    launch(args, cudaStream_t{});
    CUDA_CHECK(cudaDeviceSynchronize());
    // The protocol checker, where it runs, traps on a violation; in its report mode it records one.
    EXPECT_EQ(protocol::take_violation(), "");
    const std::vector<uint8_t> all = C.download();
    expect_guards_untouched(all, first, bytes);
    return std::vector<uint8_t>(all.begin() + long(first), all.begin() + long(first + bytes));
  };
  const std::vector<uint8_t> once = run();
  const CompareResult r = p->compare(once.data(), tile);
  EXPECT_TRUE(r.ok()) << r.describe();
  const std::vector<uint8_t> twice = run();
  EXPECT_EQ(0, std::memcmp(once.data(), twice.data(), bytes)) << "two runs on the same inputs differ: a race";
}

void run_case_with_guards(const Launcher& launch, const Case& c, Tile tile, int c_offset) {
  SCOPED_TRACE("case " + c.name + ", seed " + std::to_string(seed_for(c.name)) + ", guard bytes around C");
  const Kind& kind = launch.kind();
  const std::unique_ptr<Problem> p = kind.make_problem(c.shape, c.tier, seed_for(c.name));
  const std::unique_ptr<DeviceInputs> in = p->upload();
  const size_t bytes = size_t(kind.output_bytes(c.shape)), guard = 8192;  // bytes of pattern on each side
  const size_t first = guard + size_t(c_offset) * size_t(kind.output_element_bytes());
  std::vector<uint8_t> pattern(first + bytes + guard + 16);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = uint8_t(0xA5u ^ (i * 40503u >> 3));
  DeviceBuffer<uint8_t> buf(pattern);
  CUDA_CHECK(cudaMemset(buf.get() + first, kPoisonByte, bytes));
  launch(in->args(0, buf.get() + first), cudaStream_t{});
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<uint8_t> got = buf.download();
  size_t touched = 0;
  for (size_t i = 0; i < got.size(); ++i) touched += (i < first || i >= first + bytes) && got[i] != pattern[i];
  EXPECT_EQ(touched, 0u) << "bytes outside C were written";
  const CompareResult r = p->compare(got.data() + first, tile);
  EXPECT_TRUE(r.ok()) << r.describe();
}

void expect_rejects_invalid_arguments_cpu(const Launcher& launch) {
  expect_all_rejected(launch, launch.kind().placeholder_args());
}

// Valid arguments on real buffers (a small realistic problem of the kind, the shape of its
// placeholder arguments), so that a launcher that wrongly accepted one would run for real.
void expect_rejects_invalid_arguments_gpu(const Launcher& launch) {
  const Kind& kind = launch.kind();
  const Shape s = kind.element_aligned_c_case().shape;
  const std::unique_ptr<Problem> p = kind.make_problem(s, Tier::kRealistic, seed_for("invalid"));
  const std::unique_ptr<DeviceInputs> in = p->upload();
  DeviceBuffer<uint8_t> C(size_t(kind.output_bytes(s)));
  C.fill_bytes(kPoisonByte);
  expect_all_rejected(launch, in->args(0, C.get()));
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<uint8_t> after = C.download();
  EXPECT_TRUE(all_bytes_are(after, 0, after.size(), kPoisonByte)) << "a rejected call wrote to C";
}

}  // namespace gemm::testing
