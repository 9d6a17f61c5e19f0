/* The C backend's vector body: a plan's steps spelled with the ISA's
 * intrinsics, its formula above it, and the call of it on one vector. */
#include <stdio.h>
#include <string.h>

#include "c_kernel.h"

const char *const qg_c_input_names[QG_IN_COUNT] = {"x", "q", "dy", "m", "s", "inv", "lo", "hi", "z", "b"};

/* The C names of a plan's values: inputs by role, steps after what they
 * hold (the plan's names), numbered when a name repeats. */
typedef char value_names[QG_PLAN_MAX_VALUES][32];

static void name_values(const qg_plan *p, value_names out) {
    const char *base[QG_PLAN_MAX_VALUES] = {0};
    for (int v = 0; v < QG_IN_COUNT; v++) {
        base[v] = qg_c_input_names[v];
        snprintf(out[v], sizeof out[v], "%s", qg_c_input_names[v]);
    }
    for (int k = 0; k < p->nsteps; k++) {
        const int v = p->steps[k].dst;
        base[v] = p->name[v] ? p->name[v] : "t";
        int seen = 0;
        for (int u = 0; u < v; u++)
            seen += base[u] && strcmp(base[u], base[v]) == 0;
        if (seen)
            snprintf(out[v], sizeof out[v], "%s_%d", base[v], seen + 1);
        else
            snprintf(out[v], sizeof out[v], "%s", base[v]);
    }
}

/* A comment of `text`, wrapped to fit 100 columns. */
static void emit_comment(emitter *e, const char *text) {
    const int width = 100 - 6;
    S("/* ");
    int col = 0;
    for (const char *w = text; *w;) {
        const char *end = strchr(w, ' ');
        const int len = end ? (int)(end - w) : (int)strlen(w);
        if (col && col + 1 + len > width) {
            S("\n * ");
            col = 0;
        } else if (col) {
            S(" ");
            col++;
        }
        P("%.*s", len, w);
        col += len;
        w += len;
        while (*w == ' ')
            w++;
    }
    S(" */\n");
}

/* A float literal that reads back to exactly f. */
void qg_c_float_literal(float f, char *out, size_t cap) {
    if (f != f || f - f != 0.0f) { /* NaN (the one quiet NaN, 0x7FC00000) or +-inf */
        snprintf(out, cap, "%s", f != f ? "__builtin_nanf(\"\")" : f > 0 ? "__builtin_inff()" : "(-__builtin_inff())");
        return;
    }
    snprintf(out, cap, "%.9g", (double)f);
    if (!strpbrk(out, ".eEn"))
        strncat(out, ".0", cap - strlen(out) - 1);
    strncat(out, "f", cap - strlen(out) - 1);
}

const char *qg_q_type(qg_dtype d) {
    /* 4-bit: packed bytes, one element per byte inside the kernels; fp8: the bits */
    static const char *const names[] = {"int8_t", "uint8_t", "int16_t", "int32_t", "uint16_t",
                                        "int8_t", "uint8_t", "uint8_t", "uint8_t"};
    return names[d];
}

/* Whether the body's spellings read the strip control (SVE's predicate is
 * not needed by selects and splats, so a body of those alone goes without). */
static bool body_uses_strip(const emitter *e, const qg_plan *p) {
    if (!e->scalable)
        return false;
    const size_t len = strlen(e->is->strip_name);
    for (int k = 0; k < p->nsteps; k++) {
        for (const char *f = e->is->op[p->steps[k].op]; (f = strstr(f, e->is->strip_name)); f += len) {
            const char after = f[len];
            if (!(after == '_' || (after >= 'a' && after <= 'z') || (after >= '0' && after <= '9')))
                return true;
        }
    }
    return false;
}

void qg_c_body(emitter *e, const qg_plan *p) {
    const char *op = qg_kernel_op_name(p->op);
    const char *ret = qg_c_kind_type(e, p->kind[p->out_q >= 0 ? p->out_q : p->out_y]);
    char comment[sizeof p->formula + 32];
    snprintf(comment, sizeof comment, "%s (docs/semantics.md)", p->formula);
    emit_comment(e, comment);
    P("static inline %s %s_%s_body(", ret, e->name, op);
    bool first = true;
    for (int in = 0; in < QG_IN_COUNT; in++) {
        if (!p->uses[in])
            continue;
        P("%s%s %s", first ? "" : ", ", qg_c_kind_type(e, p->kind[in]), qg_c_input_names[in]);
        first = false;
    }
    if (p->out_mask >= 0)
        P(", %s *mask_out", e->is->vm);
    if (p->out_q_grouped >= 0)
        P(", %s *grouped_out", e->is->vi);
    if (p->out_ordered >= 0)
        P(", %s *ordered_out, %s *nan_out", qg_c_kind_type(e, p->kind[p->out_ordered]), e->is->vf);
    if (body_uses_strip(e, p))
        P(", %s %s", e->is->strip_type, e->is->strip_name);
    S(") {\n");
    value_names names;
    name_values(p, names);
    for (int k = 0; k < p->nsteps; k++) {
        const qg_step *st = &p->steps[k];
        P("    const %s %s = ", qg_c_kind_type(e, p->kind[st->dst]), names[st->dst]);
        char lit[40];
        if (st->op == QG_OP_SPLAT_F) {
            qg_c_float_literal(st->imm, lit, sizeof lit);
            spell(e, e->is->op[st->op], lit, NULL, NULL);
        } else if (qg_opcode_takes_imm(st->op)) { /* integer splat or shift count */
            if (st->imm_i > 255)
                snprintf(lit, sizeof lit, "0x%X", (unsigned)st->imm_i);
            else
                snprintf(lit, sizeof lit, "%d", (int)st->imm_i);
            spell(e, e->is->op[st->op], st->a >= 0 ? names[st->a] : lit, st->a >= 0 ? lit : NULL, NULL);
        } else {
            spell(e, e->is->op[st->op], st->a >= 0 ? names[st->a] : NULL, st->b >= 0 ? names[st->b] : NULL,
                  st->c >= 0 ? names[st->c] : NULL);
        }
        S(";\n");
    }
    if (p->out_mask >= 0)
        P("    *mask_out = %s;\n", names[p->out_mask]);
    if (p->out_q_grouped >= 0)
        P("    if (grouped_out)\n        *grouped_out = %s;\n", names[p->out_q_grouped]);
    if (p->out_ordered >= 0)
        P("    if (ordered_out) {\n        *ordered_out = %s;\n        *nan_out = %s;\n    }\n", names[p->out_ordered],
          names[p->nan_value]);
    P("    return %s;\n}\n\n", names[p->out_q >= 0 ? p->out_q : p->out_y]);
}

/* NAME_<op>_body(inputs of vector <tag>[, mask_out][, grouped_out][, ordered_out, nan_out]) */
static void body_args(emitter *e, const qg_plan *p, const char *tag, const char *grouped_out, const char *ordered_out) {
    const qg_plan_input data = qg_op_info_of(p->op)->data;
    P("%s_%s_body(", e->name, qg_kernel_op_name(p->op));
    bool first = true;
    for (int in = 0; in < QG_IN_COUNT; in++) {
        if (!p->uses[in])
            continue;
        if (is_param(in))
            P("%s%s", first ? "" : ", ", qg_c_input_names[in]);
        else
            P("%s%s%s", first ? "" : ", ", in == QG_IN_MASK ? "m_in" : qg_c_input_names[data], tag);
        first = false;
    }
    if (p->out_mask >= 0)
        P(", &m%s", tag);
    if (p->out_q_grouped >= 0)
        P(", %s", grouped_out);
    if (p->out_ordered >= 0)
        ordered_out ? P(", &%s, &nan%s", ordered_out, tag) : S(", NULL, NULL");
    if (body_uses_strip(e, p))
        P(", %s", e->is->strip_name);
    S(");\n");
}

/* The call of the body on one vector whose data input is `in_expr` and
 * whose mask input is `mask_expr`, declaring what `form` keeps (and for
 * masks m<tag>); the kept value's name goes to kept_out (NULL: not
 * wanted). The loads are named first (x<tag>, m_in<tag>) so that the call
 * reads as the formula. */
void qg_c_body_call(emitter *e, const qg_plan *p, const char *in_expr, const char *mask_expr, const char *tag,
                    const char *indent, qg_kbody form, char kept_out[16]) {
    const qg_plan_input data = qg_op_info_of(p->op)->data;
    P("%sconst %s %s%s = %s;\n", indent, qg_c_kind_type(e, p->kind[data]), qg_c_input_names[data], tag, in_expr);
    if (p->uses[QG_IN_MASK])
        P("%sconst %s m_in%s = %s;\n", indent, e->is->vm, tag, mask_expr);
    if (p->out_mask >= 0)
        P("%s%s m%s;\n", indent, e->is->vm, tag);
    const bool grouped = form != QG_KBODY_RESULT && p->out_q_grouped >= 0;
    char kept[16], grouped_out[24];
    snprintf(kept, sizeof kept, "%c%s", grouped ? 'g' : 'r', tag);
    if (kept_out)
        memcpy(kept_out, kept, sizeof kept);
    snprintf(grouped_out, sizeof grouped_out, "%s%s", grouped && form == QG_KBODY_GROUPED ? "&" : "",
             grouped && form == QG_KBODY_GROUPED ? kept : "NULL");
    const int result = p->out_q >= 0 ? p->out_q : p->out_y;
    if (form == QG_KBODY_ORDERED) {
        P("%s%s %s;\n%s%s nan%s;\n%s", indent, qg_c_kind_type(e, p->kind[p->out_ordered]), kept, indent, e->is->vf, tag,
          indent);
        body_args(e, p, tag, grouped_out, kept);
        return;
    }
    if (grouped)
        P("%s%s %s;\n%s", indent, e->is->vi, kept, indent);
    else
        P("%sconst %s %s = ", indent, qg_c_kind_type(e, p->kind[result]), kept);
    body_args(e, p, tag, grouped_out, NULL);
}

/* The call of a body whose one input is its data input, as an expression. */
void qg_c_body_call_expr(emitter *e, const qg_plan *p, const char *arg, char *out, size_t cap) {
    snprintf(out, cap, "%s_%s_body(%s%s%s)", e->name, qg_kernel_op_name(p->op), arg, body_uses_strip(e, p) ? ", " : "",
             body_uses_strip(e, p) ? e->is->strip_name : "");
}
