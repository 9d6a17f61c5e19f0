/* C spellings of the op table's entry points: one place for every
 * signature the header, the dispatcher and the ISA files print. */
#ifndef QGEN_C_SIGNATURE_H
#define QGEN_C_SIGNATURE_H

#include "../plan/kernel_ops.h"
#include "../util/text_buf.h"

/* Argument k's declaration ("const float *x"), or its type alone. */
void qg_c_arg_decl(qg_text *t, const qg_op_info *op, int k, const char *spec_name, bool with_name);
/* The parameter list, with or without names. */
void qg_c_params(qg_text *t, const qg_op_info *op, const char *spec_name, bool with_names);
/* The argument names, as a call passes them on. */
void qg_c_arg_names(qg_text *t, const qg_op_info *op);
/* "void NAME_op<suffix>(params)" */
void qg_c_prototype(qg_text *t, const qg_op_info *op, const char *spec_name, const char *suffix);

#endif
