/* The C backend's ISA file: target attributes and FP contraction set from
 * inside the file, then every op's body, span and entry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_builder.h"
#include "c_kernel.h"
#include "c_signature.h"

/* docs/semantics.md forbids FMA contraction and the file needs its ISA:
 * both are set here, for the functions that follow, in each compiler's
 * spelling, so that no build flag is needed. */
static void emit_target_push(emitter *e) {
    S("#if defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n");
    if (e->tg->clang_target[0])
        P("#pragma clang attribute push(__attribute__((target(\"%s\"))), apply_to = function)\n", e->tg->clang_target);
    S("#elif defined(__GNUC__)\n#pragma GCC push_options\n");
    if (e->tg->gcc_target[0])
        P("#pragma GCC target(\"%s\")\n", e->tg->gcc_target);
    S("#pragma GCC optimize(\"fp-contract=off\")\n");
    /* GCC 12 estimates loop bounds before it folds a block's constant
     * 32-element span, and warns of iterations that never run */
    S("#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Waggressive-loop-optimizations\"\n#endif\n\n");
}

static void emit_target_pop(emitter *e) {
    S("#if defined(__clang__)\n");
    if (e->tg->clang_target[0])
        S("#pragma clang attribute pop\n");
    S("#elif defined(__GNUC__)\n#pragma GCC diagnostic pop\n#pragma GCC pop_options\n#endif\n\n");
}

/* The ISA's helpers, once for each register group the file's ops use. */
static void emit_helpers(emitter *e) {
    bool done[QG_ISA_GROUPS] = {false};
    for (qg_kernel_op op = 0; op < QG_K_OP_COUNT; op++) {
        qg_kernel_loops lp;
        qg_kernel_loops_of(e->sp, e->tg->isa, op, &lp);
        const int g = qg_isa_group_of(lp.lmul);
        if (!done[g])
            S(e->groups[g].helpers);
        done[g] = true;
    }
}

void qg_c_op_begin(emitter *e, const qg_kernel_loops *lp, const qg_plan *p) {
    e->lp = lp;
    e->op = p ? p->op : QG_K_OBSERVE;
    if (e->groups)
        e->is = &e->groups[qg_isa_group_of(lp->lmul)];
    if (!p) /* observe: its reduction is lowered (open_minmax builds the widening) */
        return;
    qg_c_body(e, p);
}

void qg_c_op_end(emitter *e) {
    if (e->groups)
        e->is = qg_isa_spelling_of(e->tg->isa);
    e->lp = NULL;
}

static qg_status emit_isa_file(emitter *e, const qg_spec *sp, qg_isa isa, const char *banner, qg_error *err);

/* The file, its spelling tables' register groups made first and released after. */
qg_status qg_emit_isa_file(const qg_spec *sp, qg_isa isa, const char *banner, qg_text *t, qg_error *err) {
    qg_isa_spelling groups[QG_ISA_GROUPS];
    const qg_isa_spelling *raw = qg_isa_spelling_of(isa);
    int ready = 0;
    while (ready < QG_ISA_GROUPS && qg_isa_spelling_grouped(raw, ready, &groups[ready]))
        ready++;
    emitter ev = {t, sp, raw, qg_target_of(isa), sp->name, NULL, 0, false, "", 0, groups};
    emitter *e = &ev;
    qg_status st = ready < QG_ISA_GROUPS ? qg_error_set(err, QG_ERR_NOMEM, "generate: out of memory")
                                         : emit_isa_file(e, sp, isa, banner, err);
    while (ready > 0)
        qg_isa_spelling_release(&groups[--ready], raw);
    return st;
}

static qg_status emit_isa_file(emitter *e, const qg_spec *sp, qg_isa isa, const char *banner, qg_error *err) {
    qg_text *t = e->t;
    e->lanes = e->tg->lanes;
    e->scalable = e->tg->lanes == 0;
    snprintf(e->lanes_str, sizeof e->lanes_str, "%d", e->lanes);
    qg_status st = qg_plan_check_isa(sp, isa, err);
    if (st)
        return st;
    S(banner);
    P(" * ISA: %s. The file sets its own target and turns FP contraction off, so\n"
      " * `cc -O2 -c` builds it as it is%s%s%s.\n */\n",
      e->tg->name, e->tg->cflags[0] ? " (whole-file flags " : "", e->tg->cflags, e->tg->cflags[0] ? " also work)" : "");
    P("#include \"%s.h\"\n\n", sp->name);
    P("#if %s\n\n", e->tg->guard);
    if (e->tg->needs[0])
        P("#if !(%s)\n#error \"qgen: %s kernels need a compiler that takes their target from the file (clang) or "
          "flags %s\"\n#endif\n\n",
          e->tg->needs, e->tg->name, e->tg->cflags);
    S(e->is->includes);
    S("\n#include \"qgen/kernel_support.h\"\n\n");
    emit_target_push(e);
    emit_helpers(e);
    S("\n");
    c_kb b;
    qg_c_kb_init(&b, e);
    st = qg_lower_kernels(&b.kb, sp, isa, (1u << QG_K_OP_COUNT) - 1, err);
    qg_c_kb_free(&b);
    if (st)
        return st;
    emit_target_pop(e);
    P("#else\ntypedef int %s_%s_not_this_architecture;\n#endif\n", sp->name, e->tg->name);
    return qg_text_ok(t) ? QG_OK : qg_error_set(err, QG_ERR_NOMEM, "generate: out of memory");
}
