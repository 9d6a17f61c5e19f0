/* The loops around a plan (kernel_loops.h), from the spec, the op table and
 * the ISA table. */
#include "kernel_loops.h"

#include <stdio.h>
#include <string.h>

#include "../targets/target_table.h"
#include "kernel_ops.h"

static qg_elem elem_of(qg_arg_kind kind, qg_float_type float_io) {
    switch (kind) {
    case QG_ARG_Q_IN:
    case QG_ARG_Q_OUT: return QG_ELEM_Q;
    case QG_ARG_ACC_IN: return QG_ELEM_ACC32;
    default: return float_io == QG_FLOAT32 ? QG_ELEM_F32 : QG_ELEM_CODE16;
    }
}

void qg_kernel_loops_of(const qg_spec *sp, qg_isa isa, qg_kernel_op op, qg_kernel_loops *out) {
    const qg_op_info *o = qg_op_info_of(op);
    const qg_target *t = qg_target_of(isa);
    const qg_mask_io mask = sp->compat_mask ? QG_MASK_BITS : QG_MASK_BYTES;
    memset(out, 0, sizeof *out);
    out->qmin = sp->quant_min;
    out->qmax = sp->quant_max;
    out->mask_in = qg_op_arg_index(o, QG_ARG_MASK_IN) >= 0 ? mask : QG_MASK_NONE;
    out->mask_out = qg_op_arg_index(o, QG_ARG_MASK_OUT) >= 0 ? mask : QG_MASK_NONE;
    out->clear_mask_first = out->mask_out == QG_MASK_BITS;
    if (op == QG_K_REQUANTIZE) {
        out->walk = QG_WALK_REQUANT_RUNS;
        out->params = QG_PARAMS_REQUANT;
    } else if (qg_op_arg_index(o, QG_ARG_QPARAMS) < 0) {
        out->walk = QG_WALK_WHOLE;
        out->params = QG_PARAMS_NONE;
    } else {
        const bool fixed = sp->observer.type == QG_OBS_FIXED_QPARAMS;
        out->params = fixed ? QG_PARAMS_FIXED : QG_PARAMS_QPARAMS;
        out->fixed_scale = sp->observer.fixed_scale;
        out->fixed_zero_point = sp->observer.fixed_zero_point;
        const bool grouped = qg_qscheme_is_per_group(sp->qscheme);
        out->walk = qg_qscheme_is_per_channel(sp->qscheme) || grouped ? QG_WALK_CHANNEL_RUNS : QG_WALK_WHOLE;
        out->channels = grouped ? 0 : out->walk == QG_WALK_CHANNEL_RUNS ? sp->channel_len : 1;
        out->channels_last_table = grouped || out->channels > 1;
        out->group_driver = grouped;
    }
    out->lanes = t->lanes;
    out->block_group = t->lanes == 8 || t->lanes == 16 ? t->lanes : 4;
    out->lmul = qg_target_lmul(t, qg_kernel_op_name(op));
    out->row_written_out = out->channels_last_table && t->lanes && out->channels && out->channels / t->lanes <= 16;
    out->unroll = t->unroll;
    out->tail = t->lanes != 1;
    out->tail_kind = strcmp(t->tail, "buffered") == 0 ? QG_TAIL_BUFFERED
                     : strcmp(t->tail, "evl") == 0    ? QG_TAIL_EVL
                                                      : QG_TAIL_MASKED;
    const int data_out = qg_op_data_out(o); /* observe has none */
    const bool narrow_out = data_out >= 0 && o->args[data_out].kind == QG_ARG_Q_OUT;
    const qg_dtype kd = qg_kernel_dtype(sp);
    out->group_store = narrow_out && qg_target_lists(t->group_store, qg_dtype_name(kd));
    /* 8-bit integer q of a valid zero point (qg_qparams_validate): z, and
     * q - z above qmin - z, stay inside 16 bits */
    out->group_store_adds_z = out->group_store && op == QG_K_QUANTIZE && sp->rounding == QG_ROUND_HALF_EVEN &&
                              !qg_dtype_is_float8(sp->dtype) && (kd == QG_QINT8 || kd == QG_QUINT8) &&
                              strcmp(t->round_cvt, "in_range") != 0 &&
                              qg_target_lists(t->group_store_adds_z, qg_dtype_name(kd));
    /* vectors of fewer lanes than a byte of mask bits (NEON's 4): the main
     * loop stores or reads its four vectors' bits at once, two whole bytes;
     * a byte mask output is narrowed and stored as one 16-byte vector */
    out->group_mask =
        ((out->mask_out == QG_MASK_BITS || out->mask_in == QG_MASK_BITS) && qg_target_lists(t->group_mask, "bits")) ||
        (out->mask_out == QG_MASK_BYTES && qg_target_lists(t->group_mask, "bytes"));
    out->pack4 = qg_dtype_is_packed(sp->dtype) && (op == QG_K_QUANTIZE || op == QG_K_DEQUANTIZE);
    /* observe converts in its min/max span; the drivers move 16-bit codes */
    out->float_io = op != QG_K_REQUANTIZE ? sp->float_type : QG_FLOAT32;
    const int data_in = qg_op_data_in(o);
    out->elem_in = elem_of(o->args[data_in].kind, out->float_io);
    out->elem_out = data_out >= 0 ? elem_of(o->args[data_out].kind, out->float_io) : QG_ELEM_NONE;
    out->align_out = narrow_out ? false : data_out >= 0;
    const bool wide = out->align_out || o->args[data_in].kind != QG_ARG_Q_IN; /* float or int32 tensor */
    out->align_bytes = (unsigned)t->lanes * (out->float_io == QG_FLOAT32 ? 4u : 2u);
    out->align_head = out->tail && t->lanes > 1 && out->align_bytes > 16 && wide && op != QG_K_OBSERVE &&
                      out->mask_in != QG_MASK_BITS && out->mask_out != QG_MASK_BITS;
    out->align_min = (unsigned)(2 * t->lanes * t->unroll);
}

qg_plan_io qg_plan_io_for(const qg_spec *sp, qg_isa isa, qg_kernel_op op) {
    qg_kernel_loops lp;
    qg_kernel_loops_of(sp, isa, op, &lp);
    const qg_target *t = qg_target_of(isa);
    const qg_round_even_way rne = strcmp(t->round_even, "conversions") == 0 ? QG_RNE_CONVERSIONS
                                  : strcmp(t->round_even, "magic_add") == 0 ? QG_RNE_MAGIC_ADD
                                                                            : QG_RNE_INSTRUCTION;
    const qg_plan_io io = {lp.float_io,
                           strcmp(t->float16_convert, "instructions") == 0,
                           rne,
                           lp.group_store_adds_z,
                           strcmp(t->round_cvt, "saturating_nan_zero") == 0 && strcmp(t->minmax_nan, "propagate") == 0,
                           strcmp(t->round_cvt, "in_range") == 0,
                           strcmp(t->nan_check, "per_iteration") == 0,
                           strcmp(t->minmax_nan, "propagate") != 0};
    return io;
}

qg_status qg_plan_build_for(const qg_spec *sp, qg_isa isa, qg_kernel_op op, qg_plan *p, qg_error *err) {
    const qg_plan_io io = qg_plan_io_for(sp, isa, op);
    return qg_plan_build_io(sp, op, &io, p, err);
}

bool qg_plan_observe_widening(const qg_spec *sp, qg_isa isa, qg_plan *p) {
    const qg_plan_io io = qg_plan_io_for(sp, isa, QG_K_OBSERVE);
    if (io.float_type == QG_FLOAT32)
        return false;
    qg_plan_build_conversion(&io, false, p);
    p->op = QG_K_OBSERVE;
    snprintf(p->formula, sizeof p->formula, "x = the float32 value of the %s code", qg_float_type_name(io.float_type));
    return true;
}

qg_dtype qg_kernel_dtype(const qg_spec *sp) {
    if (qg_dtype_is_float8(sp->dtype)) /* codes 0..255 */
        return QG_QUINT8;
    return sp->dtype == QG_QINT4 ? QG_QINT8 : sp->dtype == QG_QUINT4 ? QG_QUINT8 : sp->dtype;
}

/* A function a driver wraps is named after the driver: the per-group
 * walk "_blocks", the byte kernels of 4-bit dtypes "_bytes". The outermost
 * link is the entry. */
void qg_entry_chain_of(const qg_kernel_loops *lp, qg_entry_chain *out) {
    memset(out, 0, sizeof *out);
    static const char *const infix[] = {"_blocks", "_bytes", "_f32"}, *const driver[] = {"group", "pack4", "ftype"};
    const bool on[] = {lp->group_driver, lp->pack4, lp->ftype_driver};
    int wraps[3], count = 0;
    for (int k = 0; k < 3; k++)
        if (on[k])
            wraps[count++] = k;
    out->walk = count ? infix[wraps[0]] : "";
    for (int f = 0; f < count; f++) {
        out->name[f] = f + 1 < count ? infix[wraps[f + 1]] : "";
        out->driver[f] = driver[wraps[f]];
        out->inner[f] = f ? out->name[f - 1] : out->walk;
    }
    out->forwarders = count;
}
