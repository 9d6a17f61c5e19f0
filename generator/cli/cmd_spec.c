/* qgen spec show|check|presets */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] = "usage: qgen spec show FILE [--set key=value]...\n"
                            "       qgen spec check FILE [--set key=value]...\n"
                            "       qgen spec presets\n"
                            "\n"
                            "  show     print the resolved spec (preset, file, overrides) as canonical JSON\n"
                            "  check    validate the spec and print a one-line summary\n"
                            "  presets  list the presets a spec can name as \"base\"\n"
                            "  --set key=value   override a field; key may be observer.<field>;\n"
                            "                    value is JSON, or a bare word taken as a string\n";

/* The options, for the parser below and for the man page and the shell
 * completion (qgen help --man, --completion). */
static const struct option opts[] = {{"set", required_argument, 0, 's'}, {"help", no_argument, 0, 'h'}, {0}};
const qg_cli_command_info qg_cmd_spec_info = {"spec", usage, opts, "s:h"};

int qg_cmd_spec(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? QG_EXIT_BAD_INPUT : QG_EXIT_OK;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "presets") == 0) {
        for (const char *const *p = qg_spec_preset_names(); *p; p++)
            puts(*p);
        return QG_EXIT_OK;
    }
    if (strcmp(sub, "show") != 0 && strcmp(sub, "check") != 0)
        return qg_cli_failf("spec: unknown subcommand \"%s\"; expected show, check or presets", sub);
    qg_cli_sets sets = {0};
    const char *file = NULL;
    optind = 1;
    int c;
    argc--;
    argv++;
    while ((c = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return QG_EXIT_OK;
        }
        if (c != 's')
            return qg_cli_bad_option("spec", argv[optind - 1]);
        int rc = qg_cli_add_set(&sets, optarg);
        if (rc)
            return rc;
    }
    if (optind != argc - 1)
        return qg_cli_failf("spec %s: expected exactly one spec FILE; see qgen spec --help", sub);
    file = argv[optind];
    qg_spec sp;
    qg_error err;
    if (qg_cli_load_spec(file, sets.items, sets.count, &sp, &err))
        return qg_cli_fail(&err);
    if (strcmp(sub, "show") == 0) {
        char *json = qg_spec_to_json(&sp);
        if (!json)
            return qg_cli_failf("spec show: out of memory");
        fputs(json, stdout);
        free(json);
    } else if (sp.block != QG_BLOCK_NONE) {
        printf("%s: ok: \"%s\" ggml block format %s, blocks of %zu along the last axis\n", file, sp.name,
               qg_block_format_name(sp.block), sp.group_size);
    } else {
        printf("%s: ok: \"%s\" %s %s, range %lld..%lld, observer %s\n", file, sp.name, qg_dtype_name(sp.dtype),
               qg_qscheme_name(sp.qscheme), (long long)sp.quant_min, (long long)sp.quant_max,
               qg_observer_type_name(sp.observer.type));
    }
    return QG_EXIT_OK;
}
