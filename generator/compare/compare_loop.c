/* The main loop of a kernel, read from LLVM-printed assembly (clang -S and
 * the LLVM backend print alike): the innermost loop, closed by a backward
 * branch, with the most instructions. Its instructions are sorted into a
 * mix by mnemonic, and llvm-mca estimates its cycles. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/text_buf.h"
#include "compare.h"

const char *qg_mix_name(int k) {
    static const char *const names[] = {"loads", "stores", "arith", "convert", "shuffle", "other"};
    return k >= 0 && k < QG_MIX_COUNT ? names[k] : "?";
}

typedef struct line {
    const char *p;
    size_t len;
    bool label;
} line;

static bool starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

static bool is_branch(const char *mn, const char *arch) {
    if (strcmp(arch, "x86_64") == 0)
        return mn[0] == 'j';
    if (strcmp(arch, "aarch64") == 0)
        return strcmp(mn, "b") == 0 || starts(mn, "b.") || starts(mn, "cb") || starts(mn, "tbz") || starts(mn, "tbnz");
    return (mn[0] == 'b' && !starts(mn, "bclr") && !starts(mn, "bset")) || strcmp(mn, "j") == 0;
}

static const char *const *pick(const char *arch, const char *const *x86, const char *const *a64,
                               const char *const *rv) {
    return strcmp(arch, "x86_64") == 0 ? x86 : strcmp(arch, "aarch64") == 0 ? a64 : rv;
}

static bool any_prefix(const char *mn, const char *const *list) {
    for (; *list; list++)
        if (starts(mn, *list))
            return true;
    return false;
}

/* arith, convert, shuffle or other for one instruction */
static int classify(const char *mn, const char *operands, const char *arch) {
    static const char *const cvt_x86[] = {"vcvt",     "cvt",       "vpmovsx",  "vpmovzx", "vpmovdb", "vpmovdw",
                                          "vpmovsdb", "vpmovusdb", "vpmovsdw", "vpmovqd", NULL};
    static const char *const shuf_x86[] = {
        "vshuf",      "vpshuf",      "vperm",   "vpperm",  "vpack",      "vpunpck",  "vunpck",  "vextract", "vinsert",
        "vbroadcast", "vpbroadcast", "vpblend", "vblend",  "valign",     "vpalignr", "vpsrldq", "vpslldq",  "vmovddup",
        "vmovshdup",  "vmovsldup",   "vpermt2", "vpermi2", "vpcompress", "vpexpand", NULL};
    static const char *const cvt_a64[] = {"fcvt",  "scvtf", "ucvtf",  "frint", "sxtl",  "uxtl", "xtn",
                                          "sqxtn", "uqxtn", "sqxtun", "sshll", "ushll", NULL};
    static const char *const shuf_a64[] = {"zip", "uzp", "trn", "ext", "tbl", "tbx", "dup", "ins", "rev", NULL};
    static const char *const cvt_rv[] = {"vfcvt", "vfncvt", "vfwcvt", "vsext", "vzext",
                                         "vnsrl", "vnsra",  "vnclip", "vncvt", NULL};
    static const char *const shuf_rv[] = {"vrgather", "vslide", "vcompress", "vmv.v", "vmv1r",
                                          "vmv2r",    "vmv4r",  "vmv8r",     NULL};
    if (any_prefix(mn, pick(arch, cvt_x86, cvt_a64, cvt_rv)))
        return QG_MIX_CONVERT;
    if (any_prefix(mn, pick(arch, shuf_x86, shuf_a64, shuf_rv)))
        return QG_MIX_SHUFFLE;
    if (strcmp(arch, "x86_64") == 0) {
        /* floating-point and SIMD work: VEX/EVEX ("v...") or SSE ("...ss",
         * "...ps", "p..."); moves only move, and general-register and
         * mask-register instructions are "other" */
        const size_t l = strlen(mn);
        if (starts(mn, "vmov") && strstr(operands, "{z}"))
            return QG_MIX_ARITH; /* a zero-masking move is a select (a load as well, if from memory) */
        if (starts(mn, "vmov") || starts(mn, "vmaskmov") || starts(mn, "vzeroupper") || starts(mn, "mov"))
            return QG_MIX_OTHER;
        if (mn[0] == 'v')
            return QG_MIX_ARITH;
        if (l > 2 && (strcmp(mn + l - 2, "ss") == 0 || strcmp(mn + l - 2, "ps") == 0 || strcmp(mn + l - 2, "sd") == 0 ||
                      strcmp(mn + l - 2, "pd") == 0))
            return QG_MIX_ARITH;
        if (mn[0] == 'p' && !starts(mn, "push") && !starts(mn, "pop") && !starts(mn, "pdep") && !starts(mn, "pext"))
            return QG_MIX_ARITH;
        return QG_MIX_OTHER;
    }
    if (strcmp(arch, "aarch64") == 0) {
        /* vector work names NEON v registers with an arrangement (v0.4s)
         * or SVE z registers (z0.s) */
        bool vector = false;
        for (const char *v = operands; *v && !vector; v++)
            vector = (*v == 'v' || *v == 'z') && v[1] >= '0' && v[1] <= '9' && strchr(v, '.') && !starts(mn, "ld") &&
                     !starts(mn, "st") && !starts(mn, "mov");
        return vector ? QG_MIX_ARITH : QG_MIX_OTHER;
    }
    if (mn[0] == 'v' && !starts(mn, "vsetvl") && !starts(mn, "vsetivl") && !starts(mn, "vl") && !starts(mn, "vs"))
        return QG_MIX_ARITH;
    return QG_MIX_OTHER;
}

/* Splits text into lines: labels and instructions (directives and
 * comments dropped). */
static size_t split(const char *text, size_t len, const char *arch, line *out, size_t cap) {
    size_t n = 0;
    const char *end = text + len;
    for (const char *p = text; p < end && n < cap;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        const char *s = p;
        size_t sl = l;
        while (sl && (*s == ' ' || *s == '\t'))
            s++, sl--;
        /* comments: '#' on x86 and RISC-V, "//" on AArch64 */
        const char *c = NULL;
        for (size_t k = 0; k < sl; k++)
            if ((strcmp(arch, "aarch64") != 0 && s[k] == '#') ||
                (strcmp(arch, "aarch64") == 0 && k + 1 < sl && s[k] == '/' && s[k + 1] == '/')) {
                c = s + k;
                break;
            }
        if (c)
            sl = (size_t)(c - s);
        while (sl && (s[sl - 1] == ' ' || s[sl - 1] == '\t'))
            sl--;
        if (sl && s[sl - 1] == ':' && s == p)
            out[n++] = (line){s, sl - 1, true};
        else if (sl && s != p && s[0] != '.')
            out[n++] = (line){s, sl, false};
        p += l + 1;
    }
    return n;
}

static void mnemonic(const line *ln, char *mn, size_t cap, const char **operands) {
    size_t k = 0;
    while (k < ln->len && ln->p[k] != ' ' && ln->p[k] != '\t' && k + 1 < cap) {
        mn[k] = ln->p[k];
        k++;
    }
    mn[k] = 0;
    *operands = ln->p + k;
}

/* The text of function `name`: from its label to the next .Lfunc_end. */
static const char *function_text(const char *asm_text, const char *name, size_t *len) {
    char label[160];
    snprintf(label, sizeof label, "\n%s:", name);
    const char *start = strstr(asm_text, label);
    if (!start)
        return NULL;
    start++;
    const char *end = strstr(start, "\n.Lfunc_end");
    *len = end ? (size_t)(end - start) : strlen(start);
    return start;
}

static bool is_unconditional(const char *mn, const char *arch) {
    if (strcmp(arch, "x86_64") == 0)
        return strcmp(mn, "jmp") == 0 || strcmp(mn, "jmpq") == 0;
    if (strcmp(arch, "aarch64") == 0)
        return strcmp(mn, "b") == 0 || strcmp(mn, "br") == 0;
    return strcmp(mn, "j") == 0 || strcmp(mn, "jr") == 0;
}

static bool is_return(const char *mn) { return strcmp(mn, "ret") == 0 || strcmp(mn, "retq") == 0; }

static bool is_call(const char *mn, const char *arch) {
    if (strcmp(arch, "x86_64") == 0)
        return starts(mn, "call");
    if (strcmp(arch, "aarch64") == 0)
        return strcmp(mn, "bl") == 0 || strcmp(mn, "blr") == 0;
    return strcmp(mn, "call") == 0 || strcmp(mn, "jal") == 0 || strcmp(mn, "jalr") == 0;
}

enum { MAX_BLOCKS = 256, WORDS = MAX_BLOCKS / 64 };

typedef struct block {
    size_t first, last; /* line range, inclusive */
    int succ[2], nsucc;
    int insns;
    bool calls;
    uint64_t dom[WORDS];
} block;

static bool has(const uint64_t *set, int b) { return (set[b / 64] >> (b % 64)) & 1u; }
static void put(uint64_t *set, int b) { set[b / 64] |= (uint64_t)1 << (b % 64); }

/* The branch's target label (its last operand). */
static void target_of(const line *ln, const char *ops, const char **t, size_t *tl) {
    const char *end = ln->p + ln->len, *p = end;
    while (p > ops && p[-1] != ' ' && p[-1] != '\t' && p[-1] != ',')
        p--;
    *t = p;
    *tl = (size_t)(end - p);
}

/* Natural loops of one function (back edges to a dominating header); the
 * innermost one with the most instructions goes to *loop if it beats
 * what is there. */
/* Basic blocks: a label starts one, a branch or return ends one. */
static int split_blocks(const line *lines, size_t n, const char *arch, block *b) {
    int nb = 0;
    bool closed = true;
    for (size_t i = 0; i < n; i++) {
        if (lines[i].label || closed) {
            if (nb == MAX_BLOCKS)
                break;
            b[nb].first = b[nb].last = i;
            b[nb].calls = false;
            nb++;
            closed = false;
        }
        block *cur = &b[nb - 1];
        cur->last = i;
        if (lines[i].label)
            continue;
        cur->insns++;
        char mn[32];
        const char *ops;
        mnemonic(&lines[i], mn, sizeof mn, &ops);
        cur->calls |= is_call(mn, arch);
        closed = is_branch(mn, arch) || is_return(mn);
    }
    return nb;
}

/* Each block's successors: its branch target, and the next block when
 * control falls through. */
static void link_blocks(const line *lines, const char *arch, block *b, int nb) {
    for (int k = 0; k < nb; k++) {
        block *cur = &b[k];
        cur->nsucc = 0;
        const line *last = &lines[cur->last];
        char mn[32] = "";
        const char *ops = "";
        if (!last->label)
            mnemonic(last, mn, sizeof mn, &ops);
        bool falls = !is_return(mn) && !is_unconditional(mn, arch);
        if (!last->label && is_branch(mn, arch)) {
            const char *t;
            size_t tl;
            target_of(last, ops, &t, &tl);
            for (int h = 0; h < nb; h++)
                if (lines[b[h].first].label && lines[b[h].first].len == tl && strncmp(lines[b[h].first].p, t, tl) == 0)
                    cur->succ[cur->nsucc++] = h;
        }
        if (falls && k + 1 < nb && cur->nsucc < 2)
            cur->succ[cur->nsucc++] = k + 1;
    }
}

/* Dominator sets, iteratively. */
static void dominators(block *b, int nb) {
    for (int k = 0; k < nb; k++) {
        memset(b[k].dom, k ? 0xFF : 0, sizeof b[k].dom);
        if (!k)
            put(b[k].dom, 0);
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (int k = 1; k < nb; k++) {
            uint64_t d[WORDS];
            memset(d, 0xFF, sizeof d);
            bool any = false;
            for (int p = 0; p < nb; p++)
                for (int e = 0; e < b[p].nsucc; e++)
                    if (b[p].succ[e] == k) {
                        any = true;
                        for (int w = 0; w < WORDS; w++)
                            d[w] &= b[p].dom[w];
                    }
            if (!any)
                memset(d, 0, sizeof d);
            put(d, k);
            if (memcmp(d, b[k].dom, sizeof d) != 0) {
                memcpy(b[k].dom, d, sizeof d);
                changed = true;
            }
        }
    }
}

enum { MAX_LOOPS = 64 };

/* The natural loops of the back edges u -> h: their blocks and headers. */
typedef struct loops_t {
    uint64_t body[MAX_LOOPS][WORDS];
    int header[MAX_LOOPS], latch[MAX_LOOPS], n;
    int work[MAX_LOOPS], insns[MAX_LOOPS], mix[MAX_LOOPS][QG_MIX_COUNT];
    bool calls[MAX_LOOPS];
} loops_t;

static void natural_loops(const block *b, int nb, loops_t *L) {
    L->n = 0;
    for (int u = 0; u < nb && L->n < MAX_LOOPS; u++)
        for (int e = 0; e < b[u].nsucc; e++) {
            const int h = b[u].succ[e];
            if (!has(b[u].dom, h) || L->n >= MAX_LOOPS)
                continue;
            uint64_t *set = L->body[L->n];
            memset(set, 0, sizeof L->body[0]);
            put(set, h);
            int stack[MAX_BLOCKS], sp = 0;
            if (!has(set, u))
                put(set, u), stack[sp++] = u;
            while (sp) {
                const int x = stack[--sp];
                for (int p = 0; p < nb; p++)
                    for (int f = 0; f < b[p].nsucc; f++)
                        if (b[p].succ[f] == x && !has(set, p)) {
                            put(set, p);
                            stack[sp++] = p;
                        }
            }
            L->header[L->n] = h;
            L->latch[L->n++] = u;
        }
}

/* Whether block k counts in loop l: a block of l's own (in no loop nested
 * in l) that calls out of line and that not every iteration passes
 * through (it does not dominate the latch) is a rare path, such as a
 * packed mask's strip off the byte grid; llvm-mca would charge its call
 * 100 cycles on every iteration. */
static bool counts(const loops_t *L, int l, const block *b, int k) {
    if (!has(L->body[l], k))
        return false;
    if (!b[k].calls || has(b[L->latch[l]].dom, k))
        return true;
    for (int m = 0; m < L->n; m++)
        if (L->header[m] != L->header[l] && has(L->body[l], L->header[m]) && has(L->body[m], k))
            return true;
    return false;
}

/* The work of a loop: its floating-point and vector instructions; loops
 * without any (the bit loops of packed masks) do not count as loops of
 * their own, so the vector loop around them is the innermost. */
static void loop_work(const line *lines, const char *arch, const block *b, int nb, loops_t *L) {
    for (int l = 0; l < L->n; l++) {
        L->work[l] = L->insns[l] = 0;
        L->calls[l] = false;
        memset(L->mix[l], 0, sizeof L->mix[l]);
        for (int k = 0; k < nb; k++) {
            if (!counts(L, l, b, k))
                continue;
            L->insns[l] += b[k].insns;
            for (size_t i = b[k].first; i <= b[k].last; i++) {
                if (lines[i].label)
                    continue;
                char mn[32], operands[256];
                const char *ops;
                mnemonic(&lines[i], mn, sizeof mn, &ops);
                /* the operands end with their line (the text goes on past it) */
                snprintf(operands, sizeof operands, "%.*s", (int)(lines[i].len - (size_t)(ops - lines[i].p)), ops);
                L->mix[l][classify(mn, operands, arch)]++;
                L->calls[l] |= is_call(mn, arch);
            }
        }
        L->work[l] = L->mix[l][QG_MIX_ARITH] + L->mix[l][QG_MIX_CONVERT] + L->mix[l][QG_MIX_SHUFFLE];
    }
}

/* The innermost loop with the most work (loops doing no such work at all
 * are considered only when no other is there, and loops that call out,
 * such as a buffered tail's memcpy in a walk over one-vector runs, only
 * when no call-free loop works: llvm-mca cannot see into the callee, and
 * a kernel's steady state calls nothing); -1 when there is none. */
static int innermost(const loops_t *L) {
    bool any_work = false, any_plain = false;
    for (int l = 0; l < L->n; l++) {
        any_work |= L->work[l] > 0;
        any_plain |= L->work[l] > 0 && !L->calls[l];
    }
    int best = -1;
    for (int l = 0; l < L->n; l++) {
        if ((any_work && L->work[l] == 0) || (any_plain && L->calls[l]))
            continue;
        bool inner = true;
        for (int m = 0; m < L->n && inner; m++)
            if ((L->work[m] > 0 || !any_work) && L->header[m] != L->header[l] && has(L->body[l], L->header[m]))
                inner = false;
        if (inner &&
            (best < 0 || L->work[l] > L->work[best] || (L->work[l] == L->work[best] && L->insns[l] > L->insns[best])))
            best = l;
    }
    return best;
}

static void loops_of(const line *lines, size_t n, const char *arch, qg_loop *loop) {
    block *b = calloc(MAX_BLOCKS, sizeof *b);
    loops_t *L = malloc(sizeof *L);
    if (!b || !L) {
        free(b);
        free(L);
        return;
    }
    const int nb = split_blocks(lines, n, arch, b);
    link_blocks(lines, arch, b, nb);
    dominators(b, nb);
    natural_loops(b, nb, L);
    loop_work(lines, arch, b, nb, L);
    const int best = innermost(L);
    if (best >= 0 &&
        (L->work[best] > loop->work || (L->work[best] == loop->work && L->insns[best] > loop->instructions))) {
        qg_text t = {0};
        for (int k = 0; k < nb; k++)
            if (counts(L, best, b, k))
                for (size_t i = b[k].first; i <= b[k].last; i++)
                    if (!lines[i].label)
                        qg_text_printf(&t, "\t%.*s\n", (int)lines[i].len, lines[i].p);
        free(loop->text);
        loop->text = t.p;
        loop->instructions = L->insns[best];
        loop->work = L->work[best];
        memcpy(loop->mix, L->mix[best], sizeof loop->mix);
        loop->found = true;
        loop->nests = false;
        for (int l = 0; l < L->n; l++)
            for (int m = 0; m < L->n; m++)
                loop->nests |=
                    L->work[l] > 0 && L->work[m] > 0 && L->header[m] != L->header[l] && has(L->body[l], L->header[m]);
    }
    free(b);
    free(L);
}

void qg_loop_find(const char *asm_text, const char *const *functions, size_t nfunctions, const char *arch,
                  qg_loop *loop) {
    memset(loop, 0, sizeof *loop);
    enum { CAP = 20000 };
    line *lines = malloc(CAP * sizeof *lines);
    if (!lines)
        return;
    for (size_t f = 0; f < nfunctions; f++) {
        size_t len;
        const char *text = function_text(asm_text, functions[f], &len);
        if (!text)
            continue;
        size_t n = split(text, len, arch, lines, CAP);
        loops_of(lines, n, arch, loop);
    }
    free(lines);
}

void qg_loop_free(qg_loop *loop) {
    free(loop->text);
    loop->text = NULL;
}

/* Reads "Label:  value" from mca's summary. */
static double summary_value(const char *text, const char *label) {
    const char *p = strstr(text, label);
    return p ? strtod(p + strlen(label), NULL) : 0.0;
}

void qg_loop_mca(const char *mca, const char *work_dir, const qg_loop *loop, const char *triple, const char *cpu,
                 const char *features, const char *arch, int lmul, qg_mca_result *res, int *loads, int *stores) {
    memset(res, 0, sizeof *res);
    snprintf(res->cpu, sizeof res->cpu, "%s", cpu);
    char path[4200];
    snprintf(path, sizeof path, "%s/loop-%s.s", work_dir, cpu);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(res->note, sizeof res->note, "cannot write %.120s", path);
        return;
    }
    if (strcmp(arch, "riscv64") == 0) /* the vector shape mca cannot see through vsetvli */
        fprintf(f, "# LLVM-MCA-RISCV-LMUL M%d\n# LLVM-MCA-RISCV-SEW E32\n", lmul);
    fputs(loop->text, f);
    fclose(f);
    char a_triple[96], a_cpu[64], a_attr[160];
    snprintf(a_triple, sizeof a_triple, "-mtriple=%s", triple);
    snprintf(a_cpu, sizeof a_cpu, "-mcpu=%s", cpu);
    snprintf(a_attr, sizeof a_attr, "-mattr=%s", features);
    char *argv[8] = {(char *)mca, a_triple, a_cpu, "-iterations=100"};
    int argc = 4;
    if (features[0])
        argv[argc++] = a_attr;
    argv[argc++] = path;
    argv[argc] = NULL;
    char *out = NULL;
    int rc = qg_cmp_run(argv, &out);
    if (!out) {
        snprintf(res->note, sizeof res->note, "llvm-mca did not run");
        return;
    }
    if (strstr(out, "is not a recognized processor")) {
        snprintf(res->note, sizeof res->note, "llvm-mca (LLVM 19) has no model for %s", cpu);
    } else if (rc != 0) {
        const char *e = strstr(out, "error:");
        snprintf(res->note, sizeof res->note, "llvm-mca failed: %.120s", e ? e : out);
        for (char *c = res->note; *c; c++)
            if (*c == '\n')
                *c = ' ';
    } else {
        const double iters = summary_value(out, "Iterations:"), cycles = summary_value(out, "Total Cycles:");
        if (iters > 0 && cycles > 0) {
            res->ok = true;
            res->cycles_per_iteration = cycles / iters;
        } else {
            snprintf(res->note, sizeof res->note, "llvm-mca printed no cycle count");
        }
        /* MayLoad / MayStore columns of the instruction table */
        const char *hdr = strstr(out, "[1]    [2]    [3]    [4]    [5]");
        if (hdr && loads && stores) {
            const char *line_start = hdr;
            const size_t col4 = (size_t)(strstr(hdr, "[4]") - hdr), col5 = (size_t)(strstr(hdr, "[5]") - hdr);
            *loads = *stores = 0;
            line_start = strchr(hdr, '\n');
            while (line_start && line_start[1] != '\n' && line_start[1]) {
                const char *l = line_start + 1;
                const char *nl = strchr(l, '\n');
                size_t ll = nl ? (size_t)(nl - l) : strlen(l);
                if (ll > col5) {
                    *loads += l[col4 + 1] == '*' || l[col4] == '*';
                    *stores += l[col5 + 1] == '*' || l[col5] == '*';
                }
                line_start = nl;
            }
        }
    }
    free(out);
}
