/* A float32 weight matrix to GGUF's Q8_0 and Q4_K rows with the kernels
 * qgen generated for specs/w_q8_0.json and specs/w_q4_K.json, each row's
 * bytes and the floats read back compared with ggml's own reference
 * (quantize_row_<fmt>_ref and dequantize_row_<fmt> of libggml-base.so,
 * through ggml_get_type_traits).
 * usage: gguf_row DIR   (DIR holds libggml-base.so) */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qgen/blocks.h"
#include "w_q4_K.h"
#include "w_q8_0.h"

enum { ROWS = 48, COLS = 4096 };

/* the head of ggml's struct ggml_type_traits (ggml.h) */
typedef void (*ggml_row_fn)(const void *in, void *out, int64_t k);
typedef struct ggml_traits {
    const char *type_name;
    int64_t blck_size, blck_size_interleave;
    size_t type_size;
    bool is_quantized;
    ggml_row_fn to_float, from_float_ref;
} ggml_traits;

typedef struct format {
    const char *name;
    int ggml_type;
    qg_block_format block;
    void (*quantize)(const float *x, uint8_t *q, size_t n);
    void (*dequantize)(const uint8_t *q, float *y, size_t n);
} format;

static void q8_0_quantize(const float *x, uint8_t *q, size_t n) { w_q8_0_quantize(x, (w_q8_0_q_t *)q, n, NULL); }
static void q8_0_dequantize(const uint8_t *q, float *y, size_t n) {
    w_q8_0_dequantize((const w_q8_0_q_t *)q, y, n, NULL);
}
static void q4_K_quantize(const float *x, uint8_t *q, size_t n) { w_q4_K_quantize(x, (w_q4_K_q_t *)q, n, NULL); }
static void q4_K_dequantize(const uint8_t *q, float *y, size_t n) {
    w_q4_K_dequantize((const w_q4_K_q_t *)q, y, n, NULL);
}

/* A weight-like row: mostly small values at a row's own scale, a few
 * outliers, an all-zero stretch. */
static void fill(float *w, size_t rows, size_t cols) {
    uint64_t s = 0x2545F4914F6CDD1Dull;
    for (size_t r = 0; r < rows; r++) {
        const float scale = ldexpf(1.0f, (int)(r % 9) - 6);
        for (size_t c = 0; c < cols; c++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            float v = ((float)(s >> 40) * 0x1p-24f * 2.0f - 1.0f) * scale;
            if ((s >> 8) % 97 == 0)
                v *= 12.0f;
            w[r * cols + c] = c >= 512 && c < 544 ? 0.0f : v;
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: gguf_row DIR   (DIR holds ggml's libggml-base.so)\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/libggml-base.so", argv[1]);
    void *ggml = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const ggml_traits *(*traits)(int) = ggml ? (const ggml_traits *(*)(int))dlsym(ggml, "ggml_get_type_traits") : NULL;
    if (!traits) {
        fprintf(stderr, "gguf_row: cannot load ggml's reference from %s: %s\n", path, dlerror());
        return 2;
    }
    static const format formats[] = {{"q8_0", 8, QG_BLOCK_Q8_0, q8_0_quantize, q8_0_dequantize},
                                     {"q4_K", 12, QG_BLOCK_Q4_K, q4_K_quantize, q4_K_dequantize}};
    float *w = malloc(sizeof(float) * ROWS * COLS), *y = malloc(sizeof(float) * COLS),
          *gy = malloc(sizeof(float) * COLS);
    uint8_t *q = malloc(2 * COLS), *gq = malloc(2 * COLS);
    if (!w || !y || !gy || !q || !gq)
        return 2;
    fill(w, ROWS, COLS);
    int failures = 0;
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        const format *fm = &formats[f];
        const ggml_traits *t = traits(fm->ggml_type);
        if (!t || strcmp(t->type_name, fm->name) != 0) {
            fprintf(stderr, "gguf_row: ggml's type %d is not %s\n", fm->ggml_type, fm->name);
            return 2;
        }
        const size_t row_bytes = qg_block_row_bytes(fm->block, COLS);
        size_t bytes_differing = 0, floats_differing = 0;
        for (size_t r = 0; r < ROWS; r++) {
            const float *x = w + r * COLS;
            fm->quantize(x, q, COLS);
            t->from_float_ref(x, gq, COLS);
            for (size_t b = 0; b < row_bytes; b++)
                bytes_differing += q[b] != gq[b];
            fm->dequantize(q, y, COLS);
            t->to_float(gq, gy, COLS);
            floats_differing += memcmp(y, gy, sizeof(float) * COLS) != 0;
        }
        printf("%s: %d rows of %d floats, %zu bytes each: %zu bytes and %zu rows of floats differ from ggml's\n",
               fm->name, ROWS, COLS, row_bytes, bytes_differing, floats_differing);
        failures += bytes_differing != 0 || floats_differing != 0;
    }
    free(w), free(y), free(gy), free(q), free(gq);
    dlclose(ggml);
    if (failures)
        return 1;
    printf("every row equals ggml's reference\n");
    return 0;
}
