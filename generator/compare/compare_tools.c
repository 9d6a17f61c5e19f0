/* The outside programs compare drives (clang-19, llvm-mca-19, qemu-user,
 * node), and symbol sizes read from objects through LLVM's object API. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <llvm-c/Core.h>
#include <llvm-c/Object.h>

#include "compare.h"
#include "wasi_run_src.h"

bool qg_cmp_find_tool(const char *env, const char *name, char *out, size_t cap) {
    const char *forced = env ? getenv(env) : NULL;
    if (forced && forced[0]) {
        snprintf(out, cap, "%s", forced);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        snprintf(out, cap, "%.*s/%s", (int)len, path, name);
        if (len && access(out, X_OK) == 0)
            return true;
        path += len + (path[len] == ':');
    }
    snprintf(out, cap, "%s", name);
    return false;
}

bool qg_cmp_write_file(const char *path, const void *bytes, size_t len) {
    FILE *f = fopen(path, "w");
    const bool ok = f && fwrite(bytes, 1, len, f) == len;
    return (f ? fclose(f) == 0 : false) && ok;
}

/* The embedded WASI runner (scripts/wasi-run.mjs) as work/wasi-run.mjs,
 * written by the first run that needs it. */
static bool write_wasi_runner(const char *work, char *path, size_t cap) {
    snprintf(path, cap, "%s/wasi-run.mjs", work);
    return access(path, R_OK) == 0 || qg_cmp_write_file(path, qg_wasi_run_src, sizeof qg_wasi_run_src - 1);
}

bool qg_cmp_runner_init(qg_cmp_runner *r, const qg_arch *a, qg_isa isa, int vl_bits, const char *work, char *why,
                        size_t cap) {
    memset(r, 0, sizeof *r);
    r->name = "native";
    if (a->qemu[0]) {
        char env[64];
        size_t k = (size_t)snprintf(env, sizeof env, "QGEN_QEMU_");
        for (const char *p = a->name; *p && k + 1 < sizeof env; p++)
            env[k++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
        env[k] = 0;
        if (!qg_cmp_find_tool(env, a->qemu, r->prog, sizeof r->prog)) {
            snprintf(why, cap, "%s not found", a->qemu);
            return false;
        }
        r->name = a->qemu;
        r->argv[r->n++] = r->prog;
        r->argv[r->n++] = "-L";
        r->argv[r->n++] = (char *)a->sysroot;
        const qg_target *t = qg_target_of(isa);
        if (t && t->qemu_cpu[0]) {
            qg_target_qemu_cpu(t, vl_bits, r->cpu, sizeof r->cpu);
            r->argv[r->n++] = "-cpu";
            r->argv[r->n++] = r->cpu;
        }
    } else if (strcmp(a->runner, "node-wasi") == 0) {
        if (!qg_cmp_find_tool("QGEN_NODE", "node", r->prog, sizeof r->prog)) {
            snprintf(why, cap, "node not found (it runs %s programs)", a->name);
            return false;
        }
        if (!write_wasi_runner(work, r->script, sizeof r->script)) {
            snprintf(why, cap, "cannot write %s", r->script);
            return false;
        }
        r->name = "node";
        r->argv[r->n++] = r->prog;
        r->argv[r->n++] = "--no-warnings";
        r->argv[r->n++] = r->script;
    } else if (strcmp(a->name, qg_host_arch()) != 0) {
        snprintf(why, cap, "no runner for %s programs here", a->name);
        return false;
    }
    r->argv[r->n] = NULL;
    return true;
}

int qg_cmp_run(char *const argv[], char **text) {
    char tmpl[] = "/tmp/qgen-cmp-out-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0)
        return -1;
    unlink(tmpl);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) {
        close(fd);
        return -1;
    }
    off_t size = lseek(fd, 0, SEEK_END);
    *text = malloc((size_t)(size > 0 ? size : 0) + 1);
    if (*text) {
        ssize_t got = pread(fd, *text, (size_t)(size > 0 ? size : 0), 0);
        (*text)[got > 0 ? got : 0] = 0;
    }
    close(fd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* Adds symbol `sym`'s size to *total where it is one of names[] not yet
 * counted (seen[]). */
static void count_symbol(const char *sym, unsigned long size, const char *const *names, bool *seen, int n,
                         long *total) {
    for (int k = 0; k < n; k++)
        if (!seen[k] && strcmp(sym, names[k]) == 0) {
            seen[k] = true;
            if (size > 0)
                *total = (*total < 0 ? 0 : *total) + (long)size;
            return;
        }
}

/* A wasm object's symbols from one run of llvm-nm-19 -S (LLVM 19's C API
 * reads a wasm object's symbols as ELF's and crashes). */
static void wasm_symbols(const char *object_path, const char *const *names, bool *seen, int n, long *total) {
    char nm[1024];
    if (!qg_cmp_find_tool("QGEN_LLVM_NM", "llvm-nm-19", nm, sizeof nm))
        return;
    char *argv[] = {nm, "-S", "--defined-only", (char *)object_path, NULL}, *text = NULL;
    if (qg_cmp_run(argv, &text) == 0 && text)
        for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
            unsigned long at, bytes;
            char kind, sym[256];
            if (sscanf(l, "%lx %lx %c %255s", &at, &bytes, &kind, sym) == 4)
                count_symbol(sym, bytes, names, seen, n, total);
        }
    free(text);
}

long qg_cmp_symbols_size(const char *object_path, const char *const *names, int n) {
    LLVMMemoryBufferRef buf;
    char *msg = NULL;
    if (n > 16 || LLVMCreateMemoryBufferWithContentsOfFile(object_path, &buf, &msg)) {
        LLVMDisposeMessage(msg);
        return -1;
    }
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMBinaryRef bin = LLVMCreateBinary(buf, ctx, &msg);
    long total = -1;
    bool seen[16] = {0};
    if (bin && LLVMBinaryGetType(bin) == LLVMBinaryTypeWasm) {
        LLVMDisposeBinary(bin);
        wasm_symbols(object_path, names, seen, n, &total);
    } else if (bin) {
        LLVMSymbolIteratorRef it = LLVMObjectFileCopySymbolIterator(bin);
        for (; !LLVMObjectFileIsSymbolIteratorAtEnd(bin, it); LLVMMoveToNextSymbol(it)) {
            const char *sym = LLVMGetSymbolName(it);
            if (sym)
                count_symbol(sym, (unsigned long)LLVMGetSymbolSize(it), names, seen, n, &total);
        }
        LLVMDisposeSymbolIterator(it);
        LLVMDisposeBinary(bin);
    } else {
        LLVMDisposeMessage(msg);
    }
    LLVMDisposeMemoryBuffer(buf);
    LLVMContextDispose(ctx);
    return total;
}
