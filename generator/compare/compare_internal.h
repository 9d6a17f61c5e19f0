/* Internal to qgen compare: the scratch context and the architectures it
 * builds for, shared by compare.c (the run and the static analysis) and
 * compare_build.c (building the kernels, the runtime and the test driver,
 * and running it). */
#ifndef QGEN_COMPARE_INTERNAL_H
#define QGEN_COMPARE_INTERNAL_H

#include <limits.h>
#include <stdbool.h>

#include "../targets/target_table.h"
#include "compare.h"

#define MAX_ARCHS 8

/* An architecture of the ISA table and its vector ISAs; the host's first
 * (its scalar rows are the ones reported, and the reference runs there). */
typedef struct arch_t {
    const char *arch, *triple;
    qg_isa vector_isas[QG_ISA_COUNT];
    int n_vector;
    const qg_arch *desc;
} arch_t;

typedef struct ctx {
    const qg_spec *sp;
    const qg_compare_options *opt;
    char work[PATH_MAX];
    char clang[PATH_MAX], mca[PATH_MAX];
    bool have_clang, have_mca;
    qg_compare_report *rep;
    unsigned isas; /* generated */
    char why_not[QG_ISA_COUNT][512];
} ctx;

/* What one run of the test driver printed. */
typedef struct run_out {
    bool ran;
    char why[96];
    char hash[QG_K_OP_COUNT][20];
    double melem[QG_K_OP_COUNT];
    bool timed;
} run_out;

/* The architectures compared, the host's first (compare.c). */
extern arch_t qg_cmp_arches[MAX_ARCHS];
extern size_t qg_cmp_n_arches;

void qg_cmp_note(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* c->work/<fmt...> into buf. */
const char *qg_cmp_pathf(ctx *c, char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
const arch_t *qg_cmp_arch_of(qg_isa isa);
/* The width a scalable ISA is run and modelled at (0 for fixed widths). */
int qg_cmp_compare_bits(qg_isa isa);

/* compare_build.c */
/* Where the runtime's sources are: the install's copy, else the source tree's. */
void qg_cmp_runtime_sources(char *out, size_t cap);
const char *qg_cmp_gen_dir(ctx *c, int b, const arch_t *a, char *buf, size_t cap);
qg_status qg_cmp_generate(ctx *c, qg_error *err);
bool qg_cmp_build_runtime(ctx *c, const arch_t *a);
bool qg_cmp_kernel_objects(ctx *c, int b, const arch_t *a, char *list, size_t cap);
bool qg_cmp_build_driver(ctx *c, int b, const arch_t *a, qg_isa isa, bool reference, const char *objects, char *exe,
                         size_t cap);
void qg_cmp_run_driver(const ctx *c, const arch_t *a, qg_isa isa, const char *exe, bool timed, run_out *r);

/* compare_rt_cache.c: the runtime's objects for `a` from earlier runs.
 * open keys them by the compiler, `flags`, and the .c and .h files of
 * dirs (false, and nothing cached, without a cache directory); fetch
 * writes a cached object to path (false on a miss); keep stores a built
 * one. */
typedef struct qg_cmp_rt_cache {
    bool usable;
    char dir[PATH_MAX];
    unsigned char digest[16];
} qg_cmp_rt_cache;
bool qg_cmp_rt_cache_open(ctx *c, const arch_t *a, const char *const dirs[], int ndirs, const char *flags,
                          qg_cmp_rt_cache *out);
bool qg_cmp_rt_cache_fetch(const qg_cmp_rt_cache *rc, const char *name, const char *path);
void qg_cmp_rt_cache_keep(const qg_cmp_rt_cache *rc, const char *name, const char *path);

/* compare_ggml.c: ggml's kernels of a block spec's format, for the ops in
 * `ops`, into c->rep's peers (a note says why not). */
void qg_cmp_measure_ggml(ctx *c, unsigned ops);

#endif
