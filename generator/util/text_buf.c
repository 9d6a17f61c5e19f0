#include "text_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(qg_text *t, size_t more) {
    if (t->failed)
        return false;
    if (t->len + more + 1 <= t->cap)
        return true;
    size_t cap = t->cap ? t->cap : 4096;
    while (cap < t->len + more + 1)
        cap *= 2;
    char *p = realloc(t->p, cap);
    if (!p) {
        t->failed = true;
        return false;
    }
    t->p = p;
    t->cap = cap;
    return true;
}

void qg_text_puts(qg_text *t, const char *s) {
    size_t n = strlen(s);
    if (!reserve(t, n))
        return;
    memcpy(t->p + t->len, s, n + 1);
    t->len += n;
}

void qg_text_append(qg_text *t, const void *data, size_t n) {
    if (!reserve(t, n))
        return;
    memcpy(t->p + t->len, data, n);
    t->len += n;
    t->p[t->len] = 0;
}

void qg_text_vprintf(qg_text *t, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n >= 0 && reserve(t, (size_t)n)) {
        vsnprintf(t->p + t->len, (size_t)n + 1, fmt, again);
        t->len += (size_t)n;
    }
    va_end(again);
}

void qg_text_printf(qg_text *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    qg_text_vprintf(t, fmt, ap);
    va_end(ap);
}

void qg_text_spell(qg_text *t, const char *fmt, const char *a, const char *b, const char *c) {
    for (const char *p = fmt; *p; p++) {
        if (p[0] == '$' && (p[1] == 'a' || p[1] == 'b' || p[1] == 'c')) {
            const char *arg = p[1] == 'a' ? a : p[1] == 'b' ? b : c;
            qg_text_puts(t, arg ? arg : "/*missing*/");
            p++;
            continue;
        }
        char ch[2] = {*p, 0};
        qg_text_puts(t, ch);
    }
}

bool qg_text_ok(const qg_text *t) { return !t->failed; }

void qg_text_free(qg_text *t) {
    free(t->p);
    t->p = NULL;
    t->len = t->cap = 0;
}
