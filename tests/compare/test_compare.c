/* qgen compare end to end: the JSON holds every op x ISA x backend with
 * plausible figures, correct kernels that agree across backends, and is
 * deterministic but for the timings; missing tools and models are
 * reported, not fatal; the HTML report renders in headless Chromium.
 *
 * usage: test_compare QGEN SOURCE_DIR WORK_DIR */
#include <jansson.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "compare/compare.h"
#include "plan/kernel_plan.h"
#include "targets/target_table.h"
#include "../test_json.h"
#include "../test_util.h"
#include "qgen/runtime.h"

static const char *qgen_bin, *src_dir, *work;
static char err_text[16384];

static const char *in_work(const char *name) {
    static char bufs[6][1024];
    static int k;
    char *p = bufs[k++ % 6];
    snprintf(p, 1024, "%s/%s", work, name);
    return p;
}

static const char *spec_file(const char *rel) {
    static char bufs[4][1024];
    static int k;
    char *p = bufs[k++ % 4];
    snprintf(p, 1024, "%s/%s", src_dir, rel);
    return p;
}

/* qgen compare with the NULL-terminated arguments; stderr into err_text */
static int compare(const char *first, ...) {
    const char *argv[40] = {qgen_bin, "compare"};
    va_list ap;
    va_start(ap, first);
    qg_test_va_args(argv, 2, 40, first, ap);
    va_end(ap);
    int rc = qg_test_spawn(argv, in_work("stdout.txt"), in_work("stderr.txt"));
    FILE *f = fopen(in_work("stderr.txt"), "r");
    size_t n = f ? fread(err_text, 1, sizeof err_text - 1, f) : 0;
    err_text[n] = 0;
    if (f)
        fclose(f);
    if (rc != 0)
        fprintf(stderr, "\nqgen compare exited %d: %s\n", rc, err_text);
    return rc;
}

static qg_isa isa_id(const char *isa) {
    for (int i = 0; i < QG_ISA_COUNT; i++)
        if (strcmp(qg_isa_name((qg_isa)i), isa) == 0)
            return (qg_isa)i;
    return QG_ISA_COUNT;
}

/* Whether the ISA belongs to this machine's architecture (the ISA table's
 * `arch`; scalar runs anywhere), so compare measures it instead of qemu. */
static bool host_native(const char *isa) {
    const qg_arch *a = qg_arch_of(isa_id(isa));
    return !a || strcmp(a->name, qg_host_arch()) == 0;
}

/* Every row of one report of `nops` ops: present once, plausible, right. */
/* channels: a per-channel spec's channel count (0 for others), whose
 * quantize, dequantize and fake_quant rows read the channels-last rows. */
/* isas: the report's ISAs, the first of the table's (all, or all but wasm,
 * the last, where a test leaves its runtime build out with --targets). */
static void check_isa_rows(json_t *root, int vector_isas_generated, size_t nops, int channels, int isas) {
    json_t *rows = json_object_get(root, "rows");
    CU_ASSERT_EQUAL_FATAL(json_array_size(rows), nops * (size_t)isas * 2); /* op x ISA x backend */
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        const char *op = qg_test_json_str(row, "op"), *isa = qg_test_json_str(row, "isa"),
                   *backend = qg_test_json_str(row, "backend"), *run = qg_test_json_str(row, "run");
        CU_ASSERT_PTR_NOT_NULL_FATAL(op);
        CU_ASSERT_PTR_NOT_NULL_FATAL(run);
        /* the order is fixed: op-major, then ISA, then backend */
        CU_ASSERT_STRING_EQUAL(backend, i % 2 ? "llvm" : "c");
        CU_ASSERT_STRING_EQUAL(isa, qg_isa_name((qg_isa)(i / 2 % (size_t)isas)));
        if (!vector_isas_generated && strcmp(isa, "scalar") != 0) {
            CU_ASSERT_STRING_EQUAL(run, "not generated");
            CU_ASSERT_PTR_NOT_NULL(strstr(qg_test_json_str(row, "note"), "cannot serve"));
            continue;
        }
        const qg_arch *arch = qg_arch_of(isa_id(isa));
        if (arch && !strcmp(arch->runner, "node-wasi")) {
            /* wasm: run and timed under node, sized by llvm-nm; no loop (llvm-mca has no wasm model) */
            CU_ASSERT_STRING_EQUAL(run, "node");
            json_int_t bytes = json_integer_value(json_object_get(row, "code_bytes"));
            CU_ASSERT_TRUE(bytes > 16 && bytes < 20000);
            CU_ASSERT_TRUE(json_is_null(json_object_get(row, "loop")));
            CU_ASSERT_PTR_NOT_NULL(strstr(qg_test_json_str(row, "note"), "no llvm-mca model"));
            CU_ASSERT_TRUE(json_real_value(json_object_get(row, "measured_melem_per_s")) > 1.0);
            CU_ASSERT_TRUE(json_is_true(json_object_get(row, "correct")));
            CU_ASSERT_TRUE(json_is_true(json_object_get(row, "backends_agree")));
            continue;
        }
        json_int_t bytes = json_integer_value(json_object_get(row, "code_bytes"));
        CU_ASSERT_TRUE(bytes > 16 && bytes < 20000);
        json_t *loop = json_object_get(row, "loop");
        if (json_is_null(loop)) { /* only kernels that forward to the runtime's reference */
            CU_ASSERT_PTR_NOT_NULL(strstr(qg_test_json_str(row, "note"), "reference"));
        } else {
            json_int_t n = json_integer_value(json_object_get(loop, "instructions"));
            json_int_t e = json_integer_value(json_object_get(loop, "elements_per_iteration"));
            json_t *mix = json_object_get(loop, "mix");
            json_int_t vector_work = json_integer_value(json_object_get(mix, "arith")) +
                                     json_integer_value(json_object_get(mix, "convert")) +
                                     json_integer_value(json_object_get(mix, "shuffle"));
            CU_ASSERT_TRUE(n > 3 && n < 1000);
            /* a strip of a scalable ISA holds its compare width's fp32 lanes times the op's
             * register group (SVE at 256 bits: 8; RVV at 512 bits and LMUL 4: 64) */
            const qg_target *t = qg_target_of((qg_isa)(i / 2 % (size_t)isas));
            const int lanes = t->lanes ? t->lanes : t->compare_bits / 32 * qg_target_lmul(t, op);
            const bool chan_rows =
                channels && (!strcmp(op, "quantize") || !strcmp(op, "dequantize") || !strcmp(op, "fake_quant"));
            if (chan_rows) {
                /* a whole row where the compiler unrolled its columns, else one column */
                const int column = lanes < channels ? lanes : channels;
                if (e != channels && e != column)
                    fprintf(stderr, "\n%s %s %s: %d elements per iteration\n", op, isa, backend, (int)e);
                CU_ASSERT_TRUE(e == channels || e == column);
                CU_ASSERT_TRUE(vector_work >= e / column); /* each of the row's vectors works */
            } else {
                CU_ASSERT_EQUAL(e, lanes * t->unroll);
            }
            CU_ASSERT_TRUE(vector_work > 0 && vector_work <= n);
            CU_ASSERT_TRUE(json_integer_value(json_object_get(mix, "loads")) > 0);
            json_t *mca = json_object_get(row, "mca");
            CU_ASSERT_TRUE(json_array_size(mca) >= 1);
            size_t m;
            json_t *model;
            json_array_foreach(mca, m, model) {
                double cpe = json_real_value(json_object_get(model, "cycles_per_element"));
                if (!(cpe > 0.01 && cpe < 200.0))
                    fprintf(stderr, "\n%s %s %s %s: cycles per element %g\n", op, isa, backend,
                            qg_test_json_str(model, "cpu"), cpe);
                CU_ASSERT_TRUE(cpe > 0.01 && cpe < 200.0);
            }
        }
        /* where it ran: natively (timed) or under qemu (never timed) */
        json_t *measured = json_object_get(row, "measured_melem_per_s");
        if (host_native(isa)) {
            if (qg_cpu_has(isa_id(isa))) {
                CU_ASSERT_STRING_EQUAL(run, "native");
                CU_ASSERT_TRUE(json_real_value(measured) > 1.0);
            }
        } else {
            CU_ASSERT_TRUE(json_is_null(measured));
            const char *qemu = qg_arch_of(isa_id(isa))->qemu; /* the ISA table's runner */
            CU_ASSERT_TRUE(strncmp(run, qemu, strlen(qemu)) == 0);
        }
        if (!host_native(isa) || qg_cpu_has(isa_id(isa))) {
            if (!json_is_true(json_object_get(row, "correct")) || !json_is_true(json_object_get(row, "backends_agree")))
                fprintf(stderr, "\n%s %s %s: correct %s, agree %s\n", op, isa, backend,
                        json_dumps(json_object_get(row, "correct"), JSON_ENCODE_ANY),
                        json_dumps(json_object_get(row, "backends_agree"), JSON_ENCODE_ANY));
            CU_ASSERT_TRUE(json_is_true(json_object_get(row, "correct")));
            CU_ASSERT_TRUE(json_is_true(json_object_get(row, "backends_agree")));
        }
    }
}

static void check_op_rows(json_t *root, int vector_isas_generated, size_t nops, int channels) {
    check_isa_rows(root, vector_isas_generated, nops, channels, QG_ISA_COUNT);
}

static void check_rows(json_t *root, int vector_isas_generated, int channels) {
    check_op_rows(root, vector_isas_generated, QG_K_OP_COUNT, channels);
}

/* The report without its timings, which alone may differ between runs. */
static void drop_timings(json_t *root) {
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(root, "rows"), i, row)
        json_object_set_new(row, "measured_melem_per_s", json_null());
}

static void test_default_spec_json(void) {
    const char *spec = spec_file("examples/specs/act_quint8.json");
    CU_ASSERT_EQUAL_FATAL(compare("--spec", spec, "--format", "json", "-o", in_work("act1.json"), NULL), 0);
    json_t *a = qg_test_load_json(in_work("act1.json"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_STRING_EQUAL(qg_test_json_str(a, "format"), "qgen-compare/1");
    CU_ASSERT_STRING_EQUAL(qg_test_json_str(json_object_get(a, "spec"), "name"), "act");
    check_rows(a, 1, 0);
    /* deterministic but for the timings: two ops again, every backend and
     * ISA but wasm (the whole report a second time doubled the test's
     * time; wasm's build of the runtime alone adds a sixth) */
    CU_ASSERT_EQUAL_FATAL(compare("--spec", spec, "--ops", "quantize,observe", "--targets",
                                  "scalar,avx2,avx512,neon,rvv,sve", "--format", "json", "-o", in_work("act2.json"),
                                  NULL),
                          0);
    json_t *b = qg_test_load_json(in_work("act2.json"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    drop_timings(a);
    drop_timings(b);
    json_t *rows = json_object_get(a, "rows"), *kept = json_array();
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        const char *op = qg_test_json_str(row, "op"), *isa = qg_test_json_str(row, "isa");
        if ((strcmp(op, "quantize") == 0 || strcmp(op, "observe") == 0) && strcmp(isa, "wasm") != 0)
            json_array_append(kept, row);
    }
    CU_ASSERT_TRUE(json_array_size(kept) > 0);
    CU_ASSERT_TRUE(json_equal(kept, json_object_get(b, "rows")));
    json_object_del(a, "rows");
    json_object_del(b, "rows");
    CU_ASSERT_TRUE(json_equal(a, b));
    json_decref(kept);
    json_decref(a);
    json_decref(b);
}

static void test_other_specs_json(void) {
    /* per channel (channels-last table) and a qint32 spec (scalar only);
     * wasm's rows are the default spec's (its runtime build is a sixth of
     * a run) */
    CU_ASSERT_EQUAL_FATAL(compare("--spec", spec_file("tests/kernels/specs/w_pc_sym.json"), "--targets",
                                  "scalar,avx2,avx512,neon,rvv,sve", "--format", "json", "-o", in_work("w.json"), NULL),
                          0);
    json_t *w = qg_test_load_json(in_work("w.json"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    check_isa_rows(w, 1, QG_K_OP_COUNT, 16, QG_ISA_WASM); /* w_pc_sym.json's channel_len */
    json_decref(w);
    CU_ASSERT_EQUAL_FATAL(compare("--spec", spec_file("tests/kernels/specs/bias_q32.json"), "--format", "json", "-o",
                                  in_work("bias.json"), NULL),
                          0);
    json_t *b = qg_test_load_json(in_work("bias.json"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    check_rows(b, 0, 0);
    json_decref(b);
}

/* A bfloat16 per-group qint4 spec with a short last group: the loops are
 * found in the blocks the entry hands to the runtime's group and 4-bit
 * drivers, the driver program lays the tensor out in whole rows with a
 * scale per group, hashes the packed bytes, and leaves observe out (no
 * observer state per group) with a note saying so. */
static void test_per_group_4bit_json(void) {
    CU_ASSERT_EQUAL_FATAL(compare("--spec", spec_file("tests/kernels/specs/bf16_grp_q4.json"), "--ops",
                                  "quantize,dequantize,fake_quant,observe", "--format", "json", "-o", in_work("g.json"),
                                  NULL),
                          0);
    json_t *g = qg_test_load_json(in_work("g.json"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    check_op_rows(g, 1, 3, 0);
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(g, "rows"), i, row)
        CU_ASSERT_STRING_NOT_EQUAL(qg_test_json_str(row, "op"), "observe");
    char *notes = json_dumps(json_object_get(g, "notes"), JSON_ENCODE_ANY);
    CU_ASSERT_TRUE(
        notes && strstr(notes, "observe: not compared: qscheme: per_group_symmetric keeps no observer state") != NULL);
    free(notes);
    json_decref(g);
}

/* A block spec's report holds ggml's kernels, measured beside qgen's
 * (QGEN_GGML_LIB_DIR: npm's libraries, which scripts/install-deps.sh
 * installs), and says why not when they cannot be found. */
static void test_ggml_peers(void) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/.deps/ggml/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64", src_dir);
    setenv("QGEN_GGML_LIB_DIR", dir, 1);
    CU_ASSERT_EQUAL_FATAL(compare("--spec", "ggml.q8_0", "--ops", "quantize,dequantize", "--targets", "scalar",
                                  "--backends", "c", "--format", "json", "-o", in_work("ggml.json"), NULL),
                          0);
    json_t *g = qg_test_load_json(in_work("ggml.json"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    size_t i;
    json_t *peer;
    int quantize = 0, dequantize = 0;
    json_array_foreach(json_object_get(g, "peers"), i, peer) {
        const char *op = qg_test_json_str(peer, "op");
        CU_ASSERT_TRUE(json_real_value(json_object_get(peer, "measured_melem_per_s")) > 1.0);
        CU_ASSERT_PTR_NOT_NULL(strstr(qg_test_json_str(peer, "peer"), "ggml"));
        quantize += strcmp(op, "quantize") == 0;
        dequantize += strcmp(op, "dequantize") == 0;
    }
    CU_ASSERT_TRUE(quantize >= 1); /* ggml's pick for this CPU, and haswell's where that is another */
    CU_ASSERT_EQUAL(dequantize, 1);
    json_t *row;
    json_array_foreach(json_object_get(g, "rows"), i, row)
        CU_ASSERT_TRUE(json_is_true(json_object_get(row, "correct")));
    json_decref(g);

    setenv("QGEN_GGML_LIB_DIR", "/nonexistent", 1);
    CU_ASSERT_EQUAL_FATAL(compare("--spec", "ggml.q8_0", "--ops", "quantize", "--targets", "scalar", "--backends", "c",
                                  "--format", "json", "-o", in_work("ggml2.json"), NULL),
                          0);
    g = qg_test_load_json(in_work("ggml2.json"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(g, "peers")), 0);
    char *notes = json_dumps(json_object_get(g, "notes"), JSON_ENCODE_ANY);
    CU_ASSERT_TRUE(notes && strstr(notes, "ggml: not measured: cannot load /nonexistent/libggml-base.so") != NULL);
    free(notes);
    json_decref(g);
    unsetenv("QGEN_GGML_LIB_DIR");
}

static void test_missing_tools_and_models(void) {
    const char *spec = spec_file("examples/specs/act_quint8.json");
    setenv("QGEN_QEMU_RISCV64", "/nonexistent/qemu-riscv64", 1);
    char models[96]; /* an unknown model beside the ISA's own */
    snprintf(models, sizeof models, "neon=cortex-x9000,%s", qg_target_of(QG_ISA_NEON)->mca_cpus);
    int rc = compare("--spec", spec, "--ops", "quantize", "--targets", "neon,rvv", "--mca-cpu", models, "--format",
                     "json", "-o", in_work("missing.json"), NULL);
    unsetenv("QGEN_QEMU_RISCV64");
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    json_t *j = qg_test_load_json(in_work("missing.json"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    json_t *rows = json_object_get(j, "rows");
    CU_ASSERT_EQUAL_FATAL(json_array_size(rows), 4);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        json_t *mca = json_object_get(row, "mca");
        if (strcmp(qg_test_json_str(row, "isa"), "rvv") == 0) {
            CU_ASSERT_STRING_EQUAL(qg_test_json_str(row, "run"), "not run: qemu-riscv64 not found");
            CU_ASSERT_TRUE(json_is_null(json_object_get(row, "correct")));
        } else {
            CU_ASSERT_TRUE(json_is_true(json_object_get(row, "correct")));
            json_t *missing = json_array_get(mca, 0), *present = json_array_get(mca, 1);
            CU_ASSERT_TRUE(json_is_null(json_object_get(missing, "cycles_per_element")));
            ASSERT_CONTAINS(qg_test_json_str(missing, "note"), "no model for cortex-x9000");
            CU_ASSERT_TRUE(json_real_value(json_object_get(present, "cycles_per_element")) > 0.0);
        }
    }
    json_decref(j);
    setenv("QGEN_LLVM_MCA", "/nonexistent/llvm-mca", 1);
    rc = compare("--spec", spec, "--ops", "dequantize", "--targets", "avx2", "--format", "md", "-o",
                 in_work("nomca.md"), NULL);
    unsetenv("QGEN_LLVM_MCA");
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    FILE *f = fopen(in_work("nomca.md"), "r");
    static char md[32768];
    size_t n = f ? fread(md, 1, sizeof md - 1, f) : 0;
    md[n] = 0;
    if (f)
        fclose(f);
    char first_model[64];
    snprintf(first_model, sizeof first_model, "%.*s: n/a", (int)strcspn(qg_target_of(QG_ISA_AVX2)->mca_cpus, ","),
             qg_target_of(QG_ISA_AVX2)->mca_cpus);
    ASSERT_CONTAINS(md, "| dequantize | avx2 | c |", first_model, "Note: llvm-mca-19 not found");
    /* bad options are refused with a message */
    CU_ASSERT_EQUAL(compare("--spec", spec, "--mca-cpu", "avx3=some-cpu", NULL), 2);
    ASSERT_CONTAINS(err_text, "--mca-cpu", "avx3");
    CU_ASSERT_EQUAL(compare("--spec", spec, "--format", "pdf", NULL), 2);
    ASSERT_CONTAINS(err_text, "--format", "pdf", "md, json or html");
}

/* The HTML report in headless Chromium: the DOM it builds has the charts
 * and the table, and a screenshot is taken (kept as compare.png). */
static void test_html_renders(void) {
    const char *spec = spec_file("examples/specs/act_quint8.json");
    CU_ASSERT_EQUAL_FATAL(compare("--spec", spec, "--ops", "fake_quant,quantize", "--targets", "scalar,avx2,neon",
                                  "--format", "html", "-o", in_work("compare.html"), NULL),
                          0);
    char chromium[512] = "/usr/bin/chromium";
    if (access(chromium, X_OK) != 0) {
        fprintf(stderr, "\nchromium is not installed (scripts/install-deps.sh installs it)\n");
        CU_FAIL("chromium missing");
        return;
    }
    char url[1200], shot[1200];
    snprintf(url, sizeof url, "file://%s", in_work("compare.html"));
    snprintf(shot, sizeof shot, "--screenshot=%s", in_work("compare.png"));
    const char *dump[] = {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", url, NULL};
    CU_ASSERT_EQUAL(qg_test_spawn(dump, in_work("dom.html"), in_work("chromium.txt")), 0);
    static char dom[1 << 18];
    FILE *f = fopen(in_work("dom.html"), "r");
    size_t n = f ? fread(dom, 1, sizeof dom - 1, f) : 0;
    dom[n] = 0;
    if (f)
        fclose(f);
    ASSERT_CONTAINS(dom, "<svg", "<rect", "cycles per element", "Melem/s", "<td>fake_quant</td>", "qemu-aarch64",
                    "<h3>fake_quant</h3>", "<h3>quantize</h3>", "(log scale)");
    /* a line for every llvm-mca model of the ISA (targets/avx2.json's mca_cpus) */
    const char *cpus = qg_target_of(QG_ISA_AVX2)->mca_cpus;
    int models = 0;
    for (const char *cpu = cpus; *cpu; models++) {
        const size_t len = strcspn(cpu, ",");
        char line[160];
        snprintf(line, sizeof line, ">avx2 @%.*s</text>", (int)len, cpu);
        ASSERT_CONTAINS(dom, line);
        cpu += len + (cpu[len] == ',');
    }
    CU_ASSERT_TRUE(models >= 2);
    /* the page as laid out: every chart's labels inside it, none over another */
    char check[1200];
    snprintf(check, sizeof check, "file://%s", in_work("check.html"));
    FILE *page = fopen(in_work("check.html"), "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(page);
    fputs(dom, page);
    fputs("<script>(function () {\n"
          "  var bad = [], n = 0;\n"
          "  document.querySelectorAll('svg.chart').forEach(function (svg, c) {\n"
          "    var box = svg.getBoundingClientRect();\n"
          "    var r = Array.prototype.map.call(svg.querySelectorAll('text'), function (t) {\n"
          "      return t.getBoundingClientRect(); });\n"
          "    r.forEach(function (a, i) {\n"
          "      n++;\n"
          "      if (a.left < box.left - 0.5 || a.right > box.right + 0.5 || a.top < box.top - 0.5 ||\n"
          "          a.bottom > box.bottom + 0.5) bad.push('chart ' + c + ' label ' + i + ' outside');\n"
          "      for (var j = i + 1; j < r.length; j++) {\n"
          "        var b = r[j];\n"
          "        if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 &&\n"
          "            b.top < a.bottom - 0.5) bad.push('chart ' + c + ' labels ' + i + ',' + j + ' overlap');\n"
          "      }\n"
          "    });\n"
          "  });\n"
          "  var p = document.createElement('pre');\n"
          "  p.textContent = 'layout: ' + (bad.length ? bad.slice(0, 8).join('; ') : 'ok') + ', ' + n + ' labels';\n"
          "  document.body.appendChild(p);\n"
          "})();</script>\n",
          page);
    fclose(page);
    const char *laid[] = {
        chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1100,1600", "--dump-dom", check, NULL};
    CU_ASSERT_EQUAL(qg_test_spawn(laid, in_work("laid.html"), in_work("chromium3.txt")), 0);
    f = fopen(in_work("laid.html"), "r");
    n = f ? fread(dom, 1, sizeof dom - 1, f) : 0;
    dom[n] = 0;
    if (f)
        fclose(f);
    const char *layout = strstr(dom, "<pre>layout: "); /* the result, not the script's text */
    CU_ASSERT_PTR_NOT_NULL_FATAL(layout);
    layout += strlen("<pre>");
    if (strncmp(layout, "layout: ok, ", 12) != 0)
        fprintf(stderr, "\n%.300s\n", layout);
    CU_ASSERT_TRUE(strncmp(layout, "layout: ok, ", 12) == 0 && atoi(layout + 12) > 50);
    const char *png[] = {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1100,1600", shot,
                         url,      NULL};
    CU_ASSERT_EQUAL(qg_test_spawn(png, in_work("shot.txt"), in_work("chromium2.txt")), 0);
    struct stat sb;
    CU_ASSERT_TRUE(stat(in_work("compare.png"), &sb) == 0 && sb.st_size > 20000);
}

/* The main loop is the steady state: a loop that calls out (a buffered
 * tail's memcpy inside a walk of one-vector runs) loses to a call-free one
 * even with more vector work, and wins only when it is all there is. */
static void test_loop_pick_skips_calls(void) {
    static const char *const text = "\t.text\n"
                                    "f:\n"
                                    ".LBB0_1:\n"
                                    "\tfmul\tv0.4s, v0.4s, v1.4s\n"
                                    "\tfmul\tv2.4s, v2.4s, v1.4s\n"
                                    "\tfmul\tv3.4s, v3.4s, v1.4s\n"
                                    "\tbl\tmemcpy\n"
                                    "\tsubs\tx0, x0, #1\n"
                                    "\tb.ne\t.LBB0_1\n"
                                    ".LBB0_2:\n"
                                    "\tfmul\tv4.4s, v4.4s, v1.4s\n"
                                    "\tsubs\tx1, x1, #1\n"
                                    "\tb.ne\t.LBB0_2\n"
                                    "\tret\n"
                                    ".Lfunc_end0:\n";
    const char *const fn[] = {"f"};
    qg_loop loop;
    qg_loop_find(text, fn, 1, "aarch64", &loop);
    CU_ASSERT_TRUE(loop.found);
    CU_ASSERT_EQUAL(loop.work, 1);
    CU_ASSERT_EQUAL(loop.instructions, 3);
    CU_ASSERT_TRUE(loop.text && !strstr(loop.text, "memcpy"));
    qg_loop_free(&loop);
    /* without the call-free loop, the one that calls is still measured */
    char alone[512];
    snprintf(alone, sizeof alone, "%.*s\tret\n.Lfunc_end0:\n", (int)(strstr(text, ".LBB0_2:") - text), text);
    qg_loop_find(alone, fn, 1, "aarch64", &loop);
    CU_ASSERT_TRUE(loop.found);
    CU_ASSERT_EQUAL(loop.work, 3);
    CU_ASSERT_TRUE(loop.text && strstr(loop.text, "memcpy"));
    qg_loop_free(&loop);
}

/* A call on a side path of the loop (a packed mask's strip off the byte
 * grid) is the rare case: left out of the excerpt, while the loop's every
 * other instruction, the other side of the branch included, stays in. */
static void test_loop_pick_drops_cold_calls(void) {
    static const char *const text = "\t.text\n"
                                    "g:\n"
                                    ".LBB1_1:\n"
                                    "\tfmul\tv0.4s, v0.4s, v1.4s\n"
                                    "\tfadd\tv2.4s, v2.4s, v1.4s\n"
                                    "\tcbz\tx2, .LBB1_3\n"
                                    "\tmov\tx0, x3\n"
                                    "\tbl\tput_bits_slow\n"
                                    "\tldr\tq1, [sp]\n"
                                    "\tb\t.LBB1_4\n"
                                    ".LBB1_3:\n"
                                    "\tstr\td0, [x4]\n"
                                    ".LBB1_4:\n"
                                    "\tsubs\tx1, x1, #1\n"
                                    "\tb.ne\t.LBB1_1\n"
                                    "\tret\n"
                                    ".Lfunc_end1:\n";
    const char *const fn[] = {"g"};
    qg_loop loop;
    qg_loop_find(text, fn, 1, "aarch64", &loop);
    CU_ASSERT_TRUE(loop.found);
    CU_ASSERT_EQUAL(loop.work, 2);
    CU_ASSERT_EQUAL(loop.instructions, 6); /* fmul fadd cbz | str | subs b.ne */
    CU_ASSERT_TRUE(loop.text && !strstr(loop.text, "put_bits_slow") && strstr(loop.text, "str\td0"));
    qg_loop_free(&loop);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: test_compare QGEN SOURCE_DIR WORK_DIR\n");
        return 2;
    }
    qgen_bin = argv[1], src_dir = argv[2], work = argv[3];
    mkdir(work, 0755);
    static const qg_test tests[] = {
        {"default spec: every op x ISA x backend, plausible, correct, deterministic", test_default_spec_json},
        {"per-channel and qint32 specs", test_other_specs_json},
        {"a per-group 4-bit bfloat16 spec", test_per_group_4bit_json},
        {"missing qemu, llvm-mca and models are reported", test_missing_tools_and_models},
        {"html renders in headless Chromium", test_html_renders},
        {"the main loop: loops that call out lose to call-free ones", test_loop_pick_skips_calls},
        {"the main loop: a call on a side path is left out", test_loop_pick_drops_cold_calls},
        {"ggml's kernels beside a block spec's", test_ggml_peers},
    };
    return QG_RUN("compare", tests);
}
