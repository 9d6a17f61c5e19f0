/* qgen targets: the ISA table (targets/), one tab-separated row per ISA,
 * for people choosing --targets and for scripts that build and run the
 * generated files (scripts/demo.sh). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../targets/target_table.h"
#include "cli.h"

static const char help[] = "usage: qgen targets\n"
                           "\n"
                           "Prints the ISA table, one tab-separated row per ISA after a header row:\n"
                           "isa, arch, lanes (0 = scalable), unroll, triple, clang_flags, baseline_cflags,\n"
                           "qemu, sysroot, qemu_cpu (BITS/BYTES stand for the vector width), test_widths,\n"
                           "mca_cpus, runner (node-wasi: node with scripts/wasi-run.mjs), link_flags.\n"
                           "Empty fields print as -.\n";

static const char *or_dash(const char *s) { return s && s[0] ? s : "-"; }

static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {0}};
const qg_cli_command_info qg_cmd_targets_info = {"targets", help, opts, "h"};

int qg_cmd_targets(int argc, char **argv) {
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(help, stdout);
        return QG_EXIT_OK;
    }
    if (argc > 1)
        return qg_cli_failf("targets: unexpected argument \"%s\"; expected none (see qgen targets --help)", argv[1]);
    puts("isa\tarch\tlanes\tunroll\ttriple\tclang_flags\tbaseline_cflags\tqemu\tsysroot\tqemu_cpu\ttest_widths\t"
         "mca_cpus\trunner\tlink_flags");
    for (qg_isa isa = QG_ISA_SCALAR; isa < QG_ISA_COUNT; isa++) {
        const qg_target *t = qg_target_of(isa);
        const qg_arch *a = isa == QG_ISA_SCALAR ? qg_arch_named(qg_host_arch()) : qg_arch_of(isa);
        printf("%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t->name, a ? a->name : "-", t->lanes,
               t->unroll, or_dash(a ? a->triple : NULL), or_dash(a ? a->clang_flags : NULL),
               or_dash(a ? a->baseline_cflags : NULL), or_dash(a ? a->qemu : NULL), or_dash(a ? a->sysroot : NULL),
               or_dash(t->qemu_cpu), or_dash(t->test_widths),
               or_dash(t->mca_cpus[0] ? t->mca_cpus
                       : a            ? a->mca_cpus
                                      : NULL),
               or_dash(a ? a->runner : NULL), or_dash(a ? a->link_flags : NULL));
    }
    return QG_EXIT_OK;
}
