/* The outside programs compare drives (clang-19, llvm-mca-19, qemu-user),
 * and symbol sizes read from objects through LLVM's object API. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <llvm-c/Core.h>
#include <llvm-c/Object.h>

#include "compare.h"

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

long qg_cmp_symbol_size(const char *object_path, const char *name) {
    LLVMMemoryBufferRef buf;
    char *msg = NULL;
    if (LLVMCreateMemoryBufferWithContentsOfFile(object_path, &buf, &msg)) {
        LLVMDisposeMessage(msg);
        return -1;
    }
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMBinaryRef bin = LLVMCreateBinary(buf, ctx, &msg);
    long size = -1;
    /* LLVM 19's symbol size reads a wasm object's symbols as ELF's and
     * crashes: no size there (the report says n/a) */
    if (bin && LLVMBinaryGetType(bin) == LLVMBinaryTypeWasm) {
        LLVMDisposeBinary(bin);
    } else if (bin) {
        LLVMSymbolIteratorRef it = LLVMObjectFileCopySymbolIterator(bin);
        while (!LLVMObjectFileIsSymbolIteratorAtEnd(bin, it)) {
            const char *sym = LLVMGetSymbolName(it);
            if (sym && strcmp(sym, name) == 0) {
                size = (long)LLVMGetSymbolSize(it);
                break;
            }
            LLVMMoveToNextSymbol(it);
        }
        LLVMDisposeSymbolIterator(it);
        LLVMDisposeBinary(bin);
    } else {
        LLVMDisposeMessage(msg);
    }
    LLVMDisposeMemoryBuffer(buf);
    LLVMContextDispose(ctx);
    return size;
}
