/* qgen observe: feed a .npy array to the spec's observer (optionally
 * continuing from a saved state) and print the resulting qparams. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char usage[] = "usage: qgen observe --spec S --in x.npy [--state FILE] [--set key=value]...\n"
                            "\n"
                            "Observes float32 data with the spec's observer and prints scale and zero point\n"
                            "as JSON. With --state, the observer starts from FILE when it exists and the\n"
                            "new state is saved back to it atomically, under a lock (FILE.lock) that\n"
                            "serializes concurrent updates.\n";

/* The observer's qparams and state as one JSON line. */
/* Prints what was observed; allocates nothing, so that nothing can fail
 * after the state was saved (mn, mx: nch floats each, from the caller). */
static int print_result(const qg_spec *sp, const qg_observer *obs, const float *scale, const int32_t *zp,
                        const float *zf, float *mn, float *mx, size_t nch) {
    const bool per_channel_obs =
        sp->observer.type == QG_OBS_PER_CHANNEL_MINMAX || sp->observer.type == QG_OBS_MOVING_AVERAGE_PER_CHANNEL_MINMAX;
    const size_t nobs = per_channel_obs ? nch : 1;
    qg_observer_minmax(obs, mn, mx);
    printf("{\"name\": \"%s\", \"scale\": [", sp->name);
    for (size_t i = 0; i < nch; i++)
        printf("%s%.9g", i ? ", " : "", (double)scale[i]);
    printf("], \"zero_point\": [");
    for (size_t i = 0; i < nch; i++) {
        if (sp->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS)
            printf("%s%.9g", i ? ", " : "", (double)zf[i]);
        else
            printf("%s%d", i ? ", " : "", (int)zp[i]);
    }
    printf("], \"min\": [");
    for (size_t i = 0; i < nobs; i++)
        printf("%s%.9g", i ? ", " : "", (double)mn[i]);
    printf("], \"max\": [");
    for (size_t i = 0; i < nobs; i++)
        printf("%s%.9g", i ? ", " : "", (double)mx[i]);
    printf("], \"batches\": %llu}\n", (unsigned long long)qg_observer_batches(obs));
    return QG_EXIT_OK;
}

/* The options, for the parser below and for the man page and the shell
 * completion (qgen help --man, --completion). */
static const struct option opts[] = {{"spec", required_argument, 0, 'S'},  {"in", required_argument, 0, 'i'},
                                     {"state", required_argument, 0, 't'}, {"set", required_argument, 0, 's'},
                                     {"help", no_argument, 0, 'h'},        {0}};
const qg_cli_command_info qg_cmd_observe_info = {"observe", usage, opts, "h"};

int qg_cmd_observe(int argc, char **argv) {
    const char *spec_path = NULL, *in = NULL, *state = NULL;
    qg_cli_sets sets = {0};
    int add_rc;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'S': spec_path = optarg; break;
        case 'i': in = optarg; break;
        case 't': state = optarg; break;
        case 's':
            if ((add_rc = qg_cli_add_set(&sets, optarg)))
                return add_rc;
            break;
        case 'h': fputs(usage, stdout); return QG_EXIT_OK;
        default: return qg_cli_bad_option("observe", argv[optind - 1]);
        }
    }
    if (!spec_path || !in)
        return qg_cli_failf("observe: --spec and --in are required; see qgen observe --help");
    qg_spec sp;
    qg_error err;
    if (qg_cli_load_spec(spec_path, sets.items, sets.count, &sp, &err))
        return qg_cli_fail(&err);
    qg_npy x;
    if (qg_npy_read(in, &x, &err))
        return qg_cli_fail(&err);
    int rc = QG_EXIT_BAD_INPUT;
    qg_observer *obs = NULL;
    int lock = -1; /* held from load to save: concurrent observers lose no batch */
    size_t channels, inner;
    size_t nch = qg_qscheme_is_per_channel(sp.qscheme) ? sp.channel_len : 1;
    float *scale = malloc(nch * sizeof(float)), *zf = malloc(nch * sizeof(float));
    float *mn = malloc(nch * sizeof(float)), *mx = malloc(nch * sizeof(float));
    int32_t *zp = malloc(nch * sizeof(int32_t));
    if (!scale || !zf || !zp || !mn || !mx) {
        rc = qg_cli_failf("observe: out of memory");
        goto out;
    }
    if (x.dtype != QG_NPY_F32) {
        rc = qg_cli_failf("%s: dtype %s; expected float32 data to observe", in, qg_npy_dtype_name(x.dtype));
        goto out;
    }
    if (qg_cli_layout(&sp, &x, in, &channels, &inner, &err) || qg_observer_create(&sp, &obs, &err) ||
        (state && (lock = qg_cli_lock_state(state, &err)) < 0) ||
        (state && access(state, F_OK) == 0 && qg_observer_load(obs, state, &err))) {
        rc = qg_cli_fail(&err);
        goto out;
    }
    if (qg_observer_update(obs, x.data, x.count, inner, &err)) { /* the data refused: name its file */
        rc = qg_cli_fail_in(in, &err);
        goto out;
    }
    if (qg_observer_qparams(obs, scale, zp, zf, &err) || (state && qg_observer_save(obs, state, &err))) {
        rc = qg_cli_fail(&err);
        goto out;
    }
    rc = print_result(&sp, obs, scale, zp, zf, mn, mx, nch);
out:
    qg_cli_unlock_state(lock);
    qg_observer_destroy(obs);
    free(x.data);
    free(scale);
    free(zf);
    free(zp);
    free(mn);
    free(mx);
    return rc;
}
