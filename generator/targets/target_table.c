/* The rows come from targets/ (cmake/QGenIsaTable.cmake writes them). */
#include "target_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qgen_target_rows.h"

static const qg_target targets[QG_ISA_COUNT] = {QG_TARGET_ROWS};
static const qg_arch archs[] = {QG_ARCH_ROWS};

const qg_target *qg_target_of(qg_isa isa) { return (unsigned)isa < QG_ISA_COUNT ? &targets[isa] : NULL; }

bool qg_target_lists(const char *list, const char *item) {
    const size_t n = strlen(item);
    for (const char *p = list; (p = strstr(p, item)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
            return true;
    return false;
}

bool qg_target_member(const char *field, const char *key, char *buf, size_t cap) {
    const size_t n = strlen(key);
    if (cap)
        buf[0] = 0;
    for (const char *p = field; *p;) {
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > n && strncmp(p, key, n) == 0 && p[n] == '=') {
            if (len - n - 1 >= cap)
                return false;
            memcpy(buf, p + n + 1, len - n - 1);
            buf[len - n - 1] = 0;
            return true;
        }
        if (!end)
            break;
        p = end + 1;
    }
    return false;
}

int qg_target_lmul(const qg_target *t, const char *op) {
    char v[8];
    return qg_target_member(t->lmul, op, v, sizeof v) ? atoi(v) : 1;
}

const qg_arch *qg_arch_at(size_t i) { return i < sizeof archs / sizeof archs[0] ? &archs[i] : NULL; }

const qg_arch *qg_arch_named(const char *name) {
    for (size_t i = 0; name && i < sizeof archs / sizeof archs[0]; i++)
        if (strcmp(archs[i].name, name) == 0)
            return &archs[i];
    return NULL;
}

const qg_arch *qg_arch_of(qg_isa isa) {
    const qg_target *t = qg_target_of(isa);
    return t ? qg_arch_named(t->arch) : NULL;
}

const char *qg_host_arch(void) {
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

void qg_target_qemu_cpu(const qg_target *t, int bits, char *out, size_t cap) {
    size_t n = 0;
    for (const char *p = t->qemu_cpu; *p && n + 1 < cap;) {
        const char *word = strncmp(p, "BITS", 4) == 0 ? "BITS" : strncmp(p, "BYTES", 5) == 0 ? "BYTES" : NULL;
        if (word) {
            n += (size_t)snprintf(out + n, cap - n, "%d", word[1] == 'I' ? bits : bits / 8);
            p += strlen(word);
        } else {
            out[n++] = *p++;
        }
    }
    out[n < cap ? n : cap - 1] = '\0';
}
