/* The generated test's main: each call in a child process, so that a
 * crash or a hang names its function. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    const size_t n = sizeof functions / sizeof functions[0];
    unsigned failed = 0;
    for (size_t i = 0; i < n; i++)
        for (int v = 0; v < 2; v++) {
            fflush(NULL);
            const pid_t pid = fork();
            if (pid == 0) {
                alarm(20);
                (v ? functions[i].with_zero_spec : functions[i].with_null)();
                _exit(0);
            }
            int status = 0;
            if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "FAILED %s with %s: %s %d\n", functions[i].name, v ? "a zeroed spec" : "NULL pointers",
                        WIFSIGNALED(status) ? "signal" : "exit",
                        WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
                failed++;
            }
        }
    printf("%zu functions of include/qgen/, each with NULL pointers and with a zeroed spec: %u failed\n", n, failed);
    return failed ? 1 : 0;
}
