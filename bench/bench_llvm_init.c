/* What registering LLVM's targets costs a process, once: those of
 * targets/arch/, as the backend does it, against every target this LLVM
 * was built with. One registration per process: run it several times, e.g.
 *   for i in 1 2 3 4 5 6 7; do bench_llvm_init all; bench_llvm_init table; done */
#include <llvm-c/Target.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bench_timer.h"
#include "qgen_target_rows.h"

int main(int argc, char **argv) {
    const bool all = argc > 1 && strcmp(argv[1], "all") == 0;
    const double t0 = bench_now();
    if (all) {
        LLVMInitializeAllTargetInfos();
        LLVMInitializeAllTargets();
        LLVMInitializeAllTargetMCs();
        LLVMInitializeAllAsmPrinters();
    } else {
        QG_LLVM_REGISTER_TARGETS();
    }
    printf("%s %.3f ms\n", all ? "all" : "table", 1e3 * (bench_now() - t0));
    return 0;
}
