// Small macros every header of the project uses.
#pragma once

// Functions that run on both sides: the CPU reference and tests call the very same code the
// kernels call, so a layout or format helper has exactly one definition.
#if defined(__CUDACC__)
#define GEMM_HD __host__ __device__ __forceinline__
#else
#define GEMM_HD inline
#endif
