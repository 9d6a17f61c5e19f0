/* qgen compare: builds a spec's kernels with both backends for every ISA
 * asked for, in a scratch directory, and fills one row per op, ISA and
 * backend (see compare.h). Outside programs: clang-19 (compiles the C
 * backend's files, the runtime for each architecture and the test driver),
 * llvm-mca-19, qemu-aarch64 and qemu-riscv64; each one missing is reported
 * in the output, never fatal. */
#define _POSIX_C_SOURCE 200809L
#include "compare_internal.h"

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
#include "../plan/kernel_loops.h"
#include "../targets/target_table.h"
#include "../validate/validate_c.h"
#include "compare_driver_src.h"
#include "qgen/generate.h"
#include "qgen/runtime.h"

const char *qg_backend_name(int backend) { return backend == QG_BACKEND_LLVM ? "llvm" : "c"; }

arch_t qg_cmp_arches[MAX_ARCHS];
size_t qg_cmp_n_arches;

static void add_arch(const qg_arch *d) {
    arch_t *a = &qg_cmp_arches[qg_cmp_n_arches++];
    *a = (arch_t){.arch = d->name, .triple = d->triple, .desc = d};
    for (qg_isa isa = QG_ISA_SCALAR + 1; isa < QG_ISA_COUNT; isa++)
        if (qg_arch_of(isa) == d)
            a->vector_isas[a->n_vector++] = isa;
}

static void init_arches(void) {
    if (qg_cmp_n_arches)
        return;
    const qg_arch *host = qg_arch_named(qg_host_arch());
    if (host)
        add_arch(host);
    for (size_t i = 0; qg_arch_at(i) && qg_cmp_n_arches < MAX_ARCHS; i++)
        if (qg_arch_at(i) != host)
            add_arch(qg_arch_at(i));
}

const arch_t *qg_cmp_arch_of(qg_isa isa) {
    if (isa == QG_ISA_SCALAR)
        return &qg_cmp_arches[0]; /* the scalar rows describe this machine's architecture */
    for (size_t a = 0; a < qg_cmp_n_arches; a++)
        for (int k = 0; k < qg_cmp_arches[a].n_vector; k++)
            if (qg_cmp_arches[a].vector_isas[k] == isa)
                return &qg_cmp_arches[a];
    return NULL;
}

/* The width a scalable ISA is run and modelled at (0 for fixed widths). */
int qg_cmp_compare_bits(qg_isa isa) { return qg_target_of(isa)->compare_bits; }

void qg_cmp_note(ctx *c, const char *fmt, ...) {
    if (c->rep->nnotes >= 8)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->rep->notes[c->rep->nnotes++], sizeof c->rep->notes[0], fmt, ap);
    va_end(ap);
}

const char *qg_cmp_pathf(ctx *c, char *buf, size_t cap, const char *fmt, ...) {
    int n = snprintf(buf, cap, "%s/", c->work);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, cap - (size_t)n, fmt, ap);
    va_end(ap);
    return buf;
}

/* ---- static analysis -------------------------------------------------- */

/* The llvm-mca models of an ISA: --mca-cpu's, else its target's. */
static bool file_exists(const char *p) { return access(p, R_OK) == 0; }

static int mca_models(const qg_compare_options *opt, qg_isa isa, const char *models[2], char storage[2][32]) {
    const char *list =
        opt->mca_cpus[isa] ? opt->mca_cpus[isa] : qg_llvm_target_of(isa, qg_cmp_arch_of(isa)->arch)->mca_cpus;
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

/* llvm-mca's cycles for the row's main loop on each of the ISA's models
 * (and the loads and stores it counts). */
static void estimate(ctx *c, const arch_t *a, const qg_loop *loop, qg_compare_row *row) {
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
        qg_loop_mca(c->mca, c->work, loop, t->triple, models[m], t->features, a->arch,
                    qg_target_lmul(qg_target_of(row->isa), qg_kernel_op_name(row->op)), &row->mca[m], &loads, &stores);
        if (row->mca[m].ok) {
            row->mca[m].cycles_per_element = row->mca[m].cycles_per_iteration / row->elements_per_iteration;
            if (loads >= 0 && row->mix[QG_MIX_LOADS] < 0) {
                row->mix[QG_MIX_LOADS] = loads;
                row->mix[QG_MIX_STORES] = stores;
            }
        }
    }
}

/* The channel count of a row that runs the channels-last rows function
 * (per-channel specs but per-group ones, plan-served ops with parameters);
 * 0 for any other. */
static size_t rows_channels(const qg_spec *sp, const qg_compare_row *row) {
    if (row->op == QG_K_OBSERVE || row->op == QG_K_REQUANTIZE || qg_plan_by_reference(sp, row->op))
        return 0;
    qg_kernel_loops lp;
    qg_kernel_loops_of(sp, row->isa, row->op, &lp);
    const bool rows = lp.channels_last_table && !lp.group_driver && lp.params != QG_PARAMS_NONE;
    return rows ? lp.channels : 0;
}

static void analyse(ctx *c, qg_compare_row *row) {
    const arch_t *a = qg_cmp_arch_of(row->isa);
    const char *name = c->sp->name, *isa = qg_isa_name(row->isa), *op = qg_kernel_op_name(row->op);
    char asm_path[2 * PATH_MAX], obj[2 * PATH_MAX], dir[PATH_MAX + 64];
    if (row->backend == QG_BACKEND_C) {
        qg_cmp_pathf(c, asm_path, sizeof asm_path, "c-%s-%s.s", a->arch, isa);
        qg_cmp_pathf(c, obj, sizeof obj, "c-%s-%s.o", a->arch, isa);
    } else {
        qg_cmp_gen_dir(c, QG_BACKEND_LLVM, a, dir, sizeof dir);
        snprintf(asm_path, sizeof asm_path, "%s/%s_%s.s", dir, name, isa);
        snprintf(obj, sizeof obj, "%s/%s_%s.o", dir, name, isa);
    }
    /* the entry and the helpers it may call (inlined or not) */
    enum { NF = 8 };
    char f[NF][QG_NAME_MAX + 64];
    snprintf(f[0], sizeof f[0], "%s_%s__%s", name, op, isa);
    /* per-group and 4-bit specs: the entry hands its blocks to the runtime's driver */
    snprintf(f[4], sizeof f[4], "%s_%s_blocks__%s", name, op, isa);
    /* 16-bit float types: the entry forwards to the runtime with this link */
    snprintf(f[3], sizeof f[3], "%s_%s_f32__%s", name, op, isa);
    if (row->op == QG_K_OBSERVE) {
        snprintf(f[1], sizeof f[1], "%s_minmax_span", name);
        snprintf(f[2], sizeof f[2], "%s_minmax_span__%s", name, isa);
    } else {
        snprintf(f[1], sizeof f[1], "%s_%s_span", name, op);
        snprintf(f[2], sizeof f[2], "%s_%s_body", name, op);
    }
    /* the span's loops where an alignment head wraps them (docs/c-backend.md) */
    snprintf(f[5], sizeof f[5], "%s_%s_span_run", name, op);
    /* a per-channel spec runs channels-last here (compare_driver.c): its
     * rows function (C: NAME_<op>_rows__<isa>, LLVM: NAME_<op>_rows) is
     * all the loop search reads */
    const size_t channels = rows_channels(c->sp, row);
    snprintf(f[6], sizeof f[6], "%s_%s_rows__%s", name, op, isa);
    snprintf(f[7], sizeof f[7], "%s_%s_rows", name, op);
    const char *fns[NF] = {f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]};
    row->code_bytes = qg_cmp_symbols_size(obj, fns, NF);
    const char *models[2];
    char storage[2][32];
    if (mca_models(c->opt, row->isa, models, storage) == 0) { /* wasm: no llvm-mca model, no loop grammar */
        snprintf(row->note, sizeof row->note, "n/a: no llvm-mca model for %s", qg_isa_name(row->isa));
        return;
    }
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
    qg_loop loop;
    if (channels)
        qg_loop_find(text, fns + 6, 2, a->arch, &loop);
    else
        qg_loop_find(text, fns, 6, a->arch, &loop);
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
    row->elements_per_iteration = qg_llvm_elements_per_iteration(row->isa, row->op, qg_cmp_compare_bits(row->isa));
    if (channels) {
        /* a whole row of C channels where the compiler unrolled its columns,
         * else one column: a vector (or strip) of them */
        const int vector = row->elements_per_iteration / qg_target_of(row->isa)->unroll;
        row->elements_per_iteration =
            loop.nests ? (int)(channels < (size_t)vector ? channels : (size_t)vector) : (int)channels;
    }
    estimate(c, a, &loop, row);
    qg_loop_free(&loop);
}

/* ---- the comparison ------------------------------------------------------ */

static qg_status setup(ctx *c, qg_error *err) {
    snprintf(c->work, sizeof c->work, "%s/qgen-compare-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(c->work))
        return qg_error_set(err, QG_ERR_IO, "compare: cannot make a scratch directory under %s",
                            getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    char p[PATH_MAX + 64];
    if (!qg_cmp_write_file(qg_cmp_pathf(c, p, sizeof p, "compare_driver.c"), qg_compare_driver_src,
                           sizeof qg_compare_driver_src - 1))
        return qg_error_set(err, QG_ERR_IO, "compare: cannot write %s", p);
    /* xxhash.h for the driver and the runtime, for any architecture */
    mkdir(qg_cmp_pathf(c, p, sizeof p, "xxhash"), 0755);
    char src[PATH_MAX], from[PATH_MAX + 32];
    qg_cmp_runtime_sources(src, sizeof src);
    snprintf(from, sizeof from, "%s/xxhash/xxhash.h", src);
    if (!file_exists(from))
        snprintf(from, sizeof from, "%s/xxhash.h", QGEN_XXHASH_INCLUDE_DIR);
    char *argv[] = {"cp", from, p, NULL}, *out = NULL;
    qg_cmp_pathf(c, p, sizeof p, "xxhash/xxhash.h");
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

/* The ISAs the spec can be generated for, among those asked; the others'
 * rows say why not. */
static void choose_isas(ctx *c, const qg_spec *spec, unsigned targets) {
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
}

/* What is compared: ops, ISAs and backends asked for (0 = all), and the
 * progress count. */
typedef struct selection {
    unsigned ops, targets, backends;
    unsigned total, done;
} selection;

static void progress(ctx *c, selection *sel, const char *what) {
    if (c->opt->progress)
        c->opt->progress(c->opt->progress_user, ++sel->done, sel->total, what);
}

/* One architecture's test programs, per backend and ISA (and, on the
 * host, the reference's). */
static void run_arch(ctx *c, size_t a, selection *sel, run_out *ref, run_out runs[][QG_ISA_COUNT], char *objects,
                     char *exe, size_t exe_cap) {
    const arch_t *ar = &qg_cmp_arches[a];
    char what[96];
    for (int b = 0; b < QG_BACKEND_COUNT; b++) {
        if (!(sel->backends & (1u << b)) && !(a == 0 && b == QG_BACKEND_C))
            continue;
        if (!qg_cmp_kernel_objects(c, b, ar, objects, 8 * PATH_MAX)) {
            qg_cmp_note(c, "the %s backend's kernels did not build for %s", qg_backend_name(b), ar->arch);
            continue;
        }
        if (a == 0 && b == QG_BACKEND_C) {
            if (qg_cmp_build_driver(c, b, ar, QG_ISA_SCALAR, true, objects, exe, exe_cap))
                qg_cmp_run_driver(c, ar, QG_ISA_SCALAR, exe, false, ref); /* its hashes only */
            else
                qg_cmp_note(c, "the reference driver did not build");
        }
        if (!(sel->backends & (1u << b)))
            continue;
        qg_isa list[QG_ISA_COUNT + 1] = {QG_ISA_SCALAR};
        memcpy(list + 1, ar->vector_isas, sizeof ar->vector_isas);
        for (int k = a == 0 ? 0 : 1; k <= ar->n_vector; k++) {
            qg_isa isa = list[k];
            if (!(c->isas & (1u << isa)) || !(sel->targets & (1u << isa)))
                continue;
            if (qg_cmp_build_driver(c, b, ar, isa, false, objects, exe, exe_cap))
                qg_cmp_run_driver(c, ar, isa, exe, true, &runs[b][isa]);
            else
                snprintf(runs[b][isa].why, sizeof runs[b][isa].why, "the test program did not build");
            snprintf(what, sizeof what, "ran %s %s", qg_isa_name(isa), qg_backend_name(b));
            progress(c, sel, what);
        }
    }
}

/* Builds and runs every test program: the reference first, natively. */
static void run_programs(ctx *c, selection *sel, run_out *ref, run_out runs[][QG_ISA_COUNT]) {
    char *objects = malloc(8 * PATH_MAX);
    char exe[PATH_MAX + 64];
    for (size_t a = 0; a < qg_cmp_n_arches && objects; a++) {
        const arch_t *ar = &qg_cmp_arches[a];
        bool wanted = a == 0;
        for (int k = 0; k < ar->n_vector; k++)
            wanted |= (c->isas & (1u << ar->vector_isas[k])) != 0;
        if (!wanted)
            continue;
        if (!qg_cmp_build_runtime(c, ar)) {
            qg_cmp_note(c, "the runtime did not build for %s (see %s/last-clang.txt with --keep)", ar->arch, c->work);
            continue;
        }
        run_arch(c, a, sel, ref, runs, objects, exe, sizeof exe);
    }
    free(objects);
}

/* One row: static analysis, then what the runs said. */
static void fill_row(ctx *c, selection *sel, qg_compare_row *row, const run_out *ref, run_out runs[][QG_ISA_COUNT]) {
    const int op = row->op, isa = row->isa, b = row->backend;
    row->code_bytes = -1;
    row->correct = row->agree = -1;
    if (!(c->isas & (1u << isa))) {
        snprintf(row->run, sizeof row->run, "not generated");
        snprintf(row->note, sizeof row->note, "%s", c->why_not[isa]);
        return;
    }
    analyse(c, row);
    char what[96];
    snprintf(what, sizeof what, "analysed %s %s %s", qg_kernel_op_name((qg_kernel_op)op), qg_isa_name((qg_isa)isa),
             qg_backend_name(b));
    progress(c, sel, what);
    const run_out *r = &runs[b][isa];
    snprintf(row->run, sizeof row->run, "%s", r->why[0] ? r->why : "not run");
    if (r->ran && ref->ran && r->hash[op][0] && ref->hash[op][0])
        row->correct = strcmp(r->hash[op], ref->hash[op]) == 0;
    if (r->timed && r->melem[op] > 0) {
        row->measured = true;
        row->measured_melem_per_s = r->melem[op];
    }
    const run_out *other = &runs[1 - b][isa];
    if (r->ran && other->ran && r->hash[op][0] && other->hash[op][0])
        row->agree = strcmp(r->hash[op], other->hash[op]) == 0;
}

qg_status qg_compare_run(const qg_spec *spec, const qg_compare_options *opt, qg_compare_report *rep, qg_error *err) {
    memset(rep, 0, sizeof *rep);
    qg_status st = qg_spec_validate(spec, err);
    if (st)
        return st;
    rep->spec = *spec;
    init_arches();
    rep->rvv_vlen = qg_cmp_compare_bits(QG_ISA_RVV);
    snprintf(rep->llvm_version, sizeof rep->llvm_version, "%s", qg_llvm_version());
    ctx cv = {.sp = &rep->spec, .opt = opt, .rep = rep}, *c = &cv;
    selection sel = {opt->ops ? opt->ops : (1u << QG_K_OP_COUNT) - 1,
                     opt->targets ? opt->targets : (1u << QG_ISA_COUNT) - 1, opt->backends ? opt->backends : 3u, 0, 0};
    qg_observer *probe = NULL;
    qg_error why;
    if ((sel.ops & (1u << QG_K_OBSERVE)) && qg_observer_create(spec, &probe, &why) != QG_OK) {
        /* the runtime's rule (per-group specs keep no observer state), not a second copy of it */
        sel.ops &= ~(1u << QG_K_OBSERVE);
        qg_cmp_note(c, "observe: not compared: %s", why.message);
    }
    if (probe)
        qg_observer_destroy(probe);
    choose_isas(c, spec, sel.targets);
    c->have_clang = qg_cmp_find_tool("QGEN_CLANG", "clang-19", c->clang, sizeof c->clang);
    c->have_mca = qg_cmp_find_tool("QGEN_LLVM_MCA", "llvm-mca-19", c->mca, sizeof c->mca);
    if (!c->have_clang)
        return qg_error_set(err, QG_ERR_INVALID,
                            "compare: clang-19 not found on PATH (or QGEN_CLANG); it builds the kernels and the "
                            "test driver; expected Debian's clang-19 package");
    if (!c->have_mca)
        qg_cmp_note(c, "llvm-mca-19 not found (PATH or QGEN_LLVM_MCA): no cycle estimates");
    if ((st = setup(c, err)))
        return st;
    if ((st = qg_cmp_generate(c, err))) {
        cleanup(c);
        return st;
    }
    rep->rows = calloc((size_t)QG_K_OP_COUNT * QG_ISA_COUNT * QG_BACKEND_COUNT, sizeof *rep->rows);
    if (!rep->rows) {
        cleanup(c);
        return qg_error_set(err, QG_ERR_NOMEM, "compare: out of memory");
    }
    /* progress: one step per test program run, one per row analysed */
    for (int isa = 0; isa < QG_ISA_COUNT; isa++)
        for (int b = 0; b < QG_BACKEND_COUNT; b++)
            if ((c->isas & sel.targets & (1u << isa)) && (sel.backends & (1u << b)))
                sel.total += 1 + (unsigned)__builtin_popcount(sel.ops);
    run_out ref = {0}, runs[QG_BACKEND_COUNT][QG_ISA_COUNT];
    memset(runs, 0, sizeof runs);
    run_programs(c, &sel, &ref, runs);
    qg_cmp_measure_ggml(c, sel.ops);
    for (int op = 0; op < QG_K_OP_COUNT; op++)
        for (int isa = 0; isa < QG_ISA_COUNT && (sel.ops & (1u << op)); isa++)
            for (int b = 0; b < QG_BACKEND_COUNT && (sel.targets & (1u << isa)); b++)
                if (sel.backends & (1u << b)) {
                    qg_compare_row *row = &rep->rows[rep->nrows++];
                    *row = (qg_compare_row){.op = (qg_kernel_op)op, .isa = (qg_isa)isa, .backend = b};
                    fill_row(c, &sel, row, &ref, runs);
                }
    if (!ref.ran)
        qg_cmp_note(c, "the reference did not run: %s", ref.why[0] ? ref.why : "not built");
    cleanup(c);
    return QG_OK;
}

void qg_compare_report_free(qg_compare_report *r) {
    free(r->rows);
    r->rows = NULL;
    r->nrows = 0;
}
