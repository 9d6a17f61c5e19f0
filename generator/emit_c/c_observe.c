/* The C backend's observe kernel: the min/max reduction the runtime's
 * observers fold (docs/semantics.md, observers). */
#include <stdio.h>
#include <string.h>

#include "c_kernel.h"

/* A vector of x's values at `ptr`: loaded, and widened by the `widen`
 * plan's body when x holds 16-bit codes (widen NULL: float32). */
static void load_values(emitter *e, const qg_plan *widen, const char *ptr, char *out, size_t cap) {
    qg_text load = {0};
    qg_text_spell(&load, widen ? e->is->load_q[QG_QUINT16] : e->is->load_f, ptr, NULL, NULL);
    if (widen)
        qg_c_body_call_expr(e, widen, load.p, out, cap);
    else
        snprintf(out, cap, "%s", load.p);
    qg_text_free(&load);
}

/* Scalable ISAs: accumulators as wide as a register; a short last strip
 * leaves the lanes past it as they were. 16-bit codes start from +-inf
 * (the same min and max: len >= 1). */
static void emit_minmax_strips(emitter *e, const qg_plan *widen) {
    const qg_isa_spelling *is = e->is;
    const char *first_lo = widen ? "__builtin_inff()" : "x[0]", *first_hi = widen ? "(-__builtin_inff())" : "x[0]";
    P("    const %s all = %s;\n    %s lo = ", is->strip_type, is->strip_all, is->vf);
    spell(e, is->splat_all, first_lo, NULL, NULL);
    S(", hi = ");
    if (widen)
        spell(e, is->splat_all, first_hi, NULL, NULL);
    else
        S("lo");
    S(";\n    size_t nans = 0;\n    for (size_t i = 0; i < len;) {\n");
    qg_c_strip_open(e, "i", "len", "        ");
    char v[400];
    load_values(e, widen, "x + i", v, sizeof v);
    P("        const %s v = %s", is->vf, v);
    S(";\n        lo = ");
    spell(e, is->min_acc, "lo", "v", NULL);
    S(";\n        hi = ");
    spell(e, is->max_acc, "hi", "v", NULL);
    S(";\n        nans += ");
    spell(e, is->count_nan, "v", NULL, NULL);
    P(";\n        i += %s;\n    }\n    *mn = ", is->strip_step);
    spell(e, is->reduce_min, "lo", first_lo, NULL);
    S(";\n    *mx = ");
    spell(e, is->reduce_max, "hi", first_hi, NULL);
    S(";\n    return nans == 0;\n}\n\n");
}

/* The accumulators lo, hi and ok take in the vector v. */
static void emit_accumulate(emitter *e, const char *ind, const char *lo, const char *hi, const char *ok,
                            const char *v) {
    const qg_isa_spelling *is = e->is;
    P("%s%s = ", ind, lo);
    spell(e, is->op[QG_OP_MIN_F], lo, v, NULL);
    P(";\n%s%s = ", ind, hi);
    spell(e, is->op[QG_OP_MAX_F], hi, v, NULL);
    P(";\n%s%s = ", ind, ok);
    qg_text ordered = {0};
    qg_text_spell(&ordered, is->op[QG_OP_ORDERED], v, NULL, NULL);
    spell(e, is->op[QG_OP_AND_M], ok, ordered.p, NULL);
    qg_text_free(&ordered);
    S(";\n");
}

/* Fixed-width ISAs (scalar code too), len >= 4 vectors: four independent
 * accumulators keep the min/max chains short, as in the LLVM backend; they
 * merge into lo, hi and ok. */
static void emit_minmax_unrolled(emitter *e, const qg_plan *widen) {
    const qg_isa_spelling *is = e->is;
    const int L = e->lanes;
    P("    if (len >= %d) {\n", 4 * L);
    P("        %s lo1 = lo, lo2 = lo, lo3 = lo, hi1 = hi, hi2 = hi, hi3 = hi;\n", is->vf);
    P("        %s ok1 = ok, ok2 = ok, ok3 = ok;\n", is->vm);
    char step[16];
    snprintf(step, sizeof step, "%d", 4 * L);
    qg_c_steps_for(e, "        ", "i", "len", step);
    static const char *const lo_n[] = {"lo", "lo1", "lo2", "lo3"}, *const hi_n[] = {"hi", "hi1", "hi2", "hi3"},
                             *const ok_n[] = {"ok", "ok1", "ok2", "ok3"};
    for (int k = 0; k < 4; k++) {
        char ptr[32], v[8], load[400];
        snprintf(ptr, sizeof ptr, k ? "x + i + %d" : "x + i", k * L);
        snprintf(v, sizeof v, "v%d", k);
        load_values(e, widen, ptr, load, sizeof load);
        P("            const %s %s = %s;\n", is->vf, v, load);
        emit_accumulate(e, "            ", lo_n[k], hi_n[k], ok_n[k], v);
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

/* With 16-bit codes, the widening body first (qg_plan_observe_widening). */
void qg_c_minmax_span(emitter *e) {
    const qg_isa_spelling *is = e->is;
    qg_plan widening;
    const qg_plan *widen = qg_plan_observe_widening(e->sp, e->tg->isa, &widening) ? &widening : NULL;
    if (widen)
        qg_c_body(e, widen);
    const char *elem = widen ? "uint16_t" : "float";
    P("/* min and max of x[0..len), len >= 1; returns 0 when x holds a NaN. */\n");
    P("static int %s_minmax_span(const %s *x, size_t len, float *mn, float *mx) {\n", e->name, elem);
    if (e->scalable) {
        emit_minmax_strips(e, widen);
        return;
    }
    const int L = e->lanes;
    char v[400];
    P("    %s lo = ", is->vf);
    spell(e, is->op[QG_OP_SPLAT_F], widen ? "__builtin_inff()" : "x[0]", NULL, NULL);
    S(", hi = ");
    if (widen) /* +-inf: the same min and max, len >= 1 */
        spell(e, is->op[QG_OP_SPLAT_F], "(-__builtin_inff())", NULL, NULL);
    else
        S("lo");
    P(";\n    %s ok = ", is->vm);
    spell(e, is->op[QG_OP_ORDERED], "lo", NULL, NULL);
    S(";\n    size_t i = 0;\n");
    if (e->tg->unroll > 1)
        emit_minmax_unrolled(e, widen);
    /* whole vectors, then the last part in a buffer: the loop holds no tail
     * work (qgen compare's loop search then finds the unrolled loop) */
    load_values(e, widen, "x + i", v, sizeof v);
    qg_c_steps_for(e, "    ", "i", "len", e->lanes_str);
    P("        const %s v = %s;\n", is->vf, v);
    emit_accumulate(e, "        ", "lo", "hi", "ok", "v");
    S("    }\n    if (i < len) {\n");
    P("        %s buf[%d];\n", elem, L);
    P("        for (size_t k = 0; k < %d; k++) /* repeat x[i]: min and max are unchanged */\n", L);
    load_values(e, widen, "buf", v, sizeof v);
    P("            buf[k] = x[i + (i + k < len ? k : 0)];\n        const %s v = %s;\n", is->vf, v);
    emit_accumulate(e, "        ", "lo", "hi", "ok", "v");
    S("    }\n");
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
