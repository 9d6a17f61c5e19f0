/* The op table (see kernel_ops.h). */
#include "kernel_ops.h"

#include <string.h>

#include "qgen/kernel_support.h"

#define CALLEE(f)                                                                                                      \
    { #f, (void (*)(void))f }

static const qg_op_info ops[QG_K_OP_COUNT] = {
    [QG_K_QUANTIZE] = {QG_K_QUANTIZE,
                       "quantize",
                       false,
                       4,
                       {{QG_ARG_F32_IN, "x"}, {QG_ARG_Q_OUT, "q"}, {QG_ARG_N, "n"}, {QG_ARG_QPARAMS, "qp"}},
                       "qg_ref_quantize",
                       QG_IN_X,
                       "quantize",
                       {CALLEE(qg_ref_quantize), CALLEE(qg_group_quantize), CALLEE(qg_pack4_quantize),
                        CALLEE(qg_ftype_quantize)}},
    [QG_K_DEQUANTIZE] = {QG_K_DEQUANTIZE,
                         "dequantize",
                         false,
                         4,
                         {{QG_ARG_Q_IN, "q"}, {QG_ARG_F32_OUT, "y"}, {QG_ARG_N, "n"}, {QG_ARG_QPARAMS, "qp"}},
                         "qg_ref_dequantize",
                         QG_IN_Q,
                         "dequantize",
                         {CALLEE(qg_ref_dequantize), CALLEE(qg_group_dequantize), CALLEE(qg_pack4_dequantize),
                          CALLEE(qg_ftype_dequantize)}},
    [QG_K_FAKE_QUANT] = {QG_K_FAKE_QUANT,
                         "fake_quant",
                         false,
                         5,
                         {{QG_ARG_F32_IN, "x"},
                          {QG_ARG_F32_OUT, "y"},
                          {QG_ARG_MASK_OUT, "mask"},
                          {QG_ARG_N, "n"},
                          {QG_ARG_QPARAMS, "qp"}},
                         "qg_ref_fake_quant",
                         QG_IN_X,
                         "fake_quant",
                         {CALLEE(qg_ref_fake_quant), CALLEE(qg_group_fake_quant), CALLEE(qg_ftype_fake_quant)}},
    [QG_K_FAKE_QUANT_BACKWARD] =
        {QG_K_FAKE_QUANT_BACKWARD,
         "fake_quant_backward",
         false,
         4,
         {{QG_ARG_F32_IN, "dy"}, {QG_ARG_MASK_IN, "mask"}, {QG_ARG_F32_OUT, "dx"}, {QG_ARG_N, "n"}},
         "qg_ref_fake_quant_backward",
         QG_IN_DY,
         "fake_quant_backward",
         {CALLEE(qg_ref_fake_quant_backward), CALLEE(qg_ftype_fake_quant_backward)}},
    [QG_K_OBSERVE] = {QG_K_OBSERVE,
                      "observe",
                      true,
                      5,
                      {{QG_ARG_F32_IN, "x"},
                       {QG_ARG_N, "n"},
                       {QG_ARG_INNER, "inner"},
                       {QG_ARG_OBSERVER, "obs"},
                       {QG_ARG_ERROR, "err"}},
                      NULL,
                      QG_IN_X,
                      NULL,
                      {CALLEE(qg_observe_with), CALLEE(qg_observe16_with)}},
    [QG_K_REQUANTIZE] = {QG_K_REQUANTIZE,
                         "requantize",
                         false,
                         4,
                         {{QG_ARG_ACC_IN, "acc"}, {QG_ARG_Q_OUT, "q"}, {QG_ARG_N, "n"}, {QG_ARG_REQUANT, "rp"}},
                         "qg_ref_requantize",
                         QG_IN_Q,
                         NULL,
                         {CALLEE(qg_ref_requantize)}},
};

const char *qg_kernel_op_name(qg_kernel_op op) { return op < QG_K_OP_COUNT ? ops[op].name : "?"; }

const qg_op_info *qg_op_info_of(qg_kernel_op op) { return op < QG_K_OP_COUNT ? &ops[op] : NULL; }

const char *qg_op_driver(const qg_op_info *op, const char *driver) {
    const size_t len = strlen(driver);
    for (size_t k = 0; k < sizeof op->callees / sizeof op->callees[0]; k++) {
        const char *name = op->callees[k].name;
        if (name && op->driver_stem && strncmp(name, "qg_", 3) == 0 && strncmp(name + 3, driver, len) == 0 &&
            name[3 + len] == '_' && strcmp(name + 4 + len, op->driver_stem) == 0)
            return name;
    }
    return NULL;
}

int qg_op_arg_index(const qg_op_info *op, qg_arg_kind kind) {
    for (int k = 0; k < op->nargs; k++)
        if (op->args[k].kind == kind)
            return k;
    return -1;
}

int qg_op_data_in(const qg_op_info *op) {
    for (int k = 0; k < op->nargs; k++)
        if (op->args[k].kind == QG_ARG_F32_IN || op->args[k].kind == QG_ARG_Q_IN || op->args[k].kind == QG_ARG_ACC_IN)
            return k;
    return -1;
}

int qg_op_data_out(const qg_op_info *op) {
    for (int k = 0; k < op->nargs; k++)
        if (op->args[k].kind == QG_ARG_F32_OUT || op->args[k].kind == QG_ARG_Q_OUT)
            return k;
    return -1;
}
