/* `qgen run` argument parsing, in process, on a fixed small input: each
 * line of the fuzz input is one argument. Runs inside a scratch directory;
 * arguments naming other places (a '/') are skipped, so that outputs stay
 * there. The command must return 0 or 2, never crash. */
#include <fcntl.h>
#include <stdint.h>

#include "cli/cli.h"
#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    if (chdir(fuzz_dir()) != 0)
        abort();
    static const float x[6] = {0.5f, -1.25f, 3.0f, 0.0f, 7.5f, -2.0f};
    qg_error err;
    size_t shape[2] = {2, 3};
    if (qg_npy_write("x.npy", QG_NPY_F32, shape, 2, x, &err))
        abort();
    static const char s_json[] = "{\"name\": \"s\", \"observer\": {\"type\": \"moving_average_minmax\"}}";
    static const char c_json[] =
        "{\"name\": \"c\", \"qscheme\": \"per_channel_affine\", \"channel_len\": 3, \"ch_axis\": 1}";
    fuzz_file("s.json", s_json, sizeof s_json - 1);
    fuzz_file("c.json", c_json, sizeof c_json - 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096 || memchr(data, '/', size))
        return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    char *argv[34] = {"run"};
    int argc = 1;
    for (char *p = text; p && *p && argc < 33;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        argv[argc++] = p;
        p = nl ? nl + 1 : NULL;
    }
    argv[argc] = NULL;
    /* the command's messages silenced for the call only: libFuzzer's own
     * report and statistics keep stderr */
    static int null_fd = -1, saved_out = -1, saved_err = -1;
    if (null_fd < 0) {
        null_fd = open("/dev/null", O_WRONLY);
        saved_out = dup(1);
        saved_err = dup(2);
    }
    fflush(stdout);
    fflush(stderr);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
    int rc = qg_cmd_run(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    FUZZ_ASSERT(rc == 0 || rc == 2);
    free(text);
    return 0;
}
