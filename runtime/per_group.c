/* Per-group quantize, dequantize and fake_quant on per-channel kernels
 * (docs/semantics.md, "Layouts"). A per-group spec's generated kernels
 * walk channels read from qp->channels at run time; this driver cuts the
 * tensor into pieces whose parameters form such a channel table:
 *   inner == 1: a row's whole groups are channels of `group_size` elements
 *     (all rows at once when the groups tile the rows), its short last
 *     group one channel;
 *   inner > 1: each group of rows is a channels-last piece of `inner`
 *     channels.
 * One driver for every backend and ISA, so their per-group layouts agree by
 * construction. The float tensors hold the spec's float_type (16-bit codes
 * are converted inside the kernels). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qgen/kernel_support.h"
#include "arg_check.h"

/* The drivers serve per-group specs alone: another has no group size to
 * walk by (group_size 0). */
static int per_group_spec(const qg_spec *sp) { return qg_qscheme_is_per_group(sp->qscheme) && sp->group_size > 0; }

typedef void (*piece_fn)(void *ctx, size_t start, size_t count, const qg_qparams *qp);

static qg_qparams piece_qparams(const qg_qparams *qp, size_t param, size_t channels, size_t inner) {
    qg_qparams p = *qp;
    p.scale = qp->scale + param;
    p.zero_point = qp->zero_point ? qp->zero_point + param : NULL;
    p.zero_point_float = NULL;
    p.channels = channels;
    p.inner = inner;
    return p;
}

/* Calls fn on every piece in increasing order of start. */
static void walk(const qg_spec *sp, const qg_qparams *qp, size_t n, piece_fn fn, void *ctx) {
    const size_t D = qp->channels, G = sp->group_size, inner = qp->inner;
    const size_t groups = (D + G - 1) / G, whole = D / G, rest = D % G;
    if (D == 0 || inner == 0 || n == 0)
        return;
    const size_t outer = n / (D * inner);
    if (inner == 1 && rest == 0) {
        const qg_qparams p = piece_qparams(qp, 0, outer * groups, G);
        fn(ctx, 0, n, &p);
        return;
    }
    for (size_t o = 0; o < outer; o++) {
        const size_t row = o * D * inner, param = o * groups * inner;
        if (inner == 1) {
            if (whole) {
                const qg_qparams p = piece_qparams(qp, param, whole, G);
                fn(ctx, row, whole * G, &p);
            }
            const qg_qparams p = piece_qparams(qp, param + whole, 1, rest);
            fn(ctx, row + whole * G, rest, &p);
            continue;
        }
        for (size_t g = 0; g < groups; g++) {
            const size_t len = g < whole ? G : rest;
            const qg_qparams p = piece_qparams(qp, param + g * inner, inner, 1);
            fn(ctx, row + g * G * inner, len * inner, &p);
        }
    }
}

/* The longest piece walk() makes, for a packed mask's scratch bits. */
static size_t longest_piece(const qg_spec *sp, const qg_qparams *qp, size_t n) {
    const size_t D = qp->channels, G = sp->group_size, inner = qp->inner;
    if (inner == 1)
        return D % G == 0 ? n : (D / G) * G > D % G ? (D / G) * G : D % G;
    return (G < D ? G : D) * inner;
}

/* Whether every piece starts on a byte of a packed mask. */
static int pieces_byte_aligned(const qg_spec *sp, const qg_qparams *qp) {
    const size_t D = qp->channels, G = sp->group_size, inner = qp->inner;
    if (inner == 1)
        return D % G == 0 || (D % 8 == 0 && (D / G * G) % 8 == 0);
    return (D * inner) % 8 == 0 && (G * inner) % 8 == 0;
}

typedef struct fq_ctx {
    qg_fake_quant_link_fn kernel;
    const char *x;
    char *y;
    size_t esize; /* bytes per float element */
    uint8_t *mask;
    int packed;
    uint8_t *scratch; /* packed masks of pieces that start inside a byte */
} fq_ctx;

static void fake_quant_piece(void *ctx, size_t start, size_t count, const qg_qparams *qp) {
    fq_ctx *c = ctx;
    const char *x = c->x + start * c->esize;
    char *y = c->y + start * c->esize;
    if (!c->mask || !c->packed) {
        c->kernel(x, y, c->mask ? c->mask + start : NULL, count, qp);
        return;
    }
    if (start % 8 == 0) {
        /* the piece owns its bytes; a later piece ORs into its last one */
        c->kernel(x, y, c->mask + start / 8, count, qp);
        return;
    }
    c->kernel(x, y, c->scratch, count, qp);
    for (size_t k = 0; k < count; k += 64) {
        const unsigned len = count - k < 64 ? (unsigned)(count - k) : 64;
        qg_ks_put_bits(c->mask, start + k, qg_ks_get_bits(c->scratch, k, len), len);
    }
}

void qg_group_fake_quant(const qg_spec *sp, qg_fake_quant_link_fn kernel, const void *x, void *y, uint8_t *mask,
                         size_t n, const qg_qparams *qp) {
    QG_NEED_OR_RETURN(sp && kernel && qp && ((x && y) || n == 0) && per_group_spec(sp));
    fq_ctx c = {kernel, x, y, qg_float_type_size(sp->float_type), mask, sp->compat_mask, NULL};
    if (mask && c.packed) {
        memset(mask, 0, (n + 7) / 8);
        if (!pieces_byte_aligned(sp, qp) && !(c.scratch = malloc((longest_piece(sp, qp, n) + 7) / 8 + 8))) {
            /* out of memory before any element is written: the reference */
            if (sp->float_type == QG_FLOAT32)
                qg_ref_fake_quant(sp, x, y, mask, n, qp);
            else
                qg_ftype_fake_quant(sp, NULL, x, y, mask, n, qp);
            return;
        }
    }
    walk(sp, qp, n, fake_quant_piece, &c);
    free(c.scratch);
}

typedef struct q_ctx {
    qg_quantize_link_fn quantize;
    qg_dequantize_link_fn dequantize;
    const char *x;
    char *y;
    size_t esize; /* bytes per float element */
    const unsigned char *q_in;
    unsigned char *q_out;
    size_t q_size;
} q_ctx;

static void quantize_piece(void *ctx, size_t start, size_t count, const qg_qparams *qp) {
    q_ctx *c = ctx;
    c->quantize(c->x + start * c->esize, c->q_out + start * c->q_size, count, qp);
}

static void dequantize_piece(void *ctx, size_t start, size_t count, const qg_qparams *qp) {
    q_ctx *c = ctx;
    c->dequantize(c->q_in + start * c->q_size, c->y + start * c->esize, count, qp);
}

void qg_group_quantize(const qg_spec *sp, qg_quantize_link_fn kernel, const void *x, void *q, size_t n,
                       const qg_qparams *qp) {
    QG_NEED_OR_RETURN(sp && kernel && qp && ((x && q) || n == 0) && per_group_spec(sp));
    q_ctx c = {.quantize = kernel, .x = x, .q_out = q, .q_size = qg_dtype_size(sp->dtype)};
    c.esize = qg_float_type_size(sp->float_type);
    walk(sp, qp, n, quantize_piece, &c);
}

void qg_group_dequantize(const qg_spec *sp, qg_dequantize_link_fn kernel, const void *q, void *y, size_t n,
                         const qg_qparams *qp) {
    QG_NEED_OR_RETURN(sp && kernel && qp && ((y && q) || n == 0) && per_group_spec(sp));
    q_ctx c = {.dequantize = kernel, .y = y, .q_in = q, .q_size = qg_dtype_size(sp->dtype)};
    c.esize = qg_float_type_size(sp->float_type);
    walk(sp, qp, n, dequantize_piece, &c);
}
