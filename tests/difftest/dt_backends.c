/* The kernels of a spec from each backend (dt_backends.h). */
#include "dt_backends.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare/compare.h" /* qg_cmp_run, qg_cmp_runner_init, qg_cmp_write_file */
#include "emit_c/emit_c.h"   /* qg_emit_spec_literal */
#include "qgen/generate.h"
#include "qgen/jit.h"
#include "targets/target_table.h"

enum { PATH = 1024 };

const char *dt_backend_name(dt_backend b) {
    static const char *const names[] = {"jit", "c", "llvm"};
    return b < DT_BACKEND_COUNT ? names[b] : "?";
}

static char *pathf(char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return buf;
}

/* Runs argv; its output (stdout and stderr) in why on failure. */
static bool run(char *const argv[], char *why, size_t cap) {
    char *text = NULL;
    const int rc = qg_cmp_run(argv, &text);
    if (rc != 0)
        snprintf(why, cap, "%s exited %d: %.600s", argv[0], rc, text ? text : "");
    free(text);
    return rc == 0;
}

static bool generate(const qg_spec *sp, qg_isa isa, qg_emit_kind emit, const char *dir, char *why, size_t cap) {
    const qg_generate_options g = {
        .out_dir = dir, .targets = 1u << isa, .command = "qgen-difftest", .no_validate = 1, .emit = emit};
    qg_error err;
    if (qg_generate(sp, &g, &err) != QG_OK) {
        snprintf(why, cap, "generate: %s", err.message);
        return false;
    }
    return true;
}

/* The spec as the kernels see it: NAME_spec, which the dispatcher's file
 * defines (the ISA files read it where they hand work to the runtime), in
 * the generator's own words for it, which every ABI lays out alike. With
 * kernels, also dt_spec and dt_table, their dt_kernels for dt_runner. */
static bool write_spec_file(const qg_spec *sp, qg_isa isa, bool kernels, const char *path) {
    qg_text t = {0};
    qg_text_printf(&t, "#include \"%s.h\"\n#include \"dt_check.h\"\n", sp->name);
    qg_emit_spec_literal(sp, &t);
    if (kernels) {
        static const char *const ops[][2] = {
            {"quantize", "dt_quantize_fn"},     {"dequantize", "dt_dequantize_fn"},
            {"fake_quant", "dt_fake_quant_fn"}, {"fake_quant_backward", "dt_backward_fn"},
            {"observe", "dt_observe_fn"},       {"requantize", "dt_requantize_fn"}};
        qg_text_printf(&t, "const qg_spec *const dt_spec = &%s_spec;\nconst dt_kernels dt_table = {\n", sp->name);
        for (size_t i = 0; i < 6; i++)
            qg_text_printf(&t, "    (%s)%s_%s__%s,\n", ops[i][1], sp->name, ops[i][0], qg_isa_name(isa));
        qg_text_puts(&t, "};\n");
    }
    const bool ok = qg_text_ok(&t) && qg_cmp_write_file(path, t.p, t.len);
    qg_text_free(&t);
    return ok;
}

/* ---- in this process ----------------------------------------------------- */

static qg_jit *jits[QG_ISA_COUNT];

static bool load_jit(const qg_spec *sp, qg_isa isa, dt_loaded *out, char *why, size_t cap) {
    qg_error err;
    if (!jits[isa]) {
        const qg_jit_options opt = {(int)isa, NULL, true, true, false};
        if (qg_jit_create(&opt, &jits[isa], &err) != QG_OK) {
            snprintf(why, cap, "jit: %s", err.message);
            return false;
        }
    }
    const qg_kernels *k;
    if (qg_jit_compile(jits[isa], sp, 0, &k, &err) != QG_OK) {
        snprintf(why, cap, "jit: %s", err.message);
        return false;
    }
    out->k = (dt_kernels){(dt_quantize_fn)k->quantize,     (dt_dequantize_fn)k->dequantize,
                          (dt_fake_quant_fn)k->fake_quant, (dt_backward_fn)k->fake_quant_backward,
                          (dt_observe_fn)k->observe,       (dt_requantize_fn)k->requantize};
    return true;
}

/* NAME_<op>__<isa> of a loaded object. */
static void *symbol(void *dl, const qg_spec *sp, const char *op, qg_isa isa, bool *ok) {
    char name[160];
    void *p = dlsym(dl, pathf(name, sizeof name, "%s_%s__%s", sp->name, op, qg_isa_name(isa)));
    *ok = *ok && p != NULL;
    return p;
}

bool dt_load(const dt_config *cfg, const qg_spec *sp, dt_backend b, qg_isa isa, dt_loaded *out, char *why, size_t cap) {
    *out = (dt_loaded){0};
    if (b == DT_JIT)
        return load_jit(sp, isa, out, why, cap);
    char dir[PATH], src[PATH + 64], so[PATH + 64];
    pathf(dir, sizeof dir, "%s/%s/%s-%s", cfg->work, sp->name, dt_backend_name(b), qg_isa_name(isa));
    if (!generate(sp, isa, b == DT_C ? QG_EMIT_C : QG_EMIT_OBJ, dir, why, cap))
        return false;
    pathf(src, sizeof src, "%s/%s_%s.%s", dir, sp->name, qg_isa_name(isa), b == DT_C ? "c" : "o");
    pathf(so, sizeof so, "%s/kernels.so", dir);
    char inc[PATH + 2], gen_inc[PATH + 2], dt_inc[PATH + 2], spec_c[PATH + 32];
    if (!write_spec_file(sp, isa, false, pathf(spec_c, sizeof spec_c, "%s/spec.c", dir))) {
        snprintf(why, cap, "cannot write %s", spec_c);
        return false;
    }
    pathf(inc, sizeof inc, "-I%s", DT_INCLUDE_DIR);
    pathf(gen_inc, sizeof gen_inc, "-I%s", dir);
    pathf(dt_inc, sizeof dt_inc, "-I%s", DT_SOURCE_DIR);
    /* the runtime the kernels call (observers, channel tables) from its shared library */
    char *argv[] = {DT_CC,        (char *)cfg->opt,        "-fPIC", "-shared", inc, gen_inc, dt_inc, src, spec_c,
                    DT_RT_SHARED, "-Wl,-rpath," DT_RT_DIR, "-o",    so,        NULL};
    if (!run(argv, why, cap))
        return false;
    out->dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!out->dl) {
        snprintf(why, cap, "dlopen: %s", dlerror());
        return false;
    }
    bool ok = true;
    out->k = (dt_kernels){(dt_quantize_fn)symbol(out->dl, sp, "quantize", isa, &ok),
                          (dt_dequantize_fn)symbol(out->dl, sp, "dequantize", isa, &ok),
                          (dt_fake_quant_fn)symbol(out->dl, sp, "fake_quant", isa, &ok),
                          (dt_backward_fn)symbol(out->dl, sp, "fake_quant_backward", isa, &ok),
                          (dt_observe_fn)symbol(out->dl, sp, "observe", isa, &ok),
                          (dt_requantize_fn)symbol(out->dl, sp, "requantize", isa, &ok)};
    if (!ok) {
        snprintf(why, cap, "%s: a kernel symbol is missing", so);
        dt_unload(out);
    }
    return ok;
}

void dt_unload(dt_loaded *l) {
    if (l->dl)
        dlclose(l->dl);
    l->dl = NULL;
}

static void remove_tree(const char *dir) {
    char *argv[] = {"rm", "-rf", (char *)dir, NULL}, why[256];
    run(argv, why, sizeof why);
}

void dt_clean(const dt_config *cfg, const qg_spec *sp) {
    char dir[PATH];
    if (!cfg->keep)
        remove_tree(pathf(dir, sizeof dir, "%s/%s", cfg->work, sp->name));
}

/* ---- under qemu ------------------------------------------------------------ */

/* The cross build of the kernel tests for isa's architecture. */
static const char *cross_dir(const dt_config *cfg, qg_isa isa, char *buf, size_t cap) {
    const qg_arch *a = qg_arch_of(isa);
    return cfg->cross && a ? pathf(buf, cap, "%s/%s", cfg->cross, a->name) : NULL;
}

bool dt_foreign_available(const dt_config *cfg, qg_isa isa) {
    char d[PATH], lib[PATH + 32];
    struct stat st;
    return cross_dir(cfg, isa, d, sizeof d) && stat(pathf(lib, sizeof lib, "%s/libdt_runner.a", d), &st) == 0;
}

static bool build_runner(const dt_config *cfg, const qg_spec *sp, qg_isa isa, const char *exe, char *why, size_t cap) {
    struct stat st;
    if (stat(exe, &st) == 0)
        return true;
    const qg_arch *a = qg_arch_of(isa);
    char dir[PATH], cross[PATH], table[PATH + 32], src[PATH + 64], target[96], inc[PATH + 2], gen_inc[PATH + 2],
        dt_inc[PATH + 2], runner[PATH + 32], rt[PATH + 32];
    pathf(dir, sizeof dir, "%s/%s/qemu-%s", cfg->work, sp->name, qg_isa_name(isa));
    if (!generate(sp, isa, QG_EMIT_C, dir, why, cap))
        return false;
    if (!write_spec_file(sp, isa, true, pathf(table, sizeof table, "%s/table.c", dir))) {
        snprintf(why, cap, "cannot write %s", table);
        return false;
    }
    cross_dir(cfg, isa, cross, sizeof cross);
    char *argv[24];
    int n = 0;
    argv[n++] = DT_CC;
    argv[n++] = pathf(target, sizeof target, "--target=%s", a->triple);
    argv[n++] = "-fuse-ld=lld";
    argv[n++] = (char *)cfg->opt;
    char base[128];
    snprintf(base, sizeof base, "%s", a->baseline_cflags);
    if (base[0])
        argv[n++] = base; /* one word, as the table gives it */
    argv[n++] = pathf(inc, sizeof inc, "-I%s", DT_INCLUDE_DIR);
    argv[n++] = pathf(gen_inc, sizeof gen_inc, "-I%s", dir);
    argv[n++] = pathf(dt_inc, sizeof dt_inc, "-I%s", DT_SOURCE_DIR);
    argv[n++] = pathf(src, sizeof src, "%s/%s_%s.c", dir, sp->name, qg_isa_name(isa));
    argv[n++] = table;
    argv[n++] = pathf(runner, sizeof runner, "%s/libdt_runner.a", cross);
    argv[n++] = pathf(rt, sizeof rt, "%s/libkt_rt.a", cross);
    argv[n++] = "-lm";
    argv[n++] = "-lpthread";
    char link[256];
    snprintf(link, sizeof link, "%s", a->link_flags);
    if (link[0])
        argv[n++] = link; /* one word, as the table gives it */
    argv[n++] = "-o";
    argv[n++] = (char *)exe;
    argv[n] = NULL;
    return run(argv, why, cap);
}

/* Reads the runner's report lines into t. */
static bool read_report(const char *text, dt_tally *t) {
    const char *p = strstr(text, "dt: cases ");
    unsigned long long cases, values, mism;
    if (!p || sscanf(p, "dt: cases %llu values %llu mismatches %llu", &cases, &values, &mism) != 3)
        return false;
    t->cases += cases;
    t->values += values;
    if (mism && t->mismatches == 0) {
        const char *q = strstr(p, "dt: first ");
        int op;
        unsigned long long seed;
        int used = 0;
        if (!q || sscanf(q, "dt: first %d %zu %zu %llu %zu %n", &op, &t->first.c.n, &t->first.c.inner, &seed,
                         &t->first.index, &used) < 5)
            return false;
        t->first.c.op = (dt_op)op;
        t->first.c.seed = seed;
        snprintf(t->first.what, sizeof t->first.what, "%.*s", (int)strcspn(q + used, "\n"), q + used);
    }
    t->mismatches += mism;
    return true;
}

bool dt_foreign_run(const dt_config *cfg, const qg_spec *sp, qg_isa isa, int vl_bits, uint64_t seed, size_t step,
                    const dt_case *only, dt_tally *t, char *why, size_t cap) {
    const qg_arch *a = qg_arch_of(isa);
    char exe[PATH + 32], args[5][32];
    pathf(exe, sizeof exe, "%s/%s/qemu-%s/dt_runner", cfg->work, sp->name, qg_isa_name(isa));
    if (!build_runner(cfg, sp, isa, exe, why, cap))
        return false;
    char dir[PATH];
    qg_cmp_runner runner;
    if (!qg_cmp_runner_init(&runner, a, isa, vl_bits, pathf(dir, sizeof dir, "%s/%s", cfg->work, sp->name), why, cap))
        return false;
    char *argv[16];
    int n = 0;
    for (int k = 0; k < runner.n; k++)
        argv[n++] = runner.argv[k];
    argv[n++] = exe;
    if (only) {
        argv[n++] = "--case";
        argv[n++] = pathf(args[0], sizeof args[0], "%d", (int)only->op);
        argv[n++] = pathf(args[1], sizeof args[1], "%zu", only->n);
        argv[n++] = pathf(args[2], sizeof args[2], "%zu", only->inner);
        argv[n++] = pathf(args[3], sizeof args[3], "%llu", (unsigned long long)only->seed);
    } else {
        argv[n++] = pathf(args[0], sizeof args[0], "%llu", (unsigned long long)seed);
        argv[n++] = pathf(args[1], sizeof args[1], "%zu", step);
    }
    argv[n] = NULL;
    char *text = NULL;
    const int rc = qg_cmp_run(argv, &text);
    const bool ok = (rc == 0 || rc == 1) && text && read_report(text, t);
    if (!ok)
        snprintf(why, cap, "%s exited %d: %.600s", runner.name, rc, text ? text : "");
    free(text);
    return ok;
}
