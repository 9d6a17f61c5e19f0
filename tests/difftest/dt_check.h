/* The differential tester's comparison: one spec's kernels, reached through
 * function pointers, against the runtime's reference on cases drawn from a
 * seed. Plain C on libqgen_rt alone, so that the same code runs in the
 * host's qgen-difftest (kernels from the JIT, the C backend and the LLVM
 * backend's objects) and in dt_runner under qemu (generated C of a foreign
 * ISA): the cases and the data are drawn with integer arithmetic and exact
 * float operations only, the same on every architecture. */
#ifndef QGEN_DT_CHECK_H
#define QGEN_DT_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "qgen/runtime.h"

/* The generated ABI with the float side untyped (float, or the 16-bit
 * patterns of a bfloat16/float16 spec) and q as bytes. */
typedef void (*dt_quantize_fn)(const void *x, void *q, size_t n, const qg_qparams *qp);
typedef void (*dt_dequantize_fn)(const void *q, void *y, size_t n, const qg_qparams *qp);
typedef void (*dt_fake_quant_fn)(const void *x, void *y, uint8_t *mask, size_t n, const qg_qparams *qp);
typedef void (*dt_backward_fn)(const void *dy, const uint8_t *mask, void *dx, size_t n);
typedef qg_status (*dt_observe_fn)(const void *x, size_t n, size_t inner, qg_observer *obs, qg_error *err);
typedef void (*dt_requantize_fn)(const int32_t *acc, void *q, size_t n, const qg_requant_params *rp);
typedef struct dt_kernels {
    dt_quantize_fn quantize;
    dt_dequantize_fn dequantize;
    dt_fake_quant_fn fake_quant;
    dt_backward_fn fake_quant_backward;
    dt_observe_fn observe;
    dt_requantize_fn requantize;
} dt_kernels;

typedef enum dt_op {
    DT_FAKE_QUANT,
    DT_QUANTIZE,
    DT_DEQUANTIZE,
    DT_BACKWARD,
    DT_REQUANTIZE,
    DT_OBSERVE,
    DT_FUSED,
    DT_DYNAMIC,
    DT_OP_COUNT
} dt_op;

const char *dt_op_name(dt_op op);

/* One case: an op on a tensor of n elements whose channels repeat every
 * `inner` elements (docs/semantics.md, "Layouts"), data from `seed`. */
typedef struct dt_case {
    dt_op op;
    size_t n, inner;
    uint64_t seed;
} dt_case;

/* The first difference a case found. */
typedef struct dt_mismatch {
    dt_case c;
    char what[48]; /* "fake_quant mask", "quantize guard", ... */
    size_t index;  /* of the first differing element (or byte) */
} dt_mismatch;

typedef struct dt_tally {
    uint64_t cases, values, mismatches;
    dt_mismatch first; /* valid when mismatches > 0 */
} dt_tally;

/* Up to cap cases for the spec, drawn from seed: every op the spec has,
 * at lengths around multiples of `step` (the elements of one main-loop
 * iteration) and a few random ones, in each layout the qscheme allows. */
size_t dt_draw_cases(const qg_spec *spec, uint64_t seed, size_t step, dt_case *out, size_t cap);

/* Runs one case on k and on the reference; adds to t. Returns the
 * mismatches it found. */
uint64_t dt_run_case(const qg_spec *spec, const dt_kernels *k, const dt_case *c, dt_tally *t);

/* Every case drawn from seed, run. */
void dt_run_seed(const qg_spec *spec, const dt_kernels *k, uint64_t seed, size_t step, dt_tally *t);

/* The case at the smallest length (same op, layout and data seed) that
 * still fails; c itself when no shorter one does. */
dt_case dt_shrink_length(const qg_spec *spec, const dt_kernels *k, dt_case c);

#endif
