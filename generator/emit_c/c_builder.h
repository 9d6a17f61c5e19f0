/* The C backend's kernel builder (lower/kernel_builder.h). */
#ifndef QGEN_C_BUILDER_H
#define QGEN_C_BUILDER_H

#include "../lower/kernel_builder.h"
#include "emit_c.h"

struct qg_kvar {
    qg_kv *name;
};

enum { C_KB_MAX_VARS = 16 }; /* variables of one builder's functions */

typedef struct c_kb {
    qg_kb kb;
    emitter *e;
    int depth;            /* indentation: open functions, loops and ifs */
    const qg_op_info *o;  /* the open link's op */
    const qg_plan *p;     /* the open span's plan */
    const qg_plan *widen; /* the open reduction's widening, or NULL */
    int temps;            /* stack buffers of the open function */
    struct qg_kv *values; /* every expression made, freed by qg_c_kb_free */
    struct qg_kvar vars[C_KB_MAX_VARS];
    int nvars;
    bool strip_open; /* a column's strip, opened before its parameters */
} c_kb;

/* A builder printing into e's text for the op whose loops are e->lp. */
void qg_c_kb_init(c_kb *c, emitter *e);
void qg_c_kb_free(c_kb *c);

#endif
