/* One spec, one target: the module built, verified, optimized at O2 and
 * emitted. Everything LLVM would treat as fatal is checked before it sees
 * it (the target against the ISA's features, the module by the verifier),
 * so no spec reaches LLVM's fatal paths; one that still happens ends the
 * process (docs/jit.md): unwinding out of LLVM's C++ frames would be
 * undefined behaviour, and a library does not own the process-wide
 * handler. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "../targets/target_table.h"
#include "qgen_target_rows.h"
#include "llvm_builder.h"

int qg_llvm_elements_per_iteration(qg_isa isa, int op, int vlen) {
    const qg_target *t = qg_target_of(isa);
    if (!t)
        return 0;
    /* a scalable register holds vlen / 32 fp32 lanes, whatever the ISA's vscale */
    const int lanes = t->lanes ? t->lanes : vlen / 32 * qg_target_lmul(t, qg_kernel_op_name((qg_kernel_op)op));
    return lanes * t->unroll;
}

/* ---- LLVM set-up ---------------------------------------------------------- */

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;

/* The LLVM targets of targets/arch/ (each row's llvm_target), and no
 * others: registering every target of Debian's LLVM 19 would cost a
 * process 0.8 ms more (bench/bench_llvm_init.c). */
static void init_llvm(void) { QG_LLVM_REGISTER_TARGETS(); }

void qg_llvm_blob_free(qg_llvm_blob *b) {
    free(b->data);
    b->data = NULL;
    b->size = 0;
}

static qg_status take_message(qg_error *err, const char *what, char *msg) {
    qg_status st = qg_error_set(err, QG_ERR_BACKEND, "llvm: %s: %s", what, msg ? msg : "(no message)");
    LLVMDisposeMessage(msg);
    return st;
}

static LLVMTargetMachineRef target_machine(const qg_llvm_target *t, qg_error *err) {
    LLVMTargetRef target;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(t->triple, &target, &msg)) {
        take_message(err, t->triple, msg);
        return NULL;
    }
    LLVMTargetMachineOptionsRef o = LLVMCreateTargetMachineOptions();
    LLVMTargetMachineOptionsSetCPU(o, t->cpu);
    LLVMTargetMachineOptionsSetFeatures(o, t->features);
    if (t->abi[0])
        LLVMTargetMachineOptionsSetABI(o, t->abi);
    LLVMTargetMachineOptionsSetCodeGenOptLevel(o, LLVMCodeGenLevelDefault);
    LLVMTargetMachineOptionsSetRelocMode(o, LLVMRelocPIC);
    LLVMTargetMachineRef tm = LLVMCreateTargetMachineWithOptions(target, t->triple, o);
    LLVMDisposeTargetMachineOptions(o);
    if (!tm)
        qg_error_set(err, QG_ERR_BACKEND, "llvm: no target machine for %s (%s, %s)", t->triple, t->cpu, t->features);
    return tm;
}

/* LLVM aborts on scalable vectors for a target without V, and on vector
 * widths a target lacks: the pairing is checked before any IR is built. */
/* Whether the comma-separated `list` holds the feature f[0..len). */
static bool has_feature(const char *list, const char *f, size_t len) {
    for (const char *p = list; *p;) {
        const size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, f, len) == 0)
            return true;
        p += n + (p[n] == ',');
    }
    return false;
}

static qg_status check_target(const qg_llvm_target *t, qg_error *err) {
    if ((unsigned)t->isa >= QG_ISA_COUNT)
        return qg_error_set(err, QG_ERR_INVALID, "llvm: unknown ISA %d", (int)t->isa);
    const qg_target *isa = qg_target_of(t->isa);
    const qg_arch *arch = qg_arch_of(t->isa);
    if (!arch)
        return QG_OK;
    bool ok = strncmp(t->triple, arch->name, strlen(arch->name)) == 0;
    /* every feature the ISA's kernels are built with */
    for (const char *f = isa->llvm_features; ok && *f;) {
        const size_t len = strcspn(f, ",");
        ok = has_feature(t->features, f, len);
        f += len + (f[len] == ',');
    }
    if (!ok)
        return qg_error_set(err, QG_ERR_INVALID,
                            "llvm: target %s with features \"%s\" cannot run %s kernels; expected a %s triple with %s",
                            t->triple, t->features, qg_isa_name(t->isa), arch->name, isa->llvm_features);
    return QG_OK;
}

static void init_types(lx *x) {
    LLVMContextRef c = x->c;
    x->f32 = LLVMFloatTypeInContext(c);
    x->i1 = LLVMInt1TypeInContext(c);
    x->i8 = LLVMInt8TypeInContext(c);
    x->i16 = LLVMInt16TypeInContext(c);
    x->i32 = LLVMInt32TypeInContext(c);
    x->i64 = LLVMInt64TypeInContext(c);
    x->isz = LLVMIntPtrTypeInContext(c, LLVMGetModuleDataLayout(x->m));
    x->ptr = LLVMPointerTypeInContext(c, 0);
    x->vd = LLVMVoidTypeInContext(c);
    x->vf = lx_vec(x, x->f32);
    x->vi = lx_vec(x, x->i32);
    x->vm = lx_vec(x, x->i1);
    x->vb = lx_vec(x, x->i8);
    x->qsize = (unsigned)qg_dtype_size(x->sp->dtype);
    x->qe = x->qsize == 2 ? x->i16 : x->qsize == 4 ? x->i32 : x->i8;
    x->vq = lx_vec(x, x->qe);
    x->vh = lx_vec(x, x->i16);
}

void lx_use_group(lx *x, int lmul) {
    x->isa->lanes = x->isa->lanes_lmul1 * (unsigned)lmul;
    init_types(x);
}

static qg_status emit(LLVMModuleRef m, LLVMTargetMachineRef tm, qg_llvm_output out, qg_llvm_blob *res, qg_error *err) {
    char *msg = NULL;
    if (out == QG_LLVM_LL) {
        char *text = LLVMPrintModuleToString(m);
        res->size = strlen(text);
        res->data = malloc(res->size + 1);
        if (res->data)
            memcpy(res->data, text, res->size + 1);
        LLVMDisposeMessage(text);
        return res->data ? QG_OK : qg_error_set(err, QG_ERR_NOMEM, "llvm: out of memory");
    }
    LLVMMemoryBufferRef buf = NULL;
    if (out == QG_LLVM_BC) {
        buf = LLVMWriteBitcodeToMemoryBuffer(m);
    } else if (LLVMTargetMachineEmitToMemoryBuffer(
                   tm, m, out == QG_LLVM_OBJ || out == QG_LLVM_JIT_OBJ ? LLVMObjectFile : LLVMAssemblyFile, &msg,
                   &buf)) {
        return take_message(err, "code generation", msg);
    }
    if (!buf)
        return qg_error_set(err, QG_ERR_BACKEND, "llvm: no output");
    res->size = LLVMGetBufferSize(buf);
    res->data = malloc(res->size ? res->size : 1);
    if (res->data)
        memcpy(res->data, LLVMGetBufferStart(buf), res->size);
    LLVMDisposeMemoryBuffer(buf);
    return res->data ? QG_OK : qg_error_set(err, QG_ERR_NOMEM, "llvm: out of memory");
}

/* A JIT object's code may start a fresh page with nothing mapped below it,
 * and a host built with clang's -fsanitize=function (part of
 * -fsanitize=undefined) reads the 8 bytes before every function it calls
 * through a pointer. Sixteen bytes of prefix data before each entry keep
 * that read inside the object and the entry 16-byte aligned. */
static void pad_entries(lx *x) {
    LLVMTypeRef pad = LLVMArrayType2(x->i8, 16);
    for (LLVMValueRef f = LLVMGetFirstFunction(x->m); f; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMExternalLinkage)
            LLVMSetPrefixData(f, LLVMConstNull(pad));
}

static qg_status build_and_emit(lx *x, LLVMTargetMachineRef tm, qg_llvm_output out, qg_llvm_blob *res, qg_error *err) {
    qg_status st = x->probe ? lx_build_probe(x, err) : lx_build_kernels(x, err);
    if (st)
        return st;
    char *msg = NULL;
    if (LLVMVerifyModule(x->m, LLVMReturnStatusAction, &msg))
        return take_message(err, "the generated module does not verify", msg);
    LLVMDisposeMessage(msg);
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    if (x->isa->isa == QG_ISA_SCALAR) { /* the portable fallback stays scalar code */
        LLVMPassBuilderOptionsSetLoopVectorization(po, 0);
        LLVMPassBuilderOptionsSetSLPVectorization(po, 0);
    }
    /* scalar code leans on O2's unrolling; vector IR is already shaped */
    const bool light = out == QG_LLVM_JIT_OBJ && x->isa->isa != QG_ISA_SCALAR;
    LLVMErrorRef e = LLVMRunPasses(
        x->m,
        light ? "always-inline,globaldce,function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,"
                "loop-mssa(licm))"
              : "default<O2>",
        tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e)
        return take_message(err, "optimization", LLVMGetErrorMessage(e));
    if (out == QG_LLVM_JIT_OBJ)
        pad_entries(x);
    return emit(x->m, tm, out, res, err);
}

static char llvm_version[32];
static pthread_once_t version_once = PTHREAD_ONCE_INIT;

static void read_version(void) {
    unsigned major, minor, patch;
    LLVMGetVersion(&major, &minor, &patch);
    snprintf(llvm_version, sizeof llvm_version, "%u.%u.%u", major, minor, patch);
}

const char *qg_llvm_version(void) {
    pthread_once(&version_once, read_version);
    return llvm_version;
}

void qg_llvm_init(void) { pthread_once(&llvm_once, init_llvm); }

static qg_status compile(const qg_spec *spec, const qg_plan *probe, const qg_llvm_target *target, const char *prefix,
                         unsigned ops, qg_llvm_output out, qg_llvm_blob *result, qg_error *err) {
    memset(result, 0, sizeof *result);
    pthread_once(&llvm_once, init_llvm);
    qg_status st = check_target(target, err);
    if (st)
        return st;
    lx_isa shape;
    if ((st = lx_isa_of(target->isa, &shape, err)))
        return st;
    LLVMTargetMachineRef tm = target_machine(target, err);
    if (!tm)
        return err ? err->code : QG_ERR_BACKEND;
    lx x = {0};
    x.c = LLVMContextCreate();
    /* value names only show in text IR; objects (the JIT's) go without */
    LLVMContextSetDiscardValueNames(x.c, out != QG_LLVM_LL);
    char module_name[QG_NAME_MAX + 32];
    snprintf(module_name, sizeof module_name, "%s_%s", spec->name, qg_isa_name(target->isa));
    x.m = LLVMModuleCreateWithNameInContext(module_name, x.c);
    x.b = LLVMCreateBuilderInContext(x.c);
    x.sp = spec;
    x.target = target;
    x.isa = &shape;
    x.prefix = prefix;
    x.ops = ops;
    x.probe = probe;
    LLVMSetTarget(x.m, target->triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(x.m, dl);
    LLVMDisposeTargetData(dl);
    if (target->abi[0])
        LLVMAddModuleFlag(x.m, LLVMModuleFlagBehaviorError, "target-abi", 10,
                          LLVMMDStringInContext2(x.c, target->abi, strlen(target->abi)));
    init_types(&x);
    st = build_and_emit(&x, tm, out, result, err);
    LLVMDisposeBuilder(x.b);
    LLVMDisposeModule(x.m);
    LLVMContextDispose(x.c);
    LLVMDisposeTargetMachine(tm);
    if (st)
        qg_llvm_blob_free(result);
    return st;
}

qg_status qg_llvm_compile(const qg_spec *spec, const qg_llvm_target *target, const char *prefix, unsigned ops,
                          qg_llvm_output out, qg_llvm_blob *result, qg_error *err) {
    return compile(spec, NULL, target, prefix, ops, out, result, err);
}

qg_status qg_llvm_compile_probe(const qg_plan *plan, const qg_llvm_target *target, const char *prefix,
                                qg_llvm_blob *result, qg_error *err) {
    qg_spec spec;
    qg_status st = qg_spec_load_string("{\"name\": \"probe\"}", "probe", NULL, 0, &spec, err);
    return st ? st : compile(&spec, plan, target, prefix, 0, QG_LLVM_OBJ, result, err);
}
