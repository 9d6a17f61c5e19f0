/* qgen: the command-line front end. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] = "usage: qgen <command> [options]\n"
                            "\n"
                            "commands:\n"
                            "  spec show FILE [--set k=v]...    print the resolved spec as canonical JSON\n"
                            "  spec check FILE [--set k=v]...   validate a spec\n"
                            "  spec presets                     list the presets a spec can name as \"base\"\n"
                            "  run --spec S --op OP ...         run one op's reference on .npy files\n"
                            "  generate --spec S --targets LIST -o DIR\n"
                            "                                   write the spec's kernels as C for each ISA\n"
                            "  check DIR                        parse generated files with libclang for their targets\n"
                            "  compare --spec S [--format md|json|html] [-o FILE]\n"
                            "                                   the kernels side by side per op, ISA and backend\n"
                            "  observe --spec S --in X [--state F]\n"
                            "                                   feed data to the spec's observer, print qparams\n"
                            "  targets                          the ISA table: lanes, triples, how each ISA runs\n"
                            "\n"
                            "Every command takes --help. Exit status: 0 on success, 2 on bad input.\n";

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage, stderr);
        return QG_EXIT_BAD_INPUT;
    }
    opterr = 0; /* each command reports a bad option itself, with the qgen: prefix */
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return QG_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        puts("qgen " QGEN_VERSION);
        return QG_EXIT_OK;
    }
    if (strcmp(cmd, "spec") == 0)
        return qg_cmd_spec(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0)
        return qg_cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "observe") == 0)
        return qg_cmd_observe(argc - 1, argv + 1);
    if (strcmp(cmd, "generate") == 0)
        return qg_cmd_generate(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0)
        return qg_cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0)
        return qg_cmd_compare(argc - 1, argv + 1);
    if (strcmp(cmd, "targets") == 0)
        return qg_cmd_targets(argc - 1, argv + 1);
    fprintf(stderr,
            "qgen: unknown command \"%s\"; expected spec, generate, check, compare, run, observe or targets\n\n%s", cmd,
            usage);
    return QG_EXIT_BAD_INPUT;
}
