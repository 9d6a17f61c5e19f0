/* qgen/generate.h - ahead-of-time code generation (libqgen). */
#ifndef QGEN_GENERATE_H
#define QGEN_GENERATE_H

#include "qgen/spec.h"
#include "qgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qg_generate_options {
    const char *out_dir; /* created if missing, with its parents */
    unsigned targets;    /* bit set of 1u << qg_isa; 0 = the spec's targets */
    const char *command; /* recorded in every file's header */
    int no_validate;     /* skip the libclang check of the emitted files */
} qg_generate_options;

/* Writes NAME.h, NAME_<isa>.c for each target (scalar always: it is the
 * dispatcher's fallback) and NAME_dispatch.c. Every file is generated and
 * checked in memory first (each ISA file parsed by libclang for its target),
 * then written to a temporary name and renamed:
 * on error nothing is left half-written. Output is byte-identical for the
 * same spec, targets and command. */
qg_status qg_generate_c(const qg_spec *spec, const qg_generate_options *opt, qg_error *err);

/* "all" or a comma-separated list of ISA names -> bit set. */
qg_status qg_parse_targets(const char *list, unsigned *out, qg_error *err);

#ifdef __cplusplus
}
#endif
#endif
