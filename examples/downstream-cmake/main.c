/* Observes activations over a few batches, fake-quantizes them, quantizes a
 * weight tensor per output channel and dequantizes it back, each with the
 * kernels generated for this machine, and checks every result against
 * qgen's reference semantics. Exit status 0 when all agree. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "act.h"
#include "weight.h"

enum { N_ACT = 4096, OUT_CH = 8, IN_FEAT = 300 };

static float next_value(unsigned *state) {
    *state = *state * 1664525u + 1013904223u;
    return (float)((*state >> 8) & 0xFFFF) / 65536.0f;
}

int main(void) {
    qg_error err;
    unsigned rng = 7, bad = 0;

    /* activations: moving-average min/max over 5 batches, then fake-quant */
    static float x[N_ACT], y[N_ACT], ref[N_ACT];
    qg_observer *obs;
    if (qg_observer_create(&act_spec, &obs, &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    for (int batch = 0; batch < 5; batch++) {
        for (int i = 0; i < N_ACT; i++)
            x[i] = 6.0f * next_value(&rng) - 1.0f - 0.2f * (float)batch;
        if (act_observe(x, N_ACT, 1, obs, &err)) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
    }
    float scale;
    int32_t zero_point;
    qg_observer_qparams(obs, &scale, &zero_point, NULL, &err);
    qg_qparams qp = {&scale, &zero_point, NULL, 1, 1};
    act_fake_quant(x, y, NULL, N_ACT, &qp);
    qg_ref_fake_quant(&act_spec, x, ref, NULL, N_ACT, &qp);
    for (int i = 0; i < N_ACT; i++)
        bad += memcmp(&y[i], &ref[i], sizeof y[i]) != 0;
    printf("activations (%s kernels): scale %.9g, zero point %d; fake_quant of %d values: %u mismatches\n", act_isa(),
           (double)scale, zero_point, N_ACT, bad);
    qg_observer_destroy(obs);

    /* weights [OUT_CH][IN_FEAT]: channel c is row c (inner = IN_FEAT) */
    static float w[OUT_CH * IN_FEAT], w_back[OUT_CH * IN_FEAT], w_ref[OUT_CH * IN_FEAT];
    static int8_t wq[OUT_CH * IN_FEAT], wq_ref[OUT_CH * IN_FEAT];
    for (int i = 0; i < OUT_CH * IN_FEAT; i++)
        w[i] = (next_value(&rng) - 0.5f) * (1.0f + (float)(i / IN_FEAT));
    qg_observer *wobs;
    float wscale[OUT_CH];
    int32_t wzp[OUT_CH];
    if (qg_observer_create(&weight_spec, &wobs, &err) || weight_observe(w, OUT_CH * IN_FEAT, IN_FEAT, wobs, &err) ||
        qg_observer_qparams(wobs, wscale, wzp, NULL, &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    qg_qparams wqp = {wscale, wzp, NULL, OUT_CH, IN_FEAT};
    weight_quantize(w, wq, OUT_CH * IN_FEAT, &wqp);
    weight_dequantize(wq, w_back, OUT_CH * IN_FEAT, &wqp);
    qg_ref_quantize(&weight_spec, w, wq_ref, OUT_CH * IN_FEAT, &wqp);
    qg_ref_dequantize(&weight_spec, wq_ref, w_ref, OUT_CH * IN_FEAT, &wqp);
    unsigned wbad = 0;
    double worst = 0.0;
    for (int i = 0; i < OUT_CH * IN_FEAT; i++) {
        wbad += wq[i] != wq_ref[i] || memcmp(&w_back[i], &w_ref[i], sizeof w_back[i]) != 0;
        double e = fabs((double)w_back[i] - (double)w[i]) / (double)wscale[i / IN_FEAT];
        worst = e > worst ? e : worst;
    }
    printf("weights (%s kernels): %d channels, scales %.6g .. %.6g; quantize/dequantize: %u mismatches, "
           "worst error %.3f steps\n",
           weight_isa(), OUT_CH, (double)wscale[0], (double)wscale[OUT_CH - 1], wbad, worst);
    qg_observer_destroy(wobs);
    /* bit-exact agreement with the reference decides; the worst error is shown */
    const int ok = bad == 0 && wbad == 0;
    printf("%s\n", ok ? "all kernels agree with the reference" : "MISMATCH");
    return ok ? 0 : 1;
}
