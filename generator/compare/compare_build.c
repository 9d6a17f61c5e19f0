/* qgen compare's building and running: the spec's files from both
 * backends, each architecture's runtime and kernel objects, the test driver
 * per ISA, and its run (natively, or under qemu with the ISA table's CPU). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../emit_llvm/emit_llvm.h"
#include "../util/fs_util.h"
#include "../validate/validate_c.h"
#include "compare_internal.h"
#include "qgen/generate.h"
#include "qgen/runtime.h"

/* ---- building ------------------------------------------------------------ */

static const char *isa_cflags(qg_isa isa) { return qg_target_of(isa)->cflags; }

/* clang-19 for `arch`, with extra words split on spaces; returns its exit
 * status (output kept in c->work/last-clang.txt on failure). */
static int clang(ctx *c, const arch_t *a, const char *words) {
    char *argv[96];
    int n = 0;
    argv[n++] = c->clang;
    char target[96];
    snprintf(target, sizeof target, "--target=%s", a->triple);
    argv[n++] = target;
    argv[n++] = "-fuse-ld=lld";
    char *copy = strdup(words);
    for (char *tok = strtok(copy, " "); tok && n < 94; tok = strtok(NULL, " "))
        argv[n++] = tok;
    argv[n] = NULL;
    char *out = NULL;
    int rc = qg_cmp_run(argv, &out);
    if (rc != 0 && out) {
        char p[PATH_MAX + 32];
        FILE *f = fopen(qg_cmp_pathf(c, p, sizeof p, "last-clang.txt"), "w");
        if (f) {
            fputs(out, f);
            fclose(f);
        }
    }
    free(out);
    free(copy);
    return rc;
}

/* The runtime's sources: installed next to qgen, or the source tree's;
 * generated: where qg_isa_facts.h is (installed beside them, or the build's). */
void qg_cmp_runtime_sources(char *out, size_t cap) {
    if (!qg_installed_path("share/qgen/runtime-src", "observer.c", out, cap))
        snprintf(out, cap, "%s", QGEN_RUNTIME_SOURCE_DIR);
}
static void runtime_generated(char *out, size_t cap) {
    if (!qg_installed_path("share/qgen/runtime-src", "qg_isa_facts.h", out, cap))
        snprintf(out, cap, "%s", QGEN_RUNTIME_GENERATED_DIR);
}

/* The runtime's .c files, by name without ".c", sorted: read from the
 * sources' directory, so that a new runtime file needs no edit here. */
enum { MAX_RUNTIME = 64 };
static char runtime_files[MAX_RUNTIME][64];
static size_t n_runtime;

static int by_name(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

static bool list_runtime(const char *src) {
    DIR *d = opendir(src);
    if (!d)
        return false;
    n_runtime = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n_runtime < MAX_RUNTIME) {
        size_t len = strlen(e->d_name);
        if (len > 2 && len < sizeof runtime_files[0] + 2 && strcmp(e->d_name + len - 2, ".c") == 0)
            snprintf(runtime_files[n_runtime++], sizeof runtime_files[0], "%.*s", (int)(len - 2), e->d_name);
    }
    closedir(d);
    qsort(runtime_files, n_runtime, sizeof runtime_files[0], by_name);
    return n_runtime > 0;
}

bool qg_cmp_build_runtime(ctx *c, const arch_t *a) {
    char src[PATH_MAX], gen[PATH_MAX], words[6 * PATH_MAX], o[PATH_MAX + 64], flags[512], inc[PATH_MAX + 8],
        xx[PATH_MAX + 16];
    qg_cmp_runtime_sources(src, sizeof src);
    runtime_generated(gen, sizeof gen);
    if (!list_runtime(src))
        return false;
    snprintf(flags, sizeof flags, "-O1 -ffp-contract=off %s", a->desc->baseline_cflags);
    snprintf(inc, sizeof inc, "%s/qgen", qg_include_dir());
    const char *const inputs[] = {src, inc, gen, qg_cmp_pathf(c, xx, sizeof xx, "xxhash")};
    qg_cmp_rt_cache rc;
    qg_cmp_rt_cache_open(c, a, inputs, 4, flags, &rc);
    for (size_t k = 0; k < n_runtime; k++) {
        qg_cmp_pathf(c, o, sizeof o, "rt-%s-%s.o", a->arch, runtime_files[k]);
        if (qg_cmp_rt_cache_fetch(&rc, runtime_files[k], o))
            continue;
        snprintf(words, sizeof words, "%s -I%s -I%s -I%s/xxhash -c %s/%s.c -o %s", flags, qg_include_dir(), gen,
                 c->work, src, runtime_files[k], o);
        if (clang(c, a, words) != 0)
            return false;
        qg_cmp_rt_cache_keep(&rc, runtime_files[k], o);
    }
    return true;
}

static void runtime_objects(ctx *c, const arch_t *a, char *out, size_t cap) {
    out[0] = 0;
    for (size_t k = 0; k < n_runtime; k++) {
        char o[PATH_MAX + 64];
        strncat(out, " ", cap - strlen(out) - 1);
        strncat(out, qg_cmp_pathf(c, o, sizeof o, "rt-%s-%s.o", a->arch, runtime_files[k]), cap - strlen(out) - 1);
    }
}

/* The directory holding backend b's files for `a`. */
const char *qg_cmp_gen_dir(ctx *c, int b, const arch_t *a, char *buf, size_t cap) {
    return b == QG_BACKEND_C ? qg_cmp_pathf(c, buf, cap, "c") : qg_cmp_pathf(c, buf, cap, "llvm-%s", a->arch);
}

qg_status qg_cmp_generate(ctx *c, qg_error *err) {
    char dir[PATH_MAX + 64];
    qg_generate_options g = {.out_dir = qg_cmp_pathf(c, dir, sizeof dir, "c"),
                             .targets = c->isas,
                             .command = "qgen compare",
                             .no_validate = 1,
                             .emit = QG_EMIT_C};
    qg_status st = qg_generate(c->sp, &g, err);
    for (size_t a = 0; a < qg_cmp_n_arches && !st; a++) {
        unsigned set = 1u << QG_ISA_SCALAR;
        for (int k = 0; k < qg_cmp_arches[a].n_vector; k++)
            set |= c->isas & (1u << qg_cmp_arches[a].vector_isas[k]);
        if (set == 1u << QG_ISA_SCALAR && a != 0)
            continue;
        qg_generate_options l = {.out_dir = qg_cmp_gen_dir(c, QG_BACKEND_LLVM, &qg_cmp_arches[a], dir, sizeof dir),
                                 .targets = set,
                                 .command = "qgen compare",
                                 .no_validate = 1,
                                 .emit = QG_EMIT_OBJ,
                                 .scalar_arch = qg_cmp_arches[a].arch};
        if (!(st = qg_generate(c->sp, &l, err))) {
            l.emit = QG_EMIT_ASM;
            st = qg_generate(c->sp, &l, err);
        }
    }
    return st;
}

/* Kernel objects of backend b for arch a (compiling the C files), the
 * dispatcher included; false when a compile failed. */
bool qg_cmp_kernel_objects(ctx *c, int b, const arch_t *a, char *list, size_t cap) {
    char dir[PATH_MAX + 64], words[8 * PATH_MAX], o[PATH_MAX + 64];
    qg_cmp_gen_dir(c, b, a, dir, sizeof dir);
    const char *name = c->sp->name;
    list[0] = 0;
    qg_isa isas[QG_ISA_COUNT] = {QG_ISA_SCALAR};
    int n = 1;
    for (int k = 0; k < a->n_vector; k++)
        if (c->isas & (1u << a->vector_isas[k]))
            isas[n++] = a->vector_isas[k];
    const char *rv = a->desc->baseline_cflags;
    for (int k = 0; k < n; k++) {
        const char *isa = qg_isa_name(isas[k]);
        char obj[2 * PATH_MAX];
        if (b == QG_BACKEND_C) {
            /* scalar without auto-vectorization: its rows describe scalar code */
            const char *flags = isas[k] == QG_ISA_SCALAR ? "-fno-vectorize -fno-slp-vectorize" : isa_cflags(isas[k]);
            qg_cmp_pathf(c, obj, sizeof obj, "c-%s-%s.o", a->arch, isa);
            for (int s = 0; s < 2; s++) {
                snprintf(words, sizeof words, "-O2 -fPIC -ffp-contract=off %s %s -I%s -I%s %s %s/%s_%s.c -o %s", rv,
                         flags, dir, qg_include_dir(), s ? "-S" : "-c", dir, name, isa,
                         s ? qg_cmp_pathf(c, o, sizeof o, "c-%s-%s.s", a->arch, isa) : obj);
                if (clang(c, a, words) != 0)
                    return false;
            }
        } else {
            snprintf(obj, sizeof obj, "%s/%s_%s.o", dir, name, isa);
        }
        strncat(list, " ", cap - strlen(list) - 1);
        strncat(list, obj, cap - strlen(list) - 1);
    }
    snprintf(words, sizeof words, "-O2 -fPIC -ffp-contract=off %s -I%s -I%s -c %s/%s_dispatch.c -o %s", rv, dir,
             qg_include_dir(), dir, name,
             qg_cmp_pathf(c, o, sizeof o, "%s-%s-dispatch.o", qg_backend_name(b), a->arch));
    if (clang(c, a, words) != 0)
        return false;
    strncat(list, " ", cap - strlen(list) - 1);
    strncat(list, o, cap - strlen(list) - 1);
    return true;
}

/* Builds the test driver for one ISA (or the reference); its path in exe. */
bool qg_cmp_build_driver(ctx *c, int b, const arch_t *a, qg_isa isa, bool reference, const char *objects, char *exe,
                         size_t cap) {
    char dir[PATH_MAX + 64], src[PATH_MAX + 64];
    const size_t rt_cap = n_runtime * (PATH_MAX + 70) + 1, words_cap = rt_cap + 4 * PATH_MAX;
    char *rt = malloc(rt_cap), *words = malloc(words_cap);
    if (!rt || !words) {
        free(rt);
        free(words);
        return false;
    }
    qg_cmp_gen_dir(c, b, a, dir, sizeof dir);
    runtime_objects(c, a, rt, rt_cap);
    qg_cmp_pathf(c, exe, cap, "driver-%s-%s%s", qg_backend_name(b), qg_isa_name(isa), reference ? "-ref" : "");
    snprintf(words, words_cap,
             "-O2 -ffp-contract=off %s %s -DCMP_NAME=%s -DCMP_HEADER=\"%s.h\" -DCMP_ISA=%s -I%s -I%s -I%s/xxhash %s "
             "%s %s %s -o %s -lm",
             a->desc->baseline_cflags, reference ? "-DCMP_REFERENCE" : "", c->sp->name, c->sp->name, qg_isa_name(isa),
             dir, qg_include_dir(), c->work, qg_cmp_pathf(c, src, sizeof src, "compare_driver.c"), objects, rt,
             a->desc->link_flags, exe);
    bool ok = clang(c, a, words) == 0;
    free(rt);
    free(words);
    return ok;
}

/* ---- running ----------------------------------------------------------- */

static int op_index(const char *name) {
    for (int k = 0; k < QG_K_OP_COUNT; k++)
        if (strcmp(name, qg_kernel_op_name((qg_kernel_op)k)) == 0)
            return k;
    return -1;
}

static void parse_run(const char *text, run_out *r) {
    for (const char *l = text; l && *l;) {
        char a[40] = "", b[40] = "", d[40] = "";
        if (sscanf(l, "%39s %39s %39s", a, b, d) >= 2) {
            int k;
            if (strcmp(a, "time") == 0 && (k = op_index(b)) >= 0) {
                r->melem[k] = strtod(d, NULL);
                r->timed = true;
            } else if ((k = op_index(a)) >= 0) {
                snprintf(r->hash[k], sizeof r->hash[k], "%.*s", (int)sizeof r->hash[k] - 1, b);
            }
        }
        l = strchr(l, '\n');
        l = l ? l + 1 : NULL;
    }
}

void qg_cmp_run_driver(const ctx *c, const arch_t *a, qg_isa isa, const char *exe, bool timed, run_out *r) {
    memset(r, 0, sizeof *r);
    char why[80];
    qg_cmp_runner runner;
    if (!qg_cmp_runner_init(&runner, a->desc, isa, qg_cmp_compare_bits(isa), c->work, why, sizeof why)) {
        snprintf(r->why, sizeof r->why, "not run: %s", why);
        return;
    }
    const bool qemu = a->desc->qemu[0] != 0;
    if (runner.n == 0 && !qg_cpu_has(isa)) {
        snprintf(r->why, sizeof r->why, "not run: this CPU lacks %s", qg_isa_name(isa));
        return;
    }
    char *argv[12];
    int n = 0;
    for (int k = 0; k < runner.n; k++)
        argv[n++] = runner.argv[k];
    argv[n++] = (char *)exe;
    if (timed && !qemu) /* under qemu: correctness only */
        argv[n++] = "--time";
    argv[n] = NULL;
    char *out = NULL;
    int rc = qg_cmp_run(argv, &out);
    if (rc != 0) {
        snprintf(r->why, sizeof r->why, "run failed (exit %d)", rc);
    } else {
        r->ran = true;
        snprintf(r->why, sizeof r->why, "%s", runner.name);
        if (qg_cmp_compare_bits(isa))
            snprintf(r->why, sizeof r->why, "%s, %d-bit vectors", runner.name, qg_cmp_compare_bits(isa));
        parse_run(out ? out : "", r);
    }
    free(out);
}
