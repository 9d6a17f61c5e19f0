/* A generated dispatcher's choice among its ISAs' kernels: what QGEN_ISA
 * asks for, else the best this CPU runs (docs/c-backend.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qgen/runtime.h"

static const qg_dispatch_head *entry_at(const void *table, size_t stride, size_t i) {
    return (const qg_dispatch_head *)(const void *)((const char *)table + i * stride);
}

const void *qg_dispatch_pick(const void *table, size_t count, size_t stride, const char *spec) {
    const char *want = getenv("QGEN_ISA");
    const qg_dispatch_head *k = NULL;
    if (!table || stride < sizeof *k)
        count = 0;
    for (size_t i = 0; want && *want && i < count && !k; i++)
        if (strcmp(entry_at(table, stride, i)->isa, want) == 0)
            k = entry_at(table, stride, i);
    if (want && *want && !k)
        fprintf(stderr, "qgen: QGEN_ISA=%s: spec %s has no %s kernels for this architecture; choosing by CPU instead\n",
                want, spec ? spec : "(unnamed)", want);
    else if (k && !qg_cpu_has(k->id))
        fprintf(stderr, "qgen: QGEN_ISA=%s: this CPU does not report %s; running it as asked\n", want, want);
    for (size_t i = 0; i < count && !k; i++)
        if (qg_cpu_has(entry_at(table, stride, i)->id))
            k = entry_at(table, stride, i);
    return k;
}
