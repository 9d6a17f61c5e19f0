/* Reading a spec from JSON: presets, the file's fields and --set overrides,
 * layered in that order, then converted field by field with errors that
 * point at the file, line and column. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "qgen/blocks.h"
#include "spec_internal.h"
#include "arg_check.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const top_fields[] = {
    "name",      "base",         "dtype",    "qscheme",     "ch_axis",       "channel_len",   "group_size", "quant_min",
    "quant_max", "reduce_range", "saturate", "compat_mask", "in_place",      "fast_training", "rounding",   "scale_op",
    "nan",       "requant",      "observer", "targets",     "train_qparams", "float_type",    "block"};
static const char *const observer_fields[] = {"type",  "averaging_constant", "eps",        "bins", "upsample_rate",
                                              "scale", "zero_point",         "histc_range"};

typedef struct ctx {
    const char *origin; /* file name, for messages */
    const char *text;   /* the spec's text, to find a field's line and column */
    const char *base;   /* the preset in use, or NULL */
    json_t *set_from;   /* field path -> the --set argument that gave it */
    qg_error *err;
} ctx;

/* ---- where a field came from ------------------------------------------ */

static long find_key(const char *text, const char *key, long from) {
    size_t klen = strlen(key);
    for (const char *p = text + from; (p = strchr(p, '"')) != NULL; p++) {
        if (strncmp(p + 1, key, klen) == 0 && p[1 + klen] == '"') {
            const char *q = p + 2 + klen;
            while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
                q++;
            if (*q == ':')
                return (long)(p - text);
        }
    }
    return -1;
}

/* "file:line:col", "--set k=v" or "preset NAME" for a field path such as
 * "dtype" or "observer.type". */
static void locate(const ctx *c, const char *path, char *out, size_t cap) {
    json_t *s = json_object_get(c->set_from, path);
    if (s) {
        snprintf(out, cap, "--set %s", json_string_value(s));
        return;
    }
    long pos = -1;
    const char *dot = strchr(path, '.');
    if (c->text) {
        if (dot) {
            char head[64];
            snprintf(head, sizeof head, "%.*s", (int)(dot - path), path);
            long h = find_key(c->text, head, 0);
            if (h >= 0)
                pos = find_key(c->text, dot + 1, h);
        } else {
            pos = find_key(c->text, path, 0);
        }
    }
    if (pos < 0) {
        if (c->base)
            snprintf(out, cap, "%s (from preset %s)", c->origin, c->base);
        else
            snprintf(out, cap, "%s", c->origin);
        return;
    }
    int line = 1, col = 1;
    for (long i = 0; i < pos; i++) {
        if (c->text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    snprintf(out, cap, "%s:%d:%d", c->origin, line, col);
}

/* At most 60 characters of s, with "..." when cut: a huge name or value
 * must not push "expected ..." out of the message. */
static const char *clip(const char *s, char out[72]) {
    snprintf(out, 72, "%.60s%s", s, strlen(s) > 60 ? "..." : "");
    return out;
}

static qg_status field_error(const ctx *c, const char *path, const json_t *value, const char *expected) {
    char where[300], vbuf[72], pbuf[72];
    locate(c, path, where, sizeof where);
    char *v = value ? json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    qg_status st = qg_error_set(c->err, QG_ERR_INVALID, "%s: %s: got %s; expected %s", where, clip(path, pbuf),
                                v ? clip(v, vbuf) : "nothing", expected);
    free(v);
    return st;
}

static qg_status unknown_field(const ctx *c, const char *path, const char *key, const char *const *valid, size_t n) {
    char where[300], pbuf[72];
    path = clip(path, pbuf);
    locate(c, path, where, sizeof where);
    const char *near = qg_closest_name(key, valid, n);
    char list[400] = "";
    for (size_t i = 0; i < n; i++) {
        strncat(list, valid[i], sizeof list - strlen(list) - 1);
        if (i + 1 < n)
            strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    if (near)
        return qg_error_set(c->err, QG_ERR_INVALID, "%s: unknown field \"%s\"; did you mean \"%s\"? (valid: %s)", where,
                            path, near, list);
    return qg_error_set(c->err, QG_ERR_INVALID, "%s: unknown field \"%s\"; expected one of %s", where, path, list);
}

/* ---- typed getters ------------------------------------------------------ */

static qg_status get_enum(const ctx *c, json_t *obj, const char *key, const char *path, const char *(*name_of)(int),
                          int count, int *out) {
    json_t *v = json_object_get(obj, key);
    if (!v)
        return QG_OK;
    char expected[300] = "one of ";
    for (int i = 0; i < count; i++) {
        strncat(expected, name_of(i), sizeof expected - strlen(expected) - 1);
        if (i + 1 < count)
            strncat(expected, ", ", sizeof expected - strlen(expected) - 1);
    }
    if (json_is_string(v))
        for (int i = 0; i < count; i++)
            if (strcmp(json_string_value(v), name_of(i)) == 0) {
                *out = i;
                return QG_OK;
            }
    return field_error(c, path, v, expected);
}

static qg_status get_bool(const ctx *c, json_t *obj, const char *key, bool *out) {
    json_t *v = json_object_get(obj, key);
    if (!v)
        return QG_OK;
    if (!json_is_boolean(v))
        return field_error(c, key, v, "true or false");
    *out = json_is_true(v);
    return QG_OK;
}

static qg_status get_int(const ctx *c, json_t *obj, const char *key, const char *path, long long lo, long long hi,
                         long long *out) {
    json_t *v = json_object_get(obj, key);
    if (!v)
        return QG_OK;
    char expected[128];
    snprintf(expected, sizeof expected, "an integer in %lld..%lld", lo, hi);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return field_error(c, path, v, expected);
    *out = json_integer_value(v);
    return QG_OK;
}

static qg_status get_float(const ctx *c, json_t *obj, const char *key, const char *path, float *out) {
    json_t *v = json_object_get(obj, key);
    if (!v)
        return QG_OK;
    if (!json_is_number(v) || !isfinite(json_number_value(v)) || fabs(json_number_value(v)) > FLT_MAX)
        return field_error(c, path, v, "a finite number");
    *out = (float)json_number_value(v);
    return QG_OK;
}

/* Enum name tables as int-indexed functions for get_enum. */
static const char *dtype_n(int i) { return qg_dtype_name((qg_dtype)i); }
static const char *qscheme_n(int i) { return qg_qscheme_name((qg_qscheme)i); }
static const char *rounding_n(int i) { return qg_rounding_name((qg_rounding)i); }
static const char *scale_op_n(int i) { return qg_scale_op_name((qg_scale_op)i); }
static const char *nan_n(int i) { return qg_nan_policy_name((qg_nan_policy)i); }
static const char *requant_n(int i) { return qg_requant_name((qg_requant_scheme)i); }
static const char *train_qparams_n(int i) { return qg_train_qparams_name((qg_train_qparams)i); }
static const char *observer_n(int i) { return qg_observer_type_name((qg_observer_type)i); }
static const char *float_type_n(int i) { return qg_float_type_name((qg_float_type)i); }
static const char *block_n(int i) { return qg_block_format_name((qg_block_format)i); }

/* A block format fixes its codes, its groups and how their scales are
 * computed (docs/semantics.md, "Block formats"): the fields that say so for
 * other specs are refused beside it, and set here as the rest of qgen reads
 * them (per-group along the last axis, 8-bit codes). */
static qg_status convert_block(const ctx *c, json_t *m, qg_spec *sp) {
    static const char *const fixed[] = {"dtype",     "qscheme",   "ch_axis",      "channel_len", "group_size",
                                        "quant_min", "quant_max", "reduce_range", "rounding",    "scale_op"};
    int block = QG_BLOCK_NONE;
    qg_status st = get_enum(c, m, "block", "block", block_n, QG_BLOCK_FORMAT_COUNT, &block);
    if (st || block == QG_BLOCK_NONE)
        return st;
    const char *name = qg_block_format_name((qg_block_format)block);
    for (size_t i = 0; i < COUNT(fixed); i++) {
        json_t *v = json_object_get(m, fixed[i]);
        if (v) {
            char expected[160];
            snprintf(expected, sizeof expected, "no %s beside block %s (the format fixes it)", fixed[i], name);
            return field_error(c, fixed[i], v, expected);
        }
    }
    sp->block = (qg_block_format)block;
    sp->dtype = QG_QINT8;
    sp->quant_min = sp->given_quant_min = -128;
    sp->quant_max = sp->given_quant_max = 127;
    const bool with_min = block == QG_BLOCK_Q4_1 || block == QG_BLOCK_Q5_1 || block == QG_BLOCK_Q4_K;
    sp->qscheme = with_min ? QG_PER_GROUP_AFFINE : QG_PER_GROUP_SYMMETRIC;
    sp->group_size = qg_block_elems(sp->block);
    sp->ch_axis = -1;
    sp->channel_len = 1;
    return QG_OK;
}
static const char *isa_n(int i) { return qg_isa_name((qg_isa)i); }

/* ---- conversion of the merged object ------------------------------------ */

static qg_status convert_observer(const ctx *c, json_t *o, qg_spec *sp) {
    qg_observer_spec *ob = &sp->observer;
    int type = qg_qscheme_is_per_channel(sp->qscheme) ? QG_OBS_PER_CHANNEL_MINMAX : QG_OBS_MINMAX;
    long long bins = ob->bins, up = ob->upsample_rate, zp = ob->fixed_zero_point;
    int histc_int = ob->histc_int;
    qg_status st;
    if ((st = get_enum(c, o, "type", "observer.type", observer_n, 7, &type)) ||
        (st = get_float(c, o, "averaging_constant", "observer.averaging_constant", &ob->averaging_constant)) ||
        (st = get_float(c, o, "eps", "observer.eps", &ob->eps)) ||
        (st = get_int(c, o, "bins", "observer.bins", 1, 1 << 20, &bins)) ||
        (st = get_int(c, o, "upsample_rate", "observer.upsample_rate", 1, 4096, &up)) ||
        (st = get_float(c, o, "scale", "observer.scale", &ob->fixed_scale)) ||
        (st = get_int(c, o, "zero_point", "observer.zero_point", INT32_MIN, INT32_MAX, &zp)) ||
        (st = get_enum(c, o, "histc_range", "observer.histc_range", qg_histc_range_name, 2, &histc_int)))
        return st;
    ob->type = (qg_observer_type)type;
    ob->bins = (int)bins;
    ob->upsample_rate = (int)up;
    ob->fixed_zero_point = (int32_t)zp;
    ob->histc_int = histc_int != 0;
    if (ob->type == QG_OBS_FIXED_QPARAMS && !json_object_get(o, "scale"))
        return field_error(c, "observer.scale", NULL, "a scale > 0 for a fixed_qparams observer");
    return QG_OK;
}

static qg_status convert_targets(const ctx *c, json_t *v, qg_spec *sp) {
    if (!v)
        return QG_OK;
    if (json_is_string(v) && strcmp(json_string_value(v), "all") == 0) {
        sp->targets = (1u << QG_ISA_COUNT) - 1;
        return QG_OK;
    }
    if (!json_is_array(v) || json_array_size(v) == 0)
        return field_error(c, "targets", v, "\"all\" or a non-empty list of ISA names (`qgen targets` lists them)");
    unsigned set = 0;
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        int isa = -1;
        for (int k = 0; k < QG_ISA_COUNT && json_is_string(e); k++)
            if (strcmp(json_string_value(e), isa_n(k)) == 0)
                isa = k;
        if (isa < 0) {
            const char *isas[QG_ISA_COUNT];
            char known[128] = "";
            for (int k = 0; k < QG_ISA_COUNT; k++) {
                isas[k] = isa_n(k);
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? ", " : "", isas[k]);
            }
            const char *near = json_is_string(e) ? qg_closest_name(json_string_value(e), isas, QG_ISA_COUNT) : NULL;
            char expected[256];
            snprintf(expected, sizeof expected, "one of %s%s%s%s", known, near ? " (did you mean \"" : "",
                     near ? near : "", near ? "\"?)" : "");
            return field_error(c, "targets", e, expected);
        }
        set |= 1u << isa;
    }
    sp->targets = set;
    return QG_OK;
}

static qg_status convert(const ctx *c, json_t *m, qg_spec *sp) {
    qg_status st;
    json_t *name = json_object_get(m, "name");
    if (!name)
        return field_error(c, "name", NULL, "a C identifier naming the kernels (\"name\": \"act\")");
    if (!json_is_string(name) || strlen(json_string_value(name)) >= QG_NAME_MAX)
        return field_error(c, "name", name, "a C identifier of at most 63 characters");
    snprintf(sp->name, sizeof sp->name, "%s", json_string_value(name));

    int dtype = QG_QUINT8, qscheme = QG_PER_TENSOR_AFFINE, rounding = QG_ROUND_HALF_EVEN, scale_op = QG_SCALE_MUL_INV,
        nan = QG_NAN_ZERO_POINT, requant = QG_REQUANT_FP32, train_qparams = QG_TRAIN_QPARAMS_OBSERVER,
        float_type = QG_FLOAT32;
    long long ch_axis = 0, channel_len = 1, group_size = 0;
    if ((st = get_enum(c, m, "dtype", "dtype", dtype_n, QG_DTYPE_COUNT, &dtype)) ||
        (st = get_enum(c, m, "qscheme", "qscheme", qscheme_n, QG_QSCHEME_COUNT, &qscheme)) ||
        (st = get_enum(c, m, "rounding", "rounding", rounding_n, 3, &rounding)) ||
        (st = get_enum(c, m, "scale_op", "scale_op", scale_op_n, 2, &scale_op)) ||
        (st = get_enum(c, m, "nan", "nan", nan_n, 3, &nan)) ||
        (st = get_enum(c, m, "requant", "requant", requant_n, 2, &requant)) ||
        (st = get_enum(c, m, "train_qparams", "train_qparams", train_qparams_n, 2, &train_qparams)) ||
        (st = get_enum(c, m, "float_type", "float_type", float_type_n, QG_FLOAT_TYPE_COUNT, &float_type)) ||
        (st = get_int(c, m, "ch_axis", "ch_axis", -8, 7, &ch_axis)) ||
        (st = get_int(c, m, "channel_len", "channel_len", 1, 1 << 24, &channel_len)) ||
        (st = get_int(c, m, "group_size", "group_size", 0, 1 << 24, &group_size)))
        return st;
    sp->dtype = (qg_dtype)dtype;
    sp->qscheme = (qg_qscheme)qscheme;
    sp->rounding = (qg_rounding)rounding;
    sp->scale_op = (qg_scale_op)scale_op;
    sp->nan_policy = (qg_nan_policy)nan;
    sp->requant = (qg_requant_scheme)requant;
    sp->train_qparams = (qg_train_qparams)train_qparams;
    sp->float_type = (qg_float_type)float_type;
    sp->ch_axis = (int)ch_axis;
    sp->channel_len = (size_t)channel_len;
    sp->group_size = (size_t)group_size;

    if ((st = get_bool(c, m, "reduce_range", &sp->reduce_range)) || (st = get_bool(c, m, "saturate", &sp->saturate)) ||
        (st = get_bool(c, m, "compat_mask", &sp->compat_mask)) || (st = get_bool(c, m, "in_place", &sp->in_place)) ||
        (st = get_bool(c, m, "fast_training", &sp->fast_training)))
        return st;

    int64_t dmin, dmax;
    qg_dtype_range(sp->dtype, &dmin, &dmax);
    json_t *jmin = json_object_get(m, "quant_min"), *jmax = json_object_get(m, "quant_max");
    bool has_min = jmin && !json_is_null(jmin), has_max = jmax && !json_is_null(jmax);
    if (has_min != has_max)
        return field_error(c, has_min ? "quant_max" : "quant_min", has_min ? jmax : jmin,
                           "quant_min and quant_max given together (or both null for the dtype's range)");
    long long qmin = dmin, qmax = dmax;
    if (has_min) {
        char expected[160];
        snprintf(expected, sizeof expected, "an integer in %s's range %lld..%lld", qg_dtype_name(sp->dtype),
                 (long long)dmin, (long long)dmax);
        if (!json_is_integer(jmin))
            return field_error(c, "quant_min", jmin, expected);
        if (!json_is_integer(jmax))
            return field_error(c, "quant_max", jmax, expected);
        qmin = json_integer_value(jmin);
        qmax = json_integer_value(jmax);
    }
    sp->custom_range = has_min;
    sp->given_quant_min = qmin;
    sp->given_quant_max = qmax;
    if (sp->reduce_range) {
        /* Python's floor division, without negating (-2^63 has no negation) */
        qmin = qmin / 2 - (qmin % 2 < 0);
        qmax = qmax / 2 - (qmax % 2 < 0);
    }
    sp->quant_min = qmin;
    sp->quant_max = qmax;

    json_t *obs = json_object_get(m, "observer");
    if (obs && !json_is_object(obs))
        return field_error(c, "observer", obs, "an object such as {\"type\": \"minmax\"}");
    if ((st = convert_observer(c, obs, sp)) || (st = convert_block(c, m, sp)))
        return st;
    return convert_targets(c, json_object_get(m, "targets"), sp);
}

static void set_defaults(qg_spec *sp) {
    memset(sp, 0, sizeof *sp);
    sp->dtype = QG_QUINT8;
    sp->channel_len = 1;
    sp->saturate = true;
    sp->in_place = true;
    sp->observer.averaging_constant = 0.01f;
    sp->observer.eps = 0x1p-23f;
    sp->observer.bins = 2048;
    sp->observer.upsample_rate = 128;
    sp->observer.fixed_scale = 1.0f;
    sp->targets = (1u << QG_ISA_COUNT) - 1;
}

/* ---- layering ----------------------------------------------------------- */

static qg_status check_fields(const ctx *c, json_t *root) {
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        bool known = false;
        for (size_t i = 0; i < COUNT(top_fields); i++)
            known |= strcmp(key, top_fields[i]) == 0;
        if (!known)
            return unknown_field(c, key, key, top_fields, COUNT(top_fields));
    }
    json_t *obs = json_object_get(root, "observer");
    if (json_is_object(obs)) {
        json_object_foreach(obs, key, v) {
            bool known = false;
            for (size_t i = 0; i < COUNT(observer_fields); i++)
                known |= strcmp(key, observer_fields[i]) == 0;
            if (!known) {
                char path[128];
                snprintf(path, sizeof path, "observer.%s", key);
                return unknown_field(c, path, key, observer_fields, COUNT(observer_fields));
            }
        }
    }
    return QG_OK;
}

/* Lays `top` over `merged`, merging the observer objects field by field. */
/* False when memory ran out (a field would be lost without a word). */
static bool overlay(json_t *merged, json_t *top) {
    if (!merged || !top)
        return false;
    const char *key;
    json_t *v;
    json_object_foreach(top, key, v) {
        json_t *old = json_object_get(merged, key);
        if (strcmp(key, "observer") == 0 && json_is_object(old) && json_is_object(v)) {
            json_t *copy = json_deep_copy(old);
            if (json_object_update(copy, v) != 0 || json_object_set_new(merged, key, copy) != 0)
                return false;
        } else if (json_object_set(merged, key, v) != 0) {
            return false;
        }
    }
    return true;
}

static qg_status out_of_memory(ctx *c) { return qg_error_set(c->err, QG_ERR_NOMEM, "%s: out of memory", c->origin); }

static qg_status apply_set(ctx *c, json_t *merged, const char *arg) {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return qg_error_set(c->err, QG_ERR_INVALID, "--set %s: expected key=value, e.g. --set dtype=qint8", arg);
    char key[128], shown[72];
    if ((size_t)(eq - arg) >= sizeof key)
        return qg_error_set(c->err, QG_ERR_INVALID, "--set %s: key of %zu characters; expected a field name",
                            clip(arg, shown), (size_t)(eq - arg));
    snprintf(key, sizeof key, "%.*s", (int)(eq - arg), arg);
    const char *val = eq + 1;
    json_t *v = json_loads(val, JSON_DECODE_ANY, NULL);
    if (!v)
        v = json_string(val); /* a bare word: dtype=qint8 */
    if (!v)                   /* jansson takes UTF-8 only */
        return qg_error_set(c->err, QG_ERR_INVALID, "--set %s: the value is not UTF-8 text; expected JSON or a word",
                            clip(arg, shown));
    if (strcmp(key, "observer") == 0 || strcmp(key, "base") == 0) {
        json_decref(v);
        return qg_error_set(c->err, QG_ERR_INVALID, "--set %s: %s", clip(arg, shown),
                            key[0] == 'o' ? "observer is an object; expected --set observer.<field>=value (type, "
                                            "averaging_constant, eps, bins, upsample_rate, scale, zero_point)"
                                          : "base cannot be overridden; expected it in the spec file");
    }
    if (json_object_set_new(c->set_from, key, json_string(arg)) != 0) {
        json_decref(v);
        return out_of_memory(c);
    }
    json_t *obj = merged;
    const char *field = key;
    if (strncmp(key, "observer.", 9) == 0) {
        field = key + 9;
        bool known = false;
        for (size_t i = 0; i < COUNT(observer_fields); i++)
            known |= strcmp(field, observer_fields[i]) == 0;
        if (!known) {
            json_decref(v);
            return unknown_field(c, key, field, observer_fields, COUNT(observer_fields));
        }
        obj = json_object_get(merged, "observer");
        if (!json_is_object(obj)) {
            obj = json_object();
            if (json_object_set_new(merged, "observer", obj) != 0) {
                json_decref(v);
                return out_of_memory(c);
            }
        }
    } else {
        bool known = false;
        for (size_t i = 0; i < COUNT(top_fields); i++)
            known |= strcmp(key, top_fields[i]) == 0 && strcmp(key, "observer") != 0 && strcmp(key, "base") != 0;
        if (!known) {
            json_decref(v);
            return unknown_field(c, key, key, top_fields, COUNT(top_fields));
        }
    }
    return json_object_set_new(obj, field, v) != 0 ? out_of_memory(c) : QG_OK;
}

qg_status qg_spec_load_string(const char *text, const char *origin, const char *const *sets, size_t nsets, qg_spec *out,
                              qg_error *err) {
    QG_NEED_AS(text, "json", err, "the spec's JSON text");
    QG_NEED(out, err, "a spec to fill in");
    QG_NEED_DATA(sets, nsets, err);
    ctx c = {origin ? origin : "<spec>", text, NULL, json_object(), err};
    json_error_t jerr;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr), *merged = NULL;
    qg_status st = QG_OK;
    if (!root || !c.set_from) {
        st = !c.set_from || json_error_code(&jerr) == json_error_out_of_memory
                 ? out_of_memory(&c)
                 : qg_error_set(err, QG_ERR_INVALID, "%s:%d:%d: malformed JSON: %s", c.origin, jerr.line, jerr.column,
                                jerr.text);
        goto done;
    }
    if (!json_is_object(root)) {
        st = qg_error_set(err, QG_ERR_INVALID, "%s:1:1: spec: got a JSON %s; expected an object", c.origin,
                          json_is_array(root) ? "array" : "scalar");
        goto done;
    }
    if ((st = check_fields(&c, root)))
        goto done;
    merged = json_object();
    json_t *base = json_object_get(root, "base");
    if (base) {
        const char *preset = json_is_string(base) ? qg_preset_json(json_string_value(base)) : NULL;
        if (!preset) {
            const char *const *names = qg_spec_preset_names();
            size_t n = 0;
            while (names[n])
                n++;
            const char *near = json_is_string(base) ? qg_closest_name(json_string_value(base), names, n) : NULL;
            /* the suggestion first, so that a long list never cuts it off */
            char expected[800] = "a preset";
            if (near) {
                strncat(expected, " (did you mean ", sizeof expected - strlen(expected) - 1);
                strncat(expected, near, sizeof expected - strlen(expected) - 1);
                strncat(expected, "?)", sizeof expected - strlen(expected) - 1);
            }
            strncat(expected, ": ", sizeof expected - strlen(expected) - 1);
            for (size_t i = 0; i < n; i++) {
                strncat(expected, names[i], sizeof expected - strlen(expected) - 1);
                if (i + 1 < n)
                    strncat(expected, ", ", sizeof expected - strlen(expected) - 1);
            }
            st = field_error(&c, "base", base, expected);
            goto done;
        }
        json_t *pj = json_loads(preset, 0, NULL);
        const bool merged_preset = overlay(merged, pj);
        json_decref(pj);
        if (!merged_preset) {
            st = out_of_memory(&c);
            goto done;
        }
        c.base = json_string_value(base);
    }
    if (!overlay(merged, root)) {
        st = out_of_memory(&c);
        goto done;
    }
    json_object_del(merged, "base");
    for (size_t i = 0; i < nsets && !st; i++)
        st = apply_set(&c, merged, sets[i]);
    if (st)
        goto done;
    qg_spec sp;
    set_defaults(&sp);
    if ((st = convert(&c, merged, &sp)))
        goto done;
    if ((st = qg_spec_validate(&sp, err))) {
        /* Prefix the location of the field the message starts with. */
        char field[64], where[300], msg[sizeof err->message], wbuf[72];
        if (err && sscanf(err->message, "%63[a-z_.]:", field) == 1) {
            locate(&c, field, where, sizeof where);
            memcpy(msg, err->message, sizeof msg);
            qg_error_set(err, st, "%s: %s", clip(where, wbuf), msg);
        }
        goto done;
    }
    *out = sp;
done:
    json_decref(root);
    json_decref(merged);
    json_decref(c.set_from);
    return st;
}

qg_status qg_spec_load_file(const char *path, const char *const *sets, size_t nsets, qg_spec *out, qg_error *err) {
    QG_NEED(path, err, "a spec file name");
    QG_NEED(out, err, "a spec to fill in");
    QG_NEED_DATA(sets, nsets, err);
    FILE *f = fopen(path, "rb");
    if (!f)
        return qg_error_set(err, QG_ERR_IO, "%s: cannot open spec: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    size_t got;
    while (text && (got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *bigger = realloc(text, cap *= 2);
            if (!bigger) {
                free(text);
                text = NULL;
            } else {
                text = bigger;
            }
        }
    }
    int rerr = ferror(f);
    fclose(f);
    if (!text)
        return qg_error_set(err, QG_ERR_NOMEM, "%s: out of memory", path);
    if (rerr) {
        free(text);
        return qg_error_set(err, QG_ERR_IO, "%s: read error", path);
    }
    text[len] = 0;
    if (strlen(text) != len) {
        free(text);
        return qg_error_set(err, QG_ERR_INVALID, "%s: contains a NUL byte; expected a JSON text", path);
    }
    qg_status st = qg_spec_load_string(text, path, sets, nsets, out, err);
    free(text);
    return st;
}

qg_status qg_spec_new(const char *json, const char *origin, const char *const *sets, size_t nsets, qg_spec **out,
                      qg_error *err) {
    QG_NEED(out, err, "a place for the new spec");
    *out = NULL;
    qg_spec *sp = calloc(1, sizeof *sp);
    if (!sp)
        return qg_error_set(err, QG_ERR_NOMEM, "spec: out of memory");
    const qg_status st = qg_spec_load_string(json, origin, sets, nsets, sp, err);
    if (st)
        free(sp);
    else
        *out = sp;
    return st;
}

void qg_spec_free(qg_spec *spec) { free(spec); }
