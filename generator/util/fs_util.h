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

/* An exclusive flock on `path` (created, mode 0600, and left in place);
 * the descriptor to close() to release it, or -1 with errno set. */
int qg_lock_file(const char *path);

/* Removes the files of `dir` named `prefix` plus six characters: what a
 * writer killed between mkstemp(prefix "XXXXXX") and its rename leaves.
 * Only while holding the lock every such writer takes. */
void qg_remove_stale_temps(const char *dir, const char *prefix);

#endif
