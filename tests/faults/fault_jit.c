/* The JIT under fault injection (tests/faults/fault_sweep.py): compiles a
 * spec's kernels through a disk cache, stores or loads the cache entry,
 * and checks fake_quant and quantize against the reference.
 *
 *   fault_jit SPEC.json CACHE_DIR [lazy]
 *
 * With `lazy` the ops compile on their first calls, and an op whose
 * compile fails runs on the reference: still exit 0.
 * Exit 0 with the kernels checked; 2 with one line when an error came back
 * (an allocation or a write failed); 1 when a kernel disagrees with the
 * reference, which a half-written cache entry would cause. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qgen/jit.h"

enum { N = 1000 };

int main(int argc, char **argv) {
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "lazy") == 0)) {
        fprintf(stderr, "usage: fault_jit SPEC.json CACHE_DIR [lazy]\n");
        return 2;
    }
    qg_spec sp;
    qg_error err;
    qg_jit *jit = NULL;
    const qg_kernels *k;
    const qg_jit_options opt = {QG_JIT_BEST_ISA, argv[2], false, argc == 3, false};
    if (qg_spec_load_file(argv[1], NULL, 0, &sp, &err) || qg_jit_create(&opt, &jit, &err) ||
        qg_jit_compile(jit, &sp, 0, &k, &err)) {
        fprintf(stderr, "fault_jit: %s\n", err.message);
        qg_jit_destroy(jit);
        return 2;
    }
    static float x[N], y[N], r[N];
    static uint8_t q[N], rq[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)(i - N / 2) / 37.0f;
    const float scale = 0.05f;
    const int32_t zp = 3;
    const qg_qparams qp = {&scale, &zp, NULL, 1, 1};
    k->fake_quant(x, y, NULL, N, &qp);
    qg_ref_fake_quant(&sp, x, r, NULL, N, &qp);
    k->quantize(x, q, N, &qp);
    qg_ref_quantize(&sp, x, rq, N, &qp);
    const int same = memcmp(y, r, sizeof y) == 0 && memcmp(q, rq, qg_q_bytes(sp.dtype, N)) == 0;
    qg_jit_destroy(jit);
    if (!same) {
        fprintf(stderr, "fault_jit: the kernels disagree with the reference\n");
        return 1;
    }
    return 0;
}
