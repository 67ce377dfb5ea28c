// main() of every test program: GoogleTest's, plus the project's own test settings.
//   - The tcgen05 emulator runs in strict mode (common/emu/tcgen05_emu_state.h): a tcgen05.cp that
//     overwrites scale-factor columns an unobserved mma still reads traps, although known-good B200
//     kernels rely on the hardware executing them in order; this project's kernels must not.
#include <gtest/gtest.h>

#include "common/device_info.h"
#include "common/emu/tcgen05_emu_state.h"

namespace {

class ProjectTestSettings : public ::testing::Environment {
 public:
  void SetUp() override {
    if (gemm::gpu_info().usable && !gemm::gpu_info().tcgen05_native()) gemm::emu::set_strict(true);
  }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new ProjectTestSettings);
  return RUN_ALL_TESTS();
}
