/* The progress line of long commands: "qgen compare: 12/60 analysed
 * quantize avx2 llvm", rewritten in place on stderr while it is a
 * terminal, nothing at all otherwise (pipes, files, CI, --quiet). */
#include <stdio.h>
#include <unistd.h>

#include "cli.h"

bool qg_cli_progress_init(qg_cli_progress *p, const char *command, bool quiet) {
    p->command = command;
    p->shown = false;
    p->on = !quiet && isatty(STDERR_FILENO);
    return p->on;
}

void qg_cli_progress_step(void *user, unsigned done, unsigned total, const char *what) {
    qg_cli_progress *p = user;
    if (!p->on)
        return;
    /* \r and erase-to-end-of-line: one line, however many steps */
    fprintf(stderr, "\r\033[K%s: %u/%u %s", p->command, done, total, what);
    fflush(stderr);
    p->shown = true;
}

void qg_cli_progress_done(qg_cli_progress *p) {
    if (p->on && p->shown)
        fputs("\r\033[K", stderr);
    p->shown = false;
}
