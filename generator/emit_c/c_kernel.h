/* Internal to the C backend: what the files lowering a kernel (c_body,
 * c_span, c_entry, c_isa_file) share. */
#ifndef QGEN_C_KERNEL_H
#define QGEN_C_KERNEL_H

#include "../lower/kernel_builder.h"
#include "../plan/kernel_ops.h"
#include "emit_c.h"

#define P(...) qg_text_printf(e->t, __VA_ARGS__)
#define S(s) qg_text_puts(e->t, s)

/* C names of the plan's inputs, by qg_plan_input. */
extern const char *const qg_c_input_names[QG_IN_COUNT];

static inline bool is_param(int in) { return in >= QG_IN_S; }

static inline const char *qg_c_kind_type(const emitter *e, qg_vkind k) {
    return k == QG_VF ? e->is->vf : k == QG_VI ? e->is->vi : e->is->vm;
}

/* Whether the op being emitted takes or gives a packed (1 bit) mask. */
static inline bool packed_mask(const emitter *e) {
    return e->lp->mask_in == QG_MASK_BITS || e->lp->mask_out == QG_MASK_BITS;
}

static inline void spell(emitter *e, const char *fmt, const char *a, const char *b, const char *c) {
    qg_text_spell(e->t, fmt, a, b, c);
}

/* Pointer parameters of an op's span and entry, and which input they feed
 * (from the op table, plan/kernel_ops.h). */
typedef struct op_io {
    char in_decl[96], out_decl[96]; /* e.g. "const float *x" */
    const char *in_name, *out_name;
    bool in_is_q, out_is_q; /* narrow integer elements, of these dtypes: */
    qg_dtype in_q, out_q;   /* the kernel's q dtype, or quint16 for 16-bit float codes */
    bool in_is_i32;         /* requantize: int32 accumulators */
    bool mask_in, mask_out;
} op_io;

/* c_body.c: the body and its call */
void qg_c_float_literal(float f, char *out, size_t cap);
void qg_c_body(emitter *e, const qg_plan *p);
/* The call of the body on one vector (kept values named after `tag`:
 * r<tag> or g<tag>, m<tag>, nan<tag>; see qg_kbody). */
void qg_c_body_call(emitter *e, const qg_plan *p, const char *in_expr, const char *mask_expr, const char *tag,
                    const char *indent, qg_kbody form, char kept_out[16]);
void qg_c_body_call_expr(emitter *e, const qg_plan *p, const char *arg, char *out, size_t cap);

/* c_span.c: spans */
op_io qg_c_io_of(const emitter *e, const qg_plan *p);
void qg_c_strip_open(emitter *e, const char *at, const char *end, const char *indent);
/* Scalable ISAs: a span's whole-register strip and its splatted parameters. */
void qg_c_whole_strip(emitter *e, const qg_plan *p);
void qg_c_span_open(emitter *e, const qg_plan *p, const char *storage, const char *suffix);

/* c_entry.c: entries and the layout walk */
void qg_c_entry_open(emitter *e, qg_kernel_op op);
/* Opens NAME_<op><infix>__<isa> (infix "": the entry; else a static link a
 * runtime driver calls), and emits the chain's forwarder links, each
 * calling qg_<driver>_<stem> with the link it wraps. */
void qg_c_open_link(emitter *e, const qg_op_info *o, const char *infix);
/* The channels-last rows' signature (lower/lower_rows.c). */
void qg_c_rows_open(emitter *e, const qg_plan *p);

/* c_isa_file.c: what the builder's op_begin and op_end print (the plan's
 * body, spans, rows), around the lowered entries */
void qg_c_op_begin(emitter *e, const qg_kernel_loops *lp, const qg_plan *p);
void qg_c_op_end(emitter *e);

#endif
