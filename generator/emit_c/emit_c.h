/* The C backend: spec -> NAME.h, NAME_<isa>.c per ISA, NAME_dispatch.c. */
#ifndef QGEN_EMIT_C_H
#define QGEN_EMIT_C_H

#include "../util/text_buf.h"
#include "../targets/target_table.h"
#include "isa_spelling.h"
#include "../plan/kernel_loops.h"

typedef struct emitter {
    qg_text *t;
    const qg_spec *sp;
    const qg_isa_spelling *is;
    const qg_target *tg;
    const char *name;
    const qg_kernel_loops *lp; /* the op being emitted */
    int lanes;
    bool scalable;
    char lanes_str[8];
    qg_kernel_op op; /* the op being emitted */
    /* The ISA's table per register group (qg_isa_spelling_grouped), `is`
     * the op's while it is emitted; NULL: `is` as it is. */
    const qg_isa_spelling *groups;
} emitter;

const char *qg_q_type(qg_dtype d);

/* One ISA's kernels; `banner` opens the file (a comment naming the spec,
 * the generator and the command). */
qg_status qg_emit_isa_file(const qg_spec *sp, qg_isa isa, const char *banner, qg_text *t, qg_error *err);
qg_status qg_emit_header(const qg_spec *sp, const char *banner, qg_text *t, qg_error *err);
/* The resolved spec as the C definition `const qg_spec NAME_spec = {...};`
 * (designated fields, floats in hex: exact on every ABI). */
void qg_emit_spec_literal(const qg_spec *sp, qg_text *t);
qg_status qg_emit_dispatch(const qg_spec *sp, const char *banner, qg_text *t, qg_error *err);

#endif
