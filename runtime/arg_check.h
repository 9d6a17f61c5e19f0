/* Checks of the public API's pointer arguments (qg_error_null_arg in
 * qgen/status.h), shared by libqgen_rt and libqgen. A NULL that the
 * function cannot take returns QG_ERR_ARG naming the function and the
 * argument; in functions without a status it returns without effect. Data
 * pointers may be NULL when their count is 0. */
#ifndef QGEN_ARG_CHECK_H
#define QGEN_ARG_CHECK_H

#include <stdbool.h>

#include "qgen/runtime.h"
#include "qgen/status.h"

/* A block spec's rows take no qparams (docs/semantics.md, "Block
 * formats"); every other spec needs them. */
static inline bool qg_has_qparams(const qg_spec *sp, const qg_qparams *qp) { return qp || sp->block != QG_BLOCK_NONE; }

#define QG_NEED(p, err, expected)                                                                                      \
    do {                                                                                                               \
        if (!(p))                                                                                                      \
            return qg_error_null_arg((err), __func__, #p, (expected));                                                 \
    } while (0)

/* The same where the implementation's name for the argument is not the
 * header's: the message says the header's. */
#define QG_NEED_AS(p, name, err, expected)                                                                             \
    do {                                                                                                               \
        if (!(p))                                                                                                      \
            return qg_error_null_arg((err), __func__, name, (expected));                                               \
    } while (0)

#define QG_NEED_DATA(p, n, err)                                                                                        \
    do {                                                                                                               \
        if (!(p) && (n) != 0)                                                                                          \
            return qg_error_null_arg((err), __func__, #p, "data for " #n " elements");                                 \
    } while (0)

#define QG_NEED_OR_RETURN(cond)                                                                                        \
    do {                                                                                                               \
        if (!(cond))                                                                                                   \
            return;                                                                                                    \
    } while (0)

#endif
