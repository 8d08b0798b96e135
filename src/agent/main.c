/* lizard-agent entry: PID 1 of a sandbox (`--init`, listening socket on
 * fd 3) or a plain process for development and tests (`--socket PATH`).
 * Either way it reaps every child, accepts connections and forks one
 * handler per connection, and never exits on its own. */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define INIT_LISTEN_FD 3

static void usage(void)
{
    fprintf(stderr, "usage: lizard-agent --init | --socket PATH\n");
    exit(2);
}

/* Pipes and sockets must never land on 0-2: children dup2 onto them. */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0)
            _exit(1);
}

static int listen_on(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path)) {
        fprintf(stderr, "lizard-agent: socket path too long\n");
        return -1;
    }
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    unlink(path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 128) < 0) {
        fprintf(stderr, "lizard-agent: %s: %s\n", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static void reap_all(int sigfd)
{
    struct signalfd_siginfo si;
    while (read(sigfd, &si, sizeof(si)) == sizeof(si))
        ;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

static void start_handler(int lfd, int sigfd)
{
    int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (cfd < 0) {
        /* EMFILE and friends: back off instead of spinning on poll. */
        if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
            usleep(10000);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(lfd);
        close(sigfd);
        /* The handler is not init: it may die of signals like anyone. */
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        conn_serve(cfd);
        _exit(0);
    }
    close(cfd);
}

int main(int argc, char **argv)
{
    int lfd = -1;
    ensure_std_fds();
    if (argc == 2 && strcmp(argv[1], "--init") == 0) {
        lfd = INIT_LISTEN_FD;
        fcntl(lfd, F_SETFD, FD_CLOEXEC);
        /* As init: a stray TERM/INT/HUP must not end the sandbox. */
        signal(SIGTERM, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
    } else if (argc == 3 && strcmp(argv[1], "--socket") == 0) {
        lfd = listen_on(argv[2]);
        if (lfd < 0)
            return 1;
    } else {
        usage();
    }
    /* Socket writes to a vanished peer must fail with EPIPE, not kill us. */
    signal(SIGPIPE, SIG_IGN);
    /* Nobody in the sandbox may ptrace or read the memory of the agent. */
    prctl(PR_SET_DUMPABLE, 0);
    /* Outside a container we are not PID 1; become the reaper of orphans
     * (background monitors, leftovers of handlers) all the same. */
    if (getpid() != 1)
        prctl(PR_SET_CHILD_SUBREAPER, 1);

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sigfd < 0) {
        perror("lizard-agent: signalfd");
        return 1;
    }
    for (;;) {
        struct pollfd pfd[2] = {{.fd = lfd, .events = POLLIN}, {.fd = sigfd, .events = POLLIN}};
        if (poll(pfd, 2, -1) < 0)
            continue;
        if (pfd[1].revents)
            reap_all(sigfd);
        if (pfd[0].revents & POLLIN)
            start_handler(lfd, sigfd);
        else if (pfd[0].revents & (POLLERR | POLLNVAL))
            lfd = -1; /* listening fd broken: poll skips it, keep reaping */
    }
}
