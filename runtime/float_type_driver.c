/* bfloat16/float16 tensors on float32 kernels (docs/semantics.md, "Float
 * types"): the generated entry points of a spec with a 16-bit float_type
 * call these with the spec's float32 kernel. The float inputs are widened
 * (exactly) into a buffer, the kernel runs on it, the float outputs are
 * narrowed nearest-even. A tensor goes through a stack buffer in pieces
 * that start where the parameter pattern starts again (whole periods of
 * channels x inner, a multiple of 8 elements so that packed masks and
 * 4-bit q tensors split on bytes). A longer per-channel period goes in
 * pieces of whole channel runs (or parts of one run); any other long
 * period through one heap copy. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qgen/kernel_support.h"
#include "arg_check.h"
#include "rt_internal.h"

enum { CHUNK = 2048 };

typedef enum op_kind { OP_QUANTIZE, OP_DEQUANTIZE, OP_FAKE_QUANT, OP_BACKWARD } op_kind;

typedef struct job {
    const qg_spec *sp;
    op_kind op;
    qg_quantize_link_fn quantize;
    qg_dequantize_link_fn dequantize;
    qg_fake_quant_link_fn fake_quant;
    qg_backward_fn backward;
    const uint16_t *in; /* x or dy */
    uint16_t *out;      /* y or dx */
    const void *q_in;   /* dequantize */
    void *q_out;        /* quantize */
    const uint8_t *mask_in;
    uint8_t *mask_out;
    const qg_qparams *qp;
} job;

static size_t byte_offset(const job *j, size_t at) {
    return j->sp->block != QG_BLOCK_NONE ? qg_block_row_bytes(j->sp->block, at) : qg_q_bytes(j->sp->dtype, at);
}

static size_t mask_offset(const job *j, size_t at) { return j->sp->compat_mask ? at / 8 : at; }

/* Elements [at, at + len) with qparams qp, through the float buffers. */
static void run_piece(const job *j, size_t at, size_t len, const qg_qparams *qp, float *fin, float *fout) {
    const qg_float_type ft = j->sp->float_type;
    if (j->in)
        qg_float_type_widen(ft, j->in + at, fin, len);
    uint8_t *mo = j->mask_out ? j->mask_out + mask_offset(j, at) : NULL;
    const uint8_t *mi = j->mask_in ? j->mask_in + mask_offset(j, at) : NULL;
    void *qo = j->q_out ? (unsigned char *)j->q_out + byte_offset(j, at) : NULL;
    const void *qi = j->q_in ? (const unsigned char *)j->q_in + byte_offset(j, at) : NULL;
    const qg_spec *sp = j->sp;
    switch (j->op) { /* a NULL kernel is the reference */
    case OP_QUANTIZE: j->quantize ? j->quantize(fin, qo, len, qp) : qg_ref_quantize(sp, fin, qo, len, qp); break;
    case OP_DEQUANTIZE:
        j->dequantize ? j->dequantize(qi, fout, len, qp) : qg_ref_dequantize(sp, qi, fout, len, qp);
        break;
    case OP_FAKE_QUANT:
        j->fake_quant ? j->fake_quant(fin, fout, mo, len, qp) : qg_ref_fake_quant(sp, fin, fout, mo, len, qp);
        break;
    default: j->backward ? j->backward(fin, mi, fout, len) : qg_ref_fake_quant_backward(sp, fin, mi, fout, len); break;
    }
    if (j->out)
        qg_float_type_narrow(ft, fout, j->out + at, len);
}

/* Out of memory for a long period: element by element on the reference,
 * each element with its own parameters (qg_param_index) as a one-element
 * tensor, q values and mask bits moved with the runtime's helpers. */
static void run_elements(const job *j, size_t n) {
    const qg_spec *sp = j->sp;
    qg_qparams at = {0};
    if (j->qp) {
        at = *j->qp;
        at.inner = at.inner ? at.inner : 1; /* as the kernels walk inner 0 */
    }
    if (j->op == OP_QUANTIZE && qg_dtype_is_packed(sp->dtype) && n)
        memset(j->q_out, 0, qg_q_bytes(sp->dtype, n)); /* qg_store_q ORs nibbles in */
    if (j->mask_out && sp->compat_mask)                /* as the kernels do: bits past n are 0 */
        memset(j->mask_out, 0, (n + 7) / 8);
    for (size_t i = 0; i < n; i++) {
        qg_qparams one = {0};
        if (j->qp) {
            const size_t k = qg_param_index(sp, &at, i);
            one = (qg_qparams){at.scale + k, at.zero_point ? at.zero_point + k : NULL, NULL, 1, 1};
        }
        float x = 0.0f, y = 0.0f;
        if (j->in)
            qg_float_type_widen(sp->float_type, j->in + i, &x, 1);
        int32_t q = 0; /* one element of any dtype, 4-bit in the low nibble */
        uint8_t m = 0;
        if (j->op == OP_QUANTIZE) {
            qg_ref_quantize(sp, &x, &q, 1, &one);
            qg_store_q(sp->dtype, j->q_out, i, qg_load_q(sp->dtype, &q, 0));
        } else if (j->op == OP_DEQUANTIZE) {
            qg_store_q(sp->dtype, &q, 0, qg_load_q(sp->dtype, j->q_in, i));
            qg_ref_dequantize(sp, &q, &y, 1, &one);
        } else if (j->op == OP_FAKE_QUANT) {
            qg_ref_fake_quant(sp, &x, &y, j->mask_out ? &m : NULL, 1, &one);
            if (j->mask_out && sp->compat_mask)
                qg_ks_put_bits(j->mask_out, i, m, 1);
            else if (j->mask_out)
                j->mask_out[i] = m;
        } else {
            m = 1;
            if (j->mask_in)
                m = sp->compat_mask ? (uint8_t)qg_ks_get_bits(j->mask_in, i, 1) : j->mask_in[i];
            qg_ref_fake_quant_backward(sp, &x, &m, &y, 1);
        }
        if (j->out)
            qg_float_type_narrow(sp->float_type, &y, j->out + i, 1);
    }
}

/* Short periods: pieces of whole periods through the stack buffers. */
static void run_periods(const job *j, size_t n, size_t P, size_t per_period, size_t unit) {
    float fin[CHUNK], fout[CHUNK];
    const size_t step = CHUNK / unit * unit;
    for (size_t at = 0; at < n; at += step) {
        qg_qparams qp;
        if (j->qp)
            qp = qg_qparams_at(j->qp, per_period * (at / P));
        run_piece(j, at, n - at < step ? n - at : step, j->qp ? &qp : NULL, fin, fout);
    }
}

/* Per channel with a long period: pieces of whole runs of one period, or
 * parts of one run, through the stack buffers, each with the parameters
 * of its first channel. Piece bounds are run bounds or multiples of the
 * buffer, so with inner a multiple of 8 they fall on whole bytes. */
static void run_channel_runs(const job *j, size_t n) {
    float fin[CHUNK], fout[CHUNK];
    const size_t C = j->sp->channel_len, inner = j->qp->inner ? j->qp->inner : 1;
    for (size_t at = 0; at < n;) {
        const size_t r = at / inner, off = at % inner, c = r % C;
        size_t len = off || inner > CHUNK ? inner - off : inner * (CHUNK / inner < C - c ? CHUNK / inner : C - c);
        len = len < CHUNK ? len : CHUNK;
        len = len < n - at ? len : n - at;
        const qg_qparams qp = qg_qparams_at(j->qp, c);
        run_piece(j, at, len, &qp, fin, fout);
        at += len;
    }
}

/* Block formats (docs/semantics.md, "Block formats"): pieces of whole
 * blocks through the stack buffers, no qparams; a row that is not whole
 * blocks is refused whole, as the float32 op refuses it. A K-quant row the
 * float32 op refuses ends its piece; that piece's y past the refusal reads
 * +0 (the buffer cleared first), the same on every run. */
static void run_blocks(const job *j, size_t n) {
    const size_t E = qg_block_elems(j->sp->block);
    if (!E || n % E)
        return;
    float fin[CHUNK], fout[CHUNK];
    for (size_t at = 0; at < n; at += CHUNK) {
        const size_t len = n - at < CHUNK ? n - at : CHUNK;
        if (j->op == OP_FAKE_QUANT && E > 32)
            memset(fout, 0, len * sizeof fout[0]);
        run_piece(j, at, len, j->qp, fin, fout);
    }
}

static void run(const job *j, size_t n) {
    if (j->sp->block != QG_BLOCK_NONE && j->op != OP_BACKWARD) {
        run_blocks(j, n);
        return;
    }
    size_t per_period;
    const size_t P = qg_param_period(j->sp, j->qp, &per_period);
    size_t unit = P;
    while (unit && unit % 8) /* whole bytes of packed masks and nibbles */
        unit += P;
    if (unit && unit <= CHUNK) {
        run_periods(j, n, P, per_period, unit);
        return;
    }
    const bool bits = j->sp->compat_mask || qg_dtype_is_packed(j->sp->dtype);
    if (j->qp && qg_qscheme_is_per_channel(j->sp->qscheme) && (!bits || (j->qp->inner ? j->qp->inner : 1) % 8 == 0)) {
        run_channel_runs(j, n);
        return;
    }
    float *buf = malloc(2 * (n ? n : 1) * sizeof(float));
    if (!buf) {
        run_elements(j, n);
        return;
    }
    run_piece(j, 0, n, j->qp, buf, buf + n);
    free(buf);
}

void qg_ftype_quantize(const qg_spec *sp, qg_quantize_link_fn f32, const uint16_t *x, void *q, size_t n,
                       const qg_qparams *qp) {
    QG_NEED_OR_RETURN(sp && qg_has_qparams(sp, qp) && ((x && q) || n == 0));
    const job j = {.sp = sp, .op = OP_QUANTIZE, .quantize = f32, .in = x, .q_out = q, .qp = qp};
    run(&j, n);
}

void qg_ftype_dequantize(const qg_spec *sp, qg_dequantize_link_fn f32, const void *q, uint16_t *y, size_t n,
                         const qg_qparams *qp) {
    QG_NEED_OR_RETURN(sp && qg_has_qparams(sp, qp) && ((y && q) || n == 0));
    const job j = {.sp = sp, .op = OP_DEQUANTIZE, .dequantize = f32, .q_in = q, .out = y, .qp = qp};
    run(&j, n);
}

void qg_ftype_fake_quant(const qg_spec *sp, qg_fake_quant_link_fn f32, const uint16_t *x, uint16_t *y, uint8_t *mask,
                         size_t n, const qg_qparams *qp) {
    QG_NEED_OR_RETURN(sp && qg_has_qparams(sp, qp) && ((x && y) || n == 0));
    const job j = {.sp = sp, .op = OP_FAKE_QUANT, .fake_quant = f32, .in = x, .out = y, .mask_out = mask, .qp = qp};
    run(&j, n);
}

void qg_ftype_fake_quant_backward(const qg_spec *sp, qg_backward_fn f32, const uint16_t *dy, const uint8_t *mask,
                                  uint16_t *dx, size_t n) {
    QG_NEED_OR_RETURN(sp && ((dy && dx) || n == 0));
    const job j = {.sp = sp, .op = OP_BACKWARD, .backward = f32, .in = dy, .out = dx, .mask_in = mask};
    run(&j, n);
}

qg_status qg_ftype_observe(const qg_spec *sp, qg_observe_fn f32, const uint16_t *x, size_t n, size_t inner,
                           qg_observer *obs, qg_error *err) {
    QG_NEED_AS(sp, "spec", err, "a spec");
    QG_NEED(obs, err, "an observer from qg_observer_create");
    QG_NEED_DATA(x, n, err);
    /* one call over the whole tensor: a moving average folds once per call */
    float *buf = malloc((n ? n : 1) * sizeof(float));
    if (!buf)
        return qg_error_set(err, QG_ERR_NOMEM, "observe: out of memory widening %zu %s values", n,
                            qg_float_type_name(sp->float_type));
    qg_float_type_widen(sp->float_type, x, buf, n);
    const qg_status st = f32 ? f32(buf, n, inner, obs, err) : qg_observer_update(obs, buf, n, inner, err);
    free(buf);
    return st;
}
