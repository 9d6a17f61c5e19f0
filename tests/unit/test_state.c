/* Observer state files: round trips, corrupt and foreign files, and saves
 * that fail half-way leaving the previous file intact.
 *
 * usage: test_state TMPDIR */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test_util.h"
#include "qgen/runtime.h"

static char dir[900];

static qg_observer *make(const char *json) {
    qg_spec sp;
    qg_error err;
    qg_observer *o = NULL;
    if (qg_spec_load_string(json, "t", NULL, 0, &sp, &err) || qg_observer_create(&sp, &o, &err))
        fprintf(stderr, "%s\n", err.message);
    return o;
}

static void fill(qg_observer *o, float shift) {
    float x[300];
    qg_error err;
    for (int i = 0; i < 300; i++)
        x[i] = (float)((i * 37) % 101) / 7.0f - 5.0f + shift;
    qg_observer_update(o, x, 300, 50, &err);
}

static char *path_of(const char *name) {
    static char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void test_round_trip(void) {
    static const char *const specs[] = {
        "{\"name\":\"a\",\"observer\":{\"type\":\"moving_average_minmax\"}}",
        "{\"name\":\"h\",\"observer\":{\"type\":\"histogram\"}}",
        "{\"name\":\"w\",\"dtype\":\"qint8\",\"qscheme\":\"per_channel_symmetric\",\"channel_len\":3}",
    };
    for (size_t k = 0; k < 3; k++) {
        qg_observer *a = make(specs[k]), *b = make(specs[k]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        fill(a, 0.0f);
        fill(a, 1.5f);
        qg_error err;
        CU_ASSERT_EQUAL(qg_observer_save(a, path_of("rt.state"), &err), QG_OK);
        CU_ASSERT_EQUAL(qg_observer_load(b, path_of("rt.state"), &err), QG_OK);
        float sa[3], sb[3];
        int32_t za[3], zb[3];
        CU_ASSERT_EQUAL(qg_observer_qparams(a, sa, za, NULL, &err), QG_OK);
        CU_ASSERT_EQUAL(qg_observer_qparams(b, sb, zb, NULL, &err), QG_OK);
        size_t ch = qg_observer_spec_of(a)->channel_len;
        CU_ASSERT_EQUAL(memcmp(sa, sb, ch * sizeof(float)), 0);
        CU_ASSERT_EQUAL(memcmp(za, zb, ch * sizeof(int32_t)), 0);
        /* continuing from the loaded state matches continuing in memory */
        fill(a, -3.0f);
        fill(b, -3.0f);
        qg_observer_qparams(a, sa, za, NULL, &err);
        qg_observer_qparams(b, sb, zb, NULL, &err);
        CU_ASSERT_EQUAL(memcmp(sa, sb, ch * sizeof(float)), 0);
        qg_observer_destroy(a);
        qg_observer_destroy(b);
    }
}

static long file_size(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static void corrupt_byte(const char *p, long at) {
    FILE *f = fopen(p, "r+b");
    fseek(f, at, SEEK_SET);
    int c = fgetc(f);
    fseek(f, at, SEEK_SET);
    fputc(c ^ 0x40, f);
    fclose(f);
}

static void test_corrupt_and_foreign(void) {
    const char *spec = "{\"name\":\"a\",\"observer\":{\"type\":\"minmax\"}}";
    qg_observer *a = make(spec), *b = make(spec);
    fill(a, 0.0f);
    qg_error err;
    char *p = path_of("c.state");
    CU_ASSERT_EQUAL_FATAL(qg_observer_save(a, p, &err), QG_OK);
    float before_min, before_max, after_min, after_max;
    qg_observer_minmax(b, &before_min, &before_max);

    corrupt_byte(p, file_size(p) - 12); /* a data byte */
    CU_ASSERT_EQUAL(qg_observer_load(b, p, &err), QG_ERR_FORMAT);
    ASSERT_CONTAINS(err.message, p, "checksum", "corrupt");
    qg_observer_minmax(b, &after_min, &after_max);
    CU_ASSERT_TRUE(after_min == before_min && after_max == before_max); /* refused whole */

    qg_observer_save(a, p, &err);
    CU_ASSERT_EQUAL(truncate(p, file_size(p) - 5), 0);
    CU_ASSERT_EQUAL(qg_observer_load(b, p, &err), QG_ERR_FORMAT);
    ASSERT_CONTAINS(err.message, "truncated or corrupt");

    FILE *f = fopen(p, "w");
    fputs("{\"not\": \"a state file\"}", f);
    fclose(f);
    CU_ASSERT_EQUAL(qg_observer_load(b, p, &err), QG_ERR_FORMAT);
    ASSERT_CONTAINS(err.message, "bad magic");

    qg_observer_save(a, p, &err);
    qg_observer *other = make("{\"name\":\"o\",\"dtype\":\"qint8\",\"observer\":{\"type\":\"minmax\"}}");
    CU_ASSERT_EQUAL(qg_observer_load(other, p, &err), QG_ERR_FORMAT);
    ASSERT_CONTAINS(err.message, "written for observer minmax, dtype quint8", "expected observer minmax, dtype qint8");
    qg_observer *hist = make("{\"name\":\"h\",\"observer\":{\"type\":\"histogram\"}}");
    CU_ASSERT_EQUAL(qg_observer_load(hist, p, &err), QG_ERR_FORMAT);

    CU_ASSERT_EQUAL(qg_observer_load(b, path_of("missing.state"), &err), QG_ERR_IO);
    ASSERT_CONTAINS(err.message, "missing.state", "cannot open");
    CU_ASSERT_EQUAL(qg_observer_save(a, "/nonexistent-dir/x.state", &err), QG_ERR_IO);
    ASSERT_CONTAINS(err.message, "/nonexistent-dir/x.state");
    qg_observer_destroy(a);
    qg_observer_destroy(b);
    qg_observer_destroy(other);
    qg_observer_destroy(hist);
}

static int count_temp_files(void) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

/* A save that dies of a full disk (RLIMIT_FSIZE, which binds root too)
 * keeps the old file byte for byte and leaves no temporary behind. */
static void test_failed_save_keeps_old_file(void) {
    const char *spec = "{\"name\":\"h\",\"observer\":{\"type\":\"histogram\"}}";
    qg_observer *a = make(spec);
    fill(a, 0.0f);
    qg_error err;
    char *p = path_of("keep.state");
    CU_ASSERT_EQUAL_FATAL(qg_observer_save(a, p, &err), QG_OK);
    long size = file_size(p);
    char *before = malloc((size_t)size);
    FILE *f = fopen(p, "rb");
    CU_ASSERT_EQUAL(fread(before, 1, (size_t)size, f), (size_t)size);
    fclose(f);

    fill(a, 10.0f); /* new state to save */
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {1000, 1000}; /* far below the ~8 KiB file */
        setrlimit(RLIMIT_FSIZE, &rl);
        qg_error cerr;
        qg_status st = qg_observer_save(a, p, &cerr);
        _exit(st == QG_ERR_IO && strstr(cerr.message, "previous file is kept") ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CU_ASSERT_EQUAL(file_size(p), size);
    char *after = malloc((size_t)size);
    f = fopen(p, "rb");
    CU_ASSERT_EQUAL(fread(after, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    CU_ASSERT_EQUAL(memcmp(before, after, (size_t)size), 0);
    CU_ASSERT_EQUAL(count_temp_files(), 0);
    qg_observer *b = make(spec);
    CU_ASSERT_EQUAL(qg_observer_load(b, p, &err), QG_OK);
    free(before);
    free(after);
    qg_observer_destroy(a);
    qg_observer_destroy(b);
}

int main(int argc, char **argv) {
    if (!qg_test_tmpdir(argc, argv, dir, sizeof dir))
        return 2;
    static const qg_test tests[] = {
        {"save and load round trip", test_round_trip},
        {"corrupt, truncated and foreign files are refused", test_corrupt_and_foreign},
        {"a failed save leaves the old file intact", test_failed_save_keeps_old_file},
    };
    return QG_RUN("state_files", tests);
}
