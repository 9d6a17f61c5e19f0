/* File-system helpers the generator's parts share. */
#ifndef QGEN_FS_UTIL_H
#define QGEN_FS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* mkdir -p with `mode` for each level it creates; 0 or -1 (errno set). */
int qg_mkdir_p(const char *path, mode_t mode);

/* <directory of the running executable>/../<rel>, when that directory
 * holds the file `probe`: how an installed qgen finds its own files. */
bool qg_installed_path(const char *rel, const char *probe, char *out, size_t cap);

#endif
