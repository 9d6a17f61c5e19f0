/* The kernel builder (lower/kernel_builder.h) as C text: each call prints
 * its statement, or returns its expression for the call that uses it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_builder.h"
#include "c_kernel.h"
#include "c_signature.h"

/* An expression and the precedence of its outermost operator: 0 for
 * primaries, casts and calls, then C's levels (3 multiplicative, 4
 * additive, 6 relational, 7 equality, 11 &&, 13 ?:). */
struct qg_kv {
    struct qg_kv *next; /* the builder's list, freed together */
    qg_kt t;
    int prec;
    char s[];
};

static c_kb *cb(qg_kb *b) { return (c_kb *)b; }

/* A new expression of type t from printf's format; on failure a
 * placeholder, the text buffer marked failed (qg_text_ok reports it). */
static qg_kv *expr(qg_kb *b, qg_kt t, int prec, const char *fmt, ...) {
    c_kb *c = cb(b);
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    const int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    qg_kv *v = len < 0 ? NULL : malloc(sizeof *v + (size_t)len + 1);
    if (!v) {
        va_end(ap2);
        c->e->t->failed = true;
        static qg_kv failed = {NULL, QG_KT_SIZE, 0, {0}};
        return &failed;
    }
    vsnprintf(v->s, (size_t)len + 1, fmt, ap2);
    va_end(ap2);
    v->t = t;
    v->prec = prec;
    v->next = c->values;
    c->values = v;
    return v;
}

/* v as an operand of an operator of precedence `prec` (`right`: its right
 * operand, where an equal level needs parentheses too) */
static bool wrap(const qg_kv *v, int prec, bool right) { return right ? v->prec >= prec : v->prec > prec; }
#define OPND(v, prec, right) wrap(v, prec, right) ? "(" : "", (v)->s, wrap(v, prec, right) ? ")" : ""

/* A statement at the current depth. */
static void line(qg_kb *b, const char *fmt, ...) {
    c_kb *c = cb(b);
    qg_text_printf(c->e->t, "%*s", 4 * c->depth, "");
    va_list ap;
    va_start(ap, fmt);
    qg_text_vprintf(c->e->t, fmt, ap);
    va_end(ap);
    qg_text_puts(c->e->t, "\n");
}

/* kernel_support.h's group type of b's width (4, 8 or 16 lanes) */
static const char *group_type(qg_kb *b, bool f) {
    static const char *const names[2][3] = {{"qg_ks_gi4", "qg_ks_gi8", "qg_ks_gi16"},
                                            {"qg_ks_gf4", "qg_ks_gf8", "qg_ks_gf16"}};
    const int n = b->lp->block_group;
    return names[f][n == 16 ? 2 : n == 8 ? 1 : 0];
}

static const char *c_type(qg_kb *b, qg_kt t) {
    static const char *const names[] = {"size_t", "int32_t", "int64_t", "float", "void *", "int"};
    const qg_isa_spelling *is = cb(b)->e->is;
    if (t >= QG_KT_GF)
        return group_type(b, t == QG_KT_GF);
    return t == QG_KT_VF ? is->vf : t == QG_KT_VOK ? is->vm : t == QG_KT_VI ? is->vi : names[t];
}

static void kb_open_link(qg_kb *b, const qg_op_info *o, const char *infix) {
    c_kb *c = cb(b);
    c->o = o;
    c->depth = 1;
    c->nvars = 0; /* variables are a function's */
    c->temps = 0;
    qg_c_open_link(c->e, o, infix);
}

static qg_kv *kb_arg(qg_kb *b, qg_arg_kind kind) {
    const qg_op_info *o = cb(b)->o;
    const int k = qg_op_arg_index(o, kind);
    return k >= 0 ? expr(b, kind == QG_ARG_N ? QG_KT_SIZE : QG_KT_PTR, 0, "%s", o->args[k].name)
                  : expr(b, QG_KT_PTR, 0, "NULL");
}

static void kb_close_fn(qg_kb *b, qg_kv *v) {
    if (v)
        line(b, "return %s;", v->s);
    cb(b)->depth = 0;
    qg_text_puts(cb(b)->e->t, "}\n\n");
}

static void kb_ret(qg_kb *b) { line(b, "return;"); }

static qg_kv *kb_link_ref(qg_kb *b, const qg_op_info *o, const char *infix) {
    const emitter *e = cb(b)->e;
    return expr(b, QG_KT_PTR, 0, "%s_%s%s__%s", e->name, o->name, infix, e->tg->name);
}

static qg_kv *kb_spec_ref(qg_kb *b) { return expr(b, QG_KT_PTR, 0, "&%s_spec", cb(b)->e->name); }

static qg_kv *kb_span_ref(qg_kb *b, const char *suffix) {
    return expr(b, QG_KT_PTR, 0, "%s_%s_span%s", cb(b)->e->name, cb(b)->o->name, suffix);
}

static qg_kv *kb_imm(qg_kb *b, qg_kt t, long long v) {
    if (t == QG_KT_PTR)
        return expr(b, t, 0, "NULL");
    return expr(b, t, 0, t == QG_KT_I64 ? "%lldLL" : "%lld", v);
}

static qg_kv *kb_minmax_ref(qg_kb *b) { return expr(b, QG_KT_PTR, 0, "%s_minmax_span", cb(b)->e->name); }

static qg_kv *kb_rows_ref(qg_kb *b) {
    const emitter *e = cb(b)->e;
    return expr(b, QG_KT_PTR, 0, "%s_%s_rows__%s", e->name, cb(b)->o->name, e->tg->name);
}

static void kb_comment(qg_kb *b, const char *text) { line(b, "/* %s */", text); }

static void kb_section(qg_kb *b, const char *op_name) {
    qg_text_printf(cb(b)->e->t, "/* ---- %s ---- */\n\n", op_name);
}

static void kb_op_begin(qg_kb *b, const qg_plan *plan) { qg_c_op_begin(cb(b)->e, b->lp, plan); }

static void kb_op_end(qg_kb *b) { qg_c_op_end(cb(b)->e); }

static qg_kv *kb_fimm(qg_kb *b, float v) {
    char lit[48];
    qg_c_float_literal(v, lit, sizeof lit);
    return expr(b, QG_KT_F32, 0, "%s", lit);
}

/* Whether v is a decimal integer literal, and its value. */
static bool literal(const qg_kv *v, long long *out) {
    char *end;
    *out = strtoll(v->s, &end, 10);
    return v->prec == 0 && v->s[0] && *end == 0 && (v->t == QG_KT_SIZE || v->t == QG_KT_I32);
}

static bool is_group(const qg_kv *v) { return v->t >= QG_KT_GF; }

static qg_kv *kb_bin(qg_kb *b, qg_kbin op, qg_kv *x, qg_kv *y) {
    long long l, r;
    if (op <= QG_KB_MUL && literal(x, &l) && literal(y, &r)) /* sums of the lowering's constants, folded */
        return expr(b, x->t, 0, "%lld", op == QG_KB_ADD ? l + r : op == QG_KB_SUB ? l - r : l * r);
    static const char *const spelled[] = {"+", "-", "*", "/", "==", "!=", "<", ">=", "&&", "||"};
    static const int prec[] = {4, 4, 3, 3, 7, 7, 6, 6, 11, 12};
    const bool group = is_group(x) || is_group(y);
    qg_kt t = op >= QG_KB_EQ ? QG_KT_BOOL : x->t;
    if (group) /* GNU C takes a scalar operand in every lane; conditions are lanes of -1 and 0 */
        t = op >= QG_KB_EQ ? QG_KT_GB : is_group(x) ? x->t : y->t;
    if (group && op >= QG_KB_AND) /* operands in parentheses, as -Wparentheses asks of & and | */
        return expr(b, t, op == QG_KB_AND ? 8 : 10, "%s%s%s %s %s%s%s", OPND(x, 2, false), op == QG_KB_AND ? "&" : "|",
                    OPND(y, 2, true));
    const int bound = op == QG_KB_OR ? prec[QG_KB_AND] - 1 : prec[op]; /* && inside || in parentheses */
    return expr(b, t, prec[op], "%s%s%s %s %s%s%s", OPND(x, bound, false), spelled[op], OPND(y, bound, true));
}

/* A group operand: v itself, or a scalar taken in every lane. */
static const char *lanes_of(qg_kb *b, qg_kv *v, bool f) {
    if (is_group(v))
        return v->s;
    return expr(b, f ? QG_KT_GF : QG_KT_GI, 0, "QG_KS_GSPLAT%d(%s, %s)", b->lp->block_group, group_type(b, f), v->s)->s;
}

static qg_kv *kb_select(qg_kb *b, qg_kv *cond, qg_kv *x, qg_kv *y) {
    if (is_group(cond)) {
        const bool f = x->t == QG_KT_F32 || x->t == QG_KT_GF || y->t == QG_KT_GF;
        return expr(b, f ? QG_KT_GF : QG_KT_GI, 0, "QG_KS_GSEL(%s, %s, %s, %s)", group_type(b, f), cond->s,
                    lanes_of(b, x, f), lanes_of(b, y, f));
    }
    return expr(b, x->t, 13, "%s%s%s ? %s%s%s : %s%s%s", OPND(cond, 13, true), OPND(x, 0, false), OPND(y, 13, false));
}

static qg_kv *kb_cast(qg_kb *b, qg_kt t, qg_kv *v) {
    return expr(b, t, 0, "(%s)%s%s%s", c_type(b, t), OPND(v, 0, false));
}

static qg_kv *kb_nonnull(qg_kb *b, qg_kv *ptr) { return expr(b, QG_KT_BOOL, ptr->prec, "%s", ptr->s); }

static void kb_discard(qg_kb *b, qg_kv *v) { line(b, "(void)%s;", v->s); }

static qg_kv *kb_let(qg_kb *b, const char *name, qg_kv *v) {
    if (v->t == QG_KT_PTR)
        line(b, "void *const %s = %s;", name, v->s);
    else
        line(b, "const %s %s = %s;", c_type(b, v->t), name, v->s);
    return expr(b, v->t, 0, "%s", name);
}

static qg_kv *kb_field(qg_kb *b, qg_kv *ptr, qg_kfield f) {
    static const struct {
        const char *name;
        qg_kt t;
    } fields[QG_KF_COUNT] = {{"scale", QG_KT_PTR},     {"zero_point", QG_KT_PTR}, {"channels", QG_KT_SIZE},
                             {"inner", QG_KT_SIZE},    {"s_in", QG_KT_F32},       {"s_w", QG_KT_PTR},
                             {"s_out", QG_KT_F32},     {"z_out", QG_KT_I32},      {"bias_q", QG_KT_PTR},
                             {"channels", QG_KT_SIZE}, {"inner", QG_KT_SIZE}};
    return expr(b, fields[f].t, 0, "%s->%s", ptr->s, fields[f].name);
}

static qg_kv *kb_elem_ptr(qg_kb *b, qg_kt t, qg_kv *ptr, qg_kv *i) {
    const char *ct = t == QG_KT_I32 ? "int32_t" : t == QG_KT_F32 ? "float" : c_type(b, t);
    if (!strcmp(i->s, "0"))
        return expr(b, QG_KT_PTR, 0, "(const %s *)%s%s%s", ct, OPND(ptr, 0, false));
    return expr(b, QG_KT_PTR, 4, "(const %s *)%s%s%s + %s%s%s", ct, OPND(ptr, 0, false), OPND(i, 4, true));
}

static qg_kv *kb_index(qg_kb *b, qg_kt t, qg_kv *ptr, qg_kv *i, bool or_zero) {
    /* the cast: a buffer's bytes read as t */
    if (or_zero)
        return expr(b, t, 13, "%s ? ((const %s *)(%s))[%s] : 0", ptr->s, c_type(b, t), ptr->s, i->s);
    return expr(b, t, 0, "((const %s *)(%s))[%s]", c_type(b, t), ptr->s, i->s);
}

static qg_kvar *kb_var(qg_kb *b, const char *name, qg_kt t, qg_kv *init) {
    c_kb *c = cb(b);
    line(b, "%s %s = %s;", c_type(b, t), name, init->s);
    qg_kvar *v = c->nvars < C_KB_MAX_VARS ? &c->vars[c->nvars++] : NULL;
    if (!v) { /* more than a kernel function declares */
        c->e->t->failed = true;
        v = &c->vars[0];
    }
    v->name = expr(b, t, 0, "%s", name);
    return v;
}

static qg_kv *kb_get(qg_kb *b, qg_kvar *v) {
    (void)b;
    return v->name;
}

static void kb_set(qg_kb *b, qg_kvar *v, qg_kv *value) { line(b, "%s = %s;", v->name->s, value->s); }

/* The whole-steps test against a bound computed once, `i < i_end` with
 * i_end = len - step + 1 (0 when len < step): it reads the one induction
 * variable, where the sum kept i and i + step both alive (a register copy
 * per iteration); the LLVM printer's lx_whole_steps_test is the same. */
static void kb_loop_open(qg_kb *b, const char *name, qg_kvar *v, qg_ktest test, qg_kv *bound, qg_kv *step) {
    (void)name;
    const char *i = v->name->s;
    if (test == QG_KTEST_WHOLE_STEPS)
        line(b, "for (const size_t %s_end = %s < %s ? 0 : %s - %s + 1; %s < %s_end; %s += %s) {", i, bound->s, step->s,
             bound->s, step->s, i, i, i, step->s);
    else
        line(b, "for (; %s < %s; %s += %s) {", i, bound->s, i, step->s);
    cb(b)->depth++;
}

static void block_close(qg_kb *b) {
    cb(b)->depth--;
    line(b, "}");
}

static void kb_loop_close(qg_kb *b) { block_close(b); }
static void kb_if_close(qg_kb *b) { block_close(b); }

static void kb_if_open(qg_kb *b, qg_kv *cond) {
    line(b, "if (%s) {", cond->s);
    cb(b)->depth++;
}

static qg_kv *kb_call(qg_kb *b, qg_kv *fn, const char *name, const qg_kt *ret, qg_kv **args, int n) {
    qg_text list = {0};
    for (int k = 0; k < n; k++)
        qg_text_printf(&list, "%s%s", k ? ", " : "", args[k]->s);
    if (list.failed)
        cb(b)->e->t->failed = true;
    const char *callee = fn ? fn->s : name;
    qg_kv *r = NULL;
    if (ret)
        r = expr(b, *ret, 0, "%s(%s)", callee, list.p ? list.p : "");
    else
        line(b, "%s(%s);", callee, list.p ? list.p : "");
    qg_text_free(&list);
    return r;
}

static void kb_zero_bytes(qg_kb *b, qg_kv *ptr, qg_kv *count) { line(b, "memset(%s, 0, %s);", ptr->s, count->s); }

/* v's type written at ptr, whatever ptr points to (a result argument, a
 * buffer's bytes) */
static void kb_store_at(qg_kb *b, qg_kv *ptr, qg_kv *v) { line(b, "*(%s *)%s = %s;", c_type(b, v->t), ptr->s, v->s); }

static qg_kv *kb_byte_ptr(qg_kb *b, qg_kv *ptr, qg_kv *bytes) {
    return expr(b, QG_KT_PTR, 0, "(void *)((char *)%s%s%s + %s%s%s)", OPND(ptr, 0, false), OPND(bytes, 4, true));
}

static qg_kv *kb_var_addr(qg_kb *b, qg_kvar *v) { return expr(b, QG_KT_PTR, 0, "&%s", v->name->s); }

static qg_kv *kb_load_f16(qg_kb *b, qg_kv *ptr) { return expr(b, QG_KT_F32, 0, "qg_ks_load_f16(%s)", ptr->s); }

static void kb_store_f16(qg_kb *b, qg_kv *ptr, qg_kv *v) {
    if (is_group(v))
        line(b, "QG_KS_GSTORE_F16(%s, %s, %d);", ptr->s, v->s, b->lp->block_group);
    else
        line(b, "qg_ks_store_f16(%s, %s);", ptr->s, v->s);
}

static qg_kv *kb_gload(qg_kb *b, qg_kt t, qg_kv *ptr) {
    return expr(b, t, 0, "QG_KS_GLOAD(%s, %s)", c_type(b, t), ptr->s);
}
static void kb_gstore(qg_kb *b, qg_kv *ptr, qg_kv *v) { line(b, "QG_KS_GSTORE(%s, %s);", ptr->s, v->s); }
static void kb_copy_bytes(qg_kb *b, qg_kv *dst, qg_kv *src, unsigned bytes) {
    line(b, "memcpy(%s, %s, %u);", dst->s, src->s, bytes);
}

static qg_kv *kb_buffer(qg_kb *b, const char *name, unsigned bytes) {
    /* named as a void pointer: the span's code type, whatever its sign */
    line(b, "_Alignas(32) uint8_t %s_bytes[%u];", name, bytes);
    line(b, "void *const %s = %s_bytes;", name, name);
    return expr(b, QG_KT_PTR, 0, "%s", name);
}

static qg_kv *kb_block_bytes(qg_kb *b, qg_kbytes op, qg_kv *dst, qg_kv *src, int k) {
    static const char *const fn[] = {[QG_KBYTES_PACK_NIBBLES] = "qg_ks_pack_nibbles",
                                     [QG_KBYTES_PACK_FIFTH] = "qg_ks_pack_fifth",
                                     [QG_KBYTES_UNPACK_NIBBLES] = "qg_ks_unpack_nibbles",
                                     [QG_KBYTES_OR_FIFTH] = "qg_ks_or_fifth",
                                     [QG_KBYTES_NIBBLES] = "qg_ks_nibbles",
                                     [QG_KBYTES_OR_HIGH_PAIR] = "qg_ks_or_high_pair",
                                     [QG_KBYTES_Q4K_SCALES] = "qg_ks_q4k_scales",
                                     [QG_KBYTES_WIDEN_I8] = "qg_ks_widen_i8",
                                     [QG_KBYTES_E2M1] = "qg_ks_e2m1",
                                     [QG_KBYTES_PACK_HIGH_PAIRS] = "qg_ks_pack_high_pairs"};
    if (op == QG_KBYTES_E8M0_HALF)
        return expr(b, QG_KT_F32, 0, "qg_ks_e8m0_half(%s)", src->s);
    if (op == QG_KBYTES_SUM_I8)
        return expr(b, QG_KT_I32, 0, "qg_ks_sum_i8(%s)", src->s);
    if (op == QG_KBYTES_NIBBLES || op == QG_KBYTES_OR_HIGH_PAIR || op == QG_KBYTES_PACK_NIBBLES) {
        line(b, "%s(%s, %s, %d);", fn[op], dst->s, src->s, k);
        return NULL;
    }
    line(b, "%s(%s, %s);", fn[op], dst->s, src->s);
    return NULL;
}

static qg_kv *kb_param(qg_kb *b, qg_plan_input in, qg_kv *scalar) {
    emitter *e = cb(b)->e;
    if (e->scalable) /* strips splat their parameters themselves */
        return scalar;
    qg_text t = {0};
    const bool is_int = in == QG_IN_Z || in == QG_IN_B;
    qg_text_spell(&t, is_int ? e->is->splat_i : e->is->op[QG_OP_SPLAT_F], scalar->s, NULL, NULL);
    qg_kv *v = expr(b, QG_KT_PTR, 0, "%s", t.p ? t.p : "");
    if (!qg_text_ok(&t))
        e->t->failed = true;
    qg_text_free(&t);
    return v;
}

/* ---- spans */

static void kb_open_span(qg_kb *b, const qg_plan *p, const char *suffix, bool out_of_line) {
    c_kb *c = cb(b);
    c->o = qg_op_info_of(p->op);
    c->p = p;
    c->depth = 1;
    c->nvars = 0;
    qg_c_span_open(c->e, p, out_of_line ? "QG_KS_OUT_OF_LINE" : "static inline", suffix);
    if (c->e->scalable) /* whole registers; the part vector opens its own strip */
        qg_c_whole_strip(c->e, p);
}

static qg_kv *kb_span_arg(qg_kb *b, int k) {
    c_kb *c = cb(b);
    const op_io io = qg_c_io_of(c->e, c->p);
    static const char *const fixed[] = {NULL, NULL, "mask", "base", "len"};
    const char *name = k == QG_KSPAN_IN     ? io.in_name
                       : k == QG_KSPAN_OUT  ? io.out_name
                       : k < QG_KSPAN_PARAM ? fixed[k]
                                            : qg_c_input_names[k - QG_KSPAN_PARAM];
    return expr(b, k == QG_KSPAN_BASE || k == QG_KSPAN_LEN ? QG_KT_SIZE : QG_KT_PTR, 0, "%s", name);
}

static qg_kv *kb_lanes(qg_kb *b) {
    const emitter *e = cb(b)->e;
    return expr(b, QG_KT_SIZE, 0, "%s", e->scalable ? e->is->strip_step : e->lanes_str);
}

const char *qg_c_indent(const c_kb *c) {
    static const char spaces[] = "                                ";
    const int n = 4 * c->depth < (int)sizeof spaces - 1 ? 4 * c->depth : (int)sizeof spaces - 1;
    return spaces + sizeof spaces - 1 - n;
}

static qg_kv *kb_group_mask_in(qg_kb *b, qg_kv *at) {
    line(b, "const uint64_t mbits = qg_ks_get_bits(mask, %s, %du);", at->s, 4 * cb(b)->e->lanes);
    return expr(b, QG_KT_I64, 0, "mbits");
}

/* ---- one vector (c_span.c spells its accesses) */

static void kb_vector_open(qg_kb *b, const qg_plan *p, const qg_kvector *v) {
    qg_c_vector_open(cb(b), p, v, v->at->s, v->count->s);
}

/* The expression c_span.c wrote into t, as a value of type `type`. */
static qg_kv *of_text(qg_kb *b, qg_kt type, qg_text *t) {
    qg_kv *v = expr(b, type, 0, "%s", t->p ? t->p : "");
    if (!qg_text_ok(t))
        cb(b)->e->t->failed = true;
    qg_text_free(t);
    return v;
}

static qg_kv *kb_load(qg_kb *b) {
    qg_text t = {0};
    qg_c_load(cb(b), &t);
    return of_text(b, QG_KT_VF, &t);
}

static qg_kv *kb_load_mask(qg_kb *b, qg_kv *bits, int first) {
    qg_text t = {0};
    qg_c_load_mask(cb(b), bits ? bits->s : NULL, first, &t);
    return of_text(b, QG_KT_VOK, &t);
}

static qg_kv *kb_body(qg_kb *b, qg_kv *in, qg_kv *m, qg_kbody form, qg_kv **mask_out, qg_kv **nan) {
    c_kb *c = cb(b);
    char kept[16];
    qg_c_body_call(c->e, c->p, in->s, m ? m->s : "", c->tag, qg_c_indent(c), form, kept);
    *mask_out = expr(b, QG_KT_VOK, 0, "m%s", c->tag);
    *nan = expr(b, QG_KT_VF, 0, "nan%s", c->tag);
    return expr(b, QG_KT_VF, 0, "%s", kept);
}

static void kb_store(qg_kb *b, qg_kv *r) { qg_c_store(cb(b), r->s); }
static void kb_store_mask(qg_kb *b, qg_kv *m) { qg_c_store_mask(cb(b), m->s); }
static void kb_vector_close(qg_kb *b) { (void)b; }

/* $a..: four handles' names, comma-separated */
static void four(qg_kv *const v[4], const char *extra, char *out, size_t cap) {
    snprintf(out, cap, "%s, %s, %s, %s%s", v[0]->s, v[1]->s, v[2]->s, v[3]->s, extra);
}

static void spelled_line(qg_kb *b, const char *fmt, const char *x, const char *y, const char *z) {
    qg_text t = {0};
    qg_text_spell(&t, fmt, x, y, z);
    if (!qg_text_ok(&t))
        cb(b)->e->t->failed = true;
    line(b, "%s;", t.p ? t.p : "");
    qg_text_free(&t);
}

/* fmt spelled with x, y, z: an expression of type t */
static qg_kv *spelled(qg_kb *b, qg_kt t, const char *fmt, const char *x, const char *y, const char *z) {
    qg_text sp = {0};
    qg_text_spell(&sp, fmt, x, y, z);
    qg_kv *v = expr(b, t, 0, "%s", sp.p ? sp.p : "");
    if (!qg_text_ok(&sp))
        cb(b)->e->t->failed = true;
    qg_text_free(&sp);
    return v;
}

static void kb_group_store(qg_kb *b, qg_kv *const r[4], qg_kv *at) {
    emitter *e = cb(b)->e;
    const qg_dtype kd = qg_kernel_dtype(e->sp);
    char ptr[160], vs[96], qmin[24];
    snprintf(ptr, sizeof ptr, "%s + %s", qg_c_io_of(e, cb(b)->p).out_name, at->s);
    snprintf(qmin, sizeof qmin, "%lld", b->lp->qmin);
    four(r, b->lp->group_store_adds_z ? ", z" : "", vs, sizeof vs);
    spelled_line(b, b->lp->group_store_adds_z ? e->is->store_q4_z[kd] : e->is->store_q4[kd], ptr, vs, qmin);
}

static void kb_group_mask_out(qg_kb *b, qg_kv *const m[4], qg_kv *at) {
    emitter *e = cb(b)->e;
    char ms[96], ptr[160];
    four(m, "", ms, sizeof ms);
    line(b, "if (mask)");
    cb(b)->depth++;
    if (b->lp->mask_out == QG_MASK_BITS) {
        qg_text bits = {0};
        qg_text_spell(&bits, e->is->mask4_to_bits, ms, NULL, NULL);
        line(b, "qg_ks_put_bits(mask, %s, %s, %du);", at->s, bits.p ? bits.p : "", 4 * e->lanes);
        if (!qg_text_ok(&bits))
            e->t->failed = true;
        qg_text_free(&bits);
    } else {
        snprintf(ptr, sizeof ptr, "mask + %s", at->s);
        spelled_line(b, e->is->store_mask4_bytes, ptr, ms, NULL);
    }
    cb(b)->depth--;
}

static qg_kv *kb_any_nan4(qg_kb *b, qg_kv *const nan[4]) {
    char ns[96];
    four(nan, "", ns, sizeof ns);
    return spelled(b, QG_KT_BOOL, cb(b)->e->is->any_nan4, ns, NULL, NULL);
}

/* on the address as an integer: the pointer may be NULL at len 0 */
static qg_kv *kb_to_boundary(qg_kb *b, qg_kv *ptr, qg_kv *base, bool of_output, unsigned bytes) {
    (void)of_output;
    return expr(b, QG_KT_SIZE, 3, "(size_t)(-((uintptr_t)%s + %s * sizeof %s[0]) %% %uu) / sizeof %s[0]", ptr->s,
                base->s, ptr->s, bytes, ptr->s);
}

static void kb_loop_continue(qg_kb *b) { line(b, "continue;"); }

/* ---- the channels-last rows */

static void kb_open_rows(qg_kb *b, const qg_plan *p, qg_kv *args[5], qg_kv *rows[QG_IN_COUNT]) {
    c_kb *c = cb(b);
    c->o = qg_op_info_of(p->op);
    c->p = p;
    c->depth = 1;
    c->nvars = 0;
    c->temps = 0;
    qg_c_rows_open(c->e, p);
    const op_io io = qg_c_io_of(c->e, p);
    args[0] = expr(b, QG_KT_PTR, 0, "%s", io.in_name);
    args[1] = expr(b, QG_KT_PTR, 0, "%s", io.out_name);
    args[2] = qg_kernel_loops_masked(b->lp) ? expr(b, QG_KT_PTR, 0, "mask") : NULL;
    args[3] = expr(b, QG_KT_SIZE, 0, "n");
    args[4] = expr(b, QG_KT_SIZE, 0, "C");
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++)
        rows[in] = p->uses[in] ? expr(b, QG_KT_PTR, 0, "chan_%s", qg_c_input_names[in]) : NULL;
}

/* in a block of its own: the parameters' names are the column's */
static void kb_column_open(qg_kb *b, const qg_plan *p, qg_kv *count) {
    c_kb *c = cb(b);
    c->p = p;
    line(b, "{");
    c->depth++;
    if (count) /* the parameters' loads and the vector take its lanes */
        qg_c_strip_open(c->e, "0", count->s, qg_c_indent(c));
}

static qg_kv *kb_column_param(qg_kb *b, const qg_plan *p, qg_plan_input in, qg_kv *row_ptr, qg_kv *j, qg_kv *count) {
    (void)count; /* the open strip's */
    emitter *e = cb(b)->e;
    qg_kv *ptr = expr(b, QG_KT_PTR, 4, "%s + %s", row_ptr->s, j->s);
    qg_kv *v = spelled(b, QG_KT_VF, in == QG_IN_Z ? e->is->load_i : e->is->load_f, ptr->s, NULL, NULL);
    line(b, "const %s %s = %s;", qg_c_kind_type(e, p->kind[in]), qg_c_input_names[in], v->s);
    return expr(b, QG_KT_VF, 0, "%s", qg_c_input_names[in]);
}

static void kb_column_close(qg_kb *b) { block_close(b); }

/* ---- observe's reduction and vectors */

static void kb_open_minmax(qg_kb *b, const qg_plan *widen, qg_kv *args[4], bool block) {
    c_kb *c = cb(b);
    emitter *e = c->e;
    if (widen)
        qg_c_body(e, widen);
    c->widen = widen;
    c->depth = 1;
    c->nvars = 0;
    c->temps = 0;
    qg_text_printf(e->t, "%s\nstatic %sint %s_minmax_span(const %s *x, size_t len, float *mn, float *mx) {\n",
                   block ? "/* min and max of one block, x[0..32) (len is 32; q8, mxfp4: -amax and amax); returns 0\n"
                           " * when x holds a NaN. */"
                         : "/* min and max of x[0..len), len >= 1; returns 0 when x holds a NaN. */",
                   block ? "inline " : "", e->name, widen ? "uint16_t" : "float");
    if (block)
        line(b, "(void)len;");
    if (e->scalable) /* whole registers; the part vector's loads take their own count */
        line(b, "const %s %s = %s;", e->is->strip_type, e->is->strip_name, e->is->strip_all);
    static const char *const names[4] = {"x", "len", "mn", "mx"};
    for (int k = 0; k < 4; k++)
        args[k] = expr(b, k == 1 ? QG_KT_SIZE : QG_KT_PTR, 0, "%s", names[k]);
}

/* A part vector without an ISA spelling goes through a buffer that
 * qg_ks_pad_* fills. */
static qg_kv *kb_values(qg_kb *b, qg_kv *x, qg_kv *at, qg_kv *count) {
    c_kb *c = cb(b);
    emitter *e = c->e;
    const bool h = c->widen != NULL;
    const char *load = h ? e->is->load_q[QG_QUINT16] : e->is->load_f, *pad = h ? e->is->load_h_pad : e->is->load_f_pad;
    qg_kv *ptr = expr(b, QG_KT_PTR, 4, "%s + %s", x->s, at->s), *v;
    if (!count) {
        v = spelled(b, QG_KT_VF, load, ptr->s, NULL, NULL);
    } else if (pad) {
        v = spelled(b, QG_KT_VF, pad, ptr->s, count->s, NULL);
    } else {
        const int k = c->temps++;
        line(b, "%s pad%d[%d];", h ? "uint16_t" : "float", k, e->lanes);
        line(b, "qg_ks_pad_%s(pad%d, %s, %s, %du);", h ? "u16" : "f32", k, ptr->s, count->s, e->lanes);
        char buf[16];
        snprintf(buf, sizeof buf, "pad%d", k);
        v = spelled(b, QG_KT_VF, load, buf, NULL, NULL);
    }
    if (!h)
        return v;
    char call[512];
    qg_c_body_call_expr(e, c->widen, v->s, call, sizeof call);
    return expr(b, QG_KT_VF, 0, "%s", call);
}

static qg_kv *kb_vsplat(qg_kb *b, qg_kv *f) {
    return spelled(b, QG_KT_VF, cb(b)->e->is->op[QG_OP_SPLAT_F], f->s, NULL, NULL);
}

static qg_kv *kb_vop(qg_kb *b, qg_opcode op, qg_kv *x, qg_kv *y) {
    static const qg_kt kinds[] = {[QG_VF] = QG_KT_VF, [QG_VI] = QG_KT_VI, [QG_VM] = QG_KT_VOK};
    const qg_kt t = kinds[qg_opcode_result_kind(op)];
    return spelled(b, t, cb(b)->e->is->op[op], x->s, y ? y->s : NULL, NULL);
}

/* Across lanes by the ISA's reductions (scalable ones seeded with the
 * identity). */
static qg_kv *kb_reduce(qg_kb *b, qg_opcode op, qg_kv *v) {
    c_kb *c = cb(b);
    const emitter *e = c->e;
    const qg_isa_spelling *is = e->is;
    if (op == QG_OP_AND_M) {
        if (e->scalable)
            return spelled(b, QG_KT_BOOL, is->all_lanes, v->s, NULL, NULL);
        qg_kv *bits = spelled(b, QG_KT_SIZE, is->mask_to_bits, v->s, NULL, NULL);
        return expr(b, QG_KT_BOOL, 7, "%s == 0x%llXu", bits->s, (1ull << e->lanes) - 1);
    }
    const bool min = op == QG_OP_MIN_F;
    if (e->scalable)
        return spelled(b, QG_KT_F32, min ? is->reduce_min : is->reduce_max, v->s,
                       min ? "__builtin_inff()" : "(-__builtin_inff())", NULL);
    if (e->lanes == 1)
        return expr(b, QG_KT_F32, v->prec, "%s", v->s);
    /* fixed widths: the ISA's fold (unit.lowering requires one of every vector ISA) */
    return spelled(b, QG_KT_F32, min ? is->reduce_min : is->reduce_max, v->s, NULL, NULL);
}

static const qg_kb_ops c_ops = {QG_KB_CALLS(QG_KB_BIND)};

void qg_c_kb_init(c_kb *c, emitter *e) {
    memset(c, 0, sizeof *c);
    c->kb.ops = &c_ops;
    c->kb.lp = e->lp;
    c->e = e;
}

void qg_c_kb_free(c_kb *c) {
    for (qg_kv *v = c->values, *next; v; v = next) {
        next = v->next;
        free(v);
    }
    c->values = NULL;
    c->nvars = 0;
}
