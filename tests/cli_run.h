/* Running the `kiln` executable from a test: arguments in, exit status and captured stdout and
 * stderr out. Header-only (static inline), for the CLI test programs.
 *
 *   const char *args[] = {"verify", "x.kiln", NULL};
 *   cli_result r = cli_run(args);
 *   cr_expect_eq(r.status, 0, "%s", r.err);
 *   cli_result_free(&r);
 *
 * The binary is the build's KILN_CLI_PATH, else $KILN_CLI, else <build dir>/kiln; a test is
 * skipped when it does not exist.
 */
#ifndef KILN_TEST_CLI_RUN_H
#define KILN_TEST_CLI_RUN_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static inline const char *cli_path(void)
{
#if defined(KILN_CLI_PATH)
    return KILN_CLI_PATH;
#else
    const char *env = getenv("KILN_CLI");
    if (env && env[0]) return env;
#if defined(KILN_BUILD_DIR)
    return KILN_BUILD_DIR "/kiln";
#else
    return "./kiln";
#endif
#endif
}

typedef struct cli_result {
    int   status;  /* exit status, or 128 + signal */
    char *out;     /* stdout, NUL-terminated */
    char *err;     /* stderr, NUL-terminated */
} cli_result;

/* A temporary file already unlinked: it lives as long as the descriptor. */
static inline int cli_temp_fd(void)
{
    char name[] = "/tmp/kiln_cli_run_XXXXXX";
    int fd = mkstemp(name);
    cr_assert(fd >= 0, "mkstemp failed");
    unlink(name);
    return fd;
}

static inline char *cli_slurp(int fd)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    lseek(fd, 0, SEEK_SET);
    for (;;) {
        if (cap - n < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
            cr_assert_not_null(buf);
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r <= 0) break;
        n += (size_t)r;
    }
    buf[n] = 0;
    return buf;
}

/* Runs kiln with `args` (NULL-terminated, without argv[0]). */
static inline cli_result cli_run(const char *const *args)
{
    const char *exe = cli_path();
    if (access(exe, X_OK) != 0) cr_skip_test("kiln binary not found at %s (set KILN_CLI): skipping", exe);
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)exe;
    for (; args[argc - 1] && argc < 63; argc++) argv[argc] = (char *)args[argc - 1];
    argv[argc] = NULL;

    int out_fd = cli_temp_fd(), err_fd = cli_temp_fd();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, err_fd, STDERR_FILENO);
    pid_t pid;
    int rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(rc, 0, "posix_spawn(%s) failed: %s", exe, strerror(rc));
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0) {}

    cli_result r;
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    r.out = cli_slurp(out_fd);
    r.err = cli_slurp(err_fd);
    close(out_fd);
    close(err_fd);
    return r;
}

static inline void cli_result_free(cli_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

#endif
