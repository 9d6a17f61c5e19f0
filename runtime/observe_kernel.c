/* The driver every generated observe kernel calls: the kernel supplies a
 * vectorized min/max over one contiguous stretch, this walks the channel
 * layout, and any NaN or layout error is left to qg_observer_update, which
 * reports it and keeps the state. One driver for both backends keeps their
 * observers identical by construction. */
#include <math.h>
#include <stdlib.h>

#include "qgen/kernel_support.h"
#include "qgen/runtime.h"
#include "observer_internal.h"
#include "arg_check.h"

qg_status qg_observe_with(qg_observer *obs, const float *x, size_t n, size_t inner, qg_minmax_span_fn span,
                          qg_error *err) {
    QG_NEED(obs, err, "an observer from qg_observer_create");
    QG_NEED_DATA(x, n, err);
    const qg_spec *sp = qg_observer_spec_of(obs);
    const qg_observer_type t = sp->observer.type;
    if (!span || !qg_observer_keeps_min_max(t))
        return qg_observer_update(obs, x, n, inner, err);
    if (n == 0)
        return QG_OK;
    if (t == QG_OBS_MINMAX || t == QG_OBS_MOVING_AVERAGE_MINMAX) {
        float mn, mx;
        if (!span(x, n, &mn, &mx) || !isfinite(mn) || !isfinite(mx))
            return qg_observer_update(obs, x, n, inner, err); /* it reports NaN and inf */
        return qg_observer_fold(obs, &mn, &mx, err);
    }
    const size_t C = sp->channel_len;
    if (inner == 0 || n % (inner * C) != 0)
        return qg_observer_update(obs, x, n, inner, err);
    float *mn = malloc(2 * C * sizeof(float));
    if (!mn)
        return qg_observer_update(obs, x, n, inner, err);
    float *mx = mn + C;
    int ok = 1;
    for (size_t c = 0; c < C; c++) {
        mn[c] = INFINITY;
        mx[c] = -INFINITY;
    }
    if (inner == 1) {
        for (size_t row = 0; row < n && ok; row += C)
            for (size_t c = 0; c < C; c++) {
                const float v = x[row + c];
                ok &= v == v;
                mn[c] = v < mn[c] ? v : mn[c];
                mx[c] = v > mx[c] ? v : mx[c];
            }
    } else {
        for (size_t run = 0, base = 0; base < n && ok; run++, base += inner) {
            float a, b;
            ok &= span(x + base, inner, &a, &b);
            const size_t c = run % C;
            mn[c] = a < mn[c] ? a : mn[c];
            mx[c] = b > mx[c] ? b : mx[c];
        }
    }
    for (size_t c = 0; c < C && ok; c++)
        ok &= isfinite(mn[c]) && isfinite(mx[c]);
    qg_status st = ok ? qg_observer_fold(obs, mn, mx, err) : qg_observer_update(obs, x, n, inner, err);
    free(mn);
    return st;
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
