/* The one way Lizard's host-side code starts another program (debootstrap,
 * lizardd from `lizard up`, helpers in tests). Sandboxes are not started
 * here: the container runtime clones them itself. */
#ifndef LZ_SPAWN_H
#define LZ_SPAWN_H

#include <sys/types.h>
#include "error.h"

/* Start argv[0] (looked up in PATH) with the current environment plus
 * env_extra ("K=V", NULL-terminated, may be NULL). stdin is /dev/null;
 * stdout/stderr are inherited. Returns the pid, or -1. */
pid_t spawn_start(const char *const argv[], const char *const env_extra[], lz_error *err);
/* Options for spawn_start_opts; zero-initialise and set what you need. */
struct spawn_opts {
    int stdout_fd;   /* dup'd onto the child's stdout when > 0 (0 = inherit) */
    int stderr_fd;   /* likewise for stderr */
    int new_session; /* setsid() in the child: it outlives our terminal */
};
/* spawn_start with output redirection / a new session. */
pid_t spawn_start_opts(const char *const argv[], const char *const env_extra[],
                       const struct spawn_opts *opts, lz_error *err);
/* Wait for pid; returns its exit code (128+signal when killed), or -1. */
int spawn_wait(pid_t pid, lz_error *err);
/* spawn_start + spawn_wait. */
int spawn_run(const char *const argv[], const char *const env_extra[], lz_error *err);

#endif
