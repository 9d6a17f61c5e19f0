/* Where qgen's public headers are, for parsing generated files: the build
 * tree when running from it, the install prefix when installed (found next
 * to the running executable, so an installed tree may be moved). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/fs_util.h"
#include "validate_c.h"

const char *qg_include_dir(void) {
    static char found[PATH_MAX + 16];
    const char *env = getenv("QGEN_INCLUDE_DIR");
    if (env && env[0])
        return env;
    if (qg_installed_path("include", "qgen/kernel_support.h", found, sizeof found))
        return found;
    if (access(QGEN_INSTALL_INCLUDE_DIR "/qgen/kernel_support.h", R_OK) == 0)
        return QGEN_INSTALL_INCLUDE_DIR;
    return QGEN_SOURCE_INCLUDE_DIR;
}
