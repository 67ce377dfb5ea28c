# add_gemm_stage(<folder> [MIN_SM <n>] [BASE <folder>] [STEPS <file>...]): turns one stage folder into
# its programs, tests and convenience targets.
#   MIN_SM  the lowest compute capability (x 10) the stage's kernels run on, 90 when left out: the stage
#           is compiled for the entries of CMAKE_CUDA_ARCHITECTURES at or above it, and its programs,
#           tests and benchmarks say in one line that a GPU below it (or one the build has no code for)
#           cannot run them (common/program_needs.cu). With no such entry the stage is not built.
#   BASE    the stage this one builds on, which its benchmark and program compare against; by default
#           the stage added on the line above (stage 09, a GEMV, branches from the CUDA-core stage 04).
#   STEPS   the kernel files of a stage taught in more than one step (stage 05: kernel_1cta, then kernel).
#
# A stage folder holds kernel.cuh, main.cu, test.cu, bench.cu (README.md, "Layout"). A stage taught in
# steps lists its kernel files in teaching order, without ".cuh" (STEPS kernel_1cta kernel); kernel.cuh
# is the stage itself, and a step listed after it is a variant the stage does not adopt (12_svdquant:
# STEPS kernel kernel_interleaved). kernel_<x>.cuh declares namespace stageNN_<x>. For folder "NN_slug":
#   stageNN          main.cu, the walkthrough program
#   test_stageNN     test.cu + GoogleTest; ctest labels "stageNN" and "gpu" (suites named *Gpu*) or "cpu"
#   bench_stageNN    bench.cu + Google Benchmark; also links the base stage through the registry
#   stageNN_kernel   object library: kernel.cuh compiled once and registered in common/registry.h, which
#                    is how later stages' benchmarks reach this one without including its files
#   stageNN_steps    the same for the stage's other step files, where there are any: its own benchmark
#                    times them as variants
# Convenience targets: run_bench_stageNN (JSON into GEMM_RESULTS_DIR), sanitize_stageNN (compute-sanitizer
# memcheck, racecheck, synccheck over the GPU tests), sass_stageNN (cuobjdump), ncu_stageNN.

set_property(GLOBAL PROPERTY GEMM_STAGES "")

# Where run_bench_stageNN and `bench` write their JSON. docs/data holds the committed results, and `bench`
# then redraws docs/plots and the READMEs' tables from them. Any other folder keeps docs/ untouched:
# `bench` draws that folder's results beside the committed ones into <folder>/plots (docs/plot.py --results).
set(GEMM_RESULTS_DIR "${PROJECT_SOURCE_DIR}/docs/data" CACHE PATH
    "Folder the benchmark JSON goes to (docs/data: the committed results; elsewhere: your own GPU's)")
get_filename_component(GEMM_RESULTS_DIR "${GEMM_RESULTS_DIR}" ABSOLUTE BASE_DIR "${CMAKE_BINARY_DIR}")
get_filename_component(_gemm_docs_data "${PROJECT_SOURCE_DIR}/docs/data" ABSOLUTE)
if(GEMM_RESULTS_DIR STREQUAL _gemm_docs_data)
  set(GEMM_RESULTS_ARE_DOCS ON)
else()
  set(GEMM_RESULTS_ARE_DOCS OFF)
  message(STATUS "Benchmark results go to ${GEMM_RESULTS_DIR} (GEMM_RESULTS_DIR); docs/ stays as committed")
endif()

find_program(GEMM_COMPUTE_SANITIZER compute-sanitizer HINTS "${CUDAToolkit_BIN_DIR}")
find_program(GEMM_CUOBJDUMP cuobjdump HINTS "${CUDAToolkit_BIN_DIR}")
find_program(GEMM_NCU ncu HINTS "${CUDAToolkit_BIN_DIR}" "${CUDAToolkit_BIN_DIR}/../nsight-compute")
find_package(Python3 COMPONENTS Interpreter)

# Say which optional tools were found and what they enable: a target that does not exist should
# never be a surprise.
function(gemm_report_tool variable tool targets)
  if(${variable})
    message(STATUS "${tool}: ${${variable}} -> ${targets}")
  else()
    message(STATUS "${tool}: not found -> no ${targets} (install it or put it on PATH, then reconfigure)")
  endif()
endfunction()
gemm_report_tool(GEMM_CUOBJDUMP cuobjdump "sass_stageNN targets")
gemm_report_tool(GEMM_COMPUTE_SANITIZER compute-sanitizer "sanitize_stageNN targets")
gemm_report_tool(GEMM_NCU ncu "ncu_stageNN targets")
if(Python3_Interpreter_FOUND)
  message(STATUS "python3: ${Python3_EXECUTABLE} -> the plots, bench targets and the docs/ script tests")
else()
  message(STATUS "python3: not found -> no plots or bench targets, no docs/ script tests")
endif()

# Flags every GPU target of the project shares; `min_sm` (default 80, what common/ needs) picks the
# architectures it is compiled for.
function(gemm_cuda_target_defaults target)
  set(min_sm 80)
  if(ARGC GREATER 1)
    set(min_sm ${ARGV1})
  endif()
  gemm_architectures_at_least("${CMAKE_CUDA_ARCHITECTURES}" ${min_sm} archs)
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${archs}")
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo --expt-relaxed-constexpr -Xptxas=-warn-spills>
    # -Wno-restrict: GCC 12 warns falsely on std::string concatenation at -O3 (GCC bug 105329).
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-restrict>)
  target_include_directories(${target} PRIVATE "${PROJECT_SOURCE_DIR}")
endfunction()

# The protocol checker (common/protocol/checker.cuh, docs/protocol_checker.md) for a target whose kernels
# use the tcgen05 wrappers, or (the tests of) the mbarrier and TMA wrappers: on in the device passes
# without tcgen05, the Hopper passes, where tcgen05 is emulated (level 1). The checked build
# (GEMM_PROTOCOL_CHECKED) puts it in every pass of every target instead (level 2).
function(gemm_protocol_checked target)
  if(NOT GEMM_PROTOCOL_CHECKED)
    target_compile_definitions(${target} PRIVATE GEMM_PROTOCOL_CHECK=1)
  endif()
endfunction()

# Registers a GoogleTest binary with ctest, one ctest test per gtest test, labelled `label` and
# "gpu" (suites whose name contains Gpu) or "cpu". gtest_discover_tests cannot pass a list-valued
# LABELS through its PROPERTIES, so the labels are set by a small script ctest runs after discovery.
#
# GPU tests share one GPU, which time-slices between processes: a kernel of one process makes no
# progress while another's runs, so its wall-clock deadlines (common/deadline.h) can pass while it
# waits its turn. Each GPU test counts as `gpu_weight` processors (default 2), so `ctest -j 16` runs
# at most 16 / gpu_weight of them at once; the emulated tcgen05 tests (every thread of a pipeline
# spinning on barriers, under the protocol checker) pass 4. A GPU test that hangs fails after 600 s
# (ctest's default is 1500 s), which names it; the slowest take about a minute under ctest -j 16.
# `prefix` (optional, after gpu_weight) starts every ctest name: a second build of the same tests
# (gemm_sm100_paths_test) keeps its names apart from the first's.
function(gemm_discover_tests target label)
  set(gpu_weight 2)
  if(ARGC GREATER 2)
    set(gpu_weight ${ARGV2})
  endif()
  set(prefix "")
  if(ARGC GREATER 3)
    set(prefix "${ARGV3}")
  endif()
  gtest_discover_tests(${target} TEST_FILTER "*Gpu*" TEST_LIST ${target}_gpu_tests
    TEST_PREFIX "${prefix}" DISCOVERY_TIMEOUT 60 NO_PRETTY_VALUES)
  gtest_discover_tests(${target} TEST_FILTER "-*Gpu*" TEST_LIST ${target}_cpu_tests
    TEST_PREFIX "${prefix}" DISCOVERY_TIMEOUT 60 NO_PRETTY_VALUES)
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake")
  file(WRITE "${script}"
    "foreach(kind gpu cpu)\n"
    "  if(${target}_\${kind}_tests)\n"
    "    set_tests_properties(\${${target}_\${kind}_tests} PROPERTIES LABELS \"${label};\${kind}\")\n"
    "  endif()\n"
    "endforeach()\n"
    "if(${target}_gpu_tests)\n"
    "  set_tests_properties(\${${target}_gpu_tests} PROPERTIES PROCESSORS ${gpu_weight} TIMEOUT 600)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
endfunction()

# The unit that declares a program's needs (common/program_needs.cu), one object library per MIN_SM.
function(gemm_program_needs_library min_sm out)
  set(lib gemm_needs_sm${min_sm})
  if(NOT TARGET ${lib})
    gemm_architectures_at_least("${CMAKE_CUDA_ARCHITECTURES}" ${min_sm} archs)
    add_library(${lib} OBJECT "${PROJECT_SOURCE_DIR}/common/program_needs.cu")
    target_link_libraries(${lib} PRIVATE gemm_common)
    list(JOIN archs ", " archs_text)
    target_compile_definitions(${lib} PRIVATE GEMM_PROGRAM_MIN_SM=${min_sm} GEMM_PROGRAM_ARCHITECTURES="${archs_text}")
    gemm_cuda_target_defaults(${lib} ${min_sm})
  endif()
  set(${out} ${lib} PARENT_SCOPE)
endfunction()

# gemm_sm100_paths_test(target label source...): the precondition build of a test program
# (common/ptx/arch.cuh, docs/emulator.md), its sources compiled for Hopper alone with GEMM_SM100_PATHS_ON_HOPPER=1, so that its Hopper code takes every
# sm_100a-only path outside tcgen05 (the E2M1 conversions, 256-bit loads, stage 09's 32-byte chunks)
# through Hopper instructions that trap, naming the rule, where a precondition of the sm_100a
# instruction fails. The GPU quantizer (common/nvfp4_quant_gpu.cu) is compiled into it the same way,
# in place of gemm_common's. Its ctest names start with "sm100_paths." and carry the label
# sm100_paths besides `label`; on a GPU other than Hopper (the B200 included: it runs the real
# instructions in the other builds) its GPU tests skip. Without sm_90a among the architectures there
# is no such target.
function(gemm_sm100_paths_test target label)
  set(hopper "${CMAKE_CUDA_ARCHITECTURES}")
  list(FILTER hopper INCLUDE REGEX "^90a")
  if(NOT hopper)
    return()
  endif()
  set(hopper 90a-real)
  if(NOT TARGET gemm_needs_sm100_paths)  # what these programs need: their code loads on Hopper alone
    add_library(gemm_needs_sm100_paths OBJECT "${PROJECT_SOURCE_DIR}/common/program_needs.cu")
    target_link_libraries(gemm_needs_sm100_paths PRIVATE gemm_common)
    target_compile_definitions(gemm_needs_sm100_paths PRIVATE GEMM_PROGRAM_MIN_SM=90
      GEMM_PROGRAM_ARCHITECTURES="${hopper} alone, the precondition build")
    gemm_cuda_target_defaults(gemm_needs_sm100_paths 90)
    set_target_properties(gemm_needs_sm100_paths PROPERTIES CUDA_ARCHITECTURES ${hopper})
  endif()
  add_executable(${target} ${ARGN} "${PROJECT_SOURCE_DIR}/common/nvfp4_quant_gpu.cu")
  target_link_libraries(${target} PRIVATE gemm_testing gemm_needs_sm100_paths)
  target_compile_definitions(${target} PRIVATE GEMM_SM100_PATHS_ON_HOPPER=1)
  gemm_cuda_target_defaults(${target} 90)
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES ${hopper})
  gemm_discover_tests(${target} "${label};sm100_paths" 2 "sm100_paths.")
endfunction()

function(add_gemm_stage folder)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "MIN_SM;BASE" "STEPS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "add_gemm_stage(${folder}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  set(min_sm 90)
  if(DEFINED arg_MIN_SM)
    set(min_sm ${arg_MIN_SM})
  endif()
  if(NOT min_sm MATCHES "^[0-9]+$" OR min_sm LESS 80)
    message(FATAL_ERROR "add_gemm_stage(${folder}): MIN_SM must be a compute capability x 10, at least 80 (got ${min_sm})")
  endif()
  gemm_architectures_at_least("${CMAKE_CUDA_ARCHITECTURES}" ${min_sm} stage_archs)
  if(NOT stage_archs)
    message(STATUS "${folder}: not built: it needs compute capability ${min_sm} or newer, and "
                   "CMAKE_CUDA_ARCHITECTURES (${CMAKE_CUDA_ARCHITECTURES}) has no such entry")
    set_property(GLOBAL APPEND PROPERTY GEMM_STAGES_NOT_BUILT "${folder}")
    return()
  endif()
  gemm_program_needs_library(${min_sm} needs)
  if(NOT arg_STEPS)
    set(arg_STEPS kernel)
  endif()
  string(SUBSTRING "${folder}" 0 2 nn)
  set(src "${CMAKE_CURRENT_SOURCE_DIR}/${folder}")
  set(stage "stage${nn}")
  get_property(previous GLOBAL PROPERTY GEMM_STAGES)
  list(LENGTH previous n_previous)
  # The base ("predecessor" in the code and the benchmark JSON): BASE, else the stage added last.
  set(predecessor "")
  if(arg_BASE)
    if(NOT arg_BASE IN_LIST previous)
      message(FATAL_ERROR "add_gemm_stage(${folder} BASE ${arg_BASE}): ${arg_BASE} is not a stage added before it")
    endif()
    set(predecessor "${arg_BASE}")
  elseif(n_previous GREATER 0)
    list(GET previous -1 predecessor)
  endif()

  # The registration units: each step's kernel file compiled once, announced to common/registry.h.
  set(reg_sources "")        # kernel.cuh's: the stage itself
  set(step_reg_sources "")   # the other steps'
  foreach(step IN LISTS arg_STEPS)
    if(step STREQUAL "kernel")
      set(ns "${stage}")
    else()
      string(REGEX REPLACE "^kernel_" "" suffix "${step}")
      set(ns "${stage}_${suffix}")
    endif()
    set(reg "${CMAKE_CURRENT_BINARY_DIR}/generated/${ns}_register.cu")
    file(WRITE "${reg}.in"
      "// Generated by add_gemm_stage(${folder}): makes ${ns} reachable through the registry.\n"
      "#include \"${step}.cuh\"\n"
      "static const gemm::StageRegistrar kRegister(${ns}::kStage);\n")
    configure_file("${reg}.in" "${reg}" COPYONLY)
    if(step STREQUAL "kernel")
      list(APPEND reg_sources "${reg}")
    else()
      list(APPEND step_reg_sources "${reg}")
    endif()
  endforeach()
  # stageNN_kernel (the stage itself: what later stages time as their base) and stageNN_steps (its other
  # steps, which its own benchmark times as variants). Apart, because a program that includes
  # kernel.cuh must not link kernel.cuh's unit too: a kernel defined in a header without a template
  # (stage 00's) would be defined twice.
  set(kernel_libs ${stage}_kernel)
  add_library(${stage}_kernel OBJECT ${reg_sources})
  if(step_reg_sources)
    add_library(${stage}_steps OBJECT ${step_reg_sources})
    list(APPEND kernel_libs ${stage}_steps)
  endif()
  foreach(lib IN LISTS kernel_libs)
    target_include_directories(${lib} PRIVATE "${src}")
    target_link_libraries(${lib} PRIVATE gemm_common)
    gemm_cuda_target_defaults(${lib} ${min_sm})
  endforeach()

  set(stage_defs GEMM_STAGE_ID="${folder}" GEMM_PREDECESSOR_ID="${predecessor}")
  # A stage whose kernels use the tcgen05 wrappers runs under the emulator on Hopper, and under the
  # protocol checker there. One whose kernels use the mbarrier or TMA wrappers without tcgen05 (stage
  # 04) runs natively on Hopper: its tests run under the checker there too.
  file(STRINGS "${src}/kernel.cuh" uses_tcgen05 REGEX "common/ptx/tcgen05.cuh")
  file(STRINGS "${src}/kernel.cuh" uses_mbarriers REGEX "common/ptx/(mbarrier|tma).cuh")

  add_executable(${stage} "${src}/main.cu")
  target_link_libraries(${stage} PRIVATE gemm_common ${needs})
  if(arg_BASE)  # a program that names its base times it too (through the registry)
    string(SUBSTRING "${predecessor}" 0 2 bnn)
    target_link_libraries(${stage} PRIVATE stage${bnn}_kernel)
  endif()
  target_compile_definitions(${stage} PRIVATE ${stage_defs})
  gemm_cuda_target_defaults(${stage} ${min_sm})

  add_executable(test_${stage} "${src}/test.cu")
  target_link_libraries(test_${stage} PRIVATE gemm_testing ${needs})
  target_compile_definitions(test_${stage} PRIVATE ${stage_defs})
  gemm_cuda_target_defaults(test_${stage} ${min_sm})
  # GPU tests live in suites whose name contains "Gpu"; they GTEST_SKIP without a usable GPU, and
  # ctest shows them as skipped (never as passed).
  if(uses_tcgen05)
    gemm_discover_tests(test_${stage} ${stage} 4)
  else()
    gemm_discover_tests(test_${stage} ${stage})
  endif()

  # Compile twins: code that must not compile, kept in test.cu under `#ifdef GEMM_COMPILE_TWIN_<name>`
  # (the tests under its #else), announced by a line `// compile twin <name> fails with "<message>"`.
  # ctest stageNN_twin_<name> runs the CUDA front end alone (nvcc -cuda: no code is generated) on test.cu
  # with the macro defined, and passes only if the compiler's output holds the message (a static_assert's).
  file(STRINGS "${src}/test.cu" twins REGEX "^// compile twin [A-Za-z0-9_]+ fails with \".+\"$")
  list(GET stage_archs 0 twin_arch)
  string(REGEX REPLACE "-(real|virtual)$" "" twin_arch "${twin_arch}")
  foreach(line IN LISTS twins)
    string(REGEX MATCH "^// compile twin ([A-Za-z0-9_]+) fails with \"(.+)\"$" _ "${line}")
    set(twin "${CMAKE_MATCH_1}")
    add_test(NAME ${stage}_twin_${twin}
      COMMAND ${CMAKE_CUDA_COMPILER} -cuda -std=c++${CMAKE_CUDA_STANDARD} -arch=sm_${twin_arch} --expt-relaxed-constexpr
              -I${PROJECT_SOURCE_DIR} -I${src} -DGEMM_COMPILE_TWIN_${twin}
              "${src}/test.cu" -o "${CMAKE_CURRENT_BINARY_DIR}/${stage}_twin_${twin}.ii")
    set_tests_properties(${stage}_twin_${twin} PROPERTIES LABELS "${stage};cpu" PASS_REGULAR_EXPRESSION "${CMAKE_MATCH_2}")
  endforeach()

  # A stage whose kernels take sm_100a-only paths outside tcgen05 (the E2M1 conversions of
  # common/nvfp4_device.cuh, the 256-bit loads of common/ptx/ld.cuh) also runs its tests through them
  # on Hopper, with their preconditions checked. The tcgen05 stages' such paths are the emulator's.
  file(STRINGS "${src}/kernel.cuh" uses_sm100_paths REGEX "common/(nvfp4_device|ptx/ld|ptx/cvt)[.]cuh")
  if(uses_sm100_paths AND NOT uses_tcgen05)
    gemm_sm100_paths_test(test_${stage}_sm100_paths ${stage} "${src}/test.cu")
    if(TARGET test_${stage}_sm100_paths)
      target_compile_definitions(test_${stage}_sm100_paths PRIVATE ${stage_defs})
      if(uses_mbarriers)
        gemm_protocol_checked(test_${stage}_sm100_paths)
      endif()
    endif()
  endif()

  add_executable(bench_${stage} "${src}/bench.cu")
  target_link_libraries(bench_${stage} PRIVATE gemm_benchmarking ${needs})
  # The stage's other steps: timed as variants through the registry (gemm::bench::registered_variant),
  # without bench.cu compiling their kernels again.
  if(TARGET ${stage}_steps)
    target_link_libraries(bench_${stage} PRIVATE ${stage}_steps)
  endif()
  if(predecessor)
    string(SUBSTRING "${predecessor}" 0 2 pnn)
    target_link_libraries(bench_${stage} PRIVATE stage${pnn}_kernel)
  endif()
  target_compile_definitions(bench_${stage} PRIVATE ${stage_defs})
  gemm_cuda_target_defaults(bench_${stage} ${min_sm})

  if(uses_tcgen05)
    foreach(t ${kernel_libs} ${stage} test_${stage} bench_${stage})
      gemm_protocol_checked(${t})
    endforeach()
  elseif(uses_mbarriers)
    # The tests only: on Hopper this stage's program and benchmark times are performance (the tcgen05
    # stages' are the emulator's, which the checker may slow), and its registration unit is what the
    # next stage's benchmark times it through. The sm_100a code of the tests stays unchecked, as the
    # tcgen05 stages' does (level 1, common/ptx/arch.cuh): a B200 runs the checked build for that.
    gemm_protocol_checked(test_${stage})
  endif()

  add_custom_target(run_bench_${stage}
    COMMAND ${CMAKE_COMMAND} -E make_directory "${GEMM_RESULTS_DIR}"
    COMMAND bench_${stage} --benchmark_out=${GEMM_RESULTS_DIR}/${folder}.json --benchmark_out_format=json
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" USES_TERMINAL
    COMMENT "Benchmarking ${folder} -> ${GEMM_RESULTS_DIR}/${folder}.json")

  if(GEMM_COMPUTE_SANITIZER)
    set(san_cmds "")
    foreach(tool memcheck racecheck synccheck)
      # Death tests are left out: their kernels trap on purpose. The deadline of bounded waits is set
      # explicitly (common/deadline.h scales it under the sanitizer too; this makes it certain).
      list(APPEND san_cmds COMMAND ${CMAKE_COMMAND} -E env GEMM_WAIT_TIMEOUT_S=1200
           ${GEMM_COMPUTE_SANITIZER} --tool ${tool} --error-exitcode 1
           $<TARGET_FILE:test_${stage}> --gtest_filter=*Gpu*:-*DeathTest*)
    endforeach()
    add_custom_target(sanitize_${stage} ${san_cmds} DEPENDS test_${stage} USES_TERMINAL
      COMMENT "compute-sanitizer memcheck, racecheck and synccheck over the GPU tests of ${folder}")
  endif()
  if(GEMM_CUOBJDUMP)
    add_custom_target(sass_${stage}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/sass
      COMMAND ${GEMM_CUOBJDUMP} -sass $<TARGET_FILE:${stage}> > ${CMAKE_BINARY_DIR}/sass/${stage}.sass
      DEPENDS ${stage} COMMENT "SASS of ${stage} -> ${CMAKE_BINARY_DIR}/sass/${stage}.sass")
  endif()
  if(GEMM_NCU)
    add_custom_target(ncu_${stage}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/profiles
      COMMAND ${GEMM_NCU} --set full -f -o ${CMAKE_BINARY_DIR}/profiles/${stage} $<TARGET_FILE:${stage}>
      DEPENDS ${stage} USES_TERMINAL COMMENT "Nsight Compute profile of ${stage}")
  endif()

  set_property(GLOBAL APPEND PROPERTY GEMM_STAGES "${folder}")
endfunction()

# After the last add_gemm_stage(): the tutorial runner and the benchmark/plot pipeline.
function(gemm_finish_stages)
  get_property(stages GLOBAL PROPERTY GEMM_STAGES)
  set(programs "")
  set(program_targets "")
  foreach(folder IN LISTS stages)
    string(SUBSTRING "${folder}" 0 2 nn)
    list(APPEND programs $<TARGET_FILE:stage${nn}>)
    list(APPEND program_targets stage${nn})
  endforeach()

  add_custom_target(tutorial
    COMMAND tutorial_runner ${programs}
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" USES_TERMINAL
    COMMENT "Running every stage program in order")
  add_dependencies(tutorial ${program_targets})

  # Every stage program, over a table of bad arguments (common/test/bad_arguments.cmake).
  foreach(folder IN LISTS stages)
    string(SUBSTRING "${folder}" 0 2 nn)
    add_test(NAME stage${nn}_bad_arguments
      COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:stage${nn}>
              -DWORK_DIR=${CMAKE_BINARY_DIR}/bad_arguments/stage${nn}
              -P ${PROJECT_SOURCE_DIR}/common/test/bad_arguments.cmake)
    # No GPU visible: what is tested happens before any GPU work, and stages 05-07 ask for the GPU
    # before parsing (their defaults shrink where tcgen05 is emulated), which costs a CUDA context
    # per bad argument list on a GPU machine.
    set_tests_properties(stage${nn}_bad_arguments PROPERTIES LABELS "stage${nn};cpu" ENVIRONMENT "CUDA_VISIBLE_DEVICES=")
  endforeach()

  # The configure checks' messages, without a second toolkit (common/toolchain.cmake, script mode).
  add_test(NAME toolkit_too_old
    COMMAND ${CMAKE_COMMAND} -DGEMM_CHECK_CUDA_VERSION=12.8 -P ${PROJECT_SOURCE_DIR}/common/toolchain.cmake)
  set_tests_properties(toolkit_too_old PROPERTIES LABELS "common;cpu"
    PASS_REGULAR_EXPRESSION "needs CUDA >= 12\\.9, but found nvcc 12\\.8.*PTX ISA 8\\.8")
  add_test(NAME toolkit_new_enough
    COMMAND ${CMAKE_COMMAND} -DGEMM_CHECK_CUDA_VERSION=12.9 -P ${PROJECT_SOURCE_DIR}/common/toolchain.cmake)
  set_tests_properties(toolkit_new_enough PROPERTIES LABELS "common;cpu" PASS_REGULAR_EXPRESSION "CUDA 12\\.9 accepted")
  add_test(NAME architectures_per_stage
    COMMAND ${CMAKE_COMMAND} -DGEMM_CHECK_ARCHITECTURES=86-real,80-virtual,90a-real,100a-real
            -DGEMM_CHECK_MIN_SM=90 -P ${PROJECT_SOURCE_DIR}/common/toolchain.cmake)
  set_tests_properties(architectures_per_stage PROPERTIES LABELS "common;cpu"
    PASS_REGULAR_EXPRESSION "at least sm_90: \\[90a-real,100a-real\\]")
  add_test(NAME architectures_rejected
    COMMAND ${CMAKE_COMMAND} -DGEMM_CHECK_ARCHITECTURES=native -DGEMM_CHECK_MIN_SM=80
            -P ${PROJECT_SOURCE_DIR}/common/toolchain.cmake)
  set_tests_properties(architectures_rejected PROPERTIES LABELS "common;cpu"
    PASS_REGULAR_EXPRESSION "'native' is not of the form")

  # `check`: every test, then one line "N passed, M skipped (why), F failed" (the test workflow).
  add_executable(test_runner ${PROJECT_SOURCE_DIR}/common/test_runner.cpp)
  add_custom_target(check
    COMMAND test_runner ${CMAKE_CTEST_COMMAND} ${CMAKE_BINARY_DIR}
    USES_TERMINAL COMMENT "Running every test")

  # `bench` runs every stage's benchmark, one after the other (concurrent runs would disturb each
  # other's timings), then redraws the plots.
  set(bench_cmds COMMAND ${CMAKE_COMMAND} -E make_directory "${GEMM_RESULTS_DIR}")
  foreach(folder IN LISTS stages)
    string(SUBSTRING "${folder}" 0 2 nn)
    list(APPEND bench_cmds COMMAND bench_stage${nn}
         --benchmark_out=${GEMM_RESULTS_DIR}/${folder}.json --benchmark_out_format=json)
  endforeach()
  if(GEMM_RESULTS_ARE_DOCS)
    set(plot_args "")
    set(plot_what "docs/data/*.json -> docs/plots/*.svg and the READMEs' result tables")
  else()
    set(plot_args --results "${GEMM_RESULTS_DIR}" --out "${GEMM_RESULTS_DIR}/plots")
    set(plot_what "${GEMM_RESULTS_DIR}/*.json beside docs/data -> ${GEMM_RESULTS_DIR}/plots")
  endif()
  if(Python3_Interpreter_FOUND)
    add_custom_target(plots
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/plot.py ${plot_args}
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" USES_TERMINAL
      COMMENT "${plot_what}")
    add_custom_target(bench ${bench_cmds}
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/plot.py ${plot_args}
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" USES_TERMINAL
      COMMENT "Benchmarking every stage into ${GEMM_RESULTS_DIR}, then plotting")
    add_test(NAME plot_script
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/plot.py --check
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    set_tests_properties(plot_script PROPERTIES LABELS "docs;cpu" SKIP_RETURN_CODE 77)
    # --check must notice a changed number in docs/data: a copy of the tree with one number tripled.
    add_test(NAME plot_check_catches_changed_data
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/test_plot_check.py
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    set_tests_properties(plot_check_catches_changed_data PROPERTIES LABELS "docs;cpu" SKIP_RETURN_CODE 77)
    add_test(NAME b200_model
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/b200_model.py --check
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    set_tests_properties(b200_model PROPERTIES LABELS "docs;cpu" SKIP_RETURN_CODE 77)
    add_test(NAME b200_model_group
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/b200_model_group.py --check
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    set_tests_properties(b200_model_group PROPERTIES LABELS "docs;cpu")
    add_test(NAME b200_model_mxfp8
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/b200_model_mxfp8.py --check
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    set_tests_properties(b200_model_mxfp8 PROPERTIES LABELS "docs;cpu")
    add_test(NAME b200_model_svdquant
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/b200_model_svdquant.py --check
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    set_tests_properties(b200_model_svdquant PROPERTIES LABELS "docs;cpu")
    add_test(NAME sass_report_script COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/test_sass_report.py
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    set_tests_properties(sass_report_script PROPERTIES LABELS "docs;cpu")
    add_test(NAME timeline_script COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/timeline.py --check
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    set_tests_properties(timeline_script PROPERTIES LABELS "docs;cpu" SKIP_RETURN_CODE 77)
    add_test(NAME tile_order_script COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/tile_order.py --check
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    set_tests_properties(tile_order_script PROPERTIES LABELS "docs;cpu" SKIP_RETURN_CODE 77)
    add_test(NAME stage_diff_script COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/test_stage_diff.py
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    set_tests_properties(stage_diff_script PROPERTIES LABELS "docs;cpu")
    # docs/stage_diffs.md is generated: this fails when a kernel file changed and the table did not.
    add_test(NAME stage_diff_table
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/stage_diff.py --table
              --check ${PROJECT_SOURCE_DIR}/docs/stage_diffs.md
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    set_tests_properties(stage_diff_table PROPERTIES LABELS "docs;cpu")
    add_test(NAME pipeline_diagram_script
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/pipeline_diagram.py --check
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    set_tests_properties(pipeline_diagram_script PROPERTIES LABELS "docs;cpu")
  endif()
endfunction()
