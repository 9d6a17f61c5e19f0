/* qgen compare: a spec's kernels side by side per op, ISA and backend -
 * code size, the main loop's instructions, llvm-mca's static estimate,
 * measured throughput where the ISA runs natively, and whether the kernels
 * are right (under qemu for foreign ISAs) and agree across backends. */
#ifndef QGEN_COMPARE_H
#define QGEN_COMPARE_H

#include <stdbool.h>
#include <stdio.h>

#include "../plan/kernel_plan.h"
#include "../targets/target_table.h"
#include "qgen/generate.h"

enum { QG_BACKEND_C, QG_BACKEND_LLVM, QG_BACKEND_COUNT };
const char *qg_backend_name(int backend);

typedef struct qg_compare_options {
    unsigned ops;                       /* bit set of 1u << qg_kernel_op; 0 = all */
    unsigned targets;                   /* bit set of 1u << qg_isa; 0 = all */
    unsigned backends;                  /* bit set of 1u << QG_BACKEND_*; 0 = both */
    bool keep;                          /* keep the work directory (its path goes to stderr) */
    const char *mca_cpus[QG_ISA_COUNT]; /* per ISA: "cpu" or "cpu1,cpu2" instead of the defaults; NULL = default */
    qg_progress_fn progress;            /* after each build-and-run and each row analysed; NULL = none */
    void *progress_user;
} qg_compare_options;

/* One llvm-mca model's estimate. */
typedef struct qg_mca_result {
    char cpu[32];
    bool ok;
    double cycles_per_iteration, cycles_per_element;
    char note[160]; /* why not, when !ok */
} qg_mca_result;

enum { QG_MIX_LOADS, QG_MIX_STORES, QG_MIX_ARITH, QG_MIX_CONVERT, QG_MIX_SHUFFLE, QG_MIX_OTHER, QG_MIX_COUNT };
const char *qg_mix_name(int k);

typedef struct qg_compare_row {
    qg_kernel_op op;
    qg_isa isa;
    int backend;
    long code_bytes; /* -1 unknown */
    bool loop_found; /* false: the kernel calls the runtime's reference */
    int loop_instructions;
    int mix[QG_MIX_COUNT];
    int elements_per_iteration;
    qg_mca_result mca[2];
    int n_mca;
    bool measured; /* measured_melem_per_s holds a native timing */
    double measured_melem_per_s;
    char run[96]; /* "native", "qemu-aarch64", or "not run: why" */
    int correct;  /* 1 / 0, -1 when not run */
    int agree;    /* with the other backend: 1 / 0, -1 unknown */
    char note[520];
} qg_compare_row;

/* A peer's kernel measured on the same machine and element count (ggml's
 * for a block format; compare_ggml.c). */
typedef struct qg_compare_peer {
    char name[64];
    qg_kernel_op op;
    double measured_melem_per_s;
} qg_compare_peer;

typedef struct qg_compare_report {
    qg_spec spec;
    qg_compare_row *rows;
    size_t nrows;
    qg_compare_peer peers[4];
    int npeers;
    char llvm_version[32];
    int rvv_vlen;       /* VLEN of the RVV figures */
    char notes[8][256]; /* tools missing and the like */
    int nnotes;
} qg_compare_report;

qg_status qg_compare_run(const qg_spec *spec, const qg_compare_options *opt, qg_compare_report *out, qg_error *err);
void qg_compare_report_free(qg_compare_report *r);

/* Writers. Everything but the measured timings is deterministic. */
void qg_compare_write_md(const qg_compare_report *r, FILE *f);
qg_status qg_compare_write_json(const qg_compare_report *r, FILE *f, qg_error *err);
void qg_compare_write_html(const qg_compare_report *r, FILE *f);

/* ---- internals shared by the compare sources ------------------------------ */

/* A program found on PATH (or through its QGEN_* environment override). */
bool qg_cmp_find_tool(const char *env, const char *name, char *out, size_t cap);

/* How a program built for an architecture runs on this machine: natively,
 * under qemu-user (its sysroot, and the ISA's CPU at vl_bits for a scalable
 * one; QGEN_QEMU_<ARCH> overrides the program), or for runner "node-wasi"
 * under node with qgen's WASI runner, written into work (QGEN_NODE
 * overrides node). argv holds the words before the program, NULL after. */
typedef struct qg_cmp_runner {
    char *argv[8];
    int n;
    const char *name; /* "native", the qemu program's name, "node" */
    char prog[1024], cpu[160], script[1024];
} qg_cmp_runner;
/* false, with why, where the architecture has no runner here or its
 * program is missing. */
bool qg_cmp_runner_init(qg_cmp_runner *r, const qg_arch *a, qg_isa isa, int vl_bits, const char *work, char *why,
                        size_t cap);

/* Writes len bytes to path; false on any failure. */
bool qg_cmp_write_file(const char *path, const void *bytes, size_t len);

/* Runs argv (NULL-terminated) with stdout and stderr captured into *text
 * (malloc'ed, NUL-terminated); returns the exit status, or -1. */
int qg_cmp_run(char *const argv[], char **text);

/* The main loop of `functions` (symbols of one object's assembly) and its
 * instruction mix; mca results for up to two CPU models. */
typedef struct qg_loop {
    bool found;
    char *text; /* the loop's instructions, one per line */
    int instructions;
    int work; /* its arithmetic, conversion and shuffle instructions */
    int mix[QG_MIX_COUNT];
    /* a loop with work lies inside another in the function searched: the
     * compiler kept a channels-last row's column loop (the loop found is a
     * column, not a whole row) */
    bool nests;
} qg_loop;
void qg_loop_find(const char *asm_text, const char *const *functions, size_t nfunctions, const char *arch,
                  qg_loop *loop);
void qg_loop_free(qg_loop *loop);
void qg_loop_mca(const char *mca, const char *work_dir, const qg_loop *loop, const char *triple, const char *cpu,
                 const char *features, const char *arch, int lmul, qg_mca_result *res, int *loads, int *stores);

/* The summed sizes in bytes of the symbols names[0..n) (n <= 16) in an
 * object file, each counted once; -1 if none is there. */
long qg_cmp_symbols_size(const char *object_path, const char *const *names, int n);

#endif
