/* A JIT pack compiled one op per object on worker threads (LLVM's
 * compile of one module runs on one core; a pack's ops are independent
 * modules, each with its own context and target machine, see
 * llvm_compile.c), and the blob that carries the objects through the
 * disk cache: for each op, 4 bytes of op number and 8 of size, then the
 * object. */
#define _POSIX_C_SOURCE 200809L
#include "pack_objects.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../plan/kernel_plan.h"

void qg_pack_op_prefix(const char *prefix, int op, char *out, size_t cap) { snprintf(out, cap, "%so%d", prefix, op); }

/* QGEN_JIT_THREADS (a positive number) caps the threads, for hosts whose
 * cores are busy; else one per online CPU. */
static long compile_threads(void) {
    const char *env = getenv("QGEN_JIT_THREADS");
    char *end;
    const long n = env ? strtol(env, &end, 10) : 0;
    return env && *env && !*end && n > 0 ? n : sysconf(_SC_NPROCESSORS_ONLN);
}

typedef struct unit {
    int op;
    qg_llvm_blob obj;
    qg_status st;
    qg_error err;
} unit;

typedef struct work {
    const qg_spec *sp;
    const qg_llvm_target *t;
    const char *prefix;
    unit *units;
    int count;
    atomic_int next;
} work;

static void *worker(void *arg) {
    work *w = arg;
    for (int i; (i = atomic_fetch_add(&w->next, 1)) < w->count;) {
        unit *u = &w->units[i];
        char prefix[64];
        qg_pack_op_prefix(w->prefix, u->op, prefix, sizeof prefix);
        u->st = qg_llvm_compile(w->sp, w->t, prefix, 1u << u->op, QG_LLVM_JIT_OBJ, &u->obj, &u->err);
    }
    return NULL;
}

/* The units' objects, in op order, as one blob. */
static qg_status join(const unit *units, int count, qg_llvm_blob *out, qg_error *err) {
    size_t size = 0;
    for (int i = 0; i < count; i++)
        size += 12 + units[i].obj.size;
    out->data = malloc(size ? size : 1);
    if (!out->data)
        return qg_error_set(err, QG_ERR_NOMEM, "jit: out of memory");
    out->size = size;
    char *p = out->data;
    for (int i = 0; i < count; i++) {
        const uint32_t op = (uint32_t)units[i].op;
        const uint64_t n = units[i].obj.size;
        memcpy(p, &op, 4);
        memcpy(p + 4, &n, 8);
        memcpy(p + 12, units[i].obj.data, n);
        p += 12 + n;
    }
    return QG_OK;
}

qg_status qg_pack_compile(const qg_spec *sp, const qg_llvm_target *t, const char *prefix, unsigned ops,
                          qg_llvm_blob *out, qg_error *err) {
    memset(out, 0, sizeof *out);
    unit units[QG_K_OP_COUNT];
    int count = 0;
    for (int op = 0; op < QG_K_OP_COUNT; op++)
        if (ops & (1u << op))
            units[count++] = (unit){.op = op, .st = QG_OK};
    work w = {.sp = sp, .t = t, .prefix = prefix, .units = units, .count = count};
    atomic_init(&w.next, 0);
    const long cpus = compile_threads();
    int threads = cpus > 1 ? (int)(cpus < count ? cpus : count) : 1;
    pthread_t tid[QG_K_OP_COUNT];
    int started = 0;
    for (; started < threads - 1; started++) /* this thread is the last worker */
        if (pthread_create(&tid[started], NULL, worker, &w) != 0)
            break; /* fewer threads: the work is still all done */
    worker(&w);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    qg_status st = QG_OK;
    for (int i = 0; i < count && !st; i++)
        if ((st = units[i].st) && err)
            *err = units[i].err;
    if (!st)
        st = join(units, count, out, err);
    for (int i = 0; i < count; i++)
        qg_llvm_blob_free(&units[i].obj);
    return st;
}

qg_status qg_pack_next(const qg_llvm_blob *blob, size_t *offset, qg_pack_object *obj, bool *more, qg_error *err) {
    *more = false;
    if (*offset == blob->size)
        return QG_OK;
    uint32_t op;
    uint64_t n;
    if (blob->size - *offset < 12)
        return qg_error_set(err, QG_ERR_FORMAT, "jit: a pack object's header is cut short");
    memcpy(&op, blob->data + *offset, 4);
    memcpy(&n, blob->data + *offset + 4, 8);
    if (op >= QG_K_OP_COUNT || n > blob->size - *offset - 12)
        return qg_error_set(err, QG_ERR_FORMAT, "jit: a pack object names op %u and %llu bytes, past the entry",
                            (unsigned)op, (unsigned long long)n);
    obj->op = (int)op;
    obj->data = blob->data + *offset + 12;
    obj->size = (size_t)n;
    *offset += 12 + (size_t)n;
    *more = true;
    return QG_OK;
}
