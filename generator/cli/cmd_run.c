/* qgen run: one op of the reference semantics on .npy files. */
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_run.h"

static const char usage[] =
    "usage: qgen run --spec S --op OP --in X.npy --out Y.npy [options]\n"
    "\n"
    "ops and what they read and write:\n"
    "  quantize             --in x (float32)          --out q (spec dtype)\n"
    "  dequantize           --in q (spec dtype)       --out x (float32)\n"
    "  fake_quant           --in x                    --out y [--mask m (uint8 out)]\n"
    "  fake_quant_backward  --in dy --mask m          --out dx\n"
    "  fused_train_step     --in x [--state F]        --out y [--mask m]; prints qparams\n"
    "                       [--observer on|off] [--fake-quant on|off] (saved in F)\n"
    "  quantize_dynamic     --in x                    --out q; prints the qparams it took from x\n"
    "                       [--per-token]: one scale and zero point per row of the last dimension\n"
    "  lsq_forward          --in x                    --out y (float --zero-point)\n"
    "  lsq_backward         --in x --grad dy          --out dx; prints ds, dz [--grad-factor g]\n"
    "  quantize_bias        --in b (float32, one per channel) --s-in S --s-w W,...  --out bq (int32)\n"
    "  requantize           --in acc (int32) --s-in S --s-w W,... --s-out S [--bias bq.npy]\n"
    "                       --zero-point Z (output zero point)   --out y (spec dtype)\n"
    "\n"
    "qparams: --scale s[,s...] --zero-point z[,z...] (one per channel), or --state F\n"
    "(an observer state from qgen observe). --set key=value overrides spec fields.\n"
    "fp8 dtypes: q files are uint8 .npy of the bits.\n"
    "4-bit dtypes: q files are one-dimensional uint8 .npy of the packed bytes; dequantize takes\n"
    "the tensor's shape with --shape D0,D1,... (default: two elements per byte).\n"
    "block formats (--spec ggml.q4_0, ...): quantize, dequantize and fake_quant, no qparams; q files are\n"
    "uint8 .npy of shape (rows, bytes per row), a row of blocks per row of the last axis, as ggml\n"
    "stores them; dequantize takes the tensor's shape with --shape (default: (rows, elements)).\n";

enum { MAXCH = 1 << 16 };

/* The options, for the parser below and for the man page and the shell
 * completion (qgen help --man, --completion). */
static const struct option opts[] = {{"spec", required_argument, 0, 'S'},
                                     {"op", required_argument, 0, 'o'},
                                     {"in", required_argument, 0, 'i'},
                                     {"out", required_argument, 0, 'O'},
                                     {"mask", required_argument, 0, 'm'},
                                     {"state", required_argument, 0, 't'},
                                     {"grad", required_argument, 0, 'g'},
                                     {"bias", required_argument, 0, 'b'},
                                     {"scale", required_argument, 0, 'c'},
                                     {"zero-point", required_argument, 0, 'z'},
                                     {"s-in", required_argument, 0, '1'},
                                     {"s-w", required_argument, 0, '2'},
                                     {"s-out", required_argument, 0, '3'},
                                     {"grad-factor", required_argument, 0, 'f'},
                                     {"observer", required_argument, 0, 'B'},
                                     {"fake-quant", required_argument, 0, 'F'},
                                     {"set", required_argument, 0, 's'},
                                     {"per-token", no_argument, 0, 'P'},
                                     {"shape", required_argument, 0, 'D'},
                                     {"help", no_argument, 0, 'h'},
                                     {0}};
const qg_cli_command_info qg_cmd_run_info = {"run", usage, opts, "h"};

static int parse_args(int argc, char **argv, run_args *a) {
    int c;
    optind = 0; /* glibc: a full reset, for callers that run the command again in one process */
    a->observer_on = a->fake_quant_on = -1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'S': a->spec = optarg; break;
        case 'o': a->op = optarg; break;
        case 'i': a->in = optarg; break;
        case 'O': a->out = optarg; break;
        case 'm': a->mask = optarg; break;
        case 't': a->state = optarg; break;
        case 'g': a->grad = optarg; break;
        case 'b': a->bias = optarg; break;
        case 'c': a->scale = optarg; break;
        case 'z': a->zero_point = optarg; break;
        case '1': a->s_in = optarg; break;
        case '2': a->s_w = optarg; break;
        case '3': a->s_out = optarg; break;
        case 'f': a->grad_factor = optarg; break;
        case 'P': a->per_token = true; break;
        case 'D': a->shape = optarg; break;
        case 'B':
        case 'F': {
            const bool on = strcmp(optarg, "on") == 0;
            if (!on && strcmp(optarg, "off") != 0)
                return qg_cli_failf("--%s: got \"%s\"; expected on or off", c == 'B' ? "observer" : "fake-quant",
                                    optarg);
            *(c == 'B' ? &a->observer_on : &a->fake_quant_on) = on;
            break;
        }
        case 's': {
            int rc = qg_cli_add_set(&a->sets, optarg);
            if (rc)
                return rc;
            break;
        }
        case 'h': fputs(usage, stdout); return -1;
        default: return qg_cli_bad_option("run", argv[optind - 1]);
        }
    }
    if (optind != argc)
        return qg_cli_failf("run: unexpected argument \"%s\"; see qgen run --help", argv[optind]);
    if (!a->spec || !a->op || !a->in || !a->out)
        return qg_cli_failf("run: --spec, --op, --in and --out are required; see qgen run --help");
    return QG_EXIT_OK;
}

/* Working buffers of one run, freed together; the qparams arrays hold
 * `cap` values, the spec's channel count (no fixed maximum). */
typedef struct run_ctx {
    qg_spec sp;
    qg_npy x;
    size_t channels, inner;
    float *scale, *zf;
    int32_t *zp;
    double *ds, *dz;
    size_t cap, nscale;
} run_ctx;

/* --scale/--zero-point, or the qparams of a saved observer state. */
static int load_qparams(const run_args *a, run_ctx *r, bool float_zp, qg_qparams *qp) {
    qg_error err;
    size_t nz = 0;
    int rc;
    if (a->state && !a->scale) {
        qg_observer *obs;
        if (qg_observer_create(&r->sp, &obs, &err))
            return qg_cli_fail(&err);
        if (qg_observer_load(obs, a->state, &err) || qg_observer_qparams(obs, r->scale, r->zp, r->zf, &err)) {
            qg_observer_destroy(obs);
            return qg_cli_fail(&err);
        }
        qg_observer_destroy(obs);
        r->nscale = nz = r->channels;
    } else {
        if (!a->scale || !a->zero_point)
            return qg_cli_failf("run --op %s: qparams needed; give --scale and --zero-point, or --state", a->op);
        if ((rc = qg_cli_floats("--scale", a->scale, r->scale, r->cap, &r->nscale)))
            return rc;
        /* integer zero points are read as integers: through a float,
         * 16777217 would become 16777216 */
        if (float_zp)
            rc = qg_cli_floats("--zero-point", a->zero_point, r->zf, r->cap, &nz);
        else
            rc = qg_cli_ints("--zero-point", a->zero_point, r->zp, r->cap, &nz);
        if (rc)
            return rc;
        for (size_t i = 0; i < nz && !float_zp; i++)
            r->zf[i] = (float)r->zp[i];
    }
    /* per group: the blocked scale tensor, flattened (docs/semantics.md, "Layouts") */
    const bool grouped = qg_qscheme_is_per_group(r->sp.qscheme);
    const size_t want = grouped ? qg_qparams_count(&r->sp, r->x.count, r->inner) : r->channels;
    if (r->nscale != want || nz != want)
        return qg_cli_failf("--scale/--zero-point: got %zu and %zu values; expected %zu (%s of spec \"%s\")", r->nscale,
                            nz, want, grouped ? "the groups of this input" : "channel_len", r->sp.name);
    qg_qparams q = {r->scale, r->zp, float_zp ? r->zf : NULL, r->channels, r->inner};
    *qp = q;
    return QG_EXIT_OK;
}

/* LSQ's learnable qparams: finite scales > 0, finite float zero points
 * inside the range (torch clamps them there before use). */
static int check_lsq_qparams(const run_ctx *r) {
    for (size_t c = 0; c < r->channels; c++) {
        if (!(r->scale[c] > 0.0f) || !isfinite(r->scale[c]))
            return qg_cli_failf("--scale: got %g for channel %zu; expected a finite scale > 0", (double)r->scale[c], c);
        if (!isfinite(r->zf[c]) || r->zf[c] < (float)r->sp.quant_min || r->zf[c] > (float)r->sp.quant_max)
            return qg_cli_failf("--zero-point: got %g for channel %zu; expected a finite value in %lld..%lld",
                                (double)r->zf[c], c, (long long)r->sp.quant_min, (long long)r->sp.quant_max);
    }
    return QG_EXIT_OK;
}

static int op_requant_family(const run_args *a, run_ctx *r) {
    int rc;
    float s_in, s_w[MAXCH], s_out;
    size_t n1, nw, n3;
    if (!a->s_in || !a->s_w)
        return qg_cli_failf("run --op %s: --s-in and --s-w are required", a->op);
    if ((rc = qg_cli_floats("--s-in", a->s_in, &s_in, 1, &n1)) ||
        (rc = qg_cli_floats("--s-w", a->s_w, s_w, MAXCH, &nw)))
        return rc;
    for (size_t i = 0; i < nw; i++)
        if (!(s_w[i] > 0.0f) || !isfinite(s_w[i]) || !(s_in > 0.0f) || !isfinite(s_in))
            return qg_cli_failf("--s-in/--s-w: got %g and %g; expected finite scales > 0", (double)s_in,
                                (double)s_w[i]);
    if (strcmp(a->op, "quantize_bias") == 0) {
        if ((rc = run_expect_dtype(a->in, &r->x, QG_NPY_F32, "float bias")))
            return rc;
        if (r->x.count != nw)
            return qg_cli_failf("%s: %zu biases; expected one per --s-w value (%zu)", a->in, r->x.count, nw);
        for (size_t i = 0; i < nw; i++) /* 1 / (s_in * s_w) must be finite */
            if (!(s_in * s_w[i] >= FLT_MIN))
                return qg_cli_failf("--s-in/--s-w: s_in * s_w[%zu] = %g; expected a normal float (>= 1.2e-38)", i,
                                    (double)(s_in * s_w[i]));
        int32_t *bq = malloc((nw ? nw : 1) * sizeof(int32_t));
        if (!bq)
            return qg_cli_failf("out of memory");
        qg_ref_quantize_bias(r->x.data, bq, nw, s_in, s_w);
        rc = run_write_out(a->out, QG_NPY_I32, &r->x, bq);
        free(bq);
        return rc;
    }
    if ((rc = run_expect_dtype(a->in, &r->x, QG_NPY_I32, "int32 accumulators")))
        return rc;
    if (!a->s_out || (rc = qg_cli_floats("--s-out", a->s_out, &s_out, 1, &n3)))
        return a->s_out ? rc : qg_cli_failf("run --op requantize: --s-out is required");
    if (!(s_out > 0.0f) || !isfinite(s_out))
        return qg_cli_failf("--s-out: got %g; expected a finite scale > 0", (double)s_out);
    int32_t zo = 0;
    size_t nz = 0;
    if (a->zero_point && (rc = qg_cli_ints("--zero-point", a->zero_point, &zo, 1, &nz)))
        return rc;
    if (zo < r->sp.quant_min || zo > r->sp.quant_max)
        return qg_cli_failf("--zero-point: got %d; expected a value in %lld..%lld", (int)zo, (long long)r->sp.quant_min,
                            (long long)r->sp.quant_max);
    size_t channels = nw, inner = 1;
    if (nw > 1) {
        /* Per output channel along the spec's ch_axis (NCHW: axis 1). */
        qg_spec tmp = r->sp;
        tmp.qscheme = QG_PER_CHANNEL_SYMMETRIC;
        tmp.channel_len = nw;
        qg_error err;
        if (qg_cli_layout(&tmp, &r->x, a->in, &channels, &inner, &err))
            return qg_cli_fail(&err);
    }
    qg_npy bias = {0};
    if (a->bias) {
        qg_error err;
        if (qg_npy_read(a->bias, &bias, &err))
            return qg_cli_fail(&err);
        if ((rc = run_expect_dtype(a->bias, &bias, QG_NPY_I32, "quantized int32 bias")) || bias.count != nw) {
            free(bias.data);
            return rc ? rc : qg_cli_failf("%s: %zu biases; expected %zu", a->bias, bias.count, nw);
        }
    }
    qg_requant_params rp = {s_in, s_w, bias.data, s_out, zo, channels, inner};
    qg_error err;
    if (qg_requant_params_validate(&r->sp, &rp, &err)) {
        free(bias.data);
        return qg_cli_fail(&err);
    }
    void *y = malloc(r->x.count * qg_dtype_size(r->sp.dtype) + 1);
    if (!y) {
        free(bias.data);
        return qg_cli_failf("out of memory");
    }
    qg_ref_requantize(&r->sp, r->x.data, y, r->x.count, &rp);
    rc = run_write_q(a->out, &r->sp, &r->x, y);
    free(y);
    free(bias.data);
    return rc;
}

/* One training step on the state file (created when missing), with the
 * switches the command line sets. The observer comes back for saving once
 * the outputs are written. */
static qg_status fused_step(const run_args *a, run_ctx *r, float *y, uint8_t *mask, qg_observer **obs, qg_error *err) {
    qg_status st = qg_observer_create(&r->sp, obs, err);
    if (st)
        return st;
    if (a->state && access(a->state, F_OK) == 0)
        st = qg_observer_load(*obs, a->state, err);
    if (!st) {
        bool observe_on, fake_quant_on;
        qg_observer_enabled(*obs, &observe_on, &fake_quant_on);
        qg_observer_enable(*obs, a->observer_on < 0 ? observe_on : a->observer_on,
                           a->fake_quant_on < 0 ? fake_quant_on : a->fake_quant_on);
        st = qg_ref_fused_train_step(*obs, r->x.data, y, mask, r->x.count, r->inner, r->scale, r->zp, err);
        if (st == QG_ERR_INVALID && err) { /* the data refused (a NaN): name its file */
            char msg[sizeof err->message];
            memcpy(msg, err->message, sizeof msg);
            qg_error_set(err, st, "%s: %s", a->in, msg);
        }
    }
    return st;
}

/* Buffers for every op's outputs. */
typedef struct run_out {
    float *f;
    uint8_t *mask;
    void *q;
} run_out;

static int op_backward(const run_args *a, run_ctx *r, const run_out *o) {
    const qg_spec *sp = &r->sp;
    const size_t n = r->x.count;
    qg_error err;
    qg_npy m;
    if (!a->mask)
        return qg_cli_failf("run --op fake_quant_backward: --mask (from fake_quant) is required");
    if (qg_npy_read(a->mask, &m, &err))
        return qg_cli_fail(&err);
    size_t want = qg_mask_bytes(sp, n);
    int rc = run_expect_dtype(a->mask, &m, QG_NPY_U8, "a mask from fake_quant");
    if (rc || m.count != want) {
        free(m.data);
        return rc ? rc
                  : qg_cli_failf("%s: %zu mask bytes; expected %zu for %zu elements (%s mask)", a->mask, m.count, want,
                                 n, sp->compat_mask ? "packed" : "byte");
    }
    qg_ref_fake_quant_backward(sp, r->x.data, m.data, o->f, n);
    free(m.data);
    return run_write_float(a->out, &r->sp, &r->x, o->f);
}

static void print_values(const char *k1, const float *v1, const char *k2, const int32_t *v2, size_t n) {
    printf("{\"%s\": [", k1);
    for (size_t i = 0; i < n; i++)
        printf("%s%.9g", i ? ", " : "", (double)v1[i]);
    printf("], \"%s\": [", k2);
    for (size_t i = 0; i < n; i++)
        printf("%s%d", i ? ", " : "", (int)v2[i]);
    printf("]}\n");
}

static int op_fused(const run_args *a, run_ctx *r, const run_out *o) {
    const qg_spec *sp = &r->sp;
    qg_error err;
    qg_observer *obs = NULL;
    int lock = -1, rc;
    if ((a->state && (lock = qg_cli_lock_state(a->state, &err)) < 0) || fused_step(a, r, o->f, o->mask, &obs, &err)) {
        qg_observer_destroy(obs);
        qg_cli_unlock_state(lock);
        return qg_cli_fail(&err);
    }
    rc = run_write_float(a->out, &r->sp, &r->x, o->f);
    if (!rc && a->mask)
        rc = run_write_mask(a->mask, sp, r->x.count, o->mask, &r->x);
    /* the state changes only once every output is in place: a saved state
     * is a command that succeeded */
    rc = run_finish_outputs(rc);
    if (!rc && a->state && qg_observer_save(obs, a->state, &err))
        rc = qg_cli_fail(&err);
    qg_observer_destroy(obs);
    qg_cli_unlock_state(lock);
    if (!rc)
        print_values("scale", r->scale, "zero_point", r->zp,
                     qg_qscheme_is_per_channel(sp->qscheme) ? sp->channel_len : 1);
    return rc;
}

static int op_lsq_backward(const run_args *a, run_ctx *r, const run_out *o) {
    const size_t n = r->x.count;
    qg_error err;
    qg_npy dy;
    float g = 1.0f;
    size_t ng;
    int rc;
    if (!a->grad)
        return qg_cli_failf("run --op lsq_backward: --grad dy.npy is required");
    if (a->grad_factor && (rc = qg_cli_floats("--grad-factor", a->grad_factor, &g, 1, &ng)))
        return rc;
    if (qg_npy_read(a->grad, &dy, &err))
        return qg_cli_fail(&err);
    if ((rc = run_expect_dtype(a->grad, &dy, QG_NPY_F32, "float32 gradient")) || dy.count != n) {
        free(dy.data);
        return rc ? rc : qg_cli_failf("%s: %zu elements; expected %zu like %s", a->grad, dy.count, n, a->in);
    }
    qg_lsq_grads gr = {o->f, r->ds, r->dz};
    qg_ref_lsq_backward(&r->sp, r->x.data, dy.data, n, r->scale, r->zf, r->channels, r->inner, g, &gr);
    free(dy.data);
    printf("{\"ds\": [");
    for (size_t i = 0; i < r->channels; i++)
        printf("%s%.9g", i ? ", " : "", r->ds[i]);
    printf("], \"dz\": [");
    for (size_t i = 0; i < r->channels; i++)
        printf("%s%.9g", i ? ", " : "", r->dz[i]);
    printf("]}\n");
    return run_write_float(a->out, &r->sp, &r->x, o->f);
}

/* q with qparams from x's own min/max: per tensor, or per row of the last
 * dimension with --per-token (docs/semantics.md, "Dynamic quantization"). */
static int op_dynamic(const run_args *a, run_ctx *r, const run_out *o) {
    const size_t n = r->x.count, last = r->x.ndim ? r->x.shape[r->x.ndim - 1] : 1;
    /* per group: each row of the last dimension in groups */
    const bool by_row = a->per_token || qg_qscheme_is_per_group(r->sp.qscheme);
    const size_t row_len = by_row ? last : n, rows = by_row ? (last ? n / last : 0) : 1;
    const size_t G = qg_qscheme_is_per_group(r->sp.qscheme) ? r->sp.group_size : (row_len ? row_len : 1);
    const size_t count = rows * ((row_len + G - 1) / G);
    float *s = malloc((count + 1) * sizeof(float));
    int32_t *z = malloc((count + 1) * sizeof(int32_t));
    qg_error err;
    int rc = 0;
    if (!s || !z)
        rc = qg_cli_failf("out of memory");
    else if (qg_quantize_dynamic(&r->sp, NULL, NULL, r->x.data, o->q, rows, row_len, s, z, &err))
        rc = err.code == QG_ERR_INVALID ? qg_cli_fail_in(a->in, &err) : qg_cli_fail(&err);
    else if (!(rc = run_write_q(a->out, &r->sp, &r->x, o->q)))
        print_values("scale", s, "zero_point", z, count);
    free(s);
    free(z);
    return rc;
}

/* quantize, dequantize and fake_quant with the given qparams. */
static int op_elementwise(const run_args *a, run_ctx *r, const qg_qparams *qp, const run_out *o) {
    const qg_spec *sp = &r->sp;
    const size_t n = r->x.count;
    qg_error err;
    if (qg_qparams_validate_n(sp, qp, n, &err))
        return qg_cli_fail(&err);
    if (strcmp(a->op, "quantize") == 0) {
        qg_ref_quantize(sp, r->x.data, o->q, n, qp);
        return run_write_q(a->out, sp, &r->x, o->q);
    }
    if (strcmp(a->op, "dequantize") == 0) {
        qg_ref_dequantize(sp, r->x.data, o->f, n, qp);
        return run_write_float(a->out, &r->sp, &r->x, o->f);
    }
    qg_ref_fake_quant(sp, r->x.data, o->f, a->mask ? o->mask : NULL, n, qp);
    int rc = run_write_float(a->out, &r->sp, &r->x, o->f);
    if (!rc && a->mask)
        rc = run_write_mask(a->mask, sp, n, o->mask, &r->x);
    return rc;
}

/* The ops that take qparams (--scale/--zero-point or a state): LSQ's with
 * float zero points, the others as the spec says. */
static int op_with_qparams(const run_args *a, run_ctx *r, const run_out *o) {
    const qg_spec *sp = &r->sp;
    const bool lsqf = strcmp(a->op, "lsq_forward") == 0, lsqb = strcmp(a->op, "lsq_backward") == 0;
    if ((lsqf || lsqb) && qg_qscheme_is_per_group(sp->qscheme))
        return qg_cli_failf("--op %s: spec \"%s\" is %s; expected a per-tensor or per-channel spec (LSQ per group "
                            "is not built)",
                            a->op, sp->name, qg_qscheme_name(sp->qscheme));
    if ((lsqf || lsqb) && sp->float_type != QG_FLOAT32)
        return qg_cli_failf("--op %s: spec \"%s\" has float_type %s; expected float32 (LSQ runs on float32 "
                            "tensors)",
                            a->op, sp->name, qg_float_type_name(sp->float_type));
    if ((lsqf || lsqb) && qg_dtype_is_float8(sp->dtype))
        return qg_cli_failf("--op %s: spec \"%s\" has dtype %s; expected an integer dtype (LSQ learns an integer "
                            "grid)",
                            a->op, sp->name, qg_dtype_name(sp->dtype));
    qg_qparams qp;
    int rc = load_qparams(a, r, sp->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS || lsqf || lsqb, &qp);
    if (rc || ((lsqf || lsqb) && (rc = check_lsq_qparams(r))))
        return rc;
    if (lsqf) {
        qg_ref_lsq_forward(sp, r->x.data, o->f, r->x.count, r->scale, r->zf, r->channels, r->inner);
        return run_write_float(a->out, &r->sp, &r->x, o->f);
    }
    return lsqb ? op_lsq_backward(a, r, o) : op_elementwise(a, r, &qp, o);
}

static int run_op(const run_args *a, run_ctx *r) {
    const qg_spec *sp = &r->sp;
    qg_error err;
    int rc;
    const char *op = a->op;
    if (sp->block != QG_BLOCK_NONE)
        return run_block_op(a, sp, &r->x);
    if (strcmp(op, "quantize_bias") == 0 || strcmp(op, "requantize") == 0)
        return op_requant_family(a, r);
    bool is_q = strcmp(op, "quantize") == 0, is_dq = strcmp(op, "dequantize") == 0,
         is_fq = strcmp(op, "fake_quant") == 0, is_bw = strcmp(op, "fake_quant_backward") == 0,
         is_fused = strcmp(op, "fused_train_step") == 0, is_lsqf = strcmp(op, "lsq_forward") == 0,
         is_lsqb = strcmp(op, "lsq_backward") == 0, is_dyn = strcmp(op, "quantize_dynamic") == 0;
    if (!(is_q || is_dq || is_fq || is_bw || is_fused || is_lsqf || is_lsqb || is_dyn))
        return qg_cli_failf("--op: got \"%s\"; expected quantize, dequantize, fake_quant, fake_quant_backward, "
                            "fused_train_step, quantize_dynamic, lsq_forward, lsq_backward, quantize_bias or "
                            "requantize",
                            op);
    if (a->per_token && !is_dyn)
        return qg_cli_failf("--per-token: given with --op %s; expected --op quantize_dynamic", op);
    char why[64];
    snprintf(why, sizeof why, "%s input, the spec's float_type", qg_float_type_name(sp->float_type));
    if ((rc = run_expect_dtype(a->in, &r->x, is_dq ? run_npy_of(sp->dtype) : run_float_npy(sp),
                               is_dq ? "the spec's dtype" : why)) ||
        (!is_dq && (rc = run_widen_input(sp, &r->x))))
        return rc;
    if (a->shape && !(is_dq && qg_dtype_is_packed(sp->dtype)))
        return qg_cli_failf("--shape: given with --op %s and dtype %s; expected --op dequantize of a 4-bit dtype", op,
                            qg_dtype_name(sp->dtype));
    if (is_dq && qg_dtype_is_packed(sp->dtype) && (rc = run_unpacked_shape(a, &r->x)))
        return rc;
    if (qg_cli_layout(sp, &r->x, a->in, &r->channels, &r->inner, &err))
        return qg_cli_fail(&err);
    const size_t n = r->x.count; /* a packed input's element count, from here on */
    run_out o = {malloc(n * sizeof(float) + 1), malloc(n + 1), malloc(n * qg_dtype_size(sp->dtype) + 1)};
    if (!o.f || !o.mask || !o.q)
        rc = qg_cli_failf("out of memory");
    else if (is_bw)
        rc = op_backward(a, r, &o);
    else if (is_fused)
        rc = op_fused(a, r, &o);
    else if (is_dyn)
        rc = op_dynamic(a, r, &o);
    else
        rc = op_with_qparams(a, r, &o);
    free(o.f);
    free(o.mask);
    free(o.q);
    return rc;
}

int qg_cmd_run(int argc, char **argv) {
    run_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? QG_EXIT_OK : rc;
    run_ctx *r = calloc(1, sizeof *r);
    if (!r)
        return qg_cli_failf("out of memory");
    qg_error err;
    if (qg_cli_load_spec(a.spec, a.sets.items, a.sets.count, &r->sp, &err)) {
        free(r);
        return qg_cli_fail(&err);
    }
    if (qg_npy_read(a.in, &r->x, &err)) {
        free(r);
        return qg_cli_fail(&err);
    }
    /* per group: up to one pair per element (and one for an empty input) */
    r->cap = r->sp.channel_len > MAXCH ? r->sp.channel_len : MAXCH;
    if (qg_qscheme_is_per_group(r->sp.qscheme) && r->x.count >= r->cap)
        r->cap = r->x.count + 1;
    r->scale = malloc(r->cap * sizeof(float));
    r->zf = malloc(r->cap * sizeof(float));
    r->zp = malloc(r->cap * sizeof(int32_t));
    r->ds = malloc(r->cap * sizeof(double));
    r->dz = malloc(r->cap * sizeof(double));
    if (!r->scale || !r->zf || !r->zp || !r->ds || !r->dz)
        rc = qg_cli_failf("out of memory");
    else
        rc = run_op(&a, r);
    rc = run_finish_outputs(rc);
    free(r->x.data);
    free(r->scale);
    free(r->zf);
    free(r->zp);
    free(r->ds);
    free(r->dz);
    free(r);
    return rc;
}
