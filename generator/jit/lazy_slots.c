/* The slot pool of lazily compiled tables (see lazy_slots.h). */
#include "lazy_slots.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "qgen/kernel_support.h"
#include "qgen/parallel.h"

/* fn[op]: 0 before the op's first call, REFERENCE when it runs on the
 * reference, COMPILING while a background compile runs (calls take the
 * reference meanwhile), else the compiled kernel. */
#define REFERENCE ((uintptr_t)1)
#define COMPILING ((uintptr_t)2)

typedef struct slot {
    void *owner; /* NULL: free */
    qg_lazy_compile_fn compile;
    const qg_spec *spec;
    bool background;
    _Atomic uintptr_t fn[QG_K_OP_COUNT];
    /* the background compiles started and not yet joined (first_call_lock) */
    pthread_t thread[QG_K_OP_COUNT];
    bool running[QG_K_OP_COUNT];
} slot;

static slot slots[QG_LAZY_SLOTS];
/* pool_lock guards owners (taken inside a JIT's lock); first_call_lock
 * makes each op compile once and guards the threads (taken outside it: the
 * compile locks the JIT); `compiled` signals a background compile's end */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER, first_call_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t compiled = PTHREAD_COND_INITIALIZER;

static uintptr_t compile_now(slot *s, qg_kernel_op op) {
    void *k = s->compile(s->owner, s->spec, op);
    return k ? (uintptr_t)k : REFERENCE;
}

typedef struct job {
    slot *s;
    qg_kernel_op op;
} job;
static job jobs[QG_LAZY_SLOTS][QG_K_OP_COUNT];

static int in_flight; /* background compiles not yet ended (first_call_lock) */

static void *background_compile(void *arg) {
    job *j = arg;
    const uintptr_t f = compile_now(j->s, j->op);
    pthread_mutex_lock(&first_call_lock);
    atomic_store_explicit(&j->s->fn[j->op], f, memory_order_release);
    in_flight--;
    pthread_cond_broadcast(&compiled);
    pthread_mutex_unlock(&first_call_lock);
    return NULL;
}

/* A fork waits for the compiles in flight and holds off new ones: a child
 * would find LLVM's locks held by a thread it does not have. The child's
 * copies of those threads are gone, so it forgets them. */
static void before_fork(void) {
    pthread_mutex_lock(&first_call_lock);
    while (in_flight > 0)
        pthread_cond_wait(&compiled, &first_call_lock);
}
static void after_fork_parent(void) { pthread_mutex_unlock(&first_call_lock); }
static void after_fork_child(void) {
    for (int i = 0; i < QG_LAZY_SLOTS; i++)
        for (int op = 0; op < QG_K_OP_COUNT; op++)
            slots[i].running[op] = false;
    pthread_mutex_unlock(&first_call_lock);
}
static pthread_once_t fork_hooks = PTHREAD_ONCE_INIT;
static void add_fork_hooks(void) { pthread_atfork(before_fork, after_fork_parent, after_fork_child); }

/* Joins the background compiles of owner's slots; each thread is joined
 * once, outside the lock. */
static void join_compiles(const void *owner) {
    for (int i = 0; i < QG_LAZY_SLOTS; i++)
        for (int op = 0; op < QG_K_OP_COUNT; op++) {
            pthread_mutex_lock(&first_call_lock);
            const bool mine = slots[i].running[op] && slots[i].owner == owner;
            pthread_t t = slots[i].thread[op];
            if (mine)
                slots[i].running[op] = false;
            pthread_mutex_unlock(&first_call_lock);
            if (mine)
                pthread_join(t, NULL);
        }
}

/* Starts op's compile on a thread of its own (first_call_lock held); false
 * when no thread can be had. */
static bool start_compile(slot *s, qg_kernel_op op) {
    pthread_once(&fork_hooks, add_fork_hooks);
    job *j = &jobs[s - slots][op];
    *j = (job){s, op};
    atomic_store_explicit(&s->fn[op], COMPILING, memory_order_relaxed);
    if (pthread_create(&s->thread[op], NULL, background_compile, j) != 0) {
        atomic_store_explicit(&s->fn[op], 0, memory_order_relaxed);
        return false;
    }
    s->running[op] = true;
    in_flight++;
    return true;
}

/* The op's kernel, 0 for the reference. The first call compiles it, or
 * with a background slot starts its compile and takes the reference until
 * it is done; `wait` (qg_lazy_resolve) compiles or waits for the kernel. */
static uintptr_t kernel_of(slot *s, qg_kernel_op op, bool wait) {
    uintptr_t f = atomic_load_explicit(&s->fn[op], memory_order_acquire);
    if (!f || (f == COMPILING && wait)) {
        pthread_mutex_lock(&first_call_lock);
        f = atomic_load_explicit(&s->fn[op], memory_order_acquire);
        if (!f && s->background && !wait && start_compile(s, op)) {
            f = COMPILING;
        } else if (!f) {
            f = compile_now(s, op);
            atomic_store_explicit(&s->fn[op], f, memory_order_release);
        }
        while (wait && f == COMPILING) {
            pthread_cond_wait(&compiled, &first_call_lock);
            f = atomic_load_explicit(&s->fn[op], memory_order_acquire);
        }
        pthread_mutex_unlock(&first_call_lock);
    }
    return f == REFERENCE || f == COMPILING ? 0 : f;
}

#define AS(type, f) ((type)(void (*)(void))(f))

/* Each op: its compiled kernel, or the reference on the spec's float type
 * (one call of qgen/parallel.h's op with no kernel). */
static void lazy_quantize(slot *s, const void *x, void *q, size_t n, const qg_qparams *qp) {
    const uintptr_t f = kernel_of(s, QG_K_QUANTIZE, false);
    if (f)
        AS(qg_quantize_link_fn, f)(x, q, n, qp);
    else
        qg_parallel_quantize(NULL, s->spec, NULL, x, q, n, qp);
}

static void lazy_dequantize(slot *s, const void *q, void *y, size_t n, const qg_qparams *qp) {
    const uintptr_t f = kernel_of(s, QG_K_DEQUANTIZE, false);
    if (f)
        AS(qg_dequantize_link_fn, f)(q, y, n, qp);
    else
        qg_parallel_dequantize(NULL, s->spec, NULL, q, y, n, qp);
}

static void lazy_fake_quant(slot *s, const void *x, void *y, uint8_t *mask, size_t n, const qg_qparams *qp) {
    const uintptr_t f = kernel_of(s, QG_K_FAKE_QUANT, false);
    if (f)
        AS(qg_fake_quant_link_fn, f)(x, y, mask, n, qp);
    else
        qg_parallel_fake_quant(NULL, s->spec, NULL, x, y, mask, n, qp);
}

typedef void (*backward_link_fn)(const void *dy, const uint8_t *mask, void *dx, size_t n);
static void lazy_backward(slot *s, const void *dy, const uint8_t *mask, void *dx, size_t n) {
    const uintptr_t f = kernel_of(s, QG_K_FAKE_QUANT_BACKWARD, false);
    if (f)
        AS(backward_link_fn, f)(dy, mask, dx, n);
    else
        qg_parallel_fake_quant_backward(NULL, s->spec, NULL, dy, mask, dx, n);
}

typedef qg_status (*observe_link_fn)(const void *x, size_t n, size_t inner, qg_observer *obs, qg_error *err);
static qg_status lazy_observe(slot *s, const void *x, size_t n, size_t inner, qg_observer *obs, qg_error *err) {
    const uintptr_t f = kernel_of(s, QG_K_OBSERVE, false);
    if (f)
        return AS(observe_link_fn, f)(x, n, inner, obs, err);
    return qg_parallel_observe(NULL, NULL, obs, x, n, inner, err);
}

typedef void (*requantize_link_fn)(const int32_t *acc, void *q, size_t n, const qg_requant_params *rp);
static void lazy_requantize(slot *s, const int32_t *acc, void *q, size_t n, const qg_requant_params *rp) {
    const uintptr_t f = kernel_of(s, QG_K_REQUANTIZE, false);
    if (f)
        AS(requantize_link_fn, f)(acc, q, n, rp);
    else
        qg_parallel_requantize(NULL, s->spec, NULL, acc, q, n, rp);
}

/* A trampoline serves both views of qg_kernels (float32 and 16-bit codes),
 * as the JIT's own entries do: it carries no -fsanitize=function signature
 * for a caller to check against one view (docs/jit.md). */
#if defined(__clang__)
#define ANY_VIEW __attribute__((no_sanitize("function")))
#else
#define ANY_VIEW
#endif

/* The trampolines of slot k, named by its base-4 digits: the functions a
 * table's entries point at. */
#define TRAMPOLINES(name, k)                                                                                           \
    ANY_VIEW static void q_##name(const void *x, void *q, size_t n, const qg_qparams *qp) {                            \
        lazy_quantize(&slots[k], x, q, n, qp);                                                                         \
    }                                                                                                                  \
    ANY_VIEW static void d_##name(const void *q, void *y, size_t n, const qg_qparams *qp) {                            \
        lazy_dequantize(&slots[k], q, y, n, qp);                                                                       \
    }                                                                                                                  \
    ANY_VIEW static void f_##name(const void *x, void *y, uint8_t *m, size_t n, const qg_qparams *qp) {                \
        lazy_fake_quant(&slots[k], x, y, m, n, qp);                                                                    \
    }                                                                                                                  \
    ANY_VIEW static void b_##name(const void *dy, const uint8_t *m, void *dx, size_t n) {                              \
        lazy_backward(&slots[k], dy, m, dx, n);                                                                        \
    }                                                                                                                  \
    ANY_VIEW static qg_status o_##name(const void *x, size_t n, size_t inner, qg_observer *obs, qg_error *err) {       \
        return lazy_observe(&slots[k], x, n, inner, obs, err);                                                         \
    }                                                                                                                  \
    ANY_VIEW static void r_##name(const int32_t *acc, void *q, size_t n, const qg_requant_params *rp) {                \
        lazy_requantize(&slots[k], acc, q, n, rp);                                                                     \
    }

/* Every slot number as four base-4 digits. */
#define D4(m, a, b, c) m(a, b, c, 0) m(a, b, c, 1) m(a, b, c, 2) m(a, b, c, 3)
#define C4(m, a, b) D4(m, a, b, 0) D4(m, a, b, 1) D4(m, a, b, 2) D4(m, a, b, 3)
#define B4(m, a) C4(m, a, 0) C4(m, a, 1) C4(m, a, 2) C4(m, a, 3)
#define ALL_SLOTS(m) B4(m, 0) B4(m, 1) B4(m, 2) B4(m, 3)

#define DEFINE(a, b, c, d) TRAMPOLINES(a##b##c##d, (a)*64 + (b)*16 + (c)*4 + (d))
ALL_SLOTS(DEFINE)

typedef struct trampolines {
    void (*quantize)(const void *, void *, size_t, const qg_qparams *);
    void (*dequantize)(const void *, void *, size_t, const qg_qparams *);
    void (*fake_quant)(const void *, void *, uint8_t *, size_t, const qg_qparams *);
    void (*backward)(const void *, const uint8_t *, void *, size_t);
    qg_status (*observe)(const void *, size_t, size_t, qg_observer *, qg_error *);
    void (*requantize)(const int32_t *, void *, size_t, const qg_requant_params *);
} trampolines;

#define ENTRY(a, b, c, d)                                                                                              \
    {q_##a##b##c##d, d_##a##b##c##d, f_##a##b##c##d, b_##a##b##c##d, o_##a##b##c##d, r_##a##b##c##d},
static const trampolines of_slot[QG_LAZY_SLOTS] = {ALL_SLOTS(ENTRY)};
_Static_assert(sizeof of_slot / sizeof of_slot[0] == QG_LAZY_SLOTS, "one set of trampolines per slot");

/* Function pointers into the table's entries: the kernels' ABI with the
 * float tensors as the entries type them (float or 16-bit codes). */
#define PUT(field, f) memcpy(&k->field, &(void (*)(void)){(void (*)(void))(f)}, sizeof k->field)

int qg_lazy_bind(void *owner, qg_lazy_compile_fn compile, const qg_spec *spec, unsigned ops, bool background,
                 qg_kernels *k) {
    pthread_mutex_lock(&pool_lock);
    int found = -1;
    for (int i = 0; i < QG_LAZY_SLOTS && found < 0; i++)
        if (!slots[i].owner)
            found = i;
    if (found >= 0) {
        slot *s = &slots[found];
        s->owner = owner;
        s->compile = compile;
        s->spec = spec;
        s->background = background;
        for (int op = 0; op < QG_K_OP_COUNT; op++)
            atomic_store_explicit(&s->fn[op], 0, memory_order_relaxed);
    }
    pthread_mutex_unlock(&pool_lock);
    if (found < 0)
        return -1;
    const trampolines *t = &of_slot[found];
    if (ops & QG_JIT_QUANTIZE)
        PUT(quantize, t->quantize);
    if (ops & QG_JIT_DEQUANTIZE)
        PUT(dequantize, t->dequantize);
    if (ops & QG_JIT_FAKE_QUANT)
        PUT(fake_quant, t->fake_quant);
    if (ops & QG_JIT_FAKE_QUANT_BACKWARD)
        PUT(fake_quant_backward, t->backward);
    if (ops & QG_JIT_OBSERVE)
        PUT(observe, t->observe);
    if (ops & QG_JIT_REQUANTIZE)
        PUT(requantize, t->requantize);
    return found;
}

unsigned qg_lazy_resolve(int slot_index, unsigned ops) {
    unsigned reference = 0;
    for (int op = 0; op < QG_K_OP_COUNT; op++)
        if ((ops & (1u << op)) && !kernel_of(&slots[slot_index], (qg_kernel_op)op, true))
            reference |= 1u << op;
    return reference;
}

void qg_lazy_settle(void *owner) {
    pthread_mutex_lock(&first_call_lock);
    for (int i = 0; i < QG_LAZY_SLOTS; i++)
        if (slots[i].owner == owner)
            slots[i].background = false;
    pthread_mutex_unlock(&first_call_lock);
    join_compiles(owner);
}

void qg_lazy_release(void *owner) {
    join_compiles(owner);
    pthread_mutex_lock(&pool_lock);
    for (int i = 0; i < QG_LAZY_SLOTS; i++)
        if (slots[i].owner == owner)
            slots[i].owner = NULL;
    pthread_mutex_unlock(&pool_lock);
}
