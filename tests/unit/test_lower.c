/* The lowering on its own (lower/): a builder that records its calls as
 * one line each shows which functions, loops, ifs, parameters and calls
 * an op's entry is made of for a spec class, with no backend involved
 * (the printers on their own: unit.lowering, unit.llvm_lowering). A
 * failure here says lowering, not printing or kernel arithmetic. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test_util.h"
#include "lower/kernel_builder.h"
#include "plan/kernel_loops.h"
#include "util/text_buf.h"

/* ---- a builder that records ---------------------------------------------- */

/* Values are the numbers of the calls that made them, "v<k>". */
struct qg_kv {
    char name[16];
};

typedef struct trace_kb {
    qg_kb kb;
    qg_text log;
    struct qg_kv values[256];
    struct qg_kvar {
        int id;
    } vars[8];
    int nvalues, nvars;
    bool detail; /* a vector's calls too, not only its opening */
} trace_kb;

static trace_kb *tb(qg_kb *b) { return (trace_kb *)b; }

static qg_kv *value(qg_kb *b) {
    trace_kb *t = tb(b);
    qg_kv *v = &t->values[t->nvalues < 255 ? t->nvalues++ : 255];
    snprintf(v->name, sizeof v->name, "v%d", (int)(v - t->values));
    return v;
}

static void rec(qg_kb *b, const char *fmt, ...) {
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    qg_text_printf(&tb(b)->log, "%s\n", line);
}

static void t_open_link(qg_kb *b, const qg_op_info *o, const char *infix) { rec(b, "link %s%s", o->name, infix); }
static qg_kv *t_arg(qg_kb *b, qg_arg_kind kind) {
    (void)kind;
    return value(b);
}
static void t_close_fn(qg_kb *b, qg_kv *v) { rec(b, v ? "return" : "end"); }
static void t_ret(qg_kb *b) { rec(b, "return"); }
static qg_kv *t_link_ref(qg_kb *b, const qg_op_info *o, const char *infix) {
    rec(b, "ref %s%s", o->name, infix);
    return value(b);
}
static qg_kv *t_spec_ref(qg_kb *b) { return value(b); }
static qg_kv *t_span_ref(qg_kb *b, const char *suffix) {
    rec(b, "span%s", suffix);
    return value(b);
}
static qg_kv *t_minmax_ref(qg_kb *b) {
    rec(b, "minmax");
    return value(b);
}
static void t_comment(qg_kb *b, const char *text) { rec(b, "comment %s", text); }
static qg_kv *t_imm(qg_kb *b, qg_kt t, long long v) {
    (void)t;
    (void)v;
    return value(b);
}
static qg_kv *t_fimm(qg_kb *b, float v) {
    rec(b, "float %g", (double)v);
    return value(b);
}
static qg_kv *t_bin(qg_kb *b, qg_kbin op, qg_kv *x, qg_kv *y) {
    (void)op, (void)x, (void)y;
    return value(b);
}
static qg_kv *t_select(qg_kb *b, qg_kv *c, qg_kv *x, qg_kv *y) {
    (void)c, (void)x, (void)y;
    return value(b);
}
static qg_kv *t_cast(qg_kb *b, qg_kt t, qg_kv *v) {
    (void)t, (void)v;
    return value(b);
}
static qg_kv *t_nonnull(qg_kb *b, qg_kv *p) {
    (void)p;
    return value(b);
}
static void t_discard(qg_kb *b, qg_kv *v) {
    (void)v;
    rec(b, "discard");
}
static qg_kv *t_let(qg_kb *b, const char *name, qg_kv *v) {
    (void)v;
    rec(b, "let %s", name);
    return value(b);
}
static qg_kv *t_field(qg_kb *b, qg_kv *p, qg_kfield f) {
    (void)p;
    rec(b, "field %d", (int)f);
    return value(b);
}
static qg_kv *t_index(qg_kb *b, qg_kt t, qg_kv *p, qg_kv *i, bool or_zero) {
    (void)t, (void)p, (void)i;
    rec(b, or_zero ? "index or zero" : "index");
    return value(b);
}
static qg_kvar *t_var(qg_kb *b, const char *name, qg_kt t, qg_kv *init) {
    (void)t, (void)init;
    rec(b, "var %s", name);
    trace_kb *k = tb(b);
    return &k->vars[k->nvars < 7 ? k->nvars++ : 7];
}
static qg_kv *t_get(qg_kb *b, qg_kvar *v) {
    (void)v;
    return value(b);
}
static void t_set(qg_kb *b, qg_kvar *v, qg_kv *x) {
    (void)v, (void)x;
    rec(b, "set");
}
static void t_loop_open(qg_kb *b, const char *name, qg_kvar *v, qg_ktest test, qg_kv *bound, qg_kv *step) {
    (void)v, (void)bound, (void)step;
    rec(b, "loop %s%s", name, test == QG_KTEST_WHOLE_STEPS ? " whole steps" : "");
}
static void t_loop_close(qg_kb *b) { rec(b, "loop end"); }
static void t_if_open(qg_kb *b, qg_kv *c) {
    (void)c;
    rec(b, "if");
}
static void t_if_close(qg_kb *b) { rec(b, "if end"); }
static qg_kv *t_call(qg_kb *b, qg_kv *fn, const char *name, const qg_kt *ret, qg_kv **args, int n) {
    (void)args;
    rec(b, "call %s/%d", fn ? "ref" : name, n);
    return ret ? value(b) : NULL;
}
static void t_zero_bytes(qg_kb *b, qg_kv *p, qg_kv *n) {
    (void)p, (void)n;
    rec(b, "zero bytes");
}
static qg_kv *t_param(qg_kb *b, qg_plan_input in, qg_kv *s) {
    (void)s;
    rec(b, "param %d", (int)in);
    return value(b);
}
static qg_kv *t_rows_ref(qg_kb *b) {
    rec(b, "rows ref");
    return value(b);
}
static qg_kv *t_elem_ptr(qg_kb *b, qg_kt t, qg_kv *p, qg_kv *i) {
    (void)p, (void)i;
    rec(b, t == QG_KT_I32 ? "row of int32" : "row of float");
    return value(b);
}

static void t_open_minmax(qg_kb *b, const qg_plan *widen, qg_kv *args[4], bool block) {
    rec(b, widen ? "minmax span, widened" : block ? "minmax span, one block" : "minmax span");
    for (int k = 0; k < 4; k++)
        args[k] = value(b);
}
static qg_kv *t_values(qg_kb *b, qg_kv *x, qg_kv *at, qg_kv *count) {
    (void)x, (void)at;
    rec(b, count ? "values part" : "values");
    return value(b);
}
static qg_kv *t_vsplat(qg_kb *b, qg_kv *f) {
    (void)f;
    return value(b);
}
static qg_kv *t_vop(qg_kb *b, qg_opcode op, qg_kv *x, qg_kv *y) {
    (void)op, (void)x, (void)y;
    return value(b);
}
static qg_kv *t_reduce(qg_kb *b, qg_opcode op, qg_kv *v) {
    (void)v;
    rec(b, "reduce %s", op == QG_OP_MIN_F ? "min" : op == QG_OP_MAX_F ? "max" : "all");
    return value(b);
}
static qg_kv *t_lanes(qg_kb *b) { return value(b); }
static void t_store_at(qg_kb *b, qg_kv *p, qg_kv *v) {
    (void)p, (void)v;
    rec(b, "store");
}

static void t_open_rows(qg_kb *b, const qg_plan *p, qg_kv *args[5], qg_kv *rows[QG_IN_COUNT]) {
    rec(b, "rows");
    for (int k = 0; k < 5; k++)
        args[k] = value(b);
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++)
        rows[in] = p->uses[in] ? value(b) : NULL;
}
static void t_column_open(qg_kb *b, const qg_plan *p, qg_kv *count) {
    (void)p;
    rec(b, count ? "column strip" : "column");
}
static qg_kv *t_column_param(qg_kb *b, const qg_plan *p, qg_plan_input in, qg_kv *row, qg_kv *j, qg_kv *count) {
    (void)p, (void)in, (void)row, (void)j, (void)count;
    return value(b);
}
static void t_column_close(qg_kb *b) { (void)b; }
static void t_vector_open(qg_kb *b, const qg_plan *p, const qg_kvector *v) {
    (void)p;
    rec(b, v->partial ? "vector part" : "vector");
}
static void t_vector_close(qg_kb *b) {
    if (tb(b)->detail)
        rec(b, "vector end");
}
static qg_kv *t_load(qg_kb *b) {
    if (tb(b)->detail)
        rec(b, "load");
    return value(b);
}
static qg_kv *t_load_mask(qg_kb *b, qg_kv *bits, int first) {
    if (tb(b)->detail)
        rec(b, bits ? "mask of bits %d" : "load mask", first);
    return value(b);
}
static qg_kv *t_body(qg_kb *b, qg_kv *in, qg_kv *m, qg_kbody form, qg_kv **mask_out, qg_kv **nan) {
    (void)in;
    static const char *const forms[] = {"result", "grouped", "ordered"};
    if (tb(b)->detail)
        rec(b, "body %s%s", forms[form], m ? ", mask" : "");
    *mask_out = value(b);
    *nan = value(b);
    return value(b);
}
static void t_store(qg_kb *b, qg_kv *r) {
    (void)r;
    if (tb(b)->detail)
        rec(b, "store vector");
}
static void t_store_mask(qg_kb *b, qg_kv *m) {
    (void)m;
    if (tb(b)->detail)
        rec(b, "store mask");
}
static qg_kv *t_group_mask_in(qg_kb *b, qg_kv *at) {
    (void)at;
    rec(b, "group mask in");
    return value(b);
}
static void t_group_store(qg_kb *b, qg_kv *const r[4], qg_kv *at) {
    (void)r, (void)at;
    rec(b, "group store");
}
static void t_group_mask_out(qg_kb *b, qg_kv *const m[4], qg_kv *at) {
    (void)m, (void)at;
    rec(b, "group mask out");
}
static qg_kv *t_any_nan4(qg_kb *b, qg_kv *const nan[4]) {
    (void)nan;
    rec(b, "any nan");
    return value(b);
}
static void t_loop_continue(qg_kb *b) { rec(b, "continue"); }
static void t_open_span(qg_kb *b, const qg_plan *p, const char *suffix, bool out_of_line) {
    (void)p;
    rec(b, "open span%s%s", suffix, out_of_line ? ", out of line" : "");
}
static qg_kv *t_span_arg(qg_kb *b, int k) {
    (void)k;
    return value(b);
}
static qg_kv *t_to_boundary(qg_kb *b, qg_kv *ptr, qg_kv *base, bool of_output, unsigned bytes) {
    (void)ptr, (void)base, (void)of_output, (void)bytes;
    rec(b, "to boundary");
    return value(b);
}

static const qg_kb_ops trace_ops = {
    .open_rows = t_open_rows,
    .column_open = t_column_open,
    .column_param = t_column_param,
    .column_close = t_column_close,
    .vector_open = t_vector_open,
    .vector_close = t_vector_close,
    .load = t_load,
    .load_mask = t_load_mask,
    .body = t_body,
    .store = t_store,
    .store_mask = t_store_mask,
    .group_mask_in = t_group_mask_in,
    .group_store = t_group_store,
    .group_mask_out = t_group_mask_out,
    .any_nan4 = t_any_nan4,
    .open_span = t_open_span,
    .loop_continue = t_loop_continue,
    .span_arg = t_span_arg,
    .to_boundary = t_to_boundary,
    .open_minmax = t_open_minmax,
    .values = t_values,
    .vsplat = t_vsplat,
    .vop = t_vop,
    .reduce = t_reduce,
    .lanes = t_lanes,
    .store_at = t_store_at,
    .open_link = t_open_link,
    .arg = t_arg,
    .close_fn = t_close_fn,
    .ret = t_ret,
    .link_ref = t_link_ref,
    .spec_ref = t_spec_ref,
    .span_ref = t_span_ref,
    .minmax_ref = t_minmax_ref,
    .comment = t_comment,
    .imm = t_imm,
    .fimm = t_fimm,
    .bin = t_bin,
    .select = t_select,
    .cast = t_cast,
    .nonnull = t_nonnull,
    .discard = t_discard,
    .let = t_let,
    .field = t_field,
    .index = t_index,
    .var = t_var,
    .get = t_get,
    .set = t_set,
    .loop_open = t_loop_open,
    .loop_close = t_loop_close,
    .if_open = t_if_open,
    .if_close = t_if_close,
    .call = t_call,
    .zero_bytes = t_zero_bytes,
    .param = t_param,
    .rows_ref = t_rows_ref,
    .elem_ptr = t_elem_ptr,
};

/* The trace of `op`'s entry for the spec in `json` on `isa` (with `span`:
 * its spans). */
static char *trace_on(const char *json, qg_kernel_op op, qg_isa isa, bool span) {
    qg_spec sp;
    qg_error err = {0};
    if (qg_spec_load_string(json, "<test>", NULL, 0, &sp, &err) != QG_OK) {
        fprintf(stderr, "spec: %s\n", err.message);
        return NULL;
    }
    qg_kernel_loops lp;
    qg_plan plan;
    qg_kernel_loops_of(&sp, isa, op, &lp);
    if (qg_plan_build_for(&sp, isa, op, &plan, &err) != QG_OK)
        return NULL;
    trace_kb t = {.kb = {&trace_ops, &lp}, .detail = span};
    int params = 0;
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++)
        params += plan.uses[in];
    rec(&t.kb, "parameters %d", params);
    if (span)
        qg_lower_span(&t.kb, &plan);
    else if (op == QG_K_OBSERVE)
        qg_lower_observe_entry(&t.kb, &sp);
    else if (op == QG_K_REQUANTIZE)
        qg_lower_requantize_entry(&t.kb, &plan);
    else
        qg_lower_entry(&t.kb, &plan);
    return t.log.p;
}

static char *trace_of(const char *json, qg_kernel_op op) { return trace_on(json, op, QG_ISA_AVX2, false); }

static bool has(const char *trace, const char *line) {
    char want[96];
    snprintf(want, sizeof want, "\n%s\n", line);
    char *padded = malloc(strlen(trace) + 2);
    if (!padded)
        return false;
    padded[0] = '\n';
    strcpy(padded + 1, trace);
    const bool found = strstr(padded, want) != NULL;
    free(padded);
    return found;
}

static int count_of(const char *trace, const char *line) {
    int n = 0;
    char want[96];
    snprintf(want, sizeof want, "%s\n", line);
    for (const char *p = trace; (p = strstr(p, want)) != NULL; p += strlen(want))
        n += p == trace || p[-1] == '\n';
    return n;
}

/* A per-tensor spec walks the tensor once: no loop, s and z from qp[0]. */
static void test_per_tensor_walks_once(void) {
    char *t = trace_of("{\"name\": \"t\", \"dtype\": \"quint8\"}", QG_K_FAKE_QUANT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(has(t, "link fake_quant"));
    /* missing qparams, or tensors at n > 0: the reference's check, before anything is written */
    CU_ASSERT_TRUE(strstr(t, "if\nreturn\nif end\nif\nreturn\nif end\n") != NULL);
    CU_ASSERT_FALSE(has(t, "loop runs"));
    CU_ASSERT_TRUE(has(t, "let s0"));
    CU_ASSERT_TRUE(has(t, "let z0"));
    CU_ASSERT_TRUE(has(t, "span"));
    /* x, y, mask, base, len and the plan's parameters */
    char call[32];
    snprintf(call, sizeof call, "call ref/%d", 5 + atoi(t + strlen("parameters ")));
    CU_ASSERT_TRUE(has(t, call));
    free(t);
}

/* Per-channel: runs of inner elements, a channels-last branch first. */
static void test_per_channel_runs_and_channels_last(void) {
    char *t = trace_of("{\"name\": \"t\", \"base\": \"torch.x86.weight\", \"channel_len\": 16}", QG_K_QUANTIZE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(has(t, "let C"));
    /* channels-last: the runtime's table, padded to AVX2's 8 lanes, its
     * rows (x, q, n and a row per parameter: C is the spec's), the table
     * freed; then the runs */
    CU_ASSERT_TRUE(has(t, "let padded\ncall qg_chan_table_new/5\nlet tbl\nif"));
    CU_ASSERT_TRUE(has(t, "loop runs"));
    CU_ASSERT_TRUE(strstr(t, "call qg_chan_table_free/1") < strstr(t, "loop runs"));
    CU_ASSERT_TRUE(has(t, "row of int32")); /* z, after the float rows */
    /* x, q, base, len and the plan's parameters, no mask */
    const int params = atoi(t + strlen("parameters "));
    char call[32];
    snprintf(call, sizeof call, "rows ref\ncall ref/%d", 3 + params);
    CU_ASSERT_TRUE(has(t, call));
    snprintf(call, sizeof call, "call ref/%d", 4 + params);
    CU_ASSERT_TRUE(params > 0);
    CU_ASSERT_TRUE(has(t, call));
    CU_ASSERT_FALSE(has(t, "zero bytes"));
    free(t);
}

/* Fixed qparams come from the spec: qp is not read. */
static void test_fixed_qparams_read_no_qparams(void) {
    char *t = trace_of("{\"name\": \"t\", \"dtype\": \"quint8\", \"observer\": {\"type\": \"fixed_qparams\", "
                       "\"scale\": 0.00390625, \"zero_point\": 0}}",
                       QG_K_FAKE_QUANT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(has(t, "discard"));
    CU_ASSERT_TRUE(has(t, "float 0.00390625"));
    CU_ASSERT_FALSE(has(t, "field 0")); /* QG_KF_QP_SCALE */
    /* packed masks are cleared before the spans set their bits */
    CU_ASSERT_FALSE(has(t, "zero bytes"));
    free(t);
    t = trace_of("{\"name\": \"t\", \"dtype\": \"quint8\", \"compat_mask\": true}", QG_K_FAKE_QUANT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(has(t, "zero bytes"));
    free(t);
}

/* Per-group and 4-bit specs: the walk is a link, forwarders wrap it. */
static void test_drivers_wrap_the_walk(void) {
    char *t = trace_of("{\"name\": \"t\", \"dtype\": \"quint4\", \"qscheme\": \"per_group_affine\", \"channel_len\": "
                       "21, \"group_size\": 8, \"ch_axis\": 1}",
                       QG_K_QUANTIZE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(has(t, "link quantize_blocks"));
    CU_ASSERT_TRUE(has(t, "ref quantize_blocks"));
    CU_ASSERT_TRUE(has(t, "call qg_group_quantize/6"));
    CU_ASSERT_TRUE(has(t, "ref quantize_bytes"));
    CU_ASSERT_TRUE(has(t, "call qg_pack4_quantize/6"));
    CU_ASSERT_TRUE(has(t, "field 2")); /* QG_KF_QP_CHANNELS: the driver's blocks */
    free(t);
}

/* requantize: runs of output channels, the bias optional, no mask. */
static void test_requantize_runs(void) {
    char *t = trace_of("{\"name\": \"t\", \"dtype\": \"quint8\"}", QG_K_REQUANTIZE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(has(t, "loop runs"));
    CU_ASSERT_TRUE(has(t, "index or zero"));
    CU_ASSERT_TRUE(has(t, "let b0"));
    CU_ASSERT_FALSE(has(t, "qg_chan_table_new"));
    free(t);
}

/* observe: the runtime's walk with the kernel's reduction, or without one. */
static void test_observe_hands_its_reduction(void) {
    char *t = trace_of("{\"name\": \"t\", \"dtype\": \"quint8\"}", QG_K_OBSERVE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(has(t, "minmax"));
    CU_ASSERT_TRUE(has(t, "call qg_observe_with/6"));
    free(t);
    t = trace_of("{\"name\": \"t\", \"dtype\": \"quint8\", \"observer\": {\"type\": \"histogram\"}}", QG_K_OBSERVE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_FALSE(has(t, "minmax"));
    CU_ASSERT_TRUE(has(t, "comment histogram observers keep no min/max to vectorize"));
    free(t);
}

/* The trace of `op`'s channels-last rows for the spec in `json` on `isa`;
 * NULL where the op has none. */
static char *rows_trace(const char *json, qg_kernel_op op, qg_isa isa) {
    qg_spec sp;
    qg_error err = {0};
    qg_kernel_loops lp;
    qg_plan plan;
    if (qg_spec_load_string(json, "<test>", NULL, 0, &sp, &err) != QG_OK)
        return NULL;
    qg_kernel_loops_of(&sp, isa, op, &lp);
    if (qg_plan_build_for(&sp, isa, op, &plan, &err) != QG_OK || !qg_lower_has_rows(&lp))
        return NULL;
    trace_kb t = {.kb = {&trace_ops, &lp}};
    qg_lower_rows(&t.kb, &plan);
    return t.log.p;
}

/* Channels-last rows: whole rows of a spec-fixed C of at most 16 vectors
 * have their columns written out, 16 channels on AVX2 two whole ones, on
 * AVX-512 one; 20 on AVX2 two whole and a partial one; rows on scalable
 * ISAs, and the last partial row, loop over whole columns and end in one
 * partial column. Per-tensor specs have no rows. */
static void test_channels_last_rows(void) {
    static const char *c16 = "{\"name\": \"t\", \"base\": \"torch.x86.weight\", \"channel_len\": 16}";
    char *t = rows_trace(c16, QG_K_QUANTIZE, QG_ISA_AVX2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* a partial column on fixed widths calls the span of one partial vector */
    CU_ASSERT_TRUE(strstr(t, "rows\nvar row\nloop rows whole steps\ncolumn\nvector\ncolumn\nvector\nloop end\nif\n"
                             "let m\nvar j\nloop columns whole steps\ncolumn\nvector\nloop end\nif\ncolumn\n"
                             "span_part\ncall ref/") == t);
    CU_ASSERT_TRUE(strstr(t, "if end\nif end\nend\n") != NULL);
    free(t);
    t = rows_trace(c16, QG_K_FAKE_QUANT, QG_ISA_AVX512);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(strstr(t, "loop rows whole steps\ncolumn\nvector\nloop end\n") != NULL);
    free(t);
    t = rows_trace("{\"name\": \"t\", \"base\": \"torch.x86.weight\", \"channel_len\": 20}", QG_K_QUANTIZE,
                   QG_ISA_AVX2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(strstr(t, "loop rows whole steps\ncolumn\nvector\ncolumn\nvector\ncolumn\nspan_part\ncall ref/") !=
                   NULL);
    free(t);
    t = rows_trace("{\"name\": \"t\", \"base\": \"torch.x86.weight\", \"channel_len\": 20}", QG_K_QUANTIZE, QG_ISA_SVE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(count_of(t, "loop columns whole steps"), 2);
    /* a scalable partial column is a strip, its parameters read by its lanes */
    CU_ASSERT_EQUAL(count_of(t, "column strip"), 2);
    CU_ASSERT_EQUAL(count_of(t, "vector part"), 2);
    CU_ASSERT_EQUAL(count_of(t, "span_part"), 0);
    free(t);
    CU_ASSERT_PTR_NULL(rows_trace("{\"name\": \"t\", \"dtype\": \"quint8\"}", QG_K_QUANTIZE, QG_ISA_AVX2));
}

/* The trace of observe's reduction for the spec in `json` on `isa`. */
static char *minmax_trace(const char *json, qg_isa isa) {
    qg_spec sp;
    qg_error err = {0};
    if (qg_spec_load_string(json, "<test>", NULL, 0, &sp, &err) != QG_OK)
        return NULL;
    qg_kernel_loops lp;
    qg_kernel_loops_of(&sp, isa, QG_K_OBSERVE, &lp);
    trace_kb t = {.kb = {&trace_ops, &lp}};
    qg_lower_minmax(&t.kb, &sp, isa);
    return t.log.p ? t.log.p : calloc(1, 1);
}

/* observe's reduction: unrolled accumulators where the target unrolls,
 * whole vectors, then one part vector (none where a vector is one lane);
 * 16-bit float types widen their codes; no reduction without a min/max. */
static void test_minmax_reduction(void) {
    static const char *minmax = "{\"name\": \"t\", \"dtype\": \"quint8\"}";
    char *t = minmax_trace(minmax, QG_ISA_AVX2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(has(t, "minmax span"));
    CU_ASSERT_TRUE(has(t, "loop unrolled whole steps"));
    CU_ASSERT_TRUE(has(t, "loop vectors whole steps"));
    CU_ASSERT_EQUAL(count_of(t, "values"), 5);
    CU_ASSERT_EQUAL(count_of(t, "values part"), 1);
    CU_ASSERT_TRUE(strstr(t, "store\nreduce max\nstore\nreduce all\nreturn\n") != NULL);
    free(t);
    t = minmax_trace(minmax, QG_ISA_SVE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_FALSE(has(t, "loop unrolled whole steps"));
    CU_ASSERT_EQUAL(count_of(t, "values part"), 1);
    free(t);
    t = minmax_trace(minmax, QG_ISA_SCALAR);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(count_of(t, "values part"), 0);
    free(t);
    t = minmax_trace("{\"name\": \"t\", \"dtype\": \"quint8\", \"float_type\": \"bfloat16\"}", QG_ISA_NEON);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(has(t, "minmax span, widened"));
    free(t);
    t = minmax_trace("{\"name\": \"t\", \"dtype\": \"quint8\", \"observer\": {\"type\": \"histogram\"}}", QG_ISA_AVX2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(t, "");
    free(t);
}

/* A vector's calls in order (lower_vector.c), as the trace shows them. */
static const char *const quantize_kept = "vector\nload\nbody grouped\nvector end\n";
static const char *const quantize_stored = "vector\nload\nbody result\nstore vector\nvector end\n";

/* Spans: the main loop's four vectors keep what their group stores (the
 * q - z of quantize where the store adds z; their masks on NEON, whose
 * four vectors' bits are whole bytes) or tests for NaN once; single
 * vectors and the partial one store their own. */
static void test_span_vectors(void) {
    static const char *q8 = "{\"name\": \"t\", \"dtype\": \"qint8\"}";
    char *t = trace_on(q8, QG_K_QUANTIZE, QG_ISA_AVX512, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    char four[512] = "loop unrolled whole steps\n";
    for (int k = 0; k < 4; k++)
        strcat(four, quantize_kept);
    strcat(four, "group store\nloop end\nloop vectors whole steps\n");
    strcat(four, quantize_stored);
    strcat(four, "loop end\nif\nlet r\nvector part\nload\nbody result\nstore vector\nvector end\nif end\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(t, four));
    free(t);
    /* on AVX2, one NaN test per four vectors, whose results are stored after it */
    t = trace_on(q8, QG_K_FAKE_QUANT, QG_ISA_AVX2, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(has(t, "open span_vectors, out of line"));
    CU_ASSERT_EQUAL(count_of(t, "body ordered"), 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "any nan\nif\nspan_vectors\ncall ref/"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "if end\nvector\nstore vector\nvector end\nvector\nstore vector\n"));
    CU_ASSERT_EQUAL(count_of(t, "store mask"), 4 + 1 + 1 + 1); /* after the test, span_vectors, single, part */
    free(t);
    /* NEON, packed masks: four vectors' bits read and written at once */
    static const char *bits = "{\"name\": \"t\", \"dtype\": \"qint8\", \"compat_mask\": true}";
    t = trace_on(bits, QG_K_FAKE_QUANT, QG_ISA_NEON, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(has(t, "group mask out"));
    CU_ASSERT_FALSE(has(t, "group mask in"));
    free(t);
    t = trace_on(bits, QG_K_FAKE_QUANT_BACKWARD, QG_ISA_NEON, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "group mask in\nvector\nload\nmask of bits 0\nbody result, mask\n"));
    CU_ASSERT_TRUE(has(t, "mask of bits 12"));
    CU_ASSERT_EQUAL(count_of(t, "load mask"), 2); /* the single vectors' and the partial one's */
    free(t);
}

int main(void) {
    static const qg_test tests[] = {
        {"a per-tensor spec walks the tensor once", test_per_tensor_walks_once},
        {"per-channel: runs, a channels-last branch first", test_per_channel_runs_and_channels_last},
        {"fixed qparams read no qparams", test_fixed_qparams_read_no_qparams},
        {"drivers wrap the walk", test_drivers_wrap_the_walk},
        {"requantize runs with an optional bias", test_requantize_runs},
        {"observe hands its reduction to the runtime", test_observe_hands_its_reduction},
        {"observe's min/max reduction", test_minmax_reduction},
        {"channels-last rows", test_channels_last_rows},
        {"span vectors", test_span_vectors},
    };
    return QG_RUN("lower", tests);
}
