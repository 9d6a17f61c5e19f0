/* The C backend's observe kernel: the min/max reduction the runtime's
 * observers fold (docs/semantics.md, observers). */
#include <stdio.h>
#include <string.h>

#include "c_kernel.h"

/* Scalable ISAs: accumulators as wide as a register; a short last strip
 * leaves the lanes past it as they were. */
static void emit_minmax_strips(emitter *e) {
    const qg_isa_spelling *is = e->is;
    P("    const %s all = %s;\n    %s lo = ", is->strip_type, is->strip_all, is->vf);
    spell(e, is->splat_all, "x[0]", NULL, NULL);
    S(", hi = lo;\n    size_t nans = 0;\n    for (size_t i = 0; i < len;) {\n");
    qg_c_strip_open(e, "i", "len", "        ");
    P("        const %s v = ", is->vf);
    spell(e, is->load_f, "x + i", NULL, NULL);
    S(";\n        lo = ");
    spell(e, is->min_acc, "lo", "v", NULL);
    S(";\n        hi = ");
    spell(e, is->max_acc, "hi", "v", NULL);
    S(";\n        nans += ");
    spell(e, is->count_nan, "v", NULL, NULL);
    P(";\n        i += %s;\n    }\n    *mn = ", is->strip_step);
    spell(e, is->reduce_min, "lo", "x[0]", NULL);
    S(";\n    *mx = ");
    spell(e, is->reduce_max, "hi", "x[0]", NULL);
    S(";\n    return nans == 0;\n}\n\n");
}

/* Fixed-width ISAs, len >= 4 vectors: four independent accumulators keep
 * the min/max chains short; they merge into lo, hi and ok. */
static void emit_minmax_unrolled(emitter *e) {
    const qg_isa_spelling *is = e->is;
    const int L = e->lanes;
    P("    if (len >= %d) {\n", 4 * L);
    P("        %s lo1 = lo, lo2 = lo, lo3 = lo, hi1 = hi, hi2 = hi, hi3 = hi;\n", is->vf);
    P("        %s ok1 = ok, ok2 = ok, ok3 = ok;\n", is->vm);
    P("        for (; i + %d <= len; i += %d) {\n", 4 * L, 4 * L);
    static const char *const lo_n[] = {"lo", "lo1", "lo2", "lo3"}, *const hi_n[] = {"hi", "hi1", "hi2", "hi3"},
                             *const ok_n[] = {"ok", "ok1", "ok2", "ok3"};
    for (int k = 0; k < 4; k++) {
        char ptr[32], v[8];
        snprintf(ptr, sizeof ptr, k ? "x + i + %d" : "x + i", k * L);
        snprintf(v, sizeof v, "v%d", k);
        P("            const %s %s = ", is->vf, v);
        spell(e, is->load_f, ptr, NULL, NULL);
        P(";\n            %s = ", lo_n[k]);
        spell(e, is->op[QG_OP_MIN_F], lo_n[k], v, NULL);
        P(";\n            %s = ", hi_n[k]);
        spell(e, is->op[QG_OP_MAX_F], hi_n[k], v, NULL);
        P(";\n            %s = ", ok_n[k]);
        qg_text ord = {0};
        qg_text_spell(&ord, is->op[QG_OP_ORDERED], v, NULL, NULL);
        spell(e, is->op[QG_OP_AND_M], ok_n[k], ord.p, NULL);
        qg_text_free(&ord);
        S(";\n");
    }
    S("        }\n");
    const struct {
        const char *acc, *a1, *a2, *a3;
        qg_opcode op;
    } merges[] = {{"lo", "lo1", "lo2", "lo3", QG_OP_MIN_F},
                  {"hi", "hi1", "hi2", "hi3", QG_OP_MAX_F},
                  {"ok", "ok1", "ok2", "ok3", QG_OP_AND_M}};
    for (int k = 0; k < 3; k++) {
        qg_text a = {0}, b = {0};
        qg_text_spell(&a, is->op[merges[k].op], merges[k].acc, merges[k].a1, NULL);
        qg_text_spell(&b, is->op[merges[k].op], merges[k].a2, merges[k].a3, NULL);
        P("        %s = ", merges[k].acc);
        spell(e, is->op[merges[k].op], a.p, b.p, NULL);
        S(";\n");
        qg_text_free(&a);
        qg_text_free(&b);
    }
    S("    }\n");
}

void qg_c_minmax_span(emitter *e) {
    const qg_isa_spelling *is = e->is;
    P("/* min and max of x[0..len), len >= 1; returns 0 when x holds a NaN. */\n");
    P("static int %s_minmax_span(const float *x, size_t len, float *mn, float *mx) {\n", e->name);
    if (e->scalable) {
        emit_minmax_strips(e);
        return;
    }
    const int L = e->lanes;
    P("    %s lo = ", is->vf);
    spell(e, is->op[QG_OP_SPLAT_F], "x[0]", NULL, NULL);
    P(", hi = lo;\n    %s ok = ", is->vm);
    spell(e, is->op[QG_OP_ORDERED], "lo", NULL, NULL);
    S(";\n    size_t i = 0;\n");
    if (L > 1)
        emit_minmax_unrolled(e);
    P("    for (;; i += %d) {\n", L);
    P("        %s v;\n", is->vf);
    P("        if (i + %d <= len) {\n            v = ", L);
    spell(e, is->load_f, "x + i", NULL, NULL);
    S(";\n        } else if (i < len) {\n");
    P("            float buf[%d];\n", L);
    P("            for (size_t k = 0; k < %d; k++) /* repeat x[i]: min and max are unchanged */\n", L);
    S("                buf[k] = x[i + (i + k < len ? k : 0)];\n            v = ");
    spell(e, is->load_f, "buf", NULL, NULL);
    S(";\n        } else {\n            break;\n        }\n        lo = ");
    spell(e, is->op[QG_OP_MIN_F], "lo", "v", NULL);
    S(";\n        hi = ");
    spell(e, is->op[QG_OP_MAX_F], "hi", "v", NULL);
    S(";\n        ");
    qg_text ordered = {0};
    qg_text_spell(&ordered, is->op[QG_OP_ORDERED], "v", NULL, NULL);
    S("ok = ");
    spell(e, is->op[QG_OP_AND_M], "ok", ordered.p, NULL);
    qg_text_free(&ordered);
    S(";\n    }\n");
    P("    float los[%d], his[%d];\n    ", L, L);
    spell(e, is->store_f, "los", "lo", NULL);
    S(";\n    ");
    spell(e, is->store_f, "his", "hi", NULL);
    S(";\n    *mn = los[0];\n    *mx = his[0];\n");
    P("    for (size_t k = 1; k < %d; k++) {\n", L);
    S("        *mn = los[k] < *mn ? los[k] : *mn;\n        *mx = his[k] > *mx ? his[k] : *mx;\n    }\n");
    S("    return ");
    spell(e, is->mask_to_bits, "ok", NULL, NULL);
    P(" == %s;\n}\n\n", L == 64 ? "~0ull" : L == 1 ? "1u" : (L == 4 ? "0xFu" : L == 8 ? "0xFFu" : "0xFFFFu"));
}

/* The layout walk, NaN reporting and non-min/max observers are the
 * runtime's (qg_observe_with); the kernel brings its reduction. */
void qg_c_observe(emitter *e) {
    const qg_op_info *o = qg_op_info_of(QG_K_OBSERVE);
    qg_kernel_loops lp;
    qg_entry_chain ch;
    qg_kernel_loops_of(e->sp, e->tg->isa, QG_K_OBSERVE, &lp);
    qg_entry_chain_of(&lp, &ch);
    qg_c_open_link(e, o, ch.walk);
    if (qg_plan_observer_reduces(e->sp))
        P("    return qg_observe_with(obs, x, n, inner, %s_minmax_span, err);\n}\n\n", e->name);
    else
        P("    /* %s observers keep no min/max to vectorize */\n    return qg_observe_with(obs, x, n, inner, NULL, "
          "err);\n}\n\n",
          qg_observer_type_name(e->sp->observer.type));
    qg_c_forwarders(e, o, &ch);
}
