/* Shared pieces of the qgen command-line tool. Every command returns the
 * process exit code: 0 on success, 2 on bad input (message on stderr). */
#ifndef QGEN_CLI_H
#define QGEN_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>

#include "npy.h"
#include "qgen/runtime.h"

#define QG_EXIT_OK 0
#define QG_EXIT_BAD_INPUT 2
#define QG_MAX_SETS 64

int qg_cmd_spec(int argc, char **argv);
int qg_cmd_run(int argc, char **argv);
int qg_cmd_observe(int argc, char **argv);
int qg_cmd_generate(int argc, char **argv);
int qg_cmd_check(int argc, char **argv);
int qg_cmd_compare(int argc, char **argv);
int qg_cmd_targets(int argc, char **argv);

/* Prints "qgen: <message>" to stderr and returns QG_EXIT_BAD_INPUT. */
int qg_cli_fail(const qg_error *err);

/* A command's help text and options, as its parser takes them: what
 * `qgen help --man` and `qgen help --completion` are made from. */
struct option;
typedef struct qg_cli_command_info {
    const char *name, *usage;
    const struct option *options; /* getopt_long's table, {0}-terminated */
    const char *short_options;    /* getopt's string */
} qg_cli_command_info;
extern const qg_cli_command_info qg_cmd_spec_info, qg_cmd_run_info, qg_cmd_generate_info, qg_cmd_check_info,
    qg_cmd_compare_info, qg_cmd_observe_info, qg_cmd_targets_info;
/* The man page (roff) and the bash completion script, from those. */
void qg_cli_print_man(FILE *out, const qg_cli_command_info *const *cmds, size_t n, const char *overview);
void qg_cli_print_completion(FILE *out, const qg_cli_command_info *const *cmds, size_t n);
/* --spec's argument: a spec file, or a preset's name where no file has it
 * (the spec is then {"name": <the preset's name, '_' for '.'>, "base": it}). */
qg_status qg_cli_load_spec(const char *path, const char *const *sets, size_t nsets, qg_spec *out, qg_error *err);
/* The same for an error in the data of `file` (a NaN in an input): the
 * file is named first. */
int qg_cli_fail_in(const char *file, const qg_error *err);
int qg_cli_failf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* "qgen: COMMAND: unknown option ARG; see qgen COMMAND --help", for
 * getopt's '?'; returns QG_EXIT_BAD_INPUT. */
int qg_cli_bad_option(const char *command, const char *arg);

/* The --set key=value overrides of one command line. */
typedef struct qg_cli_sets {
    const char *items[QG_MAX_SETS];
    size_t count;
} qg_cli_sets;

/* Records one --set argument; returns QG_EXIT_OK or the exit code of the
 * error it printed. */
int qg_cli_add_set(qg_cli_sets *sets, const char *arg);

/* Parses "v" or "v1,v2,..." into at most `cap` floats or ints. */
int qg_cli_floats(const char *opt, const char *text, float *out, size_t cap, size_t *count);
int qg_cli_ints(const char *opt, const char *text, int32_t *out, size_t cap, size_t *count);

/* Channel layout of an array for a spec: (channels, inner) from ch_axis,
 * checking the array's extent along it against channel_len. */
qg_status qg_cli_layout(const qg_spec *sp, const qg_npy *a, const char *path, size_t *channels, size_t *inner,
                        qg_error *err);

/* Holds STATE.lock (created beside the state file, kept) with flock for
 * a load-update-save of the state, so that concurrent commands on one
 * state lose no update; returns the lock's descriptor, or -1 with err. */
int qg_cli_lock_state(const char *state, qg_error *err);
void qg_cli_unlock_state(int lock);

/* A progress line on stderr for long commands, only on a terminal and
 * without --quiet; qg_cli_progress_step fits qg_progress_fn. */
typedef struct qg_cli_progress {
    const char *command;
    bool on, shown;
} qg_cli_progress;
bool qg_cli_progress_init(qg_cli_progress *p, const char *command, bool quiet);
void qg_cli_progress_step(void *user, unsigned done, unsigned total, const char *what);
/* Erases the line, before the command prints its result or an error. */
void qg_cli_progress_done(qg_cli_progress *p);

#endif
