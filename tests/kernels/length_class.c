/* Length classes and the coverage manifest (length_class.h). */
#include "length_class.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t min3(size_t q) { return q < 3 ? q : 3; }

uint64_t kc_class_key(size_t n, size_t inner, size_t period, size_t step) {
    if (step == 0)
        step = 1;
    if (period == 0)
        period = 1;
    uint64_t key = (uint64_t)(inner & 0xFF);
    key = key << 16 | (uint64_t)(n % step & 0xFFFF);
    key = key << 2 | (uint64_t)min3(n / step);
    key = key << 3 | (uint64_t)(n % 8);
    key = key << 3 | (uint64_t)(n % 6);
    key = key << 20 | (uint64_t)(n % period & 0xFFFFF);
    key = key << 2 | (uint64_t)min3(n / period);
    return key;
}

size_t kc_class_smallest(size_t n, size_t inner, size_t period, size_t step, size_t stride) {
    const uint64_t want = kc_class_key(n, inner, period, step);
    if (stride == 0)
        stride = 1;
    for (size_t m = n % stride; m < n; m += stride)
        if (kc_class_key(m, inner, period, step) == want)
            return m;
    return n;
}

static bool out_of_memory;

bool kc_class_add(kc_class_set *set, uint64_t key) {
    for (size_t i = 0; i < set->count; i++)
        if (set->keys[i] == key)
            return false;
    if (set->count == set->cap) {
        const size_t cap = set->cap ? 2 * set->cap : 256;
        uint64_t *keys = realloc(set->keys, cap * sizeof *keys);
        if (!keys) {
            out_of_memory = true;
            return false;
        }
        set->keys = keys;
        set->cap = cap;
    }
    set->keys[set->count++] = key;
    return true;
}

void kc_class_clear(kc_class_set *set) {
    free(set->keys);
    *set = (kc_class_set){0};
}

enum { MANIFEST_OPS = 16 };
static kc_class_set noted[MANIFEST_OPS];

void kc_manifest_note(size_t op, uint64_t key) {
    if (op < MANIFEST_OPS)
        kc_class_add(&noted[op], key);
}

static int compare_keys(const void *a, const void *b) {
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* FNV-1a over the sorted keys: the same set gives the same digest in any
 * order of the cases. */
static uint32_t digest_of(kc_class_set *set) {
    qsort(set->keys, set->count, sizeof set->keys[0], compare_keys);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < set->count; i++)
        for (int b = 0; b < 64; b += 8) {
            h ^= (set->keys[i] >> b) & 0xFF;
            h *= 0x100000001b3ull;
        }
    return (uint32_t)(h ^ h >> 32);
}

/* DIR/SPEC.BACKEND.ISA.VL holds the one line, written whole or not at all. */
static int write_line(const kc_run *run, const char *const *op_names, size_t n_ops, bool skipped) {
    const char *dir = getenv("KC_MANIFEST_DIR");
    if (out_of_memory) {
        fprintf(stderr, "kernel_check: out of memory while noting length classes\n");
        return 1;
    }
    if (!dir || !*dir)
        return 0;
    char path[1024], tmp[1040];
    snprintf(path, sizeof path, "%s/%s.%s.%s.%s.%s", dir, run->spec, run->backend, run->arch, run->isa, run->vl);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        perror(tmp);
        return 1;
    }
    fprintf(f, "%s %s %s %s %s", run->spec, run->backend, run->arch, run->isa, run->vl);
    if (skipped)
        fputs(" skipped", f);
    for (size_t op = 0; op < n_ops && op < MANIFEST_OPS; op++)
        if (noted[op].count)
            fprintf(f, " %s=%zu/%08x", op_names[op], noted[op].count, (unsigned)digest_of(&noted[op]));
    fputc('\n', f);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

int kc_manifest_write(const kc_run *run, const char *const *op_names, size_t n_ops) {
    return write_line(run, op_names, n_ops, false);
}

int kc_manifest_skipped(const kc_run *run) { return write_line(run, NULL, 0, true); }
