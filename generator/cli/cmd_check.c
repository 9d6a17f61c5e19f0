/* qgen check DIR: parses generated files with libclang, each ISA file for
 * its own target, as `qgen generate` does before writing. Only regular
 * .c/.h files are read, each at most 16 MiB, and their #include lines must
 * name system headers (<...>), qgen's headers or files of DIR: libclang
 * never opens anything else (a device, a FIFO, a file elsewhere). */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../validate/validate_c.h"
#include "cli.h"

enum { MAX_FILE_BYTES = 16 << 20, MAX_FILES = 4096 };

typedef struct check_set {
    qg_source *src;
    char **names; /* the files' names in DIR, for the #include rule */
    size_t n;
    const char *dir;
} check_set;

static bool in_set(const check_set *s, const char *name, size_t len) {
    for (size_t i = 0; i < s->n; i++)
        if (strlen(s->names[i]) == len && strncmp(s->names[i], name, len) == 0)
            return true;
    return false;
}

/* Whether an #include's target (the text after "include") is allowed: a
 * <system header>, "qgen/NAME" without "..", or "NAME" of the set. */
static bool include_allowed(const check_set *s, const char *q) {
    const char close = *q == '<' ? '>' : '"';
    const char *end = *q == '<' || *q == '"' ? strpbrk(q + 1, close == '>' ? ">\n" : "\"\n") : NULL;
    if (!end || *end != close)
        return false;
    const char *name = q + 1;
    const size_t len = (size_t)(end - name);
    bool dots = false;
    for (size_t i = 0; i + 1 < len; i++)
        dots |= name[i] == '.' && name[i + 1] == '.';
    if (dots || len == 0 || name[0] == '/')
        return false; /* nothing outside the include paths */
    if (close == '>')
        return true;
    if (len > 5 && strncmp(name, "qgen/", 5) == 0) {
        /* quoted includes look beside the file first: DIR/qgen/... must
         * not exist, so that qgen's own header is the one found */
        char beside[4200];
        struct stat sb;
        snprintf(beside, sizeof beside, "%s/%.*s", s->dir, (int)len, name);
        return stat(beside, &sb) != 0;
    }
    return !memchr(name, '/', len) && in_set(s, name, len);
}

static int check_includes(const check_set *s, const qg_source *f) {
    size_t line = 1;
    for (const char *p = f->contents; *p; line++) {
        const char *q = p + strspn(p, " \t");
        if (*q == '#') {
            q += 1 + strspn(q + 1, " \t");
            if (strncmp(q, "include", 7) == 0) {
                q += 7 + strspn(q + 7, " \t");
                if (!include_allowed(s, q))
                    return qg_cli_failf("check: %s:%zu: #include %.*s; expected <system header>, \"qgen/...\" or a "
                                        "file of the checked directory",
                                        f->name, line, (int)strcspn(q, "\n"), q);
            }
        }
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
    }
    return QG_EXIT_OK;
}

/* Reads DIR/name into the set when it is a regular .c or .h file. */
static int add_file(check_set *s, const char *dir, const char *name) {
    size_t len = strlen(name);
    if (len < 3 || (strcmp(name + len - 2, ".c") != 0 && strcmp(name + len - 2, ".h") != 0))
        return QG_EXIT_OK;
    char rel[4200];
    snprintf(rel, sizeof rel, "%s/%s", dir, name);
    struct stat sb;
    if (stat(rel, &sb) != 0 || !S_ISREG(sb.st_mode))
        return QG_EXIT_OK; /* a directory or device named x.c is not a source */
    if (sb.st_size > MAX_FILE_BYTES)
        return qg_cli_failf("check: %s: %lld bytes; expected a generated file of at most %d bytes", rel,
                            (long long)sb.st_size, MAX_FILE_BYTES);
    if (s->n == MAX_FILES)
        return qg_cli_failf("check: %s: more than %d .c and .h files", dir, MAX_FILES);
    char *path = realpath(rel, NULL); /* absolute: the validator's key */
    FILE *f = path ? fopen(path, "rb") : NULL;
    char *text = malloc((size_t)sb.st_size + 1);
    size_t got = f && text ? fread(text, 1, (size_t)sb.st_size, f) : 0;
    if (f)
        fclose(f);
    if (!path || !f || !text || got != (size_t)sb.st_size) {
        free(path);
        free(text);
        return qg_cli_failf("check: %s: cannot read it", rel);
    }
    text[got] = 0;
    s->names[s->n] = strdup(name);
    s->src[s->n++] = (qg_source){path, text, got};
    return s->names[s->n - 1] ? QG_EXIT_OK : qg_cli_failf("check: out of memory");
}

static int check_dir(const char *dir, check_set *s) {
    DIR *d = opendir(dir);
    if (!d)
        return qg_cli_failf("check: %s: cannot open the directory", dir);
    int rc = QG_EXIT_OK;
    struct dirent *e;
    while (!rc && (e = readdir(d)))
        rc = add_file(s, dir, e->d_name);
    closedir(d);
    for (size_t i = 0; i < s->n && !rc; i++)
        rc = check_includes(s, &s->src[i]);
    qg_error err;
    if (!rc && s->n == 0)
        rc = qg_cli_failf("check: %s: no generated .c or .h files", dir);
    else if (!rc && qg_validate_sources(s->src, s->n, qg_include_dir(), &err))
        rc = qg_cli_fail(&err);
    else if (!rc)
        printf("%s: %zu files parse cleanly for their targets\n", dir, s->n);
    return rc;
}

static const char usage[] =
    "usage: qgen check DIR\n\nParses every generated .c file in DIR with libclang for its target.\n";
static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {0}};
const qg_cli_command_info qg_cmd_check_info = {"check", usage, opts, "h"};

int qg_cmd_check(int argc, char **argv) {
    if (argc != 2 || strcmp(argv[1], "--help") == 0) {
        fputs(usage, argc == 2 ? stdout : stderr);
        return argc == 2 ? QG_EXIT_OK : QG_EXIT_BAD_INPUT;
    }
    if (!qg_validate_available())
        return qg_cli_failf("check: this qgen was built without libclang; nothing can be checked");
    check_set s = {calloc(MAX_FILES, sizeof(qg_source)), calloc(MAX_FILES, sizeof(char *)), 0, argv[1]};
    int rc = s.src && s.names ? check_dir(argv[1], &s) : qg_cli_failf("check: out of memory");
    for (size_t i = 0; i < s.n; i++) {
        free((char *)s.src[i].name);
        free((char *)s.src[i].contents);
        free(s.names[i]);
    }
    free(s.src);
    free(s.names);
    return rc;
}
