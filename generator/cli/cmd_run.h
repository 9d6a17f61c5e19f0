/* qgen run's shared pieces: its arguments, and the .npy side of it (q
 * files by dtype, outputs staged and renamed into place together). */
#ifndef QGEN_CMD_RUN_H
#define QGEN_CMD_RUN_H

#include "cli.h"

typedef struct run_args {
    const char *spec, *op, *in, *out, *mask, *state, *grad, *bias;
    const char *scale, *zero_point, *s_in, *s_w, *s_out, *grad_factor, *shape;
    int observer_on, fake_quant_on; /* -1: as the state has it */
    bool per_token;
    qg_cli_sets sets;
} run_args;

/* The .npy dtype of a q file of dtype d (4-bit: the packed bytes; fp8: the bits). */
qg_npy_dtype run_npy_of(qg_dtype d);
/* The .npy dtype of the spec's float tensors: float32, float16, or uint16
 * holding bfloat16 bits (docs/semantics.md, "Float types"). */
qg_npy_dtype run_float_npy(const qg_spec *sp);
/* A float input of the spec's float_type, widened to float32 in place. */
int run_widen_input(const qg_spec *sp, qg_npy *x);
/* A float output, narrowed to the spec's float_type. */
int run_write_float(const char *path, const qg_spec *sp, const qg_npy *shape_of, const float *data);
/* An error naming `path` unless a has dtype `want` (`why` says what it is). */
int run_expect_dtype(const char *path, const qg_npy *a, qg_npy_dtype want, const char *why);
/* Outputs go to temporary files first; run_finish_outputs renames them all
 * into place when rc is 0, or removes them all. */
int run_stage(const char *path, qg_npy_dtype d, const size_t *shape, int ndim, const void *data);
int run_write_out(const char *path, qg_npy_dtype d, const qg_npy *shape_of, const void *data);
int run_write_q(const char *path, const qg_spec *sp, const qg_npy *shape_of, const void *q);
int run_write_mask(const char *path, const qg_spec *sp, size_t n, const uint8_t *mask, const qg_npy *x);
int run_finish_outputs(int rc);
/* --shape D0,D1,...: the dimensions and their product into shape. */
int run_parse_shape(const char *arg, qg_npy *shape);
/* A packed 4-bit input's tensor shape, from --shape or two elements per byte. */
int run_unpacked_shape(const run_args *a, qg_npy *x);
/* quantize, dequantize and fake_quant of a spec with a block format
 * (cmd_run_block.c); x is the --in file as read. */
int run_block_op(const run_args *a, const qg_spec *sp, qg_npy *x);

#endif
