/* Reaching a server inside a sandbox without publishing it on the host: the
 * calling thread joins the sandbox's network namespace just long enough to
 * create and connect a socket, then returns to the daemon's own. A socket
 * keeps the namespace it was created in, so the connection lives inside the
 * sandbox while the daemon reads and writes it from the host. setns() with
 * CLONE_NEWNET affects only the calling thread, which is why this is safe in
 * a multi-threaded daemon. */
#include "container.h"
#include "../../common/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PORT_CONNECT_TIMEOUT_MS 5000

static int host_netns_fd = -1;
static int host_netns_errno;
static pthread_once_t host_netns_once = PTHREAD_ONCE_INIT;

/* /proc/self is the thread group leader, which never leaves the host
 * namespace; opened once, kept for the life of the daemon. */
static void open_host_netns(void)
{
    host_netns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    host_netns_errno = errno;
}

int port__open_netns(pid_t pid, lz_error *err)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return lz_error_sys(err, "open %s", path);
    return fd;
}

/* Wait for a non-blocking connect to finish. */
static int finish_connect(int fd, int port, lz_error *err)
{
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int r;
    do
        r = poll(&p, 1, PORT_CONNECT_TIMEOUT_MS);
    while (r < 0 && errno == EINTR);
    if (r == 0)
        return lz_error_set(err, ETIMEDOUT, "connecting to port %d timed out", port);
    int soerr = 0;
    socklen_t len = sizeof(soerr);
    if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
        return lz_error_sys(err, "connect to port %d", port);
    if (soerr != 0)
        return lz_error_set(err, soerr, "connect to port %d: %s", port, strerror(soerr));
    return 0;
}

/* Create the socket in the current thread's namespace (the sandbox's). */
static int socket_connect(int port, lz_error *err)
{
    cleanup_close int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return lz_error_sys(err, "socket");
    /* The proxy forwards pieces as they arrive; Nagle would hold a small
     * one back until the previous is acknowledged (40 ms with delayed ACKs). */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        if (errno != EINPROGRESS)
            return lz_error_sys(err, "connect to port %d", port);
        if (finish_connect(fd, port, err) < 0)
            return -1;
    }
    return steal_fd(&fd);
}

int port__connect(int netns_fd, int port, lz_error *err)
{
    pthread_once(&host_netns_once, open_host_netns);
    if (host_netns_fd < 0)
        return lz_error_set(err, host_netns_errno, "open /proc/self/ns/net: %s",
                            strerror(host_netns_errno));
    if (setns(netns_fd, CLONE_NEWNET) < 0)
        return lz_error_sys(err, "entering the sandbox network namespace");
    /* socket() must run between the two setns calls: it binds the socket to
     * the sandbox's namespace. Connecting (which may wait) could happen
     * after returning, but doing it here keeps the sequence in one place. */
    int fd = socket_connect(port, err);
    if (setns(host_netns_fd, CLONE_NEWNET) < 0) {
        /* This thread is left in the sandbox's network (cannot happen with
         * a valid fd and CAP_SYS_ADMIN). ENOTRECOVERABLE tells the caller to
         * end the connection, and with it the thread. */
        int e = errno;
        if (fd >= 0)
            close(fd);
        return lz_error_set(err, ENOTRECOVERABLE, "returning to the host network namespace: %s",
                            strerror(e));
    }
    return fd;
}
