/* qgen/status.h - error codes and messages shared by every qgen library. */
#ifndef QGEN_STATUS_H
#define QGEN_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum qg_status {
    QG_OK = 0,
    QG_ERR_INVALID = 1, /* bad input: spec field, argument, data */
    QG_ERR_IO = 2,      /* a file could not be read or written */
    QG_ERR_FORMAT = 3,  /* a file is corrupt, truncated or of another kind */
    QG_ERR_STATE = 4,   /* the call does not fit the object's current state */
    QG_ERR_NOMEM = 5,
    QG_ERR_BACKEND = 6, /* the code generator (LLVM) failed or cannot serve the target */
    QG_ERR_ARG = 7      /* a NULL pointer (or other argument) the function cannot take */
} qg_status;

/* Filled in by every call that can fail, when the caller passes one. The
 * message names the field or file, the value, and what was expected. */
typedef struct qg_error {
    qg_status code;
    char message[512];
} qg_error;

/* Records a formatted message in err (if non-NULL) and returns code. */
qg_status qg_error_set(qg_error *err, qg_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

const char *qg_status_name(qg_status s);

/* The check every public function makes of its pointer arguments: records
 * "FUNCTION: ARGUMENT is NULL; expected WHAT" and returns QG_ERR_ARG.
 * Functions without a status return do nothing instead, and data pointers
 * may be NULL when their element count is 0. */
qg_status qg_error_null_arg(qg_error *err, const char *function, const char *argument, const char *expected);

#ifdef __cplusplus
}
#endif
#endif
