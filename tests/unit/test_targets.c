/* targets/<isa>.json and the LLVM backend's target table say the same. */
#include <jansson.h>

#include "../test_util.h"
#include "emit_llvm/emit_llvm.h"

static const char *dir;

static void test_descriptors_match(void) {
    static const qg_isa isas[] = {QG_ISA_AVX2, QG_ISA_AVX512, QG_ISA_NEON, QG_ISA_RVV};
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.json", dir, qg_isa_name(isas[i]));
        json_error_t jerr;
        json_t *d = json_load_file(path, 0, &jerr);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        const qg_llvm_target *t = qg_llvm_target_of(isas[i], NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        const struct {
            const char *key, *want;
        } fields[] = {{"isa", qg_isa_name(isas[i])}, {"triple", t->triple}, {"cpu", t->cpu},
                      {"features", t->features},     {"abi", t->abi},       {"mca_cpu", t->mca_cpus}};
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
            const char *got = json_string_value(json_object_get(d, fields[f].key));
            if (!got || strcmp(got, fields[f].want) != 0)
                fprintf(stderr, "\n%s: %s is \"%s\", the LLVM backend uses \"%s\"\n", path, fields[f].key,
                        got ? got : "(missing)", fields[f].want);
            CU_ASSERT_TRUE(got && strcmp(got, fields[f].want) == 0);
        }
        json_decref(d);
    }
    /* the scalar file follows the architecture asked for */
    CU_ASSERT_STRING_EQUAL(qg_llvm_target_of(QG_ISA_SCALAR, "riscv64")->abi, "lp64d");
    CU_ASSERT_STRING_EQUAL(qg_llvm_target_of(QG_ISA_SCALAR, "aarch64")->triple, "aarch64-linux-gnu");
    CU_ASSERT_PTR_NULL(qg_llvm_target_of(QG_ISA_SCALAR, "mips"));
}

int main(int argc, char **argv) {
    dir = argc > 1 ? argv[1] : "targets";
    static const qg_test tests[] = {{"targets/*.json agree with the LLVM backend", test_descriptors_match}};
    return QG_RUN("targets", tests);
}
