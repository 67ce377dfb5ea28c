// Which device pass is being compiled: the macros the PTX wrappers, the emulator and the protocol
// checker choose their code with.
#pragma once

// Compiled for a GPU with tcgen05 (the arch-specific Blackwell targets).
#if defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(__CUDA_ARCH_FEAT_SM101_ALL) || defined(__CUDA_ARCH_FEAT_SM103_ALL)
#define GEMM_HAS_TCGEN05 1
#else
#define GEMM_HAS_TCGEN05 0
#endif
// The other sm_100a-only instructions (common/ptx/ld.cuh, common/ptx/cvt.cuh) exist on the same targets.
#define GEMM_HAS_SM100A_INSTRUCTIONS GEMM_HAS_TCGEN05

// The precondition build: GEMM_SM100_PATHS_ON_HOPPER=1 (the *_sm100_paths test targets, CMake) makes
// the Hopper device pass take the control flow that otherwise only sm_100a takes outside tcgen05,
// with every sm_100a-only instruction of common/ptx/ld.cuh and common/ptx/cvt.cuh replaced by Hopper
// instructions that first check that instruction's preconditions and trap, naming the rule, where
// one fails (docs/emulator.md, "The sm_100a paths on Hopper"). Hosts of such a build choose the
// sm_100a paths on Hopper too (stage 09's launch). GEMM_SM100_PATHS: this device pass takes them,
// natively (an arch-specific Blackwell target) or checked (Hopper, the precondition build).
#ifndef GEMM_SM100_PATHS_ON_HOPPER
#define GEMM_SM100_PATHS_ON_HOPPER 0
#endif
#if GEMM_HAS_SM100A_INSTRUCTIONS || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && GEMM_SM100_PATHS_ON_HOPPER)
#define GEMM_SM100_PATHS 1
#else
#define GEMM_SM100_PATHS 0
#endif

// The protocol checker (common/protocol/checker.cuh), chosen per target by CMake:
//   0  off (the default)
//   1  on in device passes without tcgen05 (Hopper), where the emulator runs tcgen05: stages whose
//      kernels use common/ptx/tcgen05.cuh, the tests of stages whose kernels use only the mbarrier and
//      TMA wrappers (stage 04: real TMA and mbarriers, checked the same way), and the tests of common/;
//      native Blackwell code is untouched
//   2  on in every device pass: the checked build (`cmake --workflow --preset check`), which keeps the
//      real tcgen05 and TMA instructions on a B200 and records around them
#ifndef GEMM_PROTOCOL_CHECK
#define GEMM_PROTOCOL_CHECK 0
#endif
#if defined(__CUDA_ARCH__) && (GEMM_PROTOCOL_CHECK == 2 || (GEMM_PROTOCOL_CHECK == 1 && !GEMM_HAS_TCGEN05))
#define GEMM_PROTOCOL_ACTIVE 1
#else
#define GEMM_PROTOCOL_ACTIVE 0
#endif
