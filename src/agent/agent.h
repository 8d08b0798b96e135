/* lizard-agent: PID 1 inside every sandbox. main.c accepts connections and
 * forks one handler per connection (conn.c); the handler multiplexes
 * streams (exec.c, bgproc.c, files.c) over the connection with one poll()
 * loop. Requests are validated by request.c before anything acts on them. */
#ifndef LZ_AGENT_H
#define LZ_AGENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/error.h"
#include "../proto/proto.h"
#include "request.h"

#define AGENT_VERSION "lizard-agent/0.1"
#define AGENT_MAX_GROUPS 64

/* ---- users.c: /etc/passwd + /etc/group, parsed directly (no NSS: the
 * agent is static and the sandbox's NSS config is not ours to trust). The
 * directory is $LIZARD_AGENT_ETC (tests only), default /etc. */
struct agent_user {
    char name[REQUEST_MAX_USER + 1];
    uid_t uid;
    gid_t gid;
    gid_t groups[AGENT_MAX_GROUPS];
    int ngroups;
    char home[512];
    char shell[256];
};
/* Returns 0, or -1 with err->errnum = ENOENT for an unknown user. */
int users_lookup(const char *name, struct agent_user *u, lz_error *err);

/* ---- conn.c: one connection and its streams. */
enum stream_kind { ST_EXEC, ST_FILE_READ, ST_FILE_WRITE, ST_PROC_STDIN };

struct byte_queue {
    char *buf;
    size_t len, off;
};

struct stream {
    struct stream *next;
    uint32_t id; /* 0 once answered: the stream only lingers to be cleaned up */
    enum stream_kind kind;
    /* ST_EXEC */
    pid_t pid;
    int out_fd, err_fd, in_fd; /* -1 when closed */
    struct byte_queue in;      /* DATA waiting for the child to read */
    bool in_eof;               /* EOF frame seen: close stdin once drained */
    uint64_t max_output, sent_out, sent_err;
    bool truncated, timed_out, exited;
    int status;
    int64_t deadline_ms; /* timeout, 0 = none */
    int64_t exited_ms;   /* when the main process exited */
    /* ST_FILE_READ / ST_FILE_WRITE / ST_PROC_STDIN */
    int fd;
    uint64_t size;
    struct agent_user user;
    char *path, *tmp_path;
    unsigned mode;
};

struct conn {
    int fd;
    int sigfd; /* signalfd for SIGCHLD */
    struct proto_decoder dec;
    struct stream *streams;
    bool dead; /* the peer is gone or broke the protocol */
};

int64_t now_ms(void);
struct stream *conn_stream_new(struct conn *c, uint32_t id, enum stream_kind kind);
void conn_stream_free(struct conn *c, struct stream *s);
void conn_send(struct conn *c, uint8_t type, uint32_t id, const void *buf, size_t len);
/* Sends and releases j (a reference is stolen). */
void conn_send_json(struct conn *c, uint8_t type, uint32_t id, json_t *j);
void conn_send_error(struct conn *c, uint32_t id, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The ERROR code proto.h lists for an errno. */
const char *errno_code(int errnum);
/* Serve one connection until the peer closes; never returns an error. */
void conn_serve(int fd);

/* ---- exec.c */
/* Fork a child in its own session that becomes req's program as user u
 * with the given stdio. Returns the pid, or -1 with err (errnum tells what
 * failed before exec, e.g. ENOENT for a missing cwd). A missing or
 * non-executable program is not an error here: the child reports it on its
 * stderr and exits 127/126 as a shell would. */
pid_t exec_spawn(const struct request *req, const struct agent_user *u, int in_fd, int out_fd,
                 int err_fd, lz_error *err);
void exec_start(struct conn *c, uint32_t id, const struct request *req);
/* Handle pollfd revents for an exec stream's fds. */
void exec_on_fd(struct conn *c, struct stream *s, int fd, short revents);
void exec_on_data(struct conn *c, struct stream *s, const uint8_t *buf, size_t len);
void exec_on_eof(struct conn *c, struct stream *s);
void exec_on_signal(struct conn *c, struct stream *s, int sig);
void exec_on_cancel(struct conn *c, struct stream *s);
void exec_on_exit(struct conn *c, pid_t pid, int status);
/* Timeouts and completion. Returns the ms until it needs to run again, -1
 * for no timer, or -2 when the stream finished and was freed (only this
 * function frees exec streams, so fd handlers never see a freed stream). */
int exec_tick(struct conn *c, struct stream *s, int64_t now);
/* Connection gone: kill every running foreground exec. */
void exec_kill_all(struct conn *c);

/* ---- bgproc.c: background processes, kept under the state directory
 * ($LIZARD_AGENT_STATE for tests, default /run/lizard-agent). */
void bgproc_start(struct conn *c, uint32_t id, const struct request *req);
void bgproc_list(struct conn *c, uint32_t id);
void bgproc_signal(struct conn *c, uint32_t id, const struct request *req);
void bgproc_output(struct conn *c, uint32_t id, const struct request *req);
void bgproc_stdin_start(struct conn *c, uint32_t id, const struct request *req);
void bgproc_stdin_data(struct conn *c, struct stream *s, const uint8_t *buf, size_t len);
void bgproc_stdin_eof(struct conn *c, struct stream *s);

/* ---- files.c: every op runs with the user's fsuid/fsgid/groups. */
void files_handle(struct conn *c, uint32_t id, const struct request *req);
/* One DATA chunk of a file.read; returns false once the stream finished. */
bool files_read_step(struct conn *c, struct stream *s);
void files_write_data(struct conn *c, struct stream *s, const uint8_t *buf, size_t len);
void files_write_eof(struct conn *c, struct stream *s);
/* Cancel or connection loss: drop the temp file / close the file. */
void files_abort(struct conn *c, struct stream *s);

#endif
