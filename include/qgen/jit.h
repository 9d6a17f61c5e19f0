/* qgen/jit.h - a spec's kernels compiled inside the running process
 * (libqgen, through LLVM's ORC JIT), with an on-disk object cache.
 *
 *   qg_jit *jit;
 *   qg_jit_create(NULL, &jit, &err);            // best ISA of this CPU
 *   const qg_kernels *k;
 *   qg_jit_compile(jit, &spec, 0, &k, &err);    // every op, each compiled
 *   k->fake_quant(x, y, mask, n, &qp);          // on its first call
 *   qg_jit_destroy(jit);                        // the kernels go with it
 *
 * Every call is thread-safe. Errors come back as values with messages; the
 * host process is never aborted (targets are checked before LLVM sees them
 * and LLVM's fatal errors are turned into errors). Pointer arguments as in
 * qgen/runtime.h: a NULL that is not allowed is refused with QG_ERR_ARG. */
#ifndef QGEN_JIT_H
#define QGEN_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qgen/runtime.h"
#include "qgen/spec.h"
#include "qgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qg_jit qg_jit;

#define QG_JIT_BEST_ISA (-1)

typedef struct qg_jit_options {
    int isa;               /* QG_JIT_BEST_ISA, or a qg_isa this CPU runs */
    const char *cache_dir; /* NULL: $XDG_CACHE_HOME/qgen, else ~/.cache/qgen (made
                              with mode 0700; if it cannot be, the JIT runs without) */
    bool no_disk_cache;    /* compile on every first request of a process */
    bool eager;            /* qg_jit_compile compiles its ops at once; false (and NULL
                              options): each op compiles on its first call (lazy) */
    bool background;       /* lazy only: a first call starts its op's compile on a
                              thread of its own and runs the reference, as do the
                              calls until the kernel is ready (bit-exact either way);
                              call qg_jit_settle or qg_jit_destroy before exit */
} qg_jit_options;

/* The ops to compile (0 = all of them). */
enum {
    QG_JIT_QUANTIZE = 1u << 0,
    QG_JIT_DEQUANTIZE = 1u << 1,
    QG_JIT_FAKE_QUANT = 1u << 2,
    QG_JIT_FAKE_QUANT_BACKWARD = 1u << 3,
    QG_JIT_OBSERVE = 1u << 4,
    QG_JIT_REQUANTIZE = 1u << 5,
    QG_JIT_ALL = 0x3F
};

/* The generated ABI as function pointers; q buffers hold the spec's dtype.
 * An op that was not asked for is NULL. A spec whose float_type is
 * bfloat16 or float16 is called through `u16`, the same kernels typed with
 * the 16-bit bit patterns its float tensors hold. */
typedef struct qg_kernels {
    const qg_spec *spec; /* a copy owned by the JIT */
    qg_isa isa;
    union {
        struct {
            void (*quantize)(const float *x, void *q, size_t n, const qg_qparams *qp);
            void (*dequantize)(const void *q, float *x, size_t n, const qg_qparams *qp);
            void (*fake_quant)(const float *x, float *y, uint8_t *mask, size_t n, const qg_qparams *qp);
            void (*fake_quant_backward)(const float *dy, const uint8_t *mask, float *dx, size_t n);
            qg_status (*observe)(const float *x, size_t n, size_t inner, qg_observer *obs, qg_error *err);
            void (*requantize)(const int32_t *acc, void *q, size_t n, const qg_requant_params *rp);
        };
        struct {
            void (*quantize)(const uint16_t *x, void *q, size_t n, const qg_qparams *qp);
            void (*dequantize)(const void *q, uint16_t *x, size_t n, const qg_qparams *qp);
            void (*fake_quant)(const uint16_t *x, uint16_t *y, uint8_t *mask, size_t n, const qg_qparams *qp);
            void (*fake_quant_backward)(const uint16_t *dy, const uint8_t *mask, uint16_t *dx, size_t n);
            qg_status (*observe)(const uint16_t *x, size_t n, size_t inner, qg_observer *obs, qg_error *err);
            void (*requantize)(const int32_t *acc, void *q, size_t n, const qg_requant_params *rp);
        } u16;
    };
} qg_kernels;

/* The fused training step on JIT kernels compiled with at least
 * QG_JIT_OBSERVE | QG_JIT_FAKE_QUANT (see qg_ref_fused_train_step):
 * float32 specs, and bfloat16/float16 ones with the 16 form. */
static inline qg_status qg_kernels_fused_train_step(const qg_kernels *k, qg_observer *obs, const float *x, float *y,
                                                    uint8_t *mask, size_t n, size_t inner, float *scale,
                                                    int32_t *zero_point, qg_error *err) {
    if (!k) /* NULL kernels would mean the reference's to the driver */
        return qg_error_set(err, QG_ERR_ARG,
                            "qg_kernels_fused_train_step: k is NULL; expected kernels from "
                            "qg_jit_compile");
    return qg_fused_train_step_with(obs, k->observe, k->fake_quant, x, y, mask, n, inner, scale, zero_point, err);
}
static inline qg_status qg_kernels_fused_train_step16(const qg_kernels *k, qg_observer *obs, const uint16_t *x,
                                                      uint16_t *y, uint8_t *mask, size_t n, size_t inner, float *scale,
                                                      int32_t *zero_point, qg_error *err) {
    if (!k)
        return qg_error_set(err, QG_ERR_ARG,
                            "qg_kernels_fused_train_step16: k is NULL; expected kernels from "
                            "qg_jit_compile");
    return qg_fused_train_step16_with(obs, k->u16.observe, k->u16.fake_quant, x, y, mask, n, inner, scale, zero_point,
                                      err);
}

/* Dynamic quantization on JIT kernels compiled with at least
 * QG_JIT_OBSERVE | QG_JIT_QUANTIZE (see qg_quantize_dynamic); float32
 * specs only. */
static inline qg_status qg_kernels_quantize_dynamic(const qg_kernels *k, const float *x, void *q, size_t rows,
                                                    size_t row_len, float *scale, int32_t *zero_point, qg_error *err) {
    if (!k)
        return qg_error_set(err, QG_ERR_ARG,
                            "qg_kernels_quantize_dynamic: k is NULL; expected kernels from "
                            "qg_jit_compile");
    return qg_quantize_dynamic(k->spec, k->observe, k->quantize, x, q, rows, row_len, scale, zero_point, err);
}

/* NULL options: best ISA, default cache directory. */
qg_status qg_jit_create(const qg_jit_options *opt, qg_jit **out, qg_error *err);

/* The kernels of `ops` for `spec`. Asking again for the same spec and ops
 * returns the same kernels; a new spec is looked up in the disk cache
 * (checked against its checksum; a corrupt entry is recompiled) and
 * compiled on a miss. A cache that cannot be written is not an error.
 * A bad spec is refused here in both modes. Lazy mode (the default): each
 * entry compiles its op on its first call (one op per cache entry); an op
 * that fails to compile then runs on the runtime's reference, bit-exact,
 * and is counted in qg_jit_stats.fallbacks. docs/jit.md. */
qg_status qg_jit_compile(qg_jit *jit, const qg_spec *spec, unsigned ops, const qg_kernels **out, qg_error *err);

/* Compiles the ops in `ops` of lazy kernels now, as their first calls
 * would (nothing for eager kernels or ops already compiled), or waits for
 * their background compiles: for hosts that want the cost at a moment of
 * their choosing. */
qg_status qg_jit_prepare(qg_jit *jit, const qg_kernels *kernels, unsigned ops, qg_error *err);

/* Waits for the JIT's background compiles; first calls compile at once
 * from then on. A process must not exit while one runs: exit tears down
 * LLVM's static objects under it. */
void qg_jit_settle(qg_jit *jit);

/* The ISA the JIT compiles for. */
qg_isa qg_jit_isa(const qg_jit *jit);

/* Where kernels came from, for tests and benchmarks. */
typedef struct qg_jit_stats {
    unsigned compiled;        /* built by LLVM */
    unsigned disk_hits;       /* loaded from the disk cache */
    unsigned memory_hits;     /* already in this JIT */
    unsigned corrupt_entries; /* cache entries refused (and replaced) */
    unsigned cache_errors;    /* entries that could not be written */
    unsigned lazy_tables;     /* lazy kernels handed out (qg_jit_compile) */
    unsigned fallbacks;       /* lazy ops that failed to compile: they run on the reference */
} qg_jit_stats;
void qg_jit_get_stats(qg_jit *jit, qg_jit_stats *stats);

/* The cache directory in use ("" when the disk cache is off). */
const char *qg_jit_cache_dir(const qg_jit *jit);

/* Releases the JIT and every kernel it made. */
void qg_jit_destroy(qg_jit *jit);

/* sizeof the public structs in this build (libqgen.so only), for bindings
 * that mirror them, such as the Python package's ctypes. */
size_t qg_abi_sizeof_qparams(void);
size_t qg_abi_sizeof_kernels(void);
size_t qg_abi_sizeof_error(void);
size_t qg_abi_sizeof_jit_options(void);

#ifdef __cplusplus
}
#endif
#endif
