/* The C backend's span: the body over a stretch of elements sharing one
 * channel's parameters (full vectors, unrolled; then a tail that never
 * touches memory outside the buffers; strips on scalable ISAs). */
#include <stdio.h>
#include <string.h>

#include "../lower/kernel_builder.h"
#include "c_kernel.h"
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

/* Loads of one vector's data and mask inputs at element `at` of the buffers
 * (fixed-width full vector, or an RVV strip). */
void qg_c_load_expr(emitter *e, const op_io *io, const char *ptr, char *out, size_t cap) {
    qg_text tmp = {0};
    qg_text_spell(&tmp,
                  io->in_is_i32 ? e->is->load_i
                  : io->in_is_q ? e->is->load_q[io->in_q]
                                : e->is->load_f,
                  ptr, NULL, NULL);
    snprintf(out, cap, "%s", tmp.p ? tmp.p : "");
    qg_text_free(&tmp);
}

static void mask_in_expr(emitter *e, const char *at, const char *count, char *out, size_t cap) {
    qg_text tmp = {0};
    char inner[160];
    if (packed_mask(e) && e->is->load_mask_packed) {
        qg_text_spell(&tmp, e->is->load_mask_packed, at, count, NULL);
    } else if (packed_mask(e)) {
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

void qg_c_mask_store_full(emitter *e, const char *at, const char *count, const char *mres, const char *indent) {
    P("%sif (mask)\n%s    ", indent, indent);
    if (packed_mask(e) && e->is->store_mask_packed) {
        spell(e, e->is->store_mask_packed, at, mres, count);
        S(";\n");
    } else if (packed_mask(e)) {
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

void qg_c_store(emitter *e, const op_io *io, const char *ptr, const char *val, const char *indent) {
    S(indent);
    spell(e, io->out_is_q ? e->is->store_q[io->out_q] : e->is->store_f, ptr, val, NULL);
    S(";\n");
}

/* One full vector at element base + i + off; with skip_store the result
 * stays in r<k> (g<k>) for a multi-vector store or for after the main
 * loop's NaN test (`ordered`: the result as it is without NaN lanes), with
 * mask4 (group_mask) its mask bits come from and go to the four vectors'
 * 16 (mbits, m<k>). */
void qg_c_full_vector(emitter *e, const qg_plan *p, int k, const char *at, const char *indent, bool skip_store,
                      bool mask4, bool ordered, char kept[16]) {
    const op_io io_v = qg_c_io_of(e, p), *io = &io_v;
    char ptr[160], in[320], mexpr[320] = "", res[16], mres[16];
    snprintf(ptr, sizeof ptr, "%s + %s", io->in_name, at);
    qg_c_load_expr(e, io, ptr, in, sizeof in);
    char count[64];
    snprintf(count, sizeof count, "%s", e->scalable ? e->is->strip_count : e->lanes_str);
    if (io->mask_in && mask4) { /* group_mask: this vector's bits of the four read at once */
        char bits[32];
        snprintf(bits, sizeof bits, "(mbits >> %d)", k * e->lanes);
        qg_text tmp = {0};
        qg_text_spell(&tmp, e->is->bits_to_mask, bits, NULL, NULL);
        snprintf(mexpr, sizeof mexpr, "%s", tmp.p);
        qg_text_free(&tmp);
    } else if (io->mask_in) {
        mask_in_expr(e, at, count, mexpr, sizeof mexpr);
    }
    snprintf(res, sizeof res, "r%d", k);
    snprintf(mres, sizeof mres, "m%d", k);
    qg_c_body_call(e, p, in, mexpr, res + 1, indent,
                   ordered                                   ? BODY_ORDERED
                   : skip_store && e->lp->group_store_adds_z ? BODY_GROUPED
                                                             : BODY_RESULT,
                   kept);
    snprintf(ptr, sizeof ptr, "%s + %s", io->out_name, at);
    if (!skip_store)
        qg_c_store(e, io, ptr, res, indent);
    if (io->mask_out && !mask4)
        qg_c_mask_store_full(e, at, count, mres, indent);
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

/* Stores the tail's r lane-mask bits `mt` (byte or packed mask); with
 * `masked`, through the ISA's masked byte store when it has one. */
static void emit_mask_store_tail(emitter *e, bool masked) {
    S("        if (mask)\n            ");
    if (masked && !packed_mask(e) && e->is->store_mask_bytes_tail) {
        spell(e, e->is->store_mask_bytes_tail, "mask + base + i", "tm", "mt");
        S(";\n");
        return;
    }
    P("%s(mask%s, ", packed_mask(e) ? "qg_ks_put_bits" : "qg_ks_bits_to_bytes",
      packed_mask(e) ? ", base + i" : " + base + i");
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
    const char *in_t = io.in_is_i32 ? "int32_t" : io.in_is_q ? qg_q_type(io.in_q) : "float";
    const char *out_t = io.out_is_q ? qg_q_type(io.out_q) : "float";
    P("        %s inb[%d] = {0};\n        %s outb[%d];\n", in_t, L, out_t, L);
    P("        memcpy(inb, %s + base + i, r * sizeof inb[0]);\n", io.in_name);
    char in[320], mexpr[320] = "";
    qg_c_load_expr(e, &io, "inb", in, sizeof in);
    if (io.mask_in) {
        char at[32] = "base + i";
        mask_in_expr(e, at, "r", mexpr, sizeof mexpr);
        if (!packed_mask(e)) { /* bytes past r must not be read */
            qg_text tmp = {0};
            qg_text_spell(&tmp, e->is->bits_to_mask, "qg_ks_bytes_to_bits(mask + base + i, (unsigned)r)", NULL, NULL);
            snprintf(mexpr, sizeof mexpr, "%s", tmp.p);
            qg_text_free(&tmp);
        }
    }
    qg_c_body_call(e, p, in, mexpr, "t", "        ", BODY_RESULT, NULL);
    qg_c_store(e, &io, "outb", "rt", "        ");
    P("        memcpy(%s + base + i, outb, r * sizeof outb[0]);\n", io.out_name);
    if (io.mask_out)
        emit_mask_store_tail(e, false);
}

/* The tail of a span with masked loads and stores: lanes past the end are
 * neither read nor written. Where the ISA has no masked form (AVX2 has
 * none for bytes and halfwords), that one operand goes through a stack
 * buffer or through bits. */
static void emit_masked_tail(emitter *e, const qg_plan *p, const op_io *io) {
    const qg_isa_spelling *is = e->is;
    const qg_dtype d = io->in_q, d_out = io->out_q;
    const char *load_tail = io->in_is_i32 ? is->load_i_tail : io->in_is_q ? is->load_q_tail[d] : is->load_f_tail;
    const char *store_tail = io->out_is_q ? is->store_q_tail[d_out] : is->store_f_tail;
    const bool mask_bytes =
        !packed_mask(e) && ((io->mask_in && is->load_mask_bytes_tail) || (io->mask_out && is->store_mask_bytes_tail));
    if (load_tail || store_tail || mask_bytes) { /* the tail mask, where a masked access takes it */
        P("        const %s tm = ", is->tail_mask_type ? is->tail_mask_type : is->vm);
        spell(e, is->tail_mask, "r", NULL, NULL);
        S(";\n");
    }
    char ptr[64], in[320], mexpr[320] = "";
    snprintf(ptr, sizeof ptr, "%s + base + i", io->in_name);
    qg_text tmp = {0};
    if (load_tail) {
        qg_text_spell(&tmp, load_tail, ptr, "tm", NULL);
    } else {
        P("        %s inb[%d] = {0};\n        memcpy(inb, %s, r * sizeof inb[0]);\n", qg_q_type(d), e->lanes, ptr);
        qg_text_spell(&tmp, is->load_q[d], "inb", NULL, NULL);
    }
    snprintf(in, sizeof in, "%s", tmp.p);
    qg_text_free(&tmp);
    if (io->mask_in) {
        if (packed_mask(e) || !is->load_mask_bytes_tail) {
            if (packed_mask(e))
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
    qg_c_body_call(e, p, in, mexpr, "t", "        ", BODY_RESULT, NULL);
    snprintf(ptr, sizeof ptr, "%s + base + i", io->out_name);
    if (store_tail) {
        S("        ");
        spell(e, store_tail, ptr, "tm", "rt");
        S(";\n");
    } else {
        P("        %s outb[%d];\n        ", qg_q_type(d_out), e->lanes);
        spell(e, is->store_q[d_out], "outb", "rt", NULL);
        P(";\n        memcpy(%s, outb, r * sizeof outb[0]);\n", ptr);
    }
    if (io->mask_out)
        emit_mask_store_tail(e, true);
}

/* The partial vector at base + i of r = len - i lanes (inside `if (i < len)`). */
void qg_c_tail(emitter *e, const qg_plan *p) {
    const op_io io = qg_c_io_of(e, p);
    e->lp->tail_buffered ? emit_buffered_tail(e, p, &io) : emit_masked_tail(e, p, &io);
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
