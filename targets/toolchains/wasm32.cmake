# Build for WebAssembly (wasm32-wasi) with clang-19 and wasm-ld-19 against
# Debian's wasi-libc, clang's wasm32 builtins from libclang-rt-19-dev-wasm32;
# programs run under node's WASI (scripts/wasi-run.mjs).
set(CMAKE_SYSTEM_NAME WASI)
set(CMAKE_SYSTEM_PROCESSOR wasm32)
set(CMAKE_C_COMPILER clang-19)
set(CMAKE_C_COMPILER_TARGET wasm32-wasi)
# clock() (the tests' timings) from the wall clock: WASI has no process clock
set(CMAKE_C_FLAGS_INIT "-D_WASI_EMULATED_PROCESS_CLOCKS")
set(CMAKE_C_STANDARD_LIBRARIES "-lwasi-emulated-process-clocks")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld -Wl,-z,stack-size=1048576")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# the runner beside this file in an installed package, else the source tree's
set(_qgen_wasi_run ${CMAKE_CURRENT_LIST_DIR}/wasi-run.mjs)
if(NOT EXISTS ${_qgen_wasi_run})
  set(_qgen_wasi_run ${CMAKE_CURRENT_LIST_DIR}/../../scripts/wasi-run.mjs)
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR node --no-warnings ${_qgen_wasi_run})
