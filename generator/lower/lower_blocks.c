/* ggml's block formats (docs/semantics.md, "Block formats"), lowered once
 * for both backends: the walk over a row's blocks. Each block's scale
 * comes from the block (observe's min/max reduction), is stored as fp16
 * before its codes, and the block's 32 codes are the span of the blocks'
 * element arithmetic (qg_plan_block_elements) with s = d. A block the
 * fast path does not define (a NaN or an infinity in it) goes to the
 * runtime's reference, one block at a time. */
#include <float.h>

#include "kernel_builder.h"
#include "qgen/blocks.h"

#define B (b->ops)

enum { QK = 32 };

static qg_kv *size(qg_kb *b, long long v) { return B->imm(b, QG_KT_SIZE, v); }

/* The span over one block's codes: in and out such that element `at` of
 * the block's row lands on its code; s = d, 1/s = id, z = 0. */
static void block_span(qg_kb *b, const qg_plan *p, qg_kv *in, qg_kv *out, qg_kv *at, qg_kv *d, qg_kv *id) {
    qg_kv *io[3] = {in, out, NULL};
    qg_lower_call_span(b, p, B->span_ref(b, ""), io, at, size(b, QK), d, id, B->imm(b, QG_KT_I32, 0), NULL);
}

/* Returns where `cond` holds. */
static void refuse_if(qg_kb *b, qg_kv *cond) {
    B->if_open(b, cond);
    B->ret(b);
    B->if_close(b);
}

/* The reference's row check (qg_block_quantize_ref): a row of whole
 * blocks and its tensors; otherwise nothing is written. Returns the block
 * count. */
static qg_kv *row_check(qg_kb *b, qg_kv *in, qg_kv *out, qg_kv *n) {
    qg_kv *nb = B->let(b, "nb", B->bin(b, QG_KB_DIV, n, size(b, QK)));
    refuse_if(b, B->bin(b, QG_KB_NE, B->bin(b, QG_KB_MUL, nb, size(b, QK)), n));
    qg_kv *null = B->imm(b, QG_KT_PTR, 0);
    qg_kv *missing = B->bin(b, QG_KB_OR, B->bin(b, QG_KB_EQ, in, null), B->bin(b, QG_KB_EQ, out, null));
    refuse_if(b, B->bin(b, QG_KB_AND, B->bin(b, QG_KB_NE, n, size(b, 0)), missing));
    return nb;
}

/* q8_0: d = amax / 127 and id = 1/d (0 where that overflows), the codes
 * rounded half away from zero; a block holding NaN or an infinity is the
 * reference's (it reads them as 0 and +-FLT_MAX). */
static void quantize_q8_0(qg_kb *b, const qg_plan *p, qg_block_format f) {
    qg_kv *x = B->arg(b, QG_ARG_F32_IN), *q = B->arg(b, QG_ARG_Q_OUT), *n = B->arg(b, QG_ARG_N);
    B->discard(b, B->arg(b, QG_ARG_QPARAMS));
    qg_kv *nb = row_check(b, x, q, n);
    const long long bytes = (long long)qg_block_bytes(f);
    qg_kvar *mn = B->var(b, "mn", QG_KT_F32, B->fimm(b, 0.0f)), *mx = B->var(b, "mx", QG_KT_F32, B->fimm(b, 0.0f));
    qg_kvar *i = B->var(b, "i", QG_KT_SIZE, size(b, 0));
    B->loop_open(b, "blocks", i, QG_KTEST_LT, nb, size(b, 1));
    qg_kv *at = B->let(b, "at", B->bin(b, QG_KB_MUL, B->get(b, i), size(b, QK)));
    qg_kv *blk = B->let(b, "blk", B->byte_ptr(b, q, B->bin(b, QG_KB_MUL, B->get(b, i), size(b, bytes))));
    qg_kv *in = B->elem_ptr(b, QG_KT_F32, x, at);
    const qg_kt i32 = QG_KT_I32;
    qg_kv *margs[4] = {in, size(b, QK), B->var_addr(b, mn), B->var_addr(b, mx)};
    qg_kv *ordered = B->let(b, "ordered", B->call(b, B->minmax_ref(b), NULL, &i32, margs, 4));
    qg_kv *hi = B->get(b, mx), *neg = B->let(b, "neg", B->bin(b, QG_KB_SUB, B->fimm(b, 0.0f), B->get(b, mn)));
    qg_kv *amax = B->let(b, "amax", B->select(b, B->bin(b, QG_KB_LT, neg, hi), hi, neg)); /* +0 for a zero block */
    B->if_open(b, B->bin(b, QG_KB_OR, B->bin(b, QG_KB_EQ, ordered, B->imm(b, QG_KT_I32, 0)),
                         B->bin(b, QG_KB_LT, B->fimm(b, FLT_MAX), amax)));
    qg_kv *rargs[5] = {B->imm(b, QG_KT_I32, f), in, size(b, QK), blk, B->imm(b, QG_KT_PTR, 0)};
    B->discard(b, B->call(b, NULL, "qg_block_quantize_ref", &i32, rargs, 5));
    B->loop_continue(b);
    B->if_close(b);
    qg_kv *d = B->let(b, "d", B->bin(b, QG_KB_DIV, amax, B->fimm(b, 127.0f)));
    qg_kv *r = B->let(b, "r", B->bin(b, QG_KB_DIV, B->fimm(b, 1.0f), d));
    qg_kv *id = B->let(b, "id", B->select(b, B->bin(b, QG_KB_GE, B->fimm(b, FLT_MAX), r), r, B->fimm(b, 0.0f)));
    B->store_f16(b, blk, d);
    /* the codes after the scale: element at + j of x lands on blk[2 + j] */
    qg_kv *codes = B->byte_ptr(
        b, q, B->bin(b, QG_KB_ADD, B->bin(b, QG_KB_MUL, B->get(b, i), size(b, bytes - QK)), size(b, bytes - QK)));
    block_span(b, p, x, codes, at, d, id);
    B->loop_close(b);
}

/* y = code * d, d the block's fp16 scale as stored (the plan's
 * dequantize with z = 0 is exact in the same order). */
static void dequantize_q8(qg_kb *b, const qg_plan *p, qg_block_format f) {
    qg_kv *q = B->arg(b, QG_ARG_Q_IN), *y = B->arg(b, QG_ARG_F32_OUT), *n = B->arg(b, QG_ARG_N);
    B->discard(b, B->arg(b, QG_ARG_QPARAMS));
    qg_kv *nb = row_check(b, q, y, n);
    const long long bytes = (long long)qg_block_bytes(f);
    qg_kvar *i = B->var(b, "i", QG_KT_SIZE, size(b, 0));
    B->loop_open(b, "blocks", i, QG_KTEST_LT, nb, size(b, 1));
    qg_kv *at = B->let(b, "at", B->bin(b, QG_KB_MUL, B->get(b, i), size(b, QK)));
    qg_kv *d = B->let(b, "d", B->load_f16(b, B->byte_ptr(b, q, B->bin(b, QG_KB_MUL, B->get(b, i), size(b, bytes)))));
    qg_kv *codes = B->byte_ptr(
        b, q, B->bin(b, QG_KB_ADD, B->bin(b, QG_KB_MUL, B->get(b, i), size(b, bytes - QK)), size(b, bytes - QK)));
    block_span(b, p, codes, y, at, d, NULL);
    B->loop_close(b);
}

void qg_lower_block_entry(qg_kb *b, const qg_plan *p, qg_block_format f) {
    B->open_link(b, qg_op_info_of(p->op), "");
    if (p->op == QG_K_QUANTIZE)
        quantize_q8_0(b, p, f);
    else
        dequantize_q8(b, p, f);
    B->close_fn(b, NULL);
}
