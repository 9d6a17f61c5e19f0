/* Allocation and I/O failures on demand, for the fault-injection builds
 * (tests/faults/CMakeLists.txt, docs/robustness.md).
 *
 * Linked into a program together with -Wl,--wrap=<fn> for each function
 * below, it stands between qgen's own code (the static libraries linked
 * into the program) and libc; jansson's allocations come here through its
 * allocator hooks. LLVM's do not: LLVM ends the process on out-of-memory by
 * design. Environment:
 *   QG_FAULT_ALLOC=n  the n-th allocation (1-based) returns NULL
 *   QG_FAULT_IO=n     the n-th I/O call fails, errno QG_FAULT_ERRNO
 *                     (ENOSPC, the default, or EIO)
 *   QG_FAULT_ABORT=1  abort() at the fault instead (for a debugger's backtrace)
 *   QG_FAULT_LOG=F    at exit, F gets one line per call in order:
 *                     "alloc SITE" or "io FN SITE", SITE being the calling
 *                     module and offset (the same in every run)
 * One fault per run; every other call goes through. A host that cannot
 * start a process per fault (Python, where importing torch takes a second)
 * calls qg_fault_arm and qg_fault_dump instead. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
int __real_open(const char *path, int flags, ...);
FILE *__real_fopen(const char *path, const char *mode);
int __real_mkstemp(char *tmpl);
ssize_t __real_write(int fd, const void *buf, size_t n);
size_t __real_fwrite(const void *buf, size_t size, size_t n, FILE *f);
int __real_fflush(FILE *f);
int __real_fsync(int fd);
int __real_rename(const char *from, const char *to);
int __real_mkdir(const char *path, mode_t mode);
int __real_close(int fd);
int __real_fclose(FILE *f);

enum { MAX_CALLS = 1 << 20 };
static struct call {
    const void *site;
    const char *fn; /* NULL: an allocation */
} calls[MAX_CALLS];
static unsigned long n_alloc, n_io, fail_alloc, fail_io;
static size_t n_calls;
static int fault_errno = ENOSPC, abort_at_fault;
static const char *log_path;
static int logging;

static void note(const void *site, const char *fn) {
    if (logging && n_calls < MAX_CALLS)
        calls[n_calls++] = (struct call){site, fn};
}

/* Whether this allocation fails. */
static int alloc_fails(const void *site) {
    note(site, NULL);
    if (++n_alloc != fail_alloc)
        return 0;
    if (abort_at_fault)
        abort();
    return 1;
}

/* Whether this I/O call fails (errno set). */
static int io_fails(const void *site, const char *fn) {
    note(site, fn);
    if (++n_io != fail_io)
        return 0;
    if (abort_at_fault)
        abort();
    errno = fault_errno;
    return 1;
}

#define SITE __builtin_return_address(0)

void *__wrap_malloc(size_t n) { return alloc_fails(SITE) ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t k, size_t n) { return alloc_fails(SITE) ? NULL : __real_calloc(k, n); }
void *__wrap_realloc(void *p, size_t n) { return alloc_fails(SITE) ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) {
    if (alloc_fails(SITE))
        return NULL;
    const size_t n = strlen(s) + 1;
    char *d = __real_malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

static void *json_alloc(size_t n) { return alloc_fails(SITE) ? NULL : __real_malloc(n); }

int __wrap_open(const char *path, int flags, ...) {
    mode_t mode = 0;
    if (flags & O_CREAT) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return io_fails(SITE, "open") ? -1 : __real_open(path, flags, mode);
}
FILE *__wrap_fopen(const char *path, const char *mode) {
    return io_fails(SITE, "fopen") ? NULL : __real_fopen(path, mode);
}
int __wrap_mkstemp(char *tmpl) { return io_fails(SITE, "mkstemp") ? -1 : __real_mkstemp(tmpl); }
/* A failing write writes half of its bytes first, as a disk that fills up does. */
ssize_t __wrap_write(int fd, const void *buf, size_t n) {
    if (!io_fails(SITE, "write"))
        return __real_write(fd, buf, n);
    if (n > 1 && __real_write(fd, buf, n / 2) > 0)
        errno = fault_errno;
    return -1;
}
size_t __wrap_fwrite(const void *buf, size_t size, size_t n, FILE *f) {
    if (!io_fails(SITE, "fwrite"))
        return __real_fwrite(buf, size, n, f);
    return n > 1 ? __real_fwrite(buf, size, n / 2, f) : 0;
}
int __wrap_fflush(FILE *f) { return io_fails(SITE, "fflush") ? EOF : __real_fflush(f); }
int __wrap_fsync(int fd) { return io_fails(SITE, "fsync") ? -1 : __real_fsync(fd); }
int __wrap_rename(const char *from, const char *to) { return io_fails(SITE, "rename") ? -1 : __real_rename(from, to); }
int __wrap_mkdir(const char *path, mode_t mode) { return io_fails(SITE, "mkdir") ? -1 : __real_mkdir(path, mode); }
/* A failing close still releases the descriptor, as close(2) does on Linux. */
int __wrap_close(int fd) {
    const int fails = io_fails(SITE, "close");
    const int rc = __real_close(fd);
    if (fails)
        errno = fault_errno;
    return fails ? -1 : rc;
}
int __wrap_fclose(FILE *f) {
    const int fails = io_fails(SITE, "fclose");
    const int rc = __real_fclose(f);
    if (fails)
        errno = fault_errno;
    return fails ? EOF : rc;
}

/* "module+0xOFFSET": the same for a call site in every run, whatever the
 * load addresses. */
static void site_name(const void *site, char *out, size_t cap) {
    Dl_info info;
    if (dladdr(site, &info) && info.dli_fname) {
        const char *base = strrchr(info.dli_fname, '/');
        snprintf(out, cap, "%s+0x%lx", base ? base + 1 : info.dli_fname,
                 (unsigned long)((uintptr_t)site - (uintptr_t)info.dli_fbase));
    } else {
        snprintf(out, cap, "?+%p", site);
    }
}

/* The calls noted so far into path; 0 or -1. */
static int dump(const char *path) {
    const int fd = __real_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    char line[512], site[400];
    for (size_t i = 0; i < n_calls; i++) {
        site_name(calls[i].site, site, sizeof site);
        const int len = calls[i].fn ? snprintf(line, sizeof line, "io %s %s\n", calls[i].fn, site)
                                    : snprintf(line, sizeof line, "alloc %s\n", site);
        if (len > 0 && __real_write(fd, line, (size_t)len) < 0)
            break;
    }
    return __real_close(fd);
}

__attribute__((destructor)) static void write_log(void) {
    if (log_path)
        dump(log_path);
}

/* From now on: count from 0, fail the alloc_n-th allocation and the io_n-th
 * I/O call (0: none), note every call. */
void qg_fault_arm(unsigned long alloc_n, unsigned long io_n) {
    n_alloc = n_io = 0;
    fail_alloc = alloc_n;
    fail_io = io_n;
    n_calls = 0;
    logging = 1;
}

/* The calls since qg_fault_arm, as QG_FAULT_LOG lists them. */
int qg_fault_dump(const char *path) { return dump(path); }

__attribute__((constructor)) static void read_environment(void) {
    const char *a = getenv("QG_FAULT_ALLOC"), *io = getenv("QG_FAULT_IO"), *e = getenv("QG_FAULT_ERRNO");
    fail_alloc = a ? strtoul(a, NULL, 10) : 0;
    fail_io = io ? strtoul(io, NULL, 10) : 0;
    fault_errno = e && strcmp(e, "EIO") == 0 ? EIO : ENOSPC;
    log_path = getenv("QG_FAULT_LOG");
    logging = log_path != NULL;
    abort_at_fault = getenv("QG_FAULT_ABORT") != NULL;
    json_set_alloc_funcs(json_alloc, free);
}
