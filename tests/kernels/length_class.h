/* Length classes and the coverage manifest of the kernel tests.
 *
 * A case's class is what its length decides about the paths a kernel takes,
 * so that two cases of one class run the same code on other data. The tests
 * run the smallest length of each class their length list reaches, and every
 * run writes the classes it checked per op to the coverage manifest
 * (docs/testing.md), which `make test` compares with the committed one. */
#ifndef QGEN_KC_LENGTH_CLASS_H
#define QGEN_KC_LENGTH_CLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The class of n elements in a layout of `inner` elements per channel run
 * whose parameters repeat every `period` elements (1 per tensor), on an ISA
 * whose main loop takes `step` elements per iteration at this width:
 *   n mod step, min(n / step, 3): the partial vector, the single vectors
 *     before it, whether the main loop runs zero, one, two or more times
 *     (an align head starts at two);
 *   n mod 8: the offsets of the pointers, which the tests take from n;
 *   n mod 6: the zero point and tie scale per-tensor cases alternate with n;
 *   n mod period, min(n / period, 3): where the last channel run ends and
 *     whether the channels wrap around. */
uint64_t kc_class_key(size_t n, size_t inner, size_t period, size_t step);

/* The smallest multiple of stride, at most n, in n's class. */
size_t kc_class_smallest(size_t n, size_t inner, size_t period, size_t step, size_t stride);

/* A set of class keys. */
typedef struct kc_class_set {
    uint64_t *keys;
    size_t count, cap;
} kc_class_set;
/* Adds key; false when it was there already (or on out of memory, which
 * kc_manifest_write reports). */
bool kc_class_add(kc_class_set *set, uint64_t key);
void kc_class_clear(kc_class_set *set);

/* The manifest: the classes each op was checked on in this run. */
void kc_manifest_note(size_t op, uint64_t key);
/* Who wrote a line: the spec, the backend, the architecture, the ISA and
 * the vector width ("-" for fixed widths). */
typedef struct kc_run {
    const char *spec, *backend, *arch, *isa, *vl;
} kc_run;
/* Writes "SPEC BACKEND ARCH ISA VL op=COUNT/DIGEST ..." for ops[0..n_ops)
 * to DIR/SPEC.BACKEND.ARCH.ISA.VL, DIR from $KC_MANIFEST_DIR (nothing
 * without it). Returns nonzero when the file could not be written. */
int kc_manifest_write(const kc_run *run, const char *const *op_names, size_t n_ops);
/* ... "SPEC BACKEND ARCH ISA VL skipped": this CPU cannot run the ISA. */
int kc_manifest_skipped(const kc_run *run);

#endif
