# GoogleTest and Google Benchmark: the installed packages when there are any (Debian/Ubuntu:
# libgtest-dev, libbenchmark-dev), otherwise a pinned download through FetchContent.
include(FetchContent)

function(_gemm_require_dependency pkg_name fc_name install_hint)
  find_package(${pkg_name} QUIET)
  if(${pkg_name}_FOUND)
    message(STATUS "Using installed ${pkg_name} (${${pkg_name}_DIR})")
    return()
  endif()
  if(NOT GEMM_FETCH_DEPENDENCIES)
    message(FATAL_ERROR
      "${pkg_name} was not found and GEMM_FETCH_DEPENDENCIES is OFF. Install it "
      "(${install_hint}) or point CMAKE_PREFIX_PATH at an installation.")
  endif()
  message(STATUS "${pkg_name} is not installed: downloading it (needs network; to avoid this, "
                 "install ${install_hint})")
  FetchContent_MakeAvailable(${fc_name})
endfunction()

set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
set(BENCHMARK_ENABLE_GTEST_TESTS OFF CACHE BOOL "" FORCE)
set(BENCHMARK_ENABLE_INSTALL OFF CACHE BOOL "" FORCE)

FetchContent_Declare(googletest
  URL https://github.com/google/googletest/archive/refs/tags/v1.14.0.tar.gz
  URL_HASH SHA256=8ad598c73ad796e0d8280b082cebd82a630d73e73cd3c70057938a6501bba5d7
  FIND_PACKAGE_ARGS NAMES GTest)
FetchContent_Declare(googlebenchmark
  URL https://github.com/google/benchmark/archive/refs/tags/v1.8.3.tar.gz
  URL_HASH SHA256=6bc180a57d23d4d9515519f92b0c83d61b05b5bab188961f36ac7b06b0d9e9ce
  FIND_PACKAGE_ARGS NAMES benchmark)

_gemm_require_dependency(GTest googletest "libgtest-dev")
_gemm_require_dependency(benchmark googlebenchmark "libbenchmark-dev")

# FetchContent builds provide GTest::gtest under the name gtest; give both spellings.
if(NOT TARGET GTest::gtest AND TARGET gtest)
  add_library(GTest::gtest ALIAS gtest)
endif()
if(NOT TARGET benchmark::benchmark AND TARGET benchmark)
  add_library(benchmark::benchmark ALIAS benchmark)
endif()
include(GoogleTest)
