/* HistogramObserver, following torch 1.13's Python code step by step and in
 * its precisions (fp32 tensors, Python doubles where torch has them). histc
 * gets the exact fp32 range, or with observer.histc_int the range truncated
 * by int() as torch 1.13's forward passes it (docs/semantics.md, "Observers"). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arg_check.h"
#include "observer_internal.h"
#include "vec4.h"

/* Element e's bin, for lo <= e <= hi: fl(fl(fl(e - lo) * bins) / fl(hi - lo))
 * truncated, the last bin taking hi. A range that overflows fp32 (data
 * near +-FLT_MAX) makes that NaN or out of bounds; converting such a value
 * to an integer is undefined (x86 and RISC-V disagree), so it is clamped
 * in fp32 first, NaN going to bin 0. */
static int bin_of(float e, float lo, float hi, int bins) {
    const float where = (e - lo) * (float)bins / (hi - lo);
    const int pos = where >= 0.0f ? (where < (float)bins ? (int)where : bins) : 0;
    return pos == bins ? bins - 1 : pos;
}

/* bin_of for four elements, counted into four sub-histograms of bins
 * counts each, one per lane (elements of one bin in a row then add to
 * different counters instead of waiting on each other's stores);
 * out-of-range elements are skipped. */
static void count4(const float *x, float lo, float hi, int bins, uint32_t *sub) {
    const v4f e = load4(x);
    const float fb = (float)bins;
    const v4f where = (e - lo) * fb / (hi - lo);
    const v4i in_range = (e >= lo) & (e <= hi);
    const v4i below = where < fb; /* lanes of all ones where true: selects by and/or */
    const v4f below_end = select4(below, where, (v4f){fb, fb, fb, fb});
    const v4f clamped = (v4f)((where >= 0.0f) & (v4i)below_end); /* NaN and negatives: 0.0f */
    const v4i pos = __builtin_convertvector(clamped, v4i);
    for (int k = 0; k < 4; k++)
        sub[(size_t)k * (size_t)bins + (size_t)(pos[k] == bins ? bins - 1 : pos[k])] -= in_range[k]; /* -(-1) */
}

/* torch.histc (linear interpolation, no local search): counts x in
 * [lo, hi] into bins. Equal bounds take the batch's own min and max
 * (x_min, x_max) instead, and widen to [lo-1, hi+1] if those are equal too.
 * torch adds 1.0f per element to a float bin, which stops growing at 2^24;
 * integer counts clamped there give the same floats. */
static qg_status histc(const float *x, size_t n, double lo_d, double hi_d, float x_min, float x_max, int bins,
                       float *out) {
    if (lo_d == hi_d && n > 0) {
        lo_d = x_min;
        hi_d = x_max;
    }
    if (lo_d == hi_d) {
        lo_d -= 1.0;
        hi_d += 1.0;
    }
    const float lo = (float)lo_d, hi = (float)hi_d;
    uint64_t *total = calloc((size_t)bins, sizeof *total);
    uint32_t *sub = malloc(4 * (size_t)bins * sizeof *sub);
    if (!total || !sub) {
        free(total);
        free(sub);
        return QG_ERR_NOMEM;
    }
    const size_t chunk = (size_t)1 << 30; /* four lanes of uint32 counts never overflow */
    for (size_t base = 0; base < n; base += chunk) {
        const size_t len = n - base < chunk ? n - base : chunk;
        memset(sub, 0, 4 * (size_t)bins * sizeof *sub);
        size_t i = 0;
        for (; i + 4 <= len; i += 4)
            count4(x + base + i, lo, hi, bins, sub);
        for (; i < len; i++) {
            const float e = x[base + i];
            if (e >= lo && e <= hi)
                sub[bin_of(e, lo, hi, bins)]++;
        }
        for (int b = 0; b < bins; b++)
            total[b] += (uint64_t)sub[b] + sub[bins + b] + sub[2 * bins + b] + sub[3 * bins + b];
    }
    for (int b = 0; b < bins; b++)
        out[b] = (float)(total[b] < (1u << 24) ? total[b] : (1u << 24));
    free(total);
    free(sub);
    return QG_OK;
}

/* A histc bound as the spec asks for it: exact, or Python's int() (toward zero). */
static double histc_bound(const qg_observer *o, float v) { return o->spec.observer.histc_int ? trunc((double)v) : v; }

void qg_observer_histogram(const qg_observer *o, float *hist, float *min, float *max) {
    if (!o || !o->hist || !hist || !min || !max)
        return;
    memcpy(hist, o->hist, (size_t)o->spec.observer.bins * sizeof(float));
    *min = o->min[0];
    *max = o->max[0];
}

qg_status qg_observer_restore_histogram(qg_observer *o, const float *hist, float min, float max, qg_error *err) {
    QG_NEED_AS(o, "obs", err, "an observer from qg_observer_create");
    QG_NEED(hist, err, "observer.bins histogram counts");
    if (!o->hist)
        return qg_error_set(err, QG_ERR_STATE, "observer.type: %s keeps no histogram; expected a histogram observer",
                            qg_observer_type_name(o->spec.observer.type));
    if (isnan(min) || isnan(max))
        return qg_error_set(err, QG_ERR_INVALID, "min/max: NaN; expected numbers (+inf/-inf: unobserved)");
    const int bins = o->spec.observer.bins;
    for (int b = 0; b < bins; b++)
        if (!(hist[b] >= 0.0f) || isinf(hist[b]))
            return qg_error_set(err, QG_ERR_INVALID, "histogram[%d]: %g; expected a finite count >= 0", b,
                                (double)hist[b]);
    memcpy(o->hist, hist, (size_t)bins * sizeof(float));
    o->min[0] = min;
    o->max[0] = max;
    o->batches = min <= max;
    return QG_OK;
}

static double dst_nbins_of(const qg_spec *sp) { return ldexp(1.0, (int)(8 * qg_dtype_size(sp->dtype))); }

qg_status qg_hist_update(qg_observer *o, const float *x, size_t n, float new_min, float new_max) {
    const int bins = o->spec.observer.bins;
    const int up = o->spec.observer.upsample_rate;
    float min_val = o->min[0], max_val = o->max[0];
    bool uninit = min_val == INFINITY && max_val == -INFINITY;
    if (uninit || min_val == max_val) {
        const qg_status st =
            histc(x, n, histc_bound(o, new_min), histc_bound(o, new_max), new_min, new_max, bins, o->hist);
        if (st == QG_OK) { /* histc writes o->hist only once it has counted */
            o->min[0] = new_min;
            o->max[0] = new_max;
        }
        return st;
    }
    float cmin = new_min < min_val ? new_min : min_val;
    float cmax = new_max > max_val ? new_max : max_val;
    /* _adjust_min_max: a common grid where both histograms are exact. */
    float hbw = (max_val - min_val) / (float)((int64_t)bins * up);
    float span = (float)bins * hbw;
    float ratio = ceilf((cmax - cmin) / span);
    /* bounded, and defined for an infinite or NaN ratio */
    int64_t down = ratio >= 1.0f ? (ratio < 0x1p40f ? (int64_t)ratio : ((int64_t)1 << 40)) : 1;
    float e = (float)down * span - (cmax - cmin);
    cmax = cmax + e;
    float start_f = nearbyintf((min_val - cmin) / hbw);
    int64_t start = start_f >= 0.0f ? (start_f < 0x1p50f ? (int64_t)start_f : ((int64_t)1 << 50)) : 0;

    float *combined = malloc((size_t)bins * sizeof(float));
    if (!combined || histc(x, n, histc_bound(o, cmin), histc_bound(o, cmax), new_min, new_max, bins, combined)) {
        free(combined);
        return QG_ERR_NOMEM;
    }
    if (cmin == min_val && cmax == max_val) {
        for (int b = 0; b < bins; b++)
            combined[b] += o->hist[b];
    } else {
        /* _combine_histograms: upsample the old histogram by `up`, place it
         * at `start` in a grid of bins*down cells, integrate in double and
         * take every down-th cell. The integral at a cell is computed from
         * prefix sums instead of walking bins*down cells (down is unbounded
         * when a batch widens a narrow range a lot). */
        double *prefix = malloc(((size_t)bins + 1) * sizeof(double));
        if (!prefix) {
            free(combined);
            return QG_ERR_NOMEM;
        }
        prefix[0] = 0.0;
        for (int j = 0; j < bins; j++)
            prefix[j + 1] = prefix[j] + (double)o->hist[j];
        const int64_t cells_old = (int64_t)bins * up;
        double prev_f32 = 0.0;
        for (int b = 0; b < bins; b++) {
            int64_t m = (int64_t)(b + 1) * down - start; /* old cells at or before this cell */
            m = m < 0 ? 0 : m > cells_old ? cells_old : m;
            const int64_t whole = m / up, part = m % up;
            double acc = prefix[whole] * (double)up + (whole < bins ? (double)part * (double)o->hist[whole] : 0.0);
            /* torch keeps the shifted integral in an fp32 tensor. */
            double interp = (acc - prev_f32) / (double)up;
            combined[b] = combined[b] + (float)interp;
            prev_f32 = (double)(float)acc;
        }
        free(prefix);
    }
    memcpy(o->hist, combined, (size_t)bins * sizeof(float));
    free(combined);
    o->min[0] = cmin;
    o->max[0] = cmax;
    return QG_OK;
}

/* torch's div(a, b, rounding_mode='floor') for floats. */
static float div_floor(float a, float b) {
    float mod = fmodf(a, b);
    float div = (a - mod) / b;
    if (mod != 0.0f && ((b < 0.0f) != (mod < 0.0f)))
        div -= 1.0f;
    if (div == 0.0f)
        return copysignf(0.0f, a / b);
    float fd = floorf(div);
    if (div - fd > 0.5f)
        fd += 1.0f;
    return fd;
}

static inline float cube_diff_norm(float de, float db, float density) {
    float norm = (de * de * de - db * db * db) / 3.0f;
    return density * norm;
}

/* _compute_quantization_error: the L2 error of mapping bins
 * [start, end] onto dst_nbins uniform levels. */
static double quant_error(const qg_observer *o, int start, int end) {
    const int bins = o->spec.observer.bins;
    const double bin_width = ((double)o->max[0] - (double)o->min[0]) / bins;
    const double dst_nbins = dst_nbins_of(&o->spec);
    const double dst_w = bin_width * (double)(end - start + 1) / dst_nbins;
    if (dst_w == 0.0)
        return 0.0;
    const float bw_f = (float)bin_width, dw = (float)dst_w;
    const float half_pos = (float)(dst_w / 2), half_neg = (float)(-dst_w / 2);
    const float mid_norm_unit = (half_pos * half_pos * half_pos - half_neg * half_neg * half_neg) / 3.0f;
    const float top = (float)(dst_nbins - 1);
    double sum = 0.0;
    for (int i = 0; i < bins; i++) {
        float begin = (float)(i - start) * bw_f;
        float endv = begin + bw_f;
        float b_of_begin = fminf(fmaxf(div_floor(begin, dw), 0.0f), top);
        float b_of_end = fminf(fmaxf(div_floor(endv, dw), 0.0f), top);
        float begin_center = (b_of_begin + 0.5f) * dw;
        float density = o->hist[i] / bw_f;
        float norm = 0.0f;
        norm += cube_diff_norm(half_pos, begin - begin_center, density);
        norm += (b_of_end - b_of_begin - 1.0f) * (density * mid_norm_unit);
        float end_center = b_of_end * dw + half_pos;
        norm += cube_diff_norm(endv - end_center, half_neg, density);
        sum += norm;
    }
    return sum;
}

void qg_hist_search(const qg_observer *o, float *new_min, float *new_max) {
    const int bins = o->spec.observer.bins;
    const float bin_width = (o->max[0] - o->min[0]) / (float)bins;
    double total = 0.0;
    float *csum = malloc((size_t)bins * sizeof(float));
    if (!csum) {
        *new_min = o->min[0];
        *new_max = o->max[0];
        return;
    }
    float run = 0.0f;
    for (int b = 0; b < bins; b++) {
        run += o->hist[b];
        csum[b] = run;
        total += o->hist[b];
    }
    const double step = 1e-5;
    double alpha = 0.0, beta = 1.0, norm_min = INFINITY;
    int start = 0, end = bins - 1;
    while (alpha < beta) {
        double next_alpha = alpha + step, next_beta = beta - step;
        int l = start, r = end;
        while (l < end && csum[l] < (float)(next_alpha * total))
            l++;
        while (r > start && csum[r] > (float)(next_beta * total))
            r--;
        int next_start = start, next_end = end;
        if (l - start > end - r) {
            next_start = l;
            alpha = next_alpha;
        } else {
            next_end = r;
            beta = next_beta;
        }
        if (next_start == start && next_end == end)
            continue;
        double norm = quant_error(o, next_start, next_end);
        if (norm > norm_min)
            break;
        norm_min = norm;
        start = next_start;
        end = next_end;
    }
    free(csum);
    *new_min = o->min[0] + bin_width * (float)start;
    *new_max = o->min[0] + bin_width * (float)(end + 1);
}
