/* Small helpers shared by the CUnit suites. */
#ifndef QGEN_TEST_UTIL_H
#define QGEN_TEST_UTIL_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>

/* Asserts that `text` contains every one of the NULL-terminated needles,
 * printing the text when one is missing. */
static inline void qg_assert_contains_impl(const char *text, const char *const *needles, const char *file, int line) {
    for (const char *const *n = needles; *n; n++) {
        int found = text && strstr(text, *n) != NULL;
        if (!found)
            fprintf(stderr, "\n%s:%d: expected \"%s\" in: %s\n", file, line, *n, text ? text : "(null)");
        CU_assertImplementation(found, (unsigned)line, "message contains expected text", file, "", CU_FALSE);
    }
}
#define ASSERT_CONTAINS(text, ...)                                                                                     \
    qg_assert_contains_impl((text), (const char *const[]){__VA_ARGS__, NULL}, __FILE__, __LINE__)

/* Fills argv[at..] with `first` and the variadic strings after it up to
 * their NULL, at most cap - 1 entries in all, and NULL-terminates it. */
static inline void qg_test_va_args(const char **argv, int at, int cap, const char *first, va_list ap) {
    for (const char *a = first; a && at < cap - 1; a = va_arg(ap, const char *))
        argv[at++] = a;
    argv[at] = NULL;
}

/* Runs argv[0] with argv, stdout and stderr into the two files; returns its
 * exit status (128 + signal when it crashed). */
static inline int qg_test_spawn(const char *const *argv, const char *out_path, const char *err_path) {
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600),
            e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(o, 1);
        dup2(e, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The file's text (at most cap - 1 bytes), NUL-terminated; "" if absent. */
static inline void qg_test_slurp(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
}

/* The scratch directory a suite takes as its one argument, created; false
 * (with a usage line) when the argument is missing. */
static inline bool qg_test_tmpdir(int argc, char **argv, char *dir, size_t cap) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s TMPDIR\n", argv[0]);
        return false;
    }
    snprintf(dir, cap, "%s", argv[1]);
    mkdir(dir, 0700);
    return true;
}

typedef struct qg_test {
    const char *name;
    void (*fn)(void);
} qg_test;

/* Whether test i (from 1) is in QG_TEST_ONLY, a comma-separated list of
 * numbers that lets ctest run one suite as several tests side by side; all
 * tests without it. */
static inline bool qg_test_selected(size_t i) {
    const char *only = getenv("QG_TEST_ONLY");
    if (!only || !*only)
        return true;
    for (const char *p = only; *p;) {
        char *end;
        const unsigned long k = strtoul(p, &end, 10);
        if (end == p)
            return false;
        if (k == i)
            return true;
        p = *end == ',' ? end + 1 : end;
    }
    return false;
}

/* Registers one suite of tests, runs it verbosely, returns the exit code. */
static inline int qg_run_suite(const char *suite, const qg_test *tests, size_t count) {
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite(suite, NULL, NULL);
    size_t selected = 0;
    for (size_t i = 0; i < count; i++)
        if (qg_test_selected(i + 1) && ++selected)
            CU_add_test(s, tests[i].name, tests[i].fn);
    if (selected == 0) {
        fprintf(stderr, "%s: QG_TEST_ONLY=%s selects none of its %zu tests\n", suite, getenv("QG_TEST_ONLY"), count);
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}

#define QG_RUN(suite, tests) qg_run_suite(suite, tests, sizeof(tests) / sizeof((tests)[0]))

#endif
