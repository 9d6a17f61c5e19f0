/* qgen/generate.h - ahead-of-time code generation (libqgen). Pointer
 * arguments as in qgen/runtime.h: a NULL that is not allowed is refused with
 * QG_ERR_ARG. */
#ifndef QGEN_GENERATE_H
#define QGEN_GENERATE_H

#include "qgen/spec.h"
#include "qgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the per-ISA files hold: C with intrinsics, or the LLVM backend's
 * text IR (.ll), bitcode (.bc), object code (.o) or assembly (.s). */
typedef enum qg_emit_kind { QG_EMIT_C, QG_EMIT_LL, QG_EMIT_BC, QG_EMIT_OBJ, QG_EMIT_ASM } qg_emit_kind;

/* Progress of a long call: `done` of `total` steps finished, the last one
 * described by `what` (e.g. "act_avx2.c"). For displays; may be NULL. */
typedef void (*qg_progress_fn)(void *user, unsigned done, unsigned total, const char *what);

typedef struct qg_generate_options {
    const char *out_dir;     /* created if missing, with its parents */
    unsigned targets;        /* bit set of 1u << qg_isa; 0 = the spec's targets */
    const char *command;     /* recorded in every file's header */
    int no_validate;         /* skip the libclang check of the emitted C files */
    qg_emit_kind emit;       /* QG_EMIT_C unless set */
    const char *scalar_arch; /* LLVM output: x86_64, aarch64 or riscv64 for the scalar file; NULL = this machine's */
    qg_progress_fn progress; /* called after each file is made; NULL = none */
    void *progress_user;
} qg_generate_options;

/* Writes NAME.h, one file per target ISA (scalar always: it is the
 * dispatcher's fallback) and NAME_dispatch.c; the ISA files are NAME_<isa>.c,
 * or .ll/.bc/.o/.s from the LLVM backend, with the same functions, so
 * NAME.h and NAME_dispatch.c serve either. Every file is generated (and the
 * C files checked by libclang) in memory first, then written to a temporary
 * name and renamed: on error nothing is left half-written. Output is
 * byte-identical for the same spec, targets, options and command. */
qg_status qg_generate(const qg_spec *spec, const qg_generate_options *opt, qg_error *err);

/* "c", "ll", "bc", "obj" or "asm" -> kind. */
qg_status qg_parse_emit_kind(const char *name, qg_emit_kind *out, qg_error *err);

/* "all" or a comma-separated list of ISA names -> bit set. */
qg_status qg_parse_targets(const char *list, unsigned *out, qg_error *err);

#ifdef __cplusplus
}
#endif
#endif
