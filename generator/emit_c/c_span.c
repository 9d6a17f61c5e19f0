/* The C backend's span: the body over a stretch of elements sharing one
 * channel's parameters (full vectors, unrolled; then a tail that never
 * touches memory outside the buffers; strips on scalable ISAs). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "c_builder.h"
#include "c_signature.h"

static void arg_decl(const emitter *e, const qg_op_info *o, int k, char *out, size_t cap) {
    qg_text tmp = {0};
    qg_c_arg_decl(&tmp, o, k, e->name, e->lp->float_io == QG_FLOAT32 ? "float" : "uint16_t", true);
    snprintf(out, cap, "%s", tmp.p ? tmp.p : "");
    qg_text_free(&tmp);
}

op_io qg_c_io_of(const emitter *e, const qg_plan *p) {
    const qg_op_info *o = qg_op_info_of(p->op);
    const int in = qg_op_data_in(o), out = qg_op_data_out(o);
    const qg_elem ein = e->lp->elem_in, eout = e->lp->elem_out;
    /* 16-bit float codes move as quint16 elements; the plan converts them */
    op_io io = {.in_name = o->args[in].name,
                .out_name = o->args[out].name,
                .in_is_q = ein == QG_ELEM_Q || ein == QG_ELEM_CODE16,
                .out_is_q = eout == QG_ELEM_Q || eout == QG_ELEM_CODE16,
                .in_q = ein == QG_ELEM_Q ? qg_kernel_dtype(e->sp) : QG_QUINT16,
                .out_q = eout == QG_ELEM_Q ? qg_kernel_dtype(e->sp) : QG_QUINT16,
                .in_is_i32 = ein == QG_ELEM_ACC32,
                .mask_in = e->lp->mask_in != QG_MASK_NONE,
                .mask_out = e->lp->mask_out != QG_MASK_NONE};
    arg_decl(e, o, in, io.in_decl, sizeof io.in_decl);
    arg_decl(e, o, out, io.out_decl, sizeof io.out_decl);
    return io;
}

static void load_expr(emitter *e, const op_io *io, const char *ptr, qg_text *out) {
    qg_text_spell(out,
                  io->in_is_i32 ? e->is->load_i
                  : io->in_is_q ? e->is->load_q[io->in_q]
                                : e->is->load_f,
                  ptr, NULL, NULL);
}

static void store_stmt(emitter *e, const op_io *io, const char *ptr, const char *val, const char *indent) {
    S(indent);
    spell(e, io->out_is_q ? e->is->store_q[io->out_q] : e->is->store_f, ptr, val, NULL);
    S(";\n");
}

/* Of the open vector: a fixed-width partial one (the tail, r lanes); its
 * element index and lane count as text. */
static bool tail(const c_kb *c) { return c->partial && !c->e->scalable; }
static const char *at_of(const c_kb *c) { return c->at; }
static const char *count_of(const c_kb *c) {
    return tail(c) ? c->count : c->e->scalable ? c->e->is->strip_count : c->e->lanes_str;
}
static bool buffered(const c_kb *c) { return c->kb.lp->tail_kind == QG_TAIL_BUFFERED; }
/* The ISA's masked forms of the data accesses; NULL: through a buffer. */
static const char *load_tail_of(const c_kb *c) {
    const qg_isa_spelling *is = c->e->is;
    return c->io.in_is_i32 ? is->load_i_tail : c->io.in_is_q ? is->load_q_tail[c->io.in_q] : is->load_f_tail;
}
static const char *store_tail_of(const c_kb *c) {
    const qg_isa_spelling *is = c->e->is;
    return c->io.out_is_q ? is->store_q_tail[c->io.out_q] : is->store_f_tail;
}

/* printf into buf (256 bytes), the text marked failed where it does not fit. */
static const char *fit(c_kb *c, char buf[256], const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static const char *fit(c_kb *c, char buf[256], const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (vsnprintf(buf, 256, fmt, ap) >= 256)
        c->e->t->failed = true;
    va_end(ap);
    return buf;
}

void qg_c_vector_open(c_kb *c, const qg_plan *p, const qg_kvector *v, const char *at, const char *count) {
    emitter *e = c->e;
    c->p = p;
    c->at = at;
    c->count = count;
    c->partial = v->partial;
    snprintf(c->tag, sizeof c->tag, "%d", v->slot < 0 ? 0 : v->slot);
    c->io = qg_c_io_of(e, p);
    const op_io *io = &c->io;
    const char *ind = qg_c_indent(c);
    if (v->partial && e->scalable) { /* a strip of r lanes, unless a column opened it */
        if (!v->strip_open)
            qg_c_strip_open(e, "0", count, ind);
        return;
    }
    if (!tail(c))
        return;
    snprintf(c->tag, sizeof c->tag, "t");
    const qg_isa_spelling *is = e->is;
    if (buffered(c)) { /* through zeroed stack buffers: no lane reads or writes outside the caller's arrays */
        const char *in_t = io->in_is_i32 ? "int32_t" : io->in_is_q ? qg_q_type(io->in_q) : "float";
        P("%s%s inb[%d] = {0};\n%s%s outb[%d];\n", ind, in_t, e->lanes, ind,
          io->out_is_q ? qg_q_type(io->out_q) : "float", e->lanes);
        P("%smemcpy(inb, %s + %s, %s * sizeof inb[0]);\n", ind, io->in_name, at_of(c), count_of(c));
        return;
    }
    /* masked: lanes past the end neither read nor written; where the ISA
     * has no masked form (AVX2 has none for bytes and halfwords), that one
     * operand goes through a stack buffer or through bits */
    const bool mask_bytes =
        !packed_mask(e) && ((io->mask_in && is->load_mask_bytes_tail) || (io->mask_out && is->store_mask_bytes_tail));
    if (load_tail_of(c) || store_tail_of(c) || mask_bytes) { /* the tail mask, where a masked access takes it */
        P("%sconst %s tm = ", ind, is->tail_mask_type ? is->tail_mask_type : is->vm);
        spell(e, is->tail_mask, count_of(c), NULL, NULL);
        S(";\n");
    }
}

void qg_c_load(c_kb *c, qg_text *out) {
    emitter *e = c->e;
    const op_io *io = &c->io;
    char ptr[256];
    fit(c, ptr, "%s + %s", io->in_name, at_of(c));
    if (tail(c) && buffered(c)) {
        load_expr(e, io, "inb", out);
    } else if (tail(c) && load_tail_of(c)) {
        qg_text_spell(out, load_tail_of(c), ptr, "tm", NULL);
    } else if (tail(c)) {
        P("%s%s inb[%d] = {0};\n%smemcpy(inb, %s, %s * sizeof inb[0]);\n", qg_c_indent(c), qg_q_type(io->in_q),
          e->lanes, qg_c_indent(c), ptr, count_of(c));
        qg_text_spell(out, e->is->load_q[io->in_q], "inb", NULL, NULL);
    } else {
        load_expr(e, io, ptr, out);
    }
}

void qg_c_load_mask(c_kb *c, const char *bits, int first, qg_text *out) {
    emitter *e = c->e;
    const char *at = at_of(c), *count = count_of(c);
    char inner[256];
    if (bits) { /* the main loop's four vectors' bits, read at once */
        qg_text_spell(out, e->is->bits_to_mask, fit(c, inner, "(%s >> %d)", bits, first), NULL, NULL);
    } else if (packed_mask(e) && e->is->load_mask_packed) {
        qg_text_spell(out, e->is->load_mask_packed, at, count, NULL);
    } else if (packed_mask(e)) {
        fit(c, inner, "qg_ks_get_bits(mask, %s, (unsigned)%s)", at, count);
        qg_text_spell(out, e->is->bits_to_mask, inner, NULL, NULL);
    } else if (tail(c) && !buffered(c) && e->is->load_mask_bytes_tail) {
        qg_text_spell(out, e->is->load_mask_bytes_tail, fit(c, inner, "mask + %s", at), "tm", NULL);
    } else if (!tail(c) && e->is->load_mask_bytes) {
        qg_text_spell(out, e->is->load_mask_bytes, fit(c, inner, "mask + %s", at), NULL, NULL);
    } else { /* bytes past the count are not read */
        fit(c, inner, "qg_ks_bytes_to_bits(mask + %s, (unsigned)%s)", at, count);
        qg_text_spell(out, e->is->bits_to_mask, inner, NULL, NULL);
    }
}

void qg_c_store(c_kb *c, const char *r) {
    emitter *e = c->e;
    const op_io *io = &c->io;
    const char *ind = qg_c_indent(c), *store_tail = store_tail_of(c);
    char ptr[256];
    fit(c, ptr, "%s + %s", io->out_name, at_of(c));
    if (!tail(c)) {
        store_stmt(e, io, ptr, r, ind);
    } else if (buffered(c)) {
        store_stmt(e, io, "outb", r, ind);
        P("%smemcpy(%s, outb, %s * sizeof outb[0]);\n", ind, ptr, count_of(c));
    } else if (store_tail) {
        S(ind);
        spell(e, store_tail, ptr, "tm", r);
        S(";\n");
    } else {
        P("%s%s outb[%d];\n%s", ind, qg_q_type(io->out_q), e->lanes, ind);
        spell(e, e->is->store_q[io->out_q], "outb", r, NULL);
        P(";\n%smemcpy(%s, outb, %s * sizeof outb[0]);\n", ind, ptr, count_of(c));
    }
}

void qg_c_store_mask(c_kb *c, const char *m) {
    emitter *e = c->e;
    const char *ind = qg_c_indent(c), *at = at_of(c), *count = count_of(c);
    char ptr[256];
    fit(c, ptr, "mask + %s", at);
    P("%sif (mask)\n%s    ", ind, ind);
    if (packed_mask(e) && e->is->store_mask_packed && !tail(c)) {
        spell(e, e->is->store_mask_packed, at, m, count);
        S(";\n");
    } else if (!packed_mask(e) && tail(c) && !buffered(c) && e->is->store_mask_bytes_tail) {
        spell(e, e->is->store_mask_bytes_tail, ptr, "tm", m);
        S(";\n");
    } else if (!packed_mask(e) && !tail(c) && e->is->store_mask_bytes) {
        spell(e, e->is->store_mask_bytes, ptr, m, NULL);
        S(";\n");
    } else {
        if (packed_mask(e))
            P("qg_ks_put_bits(mask, %s, ", at);
        else
            P("qg_ks_bits_to_bytes(%s, ", ptr);
        spell(e, e->is->mask_to_bits, m, NULL, NULL);
        P(", (unsigned)%s);\n", count);
    }
}

static void emit_span_params(emitter *e, const qg_plan *p) {
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++) {
        if (!p->uses[in])
            continue;
        if (e->scalable)
            P(", %s %s_", p->kind[in] == QG_VI ? "int32_t" : "float", qg_c_input_names[in]);
        else
            P(", %s %s", qg_c_kind_type(e, p->kind[in]), qg_c_input_names[in]);
    }
}

void qg_c_strip_open(emitter *e, const char *at, const char *end, const char *indent) {
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
        snprintf(src, sizeof src, "%s_", qg_c_input_names[in]);
        P("%sconst %s %s = ", indent, qg_c_kind_type(e, p->kind[in]), qg_c_input_names[in]);
        spell(e, p->kind[in] == QG_VI ? e->is->splat_i : e->is->op[QG_OP_SPLAT_F], src, NULL, NULL);
        S(";\n");
    }
}

/* <storage> void NAME_<op>_span<suffix>(in, out, [mask,] base, len, params...) { */
void qg_c_span_open(emitter *e, const qg_plan *p, const char *storage, const char *suffix) {
    const op_io io_v = qg_c_io_of(e, p), *io = &io_v;
    P("%s void %s_%s_span%s(%s, %s%s, size_t base, size_t len", storage, e->name, qg_kernel_op_name(p->op), suffix,
      io->in_decl, io->out_decl,
      io->mask_in    ? ", const uint8_t *mask"
      : io->mask_out ? ", uint8_t *mask"
                     : "");
    emit_span_params(e, p);
    S(") {\n");
}

void qg_c_whole_strip(emitter *e, const qg_plan *p) {
    P("    const %s %s = %s;\n", e->is->strip_type, e->is->strip_name, e->is->strip_all);
    emit_param_splats(e, p, "    ");
}
