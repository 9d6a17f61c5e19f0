/* Quantization-aware training of y = W2 relu(W1 x + b1) + b2 (4 -> 8 -> 1)
 * on a smooth target. Every forward pass fake-quantizes W1 (qint8 per output
 * channel), W2 (qint8 per tensor) and the hidden activations (quint8 with a
 * moving-average observer) through each spec's fused training step; the
 * backward pass sends gradients straight through where the masks allow
 * (the activations' mask packed 1 bit per element). Then W1 is baked to its
 * quantized values and restored, bit for bit. Exit status 0 when the loss
 * fell by more than half and the baked and restored weights are right. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qat_act.h"
#include "qat_w1.h"
#include "qat_w2.h"

enum { N = 256, IN = 4, HID = 8, STEPS = 600 };

static float X[N][IN], T[N];
static float W1[HID * IN], b1[HID], W2[HID], b2;

static float uniform(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xFFFFFF) / 8388608.0f - 1.0f;
}

typedef struct fq_state {
    qg_observer *obs_w1, *obs_w2, *obs_act;
    float s_w1[HID], s_w2, s_act;
    int32_t z_w1[HID], z_w2, z_act;
} fq_state;

static void check(qg_status st, const qg_error *err) {
    if (st) {
        fprintf(stderr, "%s\n", err->message);
        exit(1);
    }
}

/* One forward pass (and, with lr > 0, backward and update); returns the loss.
 * With w1_baked, W1 already holds quantized values and is used as is. */
static float step(fq_state *q, float lr, int w1_baked) {
    qg_error err;
    static float W1q[HID * IN], W2q[HID], pre[N * HID], h[N * HID], hq[N * HID], y[N];
    static uint8_t m_w1[HID * IN], m_w2[HID], m_act[(N * HID + 7) / 8];
    if (w1_baked)
        memcpy(W1q, W1, sizeof W1);
    else
        check(qat_w1_fused_train_step(q->obs_w1, W1, W1q, m_w1, HID * IN, IN, q->s_w1, q->z_w1, &err), &err);
    check(qat_w2_fused_train_step(q->obs_w2, W2, W2q, m_w2, HID, 1, &q->s_w2, &q->z_w2, &err), &err);
    for (int n = 0; n < N; n++)
        for (int j = 0; j < HID; j++) {
            float a = b1[j];
            for (int i = 0; i < IN; i++)
                a += W1q[j * IN + i] * X[n][i];
            pre[n * HID + j] = a;
            h[n * HID + j] = a > 0.0f ? a : 0.0f;
        }
    check(qat_act_fused_train_step(q->obs_act, h, hq, m_act, N * HID, 1, &q->s_act, &q->z_act, &err), &err);
    float loss = 0.0f;
    for (int n = 0; n < N; n++) {
        float a = b2;
        for (int j = 0; j < HID; j++)
            a += W2q[j] * hq[n * HID + j];
        y[n] = a;
        loss += (a - T[n]) * (a - T[n]);
    }
    loss /= N;
    if (lr <= 0.0f)
        return loss;
    /* backward: straight through the fake-quant masks */
    static float dW1q[HID * IN], dW2q[HID], dhq[N * HID], dh[N * HID], dW1[HID * IN], dW2[HID], db1[HID];
    memset(dW1q, 0, sizeof dW1q), memset(dW2q, 0, sizeof dW2q), memset(db1, 0, sizeof db1);
    float db2 = 0.0f;
    for (int n = 0; n < N; n++) {
        const float dy = 2.0f * (y[n] - T[n]) / N;
        db2 += dy;
        for (int j = 0; j < HID; j++) {
            dW2q[j] += dy * hq[n * HID + j];
            dhq[n * HID + j] = dy * W2q[j];
        }
    }
    qat_act_fake_quant_backward(dhq, m_act, dh, N * HID);
    for (int n = 0; n < N; n++)
        for (int j = 0; j < HID; j++) {
            const float d = pre[n * HID + j] > 0.0f ? dh[n * HID + j] : 0.0f;
            db1[j] += d;
            for (int i = 0; i < IN; i++)
                dW1q[j * IN + i] += d * X[n][i];
        }
    qat_w1_fake_quant_backward(dW1q, m_w1, dW1, HID * IN);
    qat_w2_fake_quant_backward(dW2q, m_w2, dW2, HID);
    for (int k = 0; k < HID * IN; k++)
        W1[k] -= lr * dW1[k];
    for (int j = 0; j < HID; j++) {
        W2[j] -= lr * dW2[j];
        b1[j] -= lr * db1[j];
    }
    b2 -= lr * db2;
    return loss;
}

int main(void) {
    unsigned s = 12345;
    for (int n = 0; n < N; n++) {
        for (int i = 0; i < IN; i++)
            X[n][i] = uniform(&s);
        T[n] = sinf(2.0f * X[n][0]) + 0.5f * X[n][1] * X[n][2] - 0.3f * X[n][3];
    }
    for (int k = 0; k < HID * IN; k++)
        W1[k] = 0.5f * uniform(&s);
    for (int j = 0; j < HID; j++)
        W2[j] = 0.5f * uniform(&s), b1[j] = 0.1f;
    fq_state q;
    qg_error err;
    check(qg_observer_create(&qat_w1_spec, &q.obs_w1, &err), &err);
    check(qg_observer_create(&qat_w2_spec, &q.obs_w2, &err), &err);
    check(qg_observer_create(&qat_act_spec, &q.obs_act, &err), &err);
    printf("QAT of a 4-8-1 regression, %d samples; kernels: W1 %s, W2 %s, activations %s\n", N, qat_w1_isa(),
           qat_w2_isa(), qat_act_isa());
    float first = 0.0f, last = 0.0f;
    for (int it = 0; it <= STEPS; it++) {
        last = step(&q, it < STEPS ? 0.1f : 0.0f, 0);
        if (it == 0)
            first = last;
        if (it % 100 == 0)
            printf("  step %3d  loss %.5f  (hidden scale %.5f, zero point %d)\n", it, (double)last, (double)q.s_act,
                   q.z_act);
    }

    /* bake W1: the parameter now holds its quantized values ... */
    static float original[HID * IN];
    memcpy(original, W1, sizeof W1);
    qg_quantizer *qz;
    check(qg_quantizer_create(&qat_w1_spec, &qz, &err), &err);
    check(qg_quantizer_activate(qz, q.s_w1, q.z_w1, &err), &err);
    check(qg_quantizer_bake(qz, W1, HID * IN, IN, &err), &err);
    int on_grid = 1;
    for (int k = 0; k < HID * IN; k++) {
        const float steps = W1[k] / q.s_w1[k / IN];
        on_grid &= steps == rintf(steps) && fabsf(steps) <= 128.0f;
    }
    const float baked_loss = step(&q, 0.0f, 1);
    printf("bake():    state %s, W1 on its int8 grid: %s, loss with baked W1 %.5f\n",
           qg_quant_state_name(qg_quantizer_state(qz)), on_grid ? "yes" : "NO", (double)baked_loss);
    /* ... and restore() gives the trained floats back, bit for bit */
    check(qg_quantizer_restore(qz, &err), &err);
    const int restored = memcmp(W1, original, sizeof W1) == 0;
    printf("restore(): state %s, W1 equal to the trained values bit for bit: %s\n",
           qg_quant_state_name(qg_quantizer_state(qz)), restored ? "yes" : "NO");
    qg_quantizer_destroy(qz);
    qg_observer_destroy(q.obs_w1);
    qg_observer_destroy(q.obs_w2);
    qg_observer_destroy(q.obs_act);
    const int ok = last < 0.5f * first && on_grid && restored;
    printf("loss %.5f -> %.5f: %s\n", (double)first, (double)last, ok ? "trained" : "FAILED");
    return ok ? 0 : 1;
}
