/* Every public function of include/qgen/ called with NULL in each pointer
 * argument it cannot take: a QG_ERR_ARG naming the function and the
 * argument, or no effect for functions without a status; never a crash.
 *
 * usage: test_null_args TMPDIR */
#include <string.h>
#include <sys/stat.h>

#include "../link_counters.h"
#include "../test_util.h"
#include "qgen/generate.h"
#include "qgen/jit.h"
#include "qgen/kernel_support.h"
#include "qgen/parallel.h"
#include "qgen/runtime.h"

static char dir[900];
static qg_error err;
static qg_spec sp;

/* The status was QG_ERR_ARG and the message names `fn` and `arg`. */
#define REFUSED(call, fn, arg)                                                                                         \
    do {                                                                                                               \
        memset(&err, 0, sizeof err);                                                                                   \
        CU_ASSERT_EQUAL(call, QG_ERR_ARG);                                                                             \
        ASSERT_CONTAINS(err.message, fn ": " arg " is NULL; expected ");                                               \
    } while (0)

static void test_spec_api(void) {
    qg_spec out;
    const char *sets[] = {"dtype=qint8"};
    REFUSED(qg_spec_load_string(NULL, "o", NULL, 0, &out, &err), "qg_spec_load_string", "json");
    REFUSED(qg_spec_load_string("{\"name\": \"a\"}", "o", NULL, 0, NULL, &err), "qg_spec_load_string", "out");
    REFUSED(qg_spec_load_string("{\"name\": \"a\"}", "o", NULL, 1, &out, &err), "qg_spec_load_string", "sets");
    CU_ASSERT_EQUAL(qg_spec_load_string("{\"name\": \"a\"}", NULL, sets, 1, &out, &err), QG_OK); /* origin optional */
    REFUSED(qg_spec_load_file(NULL, NULL, 0, &out, &err), "qg_spec_load_file", "path");
    REFUSED(qg_spec_load_file("x.json", NULL, 0, NULL, &err), "qg_spec_load_file", "out");
    REFUSED(qg_spec_validate(NULL, &err), "qg_spec_validate", "spec");
    CU_ASSERT_PTR_NULL(qg_spec_to_json(NULL));
    qg_dtype_range(QG_QINT8, NULL, NULL);
    CU_ASSERT_PTR_NULL(qg_dtype_name((qg_dtype)99));
    CU_ASSERT_EQUAL(qg_error_set(NULL, QG_ERR_IO, "no error object"), QG_ERR_IO);
    /* through a pointer, which carries no format attribute for the compilers to check */
    qg_status (*set)(qg_error *, qg_status, const char *, ...) = qg_error_set;
    CU_ASSERT_EQUAL(set(&err, QG_ERR_IO, NULL), QG_ERR_IO);
    CU_ASSERT_STRING_EQUAL(err.message, qg_status_name(QG_ERR_IO));
}

/* The per-group drivers with a spec of another qscheme (group_size 0):
 * nothing happens, at any n (they divided by the group size). */
static void test_group_drivers_other_qscheme(void) {
    float x[4] = {1, 2, 3, 4}, y[4] = {0};
    int32_t z = 0;
    float s = 0.1f;
    uint8_t q[4] = {7, 7, 7, 7}, m[4] = {9, 9, 9, 9};
    qg_qparams qp = {&s, &z, NULL, 1, 1};
    CU_ASSERT_FALSE_FATAL(qg_qscheme_is_per_group(sp.qscheme));
    qg_test_link_calls = 0;
    for (size_t n = 0; n <= 4; n += 4) {
        qg_group_quantize(&sp, qg_test_link_quantize, x, q, n, &qp);
        qg_group_dequantize(&sp, qg_test_link_dequantize, q, y, n, &qp);
        qg_group_fake_quant(&sp, qg_test_link_fake_quant, x, y, m, n, &qp);
    }
    CU_ASSERT_EQUAL(qg_test_link_calls, 0);
    CU_ASSERT_EQUAL(q[0], 7);
    CU_ASSERT_EQUAL(m[0], 9);
    CU_ASSERT_EQUAL(y[0], 0.0f);
}

static void test_reference_ops(void) {
    float x[4] = {1, 2, 3, 4}, y[4], s = 0.1f;
    int32_t z = 0, acc[4] = {0};
    uint8_t q[4], m[4];
    qg_qparams qp = {&s, &z, NULL, 1, 1};
    REFUSED(qg_qparams_validate(NULL, &qp, &err), "qg_qparams_validate", "spec");
    REFUSED(qg_qparams_validate(&sp, NULL, &err), "qg_qparams_validate", "qp");
    qg_qparams no_scale = {NULL, &z, NULL, 1, 1};
    REFUSED(qg_qparams_validate(&sp, &no_scale, &err), "qg_qparams_validate", "qp->scale");
    REFUSED(qg_qparams_validate_n(NULL, &qp, 4, &err), "qg_qparams_validate_n", "spec");
    REFUSED(qg_qparams_validate_n(&sp, &no_scale, 4, &err), "qg_qparams_validate_n", "qp->scale");
    /* the per-group drivers: nothing happens, nothing crashes */
    qg_group_quantize(NULL, NULL, x, q, 4, &qp);
    qg_group_dequantize(&sp, NULL, q, y, 4, &qp);
    qg_group_fake_quant(&sp, NULL, x, y, m, 4, NULL);
    /* no status: nothing happens, nothing crashes */
    qg_ref_quantize(NULL, x, q, 4, &qp);
    qg_ref_quantize(&sp, NULL, q, 4, &qp);
    qg_ref_quantize(&sp, x, NULL, 4, &qp);
    qg_ref_quantize(&sp, x, q, 4, NULL);
    qg_ref_dequantize(&sp, NULL, y, 4, &qp);
    qg_ref_dequantize(&sp, q, NULL, 4, NULL);
    qg_ref_fake_quant(&sp, NULL, y, m, 4, &qp);
    qg_ref_fake_quant(&sp, x, NULL, m, 4, &qp);
    qg_ref_fake_quant(&sp, x, y, m, 4, NULL);
    qg_ref_fake_quant(&sp, NULL, NULL, NULL, 0, &qp); /* n == 0: NULL data is fine */
    qg_ref_fake_quant_backward(&sp, NULL, m, y, 4);
    qg_ref_fake_quant_backward(&sp, x, NULL, y, 4);
    qg_ref_fake_quant_backward(NULL, x, m, y, 4);
    CU_ASSERT_EQUAL(qg_mask_bytes(NULL, 9), 9);
    qg_ref_lsq_forward(&sp, x, y, 4, NULL, &s, 1, 1);
    qg_ref_lsq_forward(&sp, x, y, 4, &s, NULL, 1, 1);
    qg_ref_lsq_backward(&sp, x, x, 4, &s, &s, 1, 1, 1.0f, NULL);
    double ds, dz;
    qg_lsq_grads g = {NULL, &ds, &dz};
    qg_ref_lsq_backward(&sp, x, x, 4, &s, &s, 1, 1, 1.0f, &g);
    qg_lsq_backward(&sp, x, x, 4, &s, &s, 1, 1, 1.0f, NULL);
    qg_lsq_backward(&sp, x, x, 4, &s, &s, 1, 1, 1.0f, &g);
    qg_lsq_backward(&sp, NULL, x, 4, &s, &s, 1, 1, 1.0f, &g);
    qg_ref_quantize_bias(NULL, acc, 1, 0.1f, &s);
    qg_ref_quantize_bias(x, acc, 1, 0.1f, NULL);
    qg_quantize_multiplier(0.5, NULL, NULL);
    qg_requant_params rp = {0.1f, NULL, NULL, 0.1f, 0, 1, 1};
    qg_ref_requantize(&sp, acc, q, 4, &rp);
    qg_ref_requantize(&sp, acc, q, 4, NULL);
    float mn = 1, mx = 2, sc;
    REFUSED(qg_calculate_qparams(NULL, &mn, &mx, 1, &sc, &z, NULL, &err), "qg_calculate_qparams", "spec");
    REFUSED(qg_calculate_qparams(&sp, NULL, &mx, 1, &sc, &z, NULL, &err), "qg_calculate_qparams", "min");
    REFUSED(qg_calculate_qparams(&sp, &mn, &mx, 1, NULL, &z, NULL, &err), "qg_calculate_qparams", "scale");
    REFUSED(qg_calculate_qparams(&sp, &mn, &mx, 1, &sc, NULL, NULL, &err), "qg_calculate_qparams", "zero_point");
    REFUSED(qg_choose_qparams_fused_op(&sp, &mn, NULL, 1, &sc, &z, &err), "qg_choose_qparams_fused_op", "max");
    REFUSED(qg_quantize_dynamic(NULL, NULL, NULL, x, q, 1, 4, &sc, &z, &err), "qg_quantize_dynamic", "spec");
    REFUSED(qg_quantize_dynamic(&sp, NULL, NULL, NULL, q, 1, 4, &sc, &z, &err), "qg_quantize_dynamic", "x");
    REFUSED(qg_quantize_dynamic(&sp, NULL, NULL, x, NULL, 1, 4, &sc, &z, &err), "qg_quantize_dynamic", "q");
    REFUSED(qg_quantize_dynamic(&sp, NULL, NULL, x, q, 1, 4, NULL, &z, &err), "qg_quantize_dynamic", "scale");
    REFUSED(qg_quantize_dynamic(&sp, NULL, NULL, x, q, 1, 4, &sc, NULL, &err), "qg_quantize_dynamic", "zero_point");
    CU_ASSERT_EQUAL(qg_quantize_dynamic(&sp, NULL, NULL, NULL, NULL, 0, 4, NULL, NULL, &err), QG_OK);
    qg_mask_pack_bits(NULL, 0, m, 4);
    qg_mask_unpack_bits(NULL, m, 0, 4);
}

static void test_observer(void) {
    qg_observer *o = (qg_observer *)&err; /* any non-NULL value: it must be overwritten */
    REFUSED(qg_observer_create(NULL, &o, &err), "qg_observer_create", "spec");
    CU_ASSERT_PTR_NULL(o);
    REFUSED(qg_observer_create(&sp, NULL, &err), "qg_observer_create", "out");
    float x[4] = {1, 2, 3, 4}, y[4], s;
    int32_t z;
    REFUSED(qg_observer_update(NULL, x, 4, 1, &err), "qg_observer_update", "obs");
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&sp, &o, &err), QG_OK);
    REFUSED(qg_observer_update(o, NULL, 4, 1, &err), "qg_observer_update", "x");
    CU_ASSERT_EQUAL(qg_observer_update(o, NULL, 0, 1, &err), QG_OK);
    REFUSED(qg_observer_fold(o, NULL, x, &err), "qg_observer_fold", "batch_min");
    REFUSED(qg_observer_fold(NULL, x, x, &err), "qg_observer_fold", "obs");
    REFUSED(qg_observer_qparams(NULL, &s, &z, NULL, &err), "qg_observer_qparams", "obs");
    REFUSED(qg_observer_qparams(o, NULL, &z, NULL, &err), "qg_observer_qparams", "scale");
    REFUSED(qg_observer_save(o, NULL, &err), "qg_observer_save", "path");
    REFUSED(qg_observer_load(NULL, "f", &err), "qg_observer_load", "obs");
    REFUSED(qg_ref_fused_train_step(NULL, x, y, NULL, 4, 1, &s, &z, &err), "qg_ref_fused_train_step", "obs");
    REFUSED(qg_ref_fused_train_step(o, x, NULL, NULL, 4, 1, &s, &z, &err), "qg_ref_fused_train_step", "y");
    REFUSED(qg_ref_fused_train_step(o, x, y, NULL, 4, 1, NULL, &z, &err), "qg_ref_fused_train_step", "scale");
    REFUSED(qg_fused_train_step_with(o, NULL, NULL, NULL, y, NULL, 4, 1, &s, &z, &err), "qg_fused_train_step_with",
            "x");
    const uint16_t h[4] = {0};
    uint16_t hy[4];
    REFUSED(qg_fused_train_step16_with(o, NULL, NULL, h, NULL, NULL, 4, 1, &s, &z, &err), "qg_fused_train_step16_with",
            "y");
    /* a float32 spec's observer through the 16-bit entry: refused, naming the field */
    CU_ASSERT_EQUAL(qg_fused_train_step16_with(o, NULL, NULL, h, hy, NULL, 4, 1, &s, &z, &err), QG_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "float_type"));
    REFUSED(qg_observe_with(NULL, x, 4, 1, NULL, &err), "qg_observe_with", "obs");
    REFUSED(qg_observe16_with(NULL, h, 4, 1, NULL, &err), "qg_observe16_with", "obs");
    /* a float32 spec's observer given codes: refused, naming the spec */
    CU_ASSERT_EQUAL(qg_observe16_with(o, h, 4, 1, NULL, &err), QG_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "float32"));
    CU_ASSERT_PTR_NULL(qg_observer_spec_of(NULL));
    qg_observer_minmax(NULL, &s, &s);
    qg_observer_minmax(o, NULL, &s);
    qg_observer_enable(NULL, true, true);
    qg_observer_enabled(NULL, NULL, NULL);
    qg_observer_enabled(o, NULL, NULL);
    qg_observer_train_qparams(o, NULL, &z);
    qg_observer_reset(NULL);
    qg_observer_destroy(NULL);
    qg_observer_destroy(o);
}

static void test_quantizer(void) {
    qg_quantizer *q = NULL;
    float s = 0.1f, x[2] = {1, 2};
    int32_t z = 0;
    REFUSED(qg_quantizer_create(NULL, &q, &err), "qg_quantizer_create", "spec");
    REFUSED(qg_quantizer_create(&sp, NULL, &err), "qg_quantizer_create", "out");
    REFUSED(qg_quantizer_activate(NULL, &s, &z, &err), "qg_quantizer_activate", "qz");
    REFUSED(qg_quantizer_set_passive(NULL, &s, &z, &err), "qg_quantizer_set_passive", "qz");
    REFUSED(qg_quantizer_set_fp32(NULL, &err), "qg_quantizer_set_fp32", "qz");
    REFUSED(qg_quantizer_apply(NULL, x, x, 2, 1, &err), "qg_quantizer_apply", "qz");
    REFUSED(qg_quantizer_bake(NULL, x, 2, 1, &err), "qg_quantizer_bake", "qz");
    REFUSED(qg_quantizer_dequantize(NULL, &err), "qg_quantizer_dequantize", "qz");
    REFUSED(qg_quantizer_restore(NULL, &err), "qg_quantizer_restore", "qz");
    CU_ASSERT_EQUAL_FATAL(qg_quantizer_create(&sp, &q, &err), QG_OK);
    REFUSED(qg_quantizer_activate(q, NULL, &z, &err), "qg_quantizer_activate", "scale");
    REFUSED(qg_quantizer_activate(q, &s, NULL, &err), "qg_quantizer_activate", "zp");
    REFUSED(qg_quantizer_apply(q, NULL, x, 2, 1, &err), "qg_quantizer_apply", "x");
    REFUSED(qg_quantizer_apply(q, x, NULL, 2, 1, &err), "qg_quantizer_apply", "y");
    REFUSED(qg_quantizer_bake(q, NULL, 2, 1, &err), "qg_quantizer_bake", "param");
    CU_ASSERT_EQUAL(qg_quantizer_state(NULL), QG_STATE_INITIAL);
    qg_quantizer_destroy(NULL);
    qg_quantizer_destroy(q);
}

static void test_generator(void) {
    unsigned set;
    qg_emit_kind kind;
    REFUSED(qg_parse_targets(NULL, &set, &err), "qg_parse_targets", "list");
    REFUSED(qg_parse_targets("all", NULL, &err), "qg_parse_targets", "out");
    REFUSED(qg_parse_emit_kind(NULL, &kind, &err), "qg_parse_emit_kind", "name");
    REFUSED(qg_parse_emit_kind("c", NULL, &err), "qg_parse_emit_kind", "out");
    qg_generate_options opt = {.out_dir = dir, .command = "test", .no_validate = 1};
    REFUSED(qg_generate(NULL, &opt, &err), "qg_generate", "spec");
    REFUSED(qg_generate(&sp, NULL, &err), "qg_generate", "opt");
    opt.out_dir = NULL;
    REFUSED(qg_generate(&sp, &opt, &err), "qg_generate", "opt->out_dir");
}

static void test_jit(void) {
    qg_jit *jit = NULL;
    const qg_kernels *k = (const qg_kernels *)&err;
    REFUSED(qg_jit_create(NULL, NULL, &err), "qg_jit_create", "out");
    REFUSED(qg_jit_compile(NULL, &sp, 0, &k, &err), "qg_jit_compile", "jit");
    CU_ASSERT_PTR_NULL(k);
    const qg_jit_options opt = {QG_JIT_BEST_ISA, NULL, true, true, false};
    CU_ASSERT_EQUAL_FATAL(qg_jit_create(&opt, &jit, &err), QG_OK);
    REFUSED(qg_jit_compile(jit, NULL, 0, &k, &err), "qg_jit_compile", "spec");
    REFUSED(qg_jit_compile(jit, &sp, 0, NULL, &err), "qg_jit_compile", "out");
    qg_jit_get_stats(NULL, NULL);
    qg_jit_get_stats(jit, NULL);
    /* the header's inlines: NULL kernels are refused, not the reference's */
    float x[2] = {1, 2}, y[2], s[1];
    uint16_t h[2] = {0}, hy[2];
    int32_t z[1];
    uint8_t q[2];
    REFUSED(qg_kernels_fused_train_step(NULL, NULL, x, y, NULL, 2, 1, s, z, &err), "qg_kernels_fused_train_step", "k");
    REFUSED(qg_kernels_fused_train_step16(NULL, NULL, h, hy, NULL, 2, 1, s, z, &err), "qg_kernels_fused_train_step16",
            "k");
    REFUSED(qg_kernels_quantize_dynamic(NULL, x, q, 1, 2, s, z, &err), "qg_kernels_quantize_dynamic", "k");
    CU_ASSERT_PTR_NULL(qg_jit_cache_dir(NULL));
    CU_ASSERT_EQUAL(qg_jit_isa(NULL), QG_ISA_SCALAR);
    qg_jit_settle(NULL);
    qg_jit_destroy(NULL);
    qg_jit_destroy(jit);
}

static void test_parallel(void) {
    float x[4] = {1, 2, 3, 4}, y[4], s = 0.1f;
    int32_t z = 0;
    uint8_t q[4], m[4];
    qg_qparams qp = {&s, &z, NULL, 1, 1};
    const qg_parallel one = {NULL, NULL, 2, 1};
    REFUSED(qg_pool_create(2, NULL, &err), "qg_pool_create", "out");
    qg_pool_destroy(NULL);
    CU_ASSERT_EQUAL(qg_pool_threads(NULL), 0);
    qg_pool_parallel_for(NULL, 3, NULL, NULL);
    CU_ASSERT_PTR_NULL(qg_pool_parallel(NULL).parallel_for);
    qg_parallel_quantize(&one, NULL, NULL, x, q, 4, &qp);
    qg_parallel_quantize(&one, &sp, NULL, NULL, q, 4, &qp);
    qg_parallel_dequantize(&one, &sp, NULL, q, y, 4, NULL);
    qg_parallel_fake_quant(&one, &sp, NULL, x, NULL, m, 4, &qp);
    qg_parallel_fake_quant_backward(&one, &sp, NULL, NULL, m, y, 4);
    qg_parallel_requantize(&one, &sp, NULL, NULL, q, 4, NULL);
    qg_parallel_fake_quant(NULL, &sp, NULL, NULL, NULL, NULL, 0, &qp); /* n == 0: NULL data is fine */
    qg_observer *o = NULL;
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&sp, &o, &err), QG_OK);
    REFUSED(qg_parallel_observe(&one, NULL, NULL, x, 4, 1, &err), "qg_parallel_observe", "obs");
    REFUSED(qg_parallel_observe(&one, NULL, o, NULL, 4, 1, &err), "qg_parallel_observe", "x");
    REFUSED(qg_parallel_fused_train_step(&one, NULL, NULL, NULL, x, y, m, 4, 1, &s, &z, &err),
            "qg_parallel_fused_train_step", "obs");
    REFUSED(qg_parallel_fused_train_step(&one, NULL, NULL, o, x, y, m, 4, 1, NULL, &z, &err),
            "qg_parallel_fused_train_step", "scale");
    qg_observer_destroy(o);
}

int main(int argc, char **argv) {
    if (!qg_test_tmpdir(argc, argv, dir, sizeof dir))
        return 2;
    if (qg_spec_load_string("{\"name\": \"n\", \"observer\": {\"type\": \"moving_average_minmax\"}}", "n", NULL, 0, &sp,
                            &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    static const qg_test tests[] = {
        {"spec", test_spec_api},
        {"reference ops and qparams", test_reference_ops},
        {"per-group drivers with another qscheme", test_group_drivers_other_qscheme},
        {"observer and training step", test_observer},
        {"quantizer", test_quantizer},
        {"generate", test_generator},
        {"jit", test_jit},
        {"parallel", test_parallel},
    };
    return QG_RUN("null_args", tests);
}
