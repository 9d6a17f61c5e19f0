# `cmake --install`: the qgen CLI, libqgen_rt (static and shared), libqgen,
# the public headers, the runtime's sources (for cross builds of consumers),
# QGenConfig.cmake with its version file and qgen_add_kernels(), qgen.pc and
# qgen-jit.pc.
include(CMakePackageConfigHelpers)
set(QGEN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/QGen)

install(TARGETS qgen_rt qgen_rt_shared EXPORT QGenTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(QGEN_WITH_GENERATOR)
  install(TARGETS qgen qgen_cli EXPORT QGenTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/qgen DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT QGenTargets NAMESPACE QGen:: DESTINATION ${QGEN_CMAKE_DIR})

file(GLOB toolchains CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/targets/toolchains/*.cmake)
install(FILES ${toolchains} DESTINATION ${CMAKE_INSTALL_DATADIR}/qgen/toolchains)
# node's runner of wasm32 programs, which the wasm32 toolchain names
install(FILES ${PROJECT_SOURCE_DIR}/scripts/wasi-run.mjs DESTINATION ${CMAKE_INSTALL_DATADIR}/qgen/toolchains)
# the ISA table, which qgen_add_kernels() reads
install(DIRECTORY ${PROJECT_SOURCE_DIR}/targets/ DESTINATION ${CMAKE_INSTALL_DATADIR}/qgen/targets
        FILES_MATCHING PATTERN "*.json")
# CONFIGURE_DEPENDS: a source or header added later reaches the install of an
# already configured tree too
file(GLOB runtime_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/runtime/*.c ${PROJECT_SOURCE_DIR}/runtime/*.h)
install(FILES ${runtime_sources} ${QGEN_RT_GENERATED_DIR}/qg_isa_facts.h DESTINATION ${CMAKE_INSTALL_DATADIR}/qgen/runtime-src)
install(FILES ${XXHASH_INCLUDE_DIR}/xxhash.h DESTINATION ${CMAKE_INSTALL_DATADIR}/qgen/runtime-src/xxhash)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/QGenConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/QGenConfig.cmake INSTALL_DESTINATION ${QGEN_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/QGenConfigVersion.cmake COMPATIBILITY SameMinorVersion)
# A cross build compiles the runtime from the sources the package ships and
# runs only the host's qgen (QGenConfig.cmake), so a 32-bit target (wasm32)
# takes the 64-bit package too.
file(APPEND ${PROJECT_BINARY_DIR}/QGenConfigVersion.cmake
     "\nif(CMAKE_CROSSCOMPILING AND PACKAGE_VERSION_UNSUITABLE)\n  set(PACKAGE_VERSION_UNSUITABLE FALSE)\nendif()\n")
install(FILES ${PROJECT_BINARY_DIR}/QGenConfig.cmake ${PROJECT_BINARY_DIR}/QGenConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/QGenAddKernels.cmake ${PROJECT_SOURCE_DIR}/cmake/QGenIsaTable.cmake
        DESTINATION ${QGEN_CMAKE_DIR})

file(RELATIVE_PATH QGEN_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" QGEN_PC_TO_PREFIX "${QGEN_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/qgen.pc.in ${PROJECT_BINARY_DIR}/qgen.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/qgen.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# qgen-jit.pc: libqgen.so (python/CMakeLists.txt) for JIT hosts without CMake
if(TARGET qgen_shared)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/qgen-jit.pc.in ${PROJECT_BINARY_DIR}/qgen-jit.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/qgen-jit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
