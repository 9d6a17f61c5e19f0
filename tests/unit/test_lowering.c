/* The C backend's pieces on their own, below the plan: each ISA's
 * spellings (templates/<isa>.def) take exactly the operands their plan
 * operation has (qg_opcode_arity), the op table is whole, and the line
 * wrapper keeps emitted C within 100 columns without changing a token, and
 * the kernel builder prints its calls as C reads them. A failure here
 * names a spelling, the wrapper or the printer, not a plan. */
#include <string.h>

#include "../test_util.h"
#include "emit_c/c_builder.h"
#include "emit_c/c_signature.h"
#include "emit_c/c_wrap.h"
#include "emit_c/isa_spelling.h"
#include "plan/kernel_ops.h"
#include "targets/target_table.h"

static bool has_operand(const char *fmt, char which) {
    for (const char *p = fmt; (p = strchr(p, '$')); p++)
        if (p[1] == which)
            return true;
    return false;
}

static void check_operands(const char *what, qg_isa isa, const char *fmt, int n) {
    for (int k = 0; k < 3; k++) {
        const bool want = k < n, got = has_operand(fmt, (char)('a' + k));
        if (want != got)
            fprintf(stderr, "  %s %s: $%c %s\n", qg_isa_name(isa), what, 'a' + k, want ? "missing" : "unexpected");
        CU_ASSERT_EQUAL(want, got);
    }
}

static void test_every_operation_spelled_with_its_operands(void) {
    for (qg_isa isa = 0; isa < QG_ISA_COUNT; isa++) {
        const qg_isa_spelling *is = qg_isa_spelling_of(isa);
        CU_ASSERT_PTR_NOT_NULL_FATAL(is);
        CU_ASSERT_EQUAL(is->isa, isa);
        /* the float16 conversions exist where the plan uses them */
        const bool f16 = strcmp(qg_target_of(isa)->float16_convert, "instructions") == 0;
        for (qg_opcode op = 0; op < QG_OP_COUNT; op++) {
            if (op == QG_OP_CVT_H2F || op == QG_OP_CVT_F2H) {
                CU_ASSERT_EQUAL(is->op[op] != NULL, f16);
                if (!f16)
                    continue;
            }
            CU_ASSERT_PTR_NOT_NULL_FATAL(is->op[op]);
            check_operands(qg_opcode_name(op), isa, is->op[op], qg_opcode_arity(op));
        }
        check_operands("load_f", isa, is->load_f, 1);
        check_operands("store_f", isa, is->store_f, 2);
        check_operands("load_i", isa, is->load_i, 1);
        check_operands("splat_i", isa, is->splat_i, 1);
        for (qg_dtype d = QG_QINT8; d <= QG_QINT16; d++) {
            check_operands("load_q", isa, is->load_q[d], 1);
            check_operands("store_q", isa, is->store_q[d], 2);
        }
        /* lane masks pass through 64-bit words, unless the ISA moves packed
         * masks itself (RVV: vsm.v/vlm.v, a strip may hold more than 64 lanes) */
        const bool packs_itself = is->store_mask_packed && is->load_mask_packed;
        CU_ASSERT_TRUE(packs_itself || (is->mask_to_bits && is->bits_to_mask));
        if (is->mask_to_bits)
            check_operands("mask_to_bits", isa, is->mask_to_bits, 1);
        if (is->bits_to_mask)
            check_operands("bits_to_mask", isa, is->bits_to_mask, 1);
    }
}

/* Scalable ISAs spell their strips; fixed-width ones spell none. */
static void test_strips_spelled_exactly_for_scalable_isas(void) {
    for (qg_isa isa = 0; isa < QG_ISA_COUNT; isa++) {
        const qg_isa_spelling *is = qg_isa_spelling_of(isa);
        const char *strips[] = {is->strip_type, is->strip_name, is->strip_open, is->strip_count, is->strip_step,
                                is->strip_all,  is->load_f_pad, is->load_h_pad, is->all_lanes};
        const bool scalable = qg_target_of(isa)->lanes == 0;
        for (size_t k = 0; k < sizeof strips / sizeof strips[0]; k++)
            CU_ASSERT_EQUAL(strips[k] != NULL, scalable);
        /* reductions: every vector ISA folds its lanes (a block's scale takes one per block) */
        const bool vector = qg_target_of(isa)->lanes != 1;
        CU_ASSERT_EQUAL(is->reduce_min != NULL, vector);
        CU_ASSERT_EQUAL(is->reduce_max != NULL, vector);
        if (is->reduce_min && is->reduce_max) {
            check_operands("reduce_min", isa, is->reduce_min, isa == QG_ISA_RVV ? 2 : 1); /* $b: RVV's seed */
            check_operands("reduce_max", isa, is->reduce_max, isa == QG_ISA_RVV ? 2 : 1);
        }
        if (scalable) {
            check_operands("strip_open", isa, is->strip_open, 2);
            check_operands("load_f_pad", isa, is->load_f_pad, 2);
            check_operands("load_h_pad", isa, is->load_h_pad, 2);
            check_operands("all_lanes", isa, is->all_lanes, 1);
        }
    }
}

/* Every op has its data in and out where it has a reference, and the
 * prototypes the header prints come from the table. */
static void test_op_table_is_whole(void) {
    for (qg_kernel_op op = 0; op < QG_K_OP_COUNT; op++) {
        const qg_op_info *o = qg_op_info_of(op);
        CU_ASSERT_PTR_NOT_NULL_FATAL(o);
        CU_ASSERT_EQUAL(o->op, op);
        CU_ASSERT_STRING_EQUAL(qg_kernel_op_name(op), o->name);
        CU_ASSERT_TRUE(qg_op_data_in(o) >= 0);
        CU_ASSERT_TRUE(qg_op_arg_index(o, QG_ARG_N) >= 0);
        CU_ASSERT_EQUAL(qg_op_data_out(o) >= 0, o->reference != NULL);
        /* the JIT defines exactly the callees: the reference and each driver an entry may call are among them */
        static const char *const kinds[3] = {"group", "pack4", "ftype"};
        const bool on[3] = {op == QG_K_QUANTIZE || op == QG_K_DEQUANTIZE || op == QG_K_FAKE_QUANT,
                            /* 4-bit dtypes pack only quantize's and dequantize's output */
                            op == QG_K_QUANTIZE || op == QG_K_DEQUANTIZE,
                            /* 16-bit rows of block formats */
                            op != QG_K_OBSERVE && op != QG_K_REQUANTIZE};
        const char *wanted[4] = {o->reference, NULL, NULL, NULL};
        char drivers[3][64];
        for (int d = 0; d < 3; d++) {
            snprintf(drivers[d], sizeof drivers[d], "qg_%s_%s", kinds[d], o->driver_stem ? o->driver_stem : "");
            wanted[1 + d] = on[d] ? drivers[d] : NULL;
            /* the forwarders name their driver through the table */
            const char *got = qg_op_driver(o, kinds[d]);
            CU_ASSERT_TRUE(wanted[1 + d] ? got && strcmp(got, wanted[1 + d]) == 0 : got == NULL);
        }
        for (int w = 0; w < 4; w++) {
            if (!wanted[w])
                continue;
            bool found = false;
            for (int k = 0; k < 4; k++)
                found = found || (o->callees[k].name && strcmp(o->callees[k].name, wanted[w]) == 0 && o->callees[k].fn);
            CU_ASSERT_TRUE(found);
        }
    }
    qg_text t = {0};
    qg_c_prototype(&t, qg_op_info_of(QG_K_FAKE_QUANT_BACKWARD), "net", "float", "__avx2");
    CU_ASSERT_STRING_EQUAL(t.p, "void net_fake_quant_backward__avx2(const float *dy, const uint8_t *mask, float *dx, "
                                "size_t n)");
    qg_text_free(&t);
    /* 16-bit float tensors: the bit patterns' type at the entry */
    qg_c_prototype(&t, qg_op_info_of(QG_K_FAKE_QUANT), "net", "uint16_t", "");
    CU_ASSERT_STRING_EQUAL(t.p, "void net_fake_quant(const uint16_t *x, uint16_t *y, uint8_t *mask, size_t n, "
                                "const qg_qparams *qp)");
    qg_text_free(&t);
    qg_c_params(&t, qg_op_info_of(QG_K_REQUANTIZE), "net", "uint16_t", false);
    CU_ASSERT_STRING_EQUAL(t.p, "const int32_t *, net_q_t *, size_t, const qg_requant_params *");
    qg_text_free(&t);
}

static size_t longest_line(const char *s) {
    size_t best = 0;
    for (const char *l = s; *l;) {
        const size_t len = strcspn(l, "\n");
        best = len > best ? len : best;
        l += len + (l[len] == '\n');
    }
    return best;
}

/* Removes spaces, newlines, backslash-newlines and the " * " that opens a
 * comment's continuation line: what wrapping may add. */
static void squeeze(const char *s, char *out) {
    for (; *s; s++) {
        if (*s == '\n') {
            s += strspn(s + 1, " ");
            if (s[1] == '*' && s[2] != '/')
                s++;
        } else if (*s != ' ' && !(*s == '\\' && s[1] == '\n')) {
            *out++ = *s;
        }
    }
    *out = 0;
}

static void test_wrap_keeps_tokens_within_width(void) {
    static const char *const inputs[] = {
        "    const __m512i q3 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(q + base + i + 48)));\n",
        "static inline void weight_quantize_span(const float *x, weight_q_t *q, size_t base, size_t len, float inv_,"
        " float lo_, float hi_, int32_t z_) {\n",
        "/* y = fl(clamp(rne(fl(x * fl(1 / s))), qmin - z, qmax - z) * s), NaN -> 0; mask: r in range, words words "
        "*/\n",
        "#pragma clang attribute push(__attribute__((target(\"feature-one,feature-two,feature-three,feature-four\"))), "
        "apply_to = "
        "function)\n",
        "    fprintf(stderr, \"a string, with commas, that must stay whole, a string, with commas, that stays\", x, "
        "y);\n",
        "short line, (a, b)\n",
    };
    for (size_t k = 0; k < sizeof inputs / sizeof inputs[0]; k++) {
        qg_text t = {0};
        qg_text_puts(&t, inputs[k]);
        CU_ASSERT_TRUE_FATAL(qg_c_wrap(&t, 100));
        char before[512], after[512];
        squeeze(inputs[k], before);
        squeeze(t.p, after);
        if (strcmp(before, after) != 0)
            fprintf(stderr, "\n  wrapped:\n%s", t.p);
        CU_ASSERT_STRING_EQUAL(before, after);
        if (!strstr(inputs[k], "a string")) {
            CU_ASSERT_TRUE(longest_line(t.p) <= 100);
        } else { /* the string literal is not split: the break comes after it */
            CU_ASSERT_PTR_NOT_NULL(strstr(t.p, "\"a string, with commas, that must stay whole, a string, with commas"));
        }
        qg_text_free(&t);
    }
}

/* RVV's tables per register group: no group token left, the group's names
 * in their place; an ISA without groups copies nothing. */
static void test_register_groups_spelled_before_printing(void) {
    for (qg_isa isa = QG_ISA_SCALAR; isa < QG_ISA_COUNT; isa++) {
        const qg_isa_spelling *raw = qg_isa_spelling_of(isa);
        for (int g = 0; g < QG_ISA_GROUPS; g++) {
            qg_isa_spelling t;
            CU_ASSERT_TRUE_FATAL(qg_isa_spelling_grouped(raw, g, &t));
            const char *const *f = &t.includes, *const *r = &raw->includes;
            const size_t n = (size_t)((const char *const *)(&t + 1) - f);
            for (size_t k = 0; k < n; k++) {
                CU_ASSERT_TRUE(!f[k] || (!strstr(f[k], "$F") && !strstr(f[k], "$B") && !strstr(f[k], "$Q") &&
                                         !strstr(f[k], "$H")));
                if (isa != QG_ISA_RVV)
                    CU_ASSERT_PTR_EQUAL(f[k], r[k]);
            }
            if (isa == QG_ISA_RVV) /* the 32-bit vector type names its group: m1, m2, m4, m8 */
                CU_ASSERT_PTR_NOT_NULL(strstr(t.vf, (const char *[]){"m1", "m2", "m4", "m8"}[g]));
            qg_isa_spelling_release(&t, raw);
        }
    }
}

/* The kernel builder printed as C (lower/kernel_builder.h): a few calls,
 * their exact text. */
static void test_c_printer_spells_calls(void) {
    qg_spec sp;
    qg_error err = {0};
    CU_ASSERT_EQUAL_FATAL(
        qg_spec_load_string("{\"name\": \"net\", \"dtype\": \"quint8\"}", "<test>", NULL, 0, &sp, &err), QG_OK);
    qg_text text = {0};
    qg_kernel_loops lp;
    qg_kernel_loops_of(&sp, QG_ISA_AVX2, QG_K_QUANTIZE, &lp);
    emitter e = {&text, &sp, qg_isa_spelling_of(QG_ISA_AVX2), qg_target_of(QG_ISA_AVX2), "net", &lp, 8, false, "8",
                 0,     0};
    c_kb c;
    qg_c_kb_init(&c, &e);
    qg_kb *b = &c.kb;
    const qg_kb_ops *B = b->ops;
    c.depth = 1;
    /* sums of literals fold; the others print with the parentheses C needs */
    qg_kv *k = B->let(b, "k", B->bin(b, QG_KB_ADD, B->imm(b, QG_KT_SIZE, 3), B->imm(b, QG_KT_SIZE, 4)));
    qg_kv *n = B->let(
        b, "n2", B->bin(b, QG_KB_DIV, B->bin(b, QG_KB_ADD, k, B->imm(b, QG_KT_SIZE, 1)), B->imm(b, QG_KT_SIZE, 8)));
    qg_kvar *i = B->var(b, "i", QG_KT_SIZE, B->imm(b, QG_KT_SIZE, 0));
    B->loop_open(b, "vectors", i, QG_KTEST_WHOLE_STEPS, n, B->imm(b, QG_KT_SIZE, 8));
    B->if_open(b, B->bin(b, QG_KB_EQ, B->get(b, i), B->cast(b, QG_KT_SIZE, B->bin(b, QG_KB_SUB, n, n))));
    B->call(b, NULL, "f", NULL, (qg_kv *[]){B->imm(b, QG_KT_I64, -3), B->imm(b, QG_KT_PTR, 0)}, 2);
    B->if_close(b);
    B->loop_close(b);
    CU_ASSERT_TRUE(qg_text_ok(&text));
    CU_ASSERT_STRING_EQUAL(text.p, "    const size_t k = 7;\n"
                                   "    const size_t n2 = (k + 1) / 8;\n"
                                   "    size_t i = 0;\n"
                                   "    for (const size_t i_end = n2 < 8 ? 0 : n2 - 8 + 1; i < i_end; i += 8) {\n"
                                   "        if (i == (size_t)(n2 - n2)) {\n"
                                   "            f(-3LL, NULL);\n"
                                   "        }\n"
                                   "    }\n");
    qg_c_kb_free(&c);
    qg_text_free(&text);
}

/* One partial vector printed as C, as the loops' tail_kind says: NEON's
 * through zeroed stack buffers, AVX2's with its masked float load and,
 * where it has no masked byte store, a buffer for the output alone. */
static char *partial_quantize(qg_isa isa) {
    qg_spec sp;
    qg_error err = {0};
    if (qg_spec_load_string("{\"name\": \"net\", \"dtype\": \"quint8\"}", "<test>", NULL, 0, &sp, &err) != QG_OK)
        return NULL;
    qg_text text = {0};
    qg_kernel_loops lp;
    qg_plan plan;
    qg_kernel_loops_of(&sp, isa, QG_K_QUANTIZE, &lp);
    if (qg_plan_build_for(&sp, isa, QG_K_QUANTIZE, &plan, &err) != QG_OK)
        return NULL;
    const qg_target *t = qg_target_of(isa);
    emitter e = {&text, &sp, qg_isa_spelling_of(isa), t, "net", &lp, t->lanes, false, "", 0, 0};
    snprintf(e.lanes_str, sizeof e.lanes_str, "%d", t->lanes);
    c_kb c;
    qg_c_kb_init(&c, &e);
    qg_kb *b = &c.kb;
    const qg_kb_ops *B = b->ops;
    c.depth = 1;
    qg_kv *at = B->let(b, "at", B->imm(b, QG_KT_SIZE, 0)), *r = B->let(b, "r", B->imm(b, QG_KT_SIZE, 3));
    B->vector_open(b, &plan, &(qg_kvector){.at = at, .count = r, .partial = true, .slot = -1});
    qg_kv *mask_out, *nan, *q = B->body(b, B->load(b), NULL, QG_KBODY_RESULT, &mask_out, &nan);
    B->store(b, q);
    B->vector_close(b);
    qg_c_kb_free(&c);
    return text.p;
}

static void test_c_printer_spells_partial_vectors(void) {
    char *neon = partial_quantize(QG_ISA_NEON);
    CU_ASSERT_PTR_NOT_NULL_FATAL(neon);
    CU_ASSERT_PTR_NOT_NULL(strstr(neon, "    float inb[4] = {0};\n    uint8_t outb[4];\n"
                                        "    memcpy(inb, x + at, r * sizeof inb[0]);\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(neon, "(outb, rt);\n    memcpy(q + at, outb, r * sizeof outb[0]);\n"));
    free(neon);
    char *avx2 = partial_quantize(QG_ISA_AVX2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(avx2);
    CU_ASSERT_PTR_NOT_NULL(strstr(avx2, "    const __m256i tm = "));
    CU_ASSERT_PTR_NOT_NULL(strstr(avx2, "(x + at, tm);\n"));
    CU_ASSERT_PTR_NULL(strstr(avx2, "inb"));
    CU_ASSERT_PTR_NOT_NULL(strstr(avx2, "    uint8_t outb[8];\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(avx2, "memcpy(q + at, outb, r * sizeof outb[0]);\n"));
    free(avx2);
}

int main(void) {
    static const qg_test tests[] = {
        {"every operation spelled with its operands", test_every_operation_spelled_with_its_operands},
        {"strips spelled exactly for scalable ISAs", test_strips_spelled_exactly_for_scalable_isas},
        {"the op table is whole", test_op_table_is_whole},
        {"wrapping keeps tokens within 100 columns", test_wrap_keeps_tokens_within_width},
        {"register groups spelled before printing", test_register_groups_spelled_before_printing},
        {"the kernel builder printed as C", test_c_printer_spells_calls},
        {"a partial vector printed as C", test_c_printer_spells_partial_vectors},
    };
    return QG_RUN("lowering", tests);
}
