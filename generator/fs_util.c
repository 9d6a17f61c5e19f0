#define _POSIX_C_SOURCE 200809L
#include "fs_util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int qg_mkdir_p(const char *path, mode_t mode) {
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, mode) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, mode) != 0 && errno != EEXIST ? -1 : 0;
}

bool qg_installed_path(const char *rel, const char *probe, char *out, size_t cap) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return false;
    *slash = 0; /* <prefix>/bin */
    char probe_path[PATH_MAX + 256];
    snprintf(out, cap, "%s/../%s", exe, rel);
    snprintf(probe_path, sizeof probe_path, "%s/%s", out, probe);
    return access(probe_path, R_OK) == 0;
}
