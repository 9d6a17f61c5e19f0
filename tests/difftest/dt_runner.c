/* The differential tester's runner for a foreign architecture, run under
 * qemu-user (or node's WASI for wasm32). qgen-difftest links it per spec
 * with the generated C of one ISA and a table file it writes (dt_spec: the
 * spec in the generator's own C initializer; dt_table: the kernels), then
 * runs
 *
 *   dt_runner SEED STEP                  every case drawn from SEED
 *   dt_runner --case OP N INNER CSEED    one case, shrunk to its shortest failing length
 *
 * and reads its report: "dt: cases C values V mismatches M", and for a
 * mismatch "dt: first OP N INNER CSEED INDEX WHAT". The reference runs
 * here too (libqgen_rt built for the architecture); the cases and data are
 * the host's (dt_check.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_check.h"

extern const qg_spec *const dt_spec;
extern const dt_kernels dt_table;

static unsigned long long number(const char *s) { return strtoull(s, NULL, 0); }

int main(int argc, char **argv) {
    const qg_spec sp = *dt_spec;
    qg_error err;
    if (qg_spec_validate(&sp, &err) != QG_OK) {
        fprintf(stderr, "dt_runner: %s\n", err.message);
        return 2;
    }
    dt_tally t = {0};
    if (argc == 3) {
        dt_run_seed(&sp, &dt_table, number(argv[1]), (size_t)number(argv[2]), &t);
    } else if (argc == 6 && strcmp(argv[1], "--case") == 0) {
        dt_case c = {(dt_op)number(argv[2]), (size_t)number(argv[3]), (size_t)number(argv[4]), number(argv[5])};
        if (dt_run_case(&sp, &dt_table, &c, &t)) {
            c = dt_shrink_length(&sp, &dt_table, c);
            t = (dt_tally){0};
            dt_run_case(&sp, &dt_table, &c, &t);
        }
    } else {
        fprintf(stderr, "usage: dt_runner SEED STEP | dt_runner --case OP N INNER CSEED\n");
        return 2;
    }
    printf("dt: cases %llu values %llu mismatches %llu\n", (unsigned long long)t.cases, (unsigned long long)t.values,
           (unsigned long long)t.mismatches);
    if (t.mismatches)
        printf("dt: first %d %zu %zu %llu %zu %s\n", (int)t.first.c.op, t.first.c.n, t.first.c.inner,
               (unsigned long long)t.first.c.seed, t.first.index, t.first.what);
    return t.mismatches ? 1 : 0;
}
