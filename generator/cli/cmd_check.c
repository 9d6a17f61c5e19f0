/* qgen check DIR: parses generated files with libclang, each ISA file for
 * its own target, as `qgen generate` does before writing. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../validate/validate_c.h"
#include "cli.h"

enum { MAX_CHECK_FILES = 16 };

int qg_cmd_check(int argc, char **argv) {
    if (argc != 2 || strcmp(argv[1], "--help") == 0) {
        fputs("usage: qgen check DIR\n\nParses every generated .c file in DIR with libclang for its target.\n",
              argc == 2 ? stdout : stderr);
        return argc == 2 ? QG_EXIT_OK : QG_EXIT_BAD_INPUT;
    }
    if (!qg_validate_available())
        return qg_cli_failf("check: this qgen was built without libclang; nothing can be checked");
    const char *dir = argv[1];
    DIR *d = opendir(dir);
    if (!d)
        return qg_cli_failf("check: %s: cannot open the directory", dir);
    qg_source src[MAX_CHECK_FILES];
    char *paths[MAX_CHECK_FILES], *texts[MAX_CHECK_FILES];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_CHECK_FILES) {
        size_t len = strlen(e->d_name);
        if (len < 3 || (strcmp(e->d_name + len - 2, ".c") != 0 && strcmp(e->d_name + len - 2, ".h") != 0))
            continue;
        char rel[4096];
        snprintf(rel, sizeof rel, "%s/%s", dir, e->d_name);
        paths[n] = realpath(rel, NULL); /* absolute: the validator's key */
        if (!paths[n])
            continue;
        FILE *f = fopen(paths[n], "rb");
        if (!f) {
            free(paths[n]);
            continue;
        }
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, 0, SEEK_SET);
        texts[n] = malloc((size_t)size + 1);
        size_t got = fread(texts[n], 1, (size_t)size, f);
        texts[n][got] = 0;
        fclose(f);
        src[n] = (qg_source){paths[n], texts[n], got};
        n++;
    }
    closedir(d);
    int rc = QG_EXIT_OK;
    qg_error err;
    if (n == 0)
        rc = qg_cli_failf("check: %s: no generated .c or .h files", dir);
    else if (qg_validate_sources(src, n, qg_include_dir(), &err))
        rc = qg_cli_fail(&err);
    else
        printf("%s: %zu files parse cleanly for their targets\n", dir, n);
    for (size_t i = 0; i < n; i++) {
        free(paths[i]);
        free(texts[i]);
    }
    return rc;
}
