/* The per-ISA spelling tables, from templates/, and their forms per
 * register group. */
#include "isa_spelling.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../util/text_buf.h"

static const qg_isa_spelling scalar = {
#include "scalar.def"
};
static const qg_isa_spelling avx2 = {
#include "avx2.def"
};
static const qg_isa_spelling avx512 = {
#include "avx512.def"
};
static const qg_isa_spelling neon = {
#include "neon.def"
};
static const qg_isa_spelling rvv = {
#include "rvv.def"
};
static const qg_isa_spelling sve = {
#include "sve.def"
};
static const qg_isa_spelling wasm = {
#include "wasm.def"
};

const qg_isa_spelling *qg_isa_spelling_of(qg_isa isa) {
    switch (isa) {
    case QG_ISA_SCALAR: return &scalar;
    case QG_ISA_AVX2: return &avx2;
    case QG_ISA_AVX512: return &avx512;
    case QG_ISA_NEON: return &neon;
    case QG_ISA_RVV: return &rvv;
    case QG_ISA_SVE: return &sve;
    case QG_ISA_WASM: return &wasm;
    default: return NULL;
    }
}

/* What $F, $B, $Q and $H stand for in each group of 1, 2, 4 and 8 vectors. */
static const char *const group_tokens[QG_ISA_GROUPS][4] = {
    {"m1", "32", "mf4", "mf2"}, {"m2", "16", "mf2", "m1"}, {"m4", "8", "m1", "m2"}, {"m8", "4", "m2", "m4"}};

int qg_isa_group_of(int lmul) { return lmul >= 8 ? 3 : lmul >= 4 ? 2 : lmul >= 2 ? 1 : 0; }

/* The table's strings: every field after `isa`, all of them const char *. */
static const char **strings_of(qg_isa_spelling *t, size_t *n) {
    *n = (sizeof *t - offsetof(qg_isa_spelling, includes)) / sizeof(const char *);
    return (const char **)((char *)t + offsetof(qg_isa_spelling, includes));
}

void qg_isa_spelling_release(qg_isa_spelling *t, const qg_isa_spelling *raw) {
    size_t n;
    const char **f = strings_of(t, &n);
    const char *const *r = (const char *const *)((const char *)raw + offsetof(qg_isa_spelling, includes));
    for (size_t k = 0; k < n; k++)
        if (f[k] != r[k])
            free((char *)f[k]);
    *t = *raw;
}

/* Whether s names a group ($a, $b, $c are operands, not groups). */
static bool has_group_token(const char *s) {
    for (const char *p = s; p && (p = strchr(p, '$')) != NULL; p++)
        if (p[1] && strchr("FBQH", p[1]))
            return true;
    return false;
}

bool qg_isa_spelling_grouped(const qg_isa_spelling *raw, int group, qg_isa_spelling *out) {
    *out = *raw;
    size_t n;
    const char **f = strings_of(out, &n);
    for (size_t k = 0; k < n; k++) {
        if (!has_group_token(f[k])) /* shared with raw: most strings, every ISA without groups */
            continue;
        qg_text t = {0};
        for (const char *p = f[k]; *p; p++) {
            const char *token = p[0] == '$' && p[1] ? strchr("FBQH", p[1]) : NULL;
            if (token) {
                qg_text_puts(&t, group_tokens[group][token - "FBQH"]);
                p++;
            } else {
                qg_text_append(&t, p, 1);
            }
        }
        if (!qg_text_ok(&t) || !t.p) {
            qg_text_free(&t);
            qg_isa_spelling_release(out, raw);
            return false;
        }
        f[k] = t.p;
    }
    return true;
}
