/* The built-in thread pool behind qg_pool_parallel_for (qgen/parallel.h):
 * workers sleep on a condition variable until a job is posted, then claim
 * task indices one at a time under the lock, as the caller does; the job
 * ends when every task has finished. One job at a time. A WebAssembly
 * build has no threads: its pool, at the end, runs the tasks in order. */
#if !defined(__wasm__)
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <unistd.h>
#endif
#include <stdbool.h>
#include <stdlib.h>

#include "qgen/parallel.h"
#include "arg_check.h"

/* The checks both pools make of a request; *out NULL until one is made. */
static qg_status pool_request(size_t threads, qg_pool **out, qg_error *err) {
    *out = NULL;
    if (threads > 1024)
        return qg_error_set(err, QG_ERR_INVALID, "threads: %zu; expected 0 (one per CPU) to 1024", threads);
    return QG_OK;
}

#if !defined(__wasm__)
struct qg_pool {
    pthread_mutex_t submit; /* held by the one caller whose job runs */
    pthread_mutex_t lock;   /* guards everything below */
    pthread_cond_t posted, finished;
    unsigned long job; /* bumped for every job posted */
    qg_task_fn task;
    void *task_ctx;
    size_t count, next;
    unsigned long done; /* tasks finished; polled without the lock */
    bool stopping;
    size_t threads, workers;
    pthread_t *worker;
};

/* Polls this many times for the next job (or the last task's end) before
 * sleeping: back-to-back calls, as a training step makes, then skip the
 * wake-up through the kernel (tens of microseconds here). */
enum { SPIN_POLLS = 20000 };

static bool spin_until_changed(const unsigned long *v, unsigned long old) {
    for (int k = 0; k < SPIN_POLLS; k++)
        if (__atomic_load_n(v, __ATOMIC_ACQUIRE) != old)
            return true;
    return false;
}

/* Runs the current job's unclaimed tasks; called and returns with the lock. */
static void run_tasks(qg_pool *p) {
    while (p->next < p->count) {
        const size_t i = p->next++;
        qg_task_fn task = p->task;
        void *ctx = p->task_ctx;
        pthread_mutex_unlock(&p->lock);
        task(ctx, i);
        pthread_mutex_lock(&p->lock);
        __atomic_store_n(&p->done, p->done + 1, __ATOMIC_RELEASE);
        if (p->done == p->count)
            pthread_cond_signal(&p->finished);
    }
}

static void *worker_main(void *arg) {
    qg_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    unsigned long seen = p->job;
    for (;;) {
        if (!p->stopping && p->job == seen) {
            pthread_mutex_unlock(&p->lock);
            spin_until_changed(&p->job, seen);
            pthread_mutex_lock(&p->lock);
        }
        while (!p->stopping && p->job == seen)
            pthread_cond_wait(&p->posted, &p->lock);
        if (p->stopping)
            break;
        seen = p->job;
        run_tasks(p);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static size_t online_cpus(void) {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 1024 ? 1024 : n > 0 ? (size_t)n : 1; /* the most a pool takes */
}

qg_status qg_pool_create(size_t threads, qg_pool **out, qg_error *err) {
    QG_NEED(out, err, "a place for the pool"); /* names qg_pool_create */
    qg_status st = pool_request(threads, out, err);
    if (st)
        return st;
    if (threads == 0)
        threads = online_cpus();
    qg_pool *p = calloc(1, sizeof *p);
    pthread_t *worker = threads > 1 ? calloc(threads - 1, sizeof *worker) : NULL;
    if (!p || (threads > 1 && !worker)) {
        free(p);
        free(worker);
        return qg_error_set(err, QG_ERR_NOMEM, "pool: out of memory");
    }
    pthread_mutex_init(&p->submit, NULL);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->posted, NULL);
    pthread_cond_init(&p->finished, NULL);
    p->worker = worker;
    /* a thread the system will not give is one worker fewer, not an error */
    for (size_t k = 0; k + 1 < threads; k++) {
        if (pthread_create(&p->worker[p->workers], NULL, worker_main, p) != 0)
            break;
        p->workers++;
    }
    p->threads = p->workers + 1;
    *out = p;
    return QG_OK;
}

void qg_pool_destroy(qg_pool *p) {
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->posted);
    pthread_mutex_unlock(&p->lock);
    for (size_t k = 0; k < p->workers; k++)
        pthread_join(p->worker[k], NULL);
    pthread_cond_destroy(&p->finished);
    pthread_cond_destroy(&p->posted);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->submit);
    free(p->worker);
    free(p);
}

void qg_pool_parallel_for(void *pool, size_t count, qg_task_fn task, void *task_ctx) {
    QG_NEED_OR_RETURN(pool && task);
    qg_pool *p = pool;
    if (count == 0)
        return;
    pthread_mutex_lock(&p->submit);
    pthread_mutex_lock(&p->lock);
    p->task = task;
    p->task_ctx = task_ctx;
    p->count = count;
    p->next = p->done = 0;
    __atomic_store_n(&p->job, p->job + 1, __ATOMIC_RELEASE);
    if (p->workers)
        pthread_cond_broadcast(&p->posted);
    run_tasks(p);
    if (p->done < p->count) {
        const unsigned long done = p->done;
        pthread_mutex_unlock(&p->lock);
        spin_until_changed(&p->done, done);
        pthread_mutex_lock(&p->lock);
    }
    while (p->done < p->count)
        pthread_cond_wait(&p->finished, &p->lock);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&p->submit);
}

#else
/* wasm32 modules run without threads here: a pool is its caller alone,
 * running the tasks in order. */
struct qg_pool {
    size_t threads;
};

qg_status qg_pool_create(size_t threads, qg_pool **out, qg_error *err) {
    QG_NEED(out, err, "a place for the pool"); /* names qg_pool_create */
    qg_status st = pool_request(threads, out, err);
    if (st)
        return st;
    if (!(*out = calloc(1, sizeof **out)))
        return qg_error_set(err, QG_ERR_NOMEM, "pool: out of memory");
    (*out)->threads = 1;
    return QG_OK;
}

void qg_pool_destroy(qg_pool *p) { free(p); }

void qg_pool_parallel_for(void *pool, size_t count, qg_task_fn task, void *task_ctx) {
    QG_NEED_OR_RETURN(pool && task);
    for (size_t i = 0; i < count; i++)
        task(task_ctx, i);
}
#endif

size_t qg_pool_threads(const qg_pool *p) { return p ? p->threads : 0; }

qg_parallel qg_pool_parallel(qg_pool *pool) {
    return (qg_parallel){pool ? qg_pool_parallel_for : NULL, pool, qg_pool_threads(pool), 0};
}
