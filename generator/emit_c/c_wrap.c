/* Line wrapping for emitted C (see c_wrap.h). The emitters print each
 * statement on one line; wrapping afterwards keeps them simple. */
#include "c_wrap.h"

#include <string.h>

/* Where an argument list may break: after ", " outside strings, at depth
 * >= 1. Returns the offset of the next such break at or after `from`, or
 * `len`. */
static size_t next_break(const char *s, size_t from, size_t len, int depth) {
    bool in_str = false;
    for (size_t i = from; i < len; i++) {
        const char c = s[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '(') {
            depth++;
        } else if (c == ')') {
            depth--;
        } else if (c == ',' && depth >= 1 && i + 1 < len && s[i + 1] == ' ') {
            return i + 1;
        }
    }
    return len;
}

static int depth_at(const char *s, size_t to) {
    int depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < to; i++) {
        if (in_str)
            in_str = !(s[i] == '"' && s[i - 1] != '\\');
        else if (s[i] == '"')
            in_str = true;
        else
            depth += (s[i] == '(') - (s[i] == ')');
    }
    return depth;
}

static void wrap_code(qg_text *out, const char *s, size_t len, int width) {
    size_t indent = 0;
    while (indent < len && s[indent] == ' ')
        indent++;
    int open_col[64], depth = 0;
    size_t col = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        const char c = s[i];
        if (!in_str && c == ' ' && i > 0 && s[i - 1] == ',' && depth >= 1) {
            const size_t end = next_break(s, i + 1, len, depth_at(s, i + 1));
            if (col + (end - i) > (size_t)width) {
                size_t to = depth <= 64 ? (size_t)open_col[depth - 1] + 1 : indent + 8;
                if (to > (size_t)width / 2)
                    to = indent + 8;
                qg_text_puts(out, "\n");
                qg_text_printf(out, "%*s", (int)to, "");
                col = to;
                continue;
            }
        }
        if (in_str)
            in_str = !(c == '"' && s[i - 1] != '\\');
        else if (c == '"')
            in_str = true;
        else if (c == '(' && depth < 64)
            open_col[depth++] = (int)col;
        else if (c == ')' && depth > 0)
            depth--;
        qg_text_append(out, &c, 1);
        col++;
        /* a first argument too long to fit: it starts on its own line */
        if (c == '(' && !in_str && i + 1 < len && s[i + 1] != ')' &&
            col + (next_break(s, i + 1, len, depth_at(s, i + 1)) - i) > (size_t)width && col > indent + 8) {
            qg_text_printf(out, "\n%*s", (int)(indent + 8), "");
            col = indent + 8;
            open_col[depth - 1] = (int)indent + 8 - 1;
        }
    }
}

/* Comments break at spaces; directives at spaces with a backslash. */
static void wrap_words(qg_text *out, const char *s, size_t len, int width, bool directive) {
    size_t indent = 0;
    while (indent < len && s[indent] == ' ')
        indent++;
    const char *cont = directive ? " \\\n    " : "\n * ";
    const size_t cont_col = directive ? 4 : indent + 3;
    size_t start = 0, col_base = 0;
    while (len - start + col_base > (size_t)width) {
        size_t cut = 0;
        for (size_t i = start + 1; i < len && i - start + col_base < (size_t)width - 1; i++)
            if (s[i] == ' ')
                cut = i;
        if (!cut)
            break;
        qg_text_append(out, s + start, cut - start);
        if (directive)
            qg_text_puts(out, cont);
        else
            qg_text_printf(out, "\n%*s * ", (int)indent, "");
        start = cut + 1;
        col_base = cont_col;
    }
    qg_text_append(out, s + start, len - start);
}

bool qg_c_wrap(qg_text *t, int width) {
    if (!t->p)
        return true;
    qg_text out = {0};
    bool in_comment = false; /* a block comment open from an earlier line */
    for (const char *line = t->p; *line;) {
        const char *nl = strchr(line, '\n');
        const size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *first = line + strspn(line, " ");
        if (len <= (size_t)width || (len && line[len - 1] == '\\'))
            qg_text_append(&out, line, len);
        else if (*first == '#')
            wrap_words(&out, line, len, width, true);
        else if (strncmp(first, "/*", 2) == 0 || (in_comment && *first == '*'))
            wrap_words(&out, line, len, width, false);
        else
            wrap_code(&out, line, len, width);
        for (size_t i = 0; i + 1 < len; i++) {
            if (line[i] == '/' && line[i + 1] == '*')
                in_comment = true;
            else if (line[i] == '*' && line[i + 1] == '/')
                in_comment = false;
        }
        if (nl)
            qg_text_puts(&out, "\n");
        line = nl ? nl + 1 : line + len;
    }
    if (!qg_text_ok(&out)) {
        qg_text_free(&out);
        return false;
    }
    qg_text_free(t);
    *t = out;
    return true;
}
