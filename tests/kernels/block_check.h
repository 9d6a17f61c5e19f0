/* The kernel tests of ggml's block formats (docs/semantics.md, "Block
 * formats"): a spec's generated quantize, dequantize and fake_quant
 * against the runtime's block reference, byte for byte and bit for bit,
 * on rows of 0 to 70 blocks whose blocks take every case the rules single
 * out. kernel_check.c runs these for a spec with a `block`. */
#ifndef QGEN_KC_BLOCK_CHECK_H
#define QGEN_KC_BLOCK_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "qgen/spec.h"

/* One ISA's kernels of a block spec, their block tensors as bytes and
 * their float tensors of the spec's float_type (float32, or 16-bit codes
 * checked against the reference through qg_ftype_*: widened, the float32
 * reference, narrowed). */
typedef struct kc_block_kernels {
    void (*quantize)(const void *x, uint8_t *q, size_t n);
    void (*dequantize)(const uint8_t *q, void *y, size_t n);
    void (*fake_quant)(const void *x, void *y, uint8_t *mask, size_t n);
} kc_block_kernels;

/* Runs every case; returns the number of failed checks, adds the elements
 * and bytes compared to *compared. The manifest gets each op's block-count
 * classes (ops 0 fake_quant, 1 quantize, 2 dequantize, as kernel_check's). */
unsigned kc_block_check(const qg_spec *sp, const char *isa, const kc_block_kernels *k, unsigned long long *compared);

#endif
