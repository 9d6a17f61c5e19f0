/* The LLVM backend's lowering of each plan operation on its own: every
 * opcode as a one-step plan (qg_llvm_compile_probe), compiled for each ISA
 * this CPU runs, on edge values (ties, signed zeros, subnormals, the int32
 * and fp32 extremes, inf, NaN) inside the operation's contract, against
 * the operation's scalar definition, bit for bit. A failure names the
 * opcode and the ISA: a spelling in targets/ or llvm_builder.c, not a loop
 * or a plan. Foreign ISAs' spellings run in the kernel tests under qemu. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>

#include "../test_util.h"
#include "emit_llvm/emit_llvm.h"
#include "plan/kernel_plan.h"
#include "targets/target_table.h"
#include "qgen/runtime.h"

#define MAX_LANES 16

typedef void (*probe_fn)(const void *a, const void *b, const void *c, void *out);
typedef union lane {
    float f;
    int32_t i;
    uint32_t u;
} lane;

static const float floats[] = {
    0.0f,          -0.0f,           0.5f,       -0.5f,       1.5f,        -1.5f,         2.5f,
    -2.5f,         0.49999997f,     1.0f,       -1.0f,       3.0f,        -7.25f,        1e-45f,
    -1e-45f,       1.17549435e-38f, 8388607.5f, -8388608.0f, 16777217.0f, 2147483520.0f, -2147483648.0f,
    3.4028235e38f, -3.4028235e38f,  INFINITY,   -INFINITY,   NAN};
static const int32_t ints[] = {0, 1, -1, 2, 127, -128, 32767, -32768, INT32_MAX, INT32_MIN, INT32_MAX - 1,
                               INT32_MIN + 1, 1 << 24, -(1 << 24) - 1, 123456789,
                               /* float16 codes: 1.0, -0.0, smallest and largest subnormal and
                                  normal, +-inf, NaNs with a payload */
                               0x3C00, 0x8000, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFE01,
                               0x3555};
#define NF (sizeof floats / sizeof floats[0])
#define NI (sizeof ints / sizeof ints[0])

/* Whether operand values are inside the operation's contract
 * (docs/semantics.md): min/max never see NaN or a pair of opposite zeros
 * where the choice shows; conversions of fp32 to int32 take integral
 * values in range (CVT_F2I) or values in range (ROUND_CVT, TRUNC_CVT). */
static bool in_contract(qg_opcode op, const lane *v) {
    switch (op) {
    case QG_OP_MIN_F:
    case QG_OP_MAX_F:
        return !isnan(v[0].f) && !isnan(v[1].f) && !(v[0].f == 0 && v[1].f == 0 && signbit(v[0].f) != signbit(v[1].f));
    case QG_OP_CVT_F2I: return v[0].f == truncf(v[0].f) && v[0].f >= -2147483648.0f && v[0].f < 2147483648.0f;
    case QG_OP_ROUND_CVT:
    case QG_OP_TRUNC_CVT: return v[0].f >= -2147483648.0f && v[0].f < 2147483648.0f;
    case QG_OP_CVT_H2F: return v[0].u <= 0xFFFF;
    case QG_OP_CVT_F2H: { /* NaN: only the quiet one, of either sign */
        const uint32_t bits = v[0].u & 0x7FFFFFFFu;
        return bits <= 0x7F800000u || bits == 0x7FC00000u;
    }
    default: return true;
    }
}

static int32_t sat_add(int32_t a, int32_t b) {
    const int64_t s = (int64_t)a + b;
    return s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : (int32_t)s;
}

/* The operation's definition on one lane; masks are 0 / nonzero in and
 * 0 / -1 out. */
static lane expect(qg_opcode op, const lane *v, float imm, int32_t imm_i) {
    const float a = v[0].f, b = v[1].f, c = v[2].f;
    const bool m = v[0].i != 0;
    lane r = {0};
    switch (op) {
    case QG_OP_ADD_F: r.f = a + b; break;
    case QG_OP_SUB_F: r.f = a - b; break;
    case QG_OP_MUL_F: r.f = a * b; break;
    case QG_OP_DIV_F: r.f = a / b; break;
    case QG_OP_MIN_F: r.f = a < b ? a : b; break;
    case QG_OP_MAX_F: r.f = a > b ? a : b; break;
    case QG_OP_ROUND_EVEN: r.f = nearbyintf(a); break;
    case QG_OP_FLOOR: r.f = floorf(a); break;
    case QG_OP_TRUNC: r.f = truncf(a); break;
    case QG_OP_COPYSIGN: r.f = copysignf(a, b); break;
    case QG_OP_SPLAT_F: r.f = imm; break;
    case QG_OP_CMP_GE: r.i = a >= b ? -1 : 0; break;
    case QG_OP_CMP_LE: r.i = a <= b ? -1 : 0; break;
    case QG_OP_CMP_EQ: r.i = a == b ? -1 : 0; break;
    case QG_OP_ORDERED: r.i = a == a ? -1 : 0; break;
    case QG_OP_AND_M: r.i = m && v[1].i ? -1 : 0; break;
    case QG_OP_SELECT_F: r.f = m ? b : c; break;
    case QG_OP_MASK_F: r.f = m ? b : 0.0f; break;
    case QG_OP_MASKZ_MUL_F: r.f = m ? b * c : 0.0f; break;
    case QG_OP_CVT_F2I: r.i = (int32_t)a; break;
    case QG_OP_ROUND_CVT: r.i = (int32_t)nearbyintf(a); break;
    case QG_OP_TRUNC_CVT: r.i = (int32_t)a; break;
    case QG_OP_MAX_I: r.i = v[0].i > v[1].i ? v[0].i : v[1].i; break;
    case QG_OP_MIN_I: r.i = v[0].i < v[1].i ? v[0].i : v[1].i; break;
    case QG_OP_MASKZ_I: r.i = m ? v[1].i : 0; break;
    case QG_OP_CVT_I2F: r.f = (float)v[0].i; break;
    case QG_OP_ADD_I: r.u = v[0].u + v[1].u; break;
    case QG_OP_SUB_I: r.u = v[0].u - v[1].u; break;
    case QG_OP_SAT_ADD_I: r.i = sat_add(v[0].i, v[1].i); break;
    case QG_OP_SPLAT_I: r.i = imm_i; break;
    case QG_OP_AND_I: r.u = v[0].u & v[1].u; break;
    case QG_OP_SHL_I: r.u = v[0].u << imm_i; break;
    case QG_OP_SHR_I: r.u = v[0].u >> imm_i; break;
    case QG_OP_BITS_F2I:
    case QG_OP_BITS_I2F: r.u = v[0].u; break;
    case QG_OP_CVT_H2F: {
        const uint16_t code = (uint16_t)v[0].u;
        qg_float_type_widen(QG_FLOAT16, &code, &r.f, 1);
        break;
    }
    case QG_OP_CVT_F2H: {
        uint16_t code;
        qg_float_type_narrow(QG_FLOAT16, &a, &code, 1);
        r.u = code;
        break;
    }
    default: break;
    }
    return r;
}

/* Test value k of an operand of `kind` (masks: 0 and 1). */
static lane value_of(int kind, size_t k) {
    lane v = {0};
    if (kind == QG_VF)
        v.f = floats[k % NF];
    else if (kind == QG_VI)
        v.i = ints[k % NI];
    else
        v.i = (int32_t)(k % 2);
    return v;
}

static size_t count_of(int kind) { return kind == QG_VF ? NF : kind == QG_VI ? NI : 2; }

static bool same(qg_vkind kind, lane got, lane want) {
    if (kind == QG_VF && isnan(got.f) && isnan(want.f))
        return true;
    return got.u == want.u;
}

static LLVMOrcLLJITRef jit;

/* UBSan's function check reads the bytes before a callee for its type
 * signature; a JIT-compiled probe can begin a page, so the call goes
 * without that check. */
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
static void
call_probe(probe_fn fn, const lane *a, const lane *b, const lane *c, lane *out) {
    fn(a, b, c, out);
}

static probe_fn compile_probe(qg_opcode op, qg_isa isa, float imm, int32_t imm_i, unsigned serial) {
    qg_plan p = {0};
    p.op = QG_K_FAKE_QUANT;
    for (int k = 0; k < 3; k++) {
        const int kind = qg_opcode_operand_kind(op, k);
        p.kind[k] = kind < 0 ? QG_VF : (qg_vkind)kind;
    }
    const int dst = QG_IN_COUNT;
    p.steps[0] = (qg_step){op,
                           dst,
                           qg_opcode_operand_kind(op, 0) >= 0 ? 0 : -1,
                           qg_opcode_operand_kind(op, 1) >= 0 ? 1 : -1,
                           qg_opcode_operand_kind(op, 2) >= 0 ? 2 : -1,
                           imm,
                           imm_i};
    p.nsteps = 1;
    p.nvalues = dst + 1;
    p.kind[dst] = qg_opcode_result_kind(op);
    p.out_y = p.kind[dst] == QG_VI ? -1 : dst;
    p.out_q = p.kind[dst] == QG_VI ? dst : -1;
    p.out_mask = -1;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "p%u", serial);
    qg_llvm_blob obj;
    qg_error err = {0};
    if (qg_llvm_compile_probe(&p, qg_llvm_target_of(isa, NULL), prefix, &obj, &err)) {
        fprintf(stderr, "\n  %s on %s: %s", qg_opcode_name(op), qg_isa_name(isa), err.message);
        return NULL;
    }
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(obj.data, obj.size, prefix);
    qg_llvm_blob_free(&obj);
    LLVMOrcExecutorAddress addr = 0;
    char sym[80];
    snprintf(sym, sizeof sym, "%s_probe", prefix);
    if (LLVMOrcLLJITAddObjectFile(jit, LLVMOrcLLJITGetMainJITDylib(jit), buf) || LLVMOrcLLJITLookup(jit, &addr, sym))
        return NULL;
    probe_fn fn;
    void *ptr = (void *)(uintptr_t)addr;
    memcpy(&fn, &ptr, sizeof fn);
    return fn;
}

/* Every combination of test values of the operation's operands, a
 * vector's lanes at a time. */
static int check_op(qg_opcode op, qg_isa isa, probe_fn fn, int lanes, float imm, int32_t imm_i) {
    int kinds[3], arity = 0;
    size_t total = 1;
    for (int k = 0; k < 3; k++) {
        kinds[k] = qg_opcode_operand_kind(op, k);
        if (kinds[k] >= 0)
            total *= count_of(kinds[k]), arity++;
    }
    int bad = 0;
    lane a[MAX_LANES], b[MAX_LANES], c[MAX_LANES], out[MAX_LANES];
    lane *ops[3] = {a, b, c};
    size_t combo[MAX_LANES];
    for (size_t base = 0; base < total; base += (size_t)lanes) {
        int n = 0;
        for (size_t t = base; t < total && n < lanes; t++) {
            size_t rest = t;
            lane v[3] = {{0}};
            for (int k = 0; k < arity; k++) {
                v[k] = value_of(kinds[k], rest % count_of(kinds[k]));
                rest /= count_of(kinds[k]);
            }
            if (!in_contract(op, v))
                continue;
            for (int k = 0; k < 3; k++)
                ops[k][n] = v[k];
            combo[n++] = t;
        }
        for (int l = n; l < lanes; l++) /* padding lanes: any values */
            a[l] = b[l] = c[l] = (lane){.i = 0};
        if (!n)
            continue;
        call_probe(fn, a, b, c, out);
        const qg_vkind result = qg_opcode_result_kind(op);
        for (int l = 0; l < n; l++) {
            const lane v[3] = {a[l], b[l], c[l]};
            const lane want = expect(op, v, imm, imm_i);
            if (!same(result, out[l], want) && bad++ < 3)
                fprintf(stderr, "\n  %s on %s, case %zu: a=%08x b=%08x c=%08x gives %08x; expected %08x",
                        qg_opcode_name(op), qg_isa_name(isa), combo[l], a[l].u, b[l].u, c[l].u, out[l].u, want.u);
        }
    }
    return bad;
}

static void test_every_opcode_on_every_host_isa(void) {
    qg_llvm_init();
    CU_ASSERT_PTR_NULL_FATAL(LLVMOrcCreateLLJIT(&jit, NULL));
    unsigned serial = 0;
    int isas = 0;
    for (qg_isa isa = QG_ISA_SCALAR; isa < QG_ISA_COUNT; isa++) {
        const qg_llvm_target *t = qg_llvm_target_of(isa, NULL);
        if (!t || strcmp(t->arch, qg_llvm_host_arch()) != 0 || !qg_cpu_has(isa) || qg_target_of(isa)->lanes == 0)
            continue;
        isas++;
        const bool f16 = strcmp(qg_target_of(isa)->float16_convert, "instructions") == 0;
        for (qg_opcode op = 0; op < QG_OP_COUNT; op++) {
            if ((op == QG_OP_CVT_H2F || op == QG_OP_CVT_F2H) && !f16)
                continue; /* the plan converts with integers there */
            const float imm = op == QG_OP_SPLAT_F ? -0.0f : 0.0f;
            /* the fp8 plans' immediates: an exponent mask and shift counts */
            const int32_t imm_i = op == QG_OP_SPLAT_I ? 0x7F800000 : op == QG_OP_SHL_I ? 20 : 24;
            probe_fn fn = compile_probe(op, isa, imm, imm_i, serial++);
            CU_ASSERT_PTR_NOT_NULL(fn);
            if (fn)
                CU_ASSERT_EQUAL(check_op(op, isa, fn, qg_target_of(isa)->lanes, imm, imm_i), 0);
        }
    }
    CU_ASSERT_TRUE(isas >= 1);
    LLVMOrcDisposeLLJIT(jit);
}

int main(void) {
    static const qg_test tests[] = {{"every opcode on every ISA this CPU runs", test_every_opcode_on_every_host_isa}};
    return QG_RUN("llvm_lowering", tests);
}
