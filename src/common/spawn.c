#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

pid_t spawn_start(const char *const argv[], const char *const env_extra[], lz_error *err)
{
    return spawn_start_opts(argv, env_extra, NULL, err);
}

pid_t spawn_start_opts(const char *const argv[], const char *const env_extra[],
                       const struct spawn_opts *opts, lz_error *err)
{
    size_t nenv = 0, nextra = 0;
    while (environ[nenv])
        nenv++;
    while (env_extra && env_extra[nextra])
        nextra++;
    char **envp = calloc(nenv + nextra + 1, sizeof(char *));
    if (envp == NULL)
        return lz_error_set(err, ENOMEM, "spawn %s", argv[0]);
    size_t k = 0;
    for (size_t i = 0; i < nextra; i++)
        envp[k++] = (char *)env_extra[i];
    for (size_t i = 0; i < nenv; i++) {
        /* An extra "K=V" overrides the inherited K. */
        const char *eq = strchr(environ[i], '=');
        size_t klen = eq ? (size_t)(eq - environ[i]) + 1 : strlen(environ[i]);
        int overridden = 0;
        for (size_t j = 0; j < nextra; j++)
            if (strncmp(env_extra[j], environ[i], klen) == 0)
                overridden = 1;
        if (!overridden)
            envp[k++] = environ[i];
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    if (opts && opts->stdout_fd > 0)
        posix_spawn_file_actions_adddup2(&fa, opts->stdout_fd, 1);
    if (opts && opts->stderr_fd > 0)
        posix_spawn_file_actions_adddup2(&fa, opts->stderr_fd, 2);
    if (opts && opts->new_session)
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    pid_t pid;
    int r = posix_spawnp(&pid, argv[0], &fa, &attr, (char *const *)argv, envp);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    if (r != 0)
        return lz_error_set(err, r, "spawn %s", argv[0]);
    return pid;
}

int spawn_wait(pid_t pid, lz_error *err)
{
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return lz_error_sys(err, "waitpid %d", (int)pid);
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}

int spawn_run(const char *const argv[], const char *const env_extra[], lz_error *err)
{
    pid_t pid = spawn_start(argv, env_extra, err);
    if (pid < 0)
        return -1;
    return spawn_wait(pid, err);
}
