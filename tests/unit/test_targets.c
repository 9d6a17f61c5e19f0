/* The ISA table: what the generator was compiled with is what targets/
 * says, and no ISA fact (compiler flags, target attributes, LLVM
 * features, triples, sysroots, llvm-mca models, qemu CPU options) is
 * spelled anywhere else in the source tree but targets/ and templates/. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <jansson.h>
#include <stddef.h>
#include <stdlib.h>

#include "../test_json.h"
#include "../test_util.h"
#include "emit_c/isa_spelling.h"
#include "emit_llvm/emit_llvm.h"
#include "emit_llvm/llvm_builder.h"
#include "plan/kernel_loops.h"
#include "targets/target_table.h"

static const char *root; /* the source tree */

#define MAX_FACTS 256
static char facts[MAX_FACTS][160];
static char fact_from[MAX_FACTS][64];
static int nfacts;

static void add_fact(const char *value, const char *from) {
    if (!value || strlen(value) < 4 || nfacts >= MAX_FACTS)
        return;
    for (int i = 0; i < nfacts; i++)
        if (strcmp(facts[i], value) == 0)
            return;
    snprintf(facts[nfacts], sizeof facts[0], "%s", value);
    snprintf(fact_from[nfacts++], sizeof fact_from[0], "%s", from);
}

/* Each word (split at `seps`) of a field as a fact of its own. */
static void add_words(const char *value, const char *seps, const char *from) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", value ? value : "");
    for (char *save = NULL, *w = strtok_r(buf, seps, &save); w; w = strtok_r(NULL, seps, &save))
        add_fact(w, from);
}

static json_t *load(const char *rel) {
    char path[2048];
    snprintf(path, sizeof path, "%s/targets/%s", root, rel);
    return qg_test_load_json(path);
}

static void test_table_matches_files(void) {
    for (qg_isa isa = QG_ISA_SCALAR; isa < QG_ISA_COUNT; isa++) {
        char rel[64];
        snprintf(rel, sizeof rel, "%s.json", qg_isa_name(isa));
        json_t *d = load(rel);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        const qg_target *t = qg_target_of(isa);
        CU_ASSERT_STRING_EQUAL(qg_test_json_str(d, "isa"), t->name);
        /* the feature set, written once, reaches each tool's form of it */
        json_t *features = json_object_get(d, "features");
        CU_ASSERT_TRUE_FATAL(json_is_array(features));
        CU_ASSERT_EQUAL(json_array_size(features) == 0, t->cflags[0] == 0);
        for (size_t k = 0; k < json_array_size(features); k++) {
            const char *f = json_string_value(json_array_get(features, k));
            char plus[64];
            snprintf(plus, sizeof plus, "+%s", f);
            CU_ASSERT_PTR_NOT_NULL(strstr(t->clang_target, f));
            CU_ASSERT_PTR_NOT_NULL(strstr(t->cflags, f));
            CU_ASSERT_PTR_NOT_NULL(strstr(t->llvm_features, plus));
        }
        if (isa != QG_ISA_SCALAR) /* LLVM's set extends the arch's */
            CU_ASSERT_EQUAL(
                strncmp(t->llvm_features, qg_arch_of(isa)->llvm_features, strlen(qg_arch_of(isa)->llvm_features)), 0);
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(d, "lanes")), t->lanes);
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(d, "unroll")), t->unroll);
        /* register groups: per op as the file says, a power of two up to 8 (RVV), else 1;
         * only an ISA with scalable strips has them */
        json_t *lmul = json_object_get(d, "lmul");
        CU_ASSERT_TRUE(!lmul || (json_is_object(lmul) && t->lanes == 0));
        for (qg_kernel_op op = 0; op < QG_K_OP_COUNT; op++) {
            json_t *l = lmul ? json_object_get(lmul, qg_kernel_op_name(op)) : NULL;
            const int want = l ? (int)json_integer_value(l) : 1;
            CU_ASSERT_EQUAL(qg_target_lmul(t, qg_kernel_op_name(op)), want);
            CU_ASSERT_TRUE(want == 1 || want == 2 || want == 4 || want == 8);
        }
        CU_ASSERT_EQUAL(lmul ? json_object_size(lmul) : 0, lmul ? (size_t)QG_K_OP_COUNT : 0);
        if (isa != QG_ISA_SCALAR) {
            const qg_llvm_target *lt = qg_llvm_target_of(isa, NULL);
            CU_ASSERT_PTR_NOT_NULL_FATAL(lt);
            CU_ASSERT_STRING_EQUAL(lt->features, t->llvm_features);
            CU_ASSERT_STRING_EQUAL(lt->triple, qg_arch_of(isa)->triple);
        }
        /* every LLVM spelling is one the backend knows */
        lx_isa shape;
        qg_error err = {0};
        CU_ASSERT_EQUAL(lx_isa_of(isa, &shape, &err), QG_OK);
        if (err.code)
            fprintf(stderr, "\n  %s\n", err.message);
        /* the NaN rule of min/max is the one the LLVM spelling gives (the plans rely on it) */
        CU_ASSERT_STRING_EQUAL(qg_test_json_str(d, "minmax_nan"), t->minmax_nan);
        const char *mm = t->llvm_minmax;
        const char *nan_rule = strcmp(mm, "minimum") == 0  ? "propagate"
                               : strcmp(mm, "minnum") == 0 ? "number"
                                                           : "second";
        CU_ASSERT_STRING_EQUAL(t->minmax_nan, nan_rule);
        /* rounding by conversions needs the conversion that saturates, NaN to INT32_MAX */
        CU_ASSERT_STRING_EQUAL(qg_test_json_str(d, "round_even"), t->round_even);
        const char *rne = t->round_even;
        CU_ASSERT_TRUE(strcmp(rne, "instruction") == 0 || strcmp(rne, "magic_add") == 0 ||
                       (strcmp(rne, "conversions") == 0 && strcmp(t->round_cvt, "saturating") == 0));
        /* a NaN test once per main loop needs the C spelling of that test */
        CU_ASSERT_STRING_EQUAL(qg_test_json_str(d, "nan_check"), t->nan_check);
        CU_ASSERT_TRUE(strcmp(t->nan_check, "per_vector") == 0 ||
                       (strcmp(t->nan_check, "per_iteration") == 0 && qg_isa_spelling_of(isa)->any_nan4 != NULL));
        /* ... and the row reaches the plan: fake_quant of float32 qint8 tests NaN once exactly there */
        qg_spec q8;
        qg_error perr;
        qg_plan fq;
        CU_ASSERT_EQUAL_FATAL(qg_spec_load_string("{\"name\": \"n\", \"dtype\": \"qint8\"}", "n", NULL, 0, &q8, &perr),
                              QG_OK);
        CU_ASSERT_EQUAL_FATAL(qg_plan_build_for(&q8, isa, QG_K_FAKE_QUANT, &fq, &perr), QG_OK);
        CU_ASSERT_EQUAL(fq.out_ordered >= 0, strcmp(t->nan_check, "per_iteration") == 0);
        /* the main loop's groups: four vectors (NEON's four lanes for masks),
         * and a C spelling for each; an LLVM narrowing where a store adds z */
        const qg_isa_spelling *is = qg_isa_spelling_of(isa);
        for (int dt = 0; dt < QG_DTYPE_COUNT; dt++) {
            CU_ASSERT_EQUAL(qg_target_lists(t->group_store, qg_dtype_name((qg_dtype)dt)), is->store_q4[dt] != NULL);
            CU_ASSERT_EQUAL(qg_target_lists(t->group_store_adds_z, qg_dtype_name((qg_dtype)dt)),
                            is->store_q4_z[dt] != NULL);
        }
        CU_ASSERT_EQUAL(qg_target_lists(t->group_mask, "bits"), is->mask4_to_bits != NULL);
        CU_ASSERT_EQUAL(qg_target_lists(t->group_mask, "bytes"), is->store_mask4_bytes != NULL);
        if (*t->group_store || *t->group_mask || strcmp(t->nan_check, "per_iteration") == 0)
            CU_ASSERT_EQUAL(t->unroll, 4);
        if (*t->group_mask)
            CU_ASSERT_EQUAL(t->lanes, 4);
        if (*t->group_store_adds_z)
            CU_ASSERT_STRING_NOT_EQUAL(t->llvm_narrow4, "");
        /* the row's tail reaches the loops both backends lower */
        const char *tail = qg_test_json_str(d, "tail");
        CU_ASSERT_TRUE(strcmp(tail, "") == 0 || strcmp(tail, "masked") == 0 || strcmp(tail, "buffered") == 0 ||
                       strcmp(tail, "evl") == 0);
        qg_kernel_loops lp;
        qg_kernel_loops_of(&q8, isa, QG_K_QUANTIZE, &lp);
        CU_ASSERT_EQUAL(lp.tail_kind, strcmp(tail, "buffered") == 0 ? QG_TAIL_BUFFERED
                                      : strcmp(tail, "evl") == 0    ? QG_TAIL_EVL
                                                                    : QG_TAIL_MASKED);
        json_decref(d);
    }
    /* the scalar file follows the architecture asked for */
    CU_ASSERT_STRING_EQUAL(qg_llvm_target_of(QG_ISA_SCALAR, "riscv64")->abi, "lp64d");
    CU_ASSERT_STRING_EQUAL(qg_llvm_target_of(QG_ISA_SCALAR, "aarch64")->triple, "aarch64-linux-gnu");
    CU_ASSERT_PTR_NULL(qg_llvm_target_of(QG_ISA_SCALAR, "mips"));
}

static void collect_facts(void) {
    for (qg_isa isa = QG_ISA_SCALAR + 1; isa < QG_ISA_COUNT; isa++) {
        const qg_target *t = qg_target_of(isa);
        add_words(t->cflags, " ", t->name);
        add_fact(t->clang_target, t->name);
        add_fact(t->gcc_target, t->name);
        add_fact(t->llvm_features, t->name);
        add_words(t->mca_cpus, ",", t->name);
        /* the ISA's own LLVM intrinsics, role=name */
        char intr[1024];
        snprintf(intr, sizeof intr, "%s", t->llvm_intrinsics);
        for (char *save = NULL, *w = strtok_r(intr, ",", &save); w; w = strtok_r(NULL, ",", &save))
            if (strchr(w, '='))
                add_fact(strchr(w, '=') + 1, t->name);
        /* qemu CPU options, those with a width up to the placeholder */
        char cpu[160];
        snprintf(cpu, sizeof cpu, "%s", t->qemu_cpu);
        for (char *save = NULL, *w = strtok_r(cpu, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
            char *ph = strstr(w, "BITS") ? strstr(w, "BITS") : strstr(w, "BYTES");
            if (ph)
                *ph = 0;
            add_fact(w, t->name);
        }
    }
    for (size_t i = 0; qg_arch_at(i); i++) {
        const qg_arch *a = qg_arch_at(i);
        add_fact(a->triple, a->name);
        add_fact(a->sysroot, a->name);
        add_words(a->baseline_cflags, " ", a->name);
        add_fact(a->llvm_abi, a->name);
        add_words(a->mca_cpus, ",", a->name);
    }
}

static int offenders;

static int scan(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)ftw;
    const char *rel = path + strlen(root) + 1;
    if (flag == FTW_D) /* skip build trees and the places facts belong */
        return 0;
    if (flag != FTW_F || st->st_size > (1 << 20))
        return 0;
    static const char *const skip[] = {"build", "targets/", "templates/",
                                       "docs/", ".git/",    "tests/unit/test_targets.c"};
    for (size_t k = 0; k < sizeof skip / sizeof skip[0]; k++)
        if (strncmp(rel, skip[k], strlen(skip[k])) == 0)
            return 0;
    const char *dot = strrchr(rel, '.');
    const bool code = dot && (strcmp(dot, ".c") == 0 || strcmp(dot, ".h") == 0 || strcmp(dot, ".cmake") == 0 ||
                              strcmp(dot, ".sh") == 0 || strcmp(dot, ".py") == 0 || strcmp(dot, ".in") == 0);
    const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
    if (!code && strcmp(base, "CMakeLists.txt") != 0 && strcmp(base, "Makefile") != 0)
        return 0;
    static char text[1 << 20];
    qg_test_slurp(path, text, sizeof text);
    for (int i = 0; i < nfacts; i++) {
        if (strstr(text, facts[i])) {
            fprintf(stderr, "\n%s spells \"%s\" (a fact of %s: write it in targets/ and read it from there)", rel,
                    facts[i], fact_from[i]);
            offenders++;
        }
    }
    return 0;
}

static void test_facts_only_in_targets(void) {
    collect_facts();
    CU_ASSERT_TRUE(nfacts > 20);
    offenders = 0;
    CU_ASSERT_EQUAL(nftw(root, scan, 16, FTW_PHYS), 0);
    if (offenders)
        fputc('\n', stderr);
    CU_ASSERT_EQUAL(offenders, 0);
}

/* The backends and plans decide by the table's fields (llvm_round_cvt,
 * lanes, ...), never by which vector ISA they build for: an ISA is a row.
 * The one file that names them maps each ISA to its templates/<isa>.def. */
static int branching_files, lowering_files;

static int scan_lowering(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)ftw;
    const char *dot = strrchr(path, '.');
    if (flag != FTW_F || !dot || (strcmp(dot, ".c") != 0 && strcmp(dot, ".h") != 0) ||
        strstr(path, "emit_c/isa_tables.c"))
        return 0;
    static char text[1 << 20];
    qg_test_slurp(path, text, sizeof text);
    lowering_files++;
    for (qg_isa isa = QG_ISA_SCALAR + 1; isa < QG_ISA_COUNT; isa++) {
        char name[32] = "QG_ISA_";
        for (const char *c = qg_isa_name(isa); *c; c++)
            name[strlen(name)] = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
        if (strstr(text, name)) {
            fprintf(stderr, "\n  %s branches on %s", path + strlen(root) + 1, name);
            branching_files++;
        }
    }
    return 0;
}

static void test_no_backend_branches_on_an_isa(void) {
    static const char *const dirs[] = {"generator/plan", "generator/emit_llvm", "generator/emit_c"};
    branching_files = lowering_files = 0;
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", root, dirs[d]);
        CU_ASSERT_EQUAL(nftw(path, scan_lowering, 8, FTW_PHYS), 0);
    }
    CU_ASSERT_TRUE(lowering_files > 20);
    CU_ASSERT_EQUAL(branching_files, 0);
}

/* Every row of templates/llvm/spellings.c is one some ISA's row names:
 * code no ISA reaches would go untested by the kernel tests. */
static void test_every_llvm_spelling_is_named(void) {
    static const struct {
        const lx_spelling *rows;
        size_t field; /* of qg_target */
    } tables[] = {{lx_minmax_spellings, offsetof(qg_target, llvm_minmax)},
                  {lx_round_cvt_spellings, offsetof(qg_target, llvm_round_cvt)},
                  {lx_narrow4_spellings, offsetof(qg_target, llvm_narrow4)},
                  {lx_mask_bytes_spellings, offsetof(qg_target, llvm_mask_bytes)},
                  {lx_mask_bits_spellings, offsetof(qg_target, llvm_mask_bits)}};
    int rows = 0;
    for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++)
        for (const lx_spelling *row = tables[k].rows; row->name; row++, rows++) {
            bool named = false;
            for (qg_isa isa = QG_ISA_SCALAR; isa < QG_ISA_COUNT && !named; isa++) {
                const char *value = *(const char *const *)((const char *)qg_target_of(isa) + tables[k].field);
                named = strcmp(value, row->name) == 0;
            }
            if (!named)
                fprintf(stderr, "\n  spelling \"%s\" is named by no targets/<isa>.json", row->name);
            CU_ASSERT_TRUE(named);
        }
    CU_ASSERT_TRUE(rows >= 5 + 7 + 5 + 2 + 3);
}

int main(int argc, char **argv) {
    root = argc > 1 ? argv[1] : ".";
    static const qg_test tests[] = {
        {"the compiled-in table is targets/", test_table_matches_files},
        {"ISA facts are spelled only in targets/ and templates/", test_facts_only_in_targets},
        {"no backend branches on a vector ISA", test_no_backend_branches_on_an_isa},
        {"every LLVM spelling is named by an ISA", test_every_llvm_spelling_is_named}};
    return QG_RUN("targets", tests);
}
