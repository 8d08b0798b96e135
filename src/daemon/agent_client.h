/* lizardd's side of the agent protocol (src/proto/proto.h): one blocking
 * call = one connection = one stream. Everything the agent sends is
 * untrusted (it runs inside the sandbox next to whatever code the user ran),
 * so every frame and payload is validated here before the API code sees it:
 * the stream id must be ours, the frame type must be one the op can produce,
 * JSON payloads are bounded, typed and range-checked field by field, and
 * strings that reach a client are made valid UTF-8 and length-bounded.
 *
 * While waiting for the agent the client also watches the HTTP client's
 * socket: when the client hangs up the call fails with AGENT_FAIL_CLIENT,
 * and closing the agent connection makes the agent kill the foreground
 * process group, so nothing keeps running for a departed client. */
#ifndef LZ_AGENT_CLIENT_H
#define LZ_AGENT_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "../proto/proto.h"

/* Why a call failed (the API maps each to an answer). */
enum agent_failure {
    AGENT_FAIL_NONE,
    AGENT_FAIL_PEER,    /* agent gone, or sent something invalid */
    AGENT_FAIL_TIMEOUT, /* agent silent past the deadline */
    AGENT_FAIL_CLIENT,  /* the HTTP client hung up */
    AGENT_FAIL_SYS,     /* local resource problem (memory) */
};

#define AGENT_HELLO_TIMEOUT_MS 5000
/* Longest silence accepted while the agent should be busy for us (file ops,
 * process table calls); exec waits are bounded by the exec timeout instead. */
#define AGENT_IDLE_TIMEOUT_MS 30000
#define AGENT_MAX_MESSAGE 500 /* agent messages passed on to clients */

#define AGENT_ALLOW(t) (1u << (t))

struct agent_client {
    int fd;        /* agent connection, owned (closed by agent_client_close) */
    int client_fd; /* HTTP client socket watched for hang-up; -1 = none */
    uint32_t stream;
    unsigned allowed;    /* AGENT_ALLOW() mask of frame types the op may send */
    int64_t deadline_ms; /* absolute (CLOCK_MONOTONIC ms); 0 = none */
    int idle_ms;         /* longest silence between frames; 0 = none */
    bool active;         /* a request was sent and no RESPONSE/ERROR seen */
    enum agent_failure failure;
    struct proto_decoder dec;
    uint8_t *rbuf;
    char agent[64]; /* the agent's self-description from HELLO */
};

struct agent_frame {
    uint8_t type;
    const uint8_t *data; /* STDOUT/STDERR/DATA payload; valid until the next call */
    size_t len;
    json_t *json;                        /* RESPONSE: the payload, a JSON object (owned) */
    char code[32];                       /* ERROR: one of the codes proto.h lists */
    char message[AGENT_MAX_MESSAGE + 1]; /* ERROR: sanitized, bounded */
};

/* Take over fd (also on failure), read and check HELLO. client_fd may be -1. */
int agent_client_open(struct agent_client *c, int fd, int client_fd, lz_error *err);
/* Abandons an unfinished stream with CANCEL (best effort), closes the fd. */
void agent_client_close(struct agent_client *c);

/* Give up waiting ms from now (0 = no deadline). */
void agent_client_set_deadline(struct agent_client *c, int64_t ms);

/* Send REQUEST (payload = op JSON) on the stream and set which frame types
 * the answer may contain (RESPONSE and ERROR are always allowed). */
int agent_client_request(struct agent_client *c, json_t *request, unsigned allowed, lz_error *err);
/* Send DATA/EOF/SIGNAL/CANCEL on the stream. Frames the agent sends
 * meanwhile are buffered, not lost. */
int agent_client_send(struct agent_client *c, uint8_t type, const void *data, size_t len,
                      lz_error *err);
/* Send DATA frames of at most PROTO_CHUNK bytes each. */
int agent_client_send_data(struct agent_client *c, const void *data, size_t len, lz_error *err);

/* Next frame of the stream. Returns 1 with *f filled (agent_frame_clear it),
 * 0 only when !wait and no complete frame is buffered or readable now, -1
 * on failure (c->failure says why). After RESPONSE or ERROR the stream is
 * over. */
int agent_client_next(struct agent_client *c, struct agent_frame *f, bool wait, lz_error *err);
void agent_frame_clear(struct agent_frame *f);

/* ---- payload validation (pure; unit tested) ---- */
int agent_parse_hello(const uint8_t *p, size_t n, char *agent, size_t agent_len, lz_error *err);
/* ERROR payload -> known code (unknown codes become "io") + clean message. */
int agent_parse_error(const uint8_t *p, size_t n, char code[32],
                      char message[AGENT_MAX_MESSAGE + 1], lz_error *err);
/* RESPONSE payload -> JSON object (NULL + err if not one). */
json_t *agent_parse_object(const uint8_t *p, size_t n, lz_error *err);
/* Sanitized, bounded copy of an untrusted string as a JSON string. */
json_t *agent_clean_string(const char *s, size_t len, size_t max);

struct agent_exec_result {
    int exit_code;
    int signal; /* 0 = none */
    bool timed_out, truncated;
};
int agent_check_exec_result(json_t *o, struct agent_exec_result *out, lz_error *err);
/* {"pid":N} of a background start. */
int agent_check_pid(json_t *o, int *pid, lz_error *err);
/* A non-negative integer field (size, written). */
int agent_check_count(json_t *o, const char *key, int64_t *out, lz_error *err);
/* A stat object, rebuilt from its validated fields only. NULL + err if bad. */
json_t *agent_check_stat(json_t *o, lz_error *err);
/* {"entries":[stat...]} -> new {"entries":[...]}. */
json_t *agent_check_list(json_t *o, lz_error *err);
/* {"processes":[...]} -> new {"processes":[{pid,cmd,running,exitCode,startedAt}]}. */
json_t *agent_check_processes(json_t *o, lz_error *err);
struct agent_proc_status {
    bool running, truncated;
    bool has_exit_code;
    int exit_code;
};
int agent_check_proc_output(json_t *o, struct agent_proc_status *out, lz_error *err);

#endif
