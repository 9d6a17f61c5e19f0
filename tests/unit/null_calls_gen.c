/* Writes tests/unit's every-function NULL test from the installed headers
 * themselves: libclang parses every header of include/qgen/, and each function declared
 * there (inline ones included) gets two calls, one with every pointer NULL
 * and one with the spec pointers at a zeroed (invalid) qg_spec; integers,
 * enums and floats are 0. The generated test (test_null_calls.c) runs each
 * call in a child process: a crash, a hang, or a QG_ERR_ARG message that
 * names no parameter of the header's declaration fails it. A function
 * added to a header is covered without an edit here.
 *
 * usage: null_calls_gen INCLUDE_DIR OUT.c */
#define _POSIX_C_SOURCE 200809L
#include <clang-c/Index.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *out;
static const char *include_dir;
static unsigned n_functions;

static char *text(CXString s) {
    char *copy = strdup(clang_getCString(s));
    clang_disposeString(s);
    return copy;
}

/* The argument for a parameter of type t in variant v (0: NULL pointers;
 * 1: spec pointers at a zeroed spec). */
static void argument(CXType t, const char *type_name, int v, const char *fn) {
    t = clang_getCanonicalType(t);
    switch (t.kind) {
    case CXType_Pointer:
        if (strstr(type_name, "qg_error *") && !strstr(type_name, "const"))
            fputs("&err", out);
        else if (v == 1 && strstr(type_name, "qg_spec *") && !strstr(type_name, "**") && !strstr(fn, "_free"))
            fputs("&zero_spec", out);
        else
            fputs("NULL", out);
        return;
    case CXType_Float:
    case CXType_Double: fputs("0.0", out); return;
    case CXType_Bool: fputs("false", out); return;
    default: fprintf(out, "(%s)0", type_name); return; /* integers and enums */
    }
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data) {
    (void)parent, (void)data;
    if (clang_getCursorKind(c) != CXCursor_FunctionDecl)
        return CXChildVisit_Continue;
    CXFile file;
    clang_getSpellingLocation(clang_getCursorLocation(c), &file, NULL, NULL, NULL);
    char *path = file ? text(clang_getFileName(file)) : strdup("");
    char *name = text(clang_getCursorSpelling(c));
    const int ours = strstr(path, include_dir) == path && strncmp(name, "qg_", 3) == 0;
    free(path);
    if (!ours) {
        free(name);
        return CXChildVisit_Continue;
    }
    const int nargs = clang_Cursor_getNumArguments(c);
    const CXType ret = clang_getCanonicalType(clang_getResultType(clang_getCursorType(c)));
    char *ret_name = text(clang_getTypeSpelling(clang_getResultType(clang_getCursorType(c))));
    const int status = strcmp(ret_name, "qg_status") == 0;
    for (int v = 0; v < 2; v++) {
        fprintf(out, "static void call_%u_%d(void) { /* %s */\n    ", n_functions, v, name);
        const int checked = status && strncmp(name, "qg_error_", 9) != 0;
        if (checked)
            fputs("const qg_status st = ", out);
        else if (ret.kind != CXType_Void)
            fputs("(void)", out);
        fprintf(out, "%s(", name);
        for (int a = 0; a < nargs; a++) {
            CXCursor arg = clang_Cursor_getArgument(c, (unsigned)a);
            char *tn = text(clang_getTypeSpelling(clang_getCursorType(arg)));
            fputs(a ? ", " : "", out);
            argument(clang_getCursorType(arg), tn, v, name);
            free(tn);
        }
        fputs(");\n", out);
        /* a refused NULL names one of the header's parameters (the error
         * helpers return whatever status they are given) */
        if (checked) {
            fputs("    static const char *const params[] = {", out);
            for (int a = 0; a < nargs; a++) {
                char *pn = text(clang_getCursorSpelling(clang_Cursor_getArgument(c, (unsigned)a)));
                fprintf(out, "\"%s\", ", pn);
                free(pn);
            }
            fprintf(out, "NULL};\n    check_message(\"%s\", st, params);\n", name);
        }
        fputs("}\n", out);
    }
    fprintf(out, "#define FUNCTION_%u {\"%s\", call_%u_0, call_%u_1},\n", n_functions, name, n_functions, n_functions);
    n_functions++;
    free(ret_name);
    free(name);
    return CXChildVisit_Continue;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: null_calls_gen INCLUDE_DIR OUT.c\n");
        return 2;
    }
    include_dir = argv[1];
    static const char *const headers[] = {"generate.h", "jit.h",  "kernel_support.h", "parallel.h",
                                          "runtime.h",  "spec.h", "status.h"};
    char source[4096] = "";
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++)
        snprintf(source + strlen(source), sizeof source - strlen(source), "#include \"qgen/%s\"\n", headers[i]);
    char inc[4200];
    snprintf(inc, sizeof inc, "-I%s", include_dir);
    const char *args[] = {"-x", "c", "-std=c11", inc};
    struct CXUnsavedFile unsaved = {"all_headers.c", source, (unsigned long)strlen(source)};
    CXIndex index = clang_createIndex(0, 1);
    CXTranslationUnit tu = NULL;
    if (clang_parseTranslationUnit2(index, "all_headers.c", args, 4, &unsaved, 1, CXTranslationUnit_None, &tu) !=
            CXError_Success ||
        !tu) {
        fprintf(stderr, "null_calls_gen: cannot parse the headers in %s\n", include_dir);
        return 1;
    }
    for (unsigned i = 0; i < clang_getNumDiagnostics(tu); i++) {
        CXDiagnostic d = clang_getDiagnostic(tu, i);
        if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
            char *msg = text(clang_formatDiagnostic(d, clang_defaultDiagnosticDisplayOptions()));
            fprintf(stderr, "null_calls_gen: %s\n", msg);
            return 1;
        }
        clang_disposeDiagnostic(d);
    }
    out = fopen(argv[2], "w");
    if (!out) {
        perror(argv[2]);
        return 1;
    }
    fprintf(out, "/* Generated by tests/unit/null_calls_gen.c from the headers of %s/qgen/; do not edit. */\n",
            include_dir);
    fputs("#include \"null_calls_prelude.h\"\n\n", out);
    clang_visitChildren(clang_getTranslationUnitCursor(tu), visit, NULL);
    fputs("\nstatic const null_call functions[] = {\n", out);
    for (unsigned i = 0; i < n_functions; i++)
        fprintf(out, "    FUNCTION_%u\n", i);
    fputs("};\n\n#include \"null_calls_main.h\"\n", out);
    clang_disposeTranslationUnit(tu);
    clang_disposeIndex(index);
    return fclose(out) == 0 ? 0 : 1;
}
