/* The ISA table: every fact about an instruction set and its architecture
 * (lanes, unroll, guards, target attributes, LLVM triple/CPU/features,
 * llvm-mca models, the qemu runner), compiled in from targets/<isa>.json and
 * targets/arch/<arch>.json. Code asks here instead of spelling them. */
#ifndef QGEN_TARGET_TABLE_H
#define QGEN_TARGET_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "qgen/spec.h"

typedef struct qg_target {
    qg_isa isa;
    const char *name, *summary;
    const char *arch;         /* architecture name ("any" for scalar) */
    int lanes;                /* fp32 lanes per vector; 0 = scalable */
    int vscale_lanes;         /* scalable: fp32 lanes per LLVM vscale (at LMUL 1 where there is one) */
    const char *lmul;         /* RVV: register group per op, "<op>=L,..." (qg_target_lmul); "" = none */
    int unroll;               /* vectors per main-loop iteration */
    const char *tail;         /* a partial last vector: "masked" (the ISA's masked loads and stores),
                                 "buffered" (through zeroed stack buffers), "evl" (vector-predicated
                                 accesses of the lane count); "" = none (scalar) or predicated strips */
    int rank;                 /* dispatch preference: the highest the CPU has wins */
    const char *guard;        /* preprocessor condition for the architecture */
    const char *clang_target; /* target attribute clang gives the file's functions; "" = none */
    const char *gcc_target;   /* the same for GCC's `#pragma GCC target` */
    const char *needs;        /* compiler condition the file cannot do without; "" = any C11 compiler */
    const char *cflags;       /* whole-file flags with the same effect (optional) */
    const char *llvm_features;
    /* How the LLVM backend spells the operations whose portable IR lowers
     * badly or not at all on the ISA (docs/llvm-backend.md, "ISA spellings"). */
    const char *llvm_minmax;     /* min/max: x86_256/_512, minimum, minnum, select */
    const char *llvm_round_cvt;  /* fp32 -> int32 nearest-even: x86_cvtps2dq_256/_512, aarch64_fcvtns,
                                    riscv_vfcvt, roundeven */
    const char *llvm_trunc;      /* round toward zero: trunc; no_rtz: never the ISA's
                                    round-toward-zero conversion (floor and the sign) */
    const char *llvm_narrow4;    /* four int32 vectors to int8 at once: x86_packs_256/_512, "" = one by one */
    const char *llvm_mask_bytes; /* a full vector's lane mask to bytes: x86_pdep, "" = zext and store */
    const char *llvm_mask_bits;  /* a scalable strip's lane mask into and out of a packed mask:
                                    riscv_vsm (vsm.v/vlm.v on whole bytes), "" = a byte-vector window */
    const char *llvm_intrinsics; /* the ISA's own LLVM intrinsics the spellings above call, by role:
                                    "<role>=<name>,..." (qg_target_member) */
    const char *float16_convert; /* float16 <-> fp32 of 16-bit tensors: "instructions" (the ISA's
                                    conversions: F16C, fcvt), "integers" (the plan's exact sequences) */
    const char *round_cvt;       /* what ROUND_CVT gives past the int32 range and for NaN, as both backends
                                    spell it: "saturating" (NaN -> INT32_MAX), "saturating_nan_zero",
                                    "indefinite" (INT32_MIN), "in_range" (nothing promised) */
    const char *minmax_nan;      /* what MIN_F/MAX_F give when an operand is NaN, as both backends spell
                                    them: "second" (the second operand: x86 minps, C's a < b ? a : b),
                                    "propagate" (NaN: NEON/SVE fmin), "number" (the other: RVV vfmin) */
    const char *nan_check;       /* where fake_quant and quantize find NaN lanes: "per_vector" (each
                                    vector's mask, always applied), "per_iteration" (one test of the main
                                    loop's vectors; their masks applied only when one holds a NaN) */
    const char *round_even;      /* how fake_quant rounds t to an integral float (docs/semantics.md,
                                    "Element arithmetic"): "instruction" (the ISA's round-to-nearest-even),
                                    "conversions" (to int32 and back: round_cvt must be "saturating"),
                                    "magic_add" (adding and subtracting 1.5 * 2^23, two plain adds) */
    /* What the main loop's `unroll` (4) vectors do at once, comma-separated:
     * the q dtypes whose four results are narrowed and stored together, those
     * where that store adds the zero point (qg_plan.out_q_grouped), and the
     * mask forms ("bits", "bytes") their four masks are read or stored in. */
    const char *group_store, *group_store_adds_z, *group_mask;
    const char *mca_cpus;    /* llvm-mca models, comma-separated */
    const char *qemu_cpu;    /* qemu -cpu value, BITS/BYTES standing for the vector width; "" = default */
    const char *test_widths; /* vector widths in bits the tests run a scalable ISA at, comma-separated */
    int compare_bits;        /* scalable: the width `qgen compare` runs and models it at (its mca CPU's) */
} qg_target;

typedef struct qg_arch {
    const char *name;
    const char *triple;
    const char *clang_flags;     /* clang flags that select the architecture */
    const char *baseline_cflags; /* flags every file of the architecture is built with */
    const char *llvm_cpu, *llvm_features, *llvm_abi;
    const char *mca_cpus;   /* for the architecture's scalar code */
    const char *qemu;       /* qemu-user program ("" = runs natively here, or by runner) */
    const char *runner;     /* "node-wasi": node with qgen's WASI runner (scripts/wasi-run.mjs) */
    const char *link_flags; /* flags every program of the architecture is linked with */
    const char *sysroot;    /* its -L sysroot */
} qg_arch;

/* The register group (LMUL: 1, 2, 4 or 8) `op` (an op name, "observe"
 * included) works in on `t`: 1 where the ISA has none. */
int qg_target_lmul(const qg_target *t, const char *op);

/* The value of `key` in a "<key>=<value>,..." field of the table (lmul,
 * llvm_intrinsics), copied to buf; false (buf "") where it has none or it
 * does not fit. */
bool qg_target_member(const char *field, const char *key, char *buf, size_t cap);
/* Whether a comma-separated field of the table lists `item`. */
bool qg_target_lists(const char *list, const char *item);

/* The row of `isa` (NULL past the table). */
const qg_target *qg_target_of(qg_isa isa);

/* An architecture by name ("x86_64", "aarch64", "riscv64"); NULL if unknown. */
const qg_arch *qg_arch_named(const char *name);
/* The architecture of a vector ISA (NULL for scalar). */
const qg_arch *qg_arch_of(qg_isa isa);
/* Architectures in the table, in order; NULL past the end. */
const qg_arch *qg_arch_at(size_t i);

/* The architecture this program runs on ("x86_64", ...; "unknown"). */
const char *qg_host_arch(void);

/* `qemu_cpu` of a scalable ISA at `bits`: BITS and BYTES replaced. */
void qg_target_qemu_cpu(const qg_target *t, int bits, char *out, size_t cap);

#endif
