/* Where qgen-difftest gets a spec's kernels: the JIT, the C backend's file
 * of an ISA compiled into a shared object, the LLVM backend's object linked
 * into one (both loaded with dlopen), or, for a foreign ISA, dt_runner
 * linked with the C file and run under qemu-user (node for wasm32). */
#ifndef QGEN_DT_BACKENDS_H
#define QGEN_DT_BACKENDS_H

#include <stdbool.h>

#include "dt_check.h"
#include "qgen/spec.h"

typedef enum dt_backend { DT_JIT, DT_C, DT_LLVM, DT_BACKEND_COUNT } dt_backend;

const char *dt_backend_name(dt_backend b);

typedef struct dt_config {
    const char *work;  /* scratch directory; a spec's files are removed once it passes */
    const char *cross; /* the kernel-test builds (libkt_rt.a and libdt_runner.a per architecture); NULL = no qemu */
    bool keep;         /* keep every spec's files */
    const char *opt;   /* the C compiler's optimization flag for generated files ("-O2") */
} dt_config;

/* A spec's kernels on one backend and ISA, in this process. */
typedef struct dt_loaded {
    dt_kernels k;
    void *dl;
} dt_loaded;

/* Makes the kernels; false with a reason in why (generation or compile
 * failed: a finding, like a mismatch). */
bool dt_load(const dt_config *cfg, const qg_spec *sp, dt_backend b, qg_isa isa, dt_loaded *out, char *why, size_t cap);
void dt_unload(dt_loaded *l);

/* A foreign ISA's run under qemu at vl_bits (0: fixed width): builds the
 * runner for the spec once per ISA (kept until dt_clean) and runs
 * it on every case of seed, or on the one case `only` (shrunk there). The
 * runner's report goes into t; false with why when it could not run. */
bool dt_foreign_run(const dt_config *cfg, const qg_spec *sp, qg_isa isa, int vl_bits, uint64_t seed, size_t step,
                    const dt_case *only, dt_tally *t, char *why, size_t cap);

/* Whether the runner can be built for isa's architecture here. */
bool dt_foreign_available(const dt_config *cfg, qg_isa isa);

/* Removes the spec's scratch files (unless cfg->keep). */
void dt_clean(const dt_config *cfg, const qg_spec *sp);

#endif
