/* The C backend's entry points: the channel layout walk (per tensor, runs
 * of `inner`, channels-last through a parameter table), the parameters
 * derived per channel, requantize's runs and the by-reference forwarders. */
#include <stdio.h>
#include <string.h>

#include "c_kernel.h"
#include "c_signature.h"

/* NAME_<op>__<isa>(args) { */
void qg_c_entry_open(emitter *e, qg_kernel_op op) {
    char suffix[32];
    snprintf(suffix, sizeof suffix, "__%s", e->tg->name);
    qg_c_prototype(e->t, qg_op_info_of(op), e->name, qg_c_float_t(e->sp), suffix);
    S(" {\n");
}

/* NAME_<op>_rows__<isa>(in, out, [mask,] n, the table's rows, [C]) {
 * -- the rows themselves are lowered (lower/lower_rows.c). The table's
 * rows are restrict arguments, as the entry's fresh allocation made them,
 * so the columns' parameters stay in registers across rows. */
void qg_c_rows_open(emitter *e, const qg_plan *p) {
    const op_io io = qg_c_io_of(e, p);
    P("static __attribute__((noinline)) void %s_%s_rows__%s(%s, %s%s, size_t n", e->name, qg_kernel_op_name(p->op),
      e->tg->name, io.in_decl, io.out_decl,
      io.mask_in    ? ", const uint8_t *mask"
      : io.mask_out ? ", uint8_t *mask"
                    : "");
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++)
        if (p->uses[in])
            P(", const %s *restrict chan_%s", in == QG_IN_Z ? "int32_t" : "float", qg_c_input_names[in]);
    S(e->lp->channels ? ") {\n" : ", const size_t C) {\n");
    if (e->lp->channels)
        P("    const size_t C = %zu;\n", e->lp->channels);
    if (e->scalable) /* whole registers; a partial column opens its own strip */
        P("    const %s %s = %s;\n", e->is->strip_type, e->is->strip_name, e->is->strip_all);
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
