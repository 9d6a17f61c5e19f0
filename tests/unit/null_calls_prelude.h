/* What the generated every-function NULL test (null_calls_gen.c) needs
 * before its calls: every public header, the error they fill in, a zeroed
 * spec, and the message check. */
#ifndef QGEN_NULL_CALLS_PRELUDE_H
#define QGEN_NULL_CALLS_PRELUDE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qgen/generate.h"
#include "qgen/jit.h"
#include "qgen/kernel_support.h"
#include "qgen/parallel.h"
#include "qgen/runtime.h"

static qg_error err;
static qg_spec zero_spec; /* all zeros: no name, so invalid */

/* A QG_ERR_ARG must say "FN: PARAM is NULL" with PARAM one of the
 * header's parameter names (or a field of one, "opt->out_dir"); anything
 * else here ends the child with status 3. */
static void check_message(const char *fn, qg_status st, const char *const *params) {
    if (st != QG_ERR_ARG)
        return;
    const size_t n = strlen(fn);
    if (strncmp(err.message, fn, n) == 0 && strncmp(err.message + n, ": ", 2) == 0)
        for (const char *const *p = params; *p; p++) {
            const char *name = err.message + n + 2;
            const size_t k = strlen(*p);
            if (strncmp(name, *p, k) == 0 && (strncmp(name + k, " is NULL", 8) == 0 || strncmp(name + k, "->", 2) == 0))
                return;
        }
    fprintf(stderr, "%s: QG_ERR_ARG message names no parameter of the header's declaration: %s\n", fn, err.message);
    exit(3);
}

typedef struct null_call {
    const char *name;
    void (*with_null)(void), (*with_zero_spec)(void);
} null_call;

#endif
