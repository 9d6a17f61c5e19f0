/* The generated-kernel ABI on random qparams and data: the input gives a
 * scale, a zero point and floats; qparams that qg_qparams_validate accepts
 * go to the JIT-compiled kernels of the best ISA, which must agree with the
 * reference bit for bit (fake_quant with its mask, quantize, dequantize). */
#include <stdint.h>

#include "fuzz_util.h"
#include "qgen/jit.h"

static qg_jit *jit;
static const qg_kernels *k;
static qg_spec sp;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    qg_error err;
    const qg_jit_options opt = {QG_JIT_BEST_ISA, NULL, true, true, false};
    if (qg_spec_load_string("{\"name\": \"fz\", \"base\": \"torch.fbgemm.activation\", \"compat_mask\": true}", "fz",
                            NULL, 0, &sp, &err) ||
        qg_jit_create(&opt, &jit, &err) || qg_jit_compile(jit, &sp, 0, &k, &err)) {
        fprintf(stderr, "fuzz_kernels: %s\n", err.message);
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 8)
        return 0;
    float scale;
    int32_t zp;
    memcpy(&scale, data, 4);
    memcpy(&zp, data + 4, 4);
    qg_qparams qp = {&scale, &zp, NULL, 1, 1};
    qg_error err;
    if (qg_qparams_validate(&sp, &qp, &err) != QG_OK)
        return 0;
    const size_t n = (size - 8) / 4;
    float *x = malloc(n * 4 + 4), *y = malloc(n * 4 + 4), *r = malloc(n * 4 + 4);
    uint8_t *m = malloc(n / 8 + 2), *rm = malloc(n / 8 + 2), *q = malloc(n + 1), *rq = malloc(n + 1);
    memcpy(x, data + 8, n * 4);
    const size_t mb = qg_mask_bytes(&sp, n);
    k->fake_quant(x, y, m, n, &qp);
    qg_ref_fake_quant(&sp, x, r, rm, n, &qp);
    FUZZ_ASSERT(memcmp(y, r, n * 4) == 0 && memcmp(m, rm, mb) == 0);
    k->quantize(x, q, n, &qp);
    qg_ref_quantize(&sp, x, rq, n, &qp);
    FUZZ_ASSERT(memcmp(q, rq, n) == 0);
    k->dequantize(q, y, n, &qp);
    qg_ref_dequantize(&sp, q, r, n, &qp);
    FUZZ_ASSERT(memcmp(y, r, n * 4) == 0);
    free(x);
    free(y);
    free(r);
    free(m);
    free(rm);
    free(q);
    free(rq);
    return 0;
}
