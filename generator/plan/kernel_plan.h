/* Kernel plans: each op's per-vector arithmetic, described once as a short
 * list of abstract vector operations with the spec folded in. The C backend
 * spells every operation with the ISA's intrinsic (templates/<isa>.def), the
 * LLVM backend builds it as IR; the loops and layout walk around a plan are
 * decided in kernel_loops.h. */
#ifndef QGEN_KERNEL_PLAN_H
#define QGEN_KERNEL_PLAN_H

#include "qgen/spec.h"

/* Value kinds: fp32 lanes, int32 lanes, lane masks. */
typedef enum qg_vkind { QG_VF, QG_VI, QG_VM } qg_vkind;

/* The operations: (name, kind of the result, operands, the operands' kinds:
 * f fp32, i int32, m lane mask; the splats' one operand is their immediate,
 * the shifts' second one their count). SHL_I/SHR_I shift logically, the
 * BITS_ operations reinterpret a lane's 32 bits. CVT_H2F widens the float16
 * code in a lane's low 16 bits (the high ones zero); CVT_F2H rounds a lane
 * to float16 nearest-even, its code in the low 16 bits, and is never given
 * a NaN other than the quiet one of either sign (the ISA's conversion
 * instructions, where targets/<isa>.json's float16_convert says so). */
#define QG_PLAN_OPS(X)                                                                                                 \
    X(ADD_F, QG_VF, 2, "ff")                                                                                           \
    X(SUB_F, QG_VF, 2, "ff")                                                                                           \
    X(MUL_F, QG_VF, 2, "ff")                                                                                           \
    X(DIV_F, QG_VF, 2, "ff")                                                                                           \
    X(MIN_F, QG_VF, 2, "ff")                                                                                           \
    X(MAX_F, QG_VF, 2, "ff")                                                                                           \
    X(ROUND_EVEN, QG_VF, 1, "f")                                                                                       \
    X(FLOOR, QG_VF, 1, "f")                                                                                            \
    X(TRUNC, QG_VF, 1, "f")                                                                                            \
    X(COPYSIGN, QG_VF, 2, "ff")                                                                                        \
    X(SPLAT_F, QG_VF, 1, "")                                                                                           \
    X(CMP_GE, QG_VM, 2, "ff")                                                                                          \
    X(CMP_LE, QG_VM, 2, "ff")                                                                                          \
    X(CMP_EQ, QG_VM, 2, "ff")                                                                                          \
    X(ORDERED, QG_VM, 1, "f")                                                                                          \
    X(AND_M, QG_VM, 2, "mm")                                                                                           \
    X(SELECT_F, QG_VF, 3, "mff")                                                                                       \
    X(MASK_F, QG_VF, 2, "mf")                                                                                          \
    X(MASKZ_MUL_F, QG_VF, 3, "mff")                                                                                    \
    X(CVT_F2I, QG_VI, 1, "f")                                                                                          \
    X(ROUND_CVT, QG_VI, 1, "f")                                                                                        \
    X(TRUNC_CVT, QG_VI, 1, "f")                                                                                        \
    X(MASKZ_I, QG_VI, 2, "mi")                                                                                         \
    X(CVT_I2F, QG_VF, 1, "i")                                                                                          \
    X(ADD_I, QG_VI, 2, "ii")                                                                                           \
    X(SUB_I, QG_VI, 2, "ii")                                                                                           \
    X(MAX_I, QG_VI, 2, "ii")                                                                                           \
    X(MIN_I, QG_VI, 2, "ii")                                                                                           \
    X(SAT_ADD_I, QG_VI, 2, "ii")                                                                                       \
    X(SPLAT_I, QG_VI, 1, "")                                                                                           \
    X(AND_I, QG_VI, 2, "ii")                                                                                           \
    X(SHL_I, QG_VI, 2, "i")                                                                                            \
    X(SHR_I, QG_VI, 2, "i")                                                                                            \
    X(BITS_F2I, QG_VI, 1, "f")                                                                                         \
    X(BITS_I2F, QG_VF, 1, "i")                                                                                         \
    X(CVT_H2F, QG_VF, 1, "i")                                                                                          \
    X(CVT_F2H, QG_VI, 1, "f")

typedef enum qg_opcode {
#define QG_OPCODE_ENUM(name, kind, arity, operands) QG_OP_##name,
    QG_PLAN_OPS(QG_OPCODE_ENUM)
#undef QG_OPCODE_ENUM
        QG_OP_COUNT
} qg_opcode;

/* The ops a kernel can be generated for. */
typedef enum qg_kernel_op {
    QG_K_QUANTIZE,
    QG_K_DEQUANTIZE,
    QG_K_FAKE_QUANT,
    QG_K_FAKE_QUANT_BACKWARD,
    QG_K_OBSERVE,
    QG_K_REQUANTIZE,
    QG_K_OP_COUNT
} qg_kernel_op;

const char *qg_kernel_op_name(qg_kernel_op op);
const char *qg_opcode_name(qg_opcode op);
/* Operands the operation takes (a, b, c in that order; the splats: their
 * immediate, which the C spellings receive as $a; the shifts: the count as
 * $b). */
int qg_opcode_arity(qg_opcode op);
/* Whether one of those operands is the step's immediate (imm or imm_i). */
bool qg_opcode_takes_imm(qg_opcode op);
/* The kind of a vector operation's result. */
qg_vkind qg_opcode_result_kind(qg_opcode op);
/* The kind of operand k (0..2) of a vector operation; -1 past its operands. */
int qg_opcode_operand_kind(qg_opcode op, int k);

/* Named inputs a plan reads (per vector, or per channel for parameters). */
typedef enum qg_plan_input {
    QG_IN_X,    /* fp32 data */
    QG_IN_Q,    /* quantized data widened to int32; requantize: the int32 accumulators */
    QG_IN_DY,   /* incoming gradient */
    QG_IN_MASK, /* gradient mask, as lane mask */
    QG_IN_S,    /* scale */
    QG_IN_INV,  /* fl(1 / scale) */
    QG_IN_LO,   /* qmin - z as fp32 */
    QG_IN_HI,   /* qmax - z as fp32 */
    QG_IN_Z,    /* zero point, int32 */
    QG_IN_B,    /* quantized bias, int32 (requantize) */
    QG_IN_COUNT
} qg_plan_input;

#define QG_PLAN_MAX_STEPS 96
#define QG_PLAN_MAX_VALUES (QG_IN_COUNT + QG_PLAN_MAX_STEPS)

typedef struct qg_step {
    qg_opcode op;
    int dst, a, b, c; /* value ids; -1 when unused */
    float imm;        /* SPLAT_F */
    int32_t imm_i;    /* SPLAT_I's value, SHL_I/SHR_I's count (0..31) */
} qg_step;

/* Values 0..QG_IN_COUNT-1 are the inputs; steps define the rest in order. */
typedef struct qg_plan {
    qg_kernel_op op;
    qg_step steps[QG_PLAN_MAX_STEPS];
    int nsteps;
    bool overflowed; /* a builder wanted more than QG_PLAN_MAX_STEPS */
    qg_vkind kind[QG_PLAN_MAX_VALUES];
    int nvalues;
    bool uses[QG_IN_COUNT];
    int out_y;    /* fp32 result (fake_quant, dequantize, backward) or -1 */
    int out_q;    /* int32 result (quantize) or -1 */
    int out_mask; /* lane mask result (fake_quant) or -1 */
    /* quantize where the main loop's grouped store adds the zero point
     * (qg_plan_io.grouped_store_adds_z): q - z bounded above only, NaN -> 0;
     * the store adds z and bounds below by saturation. -1 otherwise. */
    int out_q_grouped;
    /* With qg_plan_io.nan_check_per_iteration: the main loop's result (out_y,
     * or out_q_grouped where there is one) as it is when no lane of
     * nan_value is NaN, without the mask that zeroes those lanes; the main
     * loop tests its vectors' nan_value once and takes the masked result
     * only then. -1 otherwise. */
    int out_ordered, nan_value;
    /* The fp32 values of x and dy: the inputs themselves, or their widening
     * when the tensors hold 16-bit codes (then QG_IN_X and QG_IN_DY are
     * int32 lanes of codes, and out_y is one too). */
    int x, dy;
    /* What each value holds, in docs/semantics.md's words ("scaled",
     * "rounded", ...); backends name their temporaries after it. NULL for
     * inputs and unnamed steps. */
    const char *name[QG_PLAN_MAX_VALUES];
    /* The op's formula for this spec, one line, for a comment above the
     * lowered body. */
    char formula[200];
} qg_plan;

/* Builds the plan of `op` for `spec` on float32 tensors. Observe has no
 * per-element plan (its skeleton is a min/max reduction) and gets an empty
 * one. */
qg_status qg_plan_build(const qg_spec *spec, qg_kernel_op op, qg_plan *plan, qg_error *err);

/* Ways to round to an integral float, nearest-even: ROUND_EVEN; ROUND_CVT
 * and CVT_I2F where ROUND_CVT saturates and sends NaN to INT32_MAX (RVV:
 * its emulated round-to-integral costs more); t + 1.5 * 2^23 - 1.5 * 2^23,
 * exact while the range spans less than 2^22 (two adds in place of a
 * rounding instruction that is slow or single-pipe, and -0.0 comes out
 * +0.0). */
typedef enum qg_round_even_way { QG_RNE_INSTRUCTION, QG_RNE_CONVERSIONS, QG_RNE_MAGIC_ADD } qg_round_even_way;

/* How the plan's float tensors (x, dy, y, dx) are held: float32 lanes, or
 * 16-bit codes in int32 lanes converted inside the plan (docs/semantics.md,
 * "Float types"). */
typedef struct qg_plan_io {
    qg_float_type float_type;
    bool float16_instructions; /* float16 by CVT_H2F/CVT_F2H, else by exact integer sequences */
    /* How fake_quant reaches rne(t) as an integral float (targets/<isa>.json's
     * round_even; docs/semantics.md, "Element arithmetic"). */
    qg_round_even_way round_even;
    /* quantize's main loop packs four vectors to bytes and adds the zero
     * point there, at 16 bits with saturation, then bounds by qmin
     * (docs/semantics.md, "Element arithmetic"): the plan gives it
     * out_q_grouped. */
    bool grouped_store_adds_z;
    /* ROUND_CVT saturates and sends NaN to 0, and MIN_F/MAX_F return NaN
     * when an operand is one (NEON, SVE: targets/<isa>.json's round_cvt
     * "saturating_nan_zero", minmax_nan "propagate"): quantize's NaN lanes
     * need no mask of their own. */
    bool round_cvt_nan_zero;
    /* ROUND_CVT has no instruction (scalar: a library round, then a cast;
     * targets/<isa>.json's round_cvt "in_range"): where the two adds hold,
     * quantize and requantize round their clamped value by them and
     * convert by truncation. */
    bool round_cvt_by_call;
    /* fake_quant's and grouped quantize's NaN lanes are found once per
     * main-loop iteration (targets/<isa>.json's nan_check "per_iteration"):
     * the plan gives out_ordered and nan_value. */
    bool nan_check_per_iteration;
    /* MIN_F/MAX_F return the other operand when one is NaN (targets/<isa>.json's
     * minmax_nan "second" or "number"), so clamping sends a NaN to a
     * bound: `nan: unchecked` then drops the NaN masks (docs/semantics.md,
     * "NaN inputs"). */
    bool clamp_sends_nan_to_bound;
} qg_plan_io;

qg_status qg_plan_build_io(const qg_spec *spec, qg_kernel_op op, const qg_plan_io *io, qg_plan *plan, qg_error *err);

/* A plan of one conversion alone: with `narrow`, fp32 QG_IN_X to its
 * 16-bit code (out_q); without, the code in QG_IN_X to fp32 (out_y). */
void qg_plan_build_conversion(const qg_plan_io *io, bool narrow, qg_plan *plan);

/* Whether `op`'s kernel forwards to the runtime's reference instead of
 * running a plan: qint32 and float zero points (their arithmetic needs
 * more than fp32 lanes) and the fixed-point requantize. Both backends and
 * `qgen compare` ask this. */
bool qg_plan_by_reference(const qg_spec *spec, qg_kernel_op op);

/* Whether the spec's observer keeps a min/max the observe kernel reduces
 * (the others run on qg_observer_update). */
bool qg_plan_observer_reduces(const qg_spec *spec);

/* ggml's block formats (docs/semantics.md, "Block formats"): whether op's
 * kernel is generated (q8_0's quantize, q8_0's and q8_1's dequantize, on
 * float32 tensors; the others forward to the reference), and the spec of
 * a block's element arithmetic, its span's: per-tensor symmetric qint8,
 * x * (1/d) rounded half away from zero, with s = d. */
bool qg_plan_block_generated(const qg_spec *spec, qg_kernel_op op);
void qg_plan_block_elements(const qg_spec *spec, qg_spec *out);

/* Whether a vector ISA can serve the spec (qint32 and float zero points are
 * generated for scalar only); the message says why not. */
qg_status qg_plan_check_isa(const qg_spec *spec, qg_isa isa, qg_error *err);

#endif
