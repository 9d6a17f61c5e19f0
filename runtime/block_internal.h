/* What the block formats' reference files share (block_ref.c, the 32-element
 * formats; block_kquants.c, the 256-element K-quants): docs/semantics.md,
 * "Block formats". */
#ifndef QGEN_BLOCK_INTERNAL_H
#define QGEN_BLOCK_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "qgen/blocks.h"

/* NaN reads as 0, +-inf as +-FLT_MAX. */
float qg_block_read_finite(float v);
/* fp16 fields, little-endian. */
void qg_block_put_f16(uint8_t *p, float v);
float qg_block_get_f16(const uint8_t *p);

/* One 256-element block of Q4_K or Q6_K from x (already read finite);
 * false where ggml's nearest_int cannot take a value the rules reach
 * (NaN, or a magnitude above 4194303), that value in *bad. */
bool qg_kquant_quantize_block(qg_block_format f, const float *x, uint8_t *b, float *bad);
void qg_kquant_dequantize_block(qg_block_format f, const uint8_t *b, float *y);

#endif
