/* The man page and the bash completion, printed from the commands' own
 * option tables (qg_cli_command_info), so that neither can list an option
 * the parser does not take or miss one it does. */
#include <getopt.h>
#include <string.h>

#include "cli.h"

/* Text for roff's no-fill mode: backslashes doubled, a line's leading
 * dot or quote protected. */
static void roff_text(FILE *out, const char *text) {
    bool line_start = true;
    for (const char *p = text; *p; p++) {
        if (line_start && (*p == '.' || *p == '\''))
            fputs("\\&", out);
        if (*p == '\\')
            fputs("\\e", out);
        else if (*p == '-')
            fputs("\\-", out);
        else
            fputc(*p, out);
        line_start = *p == '\n';
    }
    if (!line_start)
        fputc('\n', out);
}

/* The short options of getopt's string with their argument marker. */
static void each_short(const char *shorts, void (*fn)(FILE *, char, bool), FILE *out) {
    for (const char *p = shorts; *p; p++)
        if (*p != ':')
            fn(out, *p, p[1] == ':');
}

static void man_short(FILE *out, char c, bool arg) {
    fprintf(out, ".TP\n.B \\-%c%s\n", c, arg ? " \\fIVALUE\\fR" : "");
}

void qg_cli_print_man(FILE *out, const qg_cli_command_info *const *cmds, size_t n, const char *overview) {
    fputs(".TH QGEN 1 \"\" \"qgen " QGEN_VERSION "\" \"User Commands\"\n.SH NAME\n"
          "qgen \\- specialized quantization kernels generated from a spec\n"
          ".SH SYNOPSIS\n.B qgen\n.I command\n[\\fIoptions\\fR]\n.SH DESCRIPTION\n.nf\n",
          out);
    roff_text(out, overview);
    fputs(".fi\n.SH COMMANDS\n", out);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, ".SS qgen %s\n.nf\n", cmds[i]->name);
        roff_text(out, cmds[i]->usage);
        fputs(".fi\n.PP\nOptions:\n", out);
        for (const struct option *o = cmds[i]->options; o->name; o++) {
            fputs(".TP\n.B \\-\\-", out);
            for (const char *c = o->name; *c; c++) /* roff's hyphen-minus */
                fputs(*c == '-' ? "\\-" : (char[]){*c, 0}, out);
            fprintf(out, "%s\n", o->has_arg == required_argument ? " \\fIVALUE\\fR" : "");
        }
        each_short(cmds[i]->short_options, man_short, out);
    }
    fputs(".SH EXIT STATUS\n0 on success, 2 on bad input (one line on stderr naming the place, the value and what "
          "was expected).\n.SH SEE ALSO\nThe docs/ directory of the qgen sources: spec.md, semantics.md, "
          "robustness.md.\n",
          out);
}

static void word_short(FILE *out, char c, bool arg) {
    (void)arg;
    fprintf(out, " -%c", c);
}

void qg_cli_print_completion(FILE *out, const qg_cli_command_info *const *cmds, size_t n) {
    fputs("# bash completion for qgen, printed by `qgen help --completion` from the option tables its\n"
          "# parser takes; installed as share/bash-completion/completions/qgen.\n"
          "_qgen() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} opts=\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        COMPREPLY=($(compgen -W \"help",
          out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, " %s", cmds[i]->name);
    fputs("\" -- \"$cur\"))\n        return\n    fi\n    case ${COMP_WORDS[1]} in\n", out);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "    %s) opts=\"", cmds[i]->name);
        for (const struct option *o = cmds[i]->options; o->name; o++)
            fprintf(out, "%s--%s", o == cmds[i]->options ? "" : " ", o->name);
        each_short(cmds[i]->short_options, word_short, out);
        fputs("\" ;;\n", out);
    }
    fputs("    help) COMPREPLY=($(compgen -W \"", out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? " " : "", cmds[i]->name);
    fputs("\" -- \"$cur\")); return ;;\n    esac\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "    else\n"
          "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "    fi\n"
          "}\n"
          "complete -o filenames -F _qgen qgen\n",
          out);
}
