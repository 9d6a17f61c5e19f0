/* The JIT's contract around the kernels (their arithmetic is checked by
 * kernel_check in JIT mode): refusals with messages, the disk cache's
 * hits, corrupt and unwritable entries, processes and threads racing on
 * one spec, and per-op compilation. */
#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../test_util.h"
#include "jit/pack_objects.h"
#include "qgen/jit.h"
#include "qgen/kernel_support.h"

static char root[256];

static const char *path_in(const char *name) {
    static char bufs[4][512];
    static int k;
    char *p = bufs[k++ % 4];
    snprintf(p, 512, "%s/%s", root, name);
    return p;
}

static qg_spec act_spec(void);
static qg_spec act_storage;
/* act_spec() in a place that outlives the call */
static const qg_spec *act(void) {
    act_storage = act_spec();
    return &act_storage;
}

static qg_spec act_spec(void) {
    qg_spec sp;
    qg_error err;
    const char *json = "{\"name\": \"act\", \"dtype\": \"quint8\", \"observer\": {\"type\": \"minmax\"}}";
    if (qg_spec_load_string(json, "act.json", NULL, 0, &sp, &err) != QG_OK) {
        fprintf(stderr, "setup: %s\n", err.message);
        exit(2);
    }
    return sp;
}

/* fake_quant of k against the reference on 1000 values around the range. */
static int fake_quant_agrees(const qg_kernels *k) {
    enum { N = 1000 };
    static float x[N], y[N], r[N];
    const float scale = 0.05f;
    const int32_t zp = 17;
    for (int i = 0; i < N; i++)
        x[i] = (float)(i - N / 2) * 0.0137f + (i % 7 == 0 ? 0.025f : 0.0f);
    qg_qparams qp = {&scale, &zp, NULL, 1, 1};
    k->fake_quant(x, y, NULL, N, &qp);
    qg_ref_fake_quant(k->spec, x, r, NULL, N, &qp);
    return memcmp(y, r, sizeof y) == 0;
}

/* The one cache entry in dir (its path), and how many files the dir has. */
static int entries(const char *dir, char *entry, size_t cap) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' && (e->d_name[1] == 0 || (e->d_name[1] == '.' && e->d_name[2] == 0)))
            continue;
        n++;
        if (entry && strstr(e->d_name, ".qgobj"))
            snprintf(entry, cap, "%s/%s", dir, e->d_name);
    }
    if (d)
        closedir(d);
    return n;
}

/* Compiles that fail on demand (linked with --wrap=qg_pack_compile): the
 * next `failing_compiles` calls return a backend error. While `held`,
 * compiles wait at the gate (a background compile that has not ended). */
static int failing_compiles;
static bool held;
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate = PTHREAD_COND_INITIALIZER;
static unsigned compiles_at_gate;

static void hold(bool on) {
    pthread_mutex_lock(&gate_lock);
    held = on;
    pthread_cond_broadcast(&gate);
    pthread_mutex_unlock(&gate_lock);
}

/* Waits until `n` compiles have reached the gate. */
static void wait_at_gate(unsigned n) {
    pthread_mutex_lock(&gate_lock);
    while (compiles_at_gate < n)
        pthread_cond_wait(&gate, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
}
qg_status __real_qg_pack_compile(const qg_spec *sp, const qg_llvm_target *t, const char *prefix, unsigned ops,
                                 qg_llvm_blob *out, qg_error *err);
qg_status __wrap_qg_pack_compile(const qg_spec *sp, const qg_llvm_target *t, const char *prefix, unsigned ops,
                                 qg_llvm_blob *out, qg_error *err);
qg_status __wrap_qg_pack_compile(const qg_spec *sp, const qg_llvm_target *t, const char *prefix, unsigned ops,
                                 qg_llvm_blob *out, qg_error *err) {
    pthread_mutex_lock(&gate_lock);
    compiles_at_gate++;
    pthread_cond_broadcast(&gate);
    while (held)
        pthread_cond_wait(&gate, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    if (failing_compiles > 0) {
        failing_compiles--;
        return qg_error_set(err, QG_ERR_BACKEND, "llvm: a failure the test asked for");
    }
    return __real_qg_pack_compile(sp, t, prefix, ops, out, err);
}

/* quantize of k against the reference, as fake_quant_agrees. */
static int quantize_agrees(const qg_kernels *k) {
    enum { N = 777 };
    static float x[N];
    static uint8_t q[N], r[N];
    const float scale = 0.05f;
    const int32_t zp = 17;
    for (int i = 0; i < N; i++)
        x[i] = (float)(i - N / 2) * 0.0173f;
    qg_qparams qp = {&scale, &zp, NULL, 1, 1};
    k->quantize(x, q, N, &qp);
    qg_ref_quantize(k->spec, x, r, N, &qp);
    return memcmp(q, r, sizeof q) == 0;
}

/* Lazy kernels: nothing compiled until an op's first call, which compiles
 * that op alone into an entry of its own; qg_jit_prepare compiles the
 * rest; another JIT finds the entries on disk. */
static void test_lazy(void) {
    const char *dir = path_in("cache_lazy");
    const qg_jit_options opt = {QG_JIT_BEST_ISA, dir, false, false, false};
    qg_jit *j, *j2;
    qg_error err;
    const qg_kernels *k, *again;
    qg_jit_stats st;
    CU_ASSERT_EQUAL_FATAL(qg_jit_create(&opt, &j, &err), QG_OK);
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, act(), QG_JIT_FAKE_QUANT | QG_JIT_QUANTIZE, &k, &err), QG_OK);
    qg_jit_get_stats(j, &st);
    CU_ASSERT_TRUE(st.lazy_tables == 1 && st.compiled == 0 && st.disk_hits == 0);
    CU_ASSERT_TRUE(k->fake_quant && k->quantize && !k->dequantize && !k->observe);
    CU_ASSERT_EQUAL(entries(dir, NULL, 0), 0);
    CU_ASSERT_TRUE(fake_quant_agrees(k));
    CU_ASSERT_TRUE(fake_quant_agrees(k));
    qg_jit_get_stats(j, &st);
    CU_ASSERT_TRUE(st.compiled == 1 && st.fallbacks == 0);
    CU_ASSERT_EQUAL(entries(dir, NULL, 0), 1); /* fake_quant's */
    CU_ASSERT_EQUAL(qg_jit_prepare(j, k, 0, &err), QG_OK);
    qg_jit_get_stats(j, &st);
    CU_ASSERT_EQUAL(st.compiled, 2);
    CU_ASSERT_EQUAL(entries(dir, NULL, 0), 2);
    CU_ASSERT_TRUE(quantize_agrees(k));
    CU_ASSERT_EQUAL(qg_jit_compile(j, act(), QG_JIT_FAKE_QUANT | QG_JIT_QUANTIZE, &again, &err), QG_OK);
    CU_ASSERT_PTR_EQUAL(again, k);
    /* a bad spec is refused at once, not at the first call */
    qg_spec bad = *act();
    bad.quant_min = 300;
    CU_ASSERT_EQUAL(qg_jit_compile(j, &bad, 0, &again, &err), QG_ERR_INVALID);
    /* kernels of another JIT */
    CU_ASSERT_EQUAL_FATAL(qg_jit_create(&opt, &j2, &err), QG_OK);
    CU_ASSERT_EQUAL(qg_jit_prepare(j2, k, 0, &err), QG_ERR_ARG);
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j2, act(), QG_JIT_FAKE_QUANT, &again, &err), QG_OK);
    CU_ASSERT_TRUE(fake_quant_agrees(again));
    qg_jit_get_stats(j2, &st);
    CU_ASSERT_TRUE(st.compiled == 0 && st.disk_hits == 1);
    qg_jit_destroy(j2);
    qg_jit_destroy(j);
}

/* A lazy JIT with no disk cache; its first calls compile at once, or with
 * `background` on threads of their own. */
static qg_jit *lazy_jit(bool background) {
    const qg_jit_options opt = {QG_JIT_BEST_ISA, NULL, true, false, background};
    qg_jit *j = NULL;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_jit_create(&opt, &j, &err), QG_OK);
    return j;
}

/* An op whose compile fails runs on the reference, counted; the other
 * ops of the table compile as usual. */
static void test_lazy_fallback(void) {
    qg_jit *j = lazy_jit(false);
    qg_error err;
    const qg_kernels *k;
    qg_jit_stats st;
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, act(), 0, &k, &err), QG_OK);
    failing_compiles = 1;
    CU_ASSERT_TRUE(fake_quant_agrees(k)); /* the reference's values */
    CU_ASSERT_EQUAL(failing_compiles, 0);
    CU_ASSERT_TRUE(fake_quant_agrees(k)); /* no second attempt */
    CU_ASSERT_TRUE(quantize_agrees(k));
    qg_jit_get_stats(j, &st);
    CU_ASSERT_TRUE(st.fallbacks == 1 && st.compiled == 1);
    /* a bfloat16 spec's fallback takes and gives its codes */
    qg_spec bf = act_spec();
    bf.float_type = QG_BFLOAT16;
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, &bf, QG_JIT_FAKE_QUANT, &k, &err), QG_OK);
    enum { N = 300 };
    uint16_t x[N], y[N], r[N];
    for (int i = 0; i < N; i++)
        x[i] = (uint16_t)(0x3C00 + 37 * i); /* codes from 0.0078 up, past the range */
    const float scale = 0.05f;
    const int32_t zp = 17;
    const qg_qparams qp = {&scale, &zp, NULL, 1, 1};
    failing_compiles = 1;
    k->u16.fake_quant(x, y, NULL, N, &qp);
    CU_ASSERT_EQUAL(failing_compiles, 0);
    qg_ftype_fake_quant(&bf, NULL, x, r, NULL, N, &qp);
    CU_ASSERT_EQUAL(memcmp(y, r, sizeof y), 0);
    qg_jit_get_stats(j, &st);
    CU_ASSERT_EQUAL(st.fallbacks, 2);
    qg_jit_destroy(j);
}

static void *open_gate_later(void *arg) {
    (void)arg;
    nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    hold(false);
    return NULL;
}

/* Compiles `averaging` 's variant of the act spec lazily in j, and makes
 * its first fake_quant call with the compile held at the gate (which
 * open_gate_later then opens from *opener); whether that call agreed with
 * the reference. */
static bool first_call_held(qg_jit *j, float averaging, const qg_kernels **k, pthread_t *opener) {
    qg_spec sp = act_spec();
    sp.observer.averaging_constant = averaging; /* a spec of its own */
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, &sp, QG_JIT_FAKE_QUANT, k, &err), QG_OK);
    compiles_at_gate = 0;
    hold(true);
    const bool agrees = fake_quant_agrees(*k);
    wait_at_gate(1);
    CU_ASSERT_EQUAL_FATAL(pthread_create(opener, NULL, open_gate_later, NULL), 0);
    return agrees;
}

/* Background compiles: a first call starts its op's compile and runs the
 * reference, as do the calls until the kernel is ready; qg_jit_prepare
 * waits for it; a failed one falls back, counted; destroying the JIT
 * waits for a compile in flight. */
static void test_lazy_background(void) {
    qg_jit *j = lazy_jit(true);
    qg_error err;
    const qg_kernels *k;
    qg_jit_stats st;
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, act(), QG_JIT_FAKE_QUANT | QG_JIT_QUANTIZE, &k, &err), QG_OK);
    compiles_at_gate = 0;
    hold(true);
    /* these calls return while the compile waits at the gate (holding the
     * JIT's lock): they ran on the reference */
    CU_ASSERT_TRUE(fake_quant_agrees(k));
    wait_at_gate(1);
    CU_ASSERT_TRUE(fake_quant_agrees(k));
    hold(false);
    CU_ASSERT_EQUAL(qg_jit_prepare(j, k, QG_JIT_FAKE_QUANT, &err), QG_OK);
    qg_jit_get_stats(j, &st);
    CU_ASSERT_TRUE(st.compiled == 1 && st.fallbacks == 0);
    CU_ASSERT_EQUAL(compiles_at_gate, 1); /* one compile for all those calls */
    CU_ASSERT_TRUE(fake_quant_agrees(k));
    failing_compiles = 1;
    CU_ASSERT_TRUE(quantize_agrees(k));
    CU_ASSERT_EQUAL(qg_jit_prepare(j, k, QG_JIT_QUANTIZE, &err), QG_OK);
    qg_jit_get_stats(j, &st);
    CU_ASSERT_TRUE(st.compiled == 1 && st.fallbacks == 1 && failing_compiles == 0);
    CU_ASSERT_TRUE(quantize_agrees(k));
    /* a fork waits for the compile in flight; the child runs the kernel */
    pthread_t opener;
    CU_ASSERT_TRUE(first_call_held(j, 0.25f, &k, &opener));
    const pid_t child = fork();
    if (child == 0)
        _exit(fake_quant_agrees(k) && qg_jit_prepare(j, k, 0, &err) == QG_OK ? 0 : 1);
    pthread_join(opener, NULL);
    int status = -1;
    CU_ASSERT_EQUAL(waitpid(child, &status, 0), child);
    CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    qg_jit_get_stats(j, &st);
    CU_ASSERT_EQUAL(st.compiled, 2); /* ended before the fork went on */
    /* destroyed with a compile at the gate: destroy waits for it */
    CU_ASSERT_TRUE(first_call_held(j, 0.5f, &k, &opener));
    qg_jit_destroy(j);
    pthread_join(opener, NULL);
}

/* A block format's table on the reference (a failed compile, then a
 * background compile's first call), float32 and bfloat16: its rows take
 * no qparams. */
static void test_lazy_block_reference(void) {
    static const char *const specs[] = {"{\"name\": \"blk\", \"base\": \"ggml.q8_0\"}",
                                        "{\"name\": \"blk16\", \"base\": \"ggml.q8_0\", \"float_type\": \"bfloat16\"}"};
    enum { N = 96, BYTES = N / 32 * 34 };
    float x[N], y[N], r[N];
    uint16_t x16[N], y16[N], r16[N];
    uint8_t q[BYTES], rq[BYTES];
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i * 37 % 101 - 50) * 0.173f;
        uint32_t bits;
        memcpy(&bits, &x[i], sizeof bits);
        x16[i] = (uint16_t)(bits >> 16); /* a bfloat16 code */
    }
    for (int f = 0; f < 2; f++) {
        qg_spec blk;
        qg_error err;
        CU_ASSERT_EQUAL_FATAL(qg_spec_load_string(specs[f], "blk.json", NULL, 0, &blk, &err), QG_OK);
        const bool u16 = blk.float_type != QG_FLOAT32;
        if (u16) {
            qg_ftype_quantize(&blk, NULL, x16, rq, N, NULL);
            qg_ftype_dequantize(&blk, NULL, rq, r16, N, NULL);
        } else {
            qg_ref_quantize(&blk, x, rq, N, NULL);
            qg_ref_dequantize(&blk, rq, r, N, NULL);
        }
        for (int background = 0; background < 2; background++) {
            qg_jit *j = lazy_jit(background == 1);
            const qg_kernels *k;
            CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, &blk, QG_JIT_QUANTIZE | QG_JIT_DEQUANTIZE, &k, &err), QG_OK);
            failing_compiles = background ? 0 : 2;
            hold(background == 1); /* the background compiles wait at the gate: these calls run the reference */
            /* then, after prepare, the kernels (or the reference after the failed compiles) */
            for (int round = 0; round < 2; round++) {
                memset(q, 0xAA, sizeof q);
                memset(y, 0xAA, sizeof y);
                memset(y16, 0xAA, sizeof y16);
                if (u16) {
                    k->u16.quantize(x16, q, N, NULL);
                    k->u16.dequantize(rq, y16, N, NULL);
                    CU_ASSERT_EQUAL(memcmp(y16, r16, sizeof y16), 0);
                } else {
                    k->quantize(x, q, N, NULL);
                    k->dequantize(rq, y, N, NULL);
                    CU_ASSERT_EQUAL(memcmp(y, r, sizeof y), 0);
                }
                CU_ASSERT_EQUAL(memcmp(q, rq, sizeof q), 0);
                hold(false);
                CU_ASSERT_EQUAL(qg_jit_prepare(j, k, 0, &err), QG_OK);
            }
            qg_jit_stats st;
            qg_jit_get_stats(j, &st);
            CU_ASSERT_EQUAL(st.fallbacks, background ? 0u : 2u);
            qg_jit_destroy(j);
        }
    }
}

/* Past the pool's slots a lazy table is compiled at once; a destroyed
 * JIT's slots serve the next. */
static void test_lazy_slots_run_out(void) {
    qg_jit *j = lazy_jit(false);
    qg_error err;
    qg_jit_stats st;
    enum { TABLES = 260 };
    const qg_kernels *last = NULL;
    for (int t = 0; t < TABLES; t++) {
        qg_spec sp = act_spec();
        sp.observer.averaging_constant = 0.001f * (float)(t + 1); /* a spec of its own */
        CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, &sp, QG_JIT_DEQUANTIZE, &last, &err), QG_OK);
    }
    qg_jit_get_stats(j, &st);
    CU_ASSERT_TRUE(st.lazy_tables == 256 && st.compiled == TABLES - 256);
    qg_jit_destroy(j);
    j = lazy_jit(false);
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, act(), 0, &last, &err), QG_OK);
    CU_ASSERT_TRUE(fake_quant_agrees(last));
    qg_jit_get_stats(j, &st);
    CU_ASSERT_TRUE(st.lazy_tables == 1 && st.compiled == 1);
    qg_jit_destroy(j);
}

static void test_refusals(void) {
    qg_jit *j = NULL;
    qg_error err;
    qg_jit_options opt = {QG_ISA_NEON, NULL, true, true, false};
#if defined(__x86_64__)
    CU_ASSERT_EQUAL(qg_jit_create(&opt, &j, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "neon kernels run on aarch64", "this machine is x86_64");
    CU_ASSERT_PTR_NULL(j);
    opt.isa = QG_ISA_RVV;
    CU_ASSERT_EQUAL(qg_jit_create(&opt, &j, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "rvv kernels run on riscv64");
#endif
    opt.isa = 42;
    CU_ASSERT_EQUAL(qg_jit_create(&opt, &j, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "isa 42");
    opt.isa = QG_JIT_BEST_ISA;
    CU_ASSERT_EQUAL_FATAL(qg_jit_create(&opt, &j, &err), QG_OK);
    CU_ASSERT_STRING_EQUAL(qg_jit_cache_dir(j), "");
    qg_spec sp = act_spec();
    sp.quant_min = 300; /* out of quint8's range */
    const qg_kernels *k = (const qg_kernels *)1;
    CU_ASSERT_EQUAL(qg_jit_compile(j, &sp, 0, &k, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "quant_min", "300");
    CU_ASSERT_PTR_NULL(k);
    sp = act_spec();
    CU_ASSERT_EQUAL(qg_jit_compile(j, &sp, 0x40, &k, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "ops 0x40");
    /* one op only: the others stay NULL */
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, &sp, QG_JIT_FAKE_QUANT, &k, &err), QG_OK);
    CU_ASSERT_PTR_NOT_NULL(k->fake_quant);
    CU_ASSERT_PTR_NULL(k->quantize);
    CU_ASSERT_PTR_NULL(k->observe);
    CU_ASSERT_TRUE(fake_quant_agrees(k));
    /* qint32 (not servable by fp32 lanes) falls back to scalar kernels */
    qg_spec bias;
    CU_ASSERT_EQUAL_FATAL(
        qg_spec_load_string("{\"name\": \"bias\", \"dtype\": \"qint32\"}", "bias.json", NULL, 0, &bias, &err), QG_OK);
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, &bias, 0, &k, &err), QG_OK);
    CU_ASSERT_EQUAL(k->isa, QG_ISA_SCALAR);
    const float xs[3] = {1.5f, -2.25f, 1e9f}, s = 0.5f;
    const int32_t z = 0;
    int32_t q[3], rq[3];
    qg_qparams qp = {&s, &z, NULL, 1, 1};
    k->quantize(xs, q, 3, &qp);
    qg_ref_quantize(&bias, xs, rq, 3, &qp);
    CU_ASSERT_EQUAL(memcmp(q, rq, sizeof q), 0);
    qg_jit_destroy(j);
}

static void test_cache_hits_and_corruption(void) {
    const char *dir = path_in("cache1");
    qg_jit_options opt = {QG_JIT_BEST_ISA, dir, false, true, false};
    qg_spec sp = act_spec();
    qg_error err;
    qg_jit *a, *b, *c;
    const qg_kernels *k;
    qg_jit_stats st;
    CU_ASSERT_EQUAL_FATAL(qg_jit_create(&opt, &a, &err), QG_OK);
    struct stat sb;
    CU_ASSERT_EQUAL(stat(dir, &sb), 0);
    CU_ASSERT_EQUAL(sb.st_mode & 0777, 0700);
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(a, &sp, 0, &k, &err), QG_OK);
    CU_ASSERT_TRUE(fake_quant_agrees(k));
    qg_jit_get_stats(a, &st);
    CU_ASSERT_TRUE(st.compiled == 1 && st.disk_hits == 0 && st.cache_errors == 0);
    char entry[600] = "";
    CU_ASSERT_EQUAL(entries(dir, entry, sizeof entry), 1);
    /* a second JIT loads it */
    CU_ASSERT_EQUAL_FATAL(qg_jit_create(&opt, &b, &err), QG_OK);
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(b, &sp, 0, &k, &err), QG_OK);
    CU_ASSERT_TRUE(fake_quant_agrees(k));
    qg_jit_get_stats(b, &st);
    CU_ASSERT_TRUE(st.compiled == 0 && st.disk_hits == 1);
    qg_jit_destroy(b);
    /* one flipped payload byte, then a truncated file: refused, rebuilt */
    for (int damage = 0; damage < 2; damage++) {
        FILE *f = fopen(entry, "r+b");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        if (damage == 0) {
            fseek(f, size / 2, SEEK_SET);
            int ch = fgetc(f);
            fseek(f, size / 2, SEEK_SET);
            fputc(ch ^ 0x10, f);
            fclose(f);
        } else {
            fclose(f);
            CU_ASSERT_EQUAL(truncate(entry, size - 100), 0);
        }
        CU_ASSERT_EQUAL_FATAL(qg_jit_create(&opt, &c, &err), QG_OK);
        CU_ASSERT_EQUAL_FATAL(qg_jit_compile(c, &sp, 0, &k, &err), QG_OK);
        CU_ASSERT_TRUE(fake_quant_agrees(k));
        qg_jit_get_stats(c, &st);
        CU_ASSERT_TRUE(st.corrupt_entries == 1 && st.compiled == 1 && st.disk_hits == 0);
        qg_jit_destroy(c);
    }
    /* the rebuilt entry is whole again */
    CU_ASSERT_EQUAL_FATAL(qg_jit_create(&opt, &c, &err), QG_OK);
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(c, &sp, 0, &k, &err), QG_OK);
    qg_jit_get_stats(c, &st);
    CU_ASSERT_EQUAL(st.disk_hits, 1);
    CU_ASSERT_EQUAL(entries(dir, NULL, 0), 1); /* no temporary files left */
    qg_jit_destroy(c);
    qg_jit_destroy(a);
}

/* A fresh JIT on cache `dir` compiles act; its stats go to *st, and its
 * fake_quant must agree with the reference. */
static void compile_act_with_cache(const char *dir, qg_jit_stats *st) {
    qg_jit_options opt = {QG_JIT_BEST_ISA, dir, false, true, false};
    qg_jit *j;
    qg_error err;
    const qg_kernels *k;
    memset(st, 0, sizeof *st);
    CU_ASSERT_EQUAL_FATAL(qg_jit_create(&opt, &j, &err), QG_OK);
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, act(), 0, &k, &err), QG_OK);
    CU_ASSERT_TRUE(fake_quant_agrees(k));
    qg_jit_get_stats(j, st);
    qg_jit_destroy(j);
}

static void test_unwritable_cache(void) {
    /* /proc: exists, and nobody (root included) can create files in it */
    const char *dirs[] = {"/proc", "/proc/qgen-cannot-create/cache"};
    for (int i = 0; i < 2; i++) {
        qg_jit_stats st;
        compile_act_with_cache(dirs[i], &st);
        CU_ASSERT_TRUE(st.compiled == 1 && st.cache_errors == 1);
    }
    if (geteuid() != 0) { /* permission bits bind only non-root users */
        const char *dir = path_in("readonly");
        mkdir(dir, 0500);
        chmod(dir, 0500);
        qg_jit_stats st;
        compile_act_with_cache(dir, &st);
        CU_ASSERT_EQUAL(st.cache_errors, 1);
    }
}

static void test_default_dir(void) {
    char xdg[600];
    snprintf(xdg, sizeof xdg, "%s", path_in("xdg"));
    setenv("XDG_CACHE_HOME", xdg, 1);
    qg_jit *j;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_jit_create(NULL, &j, &err), QG_OK);
    char want[700];
    snprintf(want, sizeof want, "%s/qgen", xdg);
    CU_ASSERT_STRING_EQUAL(qg_jit_cache_dir(j), want);
    struct stat sb;
    CU_ASSERT_TRUE(stat(want, &sb) == 0 && (sb.st_mode & 0777) == 0700);
    qg_jit_destroy(j);
}

/* Two processes compile the same spec into one cache at the same time. */
static void test_two_processes(void) {
    const char *dir = path_in("shared");
    pid_t pids[2];
    for (int p = 0; p < 2; p++) {
        pids[p] = fork();
        if (pids[p] == 0) {
            qg_jit_options opt = {QG_JIT_BEST_ISA, dir, false, true, false};
            qg_jit *j;
            qg_error err;
            const qg_kernels *k;
            qg_spec sp = act_spec();
            int ok = qg_jit_create(&opt, &j, &err) == QG_OK && qg_jit_compile(j, &sp, 0, &k, &err) == QG_OK &&
                     fake_quant_agrees(k);
            _exit(ok ? 0 : 1);
        }
    }
    for (int p = 0; p < 2; p++) {
        int status;
        CU_ASSERT_EQUAL(waitpid(pids[p], &status, 0), pids[p]);
        CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    CU_ASSERT_EQUAL(entries(dir, NULL, 0), 1);
    qg_jit_stats st;
    compile_act_with_cache(dir, &st);
    CU_ASSERT_EQUAL(st.disk_hits, 1);
}

static qg_jit *shared_jit;
static void *compile_in_thread(void *out) {
    qg_spec sp = act_spec();
    qg_error err;
    if (qg_jit_compile(shared_jit, &sp, 0, (const qg_kernels **)out, &err) != QG_OK)
        *(const qg_kernels **)out = NULL;
    return NULL;
}

static void test_threads(void) {
    qg_jit_options opt = {QG_JIT_BEST_ISA, NULL, true, true, false};
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_jit_create(&opt, &shared_jit, &err), QG_OK);
    enum { T = 4 };
    pthread_t th[T];
    const qg_kernels *k[T];
    for (int t = 0; t < T; t++)
        pthread_create(&th[t], NULL, compile_in_thread, &k[t]);
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < T; t++)
        CU_ASSERT_TRUE(k[t] && k[t] == k[0]);
    qg_jit_stats st;
    qg_jit_get_stats(shared_jit, &st);
    CU_ASSERT_TRUE(st.compiled == 1 && st.memory_hits == T - 1);
    CU_ASSERT_TRUE(k[0] && fake_quant_agrees(k[0]));
    qg_jit_destroy(shared_jit);
}

/* An in-process hit needs the same spec: a copy that differs only past the
 * name's NUL is the same pack; one changed field, or other ops, is not. */
static void test_memory_hits(void) {
    qg_jit_options opt = {QG_JIT_BEST_ISA, NULL, true, true, false};
    qg_spec sp = act_spec(), copy = sp, other = sp;
    qg_error err;
    qg_jit *j;
    const qg_kernels *k, *k2, *k3, *k4;
    qg_jit_stats st;
    CU_ASSERT_EQUAL_FATAL(qg_jit_create(&opt, &j, &err), QG_OK);
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, &sp, QG_JIT_FAKE_QUANT, &k, &err), QG_OK);
    copy.name[sizeof copy.name - 1] = 'x'; /* a byte no field reads */
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, &copy, QG_JIT_FAKE_QUANT, &k2, &err), QG_OK);
    CU_ASSERT_PTR_EQUAL(k, k2);
    other.scale_op = other.scale_op == QG_SCALE_DIV ? QG_SCALE_MUL_INV : QG_SCALE_DIV;
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, &other, QG_JIT_FAKE_QUANT, &k3, &err), QG_OK);
    CU_ASSERT_PTR_NOT_EQUAL(k, k3);
    CU_ASSERT_NOT_EQUAL(k3->spec->scale_op, sp.scale_op);
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, &sp, QG_JIT_QUANTIZE, &k4, &err), QG_OK);
    CU_ASSERT_PTR_NOT_EQUAL(k, k4);
    CU_ASSERT_PTR_NULL(k4->fake_quant);
    CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, &sp, QG_JIT_FAKE_QUANT, &k2, &err), QG_OK);
    CU_ASSERT_PTR_EQUAL(k, k2);
    qg_jit_get_stats(j, &st);
    CU_ASSERT_TRUE(st.compiled == 3 && st.memory_hits == 2);
    qg_jit_destroy(j);
}

/* Every entry a pack hands out is preceded by the 16 zero bytes the LLVM
 * backend puts there, within its own object: a host built with
 * -fsanitize=function reads the 8 bytes below each function it calls
 * through a pointer, and JIT code can start a page with nothing mapped
 * below it. */
static void test_entries_padded(void) {
    const int isas[] = {QG_ISA_SCALAR, QG_JIT_BEST_ISA};
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        qg_jit_options opt = {isas[i], NULL, true, true, false};
        qg_spec sp = act_spec();
        qg_error err;
        qg_jit *j;
        const qg_kernels *k;
        CU_ASSERT_EQUAL_FATAL(qg_jit_create(&opt, &j, &err), QG_OK);
        CU_ASSERT_EQUAL_FATAL(qg_jit_compile(j, &sp, 0, &k, &err), QG_OK);
        void (*const fns[])(void) = {(void (*)(void))k->quantize,   (void (*)(void))k->dequantize,
                                     (void (*)(void))k->fake_quant, (void (*)(void))k->fake_quant_backward,
                                     (void (*)(void))k->observe,    (void (*)(void))k->requantize};
        for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
            const unsigned char *entry;
            memcpy(&entry, &fns[f], sizeof entry); /* POSIX: function pointers convert */
            static const unsigned char zeros[16];
            CU_ASSERT_PTR_NOT_NULL_FATAL(entry);
            CU_ASSERT_EQUAL((uintptr_t)entry % 16, 0);
            CU_ASSERT_EQUAL(memcmp(entry - 16, zeros, 16), 0);
        }
        qg_jit_destroy(j);
    }
}

/* The bytes of the one cache entry a fresh JIT writes for act's full pack
 * into dir, with QGEN_JIT_THREADS set to `threads` (NULL: unset). */
static size_t entry_bytes(const char *dir, const char *threads, char *buf, size_t cap) {
    if (threads)
        setenv("QGEN_JIT_THREADS", threads, 1);
    else
        unsetenv("QGEN_JIT_THREADS");
    qg_jit_stats st;
    compile_act_with_cache(dir, &st);
    unsetenv("QGEN_JIT_THREADS");
    CU_ASSERT_EQUAL(st.compiled, 1);
    char entry[600] = "";
    CU_ASSERT_EQUAL(entries(dir, entry, sizeof entry), 1);
    FILE *f = fopen(entry, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    const size_t n = fread(buf, 1, cap, f);
    fclose(f);
    CU_ASSERT_TRUE(n > 0 && n < cap);
    return n;
}

static void test_threads_compile_same_bytes(void) {
    static char one[1 << 20], many[1 << 20], two[1 << 20];
    const size_t n1 = entry_bytes(path_in("threads1"), "1", one, sizeof one);
    const size_t n2 = entry_bytes(path_in("threads2"), "2", two, sizeof two);
    const size_t nd = entry_bytes(path_in("threads_default"), NULL, many, sizeof many);
    CU_ASSERT_TRUE(n1 == n2 && n1 == nd);
    CU_ASSERT_EQUAL(memcmp(one, two, n1), 0);
    CU_ASSERT_EQUAL(memcmp(one, many, n1), 0);
}

/* The pack blob's layout: 4 bytes of op, 8 of size, the object. */
static size_t put_object(char *p, uint32_t op, uint64_t size, const char *bytes) {
    memcpy(p, &op, 4);
    memcpy(p + 4, &size, 8);
    memcpy(p + 12, bytes, (size_t)size);
    return 12 + (size_t)size;
}

static void test_pack_layout(void) {
    char buf[64];
    size_t n = put_object(buf, 2, 3, "abc");
    n += put_object(buf + n, 4, 0, "");
    qg_llvm_blob blob = {buf, n};
    size_t off = 0;
    bool more;
    qg_pack_object o;
    qg_error err;
    CU_ASSERT_TRUE(qg_pack_next(&blob, &off, &o, &more, &err) == QG_OK && more && o.op == 2 && o.size == 3 &&
                   memcmp(o.data, "abc", 3) == 0);
    CU_ASSERT_TRUE(qg_pack_next(&blob, &off, &o, &more, &err) == QG_OK && more && o.op == 4 && o.size == 0);
    CU_ASSERT_TRUE(qg_pack_next(&blob, &off, &o, &more, &err) == QG_OK && !more);
    /* cut inside a header, a size past the end, an op past the table */
    qg_llvm_blob cut = {buf, 7};
    off = 0;
    CU_ASSERT_EQUAL(qg_pack_next(&cut, &off, &o, &more, &err), QG_ERR_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "cut short"));
    qg_llvm_blob short_body = {buf, 14};
    off = 0;
    CU_ASSERT_EQUAL(qg_pack_next(&short_body, &off, &o, &more, &err), QG_ERR_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "past the entry"));
    put_object(buf, 99, 0, "");
    qg_llvm_blob bad_op = {buf, 12};
    off = 0;
    CU_ASSERT_EQUAL(qg_pack_next(&bad_op, &off, &o, &more, &err), QG_ERR_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "op 99"));
}

int main(int argc, char **argv) {
    snprintf(root, sizeof root, "%s", argc > 1 ? argv[1] : "/tmp/qgen-test-jit");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", root, root);
    if (system(cmd) != 0)
        return 2;
    static const qg_test tests[] = {
        {"refusals, per-op compiles, qint32 on scalar", test_refusals},
        {"disk cache: hits, corrupt and truncated entries", test_cache_hits_and_corruption},
        {"unwritable cache directories", test_unwritable_cache},
        {"default directory under XDG_CACHE_HOME, mode 0700", test_default_dir},
        {"two processes, one spec, one cache", test_two_processes},
        {"threads compiling one spec get one pack", test_threads},
        {"in-process hits: the same spec only", test_memory_hits},
        {"a pack's entry: the same bytes on one thread, two or one per CPU", test_threads_compile_same_bytes},
        {"a pack's objects in one entry: layout and refusals", test_pack_layout},
        {"entries padded below for -fsanitize=function hosts", test_entries_padded},
        {"lazy kernels: each op compiled on its first call", test_lazy},
        {"lazy kernels: a failed compile runs on the reference", test_lazy_fallback},
        {"lazy kernels: background compiles, the reference meanwhile", test_lazy_background},
        {"lazy kernels: a block format's table on the reference", test_lazy_block_reference},
        {"lazy kernels: past the slot pool, compiled at once", test_lazy_slots_run_out},
    };
    return QG_RUN("jit", tests);
}
