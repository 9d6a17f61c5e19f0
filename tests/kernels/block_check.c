/* Block formats' kernels against the runtime's block reference (see
 * block_check.h). Every row's blocks cycle through the cases
 * docs/semantics.md's rules single out, so a row of 13 blocks or more
 * holds each, and shorter rows start at different ones. */
#include "block_check.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../difftest/dt_rng.h"
#include "length_class.h"
#include "qgen/blocks.h"
#include "qgen/kernel_support.h"
#include "qgen/runtime.h"

enum { MAX_BLOCKS = 70, MAX_ELEMS = 256, MAX_BYTES = 210, PAD = 64, N_KINDS = 13 };
enum { OP_FAKE_QUANT, OP_QUANTIZE, OP_DEQUANTIZE };

static float x[MAX_BLOCKS * MAX_ELEMS + PAD], y[MAX_BLOCKS * MAX_ELEMS + PAD], ry[MAX_BLOCKS * MAX_ELEMS + PAD];
static uint8_t q[MAX_BLOCKS * MAX_BYTES + PAD], rq[MAX_BLOCKS * MAX_BYTES + PAD];
static uint8_t mask[MAX_BLOCKS * MAX_ELEMS + PAD], rmask[MAX_BLOCKS * MAX_ELEMS + PAD];

static dt_rng rng = {0x9E3779B97F4A7C15ull};
static uint64_t next(void) { return dt_next(&rng); }
static float uniform(float lo, float hi) { return lo + (hi - lo) * (float)((next() >> 40) * 0x1p-24); }
static float sign(void) { return next() & 1 ? -1.0f : 1.0f; }

/* One block of E values of case `kind`. */
static void fill_block(float *b, size_t E, int kind) {
    static const float scales[] = {1e-3f, 1.0f, 1e3f, 3e30f};
    const float s = scales[next() % 4];
    for (size_t j = 0; j < E; j++)
        b[j] = uniform(-s, s);
    const size_t at = next() % E;
    switch (kind) {
    case 1: /* ties of q8_0: d = 1, codes k + 0.5 */
    case 2: /* ... and their neighbours */
        for (size_t j = 0; j < E; j++) {
            const float t = (float)(int)(next() % 254) - 127.0f + 0.5f;
            b[j] = kind == 1 ? t : nextafterf(t, sign() * INFINITY);
        }
        b[at] = 127.0f * sign();
        break;
    case 3: /* amax at a power of two */
    case 4: /* ... and just below it */
        for (size_t j = 0; j < E; j++)
            b[j] = uniform(-1.0f, 1.0f);
        b[at] = sign() * (kind == 3 ? 2.0f : nextafterf(2.0f, 0.0f));
        break;
    case 5: /* zeros of both signs */
        for (size_t j = 0; j < E; j++)
            b[j] = next() & 1 ? -0.0f : 0.0f;
        break;
    case 6: /* denormals: 1/d overflows */
        for (size_t j = 0; j < E; j++)
            b[j] = uniform(-1e-40f, 1e-40f);
        break;
    case 7: /* one huge value */
        for (size_t j = 0; j < E; j++)
            b[j] = uniform(-1.0f, 1.0f);
        b[at] = 3.0e38f * sign();
        break;
    case 8: /* a constant block */
        for (size_t j = 0; j < E; j++)
            b[j] = b[0];
        break;
    case 9: b[at] = NAN; break;
    case 10: b[at] = sign() * INFINITY; break;
    case 11: /* amax where 1/d is about to overflow (d near 2^-128) */
        for (size_t j = 0; j < E; j++)
            b[j] = uniform(-1.0f, 1.0f) * 3.7e-37f;
        b[at] = sign() * 127.0f * 0x1p-128f * (next() & 1 ? 1.0f : nextafterf(1.0f, 2.0f));
        break;
    case 12: /* fp16 scale edges: d near 65504 and below fp16's normals */
        for (size_t j = 0; j < E; j++)
            b[j] = uniform(-1.0f, 1.0f);
        b[at] = sign() * (next() & 1 ? 65504.0f * 127.0f : 6.1e-5f * 127.0f);
        break;
    default: break; /* 0: random */
    }
}

static unsigned failed;

static void check_bytes(const char *what, const char *isa, const qg_spec *sp, size_t nb, const void *got,
                        const void *want, size_t len, unsigned long long *compared) {
    *compared += len;
    if (memcmp(got, want, len) == 0)
        return;
    size_t first = 0;
    while (((const uint8_t *)got)[first] == ((const uint8_t *)want)[first])
        first++;
    failed++;
    fprintf(stderr, "  %s/%s %s: %zu blocks: differs from byte %zu on\n", sp->name, isa, what, nb, first);
}

/* The float tensors of a 16-bit spec: x narrowed to the type's codes,
 * the outputs as codes. */
static uint16_t xh[MAX_BLOCKS * MAX_ELEMS + PAD], yh[MAX_BLOCKS * MAX_ELEMS + PAD], ryh[MAX_BLOCKS * MAX_ELEMS + PAD];

/* y and ry from `at` for len elements set to -1, in the spec's type;
 * returns where each starts. */
static void reset_outputs(bool h, size_t at, size_t len, void **got, void **want) {
    for (size_t j = at; j < at + len; j++) {
        y[j] = ry[j] = -1.0f;
        yh[j] = ryh[j] = 0xBF80; /* bfloat16's -1; a float16 -1.875: either is a value */
    }
    *got = h ? (void *)(yh + at) : (void *)(y + at);
    *want = h ? (void *)(ryh + at) : (void *)(ry + at);
}

/* A row of nb blocks (n elements; nb < 0: n is not a multiple of the
 * block, and nothing may be written) at offsets that change with the row. */
static void check_row(const qg_spec *sp, const char *isa, const kc_block_kernels *k, size_t n, size_t seed,
                      unsigned long long *compared) {
    const qg_block_format f = sp->block;
    const size_t E = qg_block_elems(f), nb = n / E, bytes = nb * qg_block_bytes(f);
    const bool whole = n % E == 0, h = sp->float_type != QG_FLOAT32;
    const size_t xo = seed % 4, qo = seed % 3, yo = (seed / 2) % 4, fsize = h ? 2 : 4;
    for (size_t i = 0; i < nb + !whole; i++)
        fill_block(x + xo + i * E, E, (int)((seed + i) % N_KINDS));
    if (h)
        qg_float_type_narrow(sp->float_type, x + xo, xh + xo, (nb + !whole) * E);
    const void *in = h ? (const void *)(xh + xo) : (const void *)(x + xo);
    /* quantize: the reference's bytes, and nothing past them */
    const size_t qlen = (whole ? bytes : qg_block_row_bytes(f, (nb + 1) * E)) + PAD / 2;
    memset(q, 0xA5, sizeof q);
    memset(rq, 0xA5, sizeof rq);
    k->quantize(in, q + qo, n);
    if (whole && h)
        qg_ftype_quantize(sp, NULL, xh + xo, rq + qo, n, NULL);
    else if (whole)
        (void)qg_block_quantize_ref(f, x + xo, n, rq + qo, NULL);
    check_bytes("quantize", isa, sp, nb, q, rq, qo + qlen, compared); /* from q[0]: nothing before the row either */
    kc_manifest_note(OP_QUANTIZE, whole ? nb : 1000 + n);
    /* dequantize of the reference's bytes (inputs past a short row's whole
     * blocks are read as they are: nothing may be written) */
    void *got, *want;
    reset_outputs(h, yo, n + PAD / 2, &got, &want);
    k->dequantize(rq + qo, got, n);
    if (whole && h)
        qg_ftype_dequantize(sp, NULL, rq + qo, want, n, NULL);
    else if (whole)
        (void)qg_block_dequantize_ref(f, rq + qo, n, want, NULL);
    check_bytes("dequantize", isa, sp, nb, got, want, (n + PAD / 2) * fsize, compared);
    kc_manifest_note(OP_DEQUANTIZE, whole ? nb : 1000 + n);
    /* fake_quant, with its mask and without one */
    const size_t mlen = sp->compat_mask ? (n + 7) / 8 : n;
    for (int with_mask = 0; with_mask < 2; with_mask++) {
        reset_outputs(h, yo, n + PAD / 2, &got, &want);
        memset(mask, 0xA5, mlen + PAD);
        memset(rmask, 0xA5, mlen + PAD);
        k->fake_quant(in, got, with_mask ? mask : NULL, n);
        if (whole && h)
            qg_ftype_fake_quant(sp, NULL, xh + xo, want, with_mask ? rmask : NULL, n, NULL);
        else if (whole)
            (void)qg_block_fake_quant_ref(f, x + xo, want, with_mask ? rmask : NULL, sp->compat_mask, n, NULL);
        check_bytes("fake_quant", isa, sp, nb, got, want, (n + PAD / 2) * fsize, compared);
        check_bytes("fake_quant mask", isa, sp, nb, mask, rmask, mlen + PAD, compared);
    }
    kc_manifest_note(OP_FAKE_QUANT, whole ? nb : 1000 + n);
}

unsigned kc_block_check(const qg_spec *sp, const char *isa, const kc_block_kernels *k, unsigned long long *compared) {
    static const size_t rows[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33, 64, 70};
    /* 16-bit rows: the same walk inside the widening driver, whose pieces
     * of 2048 elements a row of 70 blocks of 32 spans */
    static const size_t rows16[] = {0, 1, 2, 3, 7, 13, 17, 70};
    const bool h = sp->float_type != QG_FLOAT32;
    const size_t E = qg_block_elems(sp->block),
                 count = h ? sizeof rows16 / sizeof rows16[0] : sizeof rows / sizeof rows[0];
    failed = 0;
    for (size_t r = 0; r < count; r++) {
        const size_t nrow = h ? rows16[r] : rows[r];
        /* every kind starts a row of one block; the K-quants' longer rows
         * take fewer seeds (their scale search, kernel and reference alike,
         * is most of the run time under qemu) and none past 17 blocks:
         * every kind is in 13 */
        const size_t seeds = E > 32 ? (nrow <= 1 ? 13 : nrow < 13 ? 4 : nrow > 17 ? 0 : 1) : (nrow < 13 ? 13 : 3);
        for (size_t seed = 0; seed < seeds; seed++)
            check_row(sp, isa, k, nrow * E, seed + r, compared);
    }
    /* rows that are not whole blocks: nothing written */
    const size_t short_rows[] = {1, E - 1, E + 1, 3 * E - 5};
    for (size_t r = 0; r < sizeof short_rows / sizeof short_rows[0]; r++)
        check_row(sp, isa, k, short_rows[r], r, compared);
    return failed;
}
