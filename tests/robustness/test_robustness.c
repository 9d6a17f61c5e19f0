/* Hostile input, one case per finding of the robustness probe (docs/
 * robustness.md): each either succeeds or exits 2 with one "qgen: ..." line
 * that names what was wrong, and leaves no output file and no state
 * changed. The ASan/UBSan build runs the same cases. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../test_util.h"
#include "npy.h"
#include "qgen/runtime.h"

static char out_text[1 << 16], err_text[1 << 16];

static const char *tmp(const char *name) {
    static char bufs[8][600];
    static int k;
    char *p = bufs[k++ % 8];
    snprintf(p, 600, "%s/%s", TEST_TMP, name);
    return p;
}

/* argv for qgen: QGEN_BIN, then the NULL-terminated args. */
static void qgen_argv(const char *const *args, const char *argv[40]) {
    int argc = 1;
    argv[0] = QGEN_BIN;
    while (args[argc - 1] && argc < 39) {
        argv[argc] = args[argc - 1];
        argc++;
    }
    argv[argc] = NULL;
}

/* Runs qgen with a NULL-terminated argument list; exit status (128 + signal
 * on a crash), stdout and stderr in out_text/err_text. */
static int qgenv(const char *const *args) {
    const char *argv[40];
    qgen_argv(args, argv);
    int rc = qg_test_spawn(argv, tmp("stdout.txt"), tmp("stderr.txt"));
    qg_test_slurp(tmp("stdout.txt"), out_text, sizeof out_text);
    qg_test_slurp(tmp("stderr.txt"), err_text, sizeof err_text);
    return rc;
}
#define QGEN(...) qgenv((const char *const[]){__VA_ARGS__, NULL})

/* Exit 2 and one line of "qgen: ..." naming each of the needles. */
#define REFUSED(rc, ...)                                                                                               \
    do {                                                                                                               \
        CU_ASSERT_EQUAL(rc, 2);                                                                                        \
        CU_ASSERT_TRUE(strncmp(err_text, "qgen: ", 6) == 0 &&                                                          \
                       strchr(err_text, '\n') == err_text + strlen(err_text) - 1);                                     \
        ASSERT_CONTAINS(err_text, __VA_ARGS__);                                                                        \
    } while (0)

static void write_bytes(const char *name, const void *data, size_t n) {
    FILE *f = fopen(tmp(name), "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}

static void write_text(const char *name, const char *text) { write_bytes(name, text, strlen(text)); }

/* A v1 .npy file with the given header text and data bytes. */
static void write_npy_raw(const char *name, const char *header, const void *data, size_t n) {
    size_t h = strlen(header);
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(h & 0xff), (unsigned char)(h >> 8)};
    FILE *f = fopen(tmp(name), "wb");
    fwrite(pre, 1, 10, f);
    fwrite(header, 1, h, f);
    fwrite(data, 1, n, f);
    fclose(f);
}

static void write_f32(const char *name, const float *x, size_t n) {
    qg_error err;
    qg_npy_write(tmp(name), QG_NPY_F32, &n, 1, x, &err);
}

static bool exists(const char *name) { return access(tmp(name), F_OK) == 0; }

static size_t file_bytes(const char *name, char *buf, size_t cap) {
    FILE *f = fopen(tmp(name), "rb");
    size_t n = f ? fread(buf, 1, cap, f) : 0;
    if (f)
        fclose(f);
    return n;
}

/* 1: more channels than the CLI's old fixed arrays held */
static void test_many_channels(void) {
    enum { C = 131072 };
    write_text("pc.json", "{\"name\": \"pc\", \"dtype\": \"qint8\", \"qscheme\": \"per_channel_symmetric\", "
                          "\"channel_len\": 131072, \"observer\": {\"type\": \"moving_average_per_channel_minmax\"}}");
    float *x = malloc(C * sizeof(float));
    for (size_t i = 0; i < C; i++)
        x[i] = (float)(i % 97) * 0.25f - 12.0f;
    write_f32("pc_x.npy", x, C);
    free(x);
    unlink(tmp("pc.state"));
    CU_ASSERT_EQUAL(QGEN("observe", "--spec", tmp("pc.json"), "--in", tmp("pc_x.npy"), "--state", tmp("pc.state")), 0);
    CU_ASSERT_EQUAL(QGEN("run", "--spec", tmp("pc.json"), "--op", "quantize", "--in", tmp("pc_x.npy"), "--state",
                         tmp("pc.state"), "--out", tmp("pc_q.npy")),
                    0);
    CU_ASSERT_EQUAL(QGEN("run", "--spec", tmp("pc.json"), "--op", "fused_train_step", "--in", tmp("pc_x.npy"),
                         "--state", tmp("pc.state"), "--out", tmp("pc_y.npy")),
                    0);
    qg_npy q;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_npy_read(tmp("pc_q.npy"), &q, &err), QG_OK);
    CU_ASSERT_EQUAL(q.count, C);
    free(q.data);
}

/* 2, 10, 11, 17: .npy headers numpy would refuse */
static void test_npy_headers(void) {
    write_text("a.json", "{\"name\": \"a\"}");
    float four[4] = {1, 2, 3, 4};
    static const struct {
        const char *header, *needle;
    } bad[] = {
        {"{'descr':", "header descr"},
        {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (4,), }\n", "fortran_order: got \"Maybe\"; expected False"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (4,), }\n", "expected False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (0, -1), }\n", "header shape"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (0, 9223372036854775808), }\n", "header shape"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4), }\n", "a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'extra': 1}\n", "unknown or repeated"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}\n", "unknown or repeated"},
        {"{'descr': '<f4', 'shape': (4,)}\n", "lacks fortran_order"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), } junk\n", "header end"},
        {"['descr', '<f4']\n", "not a dict"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }\n", "truncated data"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576, 2), }\n", "2^40"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        write_npy_raw("bad.npy", bad[k].header, four, sizeof four);
        REFUSED(QGEN("observe", "--spec", tmp("a.json"), "--in", tmp("bad.npy")), "bad.npy", bad[k].needle);
    }
    write_npy_raw("good.npy", "{'shape': (4,), 'fortran_order': False, 'descr': '<f4'}   \n", four, sizeof four);
    CU_ASSERT_EQUAL(QGEN("observe", "--spec", tmp("a.json"), "--in", tmp("good.npy")), 0);
}

/* 3, 4, 14: qgen check on directories that are not what it expects */
static void test_check(void) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/x.c'", tmp("chk"), tmp("chk"));
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    /* six specs, every ISA */
    for (int k = 0; k < 6; k++) {
        char json[80], name[32];
        snprintf(name, sizeof name, "s%d.json", k);
        snprintf(json, sizeof json, "{\"name\": \"s%d\", \"targets\": \"all\"}", k);
        write_text(name, json);
        CU_ASSERT_EQUAL(QGEN("generate", "--spec", tmp(name), "--no-check", "-o", tmp("chk")), 0);
    }
    CU_ASSERT_EQUAL(QGEN("check", tmp("chk")), 0); /* a directory named x.c is skipped */
    char parsed[64];                               /* six specs, each an ISA file per ISA, a header and a dispatcher */
    snprintf(parsed, sizeof parsed, "%d files parse cleanly", 6 * (QG_ISA_COUNT + 2));
    ASSERT_CONTAINS(out_text, parsed);
    write_text("chk/zz_garbage.c", "this is not C\n");
    REFUSED(QGEN("check", tmp("chk")), "zz_garbage.c");
    unlink(tmp("chk/zz_garbage.c"));
    write_text("chk/evil.c", "#include \"/dev/zero\"\n");
    REFUSED(QGEN("check", tmp("chk")), "evil.c:1", "#include \"/dev/zero\"", "expected <system header>");
    write_text("chk/evil.c", "#include </dev/zero>\n");
    REFUSED(QGEN("check", tmp("chk")), "evil.c:1");
    unlink(tmp("chk/evil.c"));
}

/* 5, 9, 15, 16, 17, 18: spec fields and arguments */
static void test_arguments(void) {
    REFUSED(QGEN("spec", "show", tmp("a.json"), "--set", "quant_min=-9223372036854775808", "--set", "quant_max=0",
                 "--set", "reduce_range=true"),
            "quant_min", "expected");
    REFUSED(QGEN("spec", "show", tmp("a.json"), "--set", "dtype=\xff"), "not UTF-8");
    REFUSED(QGEN("spec", "show", tmp("a.json"), "--set", "observer=1"), "observer.<field>=value");
    CU_ASSERT_PTR_NULL(strstr(err_text, "did you mean"));
    REFUSED(QGEN("spec", "show", tmp("a.json"), "--set", "name=a\nb"), "name=a\\nb", "expected a C identifier");
    /* a huge name or key (the largest argument exec passes): the message
     * still ends in what was expected */
    size_t big = 120000;
    char *huge = malloc(big + 16);
    memcpy(huge, "name=", 5);
    memset(huge + 5, 'a', big);
    huge[5 + big] = 0;
    REFUSED(QGEN("spec", "show", tmp("a.json"), "--set", huge), "expected a C identifier");
    memset(huge, 'k', big);
    strcpy(huge + big, "=1");
    REFUSED(QGEN("spec", "show", tmp("a.json"), "--set", huge), "expected a field name");
    free(huge);
    REFUSED(QGEN("run", "--bogus"), "qgen: run: unknown option --bogus");
    REFUSED(QGEN("compare", "--spec", tmp("a.json"), "--ops", ""), "--ops", "empty list");
    REFUSED(QGEN("compare", "--spec", tmp("a.json"), "--backends", ""), "--backends", "empty list");
    REFUSED(QGEN("generate", "--spec", tmp("a.json"), "--scalar-arch", "sparc", "-o", tmp("g")), "--scalar-arch",
            "sparc");
    /* qint32 zero points are integers, not floats */
    write_text("b32.json", "{\"name\": \"b32\", \"dtype\": \"qint32\"}");
    const float zero = 0.0f;
    write_f32("zero.npy", &zero, 1);
    CU_ASSERT_EQUAL(QGEN("run", "--spec", tmp("b32.json"), "--op", "quantize", "--in", tmp("zero.npy"), "--scale", "1",
                         "--zero-point", "16777217", "--out", tmp("q32.npy")),
                    0);
    qg_npy q;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_npy_read(tmp("q32.npy"), &q, &err), QG_OK);
    CU_ASSERT_EQUAL(((int32_t *)q.data)[0], 16777217);
    free(q.data);
    CU_ASSERT_EQUAL(QGEN("run", "--spec", tmp("b32.json"), "--op", "quantize", "--in", tmp("zero.npy"), "--scale", "1",
                         "--zero-point", "2147483647", "--out", tmp("q32.npy")),
                    0);
}

/* 6, 7, 8: values no formula can take */
static void test_values(void) {
    const float x[4] = {1.0f, -INFINITY, 0.5f, 2.0f};
    write_f32("inf.npy", x, 4);
    write_text("ma.json", "{\"name\": \"ma\", \"base\": \"torch.qnnpack.activation\"}");
    REFUSED(QGEN("observe", "--spec", tmp("a.json"), "--in", tmp("inf.npy")), "-inf at element 1",
            "expected finite values");
    REFUSED(QGEN("run", "--spec", tmp("ma.json"), "--op", "fused_train_step", "--in", tmp("inf.npy"), "--out",
                 tmp("f.npy")),
            "-inf at element 1");
    const float wide[2] = {-3e38f, 3e38f};
    write_f32("wide.npy", wide, 2);
    write_text("h.json", "{\"name\": \"h\", \"observer\": {\"type\": \"histogram\"}}");
    REFUSED(QGEN("observe", "--spec", tmp("h.json"), "--in", tmp("wide.npy")), "span more than float32 holds");
    static const char *const lsq_bad[][2] = {{"0.1", "nan"}, {"0.1", "1e10"}, {"inf", "3"},  {"nan", "3"},
                                             {"0", "3"},     {"-0.1", "3"},   {"1e39", "3"}, {"0.1", "300"}};
    for (size_t k = 0; k < sizeof lsq_bad / sizeof lsq_bad[0]; k++) {
        for (int op = 0; op < 2; op++)
            CU_ASSERT_EQUAL(QGEN("run", "--spec", tmp("a.json"), "--op", op ? "lsq_backward" : "lsq_forward", "--in",
                                 tmp("good.npy"), "--grad", tmp("good.npy"), "--scale", lsq_bad[k][0], "--zero-point",
                                 lsq_bad[k][1], "--out", tmp("l.npy")),
                            2);
        CU_ASSERT_FALSE(exists("l.npy"));
    }
    const float bias[1] = {0.0f};
    write_f32("bias.npy", bias, 1);
    REFUSED(QGEN("run", "--spec", tmp("a.json"), "--op", "quantize_bias", "--in", tmp("bias.npy"), "--s-in", "1e-30",
                 "--s-w", "1e-30", "--out", tmp("bq.npy")),
            "expected a normal float");
    qg_error err;
    const int32_t acc[2] = {5, -5};
    size_t two = 2;
    qg_npy_write(tmp("acc.npy"), QG_NPY_I32, &two, 1, acc, &err);
    REFUSED(QGEN("run", "--spec", tmp("a.json"), "--op", "requantize", "--in", tmp("acc.npy"), "--s-in", "3e38",
                 "--s-w", "3e38", "--s-out", "1", "--out", tmp("rq.npy")),
            "s_in * s_w[0] / s_out", "got inf");
    REFUSED(QGEN("run", "--spec", tmp("a.json"), "--set", "requant=fixed_point", "--op", "requantize", "--in",
                 tmp("acc.npy"), "--s-in", "1", "--s-w", "1", "--s-out", "5e-20", "--out", tmp("rq.npy")),
            "2^31");
    CU_ASSERT_FALSE(exists("bq.npy") || exists("rq.npy"));
}

/* 12, 13: nothing half-done, no device replaced */
static void test_all_or_nothing(void) {
    unlink(tmp("y1.npy"));
    REFUSED(QGEN("run", "--spec", tmp("a.json"), "--op", "fake_quant", "--in", tmp("good.npy"), "--scale", "0.1",
                 "--zero-point", "3", "--out", tmp("y1.npy"), "--mask", tmp("missing-dir/m.npy")),
            "missing-dir/m.npy");
    CU_ASSERT_FALSE(exists("y1.npy"));
    /* a training step whose output cannot be written leaves its state as it was */
    unlink(tmp("s.state"));
    CU_ASSERT_EQUAL(QGEN("run", "--spec", tmp("ma.json"), "--op", "fused_train_step", "--in", tmp("good.npy"),
                         "--state", tmp("s.state"), "--out", tmp("f.npy")),
                    0);
    char before[4096], after[4096];
    size_t nb = file_bytes("s.state", before, sizeof before);
    REFUSED(QGEN("run", "--spec", tmp("ma.json"), "--op", "fused_train_step", "--in", tmp("wide.npy"), "--state",
                 tmp("s.state"), "--out", tmp("missing-dir/f.npy")),
            "missing-dir/f.npy");
    CU_ASSERT_TRUE(nb > 0 && file_bytes("s.state", after, sizeof after) == nb && memcmp(before, after, nb) == 0);
    /* generate: one target in the way stops all of them */
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/a_dispatch.c'", tmp("gen"), tmp("gen"));
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    REFUSED(QGEN("generate", "--spec", tmp("a.json"), "-o", tmp("gen")), "a_dispatch.c", "not a regular file");
    CU_ASSERT_FALSE(exists("gen/a.h") || exists("gen/a_scalar.c"));
    /* a FIFO (any non-regular file) named as an output is refused, not replaced */
    unlink(tmp("fifo"));
    CU_ASSERT_EQUAL_FATAL(mkfifo(tmp("fifo"), 0600), 0);
    REFUSED(QGEN("run", "--spec", tmp("a.json"), "--op", "fake_quant", "--in", tmp("good.npy"), "--scale", "0.1",
                 "--zero-point", "3", "--out", tmp("fifo")),
            "not a regular file");
    REFUSED(QGEN("observe", "--spec", tmp("a.json"), "--in", tmp("good.npy"), "--state", tmp("fifo")),
            "not a regular file");
    struct stat sb;
    CU_ASSERT_TRUE(lstat(tmp("fifo"), &sb) == 0 && S_ISFIFO(sb.st_mode));
}

/* 19: eight observers on one state, twenty batches each: none is lost */
static void test_concurrent_observers(void) {
    write_text("mm.json", "{\"name\": \"mm\"}");
    unlink(tmp("c.state"));
    enum { PROCS = 8, ROUNDS = 20 };
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        if ((pids[p] = fork()) == 0) {
            char out[600], errp[600];
            snprintf(out, sizeof out, "%s/c%d.out", TEST_TMP, p);
            snprintf(errp, sizeof errp, "%s/c%d.err", TEST_TMP, p);
            for (int r = 0; r < ROUNDS; r++) {
                const char *argv[] = {QGEN_BIN,  "observe",      "--spec", tmp("mm.json"), "--in", tmp("good.npy"),
                                      "--state", tmp("c.state"), NULL};
                if (qg_test_spawn(argv, out, errp) != 0)
                    _exit(1);
            }
            _exit(0);
        }
    }
    int failed = 0;
    for (int p = 0; p < PROCS; p++) {
        int status;
        waitpid(pids[p], &status, 0);
        failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    CU_ASSERT_EQUAL(failed, 0);
    const float none = 0.0f;
    write_f32("empty.npy", &none, 0);
    CU_ASSERT_EQUAL(QGEN("observe", "--spec", tmp("mm.json"), "--in", tmp("empty.npy"), "--state", tmp("c.state")), 0);
    ASSERT_CONTAINS(out_text, "\"batches\": 160");
}

/* Spawns qgen and kills it with SIGKILL after `delay_us` (0: lets it
 * finish); returns how long it ran, in microseconds. */
static unsigned run_and_kill(const char *const *args, unsigned delay_us) {
    const char *argv[40];
    qgen_argv(args, argv);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (delay_us) {
        struct timespec ts = {(time_t)(delay_us / 1000000), (long)(delay_us % 1000000) * 1000};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
    }
    waitpid(pid, NULL, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (unsigned)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000);
}

/* Kill points spread over twice the command's uninterrupted run time, so
 * that some kills land after it finished, however slow the machine. */
static unsigned kill_window(const char *const *args, unsigned at_least_us) {
    const unsigned whole = run_and_kill(args, 0);
    return 2 * whole > at_least_us ? 2 * whole : at_least_us;
}

/* Files of `dir` whose names contain ".tmp.". */
static int temporaries(const char *dir) {
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "test $(ls -a '%s' | grep -c '\\.tmp\\.') -eq 0", dir);
    return system(cmd) == 0 ? 0 : 1;
}

static uint64_t rng = 88172645463325252ull;
static unsigned next_delay(unsigned max_us) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % max_us);
}

/* SIGKILL at random points of observe and generate: every state and output
 * file is the old or the new one, never a mix, and the next command clears
 * what the killed ones left. */
static void test_crash_safety(void) {
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", tmp("crash"), tmp("crash"));
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    unsigned long long last = 0;
    int bad = 0;
    const char *const observe[] = {"observe",       "--spec",  tmp("ma.json"),       "--in",
                                   tmp("good.npy"), "--state", tmp("crash/s.state"), NULL};
    const unsigned window = kill_window(observe, 40000);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0); /* start from no state again */
    for (int round = 0; round < 200; round++) {
        run_and_kill(observe, next_delay(window));
        if (!exists("crash/s.state"))
            continue;
        /* whole and loadable, with no fewer batches than before */
        if (QGEN("observe", "--spec", tmp("ma.json"), "--in", tmp("empty.npy"), "--state", tmp("crash/s.state")) != 0) {
            bad++;
            continue;
        }
        const char *b = strstr(out_text, "\"batches\": ");
        unsigned long long now = b ? strtoull(b + 11, NULL, 10) : 0;
        bad += now < last;
        last = now;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_TRUE(last > 0);
    CU_ASSERT_EQUAL(temporaries(tmp("crash")), 0);

    /* generate: the files of one whole run (the same command writes the
     * same bytes), then killed runs over them */
    CU_ASSERT_EQUAL_FATAL(QGEN("generate", "--spec", tmp("ma.json"), "--no-check", "-o", tmp("crash")), 0);
    static const char *const names[] = {"ma.h",        "ma_dispatch.c", "ma_scalar.c", "ma_avx2.c",
                                        "ma_avx512.c", "ma_neon.c",     "ma_rvv.c"};
    static char ref[7][1 << 16], got[1 << 16];
    size_t nref[7];
    for (int f = 0; f < 7; f++) {
        char rel[64];
        snprintf(rel, sizeof rel, "crash/%s", names[f]);
        nref[f] = file_bytes(rel, ref[f], sizeof ref[f]);
        CU_ASSERT_TRUE(nref[f] > 100 && nref[f] < sizeof ref[f]);
    }
    int mixed = 0;
    const char *const generate[] = {"generate", "--spec", tmp("ma.json"), "--no-check", "-o", tmp("crash"), NULL};
    const unsigned gen_window = kill_window(generate, 60000);
    for (int round = 0; round < 100; round++) {
        run_and_kill(generate, next_delay(gen_window));
        for (int f = 0; f < 7; f++) {
            char rel[64];
            snprintf(rel, sizeof rel, "crash/%s", names[f]);
            size_t n = file_bytes(rel, got, sizeof got);
            mixed += exists(rel) && (n != nref[f] || memcmp(got, ref[f], n) != 0);
        }
    }
    CU_ASSERT_EQUAL(mixed, 0);
    CU_ASSERT_EQUAL(QGEN("generate", "--spec", tmp("ma.json"), "--no-check", "-o", tmp("crash")), 0);
    CU_ASSERT_EQUAL(temporaries(tmp("crash")), 0);
}

int main(void) {
    mkdir(TEST_TMP, 0700);
    mkdir(tmp("missing-dir-parent"), 0700);
    static const qg_test tests[] = {
        {"1: 131072 channels", test_many_channels},
        {"2, 10, 11: .npy headers", test_npy_headers},
        {"3, 4, 14: qgen check", test_check},
        {"5, 9, 15-18: arguments and messages", test_arguments},
        {"6-8: values no formula takes", test_values},
        {"12, 13: all or nothing", test_all_or_nothing},
        {"19: concurrent observers", test_concurrent_observers},
        {"SIGKILL at random points", test_crash_safety},
    };
    return QG_RUN("robustness", tests);
}
