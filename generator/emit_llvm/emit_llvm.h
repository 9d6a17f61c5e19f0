/* The LLVM backend: kernel plans lowered to LLVM IR through the LLVM C API,
 * then optimized and emitted as text IR, bitcode, object code or assembly
 * for one ISA's target machine. The same functions and ABI as the C
 * backend (NAME_<op>__<isa>), so either backend's files serve NAME.h. */
#ifndef QGEN_EMIT_LLVM_H
#define QGEN_EMIT_LLVM_H

#include <stddef.h>

#include "qgen/spec.h"
#include "qgen/status.h"

/* QG_LLVM_JIT_OBJ is an object compiled for latency, for the in-process
 * JIT: see qg_llvm_compile. */
typedef enum qg_llvm_output { QG_LLVM_LL, QG_LLVM_BC, QG_LLVM_OBJ, QG_LLVM_ASM, QG_LLVM_JIT_OBJ } qg_llvm_output;

/* Where one ISA's code runs: the target the LLVM backend compiles for. */
typedef struct qg_llvm_target {
    qg_isa isa;
    const char *arch;     /* x86_64, aarch64, riscv64 */
    const char *triple;   /* the LLVM target triple */
    const char *cpu;      /* LLVM CPU name */
    const char *features; /* LLVM feature string */
    const char *abi;      /* target ABI ("" = the triple's default) */
    const char *mca_cpus; /* llvm-mca CPU models that `qgen compare` estimates with, comma-separated */
} qg_llvm_target;

/* The target of `isa`; the scalar ISA runs on any architecture, chosen by
 * `scalar_arch` (NULL = the host's). NULL for an unknown architecture. */
const qg_llvm_target *qg_llvm_target_of(qg_isa isa, const char *scalar_arch);

/* The architecture this program runs on ("x86_64", ...). */
const char *qg_llvm_host_arch(void);

/* One compiled ISA file in memory (free with qg_llvm_blob_free). */
typedef struct qg_llvm_blob {
    char *data;
    size_t size;
} qg_llvm_blob;
void qg_llvm_blob_free(qg_llvm_blob *b);

/* Every kernel op (bit set of 1u << qg_kernel_op). */
#define QG_LLVM_ALL_OPS 0x3Fu

/* Builds the kernels `ops` of `spec` for `target`, with symbols named
 * <prefix>_<op>__<isa> and the spec object <prefix>_spec, optimizes at O2
 * and emits `out`. QG_LLVM_JIT_OBJ on a vector ISA runs a short pipeline
 * instead (inlining, SROA, CSE, instcombine, CFG clean-up, LICM): the IR
 * arrives vectorized and unrolled, so O2's loop passes only cost compile
 * time, about half of a cold JIT compile (docs/performance.md). A target LLVM cannot build for, or a module that does
 * not verify, comes back as an error before code generation (docs/jit.md). */
qg_status qg_llvm_compile(const qg_spec *spec, const qg_llvm_target *target, const char *prefix, unsigned ops,
                          qg_llvm_output out, qg_llvm_blob *result, qg_error *err);

/* For the unit tests: an object (for `target`, in memory) with
 * void <prefix>_probe(const void *a, const void *b, const void *c, void *out)
 * applying `plan`'s one step (operands are values 0, 1, 2 of the kinds
 * plan->kind gives) to one vector of each operand and storing one vector
 * of the result. Lane masks travel as int32 lanes: nonzero in, -1 out. */
struct qg_plan;
qg_status qg_llvm_compile_probe(const struct qg_plan *plan, const qg_llvm_target *target, const char *prefix,
                                qg_llvm_blob *result, qg_error *err);

/* Elements one main-loop iteration of `op`'s kernel on `isa` covers
 * (vectors per iteration x lanes; a scalable ISA at VLEN `vlen`, in the
 * op's register group). */
int qg_llvm_elements_per_iteration(qg_isa isa, int op, int vlen);

/* LLVM's version, e.g. "19.1.4" (part of the JIT cache key). */
const char *qg_llvm_version(void);

/* Sets LLVM up once per process: its targets. */
void qg_llvm_init(void);

#endif
