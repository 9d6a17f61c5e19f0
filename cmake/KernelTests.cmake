# The kernel tests (tests/kernels) are a project of their own, built once
# natively and, with QGEN_CROSS_TESTS, once per cross toolchain. Each
# build's tests join this build's ctest run by name (kernels.<build>.<spec>
# .<backend>.<isa>[.vl<bits>]), so that `ctest -j` spreads them over the
# cores; every one writes its line of the coverage manifest, which
# kernels.manifest compares with the committed one (docs/testing.md).
include(ExternalProject)

set(kt_manifest_dir ${CMAKE_BINARY_DIR}/kernel-manifest)
set(kt_common
    -DQGEN_EXECUTABLE=$<TARGET_FILE:qgen_cli>
    -DQGEN_SOURCE_DIR=${PROJECT_SOURCE_DIR}
    -DXXHASH_HEADER=${XXHASH_INCLUDE_DIR}/xxhash.h
    -DKT_MANIFEST_DIR=${kt_manifest_dir}
    -DCMAKE_BUILD_TYPE=Release)
set(kt_native_flags "")
if(QGEN_SANITIZE)
  set(kt_native_flags "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer")
endif()

set(kt_builds native)
if(QGEN_CROSS_TESTS) # one build per cross toolchain of targets/toolchains/
  file(GLOB kt_toolchains RELATIVE ${PROJECT_SOURCE_DIR}/targets/toolchains ${PROJECT_SOURCE_DIR}/targets/toolchains/*.cmake)
  list(SORT kt_toolchains)
  foreach(tc ${kt_toolchains})
    string(REGEX REPLACE "[.]cmake$" "" tc "${tc}")
    list(APPEND kt_builds ${tc})
  endforeach()
endif()

set(kt_include ${CMAKE_BINARY_DIR}/kernel-tests/tests.cmake)
file(WRITE ${kt_include} "# the kernel-test builds' tests, read by ctest (cmake/KernelTests.cmake)\n")
foreach(kt ${kt_builds})
  if(kt STREQUAL "native")
    set(kt_args -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER} "-DCMAKE_C_FLAGS=${kt_native_flags}")
  else()
    set(kt_args -DCMAKE_TOOLCHAIN_FILE=${PROJECT_SOURCE_DIR}/targets/toolchains/${kt}.cmake)
  endif()
  # GCC builds the generated C a second way; the LLVM backend's objects are
  # the same bytes as in the clang build of that architecture.
  # Under the sanitizers only the C backend's kernels are instrumented; the
  # LLVM backend's objects are the ones the plain build checks.
  set(kt_backends "c|llvm") # | for ; (LIST_SEPARATOR)
  if(kt MATCHES "-gcc$" OR QGEN_SANITIZE)
    set(kt_backends c)
  endif()
  set(kt_dir ${CMAKE_BINARY_DIR}/kernel-tests/${kt})
  ExternalProject_Add(kernel_tests_${kt}
    SOURCE_DIR ${PROJECT_SOURCE_DIR}/tests/kernels
    BINARY_DIR ${kt_dir}
    CMAKE_ARGS ${kt_common} ${kt_args} "-DKT_BACKENDS=${kt_backends}" -DKT_TEST_PREFIX=kernels.${kt}
    LIST_SEPARATOR |
    BUILD_ALWAYS ON
    INSTALL_COMMAND ""
    DEPENDS qgen_cli)
  file(APPEND ${kt_include} "if(EXISTS \"${kt_dir}/CTestTestfile.cmake\")\n"
                            "  include(\"${kt_dir}/CTestTestfile.cmake\")\n"
                            "else()\n"
                            "  add_test(kernels.${kt}.not_built false)\n"
                            "endif()\n")
endforeach()
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY TEST_INCLUDE_FILES ${kt_include})

# The manifest: emptied before the kernel tests, compared after them with
# tests/kernels/coverage.txt line by line; `make test` compares both trees'
# lines with it in full (scripts/test.sh).
add_test(NAME kernels.manifest_reset COMMAND sh -c "rm -rf \"$0\" && mkdir -p \"$0\"" ${kt_manifest_dir})
set_tests_properties(kernels.manifest_reset PROPERTIES FIXTURES_SETUP kernel_manifest LABELS fast)
add_test(NAME kernels.manifest COMMAND sh ${PROJECT_SOURCE_DIR}/tests/kernels/check_manifest.sh
                                       ${PROJECT_SOURCE_DIR}/tests/kernels/coverage.txt ${kt_manifest_dir})
set_tests_properties(kernels.manifest PROPERTIES FIXTURES_CLEANUP kernel_manifest LABELS fast)
