/* What registering LLVM's targets costs a process, once, as the backend
 * does it (every target this LLVM was built with) against the four
 * architectures targets/arch/ names. One registration per process: run it
 * several times, e.g.
 *   for i in 1 2 3 4 5 6 7; do bench_llvm_init all; bench_llvm_init four; done */
#include <llvm-c/Target.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bench_timer.h"

int main(int argc, char **argv) {
    const bool all = argc > 1 && strcmp(argv[1], "all") == 0;
    const double t0 = bench_now();
    if (all) {
        LLVMInitializeAllTargetInfos();
        LLVMInitializeAllTargets();
        LLVMInitializeAllTargetMCs();
        LLVMInitializeAllAsmPrinters();
    } else {
        LLVMInitializeX86TargetInfo();
        LLVMInitializeX86Target();
        LLVMInitializeX86TargetMC();
        LLVMInitializeX86AsmPrinter();
        LLVMInitializeAArch64TargetInfo();
        LLVMInitializeAArch64Target();
        LLVMInitializeAArch64TargetMC();
        LLVMInitializeAArch64AsmPrinter();
        LLVMInitializeRISCVTargetInfo();
        LLVMInitializeRISCVTarget();
        LLVMInitializeRISCVTargetMC();
        LLVMInitializeRISCVAsmPrinter();
        LLVMInitializeWebAssemblyTargetInfo();
        LLVMInitializeWebAssemblyTarget();
        LLVMInitializeWebAssemblyTargetMC();
        LLVMInitializeWebAssemblyAsmPrinter();
    }
    printf("%s %.3f ms\n", all ? "all" : "four", 1e3 * (bench_now() - t0));
    return 0;
}
