/* The C backend's entry points: the channel layout walk (per tensor, runs
 * of `inner`, channels-last through a parameter table), the parameters
 * derived per channel, requantize's runs and the by-reference forwarders. */
#include <stdio.h>
#include <string.h>

#include "c_signature.h"
#include "c_kernel.h"

/* s0 and z0 of channel `c`, the ones the plan reads. */
static void emit_param_values(emitter *e, const qg_plan *p, const char *c, const char *indent) {
    const qg_kernel_loops *lp = e->lp;
    const bool fixed = lp->params == QG_PARAMS_FIXED;
    if (fixed)
        P("%s(void)qp; /* fixed_qparams: the spec's own */\n", indent);
    if (p->uses[QG_IN_S] || p->uses[QG_IN_INV]) {
        char lit[40];
        qg_c_float_literal(lp->fixed_scale, lit, sizeof lit);
        P("%sconst float s0 = ", indent);
        fixed ? P("%s;\n", lit) : P("qp->scale[%s];\n", c);
    }
    if (p->uses[QG_IN_LO] || p->uses[QG_IN_HI] || p->uses[QG_IN_Z]) {
        P("%sconst int32_t z0 = ", indent);
        fixed ? P("%d;\n", (int)lp->fixed_zero_point) : P("qp->zero_point[%s];\n", c);
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
            snprintf(expr, sizeof expr, "(float)(%lldLL - (int64_t)z0)", in == QG_IN_LO ? e->lp->qmin : e->lp->qmax);
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
void qg_c_entry_open(emitter *e, qg_kernel_op op) {
    char suffix[32];
    snprintf(suffix, sizeof suffix, "__%s", e->tg->name);
    qg_c_prototype(e->t, qg_op_info_of(op), e->name, qg_c_float_t(e->sp), suffix);
    S(" {\n");
}

/* The parameter vectors of the columns from j, from the padded table. */
static void emit_chan_params(emitter *e, const qg_plan *p, const char *ind) {
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++) {
        if (!p->uses[in])
            continue;
        char ptr[32];
        snprintf(ptr, sizeof ptr, "chan_%s + j", qg_c_input_names[in]);
        P("%sconst %s %s = ", ind, qg_c_kind_type(e, p->kind[in]), qg_c_input_names[in]);
        spell(e, in == QG_IN_Z ? e->is->load_i : e->is->load_f, ptr, NULL, NULL);
        S(";\n");
    }
}

/* One whole vector (a strip on scalable ISAs) of `count` lanes at element
 * `at`: the body directly, with the parameter vectors above. */
static void emit_chan_vector(emitter *e, const qg_plan *p, const op_io *io, const char *at, const char *count,
                             const char *ind) {
    char ptr[160], in[320], mexpr[320] = "";
    snprintf(ptr, sizeof ptr, "%s + %s", io->in_name, at);
    qg_c_load_expr(e, io, ptr, in, sizeof in);
    qg_c_body_call(e, p, in, mexpr, "0", ind, BODY_RESULT);
    snprintf(ptr, sizeof ptr, "%s + %s", io->out_name, at);
    qg_c_store(e, io, ptr, "r0", ind);
    if (io->mask_out)
        qg_c_mask_store_full(e, at, count, "m0", ind);
}

/* The partial vector of the columns from j to m: the span's tail alone. */
static void emit_chan_part(emitter *e, const qg_plan *p, const op_io *io, const char *at, const char *m,
                           const char *ind) {
    const char *mask_arg = io->mask_in || io->mask_out ? ", mask" : "";
    P("%s%s_%s_span_part(%s, %s%s, %s, %s - j", ind, e->name, qg_kernel_op_name(p->op), io->in_name, io->out_name,
      mask_arg, at, m);
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++)
        if (p->uses[in])
            P(", %s", qg_c_input_names[in]);
    S(");\n");
}

/* One row of the channels-last walk: `m` channels from element `row`.
 * Fixed-width vectors go whole, then one partial through the span's tail
 * alone (NAME_<op>_span_part; a whole row of a constant channel count that fills its vectors has
 * none); scalable ones go in strips. */
static void emit_channels_last_row(emitter *e, const qg_plan *p, const op_io *io, const char *row, const char *m,
                                   const char *ind) {
    char in4[64], at[64];
    snprintf(in4, sizeof in4, "%s    ", ind);
    snprintf(at, sizeof at, "%s + j", row);
    if (e->scalable) {
        P("%sfor (size_t j = 0; j < %s;) {\n", ind, m);
        qg_c_strip_open(e, "j", m, in4);
        emit_chan_params(e, p, in4);
        emit_chan_vector(e, p, io, at, e->is->strip_count, in4);
        P("%sj += %s;\n%s}\n", in4, e->is->strip_step, ind);
        return;
    }
    const int L = e->lanes;
    const size_t C = e->lp->channels;
    if (strcmp(m, "C") == 0 && e->lp->row_written_out) {
        /* a whole row, its columns one after another (kernel_loops.h) */
        for (size_t k = 0; k < C; k += (size_t)L) {
            P("%s{\n%s    const size_t j = %zu;\n", ind, ind, k);
            emit_chan_params(e, p, in4);
            if (k + (size_t)L <= C)
                emit_chan_vector(e, p, io, at, e->lanes_str, in4);
            else
                emit_chan_part(e, p, io, at, m, in4);
            P("%s}\n", ind);
        }
        return;
    }
    P("%ssize_t j = 0;\n", ind);
    qg_c_steps_for(e, ind, "j", m, e->lanes_str);
    emit_chan_params(e, p, in4);
    emit_chan_vector(e, p, io, at, e->lanes_str, in4);
    P("%s}\n", ind);
    if (!e->lp->tail || (strcmp(m, "C") == 0 && e->lp->channels && e->lp->channels % (size_t)L == 0))
        return;
    P("%sif (j < %s) {\n", ind, m);
    emit_chan_params(e, p, in4);
    emit_chan_part(e, p, io, at, m, in4);
    P("%s}\n", ind);
}

/* The channel count of the walk: the spec's, or the caller's qparams'. */
static void emit_channel_count(emitter *e, const char *indent) {
    if (e->lp->channels)
        P("%sconst size_t C = %zu;\n", indent, e->lp->channels);
    else
        P("%sconst size_t C = qp->channels;\n", indent);
}

/* The entry's arguments but its qparams, named or declared. */
static void emit_rows_args(emitter *e, const qg_op_info *o, const char *float_t) {
    for (int k = 0, first = 1; k < o->nargs; k++) {
        if (o->args[k].kind == QG_ARG_QPARAMS)
            continue;
        S(first ? "" : ", ");
        first = 0;
        float_t ? qg_c_arg_decl(e->t, o, k, e->name, float_t, true) : (void)P("%s", o->args[k].name);
    }
}

/* NAME_<op>_rows__<isa>: the channels-last walk (inner == 1), out of line
 * so that qgen compare's loop search reads it alone (docs/compare.md).
 * Whole rows first, where the column count is C (a constant when the spec
 * fixes it, so the compiler unrolls the columns), then the last partial
 * row. The table's rows are restrict arguments, as the entry's fresh
 * allocation made them, so the columns' parameters stay in registers
 * across rows. */
static void emit_rows_function(emitter *e, const qg_plan *p, const op_io *io, const char *float_t) {
    const qg_op_info *o = qg_op_info_of(p->op);
    P("static __attribute__((noinline)) void %s_%s_rows__%s(", e->name, o->name, e->tg->name);
    emit_rows_args(e, o, float_t);
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++)
        if (p->uses[in])
            P(", const %s *restrict chan_%s", in == QG_IN_Z ? "int32_t" : "float", qg_c_input_names[in]);
    S(e->lp->channels ? ") {\n" : ", const size_t C) {\n");
    if (e->lp->channels)
        P("    const size_t C = %zu;\n", e->lp->channels);
    S("    size_t row = 0;\n");
    qg_c_steps_for(e, "    ", "row", "n", "C");
    emit_channels_last_row(e, p, io, "row", "C", "        ");
    S("    }\n");
    S("    if (row < n) {\n");
    S("        const size_t m = n - row;\n");
    emit_channels_last_row(e, p, io, "row", "m", "        ");
    S("    }\n}\n\n");
}

/* The entry's channels-last branch: the table, its rows, the table freed. */
static void emit_channels_last(emitter *e, const qg_plan *p) {
    const qg_op_info *o = qg_op_info_of(p->op);
    P("        %s_chan__%s cp;\n", e->name, e->tg->name);
    P("        if (%s_chan_init__%s(&cp, qp)) {\n", e->name, e->tg->name);
    P("            %s_%s_rows__%s(", e->name, o->name, e->tg->name);
    emit_rows_args(e, o, NULL);
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++)
        if (p->uses[in])
            P(", cp.%s", qg_c_input_names[in]);
    S(e->lp->channels ? ");\n" : ", C);\n");
    P("            %s_chan_free__%s(&cp);\n", e->name, e->tg->name);
    S("            return;\n        }\n");
    S("        /* out of memory for the parameter table: one element per run */\n");
}

/* Opens NAME_<op><infix>__<isa>: the entry itself, or (infix given) a static
 * function a runtime driver calls through its qg_<stem>_link_fn type, so its
 * q and float tensors are void pointers, typed again on the first lines. */
void qg_c_open_link(emitter *e, const qg_op_info *o, const char *infix) {
    if (!infix[0]) {
        qg_c_entry_open(e, o->op);
        return;
    }
    const char *float_t = e->lp->float_io == QG_FLOAT32 ? "float" : "uint16_t";
    P("static %s %s_%s%s__%s(", o->returns_status ? "qg_status" : "void", e->name, o->name, infix, e->tg->name);
    bool data[QG_OP_MAX_ARGS] = {false};
    for (int k = 0; k < o->nargs; k++) {
        const qg_arg_kind kind = o->args[k].kind;
        data[k] = kind == QG_ARG_Q_IN || kind == QG_ARG_Q_OUT || kind == QG_ARG_F32_IN || kind == QG_ARG_F32_OUT;
        S(k ? ", " : "");
        if (data[k])
            P("%svoid *%s_v", kind == QG_ARG_Q_IN || kind == QG_ARG_F32_IN ? "const " : "", o->args[k].name);
        else
            qg_c_arg_decl(e->t, o, k, e->name, float_t, true);
    }
    S(") {\n");
    for (int k = 0; k < o->nargs; k++) {
        if (!data[k])
            continue;
        S("    ");
        qg_c_arg_decl(e->t, o, k, e->name, float_t, true);
        P(" = %s_v;\n", o->args[k].name);
    }
}

/* NAME_<op><name>__<isa>(args) { qg_<driver>_<op>(&NAME_spec, NAME_<op><inner>__<isa>, args); }
 * (the runtime's per-group, 4-bit and 16-bit float drivers). */
static void emit_forwarder(emitter *e, const qg_op_info *o, const char *name, const char *driver, const char *inner) {
    qg_c_open_link(e, o, name);
    P("    %sqg_%s_%s(&%s_spec, %s_%s%s__%s, ", o->returns_status ? "return " : "", driver, o->driver_stem, e->name,
      e->name, o->name, inner, e->tg->name);
    qg_c_arg_names(e->t, o);
    S(");\n}\n\n");
}

/* The walk's body, after its opening line. */
static void emit_walk(emitter *e, const qg_plan *p) {
    op_io io = qg_c_io_of(e, p);
    const char *op = qg_kernel_op_name(p->op);
    const char *mask_arg = io.mask_in || io.mask_out ? ", mask" : "";
    if (e->lp->clear_mask_first)
        S("    if (mask)\n        memset(mask, 0, (n + 7) / 8);\n");
    if (e->lp->params == QG_PARAMS_NONE) {
        P("    %s_%s_span(dy, dx, mask, 0, n);\n}\n\n", e->name, op);
        return;
    }
    if (e->lp->walk == QG_WALK_WHOLE) {
        emit_param_values(e, p, "0", "    ");
        P("    %s_%s_span(%s, %s%s, 0, n", e->name, op, io.in_name, io.out_name, mask_arg);
        emit_param_args(e, p);
        S(");\n}\n\n");
        return;
    }
    emit_channel_count(e, "    ");
    S("    const size_t inner = qp->inner;\n");
    if (e->lp->channels_last_table) {
        S("    if (inner == 1) {\n");
        emit_channels_last(e, p);
        S("    }\n");
    }
    S("    const size_t run_len = inner ? inner : 1;\n");
    /* the channel counts along with the runs: a division per run costs more than a short run */
    S("    for (size_t c = 0, base = 0; base < n; c = c + 1 == C ? 0 : c + 1, base += run_len) {\n");
    S("        const size_t m = n - base < run_len ? n - base : run_len;\n");
    emit_param_values(e, p, "c", "        ");
    P("        %s_%s_span(%s, %s%s, base, m", e->name, op, io.in_name, io.out_name, mask_arg);
    emit_param_args(e, p);
    S(");\n    }\n}\n\n");
}

void qg_c_forwarders(emitter *e, const qg_op_info *o, const qg_entry_chain *ch) {
    for (int f = 0; f < ch->forwarders; f++)
        emit_forwarder(e, o, ch->name[f], ch->driver[f], ch->inner[f]);
}

void qg_c_entry(emitter *e, const qg_plan *p) {
    const qg_op_info *o = qg_op_info_of(p->op);
    qg_entry_chain ch;
    qg_entry_chain_of(e->lp, &ch);
    if (qg_c_has_rows(e)) {
        const op_io io = qg_c_io_of(e, p);
        /* the walk's float tensors: the entry's, or a driver link's (qg_c_open_link) */
        const char *float_t = !ch.walk[0] ? qg_c_float_t(e->sp) : e->lp->float_io == QG_FLOAT32 ? "float" : "uint16_t";
        emit_rows_function(e, p, &io, float_t);
    }
    qg_c_open_link(e, o, ch.walk);
    emit_walk(e, p);
    qg_c_forwarders(e, o, &ch);
}

/* Per-channel parameter table for the channels-last layout, padded to a
 * whole vector, filled by the runtime (qg_chan_table_fill: per-call set-up,
 * not the steady state). The allocation stays inline so the compiler knows
 * the table is a fresh object the walk's stores cannot reach. */
void qg_c_chan_table(emitter *e) {
    const char *n = e->name, *isa = e->tg->name;
    P("typedef struct %s_chan__%s {\n    float *s, *inv, *lo, *hi;\n    int32_t *z;\n} %s_chan__%s;\n\n", n, isa, n,
      isa);
    P("static int %s_chan_init__%s(%s_chan__%s *cp, const qg_qparams *qp) {\n", n, isa, n, isa);
    emit_channel_count(e, "    ");
    P("    const size_t padded = (C + %d) / %d * %d;\n", e->lanes ? e->lanes - 1 : 0, e->lanes ? e->lanes : 1,
      e->lanes ? e->lanes : 1);
    S("    float *f = malloc(padded * (4 * sizeof(float) + sizeof(int32_t)));\n");
    S("    if (!f)\n        return 0;\n");
    P("    qg_chan_table_fill(f, padded, qp, C, %lld, %lld);\n", e->lp->qmin, e->lp->qmax);
    S("    cp->s = f;\n    cp->inv = f + padded;\n    cp->lo = f + 2 * padded;\n    cp->hi = f + 3 * padded;\n");
    S("    cp->z = (int32_t *)(f + 4 * padded);\n");
    S("    return 1;\n}\n\n");
    P("static void %s_chan_free__%s(%s_chan__%s *cp) { free(cp->s); }\n\n", n, isa, n, isa);
}

/* requantize: runs of `inner` accumulators sharing one output channel's
 * multiplier m = fl(fl(s_in * s_w[c]) / s_out) and bias. */
void qg_c_requantize_entry(emitter *e, const qg_plan *p) {
    const char *n = e->name;
    qg_c_entry_open(e, p->op);
    S("    const size_t C = rp->channels ? rp->channels : 1;\n");
    S("    const size_t run_len = C == 1 ? (n ? n : 1) : (rp->inner ? rp->inner : 1);\n");
    /* the channel counts along with the runs: a division per run costs more than a short run */
    S("    for (size_t c = 0, base = 0; base < n; c = c + 1 == C ? 0 : c + 1, base += run_len) {\n");
    S("        const size_t m = n - base < run_len ? n - base : run_len;\n");
    S("        const float s0 = rp->s_in * rp->s_w[c] / rp->s_out;\n");
    S("        const int32_t b0 = rp->bias_q ? rp->bias_q[c] : 0, z0 = rp->z_out;\n");
    P("        %s_requantize_span(acc, q, base, m", n);
    emit_param_args(e, p);
    S(");\n    }\n}\n\n");
}

/* An entry point that forwards to the op's runtime reference. */
void qg_c_by_reference(emitter *e, qg_kernel_op op) {
    const qg_op_info *o = qg_op_info_of(op);
    qg_c_entry_open(e, op);
    P("    %s(&%s_spec, ", o->reference, e->name);
    qg_c_arg_names(e->t, o);
    S(");\n}\n\n");
}

/* qint32 and float zero points: the scalar "kernels" are the runtime's
 * reference itself (vector ISAs refuse these specs). */
void qg_c_reference_entries(emitter *e) {
    S("/* This spec's arithmetic (qint32, or float zero points) needs more than\n"
      " * fp32 lanes; the scalar kernels are the runtime's reference. */\n");
    for (qg_kernel_op op = QG_K_QUANTIZE; op <= QG_K_FAKE_QUANT_BACKWARD; op++)
        qg_c_by_reference(e, op);
}
