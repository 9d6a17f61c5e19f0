/* libqgen.so: libqgen and the runtime whole, for hosts that load the
 * library at run time (the Python package). The sizes below let a binding
 * check its mirror of the public structs against this build. */
#include <stddef.h>

#include "qgen/jit.h"
#include "qgen/runtime.h"

size_t qg_abi_sizeof_qparams(void) { return sizeof(qg_qparams); }
size_t qg_abi_sizeof_kernels(void) { return sizeof(qg_kernels); }
size_t qg_abi_sizeof_error(void) { return sizeof(qg_error); }
size_t qg_abi_sizeof_jit_options(void) { return sizeof(qg_jit_options); }
