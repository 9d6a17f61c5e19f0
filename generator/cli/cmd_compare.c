/* qgen compare: the spec's kernels side by side per op, ISA and backend. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compare/compare.h"
#include "../plan/kernel_plan.h"
#include "../spec/spec_internal.h"
#include "cli.h"
#include "qgen/generate.h"

static const char usage[] =
    "usage: qgen compare --spec S [--ops LIST] [--targets LIST] [--backends c,llvm]\n"
    "                    [--format md|json|html] [-o FILE] [--keep] [--quiet] [--set key=value]...\n"
    "\n"
    "Builds the spec's kernels with both backends for each ISA and reports, per op, ISA and\n"
    "backend: code size, the main loop's instructions, llvm-mca's cycles per element, measured\n"
    "throughput where the ISA runs here, and whether the kernels are right (foreign ISAs under\n"
    "qemu) and agree across backends.\n"
    "  --ops      quantize, dequantize, fake_quant, fake_quant_backward, observe, requantize (default: all)\n"
    "  --targets  all, or a comma-separated list of ISAs (`qgen targets` lists them; default: all)\n"
    "  --backends c, llvm or c,llvm (default: both)\n"
    "  --format   md (default), json (stable, see docs/compare.md) or html (with SVG charts)\n"
    "  --mca-cpu  ISA=CPU[,CPU2]: llvm-mca models for one ISA instead of the defaults (repeatable)\n"
    "  --keep     keep the scratch directory\n"
    "  --quiet    no progress line (it is shown only when stderr is a terminal)\n"
    "Tools: clang-19, llvm-mca-19, qemu-aarch64, qemu-riscv64, node and llvm-nm-19 (wasm) from PATH, or\n"
    "QGEN_CLANG, QGEN_LLVM_MCA, QGEN_QEMU_AARCH64, QGEN_QEMU_RISCV64, QGEN_NODE, QGEN_LLVM_NM; a missing one is\n"
    "reported in the output.\n";

static int parse_list(const char *opt, const char *text, const char *const *names, int count, unsigned *out) {
    *out = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, ",");
        int found = -1;
        for (int k = 0; k < count; k++)
            if (strlen(names[k]) == len && strncmp(p, names[k], len) == 0)
                found = k;
        if (found < 0) {
            char list[256] = "";
            for (int k = 0; k < count; k++) {
                strncat(list, k ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, names[k], sizeof list - strlen(list) - 1);
            }
            return qg_cli_failf("%s: got \"%.*s\"; expected a comma-separated list of %s", opt, (int)len, p, list);
        }
        *out |= 1u << found;
        p += len + (p[len] == ',');
    }
    if (!*out) /* an empty list is not "all" */
        return qg_cli_failf("%s: got an empty list; expected some of its names, comma-separated", opt);
    return QG_EXIT_OK;
}

/* Runs the comparison and writes the report in `format`, to a temporary
 * name renamed into place (a failed run leaves no half file). */
static int compare_and_write(const qg_spec *sp, qg_compare_options *opt, bool quiet, const char *format,
                             const char *out_path) {
    qg_error err;
    qg_compare_report rep;
    qg_cli_progress progress;
    if (qg_cli_progress_init(&progress, "qgen compare", quiet)) {
        opt->progress = qg_cli_progress_step;
        opt->progress_user = &progress;
    }
    qg_status st = qg_compare_run(sp, opt, &rep, &err);
    qg_cli_progress_done(&progress);
    if (st)
        return qg_cli_fail(&err);
    char tmp[4200];
    FILE *f = stdout;
    if (out_path) {
        snprintf(tmp, sizeof tmp, "%s.tmp", out_path);
        if (!(f = fopen(tmp, "w"))) {
            qg_compare_report_free(&rep);
            return qg_cli_failf("-o: cannot write %s", tmp);
        }
    }
    if (strcmp(format, "json") == 0)
        st = qg_compare_write_json(&rep, f, &err);
    else if (strcmp(format, "html") == 0)
        qg_compare_write_html(&rep, f);
    else
        qg_compare_write_md(&rep, f);
    qg_compare_report_free(&rep);
    if (out_path) {
        if (fclose(f) != 0 || st != QG_OK || rename(tmp, out_path) != 0) {
            remove(tmp);
            return qg_cli_failf("-o: cannot write %s", out_path);
        }
    }
    return st ? qg_cli_fail(&err) : QG_EXIT_OK;
}

/* The options, for the parser below and for the man page and the shell
 * completion (qgen help --man, --completion). */
static const struct option opts[] = {{"spec", required_argument, 0, 'S'},
                                     {"ops", required_argument, 0, 'p'},
                                     {"targets", required_argument, 0, 't'},
                                     {"backends", required_argument, 0, 'b'},
                                     {"format", required_argument, 0, 'f'},
                                     {"keep", no_argument, 0, 'k'},
                                     {"set", required_argument, 0, 's'},
                                     {"mca-cpu", required_argument, 0, 'm'},
                                     {"quiet", no_argument, 0, 'q'},
                                     {"help", no_argument, 0, 'h'},
                                     {0}};
const qg_cli_command_info qg_cmd_compare_info = {"compare", usage, opts, "o:h"};

int qg_cmd_compare(int argc, char **argv) {
    const char *spec_path = NULL, *format = "md", *out_path = NULL;
    qg_compare_options opt = {0};
    qg_cli_sets sets = {0};
    bool quiet = false;
    const char *op_names[QG_K_OP_COUNT];
    for (qg_kernel_op op = 0; op < QG_K_OP_COUNT; op++)
        op_names[op] = qg_kernel_op_name(op);
    static const char *const backend_names[] = {"c", "llvm"};
    qg_error err;
    int c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'S': spec_path = optarg; break;
        case 'p':
            if ((rc = parse_list("--ops", optarg, op_names, QG_K_OP_COUNT, &opt.ops)))
                return rc;
            break;
        case 't':
            if (qg_parse_targets(optarg, &opt.targets, &err))
                return qg_cli_fail(&err);
            break;
        case 'b':
            if ((rc = parse_list("--backends", optarg, backend_names, 2, &opt.backends)))
                return rc;
            break;
        case 'f': format = optarg; break;
        case 'o': out_path = optarg; break;
        case 'k': opt.keep = true; break;
        case 'q': quiet = true; break;
        case 'm': {
            const char *eq = strchr(optarg, '=');
            unsigned isa = 0;
            char name[32];
            snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - optarg) : 0, optarg);
            if (!eq || !eq[1] || qg_parse_targets(name, &isa, &err) || (isa & (isa - 1)))
                return qg_cli_failf("--mca-cpu: got \"%s\"; expected ISA=CPU[,CPU2], e.g. avx2=alderlake", optarg);
            for (int k = 0; k < QG_ISA_COUNT; k++)
                if (isa == 1u << k)
                    opt.mca_cpus[k] = eq + 1;
            break;
        }
        case 's':
            if ((rc = qg_cli_add_set(&sets, optarg)))
                return rc;
            break;
        case 'h': fputs(usage, stdout); return QG_EXIT_OK;
        default: return qg_cli_bad_option("compare", argv[optind - 1]);
        }
    }
    if (!spec_path)
        return qg_cli_failf("compare: --spec is required; see qgen compare --help");
    if (strcmp(format, "md") != 0 && strcmp(format, "json") != 0 && strcmp(format, "html") != 0)
        return qg_cli_failf("--format: got \"%s\"; expected md, json or html", format);
    qg_spec sp;
    if (qg_cli_load_spec(spec_path, sets.items, sets.count, &sp, &err))
        return qg_cli_fail(&err);
    return compare_and_write(&sp, &opt, quiet, format, out_path);
}
