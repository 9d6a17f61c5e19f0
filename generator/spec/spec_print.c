/* The canonical form of a resolved spec: every field, a fixed order, floats
 * in the shortest decimal that reads back to the same fp32 value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

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

char *qg_spec_to_json(const qg_spec *sp) {
    if (!sp || qg_spec_validate(sp, NULL))
        return NULL;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(sp->name));
    json_object_set_new(o, "dtype", json_string(qg_dtype_name(sp->dtype)));
    json_object_set_new(o, "qscheme", json_string(qg_qscheme_name(sp->qscheme)));
    json_object_set_new(o, "ch_axis", json_integer(sp->ch_axis));
    json_object_set_new(o, "channel_len", json_integer((json_int_t)sp->channel_len));
    if (qg_qscheme_is_per_group(sp->qscheme))
        json_object_set_new(o, "group_size", json_integer((json_int_t)sp->group_size));
    json_object_set_new(o, "quant_min", sp->custom_range ? json_integer(sp->given_quant_min) : json_null());
    json_object_set_new(o, "quant_max", sp->custom_range ? json_integer(sp->given_quant_max) : json_null());
    json_object_set_new(o, "reduce_range", json_boolean(sp->reduce_range));
    json_object_set_new(o, "saturate", json_boolean(sp->saturate));
    json_object_set_new(o, "compat_mask", json_boolean(sp->compat_mask));
    json_object_set_new(o, "in_place", json_boolean(sp->in_place));
    json_object_set_new(o, "fast_training", json_boolean(sp->fast_training));
    json_object_set_new(o, "train_qparams", json_string(qg_train_qparams_name(sp->train_qparams)));
    json_object_set_new(o, "rounding", json_string(qg_rounding_name(sp->rounding)));
    json_object_set_new(o, "scale_op", json_string(qg_scale_op_name(sp->scale_op)));
    json_object_set_new(o, "nan", json_string(qg_nan_policy_name(sp->nan_policy)));
    json_object_set_new(o, "requant", json_string(qg_requant_name(sp->requant)));
    if (sp->float_type != QG_FLOAT32) /* float32 specs print as before */
        json_object_set_new(o, "float_type", json_string(qg_float_type_name(sp->float_type)));
    json_t *ob = json_object();
    json_object_set_new(ob, "type", json_string(qg_observer_type_name(sp->observer.type)));
    json_object_set_new(ob, "averaging_constant", float_json(sp->observer.averaging_constant));
    json_object_set_new(ob, "eps", float_json(sp->observer.eps));
    json_object_set_new(ob, "bins", json_integer(sp->observer.bins));
    json_object_set_new(ob, "upsample_rate", json_integer(sp->observer.upsample_rate));
    if (sp->observer.type == QG_OBS_HISTOGRAM)
        json_object_set_new(ob, "histc_range", json_string(qg_histc_range_name(sp->observer.histc_int)));
    if (sp->observer.type == QG_OBS_FIXED_QPARAMS) {
        json_object_set_new(ob, "scale", float_json(sp->observer.fixed_scale));
        json_object_set_new(ob, "zero_point", json_integer(sp->observer.fixed_zero_point));
    }
    json_object_set_new(o, "observer", ob);
    json_t *t = json_array();
    for (int i = 0; i < QG_ISA_COUNT; i++)
        if (sp->targets & (1u << i))
            json_array_append_new(t, json_string(qg_isa_name((qg_isa)i)));
    json_object_set_new(o, "targets", t);
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    json_decref(o);
    if (!text)
        return NULL;
    size_t n = strlen(text);
    char *out = malloc(n + 2);
    if (out) {
        memcpy(out, text, n);
        out[n] = '\n';
        out[n + 1] = 0;
    }
    free(text);
    return out;
}
