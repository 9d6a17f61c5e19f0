/* A JIT pack as one object per op, compiled on several threads at once,
 * and the one blob (a cache entry) that holds them. Each op's symbols take
 * the prefix qg_pack_op_prefix gives, so the objects link side by side. */
#ifndef QGEN_PACK_OBJECTS_H
#define QGEN_PACK_OBJECTS_H

#include "../emit_llvm/emit_llvm.h"
#include "qgen/spec.h"

/* The symbol prefix of op `op` in the pack whose prefix is `prefix`. */
void qg_pack_op_prefix(const char *prefix, int op, char *out, size_t cap);

/* Compiles each op of `ops` into its own object, up to one thread per
 * online CPU (or QGEN_JIT_THREADS), and puts them in one blob (*out, freed
 * with qg_llvm_blob_free), the same bytes whatever the thread count. The
 * first error any op met is reported. */
qg_status qg_pack_compile(const qg_spec *sp, const qg_llvm_target *t, const char *prefix, unsigned ops,
                          qg_llvm_blob *out, qg_error *err);

/* The next object of a blob: from *offset, its op and bytes; false at
 * the end. A blob whose layout is broken reports QG_ERR_FORMAT. */
typedef struct qg_pack_object {
    int op;
    const char *data;
    size_t size;
} qg_pack_object;
qg_status qg_pack_next(const qg_llvm_blob *blob, size_t *offset, qg_pack_object *obj, bool *more, qg_error *err);

#endif
