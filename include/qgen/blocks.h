/* qgen/blocks.h - ggml's block formats, by the reference rules of
 * docs/semantics.md ("Block formats").
 *
 * A row of n floats (n a multiple of the format's block) becomes n / elems
 * blocks of `bytes` bytes each, laid out exactly as ggml lays them out, so
 * the bytes can go into a GGUF file as they are. The functions here are the
 * portable reference every generated block kernel is tested against; they
 * run in the runtime (libqgen_rt) without LLVM or JSON.
 */
#ifndef QGEN_BLOCKS_H
#define QGEN_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qgen/spec.h"
#include "qgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Elements per block (32, or 256 for the K-quants) and bytes per block;
 * 0 for QG_BLOCK_NONE and values out of range. */
size_t qg_block_elems(qg_block_format f);
size_t qg_block_bytes(qg_block_format f);

/* Bytes a row of n elements takes; 0 when n is not a multiple of the block. */
size_t qg_block_row_bytes(qg_block_format f, size_t n);

/* Where a 32-element format's fields lie in its block, as byte offsets:
 * the fp16 scale d, the second fp16 (m, or q8_1's s), the fifth bits qh
 * and the codes qs; -1 where the format has none (mxfp4's d is its first
 * byte, an exponent). False for the K-quants and values out of range. */
typedef struct qg_block_layout {
    int d, m, qh, qs;
} qg_block_layout;
bool qg_block_layout_of(qg_block_format f, qg_block_layout *out);

/* Quantizes one row of n floats into q (qg_block_row_bytes(f, n) bytes).
 * Refused with QG_ERR_INVALID, naming the row length and the block, when n
 * is not a multiple of the block, and, for formats whose reference rules do
 * not take every finite row, naming the first block they cannot take. */
qg_status qg_block_quantize_ref(qg_block_format f, const float *x, size_t n, uint8_t *q, qg_error *err);

/* mxfp4's scale for a block whose largest |x| is amax (finite): the E8M0
 * byte in *e (may be NULL) and d = 2^(e - 128), ggml's scale halved as the
 * doubled table of codes is (docs/semantics.md, "Block formats"). The
 * generated quantize calls it, so the exponent is log2f's, as the
 * reference's. */
float qg_block_mxfp4_scale(float amax, uint8_t *e);

/* The K-quants' scale search for one block of 256 (q4_K, q6_K), the part
 * of quantize the generated kernels leave to the runtime: writes the
 * block's fields but its codes into b, the search's codes (0..15; q6_K's
 * l + 32) into codes[256] and each sub-block's final scale into sub: q4_K's
 * d·sc in sub[0..7] and dmin·m in sub[8..15], q6_K's d·sc in sub[0..15].
 * A sub-block whose scale is 0 keeps the search's codes. Returns 0 when
 * the element loop may take the block, 2 when it may but a sub-block's
 * scale is 0 (its codes are the search's), and 1 for a block to hand to
 * qg_block_quantize_ref (a NaN or an infinity in it, or a value beyond
 * ggml's nearest_int). */
int qg_block_kquant_search(qg_block_format f, const float *x, uint8_t *b, uint8_t *codes, float *sub);

/* Decodes one row of n elements from its blocks. */
qg_status qg_block_dequantize_ref(qg_block_format f, const uint8_t *q, size_t n, float *y, qg_error *err);

/* fake_quant of one row: y = the row quantized and decoded, block by block
 * (y may equal x); mask (may be NULL; packed bits with `packed_mask`, else
 * a byte per element) passes every finite x and stops NaN and +-inf. */
qg_status qg_block_fake_quant_ref(qg_block_format f, const float *x, float *y, uint8_t *mask, bool packed_mask,
                                  size_t n, qg_error *err);

#ifdef __cplusplus
}
#endif
#endif
