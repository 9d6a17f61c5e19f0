# qgen_add_kernels(<target> SPEC file.json [NAME n] [TARGETS native|all|<isa>...]
#                  [BACKEND c|llvm] [OUTPUT_DIR dir])
#
# Generates a spec's kernels at build time with the host's qgen
# (QGen_EXECUTABLE) and adds them to <target>: NAME.h, NAME_dispatch.c and
# one file per ISA with its flags, the include directory, and QGen::runtime.
# The generator re-runs when the spec or qgen changes, and only then. See
# docs/cmake.md.

include("${CMAKE_CURRENT_LIST_DIR}/QGenIsaTable.cmake")
# The ISA table: share/qgen/targets of the installed package, or the
# source tree's targets/ when included from there.
if(NOT _qgen_targets_dir)
  foreach(dir "${CMAKE_CURRENT_LIST_DIR}/../../../share/qgen/targets" "${CMAKE_CURRENT_LIST_DIR}/../targets")
    if(EXISTS "${dir}/scalar.json")
      get_filename_component(_qgen_targets_dir "${dir}" ABSOLUTE)
      break()
    endif()
  endforeach()
endif()
qgen_read_targets("${_qgen_targets_dir}")

function(qgen_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 QAK "" "SPEC;NAME;BACKEND;OUTPUT_DIR" "TARGETS")
  set(where "qgen_add_kernels(${target})")
  if(QAK_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown arguments \"${QAK_UNPARSED_ARGUMENTS}\"; expected SPEC, NAME, TARGETS, "
                        "BACKEND, OUTPUT_DIR")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "${where}: no target named \"${target}\"; create it first (add_executable/add_library)")
  endif()
  if(NOT QAK_SPEC)
    message(FATAL_ERROR "${where}: SPEC is required (the spec's JSON file)")
  endif()
  if(NOT QGen_EXECUTABLE OR NOT EXISTS "${QGen_EXECUTABLE}")
    message(FATAL_ERROR "${where}: no host qgen (QGen_EXECUTABLE is \"${QGen_EXECUTABLE}\"); expected the path of "
                        "the qgen CLI that runs on this build machine")
  endif()
  get_filename_component(spec "${QAK_SPEC}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT QAK_BACKEND)
    set(QAK_BACKEND c)
  endif()
  if(NOT QAK_BACKEND MATCHES "^(c|llvm)$")
    message(FATAL_ERROR "${where}: BACKEND \"${QAK_BACKEND}\"; expected c or llvm")
  endif()

  # The spec, resolved by qgen itself: a bad spec stops here with qgen's
  # message, and CMake re-runs this when the spec changes.
  set(sets "")
  if(QAK_NAME)
    set(sets --set "name=${QAK_NAME}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${spec}")
  execute_process(COMMAND "${QGen_EXECUTABLE}" spec show "${spec}" ${sets}
                  OUTPUT_VARIABLE resolved ERROR_VARIABLE why RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(STRIP "${why}" why)
    message(FATAL_ERROR "${where}: SPEC ${spec} is not a valid qgen spec:\n${why}")
  endif()
  string(JSON name GET "${resolved}" name)
  string(JSON dtype GET "${resolved}" dtype)
  string(JSON qscheme GET "${resolved}" qscheme)

  # The ISAs.
  qgen_isas_of("${CMAKE_SYSTEM_PROCESSOR}" native)
  if(NOT QAK_TARGETS OR QAK_TARGETS STREQUAL "native")
    set(isas ${native})
  elseif(QAK_TARGETS STREQUAL "all")
    if(QAK_BACKEND STREQUAL "llvm")
      message(FATAL_ERROR "${where}: TARGETS all with BACKEND llvm: objects of another architecture cannot be "
                          "linked here; expected native or ISAs of ${CMAKE_SYSTEM_PROCESSOR} (${native})")
    endif()
    set(isas ${QGEN_ISAS})
  else()
    set(isas scalar)
    foreach(isa ${QAK_TARGETS})
      if(NOT isa IN_LIST QGEN_ISAS)
        list(JOIN QGEN_ISAS ", " known)
        message(FATAL_ERROR "${where}: TARGETS \"${isa}\"; expected native, all, or ISAs among ${known}")
      endif()
      if(QAK_BACKEND STREQUAL "llvm" AND NOT isa IN_LIST native)
        message(FATAL_ERROR "${where}: TARGETS ${isa} with BACKEND llvm on ${CMAKE_SYSTEM_PROCESSOR}: expected ISAs "
                            "of this architecture (${native})")
      endif()
      list(APPEND isas ${isa})
    endforeach()
    list(REMOVE_DUPLICATES isas)
  endif()
  # fp32 lanes cannot serve these: their kernels are scalar only
  if(dtype STREQUAL "qint32" OR qscheme STREQUAL "per_channel_affine_float_qparams")
    set(isas scalar)
  endif()
  list(JOIN isas "," isa_list)

  if(QAK_OUTPUT_DIR)
    get_filename_component(dir "${QAK_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  else()
    set(dir "${CMAKE_CURRENT_BINARY_DIR}/qgen/${name}")
  endif()
  set(emit "")
  set(suffix c)
  if(QAK_BACKEND STREQUAL "llvm")
    qgen_arch_of("${CMAKE_SYSTEM_PROCESSOR}" arch)
    set(emit --emit obj --scalar-arch ${arch})
    set(suffix o)
  endif()
  set(isa_files "")
  foreach(isa ${isas})
    list(APPEND isa_files "${dir}/${name}_${isa}.${suffix}")
  endforeach()
  add_custom_command(
    OUTPUT "${dir}/${name}.h" "${dir}/${name}_dispatch.c" ${isa_files}
    COMMAND "${QGen_EXECUTABLE}" generate --spec "${spec}" --targets ${isa_list} ${emit} ${sets} -o "${dir}"
    DEPENDS "${spec}" "${QGen_EXECUTABLE}"
    COMMENT "qgen: ${name} kernels (${isa_list}, ${QAK_BACKEND} backend)"
    VERBATIM)
  set_source_files_properties("${dir}/${name}_dispatch.c" PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
  foreach(isa ${isas})
    set(file "${dir}/${name}_${isa}.${suffix}")
    if(QAK_BACKEND STREQUAL "llvm")
      set_source_files_properties("${file}" PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    elseif(NOT QGEN_ISA_${isa}_gcc_target AND QGEN_ISA_${isa}_needs AND NOT CMAKE_C_COMPILER_ID MATCHES "Clang"
           AND "${isa}" IN_LIST native)
      message(FATAL_ERROR "${where}: ${isa} kernels need clang (the file's condition: ${QGEN_ISA_${isa}_needs}); "
                          "expected a clang toolchain, or BACKEND llvm")
    else()
      # no ISA flags: the file sets its own target (docs/c-backend.md)
      set_source_files_properties("${file}" PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
    endif()
  endforeach()
  target_sources(${target} PRIVATE "${dir}/${name}.h" "${dir}/${name}_dispatch.c" ${isa_files})
  target_include_directories(${target} PUBLIC "${dir}")
  target_link_libraries(${target} PUBLIC QGen::runtime)
endfunction()
