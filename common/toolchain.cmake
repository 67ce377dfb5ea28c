# What the project needs of the CUDA toolkit and which GPU architectures each part is compiled for.
# Included by the top-level CMakeLists.txt; also runs on its own in script mode, which is how the
# ctest `toolkit_version_check` tests the messages without a second toolkit:
#   cmake -DGEMM_CHECK_CUDA_VERSION=12.8 -P common/toolchain.cmake
#   cmake -DGEMM_CHECK_ARCHITECTURES=86,90a -DGEMM_CHECK_MIN_SM=90 -P common/toolchain.cmake

# The oldest toolkit whose PTX assembler knows every instruction the kernels emit. The NVFP4 MMA is
# written `tcgen05.mma ... .kind::mxf4nvf4.block_scale.block16` (common/ptx/tcgen05.cuh): the
# `.block16` spelling is PTX ISA 8.8, first shipped with CUDA 12.9 (12.8 has PTX ISA 8.7 and only the
# older spelling `.scale_vec::4X`, which PTX defines as the same operation).
set(GEMM_MIN_CUDA_VERSION 12.9)

function(gemm_check_cuda_version version where)
  if(version VERSION_LESS GEMM_MIN_CUDA_VERSION)
    message(FATAL_ERROR
      "This project needs CUDA >= ${GEMM_MIN_CUDA_VERSION}, but found nvcc ${version}${where}. The NVFP4 "
      "MMA is written `tcgen05.mma ... .block16`, which is PTX ISA 8.8, first in CUDA 12.9. Install CUDA "
      "12.9 or newer and point CMAKE_CUDA_COMPILER at its nvcc (for example "
      "-DCMAKE_CUDA_COMPILER=/usr/local/cuda-12.9/bin/nvcc).")
  endif()
endfunction()

# The default: machine code for Hopper (sm_90a) and the B200 (sm_100a), plus PTX of sm_80 that the
# driver compiles for any other GPU from the Ampere generation on (stages 00-03 and common/ only).
# "a" targets are compiled to machine code only ("-real"): their PTX could be compiled only for the
# very GPU their machine code already runs on.
set(GEMM_DEFAULT_CUDA_ARCHITECTURES "80-virtual;90a-real;100a-real")

# Every entry of CMAKE_CUDA_ARCHITECTURES must be a number, optionally with CMake's suffixes:
# 80, 86-real, 80-virtual, 90a-real, 100a, 100f ... (CMake's "native", "all" and "all-major" are not
# supported: a stage picks the entries at or above its minimum, which needs numbers).
function(gemm_parse_architecture arch out_number)
  if(NOT arch MATCHES "^([0-9]+)[af]?(-real|-virtual)?$")
    message(FATAL_ERROR
      "CMAKE_CUDA_ARCHITECTURES entry '${arch}' is not of the form NN, NN-real, NN-virtual, NNa-real, "
      "NNf... (for example -DCMAKE_CUDA_ARCHITECTURES=\"86-real;80-virtual;90a-real;100a-real\"). "
      "\"native\", \"all\" and \"all-major\" are not supported: name the architectures.")
  endif()
  set(${out_number} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

# The entries of `archs` at or above compute capability `min_sm` (80 = 8.0, 90 = 9.0, ...).
function(gemm_architectures_at_least archs min_sm out)
  set(kept "")
  foreach(arch IN LISTS archs)
    gemm_parse_architecture("${arch}" number)
    if(number GREATER_EQUAL min_sm)
      list(APPEND kept "${arch}")
    endif()
  endforeach()
  set(${out} "${kept}" PARENT_SCOPE)
endfunction()

# Script mode: the checks above on values given with -D, for the ctests.
if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(DEFINED GEMM_CHECK_CUDA_VERSION)
    gemm_check_cuda_version("${GEMM_CHECK_CUDA_VERSION}" " (a version given to the check)")
    message("CUDA ${GEMM_CHECK_CUDA_VERSION} accepted")
  endif()
  if(DEFINED GEMM_CHECK_ARCHITECTURES)  # comma-separated here, so that ctest passes it as one argument
    string(REPLACE "," ";" archs "${GEMM_CHECK_ARCHITECTURES}")
    gemm_architectures_at_least("${archs}" "${GEMM_CHECK_MIN_SM}" kept)
    list(JOIN kept "," kept)
    message("at least sm_${GEMM_CHECK_MIN_SM}: [${kept}]")
  endif()
endif()
