/* The C backend's kernel builder (lower/kernel_builder.h). */
#ifndef QGEN_C_BUILDER_H
#define QGEN_C_BUILDER_H

#include "../lower/kernel_builder.h"
#include "c_kernel.h"

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
    const char *at, *count; /* the open vector's first element and lanes, */
    bool partial;           /* ... whether partial, */
    op_io io;               /* ... its tensors */
    char tag[12];           /* ... and its values' suffix */
} c_kb;

/* A builder printing into e's text for the op whose loops are e->lp. */
void qg_c_kb_init(c_kb *c, emitter *e);
void qg_c_kb_free(c_kb *c);
const char *qg_c_indent(const c_kb *c);

/* c_span.c: the builder's vector calls (kernel_builder.h); the expressions
 * are appended to out */
void qg_c_vector_open(c_kb *c, const qg_plan *p, const qg_kvector *v, const char *at, const char *count);
void qg_c_load(c_kb *c, qg_text *out);
void qg_c_load_mask(c_kb *c, const char *bits, int first, qg_text *out);
void qg_c_store(c_kb *c, const char *r);
void qg_c_store_mask(c_kb *c, const char *m);

#endif
