/* Random specs as JSON (dt_draw.h). The draw leans toward combinations the
 * validator takes (fp8 with symmetric qschemes, moving averages with
 * fused_op, ...) but does not enforce them: what it refuses is drawn again
 * and counted, so the tester also sees how often its draws are invalid. */
#include "dt_draw.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dt_rng.h"
#include "qgen/runtime.h"

static void put(dt_fields *f, const char *key, const char *fmt, ...) {
    if (f->n >= DT_MAX_FIELDS)
        return;
    snprintf(f->key[f->n], sizeof f->key[0], "%s", key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->value[f->n], sizeof f->value[0], fmt, ap);
    va_end(ap);
    f->n++;
}

static bool coin(dt_rng *r, unsigned percent) { return dt_below(r, 100) < percent; }

static const char *pick(dt_rng *r, const char *const *names, size_t n) { return names[dt_below(r, n)]; }
#define PICK(r, ...)                                                                                                   \
    pick(r, (const char *const[]){__VA_ARGS__}, sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

static size_t draw_channels(dt_rng *r) {
    static const size_t common[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33};
    return coin(r, 70) ? common[dt_below(r, sizeof common / sizeof common[0])] : 1 + dt_below(r, 64);
}

/* The observer object for a qscheme family. */
static void draw_observer(dt_rng *r, dt_fields *f, bool per_channel, bool per_group, bool fp8, const char *train) {
    char obs[480];
    size_t len = 0;
    const char *type;
    if (per_group)
        type = PICK(r, "minmax", "placeholder");
    else if (per_channel)
        type = strcmp(train, "fused_op") == 0
                   ? "moving_average_per_channel_minmax"
                   : PICK(r, "per_channel_minmax", "moving_average_per_channel_minmax", "placeholder");
    else if (strcmp(train, "fused_op") == 0)
        type = "moving_average_minmax";
    else
        type = fp8 ? PICK(r, "minmax", "moving_average_minmax", "fixed_qparams", "placeholder")
                   : PICK(r, "minmax", "moving_average_minmax", "histogram", "fixed_qparams", "placeholder");
    len += (size_t)snprintf(obs + len, sizeof obs - len, "{\"type\": \"%s\"", type);
    if (coin(r, 50))
        len += (size_t)snprintf(obs + len, sizeof obs - len, ", \"averaging_constant\": %g",
                                (double)(1 + dt_below(r, 1000)) / 1000.0);
    if (coin(r, 30))
        len += (size_t)snprintf(obs + len, sizeof obs - len, ", \"eps\": %g", 1e-9 * (double)(1 + dt_below(r, 100000)));
    if (strcmp(type, "histogram") == 0) {
        len += (size_t)snprintf(obs + len, sizeof obs - len, ", \"bins\": %zu, \"upsample_rate\": %zu",
                                8 + dt_below(r, 256), 1 + dt_below(r, 16));
        if (coin(r, 50))
            len += (size_t)snprintf(obs + len, sizeof obs - len, ", \"histc_range\": \"%s\"", PICK(r, "exact", "int"));
    }
    if (strcmp(type, "fixed_qparams") == 0) /* the zero point inside most ranges; refused ones are drawn again */
        len += (size_t)snprintf(obs + len, sizeof obs - len, ", \"scale\": %g, \"zero_point\": %d",
                                (double)(1 + dt_below(r, 4096)) / 1024.0, fp8 || coin(r, 50) ? 0 : (int)dt_below(r, 8));
    snprintf(obs + len, sizeof obs - len, "}");
    put(f, "observer", "%s", obs);
}

static void draw_fields(dt_rng *r, const char *name, dt_fields *f) {
    f->n = 0;
    put(f, "name", "\"%s\"", name);
    if (coin(r, 15)) { /* from a preset, a few fields over it */
        const char *const *presets = qg_spec_preset_names();
        size_t n = 0;
        while (presets[n])
            n++;
        put(f, "base", "\"%s\"", presets[dt_below(r, n)]);
        if (coin(r, 50))
            put(f, "channel_len", "%zu", draw_channels(r));
        if (coin(r, 30))
            put(f, "float_type", "\"%s\"", PICK(r, "bfloat16", "float16"));
        if (coin(r, 40))
            put(f, "compat_mask", "%s", coin(r, 50) ? "true" : "false");
        return;
    }
    const char *dtype = PICK(r, "qint8", "quint8", "qint16", "quint16", "qint32", "qint4", "quint4", "fp8_e4m3fn",
                             "fp8_e5m2", "qint8", "quint8");
    const bool fp8 = strncmp(dtype, "fp8", 3) == 0;
    const char *qscheme =
        fp8 ? PICK(r, "per_tensor_symmetric", "per_channel_symmetric", "per_group_symmetric")
            : PICK(r, "per_tensor_affine", "per_tensor_symmetric", "per_channel_affine", "per_channel_symmetric",
                   "per_channel_affine_float_qparams", "per_group_affine", "per_group_symmetric", "per_tensor_affine");
    const bool per_channel = strncmp(qscheme, "per_channel", 11) == 0,
               per_group = strncmp(qscheme, "per_group", 9) == 0;
    put(f, "dtype", "\"%s\"", dtype);
    if (strcmp(qscheme, "per_tensor_affine") != 0 || coin(r, 50))
        put(f, "qscheme", "\"%s\"", qscheme);
    if (per_channel || per_group) {
        const size_t C = draw_channels(r);
        put(f, "channel_len", "%zu", C);
        if (coin(r, 60))
            put(f, "ch_axis", "%d", (int)dt_below(r, 6) - 2);
        if (per_group)
            put(f, "group_size", "%zu", coin(r, 80) ? 1 + dt_below(r, C) : C + 1 + dt_below(r, 8));
    }
    const bool wide_int = strcmp(dtype, "qint32") == 0 || strcmp(qscheme, "per_channel_affine_float_qparams") == 0;
    if (!wide_int && coin(r, 35))
        put(f, "float_type", "\"%s\"", PICK(r, "bfloat16", "float16", "float32"));
    if (!fp8 && coin(r, 20)) { /* a custom range around 0, inside the dtype's */
        int64_t lo, hi;
        qg_dtype_range(strcmp(dtype, "qint8") == 0     ? QG_QINT8
                       : strcmp(dtype, "quint8") == 0  ? QG_QUINT8
                       : strcmp(dtype, "qint16") == 0  ? QG_QINT16
                       : strcmp(dtype, "quint16") == 0 ? QG_QUINT16
                       : strcmp(dtype, "qint4") == 0   ? QG_QINT4
                       : strcmp(dtype, "quint4") == 0  ? QG_QUINT4
                                                       : QG_QINT32,
                       &lo, &hi);
        const int64_t qmin = lo < 0 ? -(int64_t)dt_below(r, (size_t)(-lo < 300 ? -lo : 300) + 1) : 0;
        const int64_t qmax = 1 + (int64_t)dt_below(r, (size_t)(hi < 300 ? hi : 300));
        put(f, "quant_min", "%lld", (long long)qmin);
        put(f, "quant_max", "%lld", (long long)qmax);
    }
    if (!fp8 && coin(r, 20))
        put(f, "reduce_range", "true");
    static const char *const bools[] = {"saturate", "compat_mask", "in_place", "fast_training"};
    for (size_t i = 0; i < 4; i++)
        if (coin(r, 50))
            put(f, bools[i], "%s", coin(r, 50) ? "true" : "false");
    const char *train = !fp8 && !per_group && !wide_int && coin(r, 35) ? "fused_op" : "observer";
    if (strcmp(train, "fused_op") == 0 || coin(r, 30))
        put(f, "train_qparams", "\"%s\"", train);
    if (!fp8 && coin(r, 70))
        put(f, "rounding", "\"%s\"", PICK(r, "half_even", "half_up", "half_away"));
    if (coin(r, 60))
        put(f, "scale_op", "\"%s\"", PICK(r, "mul_inv", "div"));
    if (coin(r, 50))
        put(f, "nan", "\"%s\"", PICK(r, "zero_point", "propagate", "unchecked"));
    if (!fp8 && coin(r, 40))
        put(f, "requant", "\"%s\"", PICK(r, "fp32", "fixed_point"));
    if (coin(r, 85) || per_channel || per_group)
        draw_observer(r, f, per_channel, per_group, fp8, train);
}

void dt_fields_json(const dt_fields *f, char *out, size_t cap) {
    size_t len = (size_t)snprintf(out, cap, "{");
    for (size_t i = 0; i < f->n && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s\"%s\": %s", i ? ", " : "", f->key[i], f->value[i]);
    if (len < cap)
        snprintf(out + len, cap - len, "}");
}

void dt_fields_drop(dt_fields *f, size_t i) {
    for (size_t k = i; k + 1 < f->n; k++) {
        memcpy(f->key[k], f->key[k + 1], sizeof f->key[0]);
        memcpy(f->value[k], f->value[k + 1], sizeof f->value[0]);
    }
    f->n--;
}

bool dt_draw_spec(uint64_t seed, const char *name, dt_fields *f, qg_spec *out, unsigned *rejected) {
    dt_rng r = {seed};
    for (int attempt = 0; attempt < 200; attempt++) {
        draw_fields(&r, name, f);
        char json[DT_JSON_MAX];
        dt_fields_json(f, json, sizeof json);
        qg_error err;
        if (qg_spec_load_string(json, "<drawn>", NULL, 0, out, &err) != QG_OK)
            ++*rejected;
        else if (out->block == QG_BLOCK_NONE || out->float_type == QG_FLOAT32)
            return true; /* 16-bit block rows go through the driver's pieces, which the checks' whole-row reference
                            does not model (the kernel tests cover them) */
    }
    return false;
}

/* ---- coverage ------------------------------------------------------------ */

enum { MAX_COVER = 40, MAX_VALUES = 24 };
static struct cover {
    char field[24];
    size_t n;
    char value[MAX_VALUES][48];
    unsigned count[MAX_VALUES];
} covers[MAX_COVER];
static size_t n_covers;

void dt_cover_note(const char *field, const char *value) {
    struct cover *c = NULL;
    for (size_t i = 0; i < n_covers && !c; i++)
        if (strcmp(covers[i].field, field) == 0)
            c = &covers[i];
    if (!c) {
        if (n_covers == MAX_COVER)
            return;
        c = &covers[n_covers++];
        snprintf(c->field, sizeof c->field, "%s", field);
    }
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->value[i], value) == 0) {
            c->count[i]++;
            return;
        }
    if (c->n < MAX_VALUES) {
        snprintf(c->value[c->n], sizeof c->value[0], "%s", value);
        c->count[c->n++] = 1;
    }
}

static const char *bucket(size_t v, char *buf, size_t cap) {
    static const size_t edges[] = {1, 2, 4, 8, 16, 32, 64};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        if (v <= edges[i]) {
            snprintf(buf, cap, i == 0 || edges[i - 1] + 1 == edges[i] ? "%zu" : "<=%zu", edges[i]);
            return buf;
        }
    snprintf(buf, cap, ">64");
    return buf;
}

void dt_cover_spec(const qg_spec *sp) {
    char b[32];
    dt_cover_note("dtype", qg_dtype_name(sp->dtype));
    dt_cover_note("qscheme", qg_qscheme_name(sp->qscheme));
    dt_cover_note("channel_len", bucket(sp->channel_len, b, sizeof b));
    if (qg_qscheme_is_per_group(sp->qscheme))
        dt_cover_note("group_size", sp->group_size > sp->channel_len    ? "> channel_len"
                                    : sp->group_size == sp->channel_len ? "= channel_len"
                                                                        : bucket(sp->group_size, b, sizeof b));
    snprintf(b, sizeof b, "%d", sp->ch_axis);
    dt_cover_note("ch_axis", b);
    dt_cover_note("float_type", qg_float_type_name(sp->float_type));
    dt_cover_note("range", sp->custom_range ? "custom" : "dtype's");
    dt_cover_note("reduce_range", sp->reduce_range ? "true" : "false");
    dt_cover_note("saturate", sp->saturate ? "true" : "false");
    dt_cover_note("compat_mask", sp->compat_mask ? "true" : "false");
    dt_cover_note("in_place", sp->in_place ? "true" : "false");
    dt_cover_note("fast_training", sp->fast_training ? "true" : "false");
    dt_cover_note("train_qparams", qg_train_qparams_name(sp->train_qparams));
    dt_cover_note("rounding", qg_rounding_name(sp->rounding));
    dt_cover_note("scale_op", qg_scale_op_name(sp->scale_op));
    dt_cover_note("nan", qg_nan_policy_name(sp->nan_policy));
    dt_cover_note("requant", qg_requant_name(sp->requant));
    dt_cover_note("observer.type", qg_observer_type_name(sp->observer.type));
    if (sp->observer.type == QG_OBS_HISTOGRAM)
        dt_cover_note("observer.histc_range", sp->observer.histc_int ? "int" : "exact");
}

void dt_cover_print(void) {
    for (size_t i = 0; i < n_covers; i++) {
        printf("  %-20s", covers[i].field);
        for (size_t k = 0; k < covers[i].n; k++)
            printf(" %s %u%s", covers[i].value[k], covers[i].count[k], k + 1 < covers[i].n ? "," : "");
        printf("\n");
    }
}
