# Cross build for RISC-V 64 Linux with clang-19 and lld-19 (GCC 12 cannot
# compile RVV intrinsics) against Debian's cross libc. Everything builds for
# rv64gc; only RVV kernel files add -march=rv64gcv. Binaries run under
# qemu-riscv64 with V enabled (VLEN 128 here; tests pick other VLENs).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR riscv64)
set(CMAKE_C_COMPILER clang-19)
set(CMAKE_C_COMPILER_TARGET riscv64-linux-gnu)
set(CMAKE_C_FLAGS_INIT "-march=rv64gc")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-fuse-ld=lld")
set(CMAKE_FIND_ROOT_PATH /usr/riscv64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-riscv64 -L /usr/riscv64-linux-gnu
    -cpu rv64,v=true,vlen=128,vext_spec=v1.0,rvv_ta_all_1s=on,rvv_ma_all_1s=on)
