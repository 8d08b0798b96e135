/* Validation of REQUEST payloads (see src/proto/proto.h for the ops). Pure:
 * no I/O, no global state, so it is unit tested and fuzzed on its own. The
 * agent acts only on a struct request that request_parse accepted. */
#ifndef LZ_AGENT_REQUEST_H
#define LZ_AGENT_REQUEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"

#define REQUEST_MAX_ARGV 4096
#define REQUEST_MAX_ENV 4096
#define REQUEST_MAX_PATH 4095
#define REQUEST_MAX_USER 64
#define REQUEST_DEFAULT_MAX_OUTPUT (1u << 20)
/* Output kept per stream is bounded so one request cannot exhaust memory
 * or the state directory. */
#define REQUEST_LIMIT_MAX_OUTPUT (256u << 20)

enum request_op {
    OP_PING,
    OP_EXEC,
    OP_PROC_LIST,
    OP_PROC_SIGNAL,
    OP_PROC_STDIN,
    OP_PROC_OUTPUT,
    OP_FILE_READ,
    OP_FILE_WRITE,
    OP_FILE_LIST,
    OP_FILE_STAT,
    OP_FILE_MKDIR,
    OP_FILE_REMOVE,
    OP_FILE_RENAME,
};

/* String pointers point into `root` and live until request_free. */
struct request {
    json_t *root;
    enum request_op op;
    const char *user; /* always set; "root" when absent */
    /* exec */
    const char **argv; /* NULL-terminated, malloc'd array; `cmd` becomes sh -c */
    const char *cmd;   /* the `cmd` text, or argv[0] for the argv form */
    bool shell;        /* `cmd` form: argv is sh -c cmd */
    const char *cwd;   /* NULL = user's home */
    const char **env;  /* "K=V" strings, NULL-terminated, malloc'd (and the strings) */
    uint64_t timeout_ms;
    uint64_t max_output;
    bool stdin_pipe;
    bool background;
    /* proc.* */
    int pid;
    int signal;
    bool eof;
    /* file.* */
    const char *path;
    const char *to; /* rename target; path is the source */
    unsigned mode;
    bool recursive;
};

/* Parse and validate one REQUEST payload. Returns 0, or -1 with err->msg
 * saying which field is wrong (the agent answers ERROR "invalid"). */
int request_parse(const uint8_t *payload, size_t len, struct request *req, lz_error *err);
void request_free(struct request *req);

/* SIGNAL frame payload {"signal":N}. Returns the signal or -1. */
int request_parse_signal(const uint8_t *payload, size_t len, lz_error *err);

/* A path the agent will touch: absolute, no NUL, no ".." component. */
bool request_path_ok(const char *path, size_t len);

#endif
