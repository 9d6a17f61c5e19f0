/* qgen compare: builds a spec's kernels with both backends for every ISA
 * asked for, in a scratch directory, and fills one row per op, ISA and
 * backend (see compare.h). Outside programs: clang-19 (compiles the C
 * backend's files, the runtime for each architecture and the test driver),
 * llvm-mca-19, qemu-aarch64 and qemu-riscv64; each one missing is reported
 * in the output, never fatal. */
#define _POSIX_C_SOURCE 200809L
#include "compare.h"

#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../emit_llvm/emit_llvm.h"
#include "../util/fs_util.h"
#include "../targets/target_table.h"
#include "../validate/validate_c.h"
#include "compare_driver_src.h"
#include "qgen/generate.h"
#include "qgen/runtime.h"

const char *qg_backend_name(int backend) { return backend == QG_BACKEND_LLVM ? "llvm" : "c"; }

#define MAX_ARCHS 8

/* An architecture of the ISA table and its vector ISAs; the host's first
 * (its scalar rows are the ones reported, and the reference runs there). */
typedef struct arch_t {
    const char *arch, *triple;
    qg_isa vector_isas[QG_ISA_COUNT];
    int n_vector;
    const qg_arch *desc;
} arch_t;

static arch_t arches[MAX_ARCHS];
static size_t n_arches;

static void add_arch(const qg_arch *d) {
    arch_t *a = &arches[n_arches++];
    *a = (arch_t){.arch = d->name, .triple = d->triple, .desc = d};
    for (qg_isa isa = QG_ISA_SCALAR + 1; isa < QG_ISA_COUNT; isa++)
        if (qg_arch_of(isa) == d)
            a->vector_isas[a->n_vector++] = isa;
}

static void init_arches(void) {
    if (n_arches)
        return;
    const qg_arch *host = qg_arch_named(qg_host_arch());
    if (host)
        add_arch(host);
    for (size_t i = 0; qg_arch_at(i) && n_arches < MAX_ARCHS; i++)
        if (qg_arch_at(i) != host)
            add_arch(qg_arch_at(i));
}

static const arch_t *arch_of(qg_isa isa) {
    if (isa == QG_ISA_SCALAR)
        return &arches[0]; /* the scalar rows describe this machine's architecture */
    for (size_t a = 0; a < n_arches; a++)
        for (int k = 0; k < arches[a].n_vector; k++)
            if (arches[a].vector_isas[k] == isa)
                return &arches[a];
    return NULL;
}

/* The width a scalable ISA is run and modelled at (0 for fixed widths). */
static int compare_bits(qg_isa isa) { return qg_target_of(isa)->compare_bits; }

typedef struct ctx {
    const qg_spec *sp;
    const qg_compare_options *opt;
    char work[PATH_MAX];
    char clang[PATH_MAX], mca[PATH_MAX];
    bool have_clang, have_mca;
    qg_compare_report *rep;
    unsigned isas; /* generated */
    char why_not[QG_ISA_COUNT][512];
} ctx;

static void note(ctx *c, const char *fmt, ...) {
    if (c->rep->nnotes >= 8)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->rep->notes[c->rep->nnotes++], sizeof c->rep->notes[0], fmt, ap);
    va_end(ap);
}

static const char *pathf(ctx *c, char *buf, size_t cap, const char *fmt, ...) {
    int n = snprintf(buf, cap, "%s/", c->work);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, cap - (size_t)n, fmt, ap);
    va_end(ap);
    return buf;
}

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
        FILE *f = fopen(pathf(c, p, sizeof p, "last-clang.txt"), "w");
        if (f) {
            fputs(out, f);
            fclose(f);
        }
    }
    free(out);
    free(copy);
    return rc;
}

static bool file_exists(const char *p) { return access(p, R_OK) == 0; }

/* The runtime's sources: installed next to qgen, or the source tree's. */
static void runtime_sources(char *out, size_t cap) {
    if (!qg_installed_path("share/qgen/runtime-src", "observer.c", out, cap))
        snprintf(out, cap, "%s", QGEN_RUNTIME_SOURCE_DIR);
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

static bool build_runtime(ctx *c, const arch_t *a) {
    char src[PATH_MAX], words[3 * PATH_MAX], o[PATH_MAX + 64];
    runtime_sources(src, sizeof src);
    if (!list_runtime(src))
        return false;
    for (size_t k = 0; k < n_runtime; k++) {
        snprintf(words, sizeof words, "-O1 -ffp-contract=off %s -I%s -I%s/xxhash -c %s/%s.c -o %s",
                 a->desc->baseline_cflags, qg_include_dir(), c->work, src, runtime_files[k],
                 pathf(c, o, sizeof o, "rt-%s-%s.o", a->arch, runtime_files[k]));
        if (clang(c, a, words) != 0)
            return false;
    }
    return true;
}

static void runtime_objects(ctx *c, const arch_t *a, char *out, size_t cap) {
    out[0] = 0;
    for (size_t k = 0; k < n_runtime; k++) {
        char o[PATH_MAX + 64];
        strncat(out, " ", cap - strlen(out) - 1);
        strncat(out, pathf(c, o, sizeof o, "rt-%s-%s.o", a->arch, runtime_files[k]), cap - strlen(out) - 1);
    }
}

/* The directory holding backend b's files for `a`. */
static const char *gen_dir(ctx *c, int b, const arch_t *a, char *buf, size_t cap) {
    return b == QG_BACKEND_C ? pathf(c, buf, cap, "c") : pathf(c, buf, cap, "llvm-%s", a->arch);
}

static qg_status generate(ctx *c, qg_error *err) {
    char dir[PATH_MAX + 64];
    qg_generate_options g = {.out_dir = pathf(c, dir, sizeof dir, "c"),
                             .targets = c->isas,
                             .command = "qgen compare",
                             .no_validate = 1,
                             .emit = QG_EMIT_C};
    qg_status st = qg_generate(c->sp, &g, err);
    for (size_t a = 0; a < n_arches && !st; a++) {
        unsigned set = 1u << QG_ISA_SCALAR;
        for (int k = 0; k < arches[a].n_vector; k++)
            set |= c->isas & (1u << arches[a].vector_isas[k]);
        if (set == 1u << QG_ISA_SCALAR && a != 0)
            continue;
        qg_generate_options l = {.out_dir = gen_dir(c, QG_BACKEND_LLVM, &arches[a], dir, sizeof dir),
                                 .targets = set,
                                 .command = "qgen compare",
                                 .no_validate = 1,
                                 .emit = QG_EMIT_OBJ,
                                 .scalar_arch = arches[a].arch};
        if (!(st = qg_generate(c->sp, &l, err))) {
            l.emit = QG_EMIT_ASM;
            st = qg_generate(c->sp, &l, err);
        }
    }
    return st;
}

/* Kernel objects of backend b for arch a (compiling the C files), the
 * dispatcher included; false when a compile failed. */
static bool kernel_objects(ctx *c, int b, const arch_t *a, char *list, size_t cap) {
    char dir[PATH_MAX + 64], words[8 * PATH_MAX], o[PATH_MAX + 64];
    gen_dir(c, b, a, dir, sizeof dir);
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
            pathf(c, obj, sizeof obj, "c-%s-%s.o", a->arch, isa);
            for (int s = 0; s < 2; s++) {
                snprintf(words, sizeof words, "-O2 -fPIC -ffp-contract=off %s %s -I%s -I%s %s %s/%s_%s.c -o %s", rv,
                         flags, dir, qg_include_dir(), s ? "-S" : "-c", dir, name, isa,
                         s ? pathf(c, o, sizeof o, "c-%s-%s.s", a->arch, isa) : obj);
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
             qg_include_dir(), dir, name, pathf(c, o, sizeof o, "%s-%s-dispatch.o", qg_backend_name(b), a->arch));
    if (clang(c, a, words) != 0)
        return false;
    strncat(list, " ", cap - strlen(list) - 1);
    strncat(list, o, cap - strlen(list) - 1);
    return true;
}

/* Builds the test driver for one ISA (or the reference); its path in exe. */
static bool build_driver(ctx *c, int b, const arch_t *a, qg_isa isa, bool reference, const char *objects, char *exe,
                         size_t cap) {
    char dir[PATH_MAX + 64], src[PATH_MAX + 64];
    const size_t rt_cap = n_runtime * (PATH_MAX + 70) + 1, words_cap = rt_cap + 4 * PATH_MAX;
    char *rt = malloc(rt_cap), *words = malloc(words_cap);
    if (!rt || !words) {
        free(rt);
        free(words);
        return false;
    }
    gen_dir(c, b, a, dir, sizeof dir);
    runtime_objects(c, a, rt, rt_cap);
    pathf(c, exe, cap, "driver-%s-%s%s", qg_backend_name(b), qg_isa_name(isa), reference ? "-ref" : "");
    snprintf(words, words_cap,
             "-O2 -ffp-contract=off %s %s -DCMP_NAME=%s -DCMP_HEADER=\"%s.h\" -DCMP_ISA=%s -I%s -I%s -I%s/xxhash %s "
             "%s %s -o %s -lm",
             a->desc->baseline_cflags, reference ? "-DCMP_REFERENCE" : "", c->sp->name, c->sp->name, qg_isa_name(isa),
             dir, qg_include_dir(), c->work, pathf(c, src, sizeof src, "compare_driver.c"), objects, rt, exe);
    bool ok = clang(c, a, words) == 0;
    free(rt);
    free(words);
    return ok;
}

/* ---- running ----------------------------------------------------------- */

typedef struct run_out {
    bool ran;
    char why[96];
    char hash[QG_K_OP_COUNT][20];
    double melem[QG_K_OP_COUNT];
    bool timed;
} run_out;

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

static void run_driver(const arch_t *a, qg_isa isa, const char *exe, run_out *r) {
    memset(r, 0, sizeof *r);
    char *argv[12];
    int n = 0;
    char qemu[PATH_MAX], cpu[160], env[64];
    const char *qemu_name = a->desc->qemu[0] ? a->desc->qemu : NULL;
    const qg_target *t = qg_target_of(isa);
    if (qemu_name) {
        /* QGEN_QEMU_<ARCH> overrides the program */
        size_t k = (size_t)snprintf(env, sizeof env, "QGEN_QEMU_");
        for (const char *p = a->arch; *p && k + 1 < sizeof env; p++)
            env[k++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
        env[k] = 0;
        if (!qg_cmp_find_tool(env, qemu_name, qemu, sizeof qemu)) {
            snprintf(r->why, sizeof r->why, "not run: %s not found", qemu_name);
            return;
        }
        argv[n++] = qemu;
        argv[n++] = "-L";
        argv[n++] = (char *)a->desc->sysroot;
        if (t->qemu_cpu[0]) {
            qg_target_qemu_cpu(t, compare_bits(isa), cpu, sizeof cpu);
            argv[n++] = "-cpu";
            argv[n++] = cpu;
        }
    } else if (!qg_cpu_has(isa)) {
        snprintf(r->why, sizeof r->why, "not run: this CPU lacks %s", qg_isa_name(isa));
        return;
    }
    argv[n++] = (char *)exe;
    if (!qemu_name)
        argv[n++] = "--time";
    argv[n] = NULL;
    char *out = NULL;
    int rc = qg_cmp_run(argv, &out);
    if (rc != 0) {
        snprintf(r->why, sizeof r->why, "run failed (exit %d)", rc);
    } else {
        r->ran = true;
        snprintf(r->why, sizeof r->why, "%s", qemu_name ? qemu_name : "native");
        if (compare_bits(isa))
            snprintf(r->why, sizeof r->why, "%s, %d-bit vectors", qemu_name ? qemu_name : "native", compare_bits(isa));
        parse_run(out ? out : "", r);
    }
    free(out);
}

/* ---- static analysis -------------------------------------------------- */

/* The llvm-mca models of an ISA: --mca-cpu's, else its target's. */
static int mca_models(const qg_compare_options *opt, qg_isa isa, const char *models[2], char storage[2][32]) {
    const char *list = opt->mca_cpus[isa] ? opt->mca_cpus[isa] : qg_llvm_target_of(isa, arch_of(isa)->arch)->mca_cpus;
    int n = 0;
    while (*list && n < 2) {
        size_t len = strcspn(list, ",");
        snprintf(storage[n], 32, "%.*s", (int)len, list);
        models[n] = storage[n];
        n++;
        list += len + (list[len] == ',');
    }
    return n;
}

static void analyse(ctx *c, qg_compare_row *row) {
    const arch_t *a = arch_of(row->isa);
    const char *name = c->sp->name, *isa = qg_isa_name(row->isa), *op = qg_kernel_op_name(row->op);
    char asm_path[2 * PATH_MAX], obj[2 * PATH_MAX], dir[PATH_MAX + 64];
    if (row->backend == QG_BACKEND_C) {
        pathf(c, asm_path, sizeof asm_path, "c-%s-%s.s", a->arch, isa);
        pathf(c, obj, sizeof obj, "c-%s-%s.o", a->arch, isa);
    } else {
        gen_dir(c, QG_BACKEND_LLVM, a, dir, sizeof dir);
        snprintf(asm_path, sizeof asm_path, "%s/%s_%s.s", dir, name, isa);
        snprintf(obj, sizeof obj, "%s/%s_%s.o", dir, name, isa);
    }
    /* the entry and the helpers it may call (inlined or not) */
    char f[4][QG_NAME_MAX + 64];
    snprintf(f[0], sizeof f[0], "%s_%s__%s", name, op, isa);
    if (row->op == QG_K_OBSERVE) {
        snprintf(f[1], sizeof f[1], "%s_minmax_span", name);
        snprintf(f[2], sizeof f[2], "%s_minmax_span__%s", name, isa);
    } else {
        snprintf(f[1], sizeof f[1], "%s_%s_span", name, op);
        snprintf(f[2], sizeof f[2], "%s_%s_body", name, op);
    }
    snprintf(f[3], sizeof f[3], "%s_chan_init__%s", name, isa);
    long bytes = -1;
    for (int k = 0; k < 3; k++) {
        long s = qg_cmp_symbol_size(obj, f[k]);
        if (s > 0)
            bytes = (bytes < 0 ? 0 : bytes) + s;
    }
    row->code_bytes = bytes;
    FILE *fp = fopen(asm_path, "r");
    if (!fp) {
        snprintf(row->note, sizeof row->note, "no assembly (%.200s)", asm_path);
        return;
    }
    fseek(fp, 0, SEEK_END);
    long len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *text = malloc((size_t)len + 2);
    size_t got = text ? fread(text + 1, 1, (size_t)len, fp) : 0;
    fclose(fp);
    if (!text)
        return;
    text[0] = '\n';
    text[got + 1] = 0;
    const char *fns[3] = {f[0], f[1], f[2]};
    qg_loop loop;
    qg_loop_find(text, fns, 3, a->arch, &loop);
    free(text);
    row->loop_found = loop.found;
    const bool forwards = qg_plan_by_reference(c->sp, row->op);
    if (!loop.found) {
        snprintf(row->note, sizeof row->note, "%s",
                 forwards ? "no loop: this kernel calls the runtime's reference" : "no loop found in the kernel");
        qg_loop_free(&loop);
        return;
    }
    row->loop_instructions = loop.instructions;
    memcpy(row->mix, loop.mix, sizeof row->mix);
    row->mix[QG_MIX_LOADS] = row->mix[QG_MIX_STORES] = -1; /* from llvm-mca's MayLoad/MayStore, below */
    row->elements_per_iteration = qg_llvm_elements_per_iteration(row->isa, compare_bits(row->isa));
    const char *models[2];
    char storage[2][32];
    row->n_mca = mca_models(c->opt, row->isa, models, storage);
    const qg_llvm_target *t = qg_llvm_target_of(row->isa, a->arch);
    for (int m = 0; m < row->n_mca; m++) {
        if (!c->have_mca) {
            snprintf(row->mca[m].cpu, sizeof row->mca[m].cpu, "%s", models[m]);
            snprintf(row->mca[m].note, sizeof row->mca[m].note, "llvm-mca-19 not found");
            continue;
        }
        int loads = -1, stores = -1;
        qg_loop_mca(c->mca, c->work, &loop, t->triple, models[m], t->features, a->arch, &row->mca[m], &loads, &stores);
        if (row->mca[m].ok) {
            row->mca[m].cycles_per_element = row->mca[m].cycles_per_iteration / row->elements_per_iteration;
            if (loads >= 0 && row->mix[QG_MIX_LOADS] < 0) {
                row->mix[QG_MIX_LOADS] = loads;
                row->mix[QG_MIX_STORES] = stores;
            }
        }
    }
    qg_loop_free(&loop);
}

/* ---- the comparison ------------------------------------------------------ */

static qg_status setup(ctx *c, qg_error *err) {
    snprintf(c->work, sizeof c->work, "%s/qgen-compare-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(c->work))
        return qg_error_set(err, QG_ERR_IO, "compare: cannot make a scratch directory under %s",
                            getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    char p[PATH_MAX + 64];
    FILE *f = fopen(pathf(c, p, sizeof p, "compare_driver.c"), "w");
    if (!f || fwrite(qg_compare_driver_src, 1, sizeof qg_compare_driver_src - 1, f) != sizeof qg_compare_driver_src - 1)
        return qg_error_set(err, QG_ERR_IO, "compare: cannot write %s", p);
    fclose(f);
    /* xxhash.h for the driver and the runtime, for any architecture */
    mkdir(pathf(c, p, sizeof p, "xxhash"), 0755);
    char src[PATH_MAX], from[PATH_MAX + 32];
    runtime_sources(src, sizeof src);
    snprintf(from, sizeof from, "%s/xxhash/xxhash.h", src);
    if (!file_exists(from))
        snprintf(from, sizeof from, "%s/xxhash.h", QGEN_XXHASH_INCLUDE_DIR);
    char *argv[] = {"cp", from, p, NULL}, *out = NULL;
    pathf(c, p, sizeof p, "xxhash/xxhash.h");
    int rc = qg_cmp_run(argv, &out);
    free(out);
    if (rc != 0)
        return qg_error_set(err, QG_ERR_IO, "compare: cannot copy %s", from);
    return QG_OK;
}

static void cleanup(ctx *c) {
    if (c->opt->keep) {
        fprintf(stderr, "compare: scratch files kept in %s\n", c->work);
        return;
    }
    char *argv[] = {"rm", "-rf", c->work, NULL}, *out = NULL;
    qg_cmp_run(argv, &out);
    free(out);
}

qg_status qg_compare_run(const qg_spec *spec, const qg_compare_options *opt, qg_compare_report *rep, qg_error *err) {
    memset(rep, 0, sizeof *rep);
    qg_status st = qg_spec_validate(spec, err);
    if (st)
        return st;
    rep->spec = *spec;
    init_arches();
    rep->rvv_vlen = compare_bits(QG_ISA_RVV);
    snprintf(rep->llvm_version, sizeof rep->llvm_version, "%s", qg_llvm_version());
    ctx cv = {.sp = &rep->spec, .opt = opt, .rep = rep}, *c = &cv;
    const unsigned ops = opt->ops ? opt->ops : (1u << QG_K_OP_COUNT) - 1;
    const unsigned targets = opt->targets ? opt->targets : (1u << QG_ISA_COUNT) - 1;
    const unsigned backends = opt->backends ? opt->backends : 3u;
    c->isas = 1u << QG_ISA_SCALAR;
    for (int i = 1; i < QG_ISA_COUNT; i++) {
        if (!(targets & (1u << i)))
            continue;
        qg_error why;
        if (qg_plan_check_isa(spec, (qg_isa)i, &why) == QG_OK)
            c->isas |= 1u << i;
        else
            snprintf(c->why_not[i], sizeof c->why_not[i], "%s", why.message);
    }
    c->have_clang = qg_cmp_find_tool("QGEN_CLANG", "clang-19", c->clang, sizeof c->clang);
    c->have_mca = qg_cmp_find_tool("QGEN_LLVM_MCA", "llvm-mca-19", c->mca, sizeof c->mca);
    if (!c->have_clang)
        return qg_error_set(err, QG_ERR_INVALID,
                            "compare: clang-19 not found on PATH (or QGEN_CLANG); it builds the kernels and the "
                            "test driver; expected Debian's clang-19 package");
    if (!c->have_mca)
        note(c, "llvm-mca-19 not found (PATH or QGEN_LLVM_MCA): no cycle estimates");
    if ((st = setup(c, err)))
        return st;
    if ((st = generate(c, err))) {
        cleanup(c);
        return st;
    }
    size_t cap = (size_t)QG_K_OP_COUNT * QG_ISA_COUNT * QG_BACKEND_COUNT;
    rep->rows = calloc(cap, sizeof *rep->rows);
    if (!rep->rows) {
        cleanup(c);
        return qg_error_set(err, QG_ERR_NOMEM, "compare: out of memory");
    }
    /* progress: one step per test program run, one per row analysed */
    unsigned total = 0, done = 0;
    for (int isa = 0; isa < QG_ISA_COUNT; isa++)
        for (int b = 0; b < QG_BACKEND_COUNT; b++)
            if ((c->isas & targets & (1u << isa)) && (backends & (1u << b)))
                total += 1 + (unsigned)__builtin_popcount(ops);
    char what[96];
    /* build and run: the reference first, natively */
    run_out ref = {0}, runs[QG_BACKEND_COUNT][QG_ISA_COUNT];
    memset(runs, 0, sizeof runs);
    char *objects = malloc(8 * PATH_MAX);
    char exe[PATH_MAX + 64];
    bool built_rt[MAX_ARCHS] = {false};
    for (size_t a = 0; a < n_arches; a++) {
        const arch_t *ar = &arches[a];
        bool wanted = a == 0;
        for (int k = 0; k < ar->n_vector; k++)
            wanted |= (c->isas & (1u << ar->vector_isas[k])) != 0;
        if (!wanted)
            continue;
        if (!(built_rt[a] = build_runtime(c, ar))) {
            note(c, "the runtime did not build for %s (see %s/last-clang.txt with --keep)", ar->arch, c->work);
            continue;
        }
        for (int b = 0; b < QG_BACKEND_COUNT; b++) {
            if (!(backends & (1u << b)) && !(a == 0 && b == QG_BACKEND_C))
                continue;
            if (!kernel_objects(c, b, ar, objects, 8 * PATH_MAX)) {
                note(c, "the %s backend's kernels did not build for %s", qg_backend_name(b), ar->arch);
                continue;
            }
            if (a == 0 && b == QG_BACKEND_C) {
                if (build_driver(c, b, ar, QG_ISA_SCALAR, true, objects, exe, sizeof exe))
                    run_driver(ar, QG_ISA_SCALAR, exe, &ref);
                else
                    note(c, "the reference driver did not build");
            }
            if (!(backends & (1u << b)))
                continue;
            qg_isa list[QG_ISA_COUNT + 1] = {QG_ISA_SCALAR};
            memcpy(list + 1, ar->vector_isas, sizeof ar->vector_isas);
            for (int k = a == 0 ? 0 : 1; k <= ar->n_vector; k++) {
                qg_isa isa = list[k];
                if (!(c->isas & (1u << isa)) || !(targets & (1u << isa)))
                    continue;
                if (build_driver(c, b, ar, isa, false, objects, exe, sizeof exe))
                    run_driver(ar, isa, exe, &runs[b][isa]);
                else
                    snprintf(runs[b][isa].why, sizeof runs[b][isa].why, "the test program did not build");
                snprintf(what, sizeof what, "ran %s %s", qg_isa_name(isa), qg_backend_name(b));
                if (opt->progress)
                    opt->progress(opt->progress_user, ++done, total, what);
            }
        }
    }
    free(objects);
    /* the rows */
    for (int op = 0; op < QG_K_OP_COUNT; op++) {
        if (!(ops & (1u << op)))
            continue;
        for (int isa = 0; isa < QG_ISA_COUNT; isa++) {
            if (!(targets & (1u << isa)))
                continue;
            for (int b = 0; b < QG_BACKEND_COUNT; b++) {
                if (!(backends & (1u << b)))
                    continue;
                qg_compare_row *row = &rep->rows[rep->nrows++];
                row->op = (qg_kernel_op)op;
                row->isa = (qg_isa)isa;
                row->backend = b;
                row->code_bytes = -1;
                row->correct = row->agree = -1;
                if (!(c->isas & (1u << isa))) {
                    snprintf(row->run, sizeof row->run, "not generated");
                    snprintf(row->note, sizeof row->note, "%s", c->why_not[isa]);
                    continue;
                }
                analyse(c, row);
                snprintf(what, sizeof what, "analysed %s %s %s", qg_kernel_op_name((qg_kernel_op)op),
                         qg_isa_name((qg_isa)isa), qg_backend_name(b));
                if (opt->progress)
                    opt->progress(opt->progress_user, ++done, total, what);
                const run_out *r = &runs[b][isa];
                snprintf(row->run, sizeof row->run, "%s", r->why[0] ? r->why : "not run");
                if (r->ran && ref.ran && r->hash[op][0] && ref.hash[op][0])
                    row->correct = strcmp(r->hash[op], ref.hash[op]) == 0;
                if (r->timed && r->melem[op] > 0) {
                    row->measured = true;
                    row->measured_melem_per_s = r->melem[op];
                }
                const run_out *other = &runs[1 - b][isa];
                if (r->ran && other->ran && r->hash[op][0] && other->hash[op][0])
                    row->agree = strcmp(r->hash[op], other->hash[op]) == 0;
            }
        }
    }
    if (!ref.ran)
        note(c, "the reference did not run: %s", ref.why[0] ? ref.why : "not built");
    cleanup(c);
    return QG_OK;
}

void qg_compare_report_free(qg_compare_report *r) {
    free(r->rows);
    r->rows = NULL;
    r->nrows = 0;
}
