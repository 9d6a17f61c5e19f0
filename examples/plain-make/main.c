/* Trains a moving-average activation quantizer for a few steps with the
 * generated fused step (torch's default QAT module, FusedMovingAvgObs-
 * FakeQuantize, through the torch.qnnpack.activation preset) and checks
 * every output, mask and qparam against qgen's reference. */
#include <stdio.h>
#include <string.h>

#include "act.h"

enum { N = 1000, STEPS = 5 };

int main(void) {
    static float x[N], y[N], y_ref[N];
    static uint8_t mask[N / 8 + 1], mask_ref[N / 8 + 1];
    qg_observer *obs, *ref;
    qg_error err;
    if (qg_observer_create(&act_spec, &obs, &err) || qg_observer_create(&act_spec, &ref, &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    unsigned state = 1, bad = 0;
    float scale = 0, scale_ref = 0;
    int32_t zp = 0, zp_ref = 0;
    for (int step = 0; step < STEPS; step++) {
        for (int i = 0; i < N; i++) {
            state = state * 1664525u + 1013904223u;
            x[i] = (float)(state >> 9) / 8388608.0f * (3.0f + (float)step) - 1.5f;
        }
        if (act_fused_train_step(obs, x, y, mask, N, 1, &scale, &zp, &err) ||
            qg_ref_fused_train_step(ref, x, y_ref, mask_ref, N, 1, &scale_ref, &zp_ref, &err)) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        bad += memcmp(y, y_ref, sizeof y) != 0;
        bad += memcmp(mask, mask_ref, qg_mask_bytes(&act_spec, N)) != 0;
        bad += scale != scale_ref || zp != zp_ref;
        printf("step %d (%s kernels): scale %.9g, zero point %d\n", step, act_isa(), (double)scale, zp);
    }
    qg_observer_destroy(obs);
    qg_observer_destroy(ref);
    printf("built with make and pkg-config alone: %s\n", bad ? "MISMATCH" : "every step agrees with the reference");
    return bad != 0;
}
