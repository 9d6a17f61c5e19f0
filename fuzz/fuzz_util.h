/* Shared by the fuzz targets: a private scratch directory and a helper that
 * writes the input to a file there, for the parsers that read paths. */
#ifndef QGEN_FUZZ_UTIL_H
#define QGEN_FUZZ_UTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir_path[256];

/* At exit: the scratch directory and what the target left in it. */
static void fuzz_dir_remove(void) {
    DIR *d = opendir(fuzz_dir_path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", fuzz_dir_path, e->d_name);
        if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0))
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(fuzz_dir_path);
}

/* The scratch directory of this process, made on first use. */
static inline const char *fuzz_dir(void) {
    if (!fuzz_dir_path[0]) {
        snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/qgen-fuzz-XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(fuzz_dir_path))
            abort();
        atexit(fuzz_dir_remove);
    }
    return fuzz_dir_path;
}

/* dir/name holding data[0..n); returns its path (a static buffer). */
static inline const char *fuzz_file(const char *name, const void *data, size_t n) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n)
        abort();
    fclose(f);
    return path;
}

/* A failed property: the fuzzer reports it as a crash, with the input. */
#define FUZZ_ASSERT(cond)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #cond);                                \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

#endif
