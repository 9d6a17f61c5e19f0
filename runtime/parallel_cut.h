/* How a tensor is cut into pieces for qgen/parallel.h, shared by the
 * elementwise ops and the observers. */
#ifndef QGEN_PARALLEL_CUT_H
#define QGEN_PARALLEL_CUT_H

#include <stdbool.h>
#include <stddef.h>

#include "qgen/parallel.h"

/* The elements a piece boundary must be a multiple of: whole channel runs
 * and whole bytes of a packed mask (64 elements: a cache line of floats). */
size_t qg_cut_grain(size_t channels, size_t inner);

/* How many pieces n elements make under par (1: do not cut); *step is the
 * elements of every piece but the last, a multiple of grain. */
size_t qg_cut(const qg_parallel *par, size_t n, size_t grain, size_t *step);

/* task(ctx, 0..pieces) through par's parallel_for (NULL par or callback:
 * one after another on this thread). */
void qg_run_pieces(const qg_parallel *par, size_t pieces, qg_task_fn task, void *ctx);

/* Per-channel parameters written out twice in a row, so that the `channels`
 * values starting at any channel c0 are the parameters rotated by c0. */
typedef struct qg_rotation {
    size_t channels, inner;
    float *f0, *f1; /* scale and zero_point_float, or s_w */
    int32_t *i0;    /* zero_point, or bias_q */
} qg_rotation;

bool qg_rotation_of_qparams(const qg_qparams *qp, qg_rotation *rot);
bool qg_rotation_of_requant(const qg_requant_params *rp, qg_rotation *rot);
void qg_rotation_free(qg_rotation *rot);

/* The parameters of the piece starting at element `at` (a multiple of the
 * run length); unrotated when rot holds nothing. */
qg_qparams qg_rotated_qparams(const qg_qparams *qp, const qg_rotation *rot, size_t at);
qg_requant_params qg_rotated_requant(const qg_requant_params *rp, const qg_rotation *rot, size_t at);

#endif
