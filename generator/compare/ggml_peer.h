/* ggml's own kernels, the peer of the block formats (npm's prebuilt
 * libggml-base.so, with the references and dequantizers, and one
 * libggml-cpu-<level>.so per x86 level, with the SIMD quantizers): loaded
 * with dlopen from the directory that holds them, as ggml's loader picks
 * its level (the highest ggml_backend_score). `qgen compare` and
 * bench_ggml measure them; neither links them. */
#ifndef QGEN_GGML_PEER_H
#define QGEN_GGML_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qgen/blocks.h"

typedef void (*qg_ggml_row_fn)(const void *in, void *out, int64_t k);

typedef struct qg_ggml {
    void *base, *best, *haswell; /* libggml-base, the level ggml picks here, and the AVX2 one */
    char best_name[32];          /* that level: "zen4", "haswell", ... */
} qg_ggml;

/* Loads ggml from dir; false (and g unusable) with why when a library is
 * missing or lacks the entry points used. */
bool qg_ggml_open(const char *dir, qg_ggml *g, char *why, size_t cap);

/* ggml's type of a block format (-1: none), which is also checked against
 * ggml's own name of it. */
int qg_ggml_type(const qg_ggml *g, qg_block_format f);

/* The SIMD quantizer of level `cpu` (g->best or g->haswell), ggml's
 * reference quantizer, and its dequantizer, for ggml type `type`; NULL
 * where ggml has none. */
qg_ggml_row_fn qg_ggml_from_float(void *cpu, int type);
qg_ggml_row_fn qg_ggml_from_float_ref(const qg_ggml *g, int type);
qg_ggml_row_fn qg_ggml_to_float(const qg_ggml *g, int type);

/* The timing input both measurements use: n random values, each block of
 * 32 at its own scale 2^-8 .. 2^8, the same for every call. */
void qg_ggml_sample_row(float *x, size_t n);

#endif
