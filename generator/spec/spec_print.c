/* The canonical form of a resolved spec: every field, a fixed order, floats
 * in the shortest decimal that reads back to the same fp32 value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../util/text_buf.h"
#include "spec_internal.h"
#include "arg_check.h"

/* A JSON real whose printed digits are the shortest that round-trip the
 * fp32 value (0.01f prints as 0.01, not 0.0099999997764825821). */
static json_t *float_json(float f) {
    char buf[32];
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, (double)f);
        if ((float)strtod(buf, NULL) == f)
            break;
    }
    return json_real(strtod(buf, NULL));
}

/* Adds v (owned) under k; a NULL object or value, or a failed insertion,
 * clears *ok. */
static void set(bool *ok, json_t *o, const char *k, json_t *v) {
    if (json_object_set_new(o, k, v) != 0)
        *ok = false;
}
static void append(bool *ok, json_t *a, json_t *v) {
    if (json_array_append_new(a, v) != 0)
        *ok = false;
}

/* json_dump_callback's sink. json_dumps under a failing allocation can
 * return text with pieces missing (jansson 2.14's string buffer); a
 * qg_text remembers a failed append, so the caller never takes such text. */
static int dump_to(const char *buf, size_t size, void *data) {
    qg_text *t = data;
    qg_text_append(t, buf, size);
    return t->failed ? -1 : 0;
}

char *qg_spec_to_json(const qg_spec *sp) {
    if (!sp || qg_spec_validate(sp, NULL))
        return NULL;
    bool ok = true; /* every value made and added: a failed allocation drops none silently */
    json_t *o = json_object();
    set(&ok, o, "name", json_string(sp->name));
    if (sp->block != QG_BLOCK_NONE) { /* the format fixes dtype, qscheme, groups, range and rounding */
        set(&ok, o, "block", json_string(qg_block_format_name(sp->block)));
    } else {
        set(&ok, o, "dtype", json_string(qg_dtype_name(sp->dtype)));
        set(&ok, o, "qscheme", json_string(qg_qscheme_name(sp->qscheme)));
        set(&ok, o, "ch_axis", json_integer(sp->ch_axis));
        set(&ok, o, "channel_len", json_integer((json_int_t)sp->channel_len));
        if (qg_qscheme_is_per_group(sp->qscheme))
            set(&ok, o, "group_size", json_integer((json_int_t)sp->group_size));
        set(&ok, o, "quant_min", sp->custom_range ? json_integer(sp->given_quant_min) : json_null());
        set(&ok, o, "quant_max", sp->custom_range ? json_integer(sp->given_quant_max) : json_null());
        set(&ok, o, "reduce_range", json_boolean(sp->reduce_range));
    }
    set(&ok, o, "saturate", json_boolean(sp->saturate));
    set(&ok, o, "compat_mask", json_boolean(sp->compat_mask));
    set(&ok, o, "in_place", json_boolean(sp->in_place));
    set(&ok, o, "fast_training", json_boolean(sp->fast_training));
    set(&ok, o, "train_qparams", json_string(qg_train_qparams_name(sp->train_qparams)));
    if (sp->block == QG_BLOCK_NONE) {
        set(&ok, o, "rounding", json_string(qg_rounding_name(sp->rounding)));
        set(&ok, o, "scale_op", json_string(qg_scale_op_name(sp->scale_op)));
    }
    set(&ok, o, "nan", json_string(qg_nan_policy_name(sp->nan_policy)));
    set(&ok, o, "requant", json_string(qg_requant_name(sp->requant)));
    if (sp->float_type != QG_FLOAT32) /* float32 specs print as before */
        set(&ok, o, "float_type", json_string(qg_float_type_name(sp->float_type)));
    json_t *ob = json_object();
    set(&ok, ob, "type", json_string(qg_observer_type_name(sp->observer.type)));
    set(&ok, ob, "averaging_constant", float_json(sp->observer.averaging_constant));
    set(&ok, ob, "eps", float_json(sp->observer.eps));
    set(&ok, ob, "bins", json_integer(sp->observer.bins));
    set(&ok, ob, "upsample_rate", json_integer(sp->observer.upsample_rate));
    if (sp->observer.type == QG_OBS_HISTOGRAM)
        set(&ok, ob, "histc_range", json_string(qg_histc_range_name(sp->observer.histc_int)));
    if (sp->observer.type == QG_OBS_FIXED_QPARAMS) {
        set(&ok, ob, "scale", float_json(sp->observer.fixed_scale));
        set(&ok, ob, "zero_point", json_integer(sp->observer.fixed_zero_point));
    }
    set(&ok, o, "observer", ob);
    json_t *t = json_array();
    for (int i = 0; i < QG_ISA_COUNT; i++)
        if (sp->targets & (1u << i))
            append(&ok, t, json_string(qg_isa_name((qg_isa)i)));
    set(&ok, o, "targets", t);
    qg_text text = {0};
    ok =
        ok && json_dump_callback(o, dump_to, &text, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) == 0;
    json_decref(o);
    qg_text_puts(&text, "\n");
    if (!ok || text.failed || !text.p) {
        qg_text_free(&text);
        return NULL;
    }
    return text.p; /* the caller frees it with free() */
}
