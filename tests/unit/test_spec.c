/* Spec parsing: every field good and bad, presets, layering, canonical form. */
#include <stdlib.h>
#include <string.h>

#include "../test_util.h"
#include "emit_c/emit_c.h"
#include "qgen/spec.h"
#include "util/text_buf.h"

static qg_status load(const char *json, qg_spec *sp, qg_error *err) {
    return qg_spec_load_string(json, "s.json", NULL, 0, sp, err);
}

static qg_status load_set(const char *json, const char *set, qg_spec *sp, qg_error *err) {
    const char *sets[] = {set};
    return qg_spec_load_string(json, "s.json", sets, 1, sp, err);
}

static void test_defaults(void) {
    qg_spec sp;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(load("{\"name\": \"act\"}", &sp, &err), QG_OK);
    CU_ASSERT_EQUAL(sp.dtype, QG_QUINT8);
    CU_ASSERT_EQUAL(sp.qscheme, QG_PER_TENSOR_AFFINE);
    CU_ASSERT_TRUE(sp.quant_min == 0 && sp.quant_max == 255 && !sp.custom_range);
    CU_ASSERT_TRUE(sp.saturate && !sp.compat_mask && !sp.reduce_range && !sp.fast_training);
    CU_ASSERT_EQUAL(sp.rounding, QG_ROUND_HALF_EVEN);
    CU_ASSERT_EQUAL(sp.scale_op, QG_SCALE_MUL_INV);
    CU_ASSERT_EQUAL(sp.observer.type, QG_OBS_MINMAX);
    CU_ASSERT_EQUAL(sp.observer.averaging_constant, 0.01f);
    CU_ASSERT_EQUAL(sp.observer.eps, 0x1p-23f);
    CU_ASSERT_EQUAL(sp.observer.bins, 2048);
    CU_ASSERT_EQUAL(sp.targets, (1u << QG_ISA_COUNT) - 1);
    CU_ASSERT_EQUAL_FATAL(
        load("{\"name\": \"w\", \"qscheme\": \"per_channel_symmetric\", \"channel_len\": 8}", &sp, &err), QG_OK);
    CU_ASSERT_EQUAL(sp.observer.type, QG_OBS_PER_CHANNEL_MINMAX); /* default follows the qscheme */
}

static void test_every_field(void) {
    const char *json = "{\"name\": \"w_1\", \"dtype\": \"qint16\", \"qscheme\": \"per_channel_affine\", \"ch_axis\": 1,"
                       " \"channel_len\": 3, \"quant_min\": -1000, \"quant_max\": 1001, \"reduce_range\": true,"
                       " \"saturate\": false, \"compat_mask\": true, \"in_place\": false, \"fast_training\": true,"
                       " \"rounding\": \"half_away\", \"scale_op\": \"div\", \"nan\": \"propagate\","
                       " \"requant\": \"fixed_point\", \"targets\": [\"avx2\", \"rvv\"],"
                       " \"observer\": {\"type\": \"moving_average_per_channel_minmax\", \"averaging_constant\": 0.25,"
                       " \"eps\": 0.001, \"bins\": 16, \"upsample_rate\": 4}}";
    qg_spec sp;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(load(json, &sp, &err), QG_OK);
    CU_ASSERT_STRING_EQUAL(sp.name, "w_1");
    CU_ASSERT_EQUAL(sp.dtype, QG_QINT16);
    CU_ASSERT_EQUAL(sp.qscheme, QG_PER_CHANNEL_AFFINE);
    CU_ASSERT_TRUE(sp.ch_axis == 1 && sp.channel_len == 3);
    CU_ASSERT_TRUE(sp.given_quant_min == -1000 && sp.given_quant_max == 1001);
    CU_ASSERT_TRUE(sp.quant_min == -500 && sp.quant_max == 500); /* floor division */
    CU_ASSERT_TRUE(sp.reduce_range && !sp.saturate && sp.compat_mask && !sp.in_place && sp.fast_training);
    CU_ASSERT_EQUAL(sp.rounding, QG_ROUND_HALF_AWAY);
    CU_ASSERT_EQUAL(sp.scale_op, QG_SCALE_DIV);
    CU_ASSERT_EQUAL(sp.nan_policy, QG_NAN_PROPAGATE);
    CU_ASSERT_EQUAL(sp.requant, QG_REQUANT_FIXED_POINT);
    CU_ASSERT_EQUAL(sp.targets, (1u << QG_ISA_AVX2) | (1u << QG_ISA_RVV));
    CU_ASSERT_EQUAL(sp.observer.type, QG_OBS_MOVING_AVERAGE_PER_CHANNEL_MINMAX);
    CU_ASSERT_TRUE(sp.observer.averaging_constant == 0.25f && sp.observer.eps == 0.001f);
    CU_ASSERT_TRUE(sp.observer.bins == 16 && sp.observer.upsample_rate == 4);

    /* The canonical form reads back to the same spec and prints the same. */
    char *a = qg_spec_to_json(&sp);
    qg_spec again;
    CU_ASSERT_EQUAL_FATAL(load(a, &again, &err), QG_OK);
    char *b = qg_spec_to_json(&again);
    CU_ASSERT_STRING_EQUAL(a, b);
    CU_ASSERT_EQUAL(memcmp(&sp.observer, &again.observer, sizeof sp.observer), 0);
    ASSERT_CONTAINS(a, "\"averaging_constant\": 0.25", "\"eps\": 0.001", "\"quant_min\": -1000");
    free(a);
    free(b);
}

/* histc_range: parsed on histogram observers, printed for them alone, and
 * carried by the C backend's spec literal. */
static void test_histc_range(void) {
    qg_spec sp;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(
        load("{\"name\": \"h\", \"observer\": {\"type\": \"histogram\", \"histc_range\": \"int\"}}", &sp, &err), QG_OK);
    CU_ASSERT_TRUE(sp.observer.histc_int);
    char *a = qg_spec_to_json(&sp);
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "\"histc_range\": \"int\""));
    qg_spec again;
    CU_ASSERT_EQUAL_FATAL(load(a, &again, &err), QG_OK);
    CU_ASSERT_TRUE(again.observer.histc_int);
    free(a);
    qg_text t = {0};
    CU_ASSERT_EQUAL_FATAL(qg_emit_dispatch(&sp, "", &t, &err), QG_OK);
    CU_ASSERT_TRUE(t.p && strstr(t.p, ".histc_int = 1") != NULL);
    qg_text_free(&t);
    CU_ASSERT_EQUAL_FATAL(load("{\"name\": \"h\", \"observer\": {\"type\": \"histogram\"}}", &sp, &err), QG_OK);
    CU_ASSERT_FALSE(sp.observer.histc_int);
    a = qg_spec_to_json(&sp);
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "\"histc_range\": \"exact\""));
    free(a);
    CU_ASSERT_EQUAL_FATAL(load("{\"name\": \"m\"}", &sp, &err), QG_OK);
    a = qg_spec_to_json(&sp);
    CU_ASSERT_PTR_NULL(strstr(a, "histc_range"));
    free(a);
}

static void test_presets_and_layers(void) {
    qg_spec sp;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(load("{\"name\": \"a\", \"base\": \"torch.fbgemm.activation\"}", &sp, &err), QG_OK);
    CU_ASSERT_TRUE(sp.dtype == QG_QUINT8 && sp.quant_min == 0 && sp.quant_max == 127 && sp.fast_training);
    CU_ASSERT_EQUAL(sp.observer.type, QG_OBS_MOVING_AVERAGE_MINMAX);
    /* the file overrides the preset, field by field inside observer */
    CU_ASSERT_EQUAL_FATAL(load("{\"name\": \"a\", \"base\": \"torch.fbgemm.activation\", \"reduce_range\": false,"
                               " \"observer\": {\"averaging_constant\": 0.5}}",
                               &sp, &err),
                          QG_OK);
    CU_ASSERT_TRUE(sp.quant_max == 255 && sp.observer.averaging_constant == 0.5f);
    CU_ASSERT_EQUAL(sp.observer.type, QG_OBS_MOVING_AVERAGE_MINMAX);
    /* --set overrides the file */
    CU_ASSERT_EQUAL_FATAL(load_set("{\"name\": \"a\", \"dtype\": \"quint8\"}", "dtype=qint8", &sp, &err), QG_OK);
    CU_ASSERT_EQUAL(sp.dtype, QG_QINT8);
    CU_ASSERT_EQUAL_FATAL(load_set("{\"name\": \"a\"}", "observer.averaging_constant=0.125", &sp, &err), QG_OK);
    CU_ASSERT_EQUAL(sp.observer.averaging_constant, 0.125f);
    CU_ASSERT_EQUAL_FATAL(load_set("{\"name\": \"a\"}", "targets=[\"neon\"]", &sp, &err), QG_OK);
    CU_ASSERT_EQUAL(sp.targets, 1u << QG_ISA_NEON);
    CU_ASSERT_EQUAL_FATAL(load("{\"name\": \"h\", \"base\": \"horizon.qint16\"}", &sp, &err), QG_OK);
    CU_ASSERT_TRUE(sp.dtype == QG_QINT16 && sp.rounding == QG_ROUND_HALF_UP && sp.scale_op == QG_SCALE_DIV &&
                   sp.qscheme == QG_PER_TENSOR_SYMMETRIC);
    /* ONNX QuantizeLinear: x / scale, ties to even, the dtype's whole range */
    CU_ASSERT_EQUAL_FATAL(load("{\"name\": \"o\", \"base\": \"onnx.uint16\"}", &sp, &err), QG_OK);
    CU_ASSERT_TRUE(sp.dtype == QG_QUINT16 && sp.rounding == QG_ROUND_HALF_EVEN && sp.scale_op == QG_SCALE_DIV &&
                   sp.qscheme == QG_PER_TENSOR_AFFINE && sp.quant_min == 0 && sp.quant_max == 65535);
    CU_ASSERT_EQUAL_FATAL(load("{\"name\": \"o\", \"base\": \"onnx.int8\"}", &sp, &err), QG_OK);
    CU_ASSERT_TRUE(sp.dtype == QG_QINT8 && sp.quant_min == -128 && sp.quant_max == 127 && !sp.reduce_range);
    CU_ASSERT_EQUAL_FATAL(load("{\"name\": \"o\", \"base\": \"onnx.uint4\"}", &sp, &err), QG_OK);
    CU_ASSERT_TRUE(sp.dtype == QG_QUINT4 && sp.quant_min == 0 && sp.quant_max == 15 && sp.scale_op == QG_SCALE_DIV);
    /* torchao's int4 weights: symmetric groups of 32 along the last axis */
    CU_ASSERT_EQUAL_FATAL(
        load("{\"name\": \"t\", \"base\": \"torchao.int4_weight_g32\", \"channel_len\": 96}", &sp, &err), QG_OK);
    CU_ASSERT_TRUE(sp.dtype == QG_QINT4 && sp.qscheme == QG_PER_GROUP_SYMMETRIC && sp.group_size == 32 &&
                   sp.ch_axis == -1 && sp.quant_min == -8 && sp.quant_max == 7 && sp.scale_op == QG_SCALE_MUL_INV);
    /* group_size belongs to the per-group qschemes, and they need it */
    CU_ASSERT_EQUAL(load("{\"name\": \"g\", \"group_size\": 4}", &sp, &err), QG_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "group_size: got 4; expected it only with qscheme per_group"));
    CU_ASSERT_EQUAL(load("{\"name\": \"g\", \"qscheme\": \"per_group_affine\", \"channel_len\": 8}", &sp, &err),
                    QG_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "group_size: got 0; expected >= 1"));
    size_t n = 0;
    for (const char *const *p = qg_spec_preset_names(); *p; p++, n++) {
        char json[200];
        snprintf(json, sizeof json, "{\"name\": \"p\", \"base\": \"%s\"}", *p);
        CU_ASSERT_EQUAL(load(json, &sp, &err), QG_OK);
    }
    CU_ASSERT_EQUAL(n, 37);
    /* ggml's block formats: the format fixes the groups and the codes */
    CU_ASSERT_EQUAL_FATAL(load("{\"name\": \"b\", \"base\": \"ggml.q4_1\"}", &sp, &err), QG_OK);
    CU_ASSERT_TRUE(sp.block == QG_BLOCK_Q4_1 && sp.qscheme == QG_PER_GROUP_AFFINE && sp.group_size == 32 &&
                   sp.ch_axis == -1 && sp.dtype == QG_QINT8);
    CU_ASSERT_EQUAL(load("{\"name\": \"b\", \"base\": \"ggml.q8_0\", \"group_size\": 64}", &sp, &err), QG_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "group_size: got 64; expected no group_size beside block q8_0"));
    CU_ASSERT_EQUAL(load("{\"name\": \"b\", \"block\": \"q4_K\"}", &sp, &err), QG_OK);
    CU_ASSERT_TRUE(sp.qscheme == QG_PER_GROUP_AFFINE && sp.group_size == 256);
    CU_ASSERT_EQUAL(load("{\"name\": \"b\", \"block\": \"q5_K\"}", &sp, &err), QG_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "expected one of none, q8_0"));
    char *printed = NULL;
    CU_ASSERT_EQUAL_FATAL(load("{\"name\": \"b\", \"block\": \"mxfp4\"}", &sp, &err), QG_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(printed = qg_spec_to_json(&sp));
    qg_spec again;
    CU_ASSERT_EQUAL(load(printed, &again, &err), QG_OK); /* the printed form loads back */
    CU_ASSERT_EQUAL(memcmp(&again, &sp, sizeof sp), 0);
    free(printed);
    sp.group_size = 16; /* a hand-built spec out of step with its format */
    CU_ASSERT_EQUAL(qg_spec_validate(&sp, &err), QG_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "block mxfp4: got qscheme per_group_symmetric, group_size 16"));
    /* ONNX's fp8 QuantizeLinear: symmetric, x / scale, saturating */
    CU_ASSERT_EQUAL_FATAL(load("{\"name\": \"f\", \"base\": \"onnx.fp8_e5m2\"}", &sp, &err), QG_OK);
    CU_ASSERT_TRUE(sp.dtype == QG_FP8_E5M2 && sp.qscheme == QG_PER_TENSOR_SYMMETRIC && sp.saturate &&
                   sp.scale_op == QG_SCALE_DIV && sp.quant_min == -57344 && sp.quant_max == 57344);
}

typedef struct bad_case {
    const char *json;
    const char *set;
    const char *needles[4];
} bad_case;

static void test_bad_specs(void) {
    static const bad_case cases[] = {
        {"{\"name\": \"a\",\n \"dtype\": \"qint8\"", NULL, {"s.json:2:", "malformed JSON"}},
        {"{\"name\": \"a\",\n  \"dtyp\": \"qint8\"}",
         NULL,
         {"s.json:2:3", "unknown field \"dtyp\"", "did you mean \"dtype\""}},
        {"{\"name\": \"a\", \"observer\": {\"averaging_constnt\": 0.1}}",
         NULL,
         {"observer.averaging_constnt", "did you mean \"averaging_constant\""}},
        {"{\"name\": \"a\",\n\"dtype\": \"qint9\"}", NULL, {"s.json:2:1", "dtype", "\"qint9\"", "qint8, quint8"}},
        {"{\"name\": \"a\", \"dtype\": 8}", NULL, {"dtype: got 8", "expected one of"}},
        {"{\"name\": \"a\", \"saturate\": \"yes\"}", NULL, {"saturate", "\"yes\"", "true or false"}},
        {"{\"name\": \"a\", \"channel_len\": 2.5}", NULL, {"channel_len", "2.5", "an integer"}},
        {"{\"name\": \"a\", \"quant_min\": 10, \"quant_max\": -10, \"dtype\": \"qint8\"}",
         NULL,
         {"quant_min", "10", "quant_min <= quant_max"}},
        {"{\"name\": \"a\", \"dtype\": \"qint8\", \"quant_min\": -200, \"quant_max\": 100}",
         NULL,
         {"quant_min", "-200", "-128..127"}},
        {"{\"name\": \"a\", \"dtype\": \"quint8\", \"quant_min\": 1, \"quant_max\": 100}",
         NULL,
         {"quant_min", "got 1", "0 must be in the range"}},
        {"{\"name\": \"a\", \"dtype\": \"qint8\", \"quant_min\": -100, \"quant_max\": -1}",
         NULL,
         {"quant_max", "-1", "0 must be in the range"}},
        {"{\"name\": \"a\", \"quant_min\": 0}", NULL, {"quant_max", "together"}},
        {"{\"name\": \"a\", \"observer\": {\"type\": \"fixed_qparams\", \"scale\": 0.1, \"zero_point\": 300}}",
         NULL,
         {"observer.zero_point", "300", "0..255"}},
        {"{\"name\": \"a\", \"observer\": {\"type\": \"fixed_qparams\", \"scale\": -0.1}}",
         NULL,
         {"observer.scale", "-0.1", "> 0"}},
        {"{\"name\": \"a\", \"observer\": {\"type\": \"fixed_qparams\"}}", NULL, {"observer.scale", "fixed_qparams"}},
        {"{\"name\": \"a\", \"channel_len\": 4}",
         NULL,
         {"channel_len", "4", "expected 1 for qscheme per_tensor_affine"}},
        {"{\"name\": \"a\", \"qscheme\": \"per_channel_affine\", \"channel_len\": 4, \"observer\": {\"type\": "
         "\"minmax\"}}",
         NULL,
         {"observer.type", "minmax", "per_channel_minmax"}},
        {"{\"name\": \"a\", \"observer\": {\"type\": \"per_channel_minmax\"}}",
         NULL,
         {"observer.type", "per-tensor observer"}},
        {"{\"name\": \"a\", \"observer\": {\"averaging_constant\": 0}}", NULL, {"averaging_constant", "(0, 1]"}},
        {"{\"name\": \"a\", \"observer\": {\"type\": \"histogram\", \"histc_range\": \"floor\"}}",
         NULL,
         {"observer.histc_range", "\"floor\"", "exact, int"}},
        {"{\"name\": \"a\", \"observer\": {\"histc_range\": \"int\"}}",
         NULL,
         {"observer.histc_range", "\"int\" for a minmax observer", "histogram observers only"}},
        {"{\"name\": \"a\", \"base\": \"torch.fbgem.activation\"}",
         NULL,
         {"base", "torch.fbgem.activation", "did you mean torch.fbgemm.activation"}},
        {"{\"name\": \"a\", \"base\": \"torch.fbgemm.act\"}", /* cut short: not the nearer torch.fbgemm.weight */
         NULL,
         {"base", "torch.fbgemm.act", "did you mean torch.fbgemm.activation"}},
        {"{\"name\": \"1a\"}", NULL, {"name", "\"1a\"", "C identifier"}},
        {"{\"dtype\": \"qint8\"}", NULL, {"name", "got nothing", "C identifier"}},
        {"{\"name\": \"a\", \"targets\": [\"avx3\"]}", NULL, {"targets", "avx3", "did you mean \"avx2\""}},
        {"{\"name\": \"a\", \"targets\": []}", NULL, {"targets", "non-empty"}},
        {"[1, 2]", NULL, {"s.json:1:1", "array", "expected an object"}},
        {"{\"name\": \"a\", \"name\": \"b\"}", NULL, {"malformed JSON", "duplicate"}},
        {"{\"name\": \"a\", \"dtype\": \"qint32\", \"reduce_range\": true}", NULL, {"reduce_range", "qint32"}},
        {"{\"name\": \"a\", \"dtype\": \"quint16\", \"qscheme\": \"per_tensor_symmetric\", \"reduce_range\": true}",
         NULL,
         {"reduce_range", "symmetric quint16", "zero point"}},
        {"{\"name\": \"a\", \"dtype\": \"fp8_e4m3fn\"}",
         NULL,
         {"qscheme", "per_tensor_affine", "fp8_e4m3fn", "symmetric"}},
        {"{\"name\": \"a\", \"dtype\": \"fp8_e4m3fn\", \"qscheme\": \"per_tensor_symmetric\", \"quant_min\": -100, "
         "\"quant_max\": 100}",
         NULL,
         {"quant_min/quant_max", "-100..100", "-448..448"}},
        {"{\"name\": \"a\", \"dtype\": \"fp8_e5m2\", \"qscheme\": \"per_tensor_symmetric\", \"rounding\": \"half_up\"}",
         NULL,
         {"rounding", "half_up", "half_even"}},
        {"{\"name\": \"a\", \"dtype\": \"fp8_e5m2\", \"qscheme\": \"per_tensor_symmetric\", \"observer\": {\"type\": "
         "\"histogram\"}}",
         NULL,
         {"observer.type", "histogram", "fp8_e5m2"}},
        {"{\"name\": \"a\"}", "dtype", {"--set dtype", "key=value"}},
        {"{\"name\": \"a\"}", "dtpe=qint8", {"--set", "unknown field \"dtpe\"", "did you mean \"dtype\""}},
        {"{\"name\": \"a\"}", "dtype=qint3", {"--set dtype=qint3", "dtype", "\"qint3\""}},
        {"{\"name\": \"a\"}", "observer.bins=0", {"--set observer.bins=0", "1..1048576"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qg_spec sp;
        qg_error err = {0};
        qg_status st = cases[i].set ? load_set(cases[i].json, cases[i].set, &sp, &err) : load(cases[i].json, &sp, &err);
        if (st == QG_OK)
            fprintf(stderr, "\n  accepted bad spec %zu: %s\n", i, cases[i].json);
        CU_ASSERT_EQUAL(st, QG_ERR_INVALID);
        for (int k = 0; k < 4 && cases[i].needles[k]; k++)
            ASSERT_CONTAINS(err.message, cases[i].needles[k]);
    }
}

static void test_validate_by_hand(void) {
    qg_spec sp;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(load("{\"name\": \"a\"}", &sp, &err), QG_OK);
    sp.quant_max = 100; /* no longer follows from the given range */
    CU_ASSERT_EQUAL(qg_spec_validate(&sp, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "effective range");
    CU_ASSERT_EQUAL(qg_spec_load_file("/nonexistent/spec.json", NULL, 0, &sp, &err), QG_ERR_IO);
    ASSERT_CONTAINS(err.message, "/nonexistent/spec.json", "cannot open");
}

/* A message longer than qg_error holds is cut after a whole word, and "…"
 * says so: a 600-byte value of words, and the list of presets. */
static void test_long_messages(void) {
    char value[601];
    for (size_t i = 0; i < 600; i++)
        value[i] = i % 7 == 6 ? ' ' : (char)('a' + i % 7);
    value[600] = 0;
    qg_error err;
    qg_error_set(&err, QG_ERR_INVALID, "x: got %s; expected a word", value);
    const size_t len = strlen(err.message), dots = strlen("\xe2\x80\xa6");
    CU_ASSERT(len < sizeof err.message && len > sizeof err.message - 16);
    CU_ASSERT_STRING_EQUAL(err.message + len - dots, "\xe2\x80\xa6");
    CU_ASSERT_EQUAL(err.message[len - dots - 1], 'f'); /* each word ends in f: cut after one */
    qg_spec sp;
    CU_ASSERT_EQUAL(load("{\"name\": \"a\", \"base\": \"nothing.like.it\"}", &sp, &err), QG_ERR_INVALID);
    const size_t n = strlen(err.message);
    if (n + 1 >= sizeof err.message - 8) /* the list is cut: at a name's end */
        CU_ASSERT(strcmp(err.message + n - dots, "\xe2\x80\xa6") == 0 && err.message[n - dots - 1] != ' ' &&
                  err.message[n - dots - 1] != ',');
    qg_error_set(&err, QG_ERR_INVALID, "%s", "short");
    CU_ASSERT_STRING_EQUAL(err.message, "short");
}

int main(void) {
    static const qg_test tests[] = {
        {"long messages cut at a word", test_long_messages},
        {"defaults", test_defaults},
        {"every field, canonical round trip", test_every_field},
        {"presets, file and --set layers", test_presets_and_layers},
        {"observer.histc_range", test_histc_range},
        {"bad specs name field, value and expectation", test_bad_specs},
        {"validation of hand-built specs", test_validate_by_hand},
    };
    return QG_RUN("spec", tests);
}
