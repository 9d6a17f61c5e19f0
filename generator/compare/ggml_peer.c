/* ggml's kernels loaded from npm's prebuilt libraries (ggml_peer.h). The
 * two structs below mirror the leading fields of ggml's type traits
 * (ggml.h's ggml_type_traits, ggml-cpu.h's ggml_type_traits_cpu in the
 * version scripts/install-npm-peers.sh installs); the type's name is
 * checked against qgen's before anything is called. */
#include "ggml_peer.h"

#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qgen/spec.h"

typedef struct ggml_traits {
    const char *type_name;
    int64_t blck_size, blck_size_interleave;
    size_t type_size;
    bool is_quantized;
    qg_ggml_row_fn to_float, from_float_ref;
} ggml_traits;
typedef struct ggml_traits_cpu {
    qg_ggml_row_fn from_float;
} ggml_traits_cpu;

static void *open_lib(const char *dir, const char *name, char *why, size_t cap) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h)
        snprintf(why, cap, "cannot load %s: %s (scripts/install-npm-peers.sh installs it)", path, dlerror());
    return h;
}

/* ggml's choice among its CPU levels: the highest ggml_backend_score (a
 * level's score is 0 where this CPU lacks its features). */
static void *best_level(const char *dir, char *name, size_t name_cap, char *why, size_t cap) {
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(why, cap, "cannot read the directory %s", dir);
        return NULL;
    }
    int best = 0;
    void *pick = NULL;
    for (struct dirent *e; (e = readdir(d));) {
        const size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "libggml-cpu-", 12) != 0 || len < 15 || strcmp(e->d_name + len - 3, ".so") != 0)
            continue;
        void *h = open_lib(dir, e->d_name, why, cap);
        int (*score)(void) = h ? (int (*)(void))dlsym(h, "ggml_backend_score") : NULL;
        const int s = score ? score() : 0;
        if (s > best) {
            best = s;
            pick = h;
            snprintf(name, name_cap, "%.*s", (int)(len - 15), e->d_name + 12);
        }
    }
    closedir(d);
    if (!pick)
        snprintf(why, cap, "no libggml-cpu-<level>.so in %s runs on this CPU", dir);
    return pick;
}

static const ggml_traits *traits_of(const qg_ggml *g, int type) {
    const ggml_traits *(*traits)(int) = (const ggml_traits *(*)(int))dlsym(g->base, "ggml_get_type_traits");
    return traits && type >= 0 ? traits(type) : NULL;
}

bool qg_ggml_open(const char *dir, qg_ggml *g, char *why, size_t cap) {
    memset(g, 0, sizeof *g);
    g->base = open_lib(dir, "libggml-base.so", why, cap);
    g->haswell = g->base ? open_lib(dir, "libggml-cpu-haswell.so", why, cap) : NULL;
    g->best = g->haswell ? best_level(dir, g->best_name, sizeof g->best_name, why, cap) : NULL;
    if (g->best && !dlsym(g->base, "ggml_get_type_traits")) {
        snprintf(why, cap, "%s/libggml-base.so has no ggml_get_type_traits", dir);
        g->best = NULL;
    }
    return g->best != NULL;
}

int qg_ggml_type(const qg_ggml *g, qg_block_format f) {
    static const int types[QG_BLOCK_FORMAT_COUNT] = {
        [QG_BLOCK_NONE] = -1, [QG_BLOCK_Q8_0] = 8, [QG_BLOCK_Q8_1] = 9,   [QG_BLOCK_Q4_0] = 2,  [QG_BLOCK_Q4_1] = 3,
        [QG_BLOCK_Q5_0] = 6,  [QG_BLOCK_Q5_1] = 7, [QG_BLOCK_MXFP4] = 39, [QG_BLOCK_Q4_K] = 12, [QG_BLOCK_Q6_K] = 14};
    const int type = (unsigned)f < QG_BLOCK_FORMAT_COUNT ? types[f] : -1;
    const ggml_traits *t = traits_of(g, type);
    return t && t->type_name && strcmp(t->type_name, qg_block_format_name(f)) == 0 ? type : -1;
}

qg_ggml_row_fn qg_ggml_from_float(void *cpu, int type) {
    void (*init)(void) = cpu ? (void (*)(void))dlsym(cpu, "ggml_cpu_init") : NULL;
    const ggml_traits_cpu *(*traits)(int) =
        cpu ? (const ggml_traits_cpu *(*)(int))dlsym(cpu, "ggml_get_type_traits_cpu") : NULL;
    if (!init || !traits || type < 0)
        return NULL;
    init();
    const ggml_traits_cpu *t = traits(type);
    return t ? t->from_float : NULL;
}

qg_ggml_row_fn qg_ggml_from_float_ref(const qg_ggml *g, int type) {
    const ggml_traits *t = traits_of(g, type);
    return t ? t->from_float_ref : NULL;
}

qg_ggml_row_fn qg_ggml_to_float(const qg_ggml *g, int type) {
    const ggml_traits *t = traits_of(g, type);
    return t ? t->to_float : NULL;
}

void qg_ggml_sample_row(float *x, size_t n) {
    uint64_t state = 0x9E3779B97F4A7C15ull;
    float scale = 1.0f;
    for (size_t i = 0; i < n; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        if (i % 32 == 0)
            scale = ldexpf(1.0f, (int)(state >> 59) - 8);
        x[i] = ((float)(state >> 40) * 0x1p-24f * 2.0f - 1.0f) * scale;
    }
}
