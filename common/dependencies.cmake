# GoogleTest (with GoogleMock) and Google Benchmark: the installed packages when there are any
# (Debian/Ubuntu: libgtest-dev libgmock-dev libbenchmark-dev), otherwise a pinned download through
# FetchContent.
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

_gemm_require_dependency(GTest googletest "libgtest-dev libgmock-dev")
_gemm_require_dependency(benchmark googlebenchmark "libbenchmark-dev")

# FetchContent builds provide GTest::gtest under the name gtest; give both spellings.
if(NOT TARGET GTest::gtest AND TARGET gtest)
  add_library(GTest::gtest ALIAS gtest)
endif()
if(NOT TARGET benchmark::benchmark AND TARGET benchmark)
  add_library(benchmark::benchmark ALIAS benchmark)
endif()
if(NOT TARGET GTest::gmock AND TARGET gmock)
  add_library(GTest::gmock ALIAS gmock)
endif()

# Tests include <gmock/gmock.h> (its matchers) through GTest::gtest. An installed GoogleTest has
# GoogleMock's headers beside its own, except that Debian and Ubuntu package them apart
# (libgmock-dev): without them, stop here rather than with a compile error deep in the build. The
# pinned download has them in a directory of their own, which GTest::gtest is given.
get_target_property(_gemm_gtest_imported GTest::gtest IMPORTED)
if(_gemm_gtest_imported)
  get_target_property(_gemm_gtest_include_dirs GTest::gtest INTERFACE_INCLUDE_DIRECTORIES)
  find_path(GEMM_GMOCK_INCLUDE_DIR gmock/gmock.h HINTS ${_gemm_gtest_include_dirs}
            DOC "Directory holding gmock/gmock.h (GoogleMock's headers)")
  if(NOT GEMM_GMOCK_INCLUDE_DIR)
    message(FATAL_ERROR
      "GoogleTest was found (${GTest_DIR}) without GoogleMock's headers (gmock/gmock.h), which "
      "the tests include. Install them (Debian/Ubuntu: apt-get install libgmock-dev), or point "
      "CMAKE_PREFIX_PATH at a GoogleTest installation that has GoogleMock.")
  endif()
elseif(TARGET gtest AND TARGET gmock)
  target_include_directories(gtest SYSTEM INTERFACE
    $<TARGET_PROPERTY:gmock,INTERFACE_INCLUDE_DIRECTORIES>)
endif()
include(GoogleTest)
