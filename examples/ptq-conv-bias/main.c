/* The PTQ case of a Conv2d (5 input channels, 2 output channels, 3x3) whose
 * weights are all zero and whose bias is 0.5: the output must be 0.5
 * everywhere, which at output scale 0.0019607844 is the integer 255.
 * Prints every step and why, and exits 0 when the result is as stated. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conv_in.h"
#include "conv_out.h"
#include "conv_w.h"

enum { CIN = 5, COUT = 2, K = 3, H = 6, W = 6, OH = H - K + 1, OW = W - K + 1 };

int main(void) {
    qg_error err;
    /* input activations in [0, 2), observed by min/max */
    static float x[CIN * H * W];
    for (int i = 0; i < CIN * H * W; i++)
        x[i] = (float)((i * 37) % 200) / 100.0f;
    qg_observer *in_obs, *w_obs;
    float s_in, s_w[COUT];
    int32_t z_in, z_w[COUT];
    static float w[COUT * CIN * K * K]; /* all zero */
    if (qg_observer_create(&conv_in_spec, &in_obs, &err) || conv_in_observe(x, CIN * H * W, 1, in_obs, &err) ||
        qg_observer_qparams(in_obs, &s_in, &z_in, NULL, &err) || qg_observer_create(&conv_w_spec, &w_obs, &err) ||
        conv_w_observe(w, COUT * CIN * K * K, CIN * K * K, w_obs, &err) ||
        qg_observer_qparams(w_obs, s_w, z_w, NULL, &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    printf("input:  min/max observer -> s_in = %.9g, z_in = %d\n", (double)s_in, z_in);
    printf("weight: all zero, per-channel symmetric -> s_w = {%.9g, %.9g} (the observer's eps: a zero range\n"
           "        still needs a positive scale), z_w = 0\n",
           (double)s_w[0], (double)s_w[1]);

    static uint8_t xq[CIN * H * W];
    static int8_t wq[COUT * CIN * K * K];
    const qg_qparams in_qp = {&s_in, &z_in, NULL, 1, 1};
    const qg_qparams w_qp = {s_w, z_w, NULL, COUT, CIN * K * K};
    conv_in_quantize(x, xq, CIN * H * W, &in_qp);
    conv_w_quantize(w, wq, COUT * CIN * K * K, &w_qp);

    /* bias: int32 at scale s_in * s_w[c], zero point 0 */
    const float bias[COUT] = {0.5f, 0.5f};
    int32_t bq[COUT];
    qg_ref_quantize_bias(bias, bq, COUT, s_in, s_w);
    printf("bias:   0.5 -> int32 at scale s_in*s_w = %.9g: bias_q = round(0.5 / %.9g) = %d\n", (double)(s_in * s_w[0]),
           (double)(s_in * s_w[0]), bq[0]);

    /* the convolution in integers: acc = sum (xq - z_in) * wq, all 0 here */
    static int32_t acc[COUT * OH * OW];
    for (int co = 0; co < COUT; co++)
        for (int oy = 0; oy < OH; oy++)
            for (int ox = 0; ox < OW; ox++) {
                int32_t a = 0;
                for (int ci = 0; ci < CIN; ci++)
                    for (int ky = 0; ky < K; ky++)
                        for (int kx = 0; kx < K; kx++)
                            a += ((int32_t)xq[(ci * H + oy + ky) * W + ox + kx] - z_in) *
                                 wq[((co * CIN + ci) * K + ky) * K + kx];
                acc[(co * OH + oy) * OW + ox] = a;
            }
    printf("conv:   int32 accumulators = %d (the weights are zero)\n", acc[0]);

    /* requantize to the output: q = clamp(round((acc + bias_q) * s_in*s_w/s_out) + z_out) */
    const float s_out = 0.0019607844f;
    const int32_t z_out = 0;
    const qg_requant_params rp = {s_in, s_w, bq, s_out, z_out, COUT, OH * OW};
    static uint8_t out_q[COUT * OH * OW];
    static float out[COUT * OH * OW];
    conv_out_requantize(acc, out_q, COUT * OH * OW, &rp);
    const qg_qparams out_qp = {&s_out, &z_out, NULL, 1, 1};
    conv_out_dequantize(out_q, out, COUT * OH * OW, &out_qp);
    const float m = s_in * s_w[0] / s_out;
    printf("output: multiplier m = s_in*s_w/s_out = %.9g; (0 + %d) * m = %.9g, rounds to %d\n", (double)m, bq[0],
           (double)((float)bq[0] * m), out_q[0]);
    printf("        as a float: %d * s_out = %d * %.10g = %.9g\n", out_q[0], out_q[0], (double)s_out, (double)out[0]);
    printf("why:    s_out = 0.0019607844 is 1/510, so the bias 0.5 is 255 output steps: the top of quint8's\n"
           "        range, reached exactly; the bias scale s_in*s_w carries 0.5 through the int32 domain\n"
           "        (bias_q * s_in*s_w = 0.5), and the fp32 multiplier lands within rounding of 255.\n");
    int ok = 1;
    for (int i = 0; i < COUT * OH * OW; i++)
        ok &= out_q[i] == 255 && out[i] == 0.5f;
    printf("%s\n", ok ? "every output is 255 (integer) and 0.5 (float)" : "UNEXPECTED OUTPUT");
    qg_observer_destroy(in_obs);
    qg_observer_destroy(w_obs);
    return ok ? 0 : 1;
}
