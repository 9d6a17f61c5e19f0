/* The op table: every kernel entry point's name, arguments (with their
 * roles) and the runtime reference it must equal. The public header, the
 * dispatcher, both backends' entry points and the by-reference forwarders
 * are all spelled from this one table, so an op is one row here. */
#ifndef QGEN_KERNEL_OPS_H
#define QGEN_KERNEL_OPS_H

#include "kernel_plan.h"

/* What an argument carries; its C and LLVM types follow from this alone. */
typedef enum qg_arg_kind {
    QG_ARG_F32_IN,   /* const float *: x, dy */
    QG_ARG_F32_OUT,  /* float *: y, dx */
    QG_ARG_Q_IN,     /* const <spec>_q_t * */
    QG_ARG_Q_OUT,    /* <spec>_q_t * */
    QG_ARG_ACC_IN,   /* const int32_t *: requantize's accumulators */
    QG_ARG_MASK_IN,  /* const uint8_t *: gradient mask (may be NULL) */
    QG_ARG_MASK_OUT, /* uint8_t *: gradient mask (may be NULL) */
    QG_ARG_N,        /* size_t: element count */
    QG_ARG_INNER,    /* size_t: elements per channel run */
    QG_ARG_QPARAMS,  /* const qg_qparams * */
    QG_ARG_REQUANT,  /* const qg_requant_params * */
    QG_ARG_OBSERVER, /* qg_observer * */
    QG_ARG_ERROR     /* qg_error * */
} qg_arg_kind;

typedef struct qg_op_arg {
    qg_arg_kind kind;
    const char *name;
} qg_op_arg;

#define QG_OP_MAX_ARGS 5

typedef struct qg_op_info {
    qg_kernel_op op;
    const char *name;
    bool returns_status; /* qg_status, else void */
    int nargs;
    qg_op_arg args[QG_OP_MAX_ARGS];
    /* The runtime function taking (spec, args...) that defines the op
     * (docs/semantics.md); NULL for observe, which goes through
     * qg_observe_with (qg_observe16_with for 16-bit float types). */
    const char *reference;
    qg_plan_input data; /* the plan input the data argument feeds */
    /* The runtime drivers an entry may forward to are qg_group_<stem>
     * (per-group specs), qg_pack4_<stem> (4-bit dtypes) and qg_ftype_<stem>
     * (16-bit float rows of block formats), taking the
     * inner function as a qg_<stem>_link_fn (NULL: the op has no such
     * drivers). */
    const char *driver_stem;
    /* Every runtime function the op's entries may call (the reference, the
     * drivers, observe's walks), by name and address: the JIT defines
     * these for its kernels. */
    struct {
        const char *name;
        void (*fn)(void);
    } callees[4];
} qg_op_info;

const qg_op_info *qg_op_info_of(qg_kernel_op op);

/* The op's callee qg_<driver>_<stem> (driver "group", "pack4" or "ftype"), or NULL. */
const char *qg_op_driver(const qg_op_info *op, const char *driver);

/* The position of the first argument of `kind`, or -1. */
int qg_op_arg_index(const qg_op_info *op, qg_arg_kind kind);

/* The data argument read per element (F32_IN, Q_IN or ACC_IN) and the one
 * written (F32_OUT or Q_OUT); -1 for observe's missing output. */
int qg_op_data_in(const qg_op_info *op);
int qg_op_data_out(const qg_op_info *op);

#endif
