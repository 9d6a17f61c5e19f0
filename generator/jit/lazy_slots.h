/* Tables whose ops compile on their first call (qgen/jit.h, lazy mode).
 *
 * A table's entries are trampolines of a slot: plain functions with the
 * kernel ABI, one per op and slot, that find the slot's compiled kernel
 * and call it. The first call of an op asks the slot's owner to compile
 * it (or, in a background table, starts its compile on a thread of its
 * own and runs the reference until the kernel is ready); an op that fails
 * to compile runs on the runtime's reference from then on (bit-exact by
 * definition). Slots are a fixed pool in the
 * library, since C has no closures: a table that finds none free is
 * compiled eagerly instead. */
#ifndef QGEN_JIT_LAZY_SLOTS_H
#define QGEN_JIT_LAZY_SLOTS_H

#include <stdbool.h>

#include "qgen/jit.h"
#include "../plan/kernel_ops.h"

enum { QG_LAZY_SLOTS = 256 };

/* The compiled kernel of `op` for `spec`, or NULL when it could not be
 * compiled (the slot then calls the reference). Called at most once per
 * op and slot, never inside qg_lazy_bind's lock; background compiles of
 * other ops may run at the same time. */
typedef void *(*qg_lazy_compile_fn)(void *owner, const qg_spec *spec, qg_kernel_op op);

/* Binds a free slot to owner and spec and points k's entries for `ops`
 * at its trampolines; -1 (k untouched) when every slot is taken. spec
 * must outlive the binding. With `background`, first calls compile on
 * threads of their own. */
int qg_lazy_bind(void *owner, qg_lazy_compile_fn compile, const qg_spec *spec, unsigned ops, bool background,
                 qg_kernels *k);

/* Resolves the slot's ops in `ops` now (compiling them, or waiting for
 * their background compiles); returns the ops that run on the reference. */
unsigned qg_lazy_resolve(int slot, unsigned ops);

/* Waits for the background compiles of owner's slots; their first calls
 * compile at once from then on. */
void qg_lazy_settle(void *owner);

/* Frees every slot of owner (its tables go with it), once its background
 * compiles have ended. */
void qg_lazy_release(void *owner);

#endif
