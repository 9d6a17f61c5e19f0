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
                            "S, or FILE, is a spec file or a preset's name (qgen spec presets).\n"
                            "qgen help --man and qgen help --completion print the man page and the bash completion.\n"
                            "Every command takes --help (or: qgen help COMMAND). Exit status: 0 on success, 2 on bad\n"
                            "input.\n";

/* The commands, in the order the usage lists them. */
static const struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const qg_cli_command_info *info;
} commands[] = {{"spec", qg_cmd_spec, &qg_cmd_spec_info},
                {"run", qg_cmd_run, &qg_cmd_run_info},
                {"generate", qg_cmd_generate, &qg_cmd_generate_info},
                {"check", qg_cmd_check, &qg_cmd_check_info},
                {"compare", qg_cmd_compare, &qg_cmd_compare_info},
                {"observe", qg_cmd_observe, &qg_cmd_observe_info},
                {"targets", qg_cmd_targets, &qg_cmd_targets_info}};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

/* qgen help --man | --completion: the man page or the bash completion. */
static int print_manual(const char *what) {
    const qg_cli_command_info *infos[N_COMMANDS];
    for (size_t i = 0; i < N_COMMANDS; i++)
        infos[i] = commands[i].info;
    if (strcmp(what, "--man") == 0)
        qg_cli_print_man(stdout, infos, N_COMMANDS, usage);
    else
        qg_cli_print_completion(stdout, infos, N_COMMANDS);
    return QG_EXIT_OK;
}

static const struct command *command_named(const char *name) {
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int unknown(const char *name) {
    fprintf(stderr,
            "qgen: unknown command \"%s\"; expected spec, generate, check, compare, run, observe or targets\n\n%s",
            name, usage);
    return QG_EXIT_BAD_INPUT;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage, stderr);
        return QG_EXIT_BAD_INPUT;
    }
    opterr = 0; /* each command reports a bad option itself, with the qgen: prefix */
    const char *cmd = argv[1];
    if (strcmp(cmd, "help") == 0 && argc >= 3 &&
        (strcmp(argv[2], "--man") == 0 || strcmp(argv[2], "--completion") == 0))
        return print_manual(argv[2]);
    if (strcmp(cmd, "help") == 0 && argc >= 3) { /* qgen help COMMAND: that command's --help */
        const struct command *c = command_named(argv[2]);
        char *help_argv[] = {argv[2], "--help", NULL};
        return c ? c->run(2, help_argv) : unknown(argv[2]);
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return QG_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        puts("qgen " QGEN_VERSION);
        return QG_EXIT_OK;
    }
    const struct command *c = command_named(cmd);
    return c ? c->run(argc - 1, argv + 1) : unknown(cmd);
}
