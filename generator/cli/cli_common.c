/* Helpers every qgen command uses: errors, number lists, channel layouts. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <ctype.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "../util/fs_util.h"
#include "cli.h"

int qg_cli_fail(const qg_error *err) {
    fprintf(stderr, "qgen: %s\n", err->message);
    return QG_EXIT_BAD_INPUT;
}

int qg_cli_fail_in(const char *file, const qg_error *err) {
    fprintf(stderr, "qgen: %s: %s\n", file, err->message);
    return QG_EXIT_BAD_INPUT;
}

int qg_cli_failf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("qgen: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return QG_EXIT_BAD_INPUT;
}

int qg_cli_add_set(qg_cli_sets *sets, const char *arg) {
    if (sets->count == QG_MAX_SETS)
        return qg_cli_failf("--set: more than %d overrides", QG_MAX_SETS);
    sets->items[sets->count++] = arg;
    return QG_EXIT_OK;
}

int qg_cli_floats(const char *opt, const char *text, float *out, size_t cap, size_t *count) {
    const char *p = text;
    *count = 0;
    while (*p) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno || (*end && *end != ','))
            return qg_cli_failf("%s: got \"%s\"; expected a number or a comma-separated list of numbers", opt, text);
        if (isfinite(v) && fabs(v) > FLT_MAX)
            return qg_cli_failf("%s: got %.*s; expected a value within float32's range (|v| <= 3.4e38)", opt,
                                (int)(end - p), p);
        if (*count == cap)
            return qg_cli_failf("%s: more than %zu values", opt, cap);
        out[(*count)++] = (float)v;
        p = *end ? end + 1 : end;
    }
    if (*count == 0)
        return qg_cli_failf("%s: got an empty value; expected a number", opt);
    return QG_EXIT_OK;
}

int qg_cli_ints(const char *opt, const char *text, int32_t *out, size_t cap, size_t *count) {
    const char *p = text;
    *count = 0;
    while (*p) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || (*end && *end != ',') || v < INT32_MIN || v > INT32_MAX)
            return qg_cli_failf("%s: got \"%s\"; expected an integer or a comma-separated list of integers", opt, text);
        if (*count == cap)
            return qg_cli_failf("%s: more than %zu values", opt, cap);
        out[(*count)++] = (int32_t)v;
        p = *end ? end + 1 : end;
    }
    if (*count == 0)
        return qg_cli_failf("%s: got an empty value; expected an integer", opt);
    return QG_EXIT_OK;
}

qg_status qg_cli_layout(const qg_spec *sp, const qg_npy *a, const char *path, size_t *channels, size_t *inner,
                        qg_error *err) {
    *channels = 1;
    *inner = 1;
    if (!qg_qscheme_is_per_channel(sp->qscheme) && !qg_qscheme_is_per_group(sp->qscheme))
        return QG_OK;
    int axis = sp->ch_axis < 0 ? sp->ch_axis + a->ndim : sp->ch_axis;
    if (axis < 0 || axis >= a->ndim)
        return qg_error_set(err, QG_ERR_INVALID, "%s: ch_axis %d is outside an array of %d dimensions (spec \"%s\")",
                            path, sp->ch_axis, a->ndim, sp->name);
    if (a->shape[axis] != sp->channel_len)
        return qg_error_set(err, QG_ERR_INVALID,
                            "%s: %zu entries along ch_axis %d; expected channel_len %zu (spec \"%s\")", path,
                            a->shape[axis], sp->ch_axis, sp->channel_len, sp->name);
    *channels = sp->channel_len;
    for (int d = axis + 1; d < a->ndim; d++)
        *inner *= a->shape[d];
    return QG_OK;
}

int qg_cli_lock_state(const char *state, qg_error *err) {
    char path[4200], dir[4200], prefix[4200];
    snprintf(path, sizeof path, "%s.lock", state);
    int fd = qg_lock_file(path);
    if (fd < 0) {
        qg_error_set(err, QG_ERR_IO, "%s: cannot lock the state: %s", path, strerror(errno));
        return -1;
    }
    /* a writer killed mid-save left its temporary: the lock says none is live */
    const char *slash = strrchr(state, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - state) : 1, slash ? state : ".");
    snprintf(prefix, sizeof prefix, "%s.tmp.", slash ? slash + 1 : state);
    qg_remove_stale_temps(dir[0] ? dir : "/", prefix);
    return fd;
}

void qg_cli_unlock_state(int lock) {
    if (lock >= 0)
        close(lock);
}

int qg_cli_bad_option(const char *command, const char *arg) {
    /* getopt's own messages are off (main sets opterr = 0): this one has the prefix */
    const bool is_long = arg[0] == '-' && arg[1] == '-', known = is_long && optopt != 0;
    const char *why = !known             ? "unknown option"
                      : strchr(arg, '=') ? "this option takes no value:"
                                         : "this option needs a value:";
    return qg_cli_failf("%s: %s %s; see qgen %s --help", command, why, arg, command);
}

qg_status qg_cli_load_spec(const char *path, const char *const *sets, size_t nsets, qg_spec *out, qg_error *err) {
    struct stat st;
    if (path && stat(path, &st) != 0 && errno == ENOENT) { /* no such file: a preset's name? */
        for (const char *const *p = qg_spec_preset_names(); *p; p++)
            if (strcmp(*p, path) == 0) {
                /* named after the preset: torch.fbgemm.activation -> torch_fbgemm_activation */
                char name[QG_NAME_MAX], json[2 * QG_NAME_MAX + 64];
                snprintf(name, sizeof name, "%s", path);
                for (char *c = name; *c; c++)
                    if (!isalnum((unsigned char)*c))
                        *c = '_';
                snprintf(json, sizeof json, "{\"name\": \"%s\", \"base\": \"%s\"}", name, path);
                return qg_spec_load_string(json, path, sets, nsets, out, err);
            }
    }
    return qg_spec_load_file(path, sets, nsets, out, err);
}
