/* The loops and layout walk around a kernel's per-vector plan, decided once
 * per spec, op and ISA for both backends: which walk the entry does, where
 * the parameters come from, how a span steps through its elements and what
 * happens to masks. The backends lower these fields; neither decides them. */
#ifndef QGEN_KERNEL_LOOPS_H
#define QGEN_KERNEL_LOOPS_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel_plan.h"

/* How an entry point walks the tensor (docs/semantics.md, "Layouts"). */
typedef enum qg_walk {
    QG_WALK_WHOLE,        /* one span over [0, n) */
    QG_WALK_CHANNEL_RUNS, /* runs of qp->inner elements, run r in channel r % channels */
    QG_WALK_REQUANT_RUNS, /* runs of rp->inner accumulators, run r in output channel r % rp->channels */
} qg_walk;

/* Where one channel's parameters come from. */
typedef enum qg_param_source {
    QG_PARAMS_NONE,    /* the op has none (backward) */
    QG_PARAMS_QPARAMS, /* qp->scale[c], qp->zero_point[c] */
    QG_PARAMS_FIXED,   /* the spec's fixed_qparams observer */
    QG_PARAMS_REQUANT, /* m = fl(fl(s_in * s_w[c]) / s_out), bias_q[c] (0 when absent), z_out */
} qg_param_source;

/* What a data tensor holds per element, as a span reads or writes it. */
typedef enum qg_elem {
    QG_ELEM_NONE,   /* no such tensor (observe has no output) */
    QG_ELEM_F32,    /* floats */
    QG_ELEM_Q,      /* the kernel's dtype (qg_kernel_dtype) */
    QG_ELEM_CODE16, /* 16-bit float codes (float_io), converted inside the plan */
    QG_ELEM_ACC32,  /* requantize's int32 accumulators */
} qg_elem;

/* How a partial vector reads and writes only its lanes (targets/<isa>.json
 * "tail"): masked accesses (a scalable ISA's predicated strip), zeroed
 * stack buffers, or an explicit vector length (RVV's vsetvl in IR). */
typedef enum qg_tail_kind { QG_TAIL_MASKED, QG_TAIL_BUFFERED, QG_TAIL_EVL } qg_tail_kind;

/* A gradient mask as the entry point takes or gives it. */
typedef enum qg_mask_io { QG_MASK_NONE, QG_MASK_BYTES, QG_MASK_BITS } qg_mask_io;

typedef struct qg_kernel_loops {
    qg_walk walk;
    size_t channels; /* QG_WALK_CHANNEL_RUNS: the spec's channel_len; 0: qp->channels at run time */
    /* Per-group specs: the walk above is a static "blocks" function and the
     * entry forwards to the runtime's qg_group_<op> driver with it. */
    bool group_driver;
    /* 4-bit dtypes' quantize/dequantize: the kernel works on one byte per
     * element ("bytes"), the entry forwards to qg_pack4_<op> with it. */
    bool pack4;
    /* Block specs with 16-bit float tensors: the walk is a static "f32"
     * function on float32 rows, and the entry forwards to qg_ftype_<op>,
     * which widens and narrows around it. */
    bool ftype_driver;
    /* The float tensors' type as the kernel and the drivers around it read
     * and write them: a 16-bit one is converted inside the plan
     * (qg_plan_io). */
    qg_float_type float_io;
    qg_elem elem_in, elem_out; /* the op's data input and output (qg_op_data_in/out) */
    bool channels_last_table;  /* channels > 1: inner == 1 walks vectors across channels of a parameter table */
    bool row_written_out;      /* ... whose whole rows (a constant C, at most 16 fixed-width vectors) are
                                  written out column by column, not left to a compiler's unroller */
    qg_param_source params;
    float fixed_scale; /* QG_PARAMS_FIXED */
    int32_t fixed_zero_point;
    long long qmin, qmax; /* the clamp bounds lo = qmin - z, hi = qmax - z derive from */
    qg_mask_io mask_in, mask_out;
    bool clear_mask_first;   /* packed mask output: cleared at entry, spans set their bits */
    int lanes;               /* fp32 lanes of a vector; 0: scalable (strips) */
    int block_group;         /* a block walk's blocks per group, whose scalars fill one of the target's
                                vectors: its lanes, 8 or 16; else 4, the 16 bytes every SIMD target has */
    int lmul;                /* registers a vector takes: RVV's group for the op (targets/rvv.json "lmul"), else 1 */
    int unroll;              /* vectors per main-loop iteration */
    bool group_store;        /* the main loop's narrow q outputs are packed and stored together */
    bool group_store_adds_z; /* ... quantize's, with the zero point added there (qg_plan.out_q_grouped) */
    bool group_mask;         /* ... and its mask: packed bits, out or in, 4 x 4 lanes as 16 bits, or byte
                                masks out, 16 bytes in one store */
    bool tail;               /* counts that are not whole vectors end in a partial one (lanes != 1) */
    qg_tail_kind tail_kind;  /* ... read and written so */
    /* Vectors wider than malloc's 16-byte placement: a span of at least
     * align_min elements first runs a partial vector up to the next
     * align_bytes boundary of its float tensor (the output, else the
     * input), so that the main loop's accesses do not split cache lines.
     * Not with packed masks, whose main loop would leave whole bytes. */
    bool align_head;
    bool align_out;       /* the boundary is the output's (else the input's) */
    unsigned align_bytes; /* one vector of that tensor */
    unsigned align_min;
} qg_kernel_loops;

/* The dtype a kernel stores per element: 4-bit dtypes are packed around
 * kernels that work on their 8-bit twins (qint8, quint8); fp8 codes are
 * bytes (quint8). */
qg_dtype qg_kernel_dtype(const qg_spec *spec);

/* The entry's function names, as infixes between NAME_<op> and __<isa>:
 * the walk's, and the driver forwarders' in the order they wrap it. */
typedef struct qg_entry_chain {
    const char *walk;      /* "" or the infix of the driver wrapping it */
    int forwarders;        /* 0 to 3 */
    const char *name[3];   /* the forwarder's own infix ("" is the entry) */
    const char *driver[3]; /* "group", "pack4" or "ftype": the runtime's qg_<driver>_<stem> */
    const char *inner[3];  /* the infix of the function it hands on */
} qg_entry_chain;
void qg_entry_chain_of(const qg_kernel_loops *lp, qg_entry_chain *out);

/* Whether the op takes a gradient mask (in or out): its spans and rows
 * take one then. */
static inline bool qg_kernel_loops_masked(const qg_kernel_loops *lp) {
    return lp->mask_in != QG_MASK_NONE || lp->mask_out != QG_MASK_NONE;
}

/* The loops of `op`'s kernel for `spec` on `isa` (a plan-served op: see
 * qg_plan_by_reference). */
void qg_kernel_loops_of(const qg_spec *spec, qg_isa isa, qg_kernel_op op, qg_kernel_loops *out);

/* The plan of `op` inside those loops: its float tensors as they hold them,
 * converted the way targets/<isa>.json says. */
qg_status qg_plan_build_for(const qg_spec *spec, qg_isa isa, qg_kernel_op op, qg_plan *plan, qg_error *err);
/* ... and how that plan holds its float tensors. */
qg_plan_io qg_plan_io_for(const qg_spec *spec, qg_isa isa, qg_kernel_op op);

/* Observe of a 16-bit float_type: the plan that widens a vector of codes
 * (QG_IN_X) to float32 (out_y) before the min/max; false for float32. */
bool qg_plan_observe_widening(const qg_spec *spec, qg_isa isa, qg_plan *plan);

#endif
