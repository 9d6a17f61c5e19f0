/* C spellings of the op table's entry points: one place for every
 * signature the header, the dispatcher and the ISA files print. */
#ifndef QGEN_C_SIGNATURE_H
#define QGEN_C_SIGNATURE_H

#include "../plan/kernel_ops.h"
#include "../util/text_buf.h"

/* The C type of the spec's float tensors at the entry points: float, or
 * uint16_t holding bfloat16/float16 bits (kernels inside work on float). */
const char *qg_c_float_t(const qg_spec *spec);
/* Argument k's declaration ("const float *x"), or its type alone; float_t
 * is the element type of float tensors. */
void qg_c_arg_decl(qg_text *t, const qg_op_info *op, int k, const char *spec_name, const char *float_t, bool with_name);
/* The parameter list, with or without names. */
void qg_c_params(qg_text *t, const qg_op_info *op, const char *spec_name, const char *float_t, bool with_names);
/* The argument names, as a call passes them on. */
void qg_c_arg_names(qg_text *t, const qg_op_info *op);
/* "void NAME_op<suffix>(params)" */
void qg_c_prototype(qg_text *t, const qg_op_info *op, const char *spec_name, const char *float_t, const char *suffix);

#endif
