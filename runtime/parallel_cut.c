/* Cutting a tensor into pieces, and the rotated per-channel parameters of
 * a piece (parallel_cut.h). */
#include "parallel_cut.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { MASK_GRAIN = 64, DEFAULT_MIN_TASK = 65536 };

static size_t gcd(size_t a, size_t b) {
    while (b) {
        const size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

size_t qg_cut_grain(size_t channels, size_t inner) {
    if (channels <= 1 || inner <= 1)
        return MASK_GRAIN;
    const size_t part = inner / gcd(inner, MASK_GRAIN);
    return part > SIZE_MAX / MASK_GRAIN ? SIZE_MAX : part * MASK_GRAIN;
}

size_t qg_cut(const qg_parallel *par, size_t n, size_t grain, size_t *step) {
    *step = n;
    if (!par || par->threads < 2 || n == 0)
        return 1;
    const size_t min_task = par->min_task_elements ? par->min_task_elements : DEFAULT_MIN_TASK;
    size_t want = n / min_task < par->threads ? n / min_task : par->threads;
    if (want < 2)
        return 1;
    size_t s = n / want + (n % want != 0);
    if (s > SIZE_MAX - grain)
        return 1;
    s = (s + grain - 1) / grain * grain;
    if (s >= n)
        return 1;
    *step = s;
    return n / s + (n % s != 0);
}

void qg_run_pieces(const qg_parallel *par, size_t pieces, qg_task_fn task, void *ctx) {
    if (par && par->parallel_for && pieces > 1) {
        par->parallel_for(par->pool, pieces, task, ctx);
        return;
    }
    for (size_t i = 0; i < pieces; i++)
        task(ctx, i);
}

/* Two copies of count values of size `size` back to back (NULL src: NULL). */
static void *doubled(const void *src, size_t count, size_t size, bool *ok) {
    if (!src)
        return NULL;
    char *d = malloc(2 * count * size);
    if (!d) {
        *ok = false;
        return NULL;
    }
    memcpy(d, src, count * size);
    memcpy(d + count * size, src, count * size);
    return d;
}

bool qg_rotation_of_qparams(const qg_qparams *qp, qg_rotation *rot) {
    bool ok = true;
    *rot = (qg_rotation){qp->channels, qp->inner ? qp->inner : 1, NULL, NULL, NULL};
    rot->f0 = doubled(qp->scale, qp->channels, sizeof(float), &ok);
    rot->f1 = doubled(qp->zero_point_float, qp->channels, sizeof(float), &ok);
    rot->i0 = doubled(qp->zero_point, qp->channels, sizeof(int32_t), &ok);
    if (!ok)
        qg_rotation_free(rot);
    return ok;
}

bool qg_rotation_of_requant(const qg_requant_params *rp, qg_rotation *rot) {
    bool ok = true;
    *rot = (qg_rotation){rp->channels, rp->inner ? rp->inner : 1, NULL, NULL, NULL};
    rot->f0 = doubled(rp->s_w, rp->channels, sizeof(float), &ok);
    rot->i0 = doubled(rp->bias_q, rp->channels, sizeof(int32_t), &ok);
    if (!ok)
        qg_rotation_free(rot);
    return ok;
}

void qg_rotation_free(qg_rotation *rot) {
    free(rot->f0);
    free(rot->f1);
    free(rot->i0);
    memset(rot, 0, sizeof *rot);
}

static size_t first_channel(const qg_rotation *rot, size_t at) { return at / rot->inner % rot->channels; }

qg_qparams qg_rotated_qparams(const qg_qparams *qp, const qg_rotation *rot, size_t at) {
    qg_qparams r = *qp;
    if (!rot->f0)
        return r;
    const size_t c0 = first_channel(rot, at);
    r.scale = rot->f0 + c0;
    r.zero_point_float = rot->f1 ? rot->f1 + c0 : NULL;
    r.zero_point = rot->i0 ? rot->i0 + c0 : NULL;
    return r;
}

qg_requant_params qg_rotated_requant(const qg_requant_params *rp, const qg_rotation *rot, size_t at) {
    qg_requant_params r = *rp;
    if (!rot->f0)
        return r;
    const size_t c0 = first_channel(rot, at);
    r.s_w = rot->f0 + c0;
    r.bias_q = rot->i0 ? rot->i0 + c0 : NULL;
    return r;
}
