/* The JIT from many threads at once (docs/robustness.md, "Concurrency").
 *
 *   jit_stress CACHE_DIR THREADS ROUNDS SEED
 *
 * Even threads share one qg_jit (lazy; background compiles with an odd
 * SEED), odd threads each make their own (and make
 * it again every few rounds, so that they go to the disk cache); all use
 * CACHE_DIR. Every round compiles one of a few specs (all ops, or a drawn
 * subset) and checks its fake_quant and quantize against the reference on
 * drawn qparams. Several processes run it on one directory while another
 * corrupts its entries (tests/concurrency/cache_processes.py); built with
 * ThreadSanitizer as jit_stress_tsan. Exit 0: every kernel equal to the
 * reference; 1: a mismatch; 2: an error came back. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qgen/jit.h"

static const char *const specs[] = {
    "{\"name\": \"st_act\", \"base\": \"torch.fbgemm.activation\"}",
    "{\"name\": \"st_w\", \"base\": \"torch.fbgemm.weight\", \"channel_len\": 4}",
    "{\"name\": \"st_onnx\", \"base\": \"onnx.int8\"}",
    "{\"name\": \"st_half_up\", \"dtype\": \"qint8\", \"rounding\": \"half_up\", \"compat_mask\": true}",
};
enum { N_SPECS = sizeof specs / sizeof specs[0], N = 333 };

static qg_spec loaded[N_SPECS];
static qg_jit *shared;
static const char *cache_dir;
static int rounds;
static unsigned long long seed;

typedef struct result {
    int mismatches, errors;
    char message[sizeof((qg_error *)0)->message];
} result;

static unsigned long long next(unsigned long long *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* fake_quant and quantize of k against the reference on drawn data. */
static int check(const qg_kernels *k, const qg_spec *sp, unsigned long long *r) {
    float x[N], y[N], ry[N], scale[4];
    int32_t zp[4];
    uint8_t q[N], rq[N];
    const size_t C = qg_qscheme_is_per_channel(sp->qscheme) ? sp->channel_len : 1;
    for (size_t c = 0; c < C; c++) {
        scale[c] = (float)(1 + next(r) % 100) / 512.0f;
        zp[c] = qg_qscheme_is_symmetric(sp->qscheme) ? 0 : (int32_t)(next(r) % 40);
    }
    for (int i = 0; i < N; i++)
        x[i] = (float)((long long)(next(r) % 4001) - 2000) / 64.0f;
    const qg_qparams qp = {scale, zp, NULL, C, 1};
    int bad = 0;
    if (k->fake_quant) {
        k->fake_quant(x, y, NULL, N, &qp);
        qg_ref_fake_quant(sp, x, ry, NULL, N, &qp);
        bad |= memcmp(y, ry, sizeof y) != 0;
    }
    if (k->quantize) {
        k->quantize(x, q, N, &qp);
        qg_ref_quantize(sp, x, rq, N, &qp);
        bad |= memcmp(q, rq, N) != 0;
    }
    return bad;
}

typedef struct job {
    int id;
    result res;
} job;

static void *run_job(void *arg) {
    job *j = arg;
    unsigned long long r = seed * 0x9E3779B97F4A7C15ull + (unsigned long long)j->id + 1;
    qg_jit *own = NULL;
    qg_error err;
    const qg_jit_options opt = {QG_JIT_BEST_ISA, cache_dir, false, true, false};
    for (int round = 0; round < rounds; round++) {
        qg_jit *jit = shared;
        if (j->id % 2) {
            if (own && round % 3 == 0) { /* a fresh JIT: the next compile reads the disk cache */
                qg_jit_destroy(own);
                own = NULL;
            }
            if (!own && qg_jit_create(&opt, &own, &err) != QG_OK) {
                j->res.errors++;
                snprintf(j->res.message, sizeof j->res.message, "%s", err.message);
                continue;
            }
            jit = own;
        }
        const qg_spec *sp = &loaded[next(&r) % N_SPECS];
        const unsigned ops = next(&r) % 2 ? 0 : (unsigned)(QG_JIT_FAKE_QUANT | (next(&r) % 2 ? QG_JIT_QUANTIZE : 0));
        const qg_kernels *k;
        if (qg_jit_compile(jit, sp, ops, &k, &err) != QG_OK) {
            j->res.errors++;
            snprintf(j->res.message, sizeof j->res.message, "%s", err.message);
            continue;
        }
        j->res.mismatches += check(k, sp, &r);
    }
    qg_jit_destroy(own);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: jit_stress CACHE_DIR THREADS ROUNDS SEED\n");
        return 2;
    }
    cache_dir = argv[1];
    const int threads = atoi(argv[2]);
    rounds = atoi(argv[3]);
    seed = strtoull(argv[4], NULL, 0);
    qg_error err;
    /* shared: lazy, so threads race on the first calls of the same tables;
     * with an odd seed those start background compiles */
    const qg_jit_options opt = {QG_JIT_BEST_ISA, cache_dir, false, false, (seed & 1) != 0};
    for (int s = 0; s < N_SPECS; s++)
        if (qg_spec_load_string(specs[s], "jit_stress", NULL, 0, &loaded[s], &err) != QG_OK) {
            fprintf(stderr, "jit_stress: %s\n", err.message);
            return 2;
        }
    if (threads < 1 || threads > 64 || qg_jit_create(&opt, &shared, &err) != QG_OK) {
        fprintf(stderr, "jit_stress: %s\n", threads < 1 || threads > 64 ? "THREADS: expected 1..64" : err.message);
        return 2;
    }
    pthread_t tid[64];
    job jobs[64];
    for (int t = 0; t < threads; t++) {
        jobs[t] = (job){t, {0, 0, ""}};
        pthread_create(&tid[t], NULL, run_job, &jobs[t]);
    }
    int mismatches = 0, errors = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        mismatches += jobs[t].res.mismatches;
        errors += jobs[t].res.errors;
        if (jobs[t].res.errors)
            fprintf(stderr, "jit_stress: thread %d: %s\n", t, jobs[t].res.message);
    }
    qg_jit_stats st;
    qg_jit_get_stats(shared, &st);
    printf("jit_stress: %d threads x %d rounds: %d mismatches, %d errors; shared JIT compiled %u, disk %u, memory %u, "
           "corrupt %u\n",
           threads, rounds, mismatches, errors, st.compiled, st.disk_hits, st.memory_hits, st.corrupt_entries);
    qg_jit_destroy(shared);
    return mismatches ? 1 : errors ? 2 : 0;
}
