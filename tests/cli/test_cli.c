/* The qgen CLI end to end: good runs agree with the library, bad input of
 * every kind exits 2 with a message naming the field or file, the value and
 * what was expected, and never crashes. */
#include <fcntl.h>
#include <pty.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "targets/target_table.h"
#include "../test_util.h"
#include "npy.h"
#include "qgen/runtime.h"

static char out_text[16384], err_text[16384];

static size_t read_bytes(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap, f) : 0;
    if (f)
        fclose(f);
    return n;
}

/* Runs qgen with the NULL-terminated arguments; returns its exit status
 * (128 + signal when it crashed), stdout and stderr in out_text/err_text. */
static int qgen_argv(const char *const *args) {
    const char *argv[32] = {QGEN_BIN};
    int argc = 1;
    while (*args && argc < 31)
        argv[argc++] = *args++;
    argv[argc] = NULL;
    char out_path[512], err_path[512];
    snprintf(out_path, sizeof out_path, "%s/stdout.txt", TEST_TMP);
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", TEST_TMP);
    int rc = qg_test_spawn(argv, out_path, err_path);
    qg_test_slurp(out_path, out_text, sizeof out_text);
    qg_test_slurp(err_path, err_text, sizeof err_text);
    return rc;
}

/* The same, the arguments as a NULL-terminated list. */
static int qgen(const char *first, ...) {
    const char *args[32];
    va_list ap;
    va_start(ap, first);
    qg_test_va_args(args, 0, 32, first, ap);
    va_end(ap);
    return qgen_argv(args);
}

static const char *tmp(const char *name) {
    static char bufs[8][512];
    static int k;
    char *p = bufs[k++ % 8];
    snprintf(p, 512, "%s/%s", TEST_TMP, name);
    return p;
}

static void write_text(const char *name, const char *text) {
    FILE *f = fopen(tmp(name), "w");
    fputs(text, f);
    fclose(f);
}

static void write_f32(const char *name, const float *x, size_t n) {
    qg_error err;
    if (qg_npy_write(tmp(name), QG_NPY_F32, &n, 1, x, &err) != QG_OK) {
        fprintf(stderr, "setup: %s\n", err.message);
        exit(2);
    }
}

static const float X[] = {-1.3f, -0.26f, 0.0f, 0.25f, 0.75f, 2.5f, 100.0f, -100.0f, 0.1f, 1.7f};

static void setup(void) {
    mkdir(TEST_TMP, 0700);
    write_text("act.json", "{\"name\": \"act\", \"dtype\": \"quint8\",\n \"observer\": {\"type\": \"minmax\"}}\n");
    write_text("w.json", "{\"name\": \"w\", \"dtype\": \"qint8\", \"qscheme\": \"per_channel_symmetric\",\n"
                         " \"ch_axis\": 0, \"channel_len\": 2}\n");
    write_f32("x.npy", X, 10);
}

static void test_help_and_usage(void) {
    CU_ASSERT_EQUAL(qgen("--help", NULL), 0);
    ASSERT_CONTAINS(out_text, "spec show", "run", "observe");
    CU_ASSERT_EQUAL(qgen("run", "--help", NULL), 0);
    ASSERT_CONTAINS(out_text, "fake_quant_backward", "requantize");
    CU_ASSERT_EQUAL(qgen("observe", "--help", NULL), 0);
    CU_ASSERT_EQUAL(qgen("spec", "--help", NULL), 0);
    CU_ASSERT_EQUAL(qgen("frobnicate", NULL), 2);
    ASSERT_CONTAINS(err_text, "unknown command \"frobnicate\"");
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), NULL), 2);
    ASSERT_CONTAINS(err_text, "--in and --out are required");
    /* qgen help COMMAND is COMMAND --help, for every command the usage lists */
    static const char *const commands[] = {"spec", "run", "generate", "check", "compare", "observe", "targets"};
    static char direct[sizeof out_text];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        CU_ASSERT_EQUAL(qgen(commands[i], "--help", NULL), 0);
        memcpy(direct, out_text, sizeof direct);
        CU_ASSERT_EQUAL(qgen("help", commands[i], NULL), 0);
        CU_ASSERT_STRING_EQUAL(out_text, direct);
        ASSERT_CONTAINS(out_text, commands[i]);
    }
    CU_ASSERT_EQUAL(qgen("help", "frobnicate", NULL), 2);
    ASSERT_CONTAINS(err_text, "unknown command \"frobnicate\"");
}

/* The man page and the completion list each command's options alike, and
 * each of them is one the command's parser takes (a made-up one it
 * refuses): both are printed from the parser's own tables. */
static void test_man_page_and_completion(void) {
    static char man[sizeof out_text];
    CU_ASSERT_EQUAL_FATAL(qgen("help", "--man", NULL), 0);
    memcpy(man, out_text, sizeof man);
    ASSERT_CONTAINS(man, ".TH QGEN 1", ".SS qgen generate");
    static char completion[sizeof out_text];
    CU_ASSERT_EQUAL_FATAL(qgen("help", "--completion", NULL), 0);
    memcpy(completion, out_text, sizeof completion);
    ASSERT_CONTAINS(completion, "complete -o filenames -F _qgen qgen");
    static const char *const commands[] = {"spec", "run", "generate", "check", "compare", "observe", "targets"};
    unsigned options = 0;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char arm[64], section[64], opts[1024];
        snprintf(arm, sizeof arm, "    %s) opts=\"", commands[i]);
        const char *a = strstr(completion, arm);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        a += strlen(arm);
        snprintf(opts, sizeof opts, "%.*s", (int)strcspn(a, "\""), a);
        snprintf(section, sizeof section, ".SS qgen %s\n", commands[i]);
        const char *sec = strstr(man, section), *end = sec ? strstr(sec + 1, ".SS ") : NULL;
        CU_ASSERT_PTR_NOT_NULL_FATAL(sec);
        const size_t sec_len = end ? (size_t)(end - sec) : strlen(sec);
        for (char *save = NULL, *w = strtok_r(opts, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
            char roff[80]; /* the man page spells each - as \- */
            size_t k = 0;
            for (const char *p = w; *p && k + 3 < sizeof roff; p++) {
                if (*p == '-')
                    roff[k++] = '\\';
                roff[k++] = *p;
            }
            roff[k] = 0;
            char bold[96];
            snprintf(bold, sizeof bold, ".B %s", roff);
            const char *hit = strstr(sec, bold);
            CU_ASSERT(hit && (size_t)(hit - sec) < sec_len);
            if (!hit || (size_t)(hit - sec) >= sec_len)
                fprintf(stderr, "\n  %s: %s not in its man page section\n", commands[i], bold);
            if (w[1] == '-') { /* the parser takes it: no "unknown option" */
                CU_ASSERT_NOT_EQUAL(qgen(commands[i], w, NULL), 128 + 11);
                CU_ASSERT(strstr(err_text, "unknown option") == NULL && strstr(err_text, "unrecognized") == NULL);
            }
            options++;
        }
        CU_ASSERT_EQUAL(qgen(commands[i], "--no-such-option", NULL), 2);
    }
    CU_ASSERT(options > 40);
}

static void test_spec_commands(void) {
    CU_ASSERT_EQUAL(qgen("spec", "show", tmp("act.json"), "--set", "dtype=qint8", NULL), 0);
    ASSERT_CONTAINS(out_text, "\"dtype\": \"qint8\"", "\"name\": \"act\"");
    /* show is deterministic and its output reads back to itself */
    char first[16384];
    memcpy(first, out_text, sizeof first);
    write_text("shown.json", first);
    CU_ASSERT_EQUAL(qgen("spec", "show", tmp("shown.json"), NULL), 0);
    CU_ASSERT_STRING_EQUAL(out_text, first);
    CU_ASSERT_EQUAL(qgen("spec", "check", tmp("act.json"), NULL), 0);
    ASSERT_CONTAINS(out_text, "ok", "range 0..255");
    CU_ASSERT_EQUAL(qgen("spec", "presets", NULL), 0);
    ASSERT_CONTAINS(out_text, "torch.fbgemm.activation", "horizon.qint16");

    write_text("bad.json", "{\"name\": \"a\",\n  \"dtype\": \"qint8\",,\n}");
    CU_ASSERT_EQUAL(qgen("spec", "check", tmp("bad.json"), NULL), 2);
    ASSERT_CONTAINS(err_text, "bad.json:2:", "malformed JSON");
    write_text("typo.json", "{\"name\": \"a\",\n  \"qshceme\": \"per_tensor_affine\"}");
    CU_ASSERT_EQUAL(qgen("spec", "check", tmp("typo.json"), NULL), 2);
    ASSERT_CONTAINS(err_text, "typo.json:2:3", "unknown field \"qshceme\"", "did you mean \"qscheme\"");
    CU_ASSERT_EQUAL(qgen("spec", "check", tmp("act.json"), "--set", "quant_min=5", "--set", "quant_max=9", NULL), 2);
    ASSERT_CONTAINS(err_text, "--set quant_min=5", "0 must be in the range");
    CU_ASSERT_EQUAL(qgen("spec", "check", tmp("nope.json"), NULL), 2);
    ASSERT_CONTAINS(err_text, "nope.json", "cannot open");
    /* a preset's name where a spec file goes */
    CU_ASSERT_EQUAL(qgen("spec", "show", "torch.x86.weight", NULL), 0);
    ASSERT_CONTAINS(out_text, "\"name\": \"torch_x86_weight\"", "\"qscheme\": \"per_channel_symmetric\"");
    CU_ASSERT_EQUAL(qgen("generate", "--spec", "onnx.int8", "--targets", "scalar", "-o", tmp("preset_gen"), NULL), 0);
}

/* `qgen run --op quantize` of X with the spec act.json and `sets`, scale
 * 0.001 and zero point `z`: a q file of dtype `want` equal to the
 * reference's bytes. */
static void check_q_file(const char *const *sets, size_t nsets, const char *z, qg_npy_dtype want) {
    const char *argv[24] = {"run", "--spec", tmp("act.json")};
    int argc = 3;
    for (size_t k = 0; k < nsets && k < 4; k++) {
        argv[argc++] = "--set";
        argv[argc++] = sets[k];
    }
    const char *rest[] = {"--op",         "quantize", "--in",  tmp("x.npy"),      "--scale", "0.001",
                          "--zero-point", z,          "--out", tmp("q_file.npy"), NULL};
    memcpy(argv + argc, rest, sizeof rest);
    CU_ASSERT_EQUAL_FATAL(qgen_argv(argv), 0);
    qg_error err;
    qg_npy q;
    CU_ASSERT_EQUAL_FATAL(qg_npy_read(tmp("q_file.npy"), &q, &err), QG_OK);
    CU_ASSERT_TRUE(q.dtype == want && q.count == 10);
    qg_spec sp;
    CU_ASSERT_EQUAL_FATAL(qg_spec_load_file(tmp("act.json"), sets, nsets, &sp, &err), QG_OK);
    const float s = 0.001f;
    const int32_t zp = atoi(z);
    qg_qparams qp = {&s, &zp, NULL, 1, 1};
    uint8_t ref[10 * 4];
    qg_ref_quantize(&sp, X, ref, 10, &qp);
    CU_ASSERT_EQUAL(memcmp(q.data, ref, 10 * qg_dtype_size(sp.dtype)), 0);
    free(q.data);
}

/* float_type: float16 .npy in and out, bfloat16 as uint16 bits; the
 * result is the float32 op on the widened input, narrowed
 * (docs/semantics.md, "Float types"); a float32 file is refused naming the
 * type, and so is the fused step, naming the field. */
static void check_float_type(const char *set, qg_float_type ft, qg_npy_dtype file_dtype) {
    uint16_t x16[10];
    float wide[10], want[10];
    uint16_t want16[10];
    qg_float_type_narrow(ft, X, x16, 10);
    qg_float_type_widen(ft, x16, wide, 10);
    qg_error err;
    const size_t n = 10;
    CU_ASSERT_EQUAL_FATAL(qg_npy_write(tmp("x16.npy"), file_dtype, &n, 1, x16, &err), QG_OK);
    CU_ASSERT_EQUAL_FATAL(qgen("run", "--spec", tmp("act.json"), "--set", set, "--op", "fake_quant", "--in",
                               tmp("x16.npy"), "--scale", "0.05", "--zero-point", "7", "--out", tmp("y16.npy"), NULL),
                          0);
    qg_spec sp;
    const char *sets[] = {set};
    CU_ASSERT_EQUAL_FATAL(qg_spec_load_file(tmp("act.json"), sets, 1, &sp, &err), QG_OK);
    const float s = 0.05f;
    const int32_t z = 7;
    qg_qparams qp = {&s, &z, NULL, 1, 1};
    qg_ref_fake_quant(&sp, wide, want, NULL, 10, &qp);
    qg_float_type_narrow(ft, want, want16, 10);
    qg_npy y;
    CU_ASSERT_EQUAL_FATAL(qg_npy_read(tmp("y16.npy"), &y, &err), QG_OK);
    CU_ASSERT_TRUE(y.count == 10 && y.dtype == file_dtype && memcmp(y.data, want16, sizeof want16) == 0);
    free(y.data);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--set", set, "--op", "fake_quant", "--in", tmp("x.npy"),
                         "--scale", "0.05", "--zero-point", "7", "--out", tmp("y16.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "dtype float32; expected", qg_float_type_name(ft));
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--set", set, "--op", "fused_train_step", "--in",
                         tmp("x16.npy"), "--out", tmp("y16.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "float_type", qg_float_type_name(ft), "expected float32");
}

static void test_run_float_types(void) {
    check_float_type("float_type=float16", QG_FLOAT16, QG_NPY_F16);
    check_float_type("float_type=bfloat16", QG_BFLOAT16, QG_NPY_U16);
}

static void test_run_matches_library(void) {
    CU_ASSERT_EQUAL_FATAL(qgen("run", "--spec", tmp("act.json"), "--op", "fake_quant", "--in", tmp("x.npy"), "--scale",
                               "0.05", "--zero-point", "7", "--out", tmp("y.npy"), "--mask", tmp("m.npy"), NULL),
                          0);
    qg_npy y, m;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_npy_read(tmp("y.npy"), &y, &err), QG_OK);
    CU_ASSERT_EQUAL_FATAL(qg_npy_read(tmp("m.npy"), &m, &err), QG_OK);
    qg_spec sp;
    qg_spec_load_file(tmp("act.json"), NULL, 0, &sp, &err);
    const float s = 0.05f;
    const int32_t z = 7;
    qg_qparams qp = {&s, &z, NULL, 1, 1};
    float want[10];
    uint8_t wm[10];
    qg_ref_fake_quant(&sp, X, want, wm, 10, &qp);
    CU_ASSERT_TRUE(y.count == 10 && y.dtype == QG_NPY_F32 && memcmp(y.data, want, sizeof want) == 0);
    CU_ASSERT_TRUE(m.count == 10 && memcmp(m.data, wm, 10) == 0);
    free(y.data);
    free(m.data);

    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "fake_quant_backward", "--in", tmp("x.npy"),
                         "--mask", tmp("m.npy"), "--out", tmp("dx.npy"), NULL),
                    0);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "quantize", "--in", tmp("x.npy"), "--scale", "0.05",
                         "--zero-point", "7", "--out", tmp("q.npy"), NULL),
                    0);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "dequantize", "--in", tmp("q.npy"), "--scale",
                         "0.05", "--zero-point", "7", "--out", tmp("dq.npy"), NULL),
                    0);
    qg_npy dq;
    CU_ASSERT_EQUAL_FATAL(qg_npy_read(tmp("dq.npy"), &dq, &err), QG_OK);
    CU_ASSERT_EQUAL(memcmp(dq.data, want, sizeof want), 0); /* dequantize(quantize(x)) == fake_quant(x) */
    free(dq.data);

    /* quint16 and fp8: a uint16 .npy, and a uint8 .npy of the bits, out;
     * a zero point other than 0 refused for fp8, naming it */
    const char *set16[] = {"dtype=quint16"}, *set8[] = {"dtype=fp8_e4m3fn", "qscheme=per_tensor_symmetric"};
    check_q_file(set16, 1, "40000", QG_NPY_U16);
    check_q_file(set8, 2, "0", QG_NPY_U8);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--set", set8[0], "--set", set8[1], "--op", "quantize",
                         "--in", tmp("x.npy"), "--scale", "0.001", "--zero-point", "3", "--out", tmp("q8.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "zero_point[0]: got 3; expected 0 for dtype fp8_e4m3fn");

    /* quantize_dynamic: the qparams printed, q equal to the runtime's */
    CU_ASSERT_EQUAL_FATAL(qgen("run", "--spec", tmp("act.json"), "--op", "quantize_dynamic", "--in", tmp("x.npy"),
                               "--out", tmp("qd.npy"), NULL),
                          0);
    ASSERT_CONTAINS(out_text, "\"scale\": [", "\"zero_point\": [");
    qg_npy qd;
    CU_ASSERT_EQUAL_FATAL(qg_npy_read(tmp("qd.npy"), &qd, &err), QG_OK);
    uint8_t wantd[10];
    float sd;
    int32_t zd;
    CU_ASSERT_EQUAL(qg_quantize_dynamic(&sp, NULL, NULL, X, wantd, 1, 10, &sd, &zd, &err), QG_OK);
    CU_ASSERT_TRUE(qd.count == 10 && memcmp(qd.data, wantd, 10) == 0);
    free(qd.data);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "quantize", "--per-token", "--in", tmp("x.npy"),
                         "--out", tmp("qd.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "--per-token", "quantize_dynamic");

    /* per group: the blocked scale list in its order; the wrong count refused */
    const char *grp[] = {"qscheme=per_group_affine", "channel_len=10", "group_size=4"};
    CU_ASSERT_EQUAL_FATAL(qgen("run", "--spec", tmp("act.json"), "--set", grp[0], "--set", grp[1], "--set", grp[2],
                               "--op", "quantize", "--in", tmp("x.npy"), "--scale", "0.05,0.1,0.2", "--zero-point",
                               "7,8,9", "--out", tmp("qg.npy"), NULL),
                          0);
    qg_spec spg;
    CU_ASSERT_EQUAL_FATAL(qg_spec_load_file(tmp("act.json"), grp, 3, &spg, &err), QG_OK);
    const float sg[3] = {0.05f, 0.1f, 0.2f};
    const int32_t zg[3] = {7, 8, 9};
    qg_qparams qpg = {sg, zg, NULL, 10, 1};
    uint8_t wantg[10];
    qg_ref_quantize(&spg, X, wantg, 10, &qpg);
    qg_npy qgn;
    CU_ASSERT_EQUAL_FATAL(qg_npy_read(tmp("qg.npy"), &qgn, &err), QG_OK);
    CU_ASSERT_TRUE(qgn.count == 10 && memcmp(qgn.data, wantg, 10) == 0);
    free(qgn.data);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--set", grp[0], "--set", grp[1], "--set", grp[2], "--op",
                         "quantize", "--in", tmp("x.npy"), "--scale", "0.05", "--zero-point", "7", "--out",
                         tmp("qg.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "got 1 and 1 values; expected 3", "groups");
    CU_ASSERT_EQUAL_FATAL(qgen("run", "--spec", tmp("act.json"), "--set", grp[0], "--set", grp[1], "--set", grp[2],
                               "--op", "quantize_dynamic", "--in", tmp("x.npy"), "--out", tmp("qg.npy"), NULL),
                          0);
    float sdg[3];
    int32_t zdg[3];
    CU_ASSERT_EQUAL(qg_quantize_dynamic(&spg, NULL, NULL, X, wantg, 1, 10, sdg, zdg, &err), QG_OK);
    char want_text[200];
    snprintf(want_text, sizeof want_text, "\"zero_point\": [%d, %d, %d]", zdg[0], zdg[1], zdg[2]);
    ASSERT_CONTAINS(out_text, want_text, "\"scale\": [");
    CU_ASSERT_EQUAL_FATAL(qg_npy_read(tmp("qg.npy"), &qgn, &err), QG_OK);
    CU_ASSERT_TRUE(qgn.count == 10 && memcmp(qgn.data, wantg, 10) == 0);
    free(qgn.data);

    /* qint4: packed bytes out; dequantize with --shape (odd count) and without */
    const char *i4 = "dtype=qint4";
    CU_ASSERT_EQUAL_FATAL(qgen("run", "--spec", tmp("act.json"), "--set", i4, "--op", "quantize", "--in", tmp("x.npy"),
                               "--scale", "0.3", "--zero-point", "-1", "--out", tmp("q4.npy"), NULL),
                          0);
    qg_spec sp4;
    CU_ASSERT_EQUAL_FATAL(qg_spec_load_file(tmp("act.json"), &i4, 1, &sp4, &err), QG_OK);
    const float s4 = 0.3f;
    const int32_t z4 = -1;
    qg_qparams qp4 = {&s4, &z4, NULL, 1, 1};
    uint8_t want4[5];
    qg_ref_quantize(&sp4, X, want4, 10, &qp4);
    qg_npy q4;
    CU_ASSERT_EQUAL_FATAL(qg_npy_read(tmp("q4.npy"), &q4, &err), QG_OK);
    CU_ASSERT_TRUE(q4.dtype == QG_NPY_U8 && q4.ndim == 1 && q4.count == 5 && memcmp(q4.data, want4, 5) == 0);
    free(q4.data);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--set", i4, "--op", "dequantize", "--in", tmp("q4.npy"),
                         "--scale", "0.3", "--zero-point", "-1", "--shape", "9", "--out", tmp("y4.npy"), NULL),
                    0);
    float wanty4[10];
    qg_ref_dequantize(&sp4, want4, wanty4, 9, &qp4);
    CU_ASSERT_EQUAL_FATAL(qg_npy_read(tmp("y4.npy"), &q4, &err), QG_OK);
    CU_ASSERT_TRUE(q4.count == 9 && memcmp(q4.data, wanty4, 9 * sizeof(float)) == 0);
    free(q4.data);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--set", i4, "--op", "dequantize", "--in", tmp("q4.npy"),
                         "--scale", "0.3", "--zero-point", "-1", "--shape", "2,6", "--out", tmp("y4.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "--shape: 2,6 holds 12 elements", "expected 9 or 10");

    /* observe with a state file, then run from that state */
    unlink(tmp("st.bin"));
    CU_ASSERT_EQUAL(qgen("observe", "--spec", tmp("act.json"), "--in", tmp("x.npy"), "--state", tmp("st.bin"), NULL),
                    0);
    ASSERT_CONTAINS(out_text, "\"scale\": [0.784313738]", "\"zero_point\": [128]");
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "fused_train_step", "--in", tmp("x.npy"), "--state",
                         tmp("st.bin"), "--out", tmp("fy.npy"), NULL),
                    0);
    ASSERT_CONTAINS(out_text, "\"scale\": [0.784313738]");
    /* the switches are saved with the state: fake quant off gives y = x
     * on this call and the next, until it is switched on again */
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "fused_train_step", "--in", tmp("x.npy"), "--state",
                         tmp("st.bin"), "--fake-quant", "off", "--out", tmp("fy.npy"), NULL),
                    0);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "fused_train_step", "--in", tmp("x.npy"), "--state",
                         tmp("st.bin"), "--observer", "off", "--out", tmp("fy.npy"), NULL),
                    0);
    qg_npy fy;
    CU_ASSERT_EQUAL_FATAL(qg_npy_read(tmp("fy.npy"), &fy, &err), QG_OK);
    CU_ASSERT_TRUE(fy.count == 10 && memcmp(fy.data, X, sizeof X) == 0);
    free(fy.data);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "fused_train_step", "--in", tmp("x.npy"), "--state",
                         tmp("st.bin"), "--fake-quant", "maybe", "--out", tmp("fy.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "--fake-quant", "\"maybe\"", "expected on or off");
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "fused_train_step", "--in", tmp("x.npy"), "--state",
                         tmp("st.bin"), "--fake-quant", "on", "--observer", "on", "--out", tmp("fy.npy"), NULL),
                    0);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "quantize", "--in", tmp("x.npy"), "--state",
                         tmp("st.bin"), "--out", tmp("q2.npy"), NULL),
                    0);

    /* the PTQ bias path */
    const float b[] = {0.5f, 0.5f};
    write_f32("b.npy", b, 2);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "quantize_bias", "--in", tmp("b.npy"), "--s-in",
                         "0.02", "--s-w", "0.01,0.01", "--out", tmp("bq.npy"), NULL),
                    0);
    int32_t acc[2 * 4] = {0};
    size_t shape[4] = {1, 2, 2, 2};
    CU_ASSERT_EQUAL(qg_npy_write(tmp("acc.npy"), QG_NPY_I32, shape, 4, acc, &err), QG_OK);
    write_text("out.json", "{\"name\": \"out\", \"ch_axis\": 1}");
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("out.json"), "--op", "requantize", "--in", tmp("acc.npy"), "--s-in",
                         "0.02", "--s-w", "0.01,0.01", "--s-out", "0.0019607844", "--bias", tmp("bq.npy"), "--out",
                         tmp("yq.npy"), NULL),
                    0);
    qg_npy yq;
    CU_ASSERT_EQUAL_FATAL(qg_npy_read(tmp("yq.npy"), &yq, &err), QG_OK);
    CU_ASSERT_TRUE(yq.dtype == QG_NPY_U8 && yq.count == 8);
    for (size_t i = 0; i < yq.count; i++)
        CU_ASSERT_EQUAL(((uint8_t *)yq.data)[i], 255);
    free(yq.data);
}

static void test_bad_qparams_and_data(void) {
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "fake_quant", "--in", tmp("x.npy"), "--scale", "0",
                         "--zero-point", "7", "--out", tmp("y.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "scale[0]", "got 0", "finite value > 0");
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "fake_quant", "--in", tmp("x.npy"), "--scale", "nan",
                         "--zero-point", "7", "--out", tmp("y.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "scale[0]", "nan");
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "fake_quant", "--in", tmp("x.npy"), "--scale", "0.1",
                         "--zero-point", "300", "--out", tmp("y.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "zero_point[0]", "300", "0..255");
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "fake_quant", "--in", tmp("x.npy"), "--scale", "0.1",
                         "--zero-point", "2.5", "--out", tmp("y.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "--zero-point", "2.5", "integer");
    CU_ASSERT_EQUAL(
        qgen("run", "--spec", tmp("act.json"), "--op", "frob", "--in", tmp("x.npy"), "--out", tmp("y.npy"), NULL), 2);
    ASSERT_CONTAINS(err_text, "--op", "frob", "fake_quant");

    /* channel_len mismatch: 5 rows along ch_axis 0, spec says 2 */
    float w[15] = {0};
    size_t shape[2] = {5, 3};
    qg_error err;
    qg_npy_write(tmp("w5.npy"), QG_NPY_F32, shape, 2, w, &err);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("w.json"), "--op", "fake_quant", "--in", tmp("w5.npy"), "--scale",
                         "0.1,0.2", "--zero-point", "0,0", "--out", tmp("y.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "w5.npy", "5 entries along ch_axis 0", "channel_len 2");
    CU_ASSERT_EQUAL(qgen("observe", "--spec", tmp("w.json"), "--in", tmp("w5.npy"), NULL), 2);
    ASSERT_CONTAINS(err_text, "channel_len 2");
    size_t shape2[2] = {2, 3};
    qg_npy_write(tmp("w2.npy"), QG_NPY_F32, shape2, 2, w, &err);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("w.json"), "--op", "fake_quant", "--in", tmp("w2.npy"), "--scale", "0.1",
                         "--zero-point", "0", "--out", tmp("y.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "got 1 and 1 values", "expected 2");

    /* NaN in observed data: error, state file untouched */
    unlink(tmp("nan.state"));
    CU_ASSERT_EQUAL(qgen("observe", "--spec", tmp("act.json"), "--in", tmp("x.npy"), "--state", tmp("nan.state"), NULL),
                    0);
    char before[4096], after[4096];
    size_t nb = read_bytes(tmp("nan.state"), before, sizeof before);
    float xn[3] = {1.0f, NAN, 2.0f};
    write_f32("nan.npy", xn, 3);
    CU_ASSERT_EQUAL(
        qgen("observe", "--spec", tmp("act.json"), "--in", tmp("nan.npy"), "--state", tmp("nan.state"), NULL), 2);
    ASSERT_CONTAINS(err_text, "NaN at element 1", "state kept");
    ASSERT_CONTAINS(err_text, "nan.npy: "); /* the data's file named */
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "fused_train_step", "--in", tmp("nan.npy"), "--out",
                         tmp("nan_y.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "nan.npy: ", "NaN at element 1");
    size_t na = read_bytes(tmp("nan.state"), after, sizeof after);
    CU_ASSERT_TRUE(nb > 64 && na == nb && memcmp(before, after, nb) == 0);

    /* corrupt state file */
    FILE *f = fopen(tmp("nan.state"), "r+b");
    fseek(f, 70, SEEK_SET);
    fputc(0x55, f);
    fclose(f);
    CU_ASSERT_EQUAL(qgen("observe", "--spec", tmp("act.json"), "--in", tmp("x.npy"), "--state", tmp("nan.state"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "nan.state", "checksum");
}

static void test_bad_npy(void) {
    /* truncated: a valid header claiming 10 floats, 3 present */
    qg_error err;
    size_t n = 10;
    qg_npy_write(tmp("t.npy"), QG_NPY_F32, &n, 1, X, &err);
    struct stat st;
    stat(tmp("t.npy"), &st);
    CU_ASSERT_EQUAL(truncate(tmp("t.npy"), st.st_size - 28), 0);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "fake_quant", "--in", tmp("t.npy"), "--scale", "0.1",
                         "--zero-point", "0", "--out", tmp("y.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "t.npy", "truncated data", "12 bytes for 10 float32 elements; expected 40 bytes");
    /* wrong dtype: float64 header */
    write_text("f64.npy", "\x93NUMPY\x01");
    FILE *f = fopen(tmp("f64.npy"), "wb");
    const char hdr[] = "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }";
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(sizeof hdr), 0};
    fwrite(pre, 1, 10, f);
    fwrite(hdr, 1, sizeof hdr - 1, f);
    fputc('\n', f);
    double one = 1.0;
    fwrite(&one, 8, 1, f);
    fclose(f);
    CU_ASSERT_EQUAL(qgen("observe", "--spec", tmp("act.json"), "--in", tmp("f64.npy"), NULL), 2);
    ASSERT_CONTAINS(err_text, "f64.npy", "header descr", "'<f8'", "expected '<f4' (float32)");
    /* an int8 array where float32 is expected */
    int8_t q[3] = {1, 2, 3};
    size_t n3 = 3;
    qg_npy_write(tmp("i8.npy"), QG_NPY_I8, &n3, 1, q, &err);
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "fake_quant", "--in", tmp("i8.npy"), "--scale",
                         "0.1", "--zero-point", "0", "--out", tmp("y.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "i8.npy", "dtype int8", "expected float32");
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "dequantize", "--in", tmp("i8.npy"), "--scale",
                         "0.1", "--zero-point", "0", "--out", tmp("y.npy"), NULL),
                    2);
    ASSERT_CONTAINS(err_text, "dtype int8", "expected uint8");
    write_text("junk.npy", "hello");
    CU_ASSERT_EQUAL(qgen("observe", "--spec", tmp("act.json"), "--in", tmp("junk.npy"), NULL), 2);
    ASSERT_CONTAINS(err_text, "junk.npy", "not a .npy file");
    /* an output that cannot be written leaves nothing behind */
    CU_ASSERT_EQUAL(qgen("run", "--spec", tmp("act.json"), "--op", "fake_quant", "--in", tmp("x.npy"), "--scale", "0.1",
                         "--zero-point", "0", "--out", "/nonexistent-dir/y.npy", NULL),
                    2);
    ASSERT_CONTAINS(err_text, "/nonexistent-dir/y.npy");
}

static size_t dir_bytes(const char *dir, const char *name, char *buf, size_t cap) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return read_bytes(path, buf, cap);
}

static void test_generate(void) {
    CU_ASSERT_EQUAL(qgen("generate", "--help", NULL), 0);
    ASSERT_CONTAINS(out_text, "--targets", "`qgen targets` lists them");
    static const char *const files[] = {"w.h",        "w_dispatch.c", "w_scalar.c", "w_avx2.c",
                                        "w_avx512.c", "w_neon.c",     "w_rvv.c"};
    enum { NF = sizeof files / sizeof files[0] };
    static char first[NF][1 << 17], a[1 << 18];
    size_t nfirst[NF];
    CU_ASSERT_EQUAL(qgen("generate", "--spec", tmp("w.json"), "--targets", "all", "-o", tmp("gen_a"), NULL), 0);
    for (size_t i = 0; i < NF; i++)
        nfirst[i] = dir_bytes(tmp("gen_a"), files[i], first[i], sizeof first[i]);
    CU_ASSERT_EQUAL(qgen("generate", "--spec", tmp("w.json"), "--targets", "all", "-o", tmp("gen_a"), NULL), 0);
    for (size_t i = 0; i < NF; i++) { /* the same command writes the same bytes */
        size_t na = dir_bytes(tmp("gen_a"), files[i], a, sizeof a);
        CU_ASSERT_TRUE(na > 100 && na == nfirst[i] && memcmp(a, first[i], na) == 0);
    }
    size_t nh = dir_bytes(tmp("gen_a"), "w_avx2.c", a, sizeof a);
    a[nh < sizeof a ? nh : sizeof a - 1] = 0;
    char gcc_pragma[128], clang_attr[160];
    snprintf(gcc_pragma, sizeof gcc_pragma, "#pragma GCC target(\"%s\")", qg_target_of(QG_ISA_AVX2)->gcc_target);
    snprintf(clang_attr, sizeof clang_attr, "target(\"%s\"))), apply_to = function)",
             qg_target_of(QG_ISA_AVX2)->clang_target);
    ASSERT_CONTAINS(a, "generated by qgen", "command: qgen generate --spec", "FP_CONTRACT OFF", "fp-contract=off",
                    gcc_pragma, clang_attr, "\"qscheme\": \"per_channel_symmetric\"");

    CU_ASSERT_EQUAL(qgen("generate", "--spec", tmp("w.json"), "--targets", "avx3", "-o", tmp("gen_c"), NULL), 2);
    ASSERT_CONTAINS(err_text, "--targets", "\"avx3\"", "did you mean \"avx2\"");
    CU_ASSERT_EQUAL(qgen("generate", "--spec", tmp("w.json"), "-o", "/proc/qgen-cannot-write", NULL), 2);
    ASSERT_CONTAINS(err_text, "/proc/qgen-cannot-write");
    write_text("bias.json", "{\"name\": \"bias\", \"dtype\": \"qint32\"}");
    unlink(tmp("gen_d/bias.h"));
    CU_ASSERT_EQUAL(qgen("generate", "--spec", tmp("bias.json"), "--targets", "avx2", "-o", tmp("gen_d"), NULL), 2);
    ASSERT_CONTAINS(err_text, "avx2 cannot serve dtype qint32", "[\"scalar\"]");
    CU_ASSERT_EQUAL(dir_bytes(tmp("gen_d"), "bias.h", a, sizeof a), 0); /* nothing written */
    CU_ASSERT_EQUAL(qgen("generate", "--spec", tmp("bias.json"), "--targets", "scalar", "-o", tmp("gen_d"), NULL), 0);
    /* qgen check: the same libclang parse on files already written */
    CU_ASSERT_EQUAL(qgen("check", tmp("gen_a"), NULL), 0);
    char parsed[64]; /* an ISA file per ISA, the header and the dispatcher */
    snprintf(parsed, sizeof parsed, "%d files parse cleanly", QG_ISA_COUNT + 2);
    ASSERT_CONTAINS(out_text, parsed);
    FILE *f = fopen(tmp("gen_a/w_rvv.c"), "a");
    fputs("static int broken(void) { return undeclared_name; }\n", f);
    fclose(f);
    CU_ASSERT_EQUAL(qgen("check", tmp("gen_a"), NULL), 2);
    ASSERT_CONTAINS(err_text, "w_rvv.c", "undeclared_name");
    CU_ASSERT_EQUAL(qgen("generate", "--spec", tmp("w.json"), "--emit", "java", "-o", tmp("gen_e"), NULL), 2);
    ASSERT_CONTAINS(err_text, "--emit", "java");
}

/* The LLVM backend's files: the same header and dispatcher, deterministic
 * per-ISA IR, bitcode, objects and assembly, and clear refusals. */
static void test_generate_llvm(void) {
    static char first[1 << 18], again[1 << 18];
    static const char *const kinds[] = {"ll", "bc", "obj", "asm"};
    static const char *const suffix[] = {"ll", "bc", "o", "s"};
    for (int k = 0; k < 4; k++) {
        char file[64];
        snprintf(file, sizeof file, "w_rvv.%s", suffix[k]);
        CU_ASSERT_EQUAL(
            qgen("generate", "--spec", tmp("w.json"), "--targets", "all", "--emit", kinds[k], "-o", tmp("gen_l"), NULL),
            0);
        size_t n1 = dir_bytes(tmp("gen_l"), file, first, sizeof first);
        CU_ASSERT_EQUAL(
            qgen("generate", "--spec", tmp("w.json"), "--targets", "all", "--emit", kinds[k], "-o", tmp("gen_l"), NULL),
            0);
        size_t n2 = dir_bytes(tmp("gen_l"), file, again, sizeof again);
        CU_ASSERT_TRUE(n1 > 200 && n1 == n2 && memcmp(first, again, n1) == 0);
    }
    size_t n = dir_bytes(tmp("gen_l"), "w_avx2.ll", first, sizeof first);
    first[n < sizeof first ? n : sizeof first - 1] = 0;
    ASSERT_CONTAINS(first, "; w_avx2.ll - generated by qgen", "define void @w_quantize__avx2(",
                    "define void @w_fake_quant__avx2(", "define i32 @w_observe__avx2(",
                    qg_arch_of(QG_ISA_AVX2)->triple);
    static const char *const fast_math[] = {" fast ", " contract ", " reassoc ", " nnan ", " ninf ", " arcp ", " afn "};
    for (size_t k = 0; k < sizeof fast_math / sizeof fast_math[0]; k++) /* no fast-math flag on any instruction */
        CU_ASSERT_PTR_NULL(strstr(first, fast_math[k]));
    CU_ASSERT_PTR_NOT_NULL(strstr(first, "fmul <8 x float>"));
    n = dir_bytes(tmp("gen_l"), "w_rvv.ll", first, sizeof first);
    first[n < sizeof first ? n : sizeof first - 1] = 0;
    /* quantize's vectors: the register group targets/rvv.json gives it, in LLVM's lanes per vscale */
    const qg_target *rvv = qg_target_of(QG_ISA_RVV);
    char group[48];
    snprintf(group, sizeof group, "<vscale x %d x float>", rvv->vscale_lanes * qg_target_lmul(rvv, "quantize"));
    ASSERT_CONTAINS(first, group, qg_arch_of(QG_ISA_RVV)->triple, qg_arch_of(QG_ISA_RVV)->llvm_abi);
    CU_ASSERT_EQUAL(dir_bytes(tmp("gen_l"), "w.h", first, sizeof first) > 100, 1);
    CU_ASSERT_EQUAL(
        qgen("generate", "--spec", tmp("w.json"), "--emit", "obj", "--scalar-arch", "mips", "-o", tmp("gen_m"), NULL),
        2);
    ASSERT_CONTAINS(err_text, "--scalar-arch", "\"mips\"", "x86_64, aarch64 or riscv64");
    CU_ASSERT_EQUAL(dir_bytes(tmp("gen_m"), "w.h", first, sizeof first), 0); /* nothing written */
    CU_ASSERT_EQUAL(
        qgen("generate", "--spec", tmp("bias.json"), "--targets", "neon", "--emit", "ll", "-o", tmp("gen_m"), NULL), 2);
    ASSERT_CONTAINS(err_text, "neon cannot serve dtype qint32");
}

/* Runs qgen on a pseudo-terminal (stdout and stderr both on it); returns
 * its exit status and what the terminal showed, in out_text. */
static int qgen_on_tty(const char *const *args) {
    const char *argv[32] = {QGEN_BIN};
    int argc = 1;
    for (; args[argc - 1] && argc < 31; argc++)
        argv[argc] = args[argc - 1];
    argv[argc] = NULL;
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    if (pid == 0) {
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    size_t len = 0;
    ssize_t r;
    while (pid > 0 && len + 1 < sizeof out_text && (r = read(master, out_text + len, sizeof out_text - 1 - len)) > 0)
        len += (size_t)r; /* read fails with EIO once the child is gone */
    out_text[len] = 0;
    int status = 0;
    if (pid > 0) {
        close(master);
        waitpid(pid, &status, 0);
    }
    return pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A counter on a terminal, rewritten in place; nothing in a pipe or with
 * --quiet. */
static void test_progress(void) {
    const char *gen[] = {"generate", "--spec", tmp("w.json"), "--targets", "all", "-o", tmp("gen_p"), NULL};
    CU_ASSERT_EQUAL(qgen_on_tty(gen), 0);
    const int steps = QG_ISA_COUNT + 3; /* the ISA files, header, dispatcher, the libclang check */
    char first[64], dispatcher[64], last[64];
    snprintf(first, sizeof first, "\r\033[Kqgen generate: 1/%d w_scalar.c", steps);
    snprintf(dispatcher, sizeof dispatcher, "qgen generate: %d/%d w_dispatch.c", steps - 1, steps);
    snprintf(last, sizeof last, "qgen generate: %d/%d checked by libclang", steps, steps);
    ASSERT_CONTAINS(out_text, first, dispatcher, last);
    CU_ASSERT_PTR_NOT_NULL(strstr(out_text, "libclang\r\033[K")); /* erased at the end */
    const char *quiet[] = {"generate", "--spec",     tmp("w.json"), "--targets", "all",
                           "-o",       tmp("gen_p"), "--quiet",     NULL};
    CU_ASSERT_EQUAL(qgen_on_tty(quiet), 0);
    CU_ASSERT_PTR_NULL(strstr(out_text, "qgen generate:"));
    CU_ASSERT_EQUAL(qgen("generate", "--spec", tmp("w.json"), "--targets", "all", "-o", tmp("gen_p"), NULL), 0);
    CU_ASSERT_TRUE(err_text[0] == 0 && out_text[0] == 0); /* not a terminal: silent */
    const char *cmp[] = {"compare",   "--spec", tmp("w.json"), "--ops", "quantize,observe",
                         "--targets", "scalar", "--backends",  "c",     NULL};
    CU_ASSERT_EQUAL(qgen_on_tty(cmp), 0);
    ASSERT_CONTAINS(out_text, "qgen compare: 1/3 ran scalar c", "qgen compare: 3/3 analysed observe scalar c",
                    "| quantize"); /* the report follows the erased line */
}

int main(void) {
    setup();
    static const qg_test tests[] = {
        {"help and usage", test_help_and_usage},
        {"man page and completion from the option tables", test_man_page_and_completion},
        {"spec show/check/presets", test_spec_commands},
        {"run and observe agree with the library", test_run_matches_library},
        {"run: bfloat16 and float16 files", test_run_float_types},
        {"bad qparams and data exit 2 with a clear message", test_bad_qparams_and_data},
        {"bad .npy files", test_bad_npy},
        {"generate: deterministic files, bad targets and directories", test_generate},
        {"generate --emit ll|bc|obj|asm: the LLVM backend", test_generate_llvm},
        {"progress on a terminal only", test_progress},
    };
    return QG_RUN("cli", tests);
}
