#include "validate_c.h"

#include "../targets/target_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int qg_source_isa(const char *file_name) {
    const char *us = strrchr(file_name, '_'), *dot = strrchr(file_name, '.');
    if (!us || !dot || dot < us || strcmp(dot, ".c") != 0)
        return -1;
    for (int isa = 0; isa < QG_ISA_COUNT; isa++) {
        const char *n = qg_isa_name((qg_isa)isa);
        if ((size_t)(dot - us - 1) == strlen(n) && strncmp(us + 1, n, strlen(n)) == 0)
            return isa;
    }
    return -1;
}

#ifdef QGEN_HAVE_LIBCLANG
#include <clang-c/Index.h>

/* The architecture's flags per ISA (the ISA table); -1 (dispatcher) and
 * scalar: the host. No ISA flags: the files set their own targets, and
 * are checked as users build them. */
static int target_args(int isa, const char **args) {
    const qg_arch *a = isa > QG_ISA_SCALAR ? qg_arch_of((qg_isa)isa) : NULL;
    if (!a)
        return 0;
    args[0] = a->clang_flags;
    return 1;
}

qg_status qg_validate_sources(const qg_source *files, size_t count, const char *include_dir, qg_error *err) {
    /* every file, however many: none is left unchecked */
    struct CXUnsavedFile *unsaved = calloc(count ? count : 1, sizeof *unsaved);
    char(*paths)[512] = calloc(count ? count : 1, sizeof *paths);
    if (!unsaved || !paths) {
        free(unsaved);
        free(paths);
        return qg_error_set(err, QG_ERR_NOMEM, "validate: out of memory");
    }
    const size_t nu = count;
    for (size_t i = 0; i < nu; i++) {
        /* In-memory files live in a virtual directory, so that the ISA
         * files' #include "NAME.h" finds the header beside them. */
        if (files[i].name[0] == '/')
            snprintf(paths[i], sizeof paths[i], "%s", files[i].name);
        else
            snprintf(paths[i], sizeof paths[i], "/qgen-unsaved/%s", files[i].name);
        unsaved[i].Filename = paths[i];
        unsaved[i].Contents = files[i].contents;
        unsaved[i].Length = (unsigned long)files[i].length;
    }
    CXIndex index = clang_createIndex(0, 0);
    char inc[4096];
    snprintf(inc, sizeof inc, "-I%s", include_dir);
    qg_status st = QG_OK;
    size_t reported = 0;
    for (size_t i = 0; i < nu; i++) {
        const char *name = paths[i];
        size_t len = strlen(name);
        if (len < 2 || strcmp(name + len - 2, ".c") != 0)
            continue;
        const char *args[16] = {
            "-x", "c",  "-std=c11", "-Wall", "-Wextra", "-ffp-contract=off", "-resource-dir", QGEN_CLANG_RESOURCE_DIR,
            inc,  "-I."};
        int nargs = 10;
        nargs += target_args(qg_source_isa(name), args + nargs);
        CXTranslationUnit tu = NULL;
        enum CXErrorCode ec =
            clang_parseTranslationUnit2(index, name, args, nargs, unsaved, (unsigned)nu, CXTranslationUnit_None, &tu);
        if (ec != CXError_Success) {
            st = qg_error_set(err, QG_ERR_INVALID, "%s: libclang could not parse it (error %d)", name, (int)ec);
            break;
        }
        unsigned nd = clang_getNumDiagnostics(tu);
        for (unsigned d = 0; d < nd; d++) {
            CXDiagnostic diag = clang_getDiagnostic(tu, d);
            if (clang_getDiagnosticSeverity(diag) >= CXDiagnostic_Warning) {
                /* the first one, in the one-line message; the count of the rest */
                if (reported++ == 0) {
                    CXString text = clang_formatDiagnostic(diag, clang_defaultDiagnosticDisplayOptions());
                    qg_error_set(err, QG_ERR_INVALID, "C does not compile cleanly: %s", clang_getCString(text));
                    clang_disposeString(text);
                }
                st = QG_ERR_INVALID;
            }
            clang_disposeDiagnostic(diag);
        }
        clang_disposeTranslationUnit(tu);
    }
    if (reported > 1 && err) {
        char first[sizeof err->message];
        snprintf(first, sizeof first, "%s", err->message);
        qg_error_set(err, QG_ERR_INVALID, "%s (and %zu more diagnostics)", first, reported - 1);
    }
    clang_disposeIndex(index);
    free(unsaved);
    free(paths);
    return st;
}

int qg_validate_available(void) { return 1; }
#else
qg_status qg_validate_sources(const qg_source *files, size_t count, const char *include_dir, qg_error *err) {
    (void)files;
    (void)count;
    (void)include_dir;
    (void)err;
    return QG_OK;
}

int qg_validate_available(void) { return 0; }
#endif
