/* The elementwise ops on several threads (qgen/parallel.h): the tensor is
 * cut into pieces on whole channel runs and whole mask bytes, and each
 * piece runs the one kernel with its channels' parameters rotated so that
 * its first run reads the parameters of the channel it belongs to. */
#include <stdbool.h>
#include <stdlib.h>

#include "parallel_cut.h"
#include "qgen/kernel_support.h"
#include "arg_check.h"

typedef enum op_kind { OP_QUANTIZE, OP_DEQUANTIZE, OP_FAKE_QUANT, OP_BACKWARD, OP_REQUANTIZE } op_kind;

typedef struct job {
    op_kind kind;
    const qg_spec *spec;
    union {
        qg_quantize_fn quantize;
        qg_dequantize_fn dequantize;
        qg_fake_quant_fn fake_quant;
        qg_backward_fn backward;
        qg_requantize_fn requantize;
    } k;
    const void *in;
    void *out;
    uint8_t *mask_out;      /* fake_quant */
    const uint8_t *mask_in; /* backward */
    size_t n, step;
    size_t in_size, out_size; /* bytes per element; 0: the spec's q, whose bytes qg_q_bytes counts */
    bool packed_mask;
    const qg_qparams *qp;
    const qg_requant_params *rp;
    qg_rotation rot;
} job;

/* p + bytes; NULL stays NULL (data may be NULL when n is 0). */
static const void *advanced(const void *p, size_t bytes) { return p ? (const char *)p + bytes : NULL; }

/* Bytes before element `at` of a tensor whose elements take `size` bytes
 * (0: the spec's q; pieces start on even elements, so 4-bit ones on a
 * byte). */
static size_t bytes_before(const job *j, size_t size, size_t at) {
    return size ? at * size : qg_q_bytes(j->spec->dtype, at);
}

/* The reference on a 16-bit spec's tensors, through the runtime's driver
 * (docs/semantics.md, "Float types"). */
static void reference16(const job *j, const void *in, void *out, uint8_t *mask_out, const uint8_t *mask_in, size_t n,
                        const qg_qparams *qp) {
    const qg_spec *sp = j->spec;
    switch (j->kind) {
    case OP_QUANTIZE: qg_ftype_quantize(sp, NULL, in, out, n, qp); break;
    case OP_DEQUANTIZE: qg_ftype_dequantize(sp, NULL, in, out, n, qp); break;
    case OP_FAKE_QUANT: qg_ftype_fake_quant(sp, NULL, in, out, mask_out, n, qp); break;
    case OP_BACKWARD: qg_ftype_fake_quant_backward(sp, NULL, in, mask_in, out, n); break;
    case OP_REQUANTIZE: break;
    }
}

static void run_piece(void *ctx, size_t i) {
    const job *j = ctx;
    const size_t at = i * j->step, n = j->n - at < j->step ? j->n - at : j->step;
    const void *in = advanced(j->in, bytes_before(j, j->in_size, at));
    void *out = j->out ? (char *)j->out + bytes_before(j, j->out_size, at) : NULL;
    const size_t mask_at = j->packed_mask ? at / 8 : at;
    uint8_t *mask_out = j->mask_out ? j->mask_out + mask_at : NULL;
    const uint8_t *mask_in = advanced(j->mask_in, mask_at);
    qg_qparams rotated;
    qg_requant_params rp;
    const qg_qparams *qp = j->qp ? &rotated : NULL; /* NULL: a block spec's */
    if (j->qp)
        rotated = qg_rotated_qparams(j->qp, &j->rot, at);
    if (j->rp)
        rp = qg_rotated_requant(j->rp, &j->rot, at);
    const bool given = j->kind == OP_QUANTIZE     ? j->k.quantize != NULL
                       : j->kind == OP_DEQUANTIZE ? j->k.dequantize != NULL
                       : j->kind == OP_FAKE_QUANT ? j->k.fake_quant != NULL
                       : j->kind == OP_BACKWARD   ? j->k.backward != NULL
                                                  : true;
    if (!given && j->spec->float_type != QG_FLOAT32) {
        reference16(j, in, out, mask_out, mask_in, n, qp);
        return;
    }
    switch (j->kind) {
    case OP_QUANTIZE: j->k.quantize ? j->k.quantize(in, out, n, qp) : qg_ref_quantize(j->spec, in, out, n, qp); break;
    case OP_DEQUANTIZE:
        j->k.dequantize ? j->k.dequantize(in, out, n, qp) : qg_ref_dequantize(j->spec, in, out, n, qp);
        break;
    case OP_FAKE_QUANT:
        j->k.fake_quant ? j->k.fake_quant(in, out, mask_out, n, qp)
                        : qg_ref_fake_quant(j->spec, in, out, mask_out, n, qp);
        break;
    case OP_BACKWARD:
        j->k.backward ? j->k.backward(in, mask_in, out, n) : qg_ref_fake_quant_backward(j->spec, in, mask_in, out, n);
        break;
    case OP_REQUANTIZE:
        j->k.requantize ? j->k.requantize(in, out, n, &rp) : qg_ref_requantize(j->spec, in, out, n, &rp);
        break;
    }
}

/* Cuts the job and runs it; one call when it is too small to cut or the
 * rotated parameters cannot be allocated. */
static void run_job(const qg_parallel *par, job *j) {
    size_t channels = 1, inner = 1;
    if (j->qp) {
        channels = j->qp->channels;
        inner = j->qp->inner ? j->qp->inner : 1;
    } else if (j->rp) {
        channels = j->rp->channels ? j->rp->channels : 1;
        inner = channels == 1 ? 1 : j->rp->inner ? j->rp->inner : 1;
    }
    size_t pieces = qg_cut(par, j->n, qg_cut_grain(channels, inner), &j->step);
    if (qg_qscheme_is_per_group(j->spec->qscheme)) /* no rotation of a blocked scale tensor: one call */
        pieces = 1;
    const bool rotated = pieces > 1 && channels > 1 &&
                         (j->qp ? qg_rotation_of_qparams(j->qp, &j->rot) : qg_rotation_of_requant(j->rp, &j->rot));
    if (pieces > 1 && channels > 1 && !rotated)
        pieces = 1;
    if (pieces == 1)
        j->step = j->n;
    qg_run_pieces(pieces > 1 ? par : NULL, pieces, run_piece, j);
    qg_rotation_free(&j->rot);
}

void qg_parallel_quantize(const qg_parallel *par, const qg_spec *spec, qg_quantize_fn kernel, const float *x, void *q,
                          size_t n, const qg_qparams *qp) {
    QG_NEED_OR_RETURN(spec && qg_has_qparams(spec, qp) && ((x && q) || n == 0));
    job j = {.kind = OP_QUANTIZE, .spec = spec, .k.quantize = kernel, .in = x, .out = q, .n = n, .qp = qp};
    j.in_size = qg_float_type_size(spec->float_type);
    run_job(par, &j);
}

void qg_parallel_dequantize(const qg_parallel *par, const qg_spec *spec, qg_dequantize_fn kernel, const void *q,
                            float *x, size_t n, const qg_qparams *qp) {
    QG_NEED_OR_RETURN(spec && qg_has_qparams(spec, qp) && ((x && q) || n == 0));
    job j = {.kind = OP_DEQUANTIZE, .spec = spec, .k.dequantize = kernel, .in = q, .out = x, .n = n, .qp = qp};
    j.out_size = qg_float_type_size(spec->float_type);
    run_job(par, &j);
}

void qg_parallel_fake_quant(const qg_parallel *par, const qg_spec *spec, qg_fake_quant_fn kernel, const float *x,
                            float *y, uint8_t *mask, size_t n, const qg_qparams *qp) {
    QG_NEED_OR_RETURN(spec && qg_has_qparams(spec, qp) && ((x && y) || n == 0));
    job j = {.kind = OP_FAKE_QUANT, .spec = spec, .k.fake_quant = kernel, .in = x, .out = y, .mask_out = mask, .n = n};
    j.qp = qp;
    j.in_size = j.out_size = qg_float_type_size(spec->float_type);
    j.packed_mask = spec->compat_mask;
    run_job(par, &j);
}

void qg_parallel_fake_quant_backward(const qg_parallel *par, const qg_spec *spec, qg_backward_fn kernel,
                                     const float *dy, const uint8_t *mask, float *dx, size_t n) {
    QG_NEED_OR_RETURN(spec && ((dy && dx) || n == 0));
    job j = {.kind = OP_BACKWARD, .spec = spec, .k.backward = kernel, .in = dy, .out = dx, .mask_in = mask, .n = n};
    j.in_size = j.out_size = qg_float_type_size(spec->float_type);
    j.packed_mask = spec->compat_mask;
    run_job(par, &j);
}

void qg_parallel_requantize(const qg_parallel *par, const qg_spec *out_spec, qg_requantize_fn kernel,
                            const int32_t *acc, void *q, size_t n, const qg_requant_params *rp) {
    QG_NEED_OR_RETURN(out_spec && rp && ((acc && q) || n == 0));
    job j = {.kind = OP_REQUANTIZE, .spec = out_spec, .k.requantize = kernel, .in = acc, .out = q, .n = n, .rp = rp};
    j.in_size = sizeof(int32_t);
    run_job(par, &j);
}
