/* The driver every generated observe kernel calls: the kernel supplies a
 * vectorized min/max over one contiguous stretch, this walks the channel
 * layout, and any NaN or layout error is left to qg_observer_update, which
 * reports it and keeps the state. One driver for both backends keeps their
 * observers identical by construction. Kernels of 16-bit float types
 * (docs/semantics.md, "Float types") reduce the codes themselves, widened
 * in the vector; the walk here is the same. */
#include <math.h>
#include <stdlib.h>

#include "qgen/kernel_support.h"
#include "qgen/runtime.h"
#include "observer_internal.h"
#include "arg_check.h"

/* The tensor an observe kernel was given: float32, or 16-bit codes of the
 * spec's float_type, with the kernel's span over either. */
typedef struct observed {
    const float *f32;
    const uint16_t *codes;
    qg_float_type type;
    qg_minmax_span_fn span;
    qg_minmax16_span_fn span16;
} observed;

static int span_of(const observed *d, size_t at, size_t len, float *mn, float *mx) {
    return d->f32 ? d->span(d->f32 + at, len, mn, mx) : d->span16(d->codes + at, len, mn, mx);
}

static float value_at(const observed *d, size_t i) {
    float v;
    if (d->f32)
        return d->f32[i];
    qg_float_type_widen(d->type, d->codes + i, &v, 1);
    return v;
}

/* The reference observe, which reports what the spans leave to it. */
static qg_status update(qg_observer *obs, const observed *d, size_t n, size_t inner, qg_error *err) {
    return d->f32 ? qg_observer_update(obs, d->f32, n, inner, err)
                  : qg_observer_update_typed(obs, d->codes, n, inner, err);
}

/* Per channel: the kernel's span per run of `inner`, or element by element
 * across the channels of a channels-last row. */
static qg_status observe_channels(qg_observer *obs, const observed *d, size_t n, size_t inner, qg_error *err) {
    const size_t C = qg_observer_spec_of(obs)->channel_len;
    if (inner == 0 || n % (inner * C) != 0)
        return update(obs, d, n, inner, err);
    float *mn = malloc(2 * C * sizeof(float));
    if (!mn)
        return update(obs, d, n, inner, err);
    float *mx = mn + C;
    int ok = 1;
    for (size_t c = 0; c < C; c++) {
        mn[c] = INFINITY;
        mx[c] = -INFINITY;
    }
    if (inner == 1) {
        for (size_t row = 0; row < n && ok; row += C)
            for (size_t c = 0; c < C; c++) {
                const float v = value_at(d, row + c);
                ok &= v == v;
                mn[c] = v < mn[c] ? v : mn[c];
                mx[c] = v > mx[c] ? v : mx[c];
            }
    } else {
        for (size_t run = 0, base = 0; base < n && ok; run++, base += inner) {
            float a, b;
            ok &= span_of(d, base, inner, &a, &b);
            const size_t c = run % C;
            mn[c] = a < mn[c] ? a : mn[c];
            mx[c] = b > mx[c] ? b : mx[c];
        }
    }
    for (size_t c = 0; c < C && ok; c++)
        ok &= isfinite(mn[c]) && isfinite(mx[c]);
    qg_status st = ok ? qg_observer_fold(obs, mn, mx, err) : update(obs, d, n, inner, err);
    free(mn);
    return st;
}

static qg_status observe(qg_observer *obs, const observed *d, size_t n, size_t inner, qg_error *err) {
    const qg_observer_type t = qg_observer_spec_of(obs)->observer.type;
    if (!(d->span || d->span16) || !qg_observer_keeps_min_max(t))
        return update(obs, d, n, inner, err);
    if (n == 0)
        return QG_OK;
    if (t == QG_OBS_MINMAX || t == QG_OBS_MOVING_AVERAGE_MINMAX) {
        float mn, mx;
        if (!span_of(d, 0, n, &mn, &mx) || !isfinite(mn) || !isfinite(mx))
            return update(obs, d, n, inner, err); /* it reports NaN and inf */
        return qg_observer_fold(obs, &mn, &mx, err);
    }
    return observe_channels(obs, d, n, inner, err);
}

qg_status qg_observe_with(qg_observer *obs, const float *x, size_t n, size_t inner, qg_minmax_span_fn span,
                          qg_error *err) {
    QG_NEED(obs, err, "an observer from qg_observer_create");
    QG_NEED_DATA(x, n, err);
    const observed d = {.f32 = x, .span = span};
    return observe(obs, &d, n, inner, err);
}

qg_status qg_observe16_with(qg_observer *obs, const uint16_t *x, size_t n, size_t inner, qg_minmax16_span_fn span,
                            qg_error *err) {
    QG_NEED(obs, err, "an observer from qg_observer_create");
    QG_NEED_DATA(x, n, err);
    const qg_spec *sp = qg_observer_spec_of(obs);
    if (sp->float_type == QG_FLOAT32)
        return qg_error_set(err, QG_ERR_INVALID, "observe: 16-bit codes; expected float32 x for spec \"%s\"", sp->name);
    const observed d = {.codes = x, .type = sp->float_type, .span16 = span};
    return observe(obs, &d, n, inner, err);
}

void qg_mask_pack_bits(uint8_t *packed, size_t pos, const uint8_t *lanes, size_t count) {
    QG_NEED_OR_RETURN((packed && lanes) || count == 0);
    for (size_t k = 0; k < count; k++)
        packed[(pos + k) / 8] |= (uint8_t)((lanes[k] != 0) << ((pos + k) % 8));
}

void qg_mask_unpack_bits(uint8_t *lanes, const uint8_t *packed, size_t pos, size_t count) {
    QG_NEED_OR_RETURN((lanes && packed) || count == 0);
    for (size_t k = 0; k < count; k++)
        lanes[k] = (uint8_t)((packed[(pos + k) / 8] >> ((pos + k) % 8)) & 1u);
}
