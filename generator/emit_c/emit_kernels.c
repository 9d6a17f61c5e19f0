/* The C backend's lowering of kernel plans for one ISA: a body per op (the
 * plan, spelled with the ISA's intrinsics), a span that runs the body over
 * a stretch of elements sharing one channel's parameters (full vectors,
 * unrolled, then a tail that never touches memory outside the buffers), and
 * the entry point that walks the channel layout. */
#include <stdio.h>
#include <string.h>

#include "c_signature.h"
#include "emit_c.h"

#define P(...) qg_text_printf(e->t, __VA_ARGS__)
#define S(s) qg_text_puts(e->t, s)

static const char *const input_names[QG_IN_COUNT] = {"x", "q", "dy", "m", "s", "inv", "lo", "hi", "z", "b"};

static bool is_param(int in) { return in >= QG_IN_S; }

static const char *kind_type(const emitter *e, qg_vkind k) {
    return k == QG_VF ? e->is->vf : k == QG_VI ? e->is->vi : e->is->vm;
}

/* The C names of a plan's values: inputs by role, steps after what they
 * hold (the plan's names), numbered when a name repeats. */
typedef char value_names[QG_PLAN_MAX_VALUES][32];

static void name_values(const qg_plan *p, value_names out) {
    const char *base[QG_PLAN_MAX_VALUES] = {0};
    for (int v = 0; v < QG_IN_COUNT; v++) {
        base[v] = input_names[v];
        snprintf(out[v], sizeof out[v], "%s", input_names[v]);
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
static void float_literal(float f, char *out, size_t cap) {
    snprintf(out, cap, "%.9g", (double)f);
    if (!strpbrk(out, ".eEn"))
        strncat(out, ".0", cap - strlen(out) - 1);
    strncat(out, "f", cap - strlen(out) - 1);
}

static void spell(emitter *e, const char *fmt, const char *a, const char *b, const char *c) {
    qg_text_spell(e->t, fmt, a, b, c);
}

const char *qg_q_type(qg_dtype d) {
    static const char *const names[] = {"int8_t", "uint8_t", "int16_t", "int32_t"};
    return names[d];
}

/* ---- body: the plan itself --------------------------------------------- */

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

static void emit_body(emitter *e, const qg_plan *p) {
    const char *op = qg_kernel_op_name(p->op);
    const char *ret = p->out_q >= 0 ? e->is->vi : e->is->vf;
    char comment[sizeof p->formula + 32];
    snprintf(comment, sizeof comment, "%s (docs/semantics.md)", p->formula);
    emit_comment(e, comment);
    P("static inline %s %s_%s_body(", ret, e->name, op);
    bool first = true;
    for (int in = 0; in < QG_IN_COUNT; in++) {
        if (!p->uses[in])
            continue;
        P("%s%s %s", first ? "" : ", ", kind_type(e, p->kind[in]), input_names[in]);
        first = false;
    }
    if (p->out_mask >= 0)
        P(", %s *mask_out", e->is->vm);
    if (body_uses_strip(e, p))
        P(", %s %s", e->is->strip_type, e->is->strip_name);
    S(") {\n");
    value_names names;
    name_values(p, names);
    for (int k = 0; k < p->nsteps; k++) {
        const qg_step *st = &p->steps[k];
        P("    const %s %s = ", kind_type(e, p->kind[st->dst]), names[st->dst]);
        if (st->op == QG_OP_SPLAT_F) {
            char lit[40];
            float_literal(st->imm, lit, sizeof lit);
            spell(e, e->is->op[st->op], lit, NULL, NULL);
        } else {
            spell(e, e->is->op[st->op], st->a >= 0 ? names[st->a] : NULL, st->b >= 0 ? names[st->b] : NULL,
                  st->c >= 0 ? names[st->c] : NULL);
        }
        S(";\n");
    }
    if (p->out_mask >= 0)
        P("    *mask_out = %s;\n", names[p->out_mask]);
    P("    return %s;\n}\n\n", names[p->out_q >= 0 ? p->out_q : p->out_y]);
}

/* ---- span: one channel's stretch of elements ----------------------------- */

/* Pointer parameters of an op's span and entry, and which input they feed
 * (from the op table, plan/kernel_ops.h). */
typedef struct op_io {
    char in_decl[96], out_decl[96]; /* e.g. "const float *x" */
    const char *in_name, *out_name;
    bool in_is_q, out_is_q;
    bool in_is_i32; /* requantize: int32 accumulators */
    bool mask_in, mask_out;
} op_io;

static void arg_decl(const emitter *e, const qg_op_info *o, int k, char *out, size_t cap) {
    qg_text tmp = {0};
    qg_c_arg_decl(&tmp, o, k, e->name, true);
    snprintf(out, cap, "%s", tmp.p ? tmp.p : "");
    qg_text_free(&tmp);
}

static op_io io_of(const emitter *e, const qg_plan *p) {
    const qg_op_info *o = qg_op_info_of(p->op);
    const int in = qg_op_data_in(o), out = qg_op_data_out(o);
    op_io io = {.in_name = o->args[in].name,
                .out_name = o->args[out].name,
                .in_is_q = o->args[in].kind == QG_ARG_Q_IN,
                .out_is_q = o->args[out].kind == QG_ARG_Q_OUT,
                .in_is_i32 = o->args[in].kind == QG_ARG_ACC_IN,
                .mask_in = qg_op_arg_index(o, QG_ARG_MASK_IN) >= 0,
                .mask_out = qg_op_arg_index(o, QG_ARG_MASK_OUT) >= 0};
    arg_decl(e, o, in, io.in_decl, sizeof io.in_decl);
    arg_decl(e, o, out, io.out_decl, sizeof io.out_decl);
    return io;
}

/* The call of the body on one vector whose data input is `in_expr` and
 * whose mask input is `mask_expr`; declares r<tag> and (for masks) m<tag>.
 * The loads are named first (x<tag>, m_in<tag>) so that the call reads as
 * the formula. */
static void emit_body_call(emitter *e, const qg_plan *p, const char *in_expr, const char *mask_expr, const char *tag,
                           const char *indent) {
    const qg_plan_input data = qg_op_info_of(p->op)->data;
    char in_name[24], mask_name[24], res[16], mres[16];
    snprintf(in_name, sizeof in_name, "%s%s", input_names[data], tag);
    snprintf(mask_name, sizeof mask_name, "m_in%s", tag);
    snprintf(res, sizeof res, "r%s", tag);
    snprintf(mres, sizeof mres, "m%s", tag);
    P("%sconst %s %s = %s;\n", indent, kind_type(e, p->kind[data]), in_name, in_expr);
    if (p->uses[QG_IN_MASK])
        P("%sconst %s %s = %s;\n", indent, e->is->vm, mask_name, mask_expr);
    if (p->out_mask >= 0)
        P("%s%s %s;\n", indent, e->is->vm, mres);
    P("%sconst %s %s = %s_%s_body(", indent, p->out_q >= 0 ? e->is->vi : e->is->vf, res, e->name,
      qg_kernel_op_name(p->op));
    bool first = true;
    for (int in = 0; in < QG_IN_COUNT; in++) {
        if (!p->uses[in])
            continue;
        const char *arg = in == QG_IN_MASK ? mask_name : is_param(in) ? input_names[in] : in_name;
        P("%s%s", first ? "" : ", ", arg);
        first = false;
    }
    if (p->out_mask >= 0)
        P(", &%s", mres);
    if (body_uses_strip(e, p))
        P(", %s", e->is->strip_name);
    S(");\n");
}

/* Loads of one vector's data and mask inputs at element `at` of the buffers
 * (fixed-width full vector, or an RVV strip). */
static void load_expr(emitter *e, const op_io *io, const char *ptr, char *out, size_t cap) {
    qg_text tmp = {0};
    qg_text_spell(&tmp,
                  io->in_is_i32 ? e->is->load_i
                  : io->in_is_q ? e->is->load_q[e->sp->dtype]
                                : e->is->load_f,
                  ptr, NULL, NULL);
    snprintf(out, cap, "%s", tmp.p ? tmp.p : "");
    qg_text_free(&tmp);
}

static void mask_in_expr(emitter *e, const char *at, const char *count, char *out, size_t cap) {
    qg_text tmp = {0};
    char inner[160];
    if (e->sp->compat_mask) {
        snprintf(inner, sizeof inner, "qg_ks_get_bits(mask, %s, (unsigned)%s)", at, count);
        qg_text_spell(&tmp, e->is->bits_to_mask, inner, NULL, NULL);
    } else if (e->is->load_mask_bytes) {
        snprintf(inner, sizeof inner, "mask + %s", at);
        qg_text_spell(&tmp, e->is->load_mask_bytes, inner, NULL, NULL);
    } else {
        snprintf(inner, sizeof inner, "qg_ks_bytes_to_bits(mask + %s, (unsigned)%s)", at, count);
        qg_text_spell(&tmp, e->is->bits_to_mask, inner, NULL, NULL);
    }
    snprintf(out, cap, "%s", tmp.p ? tmp.p : "");
    qg_text_free(&tmp);
}

static void emit_mask_store_full(emitter *e, const char *at, const char *count, const char *mres, const char *indent) {
    P("%sif (mask)\n%s    ", indent, indent);
    if (e->sp->compat_mask) {
        P("qg_ks_put_bits(mask, %s, ", at);
        spell(e, e->is->mask_to_bits, mres, NULL, NULL);
        P(", (unsigned)%s);\n", count);
    } else if (e->is->store_mask_bytes) {
        char ptr[96];
        snprintf(ptr, sizeof ptr, "mask + %s", at);
        spell(e, e->is->store_mask_bytes, ptr, mres, NULL);
        S(";\n");
    } else {
        P("qg_ks_bits_to_bytes(mask + %s, ", at);
        spell(e, e->is->mask_to_bits, mres, NULL, NULL);
        P(", (unsigned)%s);\n", count);
    }
}

static void emit_store(emitter *e, const op_io *io, const char *ptr, const char *val, const char *indent) {
    S(indent);
    spell(e, io->out_is_q ? e->is->store_q[e->sp->dtype] : e->is->store_f, ptr, val, NULL);
    S(";\n");
}

/* One full vector at element base + i + off; with skip_store the result
 * stays in r<k> for a multi-vector store. */
static void emit_full_vector_ex(emitter *e, const qg_plan *p, const op_io *io, int k, const char *off_expr,
                                const char *indent, bool skip_store) {
    char at[96], ptr[128], in[320], mexpr[320] = "", res[16], mres[16];
    snprintf(at, sizeof at, "base + i%s", off_expr);
    snprintf(ptr, sizeof ptr, "%s + %s", io->in_name, at);
    load_expr(e, io, ptr, in, sizeof in);
    char count[64];
    snprintf(count, sizeof count, "%s", e->scalable ? e->is->strip_count : e->lanes_str);
    if (io->mask_in)
        mask_in_expr(e, at, count, mexpr, sizeof mexpr);
    snprintf(res, sizeof res, "r%d", k);
    snprintf(mres, sizeof mres, "m%d", k);
    emit_body_call(e, p, in, mexpr, res + 1, indent);
    snprintf(ptr, sizeof ptr, "%s + %s", io->out_name, at);
    if (!skip_store)
        emit_store(e, io, ptr, res, indent);
    if (io->mask_out)
        emit_mask_store_full(e, at, count, mres, indent);
}

static void emit_full_vector(emitter *e, const qg_plan *p, const op_io *io, int k, const char *off_expr,
                             const char *indent) {
    emit_full_vector_ex(e, p, io, k, off_expr, indent, false);
}

static void emit_span_params(emitter *e, const qg_plan *p) {
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++) {
        if (!p->uses[in])
            continue;
        if (e->scalable)
            P(", %s %s_", p->kind[in] == QG_VI ? "int32_t" : "float", input_names[in]);
        else
            P(", %s %s", kind_type(e, p->kind[in]), input_names[in]);
    }
}

/* const <strip_type> <strip_name> = <strip_open(at, end)>; */
static void emit_strip_open(emitter *e, const char *at, const char *end, const char *indent) {
    P("%sconst %s %s = ", indent, e->is->strip_type, e->is->strip_name);
    spell(e, e->is->strip_open, at, end, NULL);
    S(";\n");
}

/* Scalable ISAs: the scalar parameters splat for this strip. */
static void emit_param_splats(emitter *e, const qg_plan *p, const char *indent) {
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++) {
        if (!p->uses[in])
            continue;
        char src[16];
        snprintf(src, sizeof src, "%s_", input_names[in]);
        P("%sconst %s %s = ", indent, kind_type(e, p->kind[in]), input_names[in]);
        spell(e, p->kind[in] == QG_VI ? e->is->splat_i : e->is->op[QG_OP_SPLAT_F], src, NULL, NULL);
        S(";\n");
    }
}

/* Stores the tail's r lane-mask bits `mt` (byte or packed mask); with
 * `masked`, through the ISA's masked byte store when it has one. */
static void emit_mask_store_tail(emitter *e, bool masked) {
    S("        if (mask)\n            ");
    if (masked && !e->sp->compat_mask && e->is->store_mask_bytes_tail) {
        spell(e, e->is->store_mask_bytes_tail, "mask + base + i", "tm", "mt");
        S(";\n");
        return;
    }
    P("%s(mask%s, ", e->sp->compat_mask ? "qg_ks_put_bits" : "qg_ks_bits_to_bytes",
      e->sp->compat_mask ? ", base + i" : " + base + i");
    spell(e, e->is->mask_to_bits, "mt", NULL, NULL);
    S(", (unsigned)r);\n");
}

/* The tail of a fixed-width span: through zeroed stack buffers, so no lane
 * reads or writes outside the caller's arrays. */
static void emit_buffered_tail(emitter *e, const qg_plan *p, const op_io *ip) {
    const op_io io = *ip;
    const int L = e->lanes;
    /* The tail: through zeroed stack buffers, so no lane reads or
     * writes outside the caller's arrays. */
    const char *in_t = io.in_is_i32 ? "int32_t" : io.in_is_q ? qg_q_type(e->sp->dtype) : "float";
    const char *out_t = io.out_is_q ? qg_q_type(e->sp->dtype) : "float";
    S("    if (i < len) {\n");
    S("        const size_t r = len - i;\n");
    P("        %s inb[%d] = {0};\n        %s outb[%d];\n", in_t, L, out_t, L);
    P("        memcpy(inb, %s + base + i, r * sizeof inb[0]);\n", io.in_name);
    char in[320], mexpr[320] = "";
    load_expr(e, &io, "inb", in, sizeof in);
    if (io.mask_in) {
        char at[32] = "base + i";
        mask_in_expr(e, at, "r", mexpr, sizeof mexpr);
        if (!e->sp->compat_mask) { /* bytes past r must not be read */
            qg_text tmp = {0};
            qg_text_spell(&tmp, e->is->bits_to_mask, "qg_ks_bytes_to_bits(mask + base + i, (unsigned)r)", NULL, NULL);
            snprintf(mexpr, sizeof mexpr, "%s", tmp.p);
            qg_text_free(&tmp);
        }
    }
    emit_body_call(e, p, in, mexpr, "t", "        ");
    emit_store(e, &io, "outb", "rt", "        ");
    P("        memcpy(%s + base + i, outb, r * sizeof outb[0]);\n", io.out_name);
    if (io.mask_out)
        emit_mask_store_tail(e, false);
    S("    }\n");
}

/* The tail of a span with masked loads and stores: lanes past the end are
 * neither read nor written. Where the ISA has no masked form (AVX2 has
 * none for bytes and halfwords), that one operand goes through a stack
 * buffer or through bits. */
static void emit_masked_tail(emitter *e, const qg_plan *p, const op_io *io) {
    const qg_isa_spelling *is = e->is;
    const qg_dtype d = e->sp->dtype;
    const char *qt = qg_q_type(d);
    S("    if (i < len) {\n        const size_t r = len - i;\n");
    P("        const %s tm = ", is->tail_mask_type ? is->tail_mask_type : is->vm);
    spell(e, is->tail_mask, "r", NULL, NULL);
    S(";\n");
    char ptr[64], in[320], mexpr[320] = "";
    snprintf(ptr, sizeof ptr, "%s + base + i", io->in_name);
    const char *load_tail = io->in_is_i32 ? is->load_i_tail : io->in_is_q ? is->load_q_tail[d] : is->load_f_tail;
    qg_text tmp = {0};
    if (load_tail) {
        qg_text_spell(&tmp, load_tail, ptr, "tm", NULL);
    } else {
        P("        %s inb[%d] = {0};\n        memcpy(inb, %s, r * sizeof inb[0]);\n", qt, e->lanes, ptr);
        qg_text_spell(&tmp, is->load_q[d], "inb", NULL, NULL);
    }
    snprintf(in, sizeof in, "%s", tmp.p);
    qg_text_free(&tmp);
    if (io->mask_in) {
        if (e->sp->compat_mask || !is->load_mask_bytes_tail) {
            if (e->sp->compat_mask)
                mask_in_expr(e, "base + i", "r", mexpr, sizeof mexpr);
            else
                qg_text_spell(&tmp, is->bits_to_mask, "qg_ks_bytes_to_bits(mask + base + i, (unsigned)r)", NULL, NULL);
        } else {
            qg_text_spell(&tmp, is->load_mask_bytes_tail, "mask + base + i", "tm", NULL);
        }
        if (tmp.p)
            snprintf(mexpr, sizeof mexpr, "%s", tmp.p);
        qg_text_free(&tmp);
    }
    emit_body_call(e, p, in, mexpr, "t", "        ");
    snprintf(ptr, sizeof ptr, "%s + base + i", io->out_name);
    const char *store_tail = io->out_is_q ? is->store_q_tail[d] : is->store_f_tail;
    if (store_tail) {
        S("        ");
        spell(e, store_tail, ptr, "tm", "rt");
        S(";\n");
    } else {
        P("        %s outb[%d];\n        ", qt, e->lanes);
        spell(e, is->store_q[d], "outb", "rt", NULL);
        P(";\n        memcpy(%s, outb, r * sizeof outb[0]);\n", ptr);
    }
    if (io->mask_out)
        emit_mask_store_tail(e, true);
    S("    }\n");
}

static void emit_span(emitter *e, const qg_plan *p) {
    op_io io = io_of(e, p);
    const char *op = qg_kernel_op_name(p->op);
    P("static inline void %s_%s_span(%s, %s%s, size_t base, size_t len", e->name, op, io.in_decl, io.out_decl,
      io.mask_in    ? ", const uint8_t *mask"
      : io.mask_out ? ", uint8_t *mask"
                    : "");
    emit_span_params(e, p);
    S(") {\n");
    if (e->scalable) {
        S("    for (size_t i = 0; i < len;) {\n");
        emit_strip_open(e, "i", "len", "        ");
        emit_param_splats(e, p, "        ");
        emit_full_vector(e, p, &io, 0, "", "        ");
        P("        i += %s;\n    }\n}\n\n", e->is->strip_step);
        return;
    }
    const int L = e->lanes, U = e->tg->unroll;
    S("    size_t i = 0;\n");
    if (U > 1) {
        P("    for (; i + %d <= len; i += %d) {\n", L * U, L * U);
        /* narrow outputs of four vectors are packed and stored together */
        const bool store4 = U == 4 && io.out_is_q && e->is->store_q4[e->sp->dtype];
        for (int k = 0; k < U; k++) {
            char off[32] = "";
            if (k)
                snprintf(off, sizeof off, " + %d", k * L);
            emit_full_vector_ex(e, p, &io, k, off, "        ", store4);
        }
        if (store4) {
            S("        ");
            spell(e, e->is->store_q4[e->sp->dtype], "q + base + i", "r0, r1, r2, r3", NULL);
            S(";\n");
        }
        S("    }\n");
    }
    P("    for (; i + %d <= len; i += %d) {\n", L, L);
    emit_full_vector(e, p, &io, 0, "", "        ");
    S("    }\n");
    if (L > 1 && e->is->tail_mask)
        emit_masked_tail(e, p, &io);
    else if (L > 1)
        emit_buffered_tail(e, p, &io);
    S("}\n\n");
}

/* ---- entry: the channel layout ------------------------------------------- */

/* s0 and z0 of channel `c`, the ones the plan reads. */
static void emit_param_values(emitter *e, const qg_plan *p, const char *c, const char *indent) {
    const qg_spec *sp = e->sp;
    const bool fixed = sp->observer.type == QG_OBS_FIXED_QPARAMS;
    if (fixed)
        P("%s(void)qp; /* fixed_qparams: the spec's own */\n", indent);
    if (p->uses[QG_IN_S] || p->uses[QG_IN_INV]) {
        char lit[40];
        float_literal(sp->observer.fixed_scale, lit, sizeof lit);
        P("%sconst float s0 = ", indent);
        fixed ? P("%s;\n", lit) : P("qp->scale[%s];\n", c);
    }
    if (p->uses[QG_IN_LO] || p->uses[QG_IN_HI] || p->uses[QG_IN_Z]) {
        P("%sconst int32_t z0 = ", indent);
        fixed ? P("%d;\n", (int)sp->observer.fixed_zero_point) : P("qp->zero_point[%s];\n", c);
    }
}

/* Arguments passing one channel's parameters to a span. */
static void emit_param_args(emitter *e, const qg_plan *p) {
    static const char *const scalar_expr[QG_IN_COUNT] = {
        [QG_IN_S] = "s0", [QG_IN_INV] = "1.0f / s0", [QG_IN_Z] = "z0", [QG_IN_B] = "b0"};
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++) {
        if (!p->uses[in])
            continue;
        char expr[96];
        if (in == QG_IN_LO || in == QG_IN_HI)
            snprintf(expr, sizeof expr, "(float)(%lldLL - (int64_t)z0)",
                     (long long)(in == QG_IN_LO ? e->sp->quant_min : e->sp->quant_max));
        else
            snprintf(expr, sizeof expr, "%s", scalar_expr[in]);
        if (e->scalable) {
            P(", %s", expr);
        } else {
            S(", ");
            spell(e, p->kind[in] == QG_VI ? e->is->splat_i : e->is->op[QG_OP_SPLAT_F], expr, NULL, NULL);
        }
    }
}

/* NAME_<op>__<isa>(args) { */
static void emit_entry_open(emitter *e, qg_kernel_op op) {
    char suffix[32];
    snprintf(suffix, sizeof suffix, "__%s", e->tg->name);
    qg_c_prototype(e->t, qg_op_info_of(op), e->name, suffix);
    S(" {\n");
}

static void emit_channels_last(emitter *e, const qg_plan *p, const op_io *io) {
    const char *op = qg_kernel_op_name(p->op);
    const char *mask_arg = io->mask_in || io->mask_out ? ", mask" : "";
    P("        %s_chan__%s cp;\n", e->name, e->tg->name);
    P("        if (%s_chan_init__%s(&cp, qp)) {\n", e->name, e->tg->name);
    S("            for (size_t row = 0; row < n; row += C) {\n");
    S("                const size_t m = n - row < C ? n - row : C;\n");
    if (e->scalable) {
        S("                for (size_t j = 0; j < m;) {\n");
        emit_strip_open(e, "j", "m", "                    ");
    } else {
        P("                for (size_t j = 0; j < m; j += %d) {\n", e->lanes);
    }
    /* parameter vectors loaded from the padded per-channel arrays */
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++) {
        if (!p->uses[in])
            continue;
        char ptr[32];
        snprintf(ptr, sizeof ptr, "cp.%s + j", input_names[in]);
        P("                    const %s %s = ", kind_type(e, p->kind[in]), input_names[in]);
        spell(e, in == QG_IN_Z ? e->is->load_i : e->is->load_f, ptr, NULL, NULL);
        S(";\n");
    }
    if (e->scalable) {
        /* one strip, with the vectors above: the body directly */
        char ptr[64], in[320], mexpr[320] = "";
        snprintf(ptr, sizeof ptr, "%s + row + j", io->in_name);
        load_expr(e, io, ptr, in, sizeof in);
        emit_body_call(e, p, in, mexpr, "0", "                    ");
        snprintf(ptr, sizeof ptr, "%s + row + j", io->out_name);
        emit_store(e, io, ptr, "r0", "                    ");
        if (io->mask_out)
            emit_mask_store_full(e, "row + j", e->is->strip_count, "m0", "                    ");
        P("                    j += %s;\n", e->is->strip_step);
    } else {
        P("                    %s_%s_span(%s, %s%s, row + j, m - j < %d ? m - j : %d", e->name, op, io->in_name,
          io->out_name, mask_arg, e->lanes, e->lanes);
        for (int in = QG_IN_S; in < QG_IN_COUNT; in++)
            if (p->uses[in])
                P(", %s", input_names[in]);
        S(");\n");
    }
    S("                }\n            }\n");
    P("            %s_chan_free__%s(&cp);\n", e->name, e->tg->name);
    S("            return;\n        }\n");
    S("        /* out of memory for the parameter table: one element per run */\n");
}

static void emit_entry(emitter *e, const qg_plan *p) {
    op_io io = io_of(e, p);
    const char *op = qg_kernel_op_name(p->op);
    const char *mask_arg = io.mask_in || io.mask_out ? ", mask" : "";
    emit_entry_open(e, p->op);
    if (io.mask_out && e->sp->compat_mask)
        S("    if (mask)\n        memset(mask, 0, (n + 7) / 8);\n");
    if (p->op == QG_K_FAKE_QUANT_BACKWARD) {
        P("    %s_%s_span(dy, dx, mask, 0, n);\n}\n\n", e->name, op);
        return;
    }
    if (!qg_qscheme_is_per_channel(e->sp->qscheme)) {
        emit_param_values(e, p, "0", "    ");
        P("    %s_%s_span(%s, %s%s, 0, n", e->name, op, io.in_name, io.out_name, mask_arg);
        emit_param_args(e, p);
        S(");\n}\n\n");
        return;
    }
    P("    const size_t C = %zu, inner = qp->inner;\n", e->sp->channel_len);
    S("    if (inner == 1 && C > 1) {\n");
    emit_channels_last(e, p, &io);
    S("    }\n");
    S("    const size_t run_len = inner ? inner : 1;\n");
    S("    for (size_t run = 0, base = 0; base < n; run++, base += run_len) {\n");
    S("        const size_t c = run % C, m = n - base < run_len ? n - base : run_len;\n");
    emit_param_values(e, p, "c", "        ");
    P("        %s_%s_span(%s, %s%s, base, m", e->name, op, io.in_name, io.out_name, mask_arg);
    emit_param_args(e, p);
    S(");\n    }\n}\n\n");
}

/* Per-channel parameter table for the channels-last layout, padded to a
 * whole vector with harmless values (scale 1, bounds 0). */
static void emit_chan_table(emitter *e) {
    const char *n = e->name, *isa = e->tg->name;
    P("typedef struct %s_chan__%s {\n    float *s, *inv, *lo, *hi;\n    int32_t *z;\n} %s_chan__%s;\n\n", n, isa, n,
      isa);
    P("static int %s_chan_init__%s(%s_chan__%s *cp, const qg_qparams *qp) {\n", n, isa, n, isa);
    P("    const size_t C = %zu, padded = (C + %d) / %d * %d;\n", e->sp->channel_len, e->lanes ? e->lanes - 1 : 0,
      e->lanes ? e->lanes : 1, e->lanes ? e->lanes : 1);
    S("    float *f = malloc(padded * (4 * sizeof(float) + sizeof(int32_t)));\n");
    S("    if (!f)\n        return 0;\n");
    S("    cp->s = f;\n    cp->inv = f + padded;\n    cp->lo = f + 2 * padded;\n    cp->hi = f + 3 * padded;\n");
    S("    cp->z = (int32_t *)(f + 4 * padded);\n");
    S("    for (size_t c = 0; c < padded; c++) {\n");
    S("        const float s0 = c < C ? qp->scale[c] : 1.0f;\n");
    S("        const int32_t z0 = c < C ? qp->zero_point[c] : 0;\n");
    S("        cp->s[c] = s0;\n        cp->inv[c] = 1.0f / s0;\n        cp->z[c] = z0;\n");
    P("        cp->lo[c] = c < C ? (float)(%lldLL - (int64_t)z0) : 0.0f;\n", (long long)e->sp->quant_min);
    P("        cp->hi[c] = c < C ? (float)(%lldLL - (int64_t)z0) : 0.0f;\n", (long long)e->sp->quant_max);
    S("    }\n    return 1;\n}\n\n");
    P("static void %s_chan_free__%s(%s_chan__%s *cp) { free(cp->s); }\n\n", n, isa, n, isa);
}

/* requantize: runs of `inner` accumulators sharing one output channel's
 * multiplier m = fl(fl(s_in * s_w[c]) / s_out) and bias. */
static void emit_requantize_entry(emitter *e, const qg_plan *p) {
    const char *n = e->name;
    emit_entry_open(e, p->op);
    S("    const size_t C = rp->channels ? rp->channels : 1;\n");
    S("    const size_t run_len = C == 1 ? (n ? n : 1) : (rp->inner ? rp->inner : 1);\n");
    S("    for (size_t run = 0, base = 0; base < n; run++, base += run_len) {\n");
    S("        const size_t c = run % C, m = n - base < run_len ? n - base : run_len;\n");
    S("        const float s0 = rp->s_in * rp->s_w[c] / rp->s_out;\n");
    S("        const int32_t b0 = rp->bias_q ? rp->bias_q[c] : 0, z0 = rp->z_out;\n");
    P("        %s_requantize_span(acc, q, base, m", n);
    emit_param_args(e, p);
    S(");\n    }\n}\n\n");
}

/* An entry point that forwards to the op's runtime reference. */
static void emit_by_reference(emitter *e, qg_kernel_op op) {
    const qg_op_info *o = qg_op_info_of(op);
    emit_entry_open(e, op);
    P("    %s(&%s_spec, ", o->reference, e->name);
    qg_c_arg_names(e->t, o);
    S(");\n}\n\n");
}

/* ---- observe: min/max reductions --------------------------------------- */

/* Scalable ISAs: accumulators as wide as a register; a short last strip
 * leaves the lanes past it as they were. */
static void emit_minmax_strips(emitter *e) {
    const qg_isa_spelling *is = e->is;
    P("    const %s all = %s;\n    %s lo = ", is->strip_type, is->strip_all, is->vf);
    spell(e, is->splat_all, "x[0]", NULL, NULL);
    S(", hi = lo;\n    size_t nans = 0;\n    for (size_t i = 0; i < len;) {\n");
    emit_strip_open(e, "i", "len", "        ");
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

static void emit_minmax_span(emitter *e) {
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
    if (L > 1) {
        /* four independent accumulators keep the min/max chains short */
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
static void emit_observe(emitter *e) {
    emit_entry_open(e, QG_K_OBSERVE);
    if (qg_plan_observer_reduces(e->sp))
        P("    return qg_observe_with(obs, x, n, inner, %s_minmax_span, err);\n}\n\n", e->name);
    else
        P("    /* %s observers keep no min/max to vectorize */\n    return qg_observe_with(obs, x, n, inner, NULL, "
          "err);\n}\n\n",
          qg_observer_type_name(e->sp->observer.type));
}

/* qint32 and float zero points: the scalar "kernels" are the runtime's
 * reference itself (vector ISAs refuse these specs). */
static void emit_reference_entries(emitter *e) {
    S("/* This spec's arithmetic (qint32, or float zero points) needs more than\n"
      " * fp32 lanes; the scalar kernels are the runtime's reference. */\n");
    for (qg_kernel_op op = QG_K_QUANTIZE; op <= QG_K_FAKE_QUANT_BACKWARD; op++)
        emit_by_reference(e, op);
}

/* ---- the ISA file -------------------------------------------------------- */

/* docs/semantics.md forbids FMA contraction and the file needs its ISA:
 * both are set here, for the functions that follow, in each compiler's
 * spelling, so that no build flag is needed. */
static void emit_target_push(emitter *e) {
    S("#if defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n");
    if (e->tg->clang_target[0])
        P("#pragma clang attribute push(__attribute__((target(\"%s\"))), apply_to = function)\n", e->tg->clang_target);
    S("#elif defined(__GNUC__)\n#pragma GCC push_options\n");
    if (e->tg->gcc_target[0])
        P("#pragma GCC target(\"%s\")\n", e->tg->gcc_target);
    S("#pragma GCC optimize(\"fp-contract=off\")\n#endif\n\n");
}

static void emit_target_pop(emitter *e) {
    S("#if defined(__clang__)\n");
    if (e->tg->clang_target[0])
        S("#pragma clang attribute pop\n");
    S("#elif defined(__GNUC__)\n#pragma GCC pop_options\n#endif\n\n");
}

qg_status qg_emit_isa_file(const qg_spec *sp, qg_isa isa, const char *banner, qg_text *t, qg_error *err) {
    emitter ev = {t, sp, qg_isa_spelling_of(isa), qg_target_of(isa), sp->name, 0, false, ""};
    emitter *e = &ev;
    e->lanes = e->tg->lanes;
    e->scalable = e->tg->lanes == 0;
    snprintf(e->lanes_str, sizeof e->lanes_str, "%d", e->lanes);
    qg_status st = qg_plan_check_isa(sp, isa, err);
    if (st)
        return st;
    S(banner);
    P(" * ISA: %s. The file sets its own target and turns FP contraction off, so\n"
      " * `cc -O2 -c` builds it as it is%s%s%s.\n */\n",
      e->tg->name, e->tg->cflags[0] ? " (whole-file flags " : "", e->tg->cflags, e->tg->cflags[0] ? " also work)" : "");
    P("#include \"%s.h\"\n\n", sp->name);
    P("#if %s\n\n", e->tg->guard);
    if (e->tg->needs[0])
        P("#if !(%s)\n#error \"qgen: %s kernels need a compiler that takes their target from the file (clang) or "
          "flags %s\"\n#endif\n\n",
          e->tg->needs, e->tg->name, e->tg->cflags);
    S("#include <math.h>\n#include <stdlib.h>\n#include <string.h>\n\n");
    S(e->is->includes);
    S("\n#include \"qgen/kernel_support.h\"\n\n");
    emit_target_push(e);
    S(e->is->helpers);
    S("\n");
    if (qg_qscheme_is_per_channel(sp->qscheme) && sp->qscheme != QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS)
        emit_chan_table(e);
    const bool by_reference = qg_plan_by_reference(sp, QG_K_QUANTIZE);
    if (by_reference)
        emit_reference_entries(e);
    for (qg_kernel_op op = QG_K_QUANTIZE; op <= QG_K_FAKE_QUANT_BACKWARD && !by_reference; op++) {
        qg_plan plan;
        if ((st = qg_plan_build(sp, op, &plan, err)))
            return st;
        P("/* ---- %s ---- */\n\n", qg_kernel_op_name(op));
        emit_body(e, &plan);
        emit_span(e, &plan);
        emit_entry(e, &plan);
    }
    S("/* ---- requantize ---- */\n\n");
    if (qg_plan_by_reference(sp, QG_K_REQUANTIZE)) {
        S("/* The fixed-point scheme (64-bit products) runs on the runtime's reference. */\n");
        emit_by_reference(e, QG_K_REQUANTIZE);
    } else {
        qg_plan plan;
        if ((st = qg_plan_build(sp, QG_K_REQUANTIZE, &plan, err)))
            return st;
        emit_body(e, &plan);
        emit_span(e, &plan);
        emit_requantize_entry(e, &plan);
    }
    S("/* ---- observe ---- */\n\n");
    if (qg_plan_observer_reduces(sp))
        emit_minmax_span(e);
    emit_observe(e);
    emit_target_pop(e);
    P("#else\ntypedef int %s_%s_not_this_architecture;\n#endif\n", sp->name, e->tg->name);
    return qg_text_ok(t) ? QG_OK : qg_error_set(err, QG_ERR_NOMEM, "generate: out of memory");
}
