/* Validation of emitted C with libclang: each ISA file is parsed for its
 * own target triple and features; any warning or error refuses the files.
 * libclang reports no missing-target-feature errors (those come from code
 * generation), so the cross-compiled kernel tests remain the real proof. */
#ifndef QGEN_VALIDATE_C_H
#define QGEN_VALIDATE_C_H

#include <stddef.h>

#include "qgen/spec.h"

typedef struct qg_source {
    const char *name;     /* file name, e.g. "act_avx2.c" */
    const char *contents; /* NUL-terminated */
    size_t length;
} qg_source;

/* The ISA a generated file is for, from its name (NAME_<isa>.c), or -1 for
 * headers and the dispatcher (checked for the host). */
int qg_source_isa(const char *file_name);

/* Parses every .c among `files` (the headers they include are taken from
 * `files` too); `include_dir` holds qgen's public headers. Every diagnostic
 * is printed to stderr; err->message holds the first. */
qg_status qg_validate_sources(const qg_source *files, size_t count, const char *include_dir, qg_error *err);

/* qgen's public headers: $QGEN_INCLUDE_DIR, else <exe>/../include when
 * installed, else the install prefix's, else the source tree's. */
const char *qg_include_dir(void);

/* Whether this build has libclang. */
int qg_validate_available(void);

#endif
