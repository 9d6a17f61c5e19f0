/* A growable text buffer for emitters. Allocation failure is sticky and
 * reported once by qg_text_ok(). */
#ifndef QGEN_TEXT_BUF_H
#define QGEN_TEXT_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct qg_text {
    char *p;
    size_t len, cap;
    bool failed;
} qg_text;

void qg_text_printf(qg_text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void qg_text_vprintf(qg_text *t, const char *fmt, va_list ap);
void qg_text_puts(qg_text *t, const char *s);
/* Appends n bytes (binary output: objects, bitcode). */
void qg_text_append(qg_text *t, const void *data, size_t n);
/* Appends `fmt` with $a, $b and $c replaced by a, b and c. */
void qg_text_spell(qg_text *t, const char *fmt, const char *a, const char *b, const char *c);
bool qg_text_ok(const qg_text *t);
void qg_text_free(qg_text *t);

#endif
