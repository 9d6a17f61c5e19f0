/* The target machine of each ISA. Kept in step with targets/<isa>.json
 * (a test compares them). */
#include <string.h>

#include "emit_llvm.h"

static const qg_llvm_target vector_targets[] = {
    {QG_ISA_AVX2, "x86_64", "x86_64-linux-gnu", "x86-64", "+avx2,+bmi2", "", "skylake,znver4"},
    {QG_ISA_AVX512, "x86_64", "x86_64-linux-gnu", "x86-64", "+avx512f,+avx512bw,+avx512vl,+avx512dq", "",
     "skylake-avx512,znver4"},
    {QG_ISA_NEON, "aarch64", "aarch64-linux-gnu", "generic", "+neon", "", "neoverse-n1"},
    {QG_ISA_RVV, "riscv64", "riscv64-linux-gnu", "generic-rv64", "+m,+a,+f,+d,+c,+v", "lp64d", "sifive-x280"},
};

/* Scalar code for each architecture, at the baseline the C backend's
 * scalar files are built for. */
static const qg_llvm_target scalar_targets[] = {
    {QG_ISA_SCALAR, "x86_64", "x86_64-linux-gnu", "x86-64", "", "", "skylake,znver4"},
    {QG_ISA_SCALAR, "aarch64", "aarch64-linux-gnu", "generic", "+neon", "", "neoverse-n1"},
    {QG_ISA_SCALAR, "riscv64", "riscv64-linux-gnu", "generic-rv64", "+m,+a,+f,+d,+c", "lp64d", "sifive-x280"},
};

const char *qg_llvm_host_arch(void) {
#if defined(__x86_64__)
    return "x86_64";
#elif defined(__aarch64__)
    return "aarch64";
#elif defined(__riscv) && __riscv_xlen == 64
    return "riscv64";
#else
    return "unknown";
#endif
}

const qg_llvm_target *qg_llvm_target_of(qg_isa isa, const char *scalar_arch) {
    if (isa == QG_ISA_SCALAR) {
        const char *arch = scalar_arch ? scalar_arch : qg_llvm_host_arch();
        for (size_t i = 0; i < sizeof scalar_targets / sizeof scalar_targets[0]; i++)
            if (strcmp(scalar_targets[i].arch, arch) == 0)
                return &scalar_targets[i];
        return NULL;
    }
    for (size_t i = 0; i < sizeof vector_targets / sizeof vector_targets[0]; i++)
        if (vector_targets[i].isa == isa)
            return &vector_targets[i];
    return NULL;
}
