// The precondition build's own net, wrapper by wrapper (common/ptx/ld.cuh, common/ptx/cvt.cuh): this
// file is compiled only for Hopper with GEMM_SM100_PATHS_ON_HOPPER=1 (test_common_sm100_paths), where
// each sm_100a-only instruction is Hopper instructions that check its preconditions first. The twins
// hold each wrapper to what its instruction computes (every byte of a 32-byte load, every E2M1 byte,
// the encoder's special values, operands in the instruction's order); the broken twins violate one
// precondition each (a 32-byte load from a 16-byte aligned address, or from shared memory), and must
// trap with that rule's message, in a child process (a trap ends the CUDA context).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/device_buffer.h"
#include "common/formats.h"
#include "common/harness/gemm_tests.h"
#include "common/nvfp4_device.cuh"
#include "common/ptx/cvt.cuh"
#include "common/ptx/ld.cuh"

static_assert(GEMM_SM100_PATHS_ON_HOPPER, "the precondition build's tests: built by gemm_sm100_paths_test only");

namespace gemm {
namespace {

// ---- 256-bit loads --------------------------------------------------------------------------------------

// Which wrapper a kernel calls: one per instruction spelling.
enum class V8Load : int { kNc, kNoAllocate, kNoAllocateL2Prefetch };
const char* const kV8Names[] = {"ld.global.nc.v8.b32", "ld.global.nc.L1::no_allocate.v8.b32",
                                "ld.global.nc.L1::no_allocate.L2::256B.v8.b32"};

__device__ void load_v8(V8Load which, const void* p, uint32_t (&w)[8]) {
  switch (which) {
    case V8Load::kNc: ptx::ld_global_nc_v8_b32(p, w); break;
    case V8Load::kNoAllocate: ptx::ld_global_nc_L1_no_allocate_v8_b32(p, w); break;
    default: ptx::ld_global_nc_L1_no_allocate_L2_256B_v8_b32(p, w); break;
  }
}

constexpr int kThreads = 64;  // two warps
constexpr int kWords = 8;     // one .v8.b32 load per thread

// Thread t loads the 32 bytes at src + offset + 32 t into out[8 t .. 8 t + 7].
__global__ void load_v8_kernel(V8Load which, const uint8_t* src, int offset, uint32_t* out) {
  uint32_t w[kWords];
  load_v8(which, src + offset + ptx::kV8B32Bytes * threadIdx.x, w);
  for (int i = 0; i < kWords; ++i) out[kWords * threadIdx.x + i] = w[i];
}

// The same load from a 32-byte aligned generic address of shared memory: not a global address.
__global__ void load_v8_from_shared_kernel(V8Load which, uint32_t* out) {
  __shared__ alignas(32) uint32_t s[kWords];
  if (threadIdx.x < kWords) s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  uint32_t w[kWords];
  load_v8(which, s, w);
  for (int i = 0; i < kWords; ++i) out[kWords * threadIdx.x + i] = w[i];
}

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * 131u + 7u);
  return v;
}

class GpuSm100PathsLoad : public ::testing::TestWithParam<int> {};

TEST_P(GpuSm100PathsLoad, MovesTheSameBytesAsTheInstruction) {
  GEMM_REQUIRE_GPU();
  const V8Load which = V8Load(GetParam());
  constexpr int kBytes = kThreads * kWords * 4;
  const std::vector<uint8_t> src = pattern(2 * kBytes);
  DeviceBuffer<uint8_t> d_src(src);
  DeviceBuffer<uint32_t> out(kThreads * kWords);
  for (int offset : {0, 32, 224}) {  // every 32-byte aligned start gives the bytes at it
    out.fill_bytes(0xFF);
    load_v8_kernel<<<1, kThreads>>>(which, d_src.get(), offset, out.get());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<uint8_t> got(kBytes);
    const std::vector<uint32_t> words = out.download();
    std::memcpy(got.data(), words.data(), kBytes);
    EXPECT_EQ(got, std::vector<uint8_t>(src.begin() + offset, src.begin() + offset + kBytes))
        << kV8Names[GetParam()] << " at offset " << offset;
  }
}

std::string load_name(const ::testing::TestParamInfo<int>& i) {
  static const char* const kNames[] = {"nc", "L1_no_allocate", "L1_no_allocate_L2_256B"};
  return kNames[i.param];
}

INSTANTIATE_TEST_SUITE_P(Wrappers, GpuSm100PathsLoad, ::testing::Values(0, 1, 2), load_name);

// ---- The broken twins: each violated precondition traps with its rule ----------------------------------

enum class Violation : int { kSixteenByteAligned, kSharedAddress };

// In the death test's child: the trap message (device printf, on stdout) goes to stderr, which is what
// a death test matches; the process ends with kKernelFailedExit if the kernel failed.
[[noreturn]] void run_violation_and_exit(V8Load which, Violation v) {
  std::fflush(stdout);
  dup2(2, 1);
  DeviceBuffer<uint8_t> src(4096);
  DeviceBuffer<uint32_t> out(kThreads * kWords);
  constexpr int kSixteenBytesOff = 16;  // 16-byte aligned, the least the NVFP4 contract promises, not 32
  if (v == Violation::kSixteenByteAligned)
    load_v8_kernel<<<1, kThreads>>>(which, src.get(), kSixteenBytesOff, out.get());
  else
    load_v8_from_shared_kernel<<<1, kThreads>>>(which, out.get());
  testing::exit_with_kernel_status();
}

struct BrokenCase {
  const char* name;
  V8Load which;
  Violation violation;
  const char* message;  // a regular expression over the child's stderr
};

const BrokenCase kBroken[] = {
    {"nc_16_byte_aligned", V8Load::kNc, Violation::kSixteenByteAligned,
     "sm_100a precondition: ld[.]global[.]nc[.]v8[.]b32: the address must be 32-byte aligned, the access size "
     "[(]PTX ISA 6[.]4[.]1[)]: got 0x[0-9a-f]*10 "},
    {"no_allocate_16_byte_aligned", V8Load::kNoAllocate, Violation::kSixteenByteAligned,
     "sm_100a precondition: ld[.]global[.]nc[.]L1::no_allocate[.]v8[.]b32: the address must be 32-byte aligned"},
    {"prefetch_16_byte_aligned", V8Load::kNoAllocateL2Prefetch, Violation::kSixteenByteAligned,
     "sm_100a precondition: ld[.]global[.]nc[.]L1::no_allocate[.]L2::256B[.]v8[.]b32: the address must be "
     "32-byte aligned"},
    {"no_allocate_shared_address", V8Load::kNoAllocate, Violation::kSharedAddress,
     "sm_100a precondition: ld[.]global[.]nc[.]L1::no_allocate[.]v8[.]b32: the address must be a global address "
     "[(]PTX ISA 9[.]7[.]9[.]9[)]"},
};

class GpuSm100PathsDeathTest : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(GpuSm100PathsDeathTest, TrapsWithItsRule) {
  GEMM_REQUIRE_GPU();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const BrokenCase c = GetParam();
  EXPECT_EXIT(run_violation_and_exit(c.which, c.violation), ::testing::ExitedWithCode(testing::kKernelFailedExit),
              std::string(c.message) + "(.|\\n)*kernel ended with: .+");
}

INSTANTIATE_TEST_SUITE_P(Broken, GpuSm100PathsDeathTest, ::testing::ValuesIn(kBroken),
                         [](const ::testing::TestParamInfo<BrokenCase>& i) { return std::string(i.param.name); });

// Not run by default: runs the broken case GEMM_TRAP_CASE=<name> in this process, so its message can
// be read whole:
//   GEMM_TRAP_CASE=no_allocate_16_byte_aligned ./test_common_sm100_paths \
//       --gtest_also_run_disabled_tests --gtest_filter='*ShowTrapMessage*'
TEST(DISABLED_GpuSm100Paths, ShowTrapMessage) {
  GEMM_REQUIRE_GPU();
  const char* name = std::getenv("GEMM_TRAP_CASE");
  ASSERT_NE(name, nullptr) << "set GEMM_TRAP_CASE to one of the Broken/ cases";
  for (const BrokenCase& c : kBroken)
    if (std::string(name) == c.name) run_violation_and_exit(c.which, c.violation);
  FAIL() << "no broken case named " << name;
}

// ---- E2M1 conversions ---------------------------------------------------------------------------------

constexpr int kBytes = 256;

// Every byte through both decode wrappers and through gemm::e2m1x2_to_half2 (which the GEMM stages
// call): out[3 b .. 3 b + 2].
__global__ void decode_every_byte(uint32_t* out) {
  const uint32_t b = threadIdx.x;
  out[3 * b] = ptx::cvt_rn_f16x2_e2m1x2(b);
  uint32_t four[4];
  ptx::cvt_rn_f16x2_e2m1x2_bytes(b << 16, four);  // the byte as byte 2 of a word
  out[3 * b + 1] = four[2];
  const __half2 h = e2m1x2_to_half2(uint8_t(b), nullptr);  // the sm_100a path reads no table
  out[3 * b + 2] = *reinterpret_cast<const uint32_t*>(&h);
}

TEST(GpuSm100PathsCvt, DecodeGivesTheUpperNibbleInTheUpperHalf) {
  GEMM_REQUIRE_GPU();
  DeviceBuffer<uint32_t> out(3 * kBytes);
  out.fill_bytes(0xFF);
  decode_every_byte<<<1, kBytes>>>(out.get());
  CUDA_CHECK_LAUNCH();
  const std::vector<uint32_t> got = out.download();
  for (int b = 0; b < kBytes; ++b) {
    const double lo = e2m1_to_float(e2m1_even(uint8_t(b))), hi = e2m1_to_float(e2m1_odd(uint8_t(b)));
    for (int k = 0; k < 3; ++k) {
      const uint32_t v = got[3 * b + k];
      EXPECT_EQ(half_bits_to_double(uint16_t(v & 0xFFFF)), lo) << "byte " << b << " wrapper " << k;
      EXPECT_EQ(half_bits_to_double(uint16_t(v >> 16)), hi) << "byte " << b << " wrapper " << k;
      EXPECT_EQ(std::signbit(half_bits_to_double(uint16_t(v & 0xFFFF))), bool(b & 0x08)) << "byte " << b;
    }
  }
}

// Pairs of floats through cvt.rn.satfinite.e2m1x2.f32 (a to the upper nibble) and through
// gemm::e2m1x2_from_floats (the quantizer's: its even value to the lower nibble).
__global__ void encode_pairs(const float* x, int n, uint32_t* out) {
  const int i = int(threadIdx.x);
  if (i >= n) return;
  const float a = x[i], b = x[n - 1 - i];
  out[2 * i] = ptx::cvt_rn_satfinite_e2m1x2_f32(a, b);
  out[2 * i + 1] = e2m1x2_from_floats(b, a);
}

TEST(GpuSm100PathsCvt, EncodeRoundsSaturatesAndPacksTheFirstOperandHigh) {
  GEMM_REQUIRE_GPU();
  // Ties of every binade, values past 6, infinities, NaN (+6 under .satfinite), signed zeros, a
  // subnormal float, and each grid value.
  const std::vector<float> x = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 6.5f, 7.0f, 1e30f, -1e30f, INFINITY,
                                -INFINITY, NAN, -NAN, 0.0f, -0.0f, -1e-40f, 0.5f, -1.5f, 3.0f, -4.0f, 6.0f, -0.2f};
  const int n = int(x.size());
  DeviceBuffer<float> d_x(x);
  DeviceBuffer<uint32_t> out(2 * n);
  out.fill_bytes(0xFF);
  encode_pairs<<<1, 32>>>(d_x.get(), n, out.get());
  CUDA_CHECK_LAUNCH();
  const std::vector<uint32_t> got = out.download();
  for (int i = 0; i < n; ++i) {
    const float a = x[i], b = x[n - 1 - i];
    const uint32_t want = uint32_t(e2m1_from_float(a)) << 4 | e2m1_from_float(b);
    EXPECT_EQ(got[2 * i], want) << "cvt of (" << a << ", " << b << ")";
    EXPECT_EQ(got[2 * i + 1], want) << "e2m1x2_from_floats(" << b << ", " << a << ")";
  }
}

}  // namespace
}  // namespace gemm
