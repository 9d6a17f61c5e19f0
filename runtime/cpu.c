/* Which ISAs this CPU (and its OS) can run: cpuid and xgetbv on x86, the
 * auxiliary vector's HWCAP on aarch64 and riscv64. */
#include <stdatomic.h>

#include "qgen/runtime.h"
#include "rt_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static unsigned long long xgetbv0(void) {
    unsigned int lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

/* AVX usable: the CPU has it and the OS saves SSE and AVX state; leaf 1's
 * ecx in *ecx1. */
static bool x86_avx_usable(unsigned *ecx1) {
    unsigned int a, b, d;
    if (!__get_cpuid(1, &a, &b, ecx1, &d))
        return false;
    const bool osxsave = *ecx1 & (1u << 27), avx = *ecx1 & (1u << 28);
    return osxsave && avx && (xgetbv0() & 0x6) == 0x6;
}

static bool x86_has(qg_isa isa) {
    unsigned int a, b, c, d;
    if (!x86_avx_usable(&c))
        return false;
    const bool f16c = c & (1u << 29); /* 16-bit float tensors convert in the kernels */
    const unsigned long long xcr0 = xgetbv0();
    if (__get_cpuid_max(0, NULL) < 7)
        return false;
    __cpuid_count(7, 0, a, b, c, d);
    const bool avx2 = b & (1u << 5), bmi2 = b & (1u << 8);
    if (isa == QG_ISA_AVX2)
        return avx2 && bmi2 && f16c;
    /* AVX-512 F, DQ, BW, VL, and the OS saving opmask and ZMM state */
    const bool f = b & (1u << 16), dq = b & (1u << 17), bw = b & (1u << 30), vl = b & (1u << 31);
    return isa == QG_ISA_AVX512 && f && dq && bw && vl && (xcr0 & 0xE0) == 0xE0;
}
#elif defined(__aarch64__) || defined(__riscv)
#include <sys/auxv.h>
#endif

static bool cpu_has(qg_isa isa) {
    if (isa == QG_ISA_SCALAR)
        return true;
#if defined(__x86_64__) || defined(__i386__)
    return x86_has(isa);
#elif defined(__aarch64__)
    const unsigned long hwcap = getauxval(AT_HWCAP);
    if (isa == QG_ISA_NEON)
        return hwcap & (1ul << 1);                     /* HWCAP_ASIMD */
    return isa == QG_ISA_SVE && (hwcap & (1ul << 22)); /* HWCAP_SVE */
#elif defined(__riscv)
    return isa == QG_ISA_RVV && (getauxval(AT_HWCAP) & (1u << ('V' - 'A')));
#else
    return false;
#endif
}

/* Asked once per ISA: cpuid traps to the hypervisor on a virtual machine
 * (microseconds), and the runtime asks on calls that are themselves short.
 * Racing first calls store the same answer. */
bool qg_cpu_has(qg_isa isa) {
    static atomic_schar known[QG_ISA_COUNT]; /* 0: not asked yet, 1: no, 2: yes */
    if ((unsigned)isa >= QG_ISA_COUNT)
        return false;
    signed char k = atomic_load_explicit(&known[isa], memory_order_relaxed);
    if (k == 0) {
        k = cpu_has(isa) ? 2 : 1;
        atomic_store_explicit(&known[isa], k, memory_order_relaxed);
    }
    return k == 2;
}
