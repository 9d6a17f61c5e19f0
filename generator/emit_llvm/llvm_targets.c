/* The target machine of each ISA, assembled from the ISA table
 * (targets/<isa>.json and targets/arch/<arch>.json). */
#include <pthread.h>
#include <string.h>

#include "../targets/target_table.h"
#include "emit_llvm.h"

#define MAX_ARCHS 8

static qg_llvm_target vector_targets[QG_ISA_COUNT];
static qg_llvm_target scalar_targets[MAX_ARCHS];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static qg_llvm_target from_arch(qg_isa isa, const qg_arch *a) {
    return (qg_llvm_target){isa, a->name, a->triple, a->llvm_cpu, a->llvm_features, a->llvm_abi, a->mca_cpus};
}

static void build(void) {
    for (qg_isa isa = QG_ISA_SCALAR + 1; isa < QG_ISA_COUNT; isa++) {
        const qg_target *t = qg_target_of(isa);
        const qg_arch *a = qg_arch_of(isa);
        if (!a)
            continue;
        vector_targets[isa] = from_arch(isa, a);
        vector_targets[isa].features = t->llvm_features;
        vector_targets[isa].mca_cpus = t->mca_cpus;
    }
    for (size_t i = 0; i < MAX_ARCHS && qg_arch_at(i); i++)
        scalar_targets[i] = from_arch(QG_ISA_SCALAR, qg_arch_at(i));
}

const char *qg_llvm_host_arch(void) { return qg_host_arch(); }

const qg_llvm_target *qg_llvm_target_of(qg_isa isa, const char *scalar_arch) {
    pthread_once(&once, build);
    if (isa == QG_ISA_SCALAR) {
        const char *arch = scalar_arch ? scalar_arch : qg_host_arch();
        for (size_t i = 0; i < MAX_ARCHS && scalar_targets[i].arch; i++)
            if (strcmp(scalar_targets[i].arch, arch) == 0)
                return &scalar_targets[i];
        return NULL;
    }
    return (unsigned)isa < QG_ISA_COUNT && vector_targets[isa].triple ? &vector_targets[isa] : NULL;
}
