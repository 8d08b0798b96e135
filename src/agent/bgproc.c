/* Background processes. A double-forked monitor (a child of PID 1, not of
 * the connection handler, so it survives the connection) owns the
 * program's pipes, copies output into files and records the exit code.
 * Everything about a process lives in STATE/procs/PID/:
 *   cmd, started (ms since the epoch), monitor (its pid), stdout, stderr,
 *   truncated (exists once output was dropped), exit (code, written last),
 *   stdin (a FIFO, only for "stdin":true).
 * The monitor holds the FIFO open read-write so the program sees no EOF
 * between proc.stdin calls; SIGUSR1 tells it to let go (stdin EOF). */
#include "agent.h"
#include "../common/cleanup.h"
#include "../common/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MONITOR_PIPE_GRACE_MS 100
#define STDIN_WRITE_TIMEOUT_MS 10000

struct start_report {
    int pid; /* > 0 on success */
    int errnum;
    char msg[256];
};

static const char *state_dir(void)
{
    const char *d = getenv("LIZARD_AGENT_STATE");
    return d && *d ? d : "/run/lizard-agent";
}

static void proc_path(char *buf, size_t n, int pid, const char *file)
{
    snprintf(buf, n, "%s/procs/%d%s%s", state_dir(), pid, file ? "/" : "", file ? file : "");
}

static void put_file(const char *dir, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void put_file(const char *dir, const char *name, const char *fmt, ...)
{
    char path[1024], text[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    write_file_atomic(path, text, 0600, NULL);
}

/* ---- the monitor process ---- */

struct monitor {
    const char *dir;
    int out_pipe, err_pipe, out_file, err_file, keepalive, sigfd;
    uint64_t max, out_n, err_n;
    bool truncated;
};

static void monitor_copy(struct monitor *m, int *pipe_fd, int file_fd, uint64_t *n)
{
    char buf[PROTO_CHUNK];
    ssize_t r = read(*pipe_fd, buf, sizeof(buf));
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        close(*pipe_fd);
        *pipe_fd = -1;
        return;
    }
    uint64_t room = m->max - *n;
    size_t take = (uint64_t)r < room ? (size_t)r : (size_t)room;
    if (take < (size_t)r && !m->truncated) {
        m->truncated = true;
        put_file(m->dir, "truncated", "1\n");
    }
    if (take > 0 && write_all(file_fd, buf, take) == 0)
        *n += take;
}

static void monitor_signal(struct monitor *m, pid_t child, int *status, int64_t *exited_ms)
{
    struct signalfd_siginfo si;
    while (read(m->sigfd, &si, sizeof(si)) == sizeof(si))
        if (si.ssi_signo == SIGUSR1 && m->keepalive >= 0) {
            close(m->keepalive);
            m->keepalive = -1;
        }
    int st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG)) > 0)
        if (p == child) {
            *status = st;
            *exited_ms = now_ms();
        }
}

static void __attribute__((noreturn)) monitor_loop(struct monitor *m, pid_t child)
{
    int status = 0;
    int64_t exited_ms = 0;
    for (;;) {
        if (exited_ms &&
            ((m->out_pipe < 0 && m->err_pipe < 0) || now_ms() >= exited_ms + MONITOR_PIPE_GRACE_MS))
            break;
        struct pollfd pfd[3] = {{.fd = m->sigfd, .events = POLLIN},
                                {.fd = m->out_pipe, .events = POLLIN},
                                {.fd = m->err_pipe, .events = POLLIN}};
        int timeout = exited_ms ? (int)(exited_ms + MONITOR_PIPE_GRACE_MS - now_ms()) : -1;
        if (poll(pfd, 3, timeout < 0 && exited_ms ? 0 : timeout) < 0 && errno != EINTR)
            break;
        if (pfd[0].revents)
            monitor_signal(m, child, &status, &exited_ms);
        if (pfd[1].revents)
            monitor_copy(m, &m->out_pipe, m->out_file, &m->out_n);
        if (pfd[2].revents)
            monitor_copy(m, &m->err_pipe, m->err_file, &m->err_n);
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    /* `exit` is written last: its presence means everything else is final. */
    put_file(m->dir, "exit", "%d\n", code);
    _exit(0);
}

static void report(int fd, int pid, int errnum, const char *msg)
{
    struct start_report r = {.pid = pid, .errnum = errnum};
    snprintf(r.msg, sizeof(r.msg), "%s", msg);
    if (write(fd, &r, sizeof(r)) < 0) {
        /* the handler is gone; the process runs on regardless */
    }
}

static int open_out(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
}

/* Stdin: a FIFO in the proc dir, or /dev/null. Returns the child's end. */
static int open_stdin(const struct request *req, struct monitor *m, const char *dir)
{
    if (!req->stdin_pipe)
        return open("/dev/null", O_RDONLY | O_CLOEXEC);
    char path[1024];
    snprintf(path, sizeof(path), "%s/stdin", dir);
    if (mkfifo(path, 0600) < 0)
        return -1;
    /* O_RDWR first: it never blocks and keeps a writer, so the O_RDONLY
     * open does not block either and the program sees no early EOF. */
    m->keepalive = open(path, O_RDWR | O_CLOEXEC);
    return m->keepalive < 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC);
}

static char *cmd_text(const struct request *req)
{
    if (req->shell)
        return strdup(req->cmd);
    size_t n = 1;
    for (size_t i = 0; req->argv[i]; i++)
        n += strlen(req->argv[i]) + 1;
    char *s = calloc(1, n);
    for (size_t i = 0; s && req->argv[i]; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, req->argv[i]);
    }
    return s;
}

static void __attribute__((noreturn))
monitor_main(const struct request *req, const struct agent_user *u, int rep, int sigfd)
{
    char tmp[512], final[512];
    struct monitor m = {
        .out_pipe = -1, .err_pipe = -1, .keepalive = -1, .sigfd = sigfd, .max = req->max_output};
    int out[2], errp[2];
    lz_error err = {0};
    snprintf(tmp, sizeof(tmp), "%s/procs/.new-%d", state_dir(), getpid());
    m.dir = tmp;
    if (mkdir(tmp, 0700) < 0 || (m.out_file = open_out(tmp, "stdout")) < 0 ||
        (m.err_file = open_out(tmp, "stderr")) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
        pipe2(errp, O_CLOEXEC) < 0) {
        report(rep, -1, errno, "set up process state");
        rm_rf(tmp, NULL);
        _exit(1);
    }
    int in = open_stdin(req, &m, tmp);
    pid_t pid = in < 0 ? -1 : exec_spawn(req, u, in, out[1], errp[1], &err);
    if (pid < 0) {
        report(rep, -1, in < 0 ? errno : err.errnum, in < 0 ? "stdin" : err.msg);
        rm_rf(tmp, NULL);
        _exit(1);
    }
    close(in);
    close(out[1]);
    close(errp[1]);
    m.out_pipe = out[0];
    m.err_pipe = errp[0];
    cleanup_free char *cmd = cmd_text(req);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    put_file(tmp, "cmd", "%s", cmd ? cmd : "");
    put_file(tmp, "started", "%lld\n", (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    put_file(tmp, "monitor", "%d\n", getpid());
    /* Renamed into place before the pid is reported, so a proc.list right
     * after the RESPONSE already sees it. */
    snprintf(final, sizeof(final), "%s/procs/%d", state_dir(), pid);
    rm_rf(final, NULL); /* a stale record of an earlier process with this pid */
    rename(tmp, final);
    m.dir = final;
    report(rep, pid, 0, "");
    close(rep);
    monitor_loop(&m, pid);
}

static void __attribute__((noreturn))
monitor_spawn(const struct request *req, const struct agent_user *u, int rep)
{
    /* Drop everything of the handler (the connection socket, other
     * streams' pipes): the monitor must not keep them alive. */
    if (rep != 3) {
        if (dup2(rep, 3) < 0)
            _exit(1);
        rep = 3;
    }
    syscall(SYS_close_range, 4, ~0u, 0);
    setsid();
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    /* Second fork: the monitor is orphaned to PID 1 (or the subreaper),
     * which reaps it; the handler only waits for this intermediate. */
    pid_t p = fork();
    if (p != 0)
        _exit(p < 0 ? 1 : 0);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGUSR1);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sigfd < 0) {
        report(rep, -1, errno, "signalfd");
        _exit(1);
    }
    monitor_main(req, u, rep, sigfd);
}

static bool proc_running(int pid, long long *exit_code);
static long long read_num(int pid, const char *file, long long dflt);

/* Records of finished processes are kept for proc.list/proc.output, but not
 * forever: past BGPROC_KEEP finished records, the oldest are removed, so a
 * sandbox that starts many background jobs does not fill its disk. */
#define BGPROC_KEEP 128

struct finished {
    int pid;
    long long started;
};

static int finished_cmp(const void *a, const void *b)
{
    const struct finished *x = a, *y = b;
    return x->started < y->started ? -1 : x->started > y->started;
}

static void bgproc_prune(void)
{
    char dir[512], path[600];
    snprintf(dir, sizeof(dir), "%s/procs", state_dir());
    cleanup_closedir DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct finished *done = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        long long code;
        if (*end != '\0' || pid <= 0 || pid > INT32_MAX || proc_running((int)pid, &code))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            struct finished *bigger = realloc(done, cap * sizeof(*done));
            if (bigger == NULL)
                break;
            done = bigger;
        }
        done[n++] = (struct finished){(int)pid, read_num((int)pid, "started", 0)};
    }
    if (n > BGPROC_KEEP) {
        qsort(done, n, sizeof(*done), finished_cmp);
        for (size_t i = 0; i < n - BGPROC_KEEP; i++) {
            snprintf(path, sizeof(path), "%s/%d", dir, done[i].pid);
            rm_rf(path, NULL);
        }
    }
    free(done);
}

void bgproc_start(struct conn *c, uint32_t id, const struct request *req)
{
    bgproc_prune();
    struct agent_user u;
    lz_error err = {0};
    if (users_lookup(req->user, &u, &err) < 0)
        return conn_send_error(c, id, err.errnum == ENOENT ? "unknown_user" : "io", "%s", err.msg);
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/procs", state_dir());
    if (mkdir_p(dir, 0700, &err) < 0)
        return conn_send_error(c, id, "io", "%s", err.msg);
    int rp[2];
    if (pipe2(rp, O_CLOEXEC) < 0)
        return conn_send_error(c, id, "io", "pipe: %s", strerror(errno));
    pid_t mid = fork();
    if (mid == 0) {
        close(rp[0]);
        monitor_spawn(req, &u, rp[1]);
    }
    close(rp[1]);
    if (mid > 0)
        waitpid(mid, NULL, 0);
    struct start_report r = {0};
    ssize_t n;
    do
        n = read(rp[0], &r, sizeof(r));
    while (n < 0 && errno == EINTR);
    close(rp[0]);
    if (n != sizeof(r) || r.pid <= 0) {
        r.msg[sizeof(r.msg) - 1] = '\0';
        return conn_send_error(c, id, n == sizeof(r) ? errno_code(r.errnum) : "io",
                               "background start failed: %s",
                               n == sizeof(r) ? r.msg : "monitor died");
    }
    conn_send_json(c, PROTO_RESPONSE, id, json_pack("{s:i}", "pid", r.pid));
}

/* ---- queries from handlers ---- */

static bool proc_exists(int pid)
{
    char path[512];
    struct stat st;
    proc_path(path, sizeof(path), pid, NULL);
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static long long read_num(int pid, const char *file, long long dflt)
{
    char path[512];
    cleanup_free char *text = NULL;
    proc_path(path, sizeof(path), pid, file);
    if (read_file(path, 64, &text, NULL) < 0)
        return dflt;
    char *end;
    long long v = strtoll(text, &end, 10);
    return end == text ? dflt : v;
}

/* Running = no exit record yet and the monitor is alive (a monitor killed
 * from inside the sandbox would otherwise leave "running" forever). */
static bool proc_running(int pid, long long *exit_code)
{
    *exit_code = read_num(pid, "exit", -1);
    if (*exit_code >= 0)
        return false;
    long long mon = read_num(pid, "monitor", -1);
    return mon > 0 && kill((pid_t)mon, 0) == 0;
}

static json_t *proc_json(int pid)
{
    char path[512];
    cleanup_free char *cmd = NULL;
    proc_path(path, sizeof(path), pid, "cmd");
    read_file(path, 1u << 16, &cmd, NULL);
    long long code;
    bool running = proc_running(pid, &code);
    json_t *j = json_pack("{s:i,s:s,s:b,s:I}", "pid", pid, "cmd", cmd ? cmd : "", "running",
                          running, "startedAt", (json_int_t)read_num(pid, "started", 0));
    if (j == NULL) /* cmd was not UTF-8 */
        j = json_pack("{s:i,s:s,s:b,s:I}", "pid", pid, "cmd", "", "running", running, "startedAt",
                      (json_int_t)read_num(pid, "started", 0));
    json_object_set_new(j, "exitCode", code >= 0 ? json_integer(code) : json_null());
    return j;
}

void bgproc_list(struct conn *c, uint32_t id)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/procs", state_dir());
    json_t *list = json_array();
    cleanup_closedir DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end == '\0' && pid > 0 && pid <= INT32_MAX)
            json_array_append_new(list, proc_json((int)pid));
    }
    conn_send_json(c, PROTO_RESPONSE, id, json_pack("{s:o}", "processes", list));
}

void bgproc_signal(struct conn *c, uint32_t id, const struct request *req)
{
    long long code;
    if (!proc_exists(req->pid))
        return conn_send_error(c, id, "not_found", "no background process %d", req->pid);
    if (!proc_running(req->pid, &code))
        return conn_send_error(c, id, "not_found", "process %d is not running", req->pid);
    /* The program leads its own session; signal the whole group. */
    if (kill(-req->pid, req->signal) < 0 && kill(req->pid, req->signal) < 0)
        return conn_send_error(c, id, errno_code(errno), "kill %d: %s", req->pid, strerror(errno));
    conn_send(c, PROTO_RESPONSE, id, "{}", 2);
}

static void send_file(struct conn *c, uint32_t id, int pid, const char *name, uint8_t type)
{
    char path[512];
    proc_path(path, sizeof(path), pid, name);
    cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
    char buf[PROTO_CHUNK];
    ssize_t n;
    while (fd >= 0 && !c->dead && (n = read(fd, buf, sizeof(buf))) > 0)
        conn_send(c, type, id, buf, (size_t)n);
}

void bgproc_output(struct conn *c, uint32_t id, const struct request *req)
{
    if (!proc_exists(req->pid))
        return conn_send_error(c, id, "not_found", "no background process %d", req->pid);
    long long code;
    /* Read the state before the output: if it says exited, the output
     * files are complete. */
    bool running = proc_running(req->pid, &code);
    char path[512];
    proc_path(path, sizeof(path), req->pid, "truncated");
    bool truncated = access(path, F_OK) == 0;
    send_file(c, id, req->pid, "stdout", PROTO_STDOUT);
    send_file(c, id, req->pid, "stderr", PROTO_STDERR);
    json_t *j = json_pack("{s:b,s:b}", "running", running, "truncated", truncated);
    json_object_set_new(j, "exitCode", code >= 0 ? json_integer(code) : json_null());
    conn_send_json(c, PROTO_RESPONSE, id, j);
}

void bgproc_stdin_start(struct conn *c, uint32_t id, const struct request *req)
{
    long long code;
    char path[512];
    if (!proc_exists(req->pid))
        return conn_send_error(c, id, "not_found", "no background process %d", req->pid);
    if (!proc_running(req->pid, &code))
        return conn_send_error(c, id, "not_found", "process %d is not running", req->pid);
    proc_path(path, sizeof(path), req->pid, "stdin");
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return conn_send_error(c, id, errno == ENOENT ? "invalid" : errno_code(errno),
                               "process %d has no open stdin (start it with \"stdin\":true)",
                               req->pid);
    struct stream *s = conn_stream_new(c, id, ST_PROC_STDIN);
    if (s == NULL) {
        close(fd);
        return conn_send_error(c, id, "io", "out of memory");
    }
    s->fd = fd;
    s->pid = req->pid;
    s->in_eof = req->eof;
}

void bgproc_stdin_data(struct conn *c, struct stream *s, const uint8_t *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(s->fd, buf + off, len - off);
        if (w >= 0) {
            off += (size_t)w;
            continue;
        }
        if (errno == EINTR)
            continue;
        /* The program is slow to read: wait a bounded time, since this
         * blocks the whole connection. */
        struct pollfd p = {.fd = s->fd, .events = POLLOUT};
        if (errno == EAGAIN && poll(&p, 1, STDIN_WRITE_TIMEOUT_MS) > 0)
            continue;
        if (errno == EAGAIN)
            conn_send_error(c, s->id, "busy", "process %d does not read its stdin", s->pid);
        else
            conn_send_error(c, s->id, errno_code(errno), "stdin of %d: %s", s->pid,
                            strerror(errno));
        conn_stream_free(c, s);
        return;
    }
    s->size += len;
}

void bgproc_stdin_eof(struct conn *c, struct stream *s)
{
    close(s->fd);
    s->fd = -1;
    if (s->in_eof) {
        long long mon = read_num(s->pid, "monitor", -1);
        if (mon > 0)
            kill((pid_t)mon, SIGUSR1);
    }
    conn_send_json(c, PROTO_RESPONSE, s->id, json_pack("{s:I}", "written", (json_int_t)s->size));
    conn_stream_free(c, s);
}
