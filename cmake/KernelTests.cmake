# The kernel tests (tests/kernels) are a project of their own, built once
# natively and, with QGEN_CROSS_TESTS, once per cross toolchain; each build
# runs as one test here whose output lists every spec and ISA.
include(ExternalProject)

set(kt_common
    -DQGEN_EXECUTABLE=$<TARGET_FILE:qgen_cli>
    -DQGEN_SOURCE_DIR=${PROJECT_SOURCE_DIR}
    -DXXHASH_HEADER=${XXHASH_INCLUDE_DIR}/xxhash.h
    -DCMAKE_BUILD_TYPE=Release)
set(kt_native_flags "")
if(QGEN_SANITIZE)
  set(kt_native_flags "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer")
endif()

set(kt_builds native)
if(QGEN_CROSS_TESTS)
  list(APPEND kt_builds aarch64 aarch64-gcc riscv64)
endif()

foreach(kt ${kt_builds})
  if(kt STREQUAL "native")
    set(kt_args -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER} "-DCMAKE_C_FLAGS=${kt_native_flags}")
  else()
    set(kt_args -DCMAKE_TOOLCHAIN_FILE=${PROJECT_SOURCE_DIR}/targets/toolchains/${kt}.cmake)
  endif()
  set(kt_dir ${CMAKE_BINARY_DIR}/kernel-tests/${kt})
  ExternalProject_Add(kernel_tests_${kt}
    SOURCE_DIR ${PROJECT_SOURCE_DIR}/tests/kernels
    BINARY_DIR ${kt_dir}
    CMAKE_ARGS ${kt_common} ${kt_args}
    BUILD_ALWAYS ON
    INSTALL_COMMAND ""
    DEPENDS qgen_cli)
  add_test(NAME kernels.${kt} COMMAND sh ${PROJECT_SOURCE_DIR}/cmake/run_subtests.sh ${CMAKE_CTEST_COMMAND} ${kt_dir})
  set_tests_properties(kernels.${kt} PROPERTIES TIMEOUT 2400 SKIP_RETURN_CODE 77)
endforeach()
