/* qgen generate: a spec's kernels as C files for the chosen ISAs. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "qgen/generate.h"

static const char usage[] =
    "usage: qgen generate --spec S [--emit c|ll|bc|obj|asm] [--targets LIST] -o DIR [--quiet]\n"
    "                     [--set key=value]...\n"
    "\n"
    "Writes DIR/NAME.h, one file per ISA and DIR/NAME_dispatch.c.\n"
    "  --targets     all, or a comma-separated list of ISAs (`qgen targets` lists them)\n"
    "                (default: the spec's targets; scalar is always added as the fallback)\n"
    "  --emit        c: NAME_<isa>.c, C with intrinsics (default); ll, bc, obj, asm: the LLVM\n"
    "                backend's NAME_<isa>.ll, .bc, .o or .s, with the same functions and header\n"
    "  --scalar-arch with the LLVM backend: x86_64, aarch64 or riscv64 for the scalar file\n"
    "                (default: this machine's)\n"
    "  --no-check    skip parsing the emitted C files with libclang before writing them\n"
    "  --quiet       no progress line (it is shown only when stderr is a terminal)\n";

/* The options, for the parser below and for the man page and the shell
 * completion (qgen help --man, --completion). */
static const struct option opts[] = {{"no-check", no_argument, 0, 'n'},
                                     {"spec", required_argument, 0, 'S'},
                                     {"emit", required_argument, 0, 'e'},
                                     {"scalar-arch", required_argument, 0, 'a'},
                                     {"targets", required_argument, 0, 't'},
                                     {"set", required_argument, 0, 's'},
                                     {"quiet", no_argument, 0, 'q'},
                                     {"help", no_argument, 0, 'h'},
                                     {0}};
const qg_cli_command_info qg_cmd_generate_info = {"generate", usage, opts, "o:h"};

int qg_cmd_generate(int argc, char **argv) {
    const char *spec_path = NULL, *emit = "c", *targets = NULL, *out = NULL, *scalar_arch = NULL;
    qg_cli_sets sets = {0};
    int rc;
    int no_check = 0;
    bool quiet = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'S': spec_path = optarg; break;
        case 'e': emit = optarg; break;
        case 'a': scalar_arch = optarg; break;
        case 't': targets = optarg; break;
        case 'o': out = optarg; break;
        case 'n': no_check = 1; break;
        case 'q': quiet = true; break;
        case 's':
            if ((rc = qg_cli_add_set(&sets, optarg)))
                return rc;
            break;
        case 'h': fputs(usage, stdout); return QG_EXIT_OK;
        default: return qg_cli_bad_option("generate", argv[optind - 1]);
        }
    }
    if (!spec_path || !out)
        return qg_cli_failf("generate: --spec and -o are required; see qgen generate --help");
    qg_spec sp;
    qg_error err;
    qg_emit_kind kind;
    if (qg_parse_emit_kind(emit, &kind, &err))
        return qg_cli_fail(&err);
    if (qg_cli_load_spec(spec_path, sets.items, sets.count, &sp, &err))
        return qg_cli_fail(&err);
    if (scalar_arch && kind == QG_EMIT_C)
        return qg_cli_failf("--scalar-arch: got \"%s\" with --emit c; expected it with --emit ll, bc, obj or asm "
                            "(C files build for any architecture)",
                            scalar_arch);
    unsigned set = 0;
    if (targets && qg_parse_targets(targets, &set, &err))
        return qg_cli_fail(&err);
    /* The command as given, for the files' headers. */
    char command[2048] = "qgen";
    for (int i = 0; i < argc; i++) {
        strncat(command, " ", sizeof command - strlen(command) - 1);
        strncat(command, argv[i], sizeof command - strlen(command) - 1);
    }
    qg_generate_options opt = {out, set, command, no_check, kind, scalar_arch, NULL, NULL};
    qg_cli_progress progress;
    if (qg_cli_progress_init(&progress, "qgen generate", quiet)) {
        opt.progress = qg_cli_progress_step;
        opt.progress_user = &progress;
    }
    qg_status st = qg_generate(&sp, &opt, &err);
    qg_cli_progress_done(&progress);
    if (st)
        return qg_cli_fail(&err);
    return QG_EXIT_OK;
}
