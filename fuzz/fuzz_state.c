/* Observer state files on arbitrary bytes, loaded into observers of a few
 * kinds. A state that loads gives qparams or a clear error, saves, and
 * loads back to the same bytes. */
#include <stdint.h>

#include "fuzz_util.h"
#include "qgen/runtime.h"

static const char *const specs[] = {
    "{\"name\": \"a\", \"observer\": {\"type\": \"moving_average_minmax\"}}",
    "{\"name\": \"h\", \"observer\": {\"type\": \"histogram\", \"bins\": 16}}",
    "{\"name\": \"w\", \"dtype\": \"qint8\", \"qscheme\": \"per_channel_symmetric\", \"channel_len\": 3}",
    "{\"name\": \"f\", \"base\": \"torch.fbgemm.activation\"}",
};
static qg_observer *obs[4];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    for (int k = 0; k < 4; k++) {
        qg_spec sp;
        qg_error err;
        if (qg_spec_load_string(specs[k], "s", NULL, 0, &sp, &err) || qg_observer_create(&sp, &obs[k], &err))
            abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("in.state", data, size);
    char saved[512];
    snprintf(saved, sizeof saved, "%s/saved.state", fuzz_dir());
    for (int k = 0; k < 4; k++) {
        qg_error err;
        qg_observer_reset(obs[k]);
        if (qg_observer_load(obs[k], path, &err) != QG_OK)
            continue;
        float s[3], x[3] = {0.5f, -1.0f, 2.0f}, y[3];
        int32_t z[3];
        qg_observer_qparams(obs[k], s, z, NULL, &err);
        qg_ref_fused_train_step(obs[k], x, y, NULL, 3, 1, s, z, &err);
        FUZZ_ASSERT(qg_observer_save(obs[k], saved, &err) == QG_OK);
        qg_observer_reset(obs[k]);
        FUZZ_ASSERT(qg_observer_load(obs[k], saved, &err) == QG_OK);
    }
    return 0;
}
