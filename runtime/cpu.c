/* Which ISAs this CPU (and its OS) can run: each ISA's features as its
 * architecture asks for them (targets/<isa>.json "features", arch
 * "cpu_has_form": the compiler's CPU model on x86, which counts what the OS
 * saves too; the auxiliary vector's HWCAP on aarch64 and riscv64), through
 * the generated qg_isa_facts.h. */
#include <stdatomic.h>

#include "qg_isa_facts.h"
#include "qgen/runtime.h"
#include "rt_internal.h"

/* Asked once per ISA: cpuid traps to the hypervisor on a virtual machine
 * (microseconds), and the runtime asks on calls that are themselves short.
 * Racing first calls store the same answer. */
bool qg_cpu_has(qg_isa isa) {
    static atomic_schar known[QG_ISA_COUNT]; /* 0: not asked yet, 1: no, 2: yes */
    if ((unsigned)isa >= QG_ISA_COUNT)
        return false;
    signed char k = atomic_load_explicit(&known[isa], memory_order_relaxed);
    if (k == 0) {
        k = QG_CPU_HAS(isa) ? 2 : 1;
        atomic_store_explicit(&known[isa], k, memory_order_relaxed);
    }
    return k == 2;
}
