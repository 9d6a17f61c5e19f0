/* Error recording shared by libqgen_rt and libqgen. */
#include "qgen/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { LONGEST = 2048 }; /* of a message before it is fitted */

/* Messages stay on one line whatever a file name or value holds: control
 * characters are written as \n, \t, \xHH. */
static void escape_controls(const char *msg, char *out, size_t cap) {
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)msg; *p && o + 5 < cap; p++) {
        if (*p >= 0x20 && *p != 0x7f) {
            out[o++] = (char)*p;
        } else if (*p == '\n' || *p == '\t' || *p == '\r') {
            out[o++] = '\\';
            out[o++] = *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r';
        } else {
            o += (size_t)snprintf(out + o, 5, "\\x%02x", *p);
        }
    }
    out[o] = 0;
}

/* text into msg; a text too long is cut after its last whole word that
 * fits, and "…" marks the cut (never in the middle of a word or of a UTF-8
 * sequence, unless one word fills the message). */
static void fit(char *msg, size_t cap, const char *text) {
    static const char ellipsis[] = "\xe2\x80\xa6";
    const size_t len = strlen(text);
    if (len < cap) {
        memcpy(msg, text, len + 1);
        return;
    }
    const size_t room = cap - sizeof ellipsis;
    size_t end = room;
    while (end > 0 && text[end] != ' ')
        end--;
    if (end == 0) /* one word longer than the message */
        for (end = room; end > 0 && ((unsigned char)text[end] & 0xC0) == 0x80;)
            end--;
    while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == ',' || text[end - 1] == ';'))
        end--;
    memcpy(msg, text, end);
    memcpy(msg + end, ellipsis, sizeof ellipsis);
}

qg_status qg_error_set(qg_error *err, qg_status code, const char *fmt, ...) {
    if (err && !fmt) { /* no message given: the status's name stands for it */
        snprintf(err->message, sizeof err->message, "%s", qg_status_name(code));
        err->code = code;
    } else if (err) {
        char text[LONGEST], escaped[LONGEST];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        escape_controls(text, escaped, sizeof escaped);
        fit(err->message, sizeof err->message, escaped);
        err->code = code;
    }
    return code;
}

const char *qg_status_name(qg_status s) {
    switch (s) {
    case QG_OK: return "ok";
    case QG_ERR_INVALID: return "invalid input";
    case QG_ERR_IO: return "i/o error";
    case QG_ERR_FORMAT: return "bad file format";
    case QG_ERR_STATE: return "wrong state";
    case QG_ERR_NOMEM: return "out of memory";
    case QG_ERR_BACKEND: return "code generator error";
    case QG_ERR_ARG: return "bad argument";
    }
    return "unknown status";
}

qg_status qg_error_null_arg(qg_error *err, const char *function, const char *argument, const char *expected) {
    return qg_error_set(err, QG_ERR_ARG, "%s: %s is NULL; expected %s", function ? function : "?",
                        argument ? argument : "?", expected ? expected : "?");
}
