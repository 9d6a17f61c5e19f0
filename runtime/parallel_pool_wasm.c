/* The pool of a WebAssembly build (qgen/parallel.h): wasm32 modules run
 * without threads here, so a pool is its caller alone, running the tasks
 * in order; parallel_pool.c is the threaded one of every other build. */
#if defined(__wasm__)
#include <stdlib.h>

#include "arg_check.h"
#include "qgen/parallel.h"

struct qg_pool {
    size_t threads;
};

qg_status qg_pool_create(size_t threads, qg_pool **out, qg_error *err) {
    QG_NEED(out, err, "a place for the pool");
    *out = calloc(1, sizeof **out);
    if (!*out)
        return qg_error_set(err, QG_ERR_NOMEM, "pool: out of memory");
    (*out)->threads = threads > 1024 ? 0 : 1;
    if ((*out)->threads == 0) {
        free(*out);
        *out = NULL;
        return qg_error_set(err, QG_ERR_INVALID, "threads: %zu; expected 0 (one per CPU) to 1024", threads);
    }
    return QG_OK;
}

void qg_pool_destroy(qg_pool *p) { free(p); }

size_t qg_pool_threads(const qg_pool *p) { return p ? p->threads : 0; }

void qg_pool_parallel_for(void *pool, size_t count, qg_task_fn task, void *task_ctx) {
    QG_NEED_OR_RETURN(pool && task);
    for (size_t i = 0; i < count; i++)
        task(task_ctx, i);
}

qg_parallel qg_pool_parallel(qg_pool *pool) {
    return (qg_parallel){pool ? qg_pool_parallel_for : NULL, pool, qg_pool_threads(pool), 0};
}
#endif
