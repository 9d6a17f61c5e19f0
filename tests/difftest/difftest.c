/* qgen-difftest: random valid specs through every backend, bit for bit
 * against the runtime's reference (docs/testing.md, "The differential
 * tester").
 *
 *   qgen-difftest [--seed S] [--first I] [--specs N | --seconds T] [--qemu K]
 *                 [--cross DIR] [--work DIR] [--keep] [--opt -O1|-O2|...]
 *   qgen-difftest --spec JSON --backend jit|c|llvm --isa ISA [--vl BITS]
 *                 [--case OP:N:INNER:SEED]            (a reproduction)
 *
 * Spec i is drawn from (S, i); each goes through the JIT, the LLVM
 * backend's object and the C backend's file, each at an ISA of this CPU
 * drawn from the spec's seed; K of them (the first that a foreign ISA can
 * serve) also through the C of a foreign ISA under qemu, or node for wasm
 * (with --cross: the kernel-test builds). A mismatch prints
 * the case shrunk to its shortest length and the spec to its fewest
 * fields, as a command line that reproduces it. Deterministic: the same
 * arguments draw the same specs, cases and data. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dt_backends.h"
#include "dt_draw.h"
#include "dt_rng.h"
#include "plan/kernel_plan.h"     /* qg_plan_check_isa */
#include "targets/target_table.h" /* lanes, widths, architectures */

typedef struct options {
    uint64_t seed;
    size_t first, specs, qemu;
    double seconds;
    dt_config cfg;
    const char *spec_json, *backend, *isa, *case_text;
    int vl;
} options;

/* One backend-and-ISA's totals. */
typedef struct target_total {
    char name[64];
    unsigned long long specs, cases, values;
} target_total;

static struct totals {
    unsigned long long specs, rejected, cases, values, mismatches, failures, built_only, foreign;
    target_total t[32];
    size_t n;
} tot;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void count(const char *name, const dt_tally *t) {
    target_total *e = NULL;
    for (size_t i = 0; i < tot.n && !e; i++)
        if (strcmp(tot.t[i].name, name) == 0)
            e = &tot.t[i];
    if (!e && tot.n < sizeof tot.t / sizeof tot.t[0]) {
        e = &tot.t[tot.n++];
        snprintf(e->name, sizeof e->name, "%s", name);
    }
    if (e) {
        e->specs++;
        e->cases += t->cases;
        e->values += t->values;
    }
    tot.cases += t->cases;
    tot.values += t->values;
}

/* Elements of one main-loop iteration of isa at vl bits (length classes
 * around it are where tails and strips change). */
static size_t isa_step(qg_isa isa, int vl) {
    const qg_target *t = qg_target_of(isa);
    if (t->lanes)
        return (size_t)(t->lanes * t->unroll);
    static const char *const ops[] = {"quantize", "dequantize", "fake_quant", "fake_quant_backward",
                                      "observe",  "requantize"};
    int group = 1;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (qg_target_lmul(t, ops[i]) > group)
            group = qg_target_lmul(t, ops[i]);
    return (size_t)(vl / 32 * group * t->unroll);
}

static bool runs_here(qg_isa isa) {
    const qg_arch *a = qg_arch_of(isa);
    return isa == QG_ISA_SCALAR || (a && strcmp(a->name, qg_host_arch()) == 0);
}

static bool serves(const qg_spec *sp, qg_isa isa) {
    qg_error err;
    return qg_plan_check_isa(sp, isa, &err) == QG_OK;
}

/* ---- one spec on one backend and ISA ---------------------------------------- */

typedef struct where {
    dt_backend b;
    qg_isa isa;
    int vl; /* scalable ISAs under qemu */
} where;

static void where_name(const where *w, char *buf, size_t cap) {
    if (w->vl)
        snprintf(buf, cap, "%s.%s.vl%d", dt_backend_name(w->b), qg_isa_name(w->isa), w->vl);
    else
        snprintf(buf, cap, "%s.%s", dt_backend_name(w->b), qg_isa_name(w->isa));
}

/* Runs every case of seed (or only `one`) on the spec's kernels at w.
 * Returns false when the kernels could not be made (why says so). */
static bool run_at(const dt_config *cfg, const qg_spec *sp, const where *w, uint64_t seed, const dt_case *one,
                   dt_tally *t, char *why, size_t cap) {
    if (!runs_here(w->isa))
        return dt_foreign_run(cfg, sp, w->isa, w->vl, seed, isa_step(w->isa, w->vl), one, t, why, cap);
    dt_loaded l;
    if (!dt_load(cfg, sp, w->b, w->isa, &l, why, cap))
        return false;
    if (one) {
        dt_case c = *one;
        if (dt_run_case(sp, &l.k, &c, t)) { /* shortest failing length */
            c = dt_shrink_length(sp, &l.k, c);
            *t = (dt_tally){0};
            dt_run_case(sp, &l.k, &c, t);
        }
    } else {
        dt_run_seed(sp, &l.k, seed, isa_step(w->isa, w->vl), t);
    }
    dt_unload(&l);
    return true;
}

/* Whether the spec of fields f still fails case c at w. */
static bool still_fails(const dt_config *cfg, const dt_fields *f, const where *w, const dt_case *c, dt_tally *t) {
    char json[DT_JSON_MAX], why[1024];
    dt_fields_json(f, json, sizeof json);
    qg_spec sp;
    qg_error err;
    if (qg_spec_load_string(json, "<shrunk>", NULL, 0, &sp, &err) != QG_OK || !serves(&sp, w->isa))
        return false;
    *t = (dt_tally){0};
    const bool ran = run_at(cfg, &sp, w, 0, c, t, why, sizeof why);
    dt_clean(cfg, &sp);
    return ran && t->mismatches > 0;
}

/* The smallest case and fewest fields that still fail; prints the
 * reproduction. */
static void shrink_and_report(const options *o, dt_fields f, const where *w, const dt_tally *found) {
    char wn[64], json[DT_JSON_MAX];
    where_name(w, wn, sizeof wn);
    dt_case c = found->first.c;
    dt_tally t = *found;
    if (still_fails(&o->cfg, &f, w, &c, &t)) {
        c = t.first.c;                 /* at its shortest length */
        for (size_t i = 1; i < f.n;) { /* field 0 is the name */
            dt_fields fewer = f;
            dt_fields_drop(&fewer, i);
            dt_tally ft;
            if (still_fails(&o->cfg, &fewer, w, &c, &ft)) {
                f = fewer;
                t = ft;
                c = ft.first.c;
            } else {
                i++;
            }
        }
    }
    dt_fields_json(&f, json, sizeof json);
    printf("MISMATCH %s: %s, length %zu, inner %zu: %s differs first at element %zu\n", wn, dt_op_name(c.op), c.n,
           c.inner, t.first.what, t.first.index);
    printf("  reproduce: qgen-difftest --spec '%s' --backend %s --isa %s%s%.0d --case %s:%zu:%zu:%llu\n", json,
           dt_backend_name(w->b), qg_isa_name(w->isa), w->vl ? " --vl " : "", w->vl, dt_op_name(c.op), c.n, c.inner,
           (unsigned long long)c.seed);
}

static void one_target(const options *o, const dt_fields *f, const qg_spec *sp, const where *w, uint64_t seed) {
    char wn[64], why[1024];
    where_name(w, wn, sizeof wn);
    dt_tally t = {0};
    if (!run_at(&o->cfg, sp, w, seed, NULL, &t, why, sizeof why)) {
        char json[DT_JSON_MAX];
        dt_fields_json(f, json, sizeof json);
        printf("FAILED %s: %s\n  spec: %s\n", wn, why, json);
        tot.failures++;
        return;
    }
    count(wn, &t);
    if (t.mismatches) {
        tot.mismatches += t.mismatches;
        shrink_and_report(o, *f, w, &t);
    }
}

/* ---- the run ------------------------------------------------------------------ */

static qg_isa draw_native(dt_rng *r, const qg_spec *sp) {
    qg_isa can[QG_ISA_COUNT];
    size_t n = 0;
    for (int i = 0; i < QG_ISA_COUNT; i++)
        if (runs_here((qg_isa)i) && qg_cpu_has((qg_isa)i) && serves(sp, (qg_isa)i))
            can[n++] = (qg_isa)i;
    /* vector ISAs three times as often as scalar */
    const size_t k = dt_below(r, 3 * n - 2);
    return n == 1 || k == 0 ? can[0] : can[1 + (k - 1) % (n - 1)];
}

/* A foreign vector ISA the spec can take, and a width to run it at. */
static bool draw_foreign(const options *o, dt_rng *r, const qg_spec *sp, where *w) {
    qg_isa can[QG_ISA_COUNT];
    size_t n = 0;
    for (int i = 1; i < QG_ISA_COUNT; i++)
        if (!runs_here((qg_isa)i) && serves(sp, (qg_isa)i) && dt_foreign_available(&o->cfg, (qg_isa)i))
            can[n++] = (qg_isa)i;
    if (!n)
        return false;
    *w = (where){DT_C, can[dt_below(r, n)], 0};
    const char *widths = qg_target_of(w->isa)->test_widths;
    if (widths[0]) {
        int list[16], k = 0;
        for (const char *p = widths; *p && k < 16; p += strcspn(p, ","), p += *p == ',')
            list[k++] = atoi(p);
        w->vl = list[dt_below(r, (size_t)k)];
    }
    return true;
}

/* ISAs this CPU lacks get their files generated and compiled, not run. */
static void build_only(const options *o, const qg_spec *sp, qg_isa isa) {
    char why[1024];
    for (int b = DT_C; b <= DT_LLVM; b++) {
        dt_loaded l;
        if (dt_load(&o->cfg, sp, (dt_backend)b, isa, &l, why, sizeof why)) {
            dt_unload(&l);
            tot.built_only++;
        } else {
            printf("FAILED %s.%s (build only): %s\n", dt_backend_name((dt_backend)b), qg_isa_name(isa), why);
            tot.failures++;
        }
    }
}

static void run_spec(const options *o, size_t i) {
    dt_rng r = {o->seed * 0x100000001B3ull + i};
    char name[32];
    snprintf(name, sizeof name, "dt%zu", i);
    dt_fields f;
    qg_spec sp;
    unsigned rejected = 0;
    const bool drawn = dt_draw_spec(dt_next(&r), name, &f, &sp, &rejected);
    tot.rejected += rejected;
    if (!drawn) {
        printf("FAILED spec %zu: no valid draw in 200\n", i);
        tot.failures++;
        return;
    }
    if (!serves(&sp, QG_ISA_SCALAR)) { /* every drawn spec has scalar kernels at least */
        printf("FAILED spec %zu: no ISA serves it\n", i);
        tot.failures++;
        return;
    }
    tot.specs++;
    dt_cover_spec(&sp);
    const uint64_t case_seed = dt_next(&r);
    for (int b = 0; b < DT_BACKEND_COUNT; b++) {
        const where w = {(dt_backend)b, draw_native(&r, &sp), 0};
        dt_cover_note("isa", qg_isa_name(w.isa));
        one_target(o, &f, &sp, &w, case_seed);
    }
    for (int isa = 1; isa < QG_ISA_COUNT && i % 4 == 0; isa++)
        if (runs_here((qg_isa)isa) && !qg_cpu_has((qg_isa)isa) && serves(&sp, (qg_isa)isa))
            build_only(o, &sp, (qg_isa)isa);
    where w;
    if (tot.foreign < o->qemu && draw_foreign(o, &r, &sp, &w)) { /* specs no foreign ISA serves pass it on */
        tot.foreign++;
        char wn[64];
        where_name(&w, wn, sizeof wn);
        dt_cover_note("isa", wn + strlen("c."));
        one_target(o, &f, &sp, &w, case_seed);
    }
    dt_clean(&o->cfg, &sp);
}

static int reproduce(const options *o) {
    qg_spec sp;
    qg_error err;
    if (qg_spec_load_string(o->spec_json, "--spec", NULL, 0, &sp, &err) != QG_OK) {
        fprintf(stderr, "qgen-difftest: %s\n", err.message);
        return 2;
    }
    where w = {DT_JIT, QG_ISA_SCALAR, o->vl};
    bool known_b = false, known_isa = false;
    for (int b = 0; b < DT_BACKEND_COUNT; b++)
        if (o->backend && strcmp(o->backend, dt_backend_name((dt_backend)b)) == 0)
            w.b = (dt_backend)b, known_b = true;
    for (int i = 0; i < QG_ISA_COUNT; i++)
        if (o->isa && strcmp(o->isa, qg_isa_name((qg_isa)i)) == 0)
            w.isa = (qg_isa)i, known_isa = true;
    if (!known_b || !known_isa) {
        fprintf(stderr, "qgen-difftest: --backend %s --isa %s: expected jit, c or llvm and an ISA name\n",
                o->backend ? o->backend : "(none)", o->isa ? o->isa : "(none)");
        return 2;
    }
    dt_case c = {0}, *one = NULL;
    if (o->case_text) {
        char op[32];
        unsigned long long seed;
        if (sscanf(o->case_text, "%31[a-z_]:%zu:%zu:%llu", op, &c.n, &c.inner, &seed) != 4) {
            fprintf(stderr, "qgen-difftest: --case %s: expected OP:N:INNER:SEED\n", o->case_text);
            return 2;
        }
        c.seed = seed;
        c.op = DT_OP_COUNT;
        for (int k = 0; k < DT_OP_COUNT; k++)
            if (strcmp(op, dt_op_name((dt_op)k)) == 0)
                c.op = (dt_op)k;
        one = &c;
    }
    dt_tally t = {0};
    char why[1024];
    if (!run_at(&o->cfg, &sp, &w, o->seed, one, &t, why, sizeof why)) {
        printf("FAILED: %s\n", why);
        return 1;
    }
    printf("%llu cases, %llu values compared, %llu mismatches\n", (unsigned long long)t.cases,
           (unsigned long long)t.values, (unsigned long long)t.mismatches);
    if (t.mismatches)
        printf("first: %s, length %zu, inner %zu: %s at element %zu\n", dt_op_name(t.first.c.op), t.first.c.n,
               t.first.c.inner, t.first.what, t.first.index);
    dt_clean(&o->cfg, &sp);
    return t.mismatches ? 1 : 0;
}

static int usage(void) {
    fprintf(stderr, "usage: qgen-difftest [--seed S] [--first I] [--specs N | --seconds T] [--qemu K] [--cross DIR]\n"
                    "                     [--work DIR] [--keep] [--opt -O1|-O2|...]\n"
                    "       qgen-difftest --spec JSON --backend jit|c|llvm --isa ISA [--vl BITS] "
                    "[--case OP:N:INNER:SEED]\n");
    return 2;
}

int main(int argc, char **argv) {
    options o = {.seed = 1, .specs = 100, .qemu = 0, .cfg = {.work = "difftest-work", .opt = "-O2"}};
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a], *val = a + 1 < argc ? argv[a + 1] : NULL;
        if (strcmp(arg, "--keep") == 0) {
            o.cfg.keep = true;
            continue;
        }
        if (!val)
            return usage();
        a++;
        if (strcmp(arg, "--seed") == 0)
            o.seed = strtoull(val, NULL, 0);
        else if (strcmp(arg, "--first") == 0)
            o.first = strtoul(val, NULL, 0);
        else if (strcmp(arg, "--specs") == 0)
            o.specs = strtoul(val, NULL, 0);
        else if (strcmp(arg, "--seconds") == 0)
            o.seconds = atof(val), o.specs = (size_t)-1 / 2;
        else if (strcmp(arg, "--qemu") == 0)
            o.qemu = strtoul(val, NULL, 0);
        else if (strcmp(arg, "--cross") == 0)
            o.cfg.cross = val;
        else if (strcmp(arg, "--work") == 0)
            o.cfg.work = val;
        else if (strcmp(arg, "--opt") == 0 && val[0] == '-' && val[1] == 'O')
            o.cfg.opt = val;
        else if (strcmp(arg, "--spec") == 0)
            o.spec_json = val;
        else if (strcmp(arg, "--backend") == 0)
            o.backend = val;
        else if (strcmp(arg, "--isa") == 0)
            o.isa = val;
        else if (strcmp(arg, "--vl") == 0)
            o.vl = atoi(val);
        else if (strcmp(arg, "--case") == 0)
            o.case_text = val;
        else
            return usage();
    }
    if (o.spec_json)
        return reproduce(&o);
    const double start = now();
    size_t i = o.first;
    for (; i < o.first + o.specs; i++) {
        if (o.seconds > 0 && now() - start > o.seconds)
            break;
        run_spec(&o, i);
        fflush(stdout);
    }
    printf("\nqgen-difftest --seed %llu --first %zu: %llu specs (%llu draws refused), %.1f s\n",
           (unsigned long long)o.seed, o.first, tot.specs, tot.rejected, now() - start);
    for (size_t k = 0; k < tot.n; k++)
        printf("  %-22s %4llu specs %7llu cases %11llu values\n", tot.t[k].name, tot.t[k].specs, tot.t[k].cases,
               tot.t[k].values);
    printf(
        "  %llu specs also under qemu or node; %llu builds of ISAs this CPU lacks (generated and compiled, not run)\n",
        tot.foreign, tot.built_only);
    printf("coverage:\n");
    dt_cover_print();
    if (o.cfg.cross && tot.foreign < o.qemu) { /* asked for, not done: a failure, never a quiet pass */
        printf("FAILED: %llu of the %zu specs asked for ran under qemu (no runner in %s/<arch>, or no spec a foreign "
               "ISA serves)\n",
               tot.foreign, o.qemu, o.cfg.cross);
        tot.failures++;
    }
    printf("%llu cases, %llu values compared: %llu mismatches, %llu failures\n", tot.cases, tot.values, tot.mismatches,
           tot.failures);
    return tot.mismatches || tot.failures ? 1 : 0;
}
