/* The in-process JIT: a spec's kernels compiled by the LLVM backend into
 * an object (or read from the disk cache), linked into the process by ORC's
 * LLJIT, and handed out as a table of function pointers.
 *
 * Symbols of a pack are named after its cache key and op
 * (qgj<key>o<op>_<op>__<isa>: each op is an object of its own, compiled in
 * parallel, pack_objects.c), so packs of specs sharing a name never
 * collide, and the cached objects are valid in any process. The runtime
 * functions the kernels call are defined as absolute symbols (the host
 * links libqgen_rt statically, so they are not in its dynamic symbol
 * table); libc and libm come from the process. */
#define _POSIX_C_SOURCE 200809L
#include "qgen/blocks.h"
#include "qgen/jit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>

#include "../emit_llvm/emit_llvm.h"
#include "qgen_source_hash.h"
#include "../targets/target_table.h"
#include "../plan/kernel_ops.h"
#include "../plan/kernel_plan.h"
#include "../spec/spec_internal.h"
#include "object_cache.h"
#include "pack_objects.h"
#include "lazy_slots.h"
#include "qgen/kernel_support.h"
#include "arg_check.h"

_Static_assert(QG_JIT_QUANTIZE == 1u << QG_K_QUANTIZE && QG_JIT_DEQUANTIZE == 1u << QG_K_DEQUANTIZE &&
                   QG_JIT_FAKE_QUANT == 1u << QG_K_FAKE_QUANT &&
                   QG_JIT_FAKE_QUANT_BACKWARD == 1u << QG_K_FAKE_QUANT_BACKWARD &&
                   QG_JIT_OBSERVE == 1u << QG_K_OBSERVE && QG_JIT_REQUANTIZE == 1u << QG_K_REQUANTIZE,
               "the JIT's op flags follow qg_kernel_op");

typedef struct pack {
    struct pack *next;
    char key[QG_CACHE_KEY_HEX];
    int slot; /* lazy kernels: their slot (lazy_slots.h); -1: compiled ones */
    unsigned ops;
    qg_spec spec;
    qg_kernels k;
} pack;

struct qg_jit {
    pthread_mutex_t lock;
    LLVMOrcLLJITRef lljit;
    LLVMOrcJITDylibRef jd;
    qg_isa isa;
    bool eager, background;
    char cache_dir[4096]; /* "" = no disk cache */
    pack *packs;
    qg_jit_stats stats;
};

static qg_status llvm_failure(qg_error *err, const char *what, LLVMErrorRef e) {
    char *msg = LLVMGetErrorMessage(e);
    qg_status st = qg_error_set(err, QG_ERR_BACKEND, "jit: %s: %s", what, msg);
    LLVMDisposeErrorMessage(msg);
    return st;
}

/* The host's ISA of highest rank (targets/<isa>.json) that this CPU has. */
static qg_isa best_isa(void) {
    qg_isa best = QG_ISA_SCALAR;
    for (qg_isa isa = QG_ISA_SCALAR + 1; isa < QG_ISA_COUNT; isa++) {
        const qg_llvm_target *t = qg_llvm_target_of(isa, NULL);
        if (t && strcmp(t->arch, qg_llvm_host_arch()) == 0 && qg_cpu_has(isa) &&
            qg_target_of(isa)->rank > qg_target_of(best)->rank)
            best = isa;
    }
    return best;
}

static qg_status check_isa(int isa, qg_error *err) {
    if (isa < 0 || isa >= QG_ISA_COUNT)
        return qg_error_set(err, QG_ERR_INVALID, "jit: isa %d is not an ISA; expected QG_JIT_BEST_ISA or a qg_isa",
                            isa);
    const qg_llvm_target *t = qg_llvm_target_of((qg_isa)isa, NULL);
    if (!t || strcmp(t->arch, qg_llvm_host_arch()) != 0)
        return qg_error_set(err, QG_ERR_INVALID, "jit: %s kernels run on %s; this machine is %s",
                            qg_isa_name((qg_isa)isa), t ? t->arch : "another architecture", qg_llvm_host_arch());
    if (!qg_cpu_has((qg_isa)isa))
        return qg_error_set(err, QG_ERR_INVALID, "jit: this CPU does not run %s; expected an ISA it reports, e.g. %s",
                            qg_isa_name((qg_isa)isa), qg_isa_name(best_isa()));
    return QG_OK;
}

/* The runtime functions generated kernels call: each op's from the op
 * table, and the helpers every op's loops share (memcpy: the buffered
 * tails of ISAs without masked accesses copy through it). */
static qg_status define_runtime(qg_jit *j, qg_error *err) {
    static const struct {
        const char *name;
        void (*fn)(void);
    } shared[] = {
        {"memcpy", (void (*)(void))memcpy},
        {"qg_chan_table_new", (void (*)(void))qg_chan_table_new},
        {"qg_chan_table_free", (void (*)(void))qg_chan_table_free},
        {"qg_mask_pack_bits", (void (*)(void))qg_mask_pack_bits},
        {"qg_mask_unpack_bits", (void (*)(void))qg_mask_unpack_bits},
        {"qg_block_quantize_ref", (void (*)(void))qg_block_quantize_ref},     /* a block with NaN or inf */
        {"qg_block_dequantize_ref", (void (*)(void))qg_block_dequantize_ref}, /* ... or NaN in d and m */
        {"qg_block_fake_quant_ref", (void (*)(void))qg_block_fake_quant_ref}, /* fake_quant of such a block */
        {"qg_block_mxfp4_scale", (void (*)(void))qg_block_mxfp4_scale},       /* mxfp4's exponent, by log2f */
        {"qg_block_kquant_search", (void (*)(void))qg_block_kquant_search},   /* the K-quants' scale search */
    };
    enum {
        SHARED = sizeof shared / sizeof shared[0],
        PER_OP = sizeof((qg_op_info *)0)->callees / sizeof((qg_op_info *)0)->callees[0],
        MAX = SHARED + PER_OP * QG_K_OP_COUNT
    };
    LLVMOrcCSymbolMapPair pairs[MAX];
    size_t N = 0;
    for (size_t i = 0; i < MAX; i++) {
        const qg_op_info *o = i < SHARED ? NULL : qg_op_info_of((qg_kernel_op)((i - SHARED) / PER_OP));
        const char *name = o ? o->callees[(i - SHARED) % PER_OP].name : shared[i].name;
        void (*fn)(void) = o ? o->callees[(i - SHARED) % PER_OP].fn : shared[i].fn;
        if (!name)
            continue;
        pairs[N].Name = LLVMOrcLLJITMangleAndIntern(j->lljit, name);
        pairs[N].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)fn;
        pairs[N].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
        pairs[N].Sym.Flags.TargetFlags = 0;
        N++;
    }
    LLVMErrorRef e = LLVMOrcJITDylibDefine(j->jd, LLVMOrcAbsoluteSymbols(pairs, N));
    return e ? llvm_failure(err, "defining the runtime's symbols", e) : QG_OK;
}

qg_status qg_jit_create(const qg_jit_options *opt, qg_jit **out, qg_error *err) {
    QG_NEED(out, err, "a place for the JIT");
    *out = NULL;
    const qg_jit_options defaults = {QG_JIT_BEST_ISA, NULL, false, false, false};
    if (!opt)
        opt = &defaults;
    qg_isa isa = best_isa();
    qg_status st;
    if (opt->isa != QG_JIT_BEST_ISA && (st = check_isa(opt->isa, err)))
        return st;
    if (opt->isa != QG_JIT_BEST_ISA)
        isa = (qg_isa)opt->isa;
    qg_jit *j = calloc(1, sizeof *j);
    if (!j)
        return qg_error_set(err, QG_ERR_NOMEM, "jit: out of memory");
    j->isa = isa;
    j->eager = opt->eager;
    j->background = opt->background;
    if (!opt->no_disk_cache) {
        /* a cache that cannot be set up is no reason to fail: the JIT runs
         * without it, and the stats say so */
        if (opt->cache_dir)
            snprintf(j->cache_dir, sizeof j->cache_dir, "%s", opt->cache_dir);
        else if (qg_cache_default_dir(j->cache_dir, sizeof j->cache_dir, NULL) != QG_OK)
            j->cache_dir[0] = 0, j->stats.cache_errors++;
        if (j->cache_dir[0] && qg_cache_prepare_dir(j->cache_dir, NULL) != QG_OK)
            j->cache_dir[0] = 0, j->stats.cache_errors++;
    }
    qg_llvm_init();
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->lljit, NULL);
    if (e) {
        st = llvm_failure(err, "creating the JIT", e);
        j->lljit = NULL;
        goto fail;
    }
    j->jd = LLVMOrcLLJITGetMainJITDylib(j->lljit);
    LLVMOrcDefinitionGeneratorRef gen;
    e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(j->lljit), NULL, NULL);
    if (e) {
        st = llvm_failure(err, "looking up the process's symbols", e);
        goto fail;
    }
    LLVMOrcJITDylibAddGenerator(j->jd, gen);
    if ((st = define_runtime(j, err)))
        goto fail;
    pthread_mutex_init(&j->lock, NULL);
    *out = j;
    return QG_OK;
fail:
    if (j->lljit)
        LLVMConsumeError(LLVMOrcDisposeLLJIT(j->lljit));
    free(j);
    return st;
}

qg_isa qg_jit_isa(const qg_jit *jit) { return jit ? jit->isa : QG_ISA_SCALAR; }

const char *qg_jit_cache_dir(const qg_jit *jit) { return jit ? jit->cache_dir : NULL; }

void qg_jit_get_stats(qg_jit *jit, qg_jit_stats *stats) {
    QG_NEED_OR_RETURN(jit && stats);
    pthread_mutex_lock(&jit->lock);
    *stats = jit->stats;
    pthread_mutex_unlock(&jit->lock);
}

void qg_jit_settle(qg_jit *jit) {
    if (jit)
        qg_lazy_settle(jit);
}

void qg_jit_destroy(qg_jit *jit) {
    if (!jit)
        return;
    qg_lazy_release(jit);
    LLVMConsumeError(LLVMOrcDisposeLLJIT(jit->lljit));
    for (pack *p = jit->packs, *next; p; p = next) {
        next = p->next;
        free(p);
    }
    pthread_mutex_destroy(&jit->lock);
    free(jit);
}

/* Everything the object depends on: spec, target, ops, versions and the
 * generator's sources (a build of other sources never reads this one's
 * objects, whose runtime symbols and code may differ). */
static qg_status key_of(const qg_spec *sp, const qg_llvm_target *t, unsigned ops, char key[QG_CACHE_KEY_HEX],
                        qg_error *err) {
    char *json = qg_spec_to_json(sp);
    if (!json)
        return qg_error_set(err, QG_ERR_NOMEM, "jit: out of memory");
    size_t cap = strlen(json) + 1024;
    char *material = malloc(cap);
    if (!material) {
        free(json);
        return qg_error_set(err, QG_ERR_NOMEM, "jit: out of memory");
    }
    int n =
        snprintf(material, cap, "qgen %s %s\nllvm %s\n%s\n%s\n%s\nisa %s\nops %u\n%s", QGEN_VERSION, QGEN_SOURCE_HASH,
                 qg_llvm_version(), t->triple, t->cpu, t->features, qg_isa_name(t->isa), ops, json);
    qg_cache_key(material, (size_t)n, key);
    free(material);
    free(json);
    return QG_OK;
}

/* Compiled, or from the disk cache: the objects of one pack. */
static qg_status object_of(qg_jit *j, const qg_spec *sp, const qg_llvm_target *t, const char *key, const char *prefix,
                           unsigned ops, qg_llvm_blob *obj, qg_error *err) {
    if (j->cache_dir[0]) {
        qg_cache_result r = qg_cache_load(j->cache_dir, key, &obj->data, &obj->size);
        if (r == QG_CACHE_HIT) {
            j->stats.disk_hits++;
            return QG_OK;
        }
        if (r == QG_CACHE_CORRUPT)
            j->stats.corrupt_entries++;
    }
    qg_status st = qg_pack_compile(sp, t, prefix, ops, obj, err);
    if (st)
        return st;
    j->stats.compiled++;
    if (j->cache_dir[0] && qg_cache_store(j->cache_dir, key, obj->data, obj->size, NULL) != QG_OK)
        j->stats.cache_errors++;
    return QG_OK;
}

static qg_status lookup(qg_jit *j, const char *prefix, const char *op, qg_isa isa, void **fn, qg_error *err) {
    char name[128];
    snprintf(name, sizeof name, "%s_%s__%s", prefix, op, qg_isa_name(isa));
    LLVMOrcExecutorAddress addr = 0;
    LLVMErrorRef e = LLVMOrcLLJITLookup(j->lljit, &addr, name);
    if (e)
        return llvm_failure(err, name, e);
    *fn = (void *)(uintptr_t)addr;
    return QG_OK;
}

/* Links one op's object: its spec symbol, then the object. */
static qg_status link_object(qg_jit *j, pack *p, const char *prefix, const qg_pack_object *o, qg_error *err) {
    char spec_sym[80];
    snprintf(spec_sym, sizeof spec_sym, "%s_spec", prefix);
    LLVMOrcCSymbolMapPair pair = {
        LLVMOrcLLJITMangleAndIntern(j->lljit, spec_sym),
        {(LLVMOrcExecutorAddress)(uintptr_t)&p->spec, {LLVMJITSymbolGenericFlagsExported, 0}}};
    LLVMErrorRef e = LLVMOrcJITDylibDefine(j->jd, LLVMOrcAbsoluteSymbols(&pair, 1));
    if (e)
        return llvm_failure(err, "defining the spec symbol", e);
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(o->data, o->size, prefix);
    if ((e = LLVMOrcLLJITAddObjectFile(j->lljit, j->jd, buf)))
        return llvm_failure(err, "adding the object", e);
    return QG_OK;
}

/* Links the pack's objects and fills its table. */
static qg_status link_pack(qg_jit *j, pack *p, const char *prefix, qg_llvm_blob *obj, qg_error *err) {
    void *fns[QG_K_OP_COUNT] = {0};
    unsigned linked = 0;
    size_t offset = 0;
    for (bool more = true;;) {
        qg_pack_object o;
        qg_status st = qg_pack_next(obj, &offset, &o, &more, err);
        if (st)
            return st;
        if (!more)
            break;
        char op_prefix[64];
        qg_pack_op_prefix(prefix, o.op, op_prefix, sizeof op_prefix);
        if (!(p->ops & (1u << o.op)) || (linked & (1u << o.op)))
            return qg_error_set(err, QG_ERR_FORMAT, "jit: the pack's entry holds op %d, which it does not ask for",
                                o.op);
        if ((st = link_object(j, p, op_prefix, &o, err)) ||
            (st = lookup(j, op_prefix, qg_kernel_op_name((qg_kernel_op)o.op), p->k.isa, &fns[o.op], err)))
            return st;
        linked |= 1u << o.op;
    }
    if (linked != p->ops)
        return qg_error_set(err, QG_ERR_FORMAT, "jit: the pack's entry holds ops 0x%x of 0x%x", linked, p->ops);
    /* object pointers to function pointers: POSIX guarantees they convert */
    memcpy(&p->k.quantize, &fns[QG_K_QUANTIZE], sizeof(void *));
    memcpy(&p->k.dequantize, &fns[QG_K_DEQUANTIZE], sizeof(void *));
    memcpy(&p->k.fake_quant, &fns[QG_K_FAKE_QUANT], sizeof(void *));
    memcpy(&p->k.fake_quant_backward, &fns[QG_K_FAKE_QUANT_BACKWARD], sizeof(void *));
    memcpy(&p->k.observe, &fns[QG_K_OBSERVE], sizeof(void *));
    memcpy(&p->k.requantize, &fns[QG_K_REQUANTIZE], sizeof(void *));
    return QG_OK;
}

/* A pack linked for these very spec bytes and ops: the in-process hit,
 * without validating, printing and hashing the spec again (a spec that
 * differs only in bytes no field reads, or in the sign of a zero, takes
 * the keyed lookup below and finds the same pack there). */
static pack *same_spec_pack(qg_jit *j, const qg_spec *spec, unsigned ops, bool lazy) {
    for (pack *p = j->packs; p; p = p->next)
        if (p->key[0] && p->ops == ops && (p->slot >= 0) == lazy && memcmp(&p->spec, spec, sizeof *spec) == 0)
            return p;
    return NULL;
}

static void pack_push(qg_jit *j, pack *p) {
    p->next = j->packs;
    j->packs = p;
}

/* A spec the JIT takes, and the ISA its kernels are for: specs fp32 lanes
 * cannot serve (qint32, float zero points) get the scalar kernels, which
 * any CPU of this architecture runs. */
static qg_status check_spec(const qg_jit *j, const qg_spec *spec, qg_isa *isa, qg_error *err) {
    qg_status st = qg_spec_validate(spec, err);
    *isa = qg_plan_check_isa(spec, j->isa, NULL) == QG_OK ? j->isa : QG_ISA_SCALAR;
    return st;
}

/* The pack of this key and ops, compiled or lazy. */
static pack *keyed_pack(qg_jit *j, const char *key, unsigned ops, bool lazy) {
    for (pack *p = j->packs; p; p = p->next)
        if (p->ops == ops && (p->slot >= 0) == lazy && strcmp(p->key, key) == 0)
            return p;
    return NULL;
}

/* An in-process hit: p's kernels, counted. */
static qg_status hit(qg_jit *j, const pack *p, const qg_kernels **out) {
    j->stats.memory_hits++;
    *out = &p->k;
    return QG_OK;
}

static qg_status compile_locked(qg_jit *j, const qg_spec *spec, unsigned ops, const qg_kernels **out, qg_error *err) {
    pack *same = same_spec_pack(j, spec, ops, false);
    if (same)
        return hit(j, same, out);
    qg_isa isa;
    qg_status st = check_spec(j, spec, &isa, err);
    if (st)
        return st;
    const qg_llvm_target *t = qg_llvm_target_of(isa, NULL);
    char key[QG_CACHE_KEY_HEX];
    if ((st = key_of(spec, t, ops, key, err)))
        return st;
    if ((same = keyed_pack(j, key, ops, false)))
        return hit(j, same, out);
    pack *p = calloc(1, sizeof *p);
    if (!p)
        return qg_error_set(err, QG_ERR_NOMEM, "jit: out of memory");
    memcpy(p->key, key, sizeof key);
    p->slot = -1;
    p->ops = ops;
    memcpy(&p->spec, spec, sizeof *spec); /* every byte, for same_spec_pack */
    p->k.spec = &p->spec;
    p->k.isa = isa;
    char prefix[48];
    snprintf(prefix, sizeof prefix, "qgj%s", key);
    qg_llvm_blob obj = {0};
    st = object_of(j, spec, t, key, prefix, ops, &obj, err);
    if (!st)
        st = link_pack(j, p, prefix, &obj, err);
    qg_llvm_blob_free(&obj);
    if (st) {
        /* a pack whose symbols may be defined stays owned by the JIT */
        pack_push(j, p);
        p->key[0] = 0;
        return st;
    }
    pack_push(j, p);
    *out = &p->k;
    return QG_OK;
}

/* An entry of a compiled table, by op. */
static void *entry_of(const qg_kernels *k, qg_kernel_op op) {
    void (*f)(void) = NULL;
    switch (op) {
    case QG_K_QUANTIZE: f = (void (*)(void))k->quantize; break;
    case QG_K_DEQUANTIZE: f = (void (*)(void))k->dequantize; break;
    case QG_K_FAKE_QUANT: f = (void (*)(void))k->fake_quant; break;
    case QG_K_FAKE_QUANT_BACKWARD: f = (void (*)(void))k->fake_quant_backward; break;
    case QG_K_OBSERVE: f = (void (*)(void))k->observe; break;
    case QG_K_REQUANTIZE: f = (void (*)(void))k->requantize; break;
    default: break;
    }
    void *p;
    memcpy(&p, &f, sizeof p); /* POSIX: function pointers convert */
    return p;
}

/* A lazy op's first call: its own one-op pack (one disk cache entry),
 * or NULL, and the reference runs, when that cannot be had. */
static void *compile_op(void *owner, const qg_spec *spec, qg_kernel_op op) {
    qg_jit *j = owner;
    const qg_kernels *k = NULL;
    qg_error err;
    pthread_mutex_lock(&j->lock);
    const qg_status st = compile_locked(j, spec, 1u << op, &k, &err);
    if (st)
        j->stats.fallbacks++;
    pthread_mutex_unlock(&j->lock);
    return st ? NULL : entry_of(k, op);
}

/* A lazy table's key: its spec's, marked apart from compiled packs'. */
#define LAZY_KEY (1u << 31)

/* Lazy kernels: a table of trampolines bound to a copy of the spec. With
 * every slot taken, the ops are compiled now instead. */
static qg_status lazy_locked(qg_jit *j, const qg_spec *spec, unsigned ops, const qg_kernels **out, qg_error *err) {
    pack *same = same_spec_pack(j, spec, ops, true);
    if (same)
        return hit(j, same, out);
    qg_isa isa;
    qg_status st = check_spec(j, spec, &isa, err);
    char key[QG_CACHE_KEY_HEX];
    if (st || (st = key_of(spec, qg_llvm_target_of(isa, NULL), ops | LAZY_KEY, key, err)))
        return st;
    if ((same = keyed_pack(j, key, ops, true)))
        return hit(j, same, out);
    pack *p = calloc(1, sizeof *p);
    if (!p)
        return qg_error_set(err, QG_ERR_NOMEM, "jit: out of memory");
    memcpy(p->key, key, sizeof key); /* never a cache entry's: the lazy bit */
    p->ops = ops;
    memcpy(&p->spec, spec, sizeof *spec);
    p->k.spec = &p->spec;
    p->k.isa = isa;
    p->slot = qg_lazy_bind(j, compile_op, &p->spec, ops, j->background, &p->k);
    if (p->slot < 0) {
        free(p);
        return compile_locked(j, spec, ops, out, err);
    }
    j->stats.lazy_tables++;
    pack_push(j, p);
    *out = &p->k;
    return QG_OK;
}

qg_status qg_jit_compile(qg_jit *jit, const qg_spec *spec, unsigned ops, const qg_kernels **out, qg_error *err) {
    QG_NEED(out, err, "a place for the kernels");
    *out = NULL;
    QG_NEED(jit, err, "a JIT from qg_jit_create");
    QG_NEED(spec, err, "a spec from qg_spec_load_file");
    if (ops == 0)
        ops = QG_JIT_ALL;
    if (ops & ~(unsigned)QG_JIT_ALL)
        return qg_error_set(err, QG_ERR_INVALID, "jit: ops 0x%x has unknown bits; expected QG_JIT_* flags", ops);
    pthread_mutex_lock(&jit->lock);
    qg_status st = (jit->eager ? compile_locked : lazy_locked)(jit, spec, ops, out, err);
    pthread_mutex_unlock(&jit->lock);
    return st;
}

qg_status qg_jit_prepare(qg_jit *jit, const qg_kernels *kernels, unsigned ops, qg_error *err) {
    QG_NEED(jit, err, "a JIT from qg_jit_create");
    QG_NEED(kernels, err, "kernels from qg_jit_compile");
    if (ops == 0)
        ops = QG_JIT_ALL;
    int slot = -2;
    unsigned have = 0;
    pthread_mutex_lock(&jit->lock);
    for (pack *p = jit->packs; p && slot == -2; p = p->next)
        if (&p->k == kernels)
            slot = p->slot, have = p->ops;
    pthread_mutex_unlock(&jit->lock);
    if (slot == -2)
        return qg_error_set(err, QG_ERR_ARG, "qg_jit_prepare: kernels: not from this JIT's qg_jit_compile");
    if (slot >= 0) /* outside the lock: the compiles take it */
        qg_lazy_resolve(slot, ops & have);
    return QG_OK;
}
