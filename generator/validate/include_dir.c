/* Where qgen's public headers are, for parsing generated files: the build
 * tree when running from it, the install prefix when installed (found next
 * to the running executable, so an installed tree may be moved). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "validate_c.h"

static int has_headers(const char *dir) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/qgen/kernel_support.h", dir);
    return access(path, R_OK) == 0;
}

const char *qg_include_dir(void) {
    static char found[PATH_MAX + 16];
    const char *env = getenv("QGEN_INCLUDE_DIR");
    if (env && env[0])
        return env;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0; /* <prefix>/bin */
            snprintf(found, sizeof found, "%s/../include", exe);
            if (has_headers(found))
                return found;
        }
    }
    if (has_headers(QGEN_INSTALL_INCLUDE_DIR))
        return QGEN_INSTALL_INCLUDE_DIR;
    return QGEN_SOURCE_INCLUDE_DIR;
}
