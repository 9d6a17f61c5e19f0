/* C spellings of the op table's entry points (plan/kernel_ops.h). */
#include "c_signature.h"

static const char *c_type(qg_arg_kind kind) {
    switch (kind) {
    case QG_ARG_F32_IN: return "const $b *";
    case QG_ARG_F32_OUT: return "$b *";
    case QG_ARG_Q_IN: return "const $a_q_t *";
    case QG_ARG_Q_OUT: return "$a_q_t *";
    case QG_ARG_ACC_IN: return "const int32_t *";
    case QG_ARG_MASK_IN: return "const uint8_t *";
    case QG_ARG_MASK_OUT: return "uint8_t *";
    case QG_ARG_N:
    case QG_ARG_INNER: return "size_t ";
    case QG_ARG_QPARAMS: return "const qg_qparams *";
    case QG_ARG_REQUANT: return "const qg_requant_params *";
    case QG_ARG_OBSERVER: return "qg_observer *";
    case QG_ARG_ERROR: return "qg_error *";
    }
    return "?";
}

const char *qg_c_float_t(const qg_spec *spec) { return spec->float_type == QG_FLOAT32 ? "float" : "uint16_t"; }

void qg_c_arg_decl(qg_text *t, const qg_op_info *op, int k, const char *spec_name, const char *float_t,
                   bool with_name) {
    qg_text_spell(t, c_type(op->args[k].kind), spec_name, float_t, NULL);
    if (with_name)
        qg_text_puts(t, op->args[k].name);
    else if (t->len && t->p[t->len - 1] == ' ')
        t->p[--t->len] = 0;
}

void qg_c_params(qg_text *t, const qg_op_info *op, const char *spec_name, const char *float_t, bool with_names) {
    for (int k = 0; k < op->nargs; k++) {
        if (k)
            qg_text_puts(t, ", ");
        qg_c_arg_decl(t, op, k, spec_name, float_t, with_names);
    }
}

void qg_c_arg_names(qg_text *t, const qg_op_info *op) {
    for (int k = 0; k < op->nargs; k++)
        qg_text_printf(t, "%s%s", k ? ", " : "", op->args[k].name);
}

void qg_c_prototype(qg_text *t, const qg_op_info *op, const char *spec_name, const char *float_t, const char *suffix) {
    qg_text_printf(t, "%s %s_%s%s(", op->returns_status ? "qg_status" : "void", spec_name, op->name, suffix);
    qg_c_params(t, op, spec_name, float_t, true);
    qg_text_puts(t, ")");
}
