/* /v1/sandboxes/{id}/files (docs/api.md, "Files"). File bytes are streamed
 * both ways in PROTO_CHUNK pieces: a read relays the agent's DATA frames as
 * a chunked response, a write turns the request body into DATA frames. No
 * file is ever held whole in the daemon. Paths are checked here (absolute,
 * no "..", bounded) and again by the agent, which resolves them inside the
 * sandbox's root with the user's permissions. */
#include "api_sandbox_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../common/cleanup.h"
#include "../common/json_util.h"

#define FILES_MAX_PATH 4096

struct file_target {
    char path[FILES_MAX_PATH + 2]; /* one more than allowed, to see "too long" */
    char user[40];
};

/* Absolute, at most FILES_MAX_PATH bytes, no ".." component (NUL cannot
 * occur: the query decoder refuses it and JSON strings are checked). */
static bool path_ok(const char *p)
{
    size_t n = strlen(p);
    if (n == 0 || n > FILES_MAX_PATH || p[0] != '/')
        return false;
    for (const char *s = p; (s = strstr(s, "..")) != NULL; s += 2)
        if (s[-1] == '/' && (s[2] == '/' || s[2] == '\0'))
            return false;
    return true;
}

static int bad_request(struct api_call *call, const char *msg)
{
    http_respond_error(call->req, 400, "bad_request", "%s", msg);
    return -1;
}

/* path (required) and user (default root) from the query. */
static int target_from_query(struct api_call *call, struct file_target *t)
{
    int r = http_request_query(call->req, "path", t->path, sizeof(t->path));
    if (r == 0)
        return bad_request(call, "query parameter 'path' is required");
    if (r < 0 || !path_ok(t->path))
        return bad_request(call, "query parameter 'path' must be an absolute path of at most "
                                 "4096 bytes without '..' components or NUL");
    r = http_request_query(call->req, "user", t->user, sizeof(t->user));
    if (r == 0)
        snprintf(t->user, sizeof(t->user), "root");
    else if (r < 0 || !sbio_username_ok(t->user))
        return bad_request(call, "query parameter 'user' must be a user name");
    return 0;
}

/* The same from a JSON body: the path fields named, plus user. */
static int target_from_body(struct api_call *call, json_t *body, const char *key, const char **path,
                            const char **user)
{
    char msg[256];
    *user = "root";
    if (json_req_string(body, key, path, msg, sizeof(msg)) < 0 ||
        json_opt_string(body, "user", user, msg, sizeof(msg)) < 0)
        return bad_request(call, msg);
    if (!path_ok(*path)) {
        snprintf(msg, sizeof(msg),
                 "field '%s' must be an absolute path of at most 4096 bytes without '..'", key);
        return bad_request(call, msg);
    }
    if (!sbio_username_ok(*user))
        return bad_request(call, "field 'user' must be a user name");
    return 0;
}

/* A stream already under way cannot change its status: cut the connection
 * so the client sees an incomplete body rather than a short "success". */
static void abort_stream(struct api_call *call)
{
    shutdown(call->req->fd, SHUT_RDWR);
    http_stream_end(call->req);
}

/* ---- GET /files: file.read ---- */

static void file_read(struct api_call *call, struct agent_client *c, const struct file_target *t)
{
    lz_error err;
    struct agent_frame f;
    json_t *rq = json_pack("{s:s,s:s,s:s}", "op", "file.read", "path", t->path, "user", t->user);
    c->idle_ms = AGENT_IDLE_TIMEOUT_MS;
    int r = rq ? agent_client_request(c, rq, AGENT_ALLOW(PROTO_DATA), &err) : -1;
    json_decref(rq);
    if (r < 0) {
        sbio_respond_failure(call, c, &err);
        return;
    }
    bool begun = false;
    uint64_t sent = 0;
    for (;;) {
        if (agent_client_next(c, &f, true, &err) < 0) {
            if (begun)
                abort_stream(call);
            else
                sbio_respond_failure(call, c, &err);
            return;
        }
        if (f.type != PROTO_DATA)
            break;
        /* The head goes out with the first bytes, so an ERROR before them
         * (no such file, permission) still gets its own status. */
        if (!begun) {
            begun = true;
            if (http_stream_begin(call->req, 200, "application/octet-stream") < 0) {
                /* Client gone; closing the agent connection stops the read. */
                agent_frame_clear(&f);
                http_stream_end(call->req);
                return;
            }
        }
        sent += f.len;
        if (f.len > 0 && http_stream_write(call->req, f.data, f.len) < 0) {
            agent_frame_clear(&f);
            http_stream_end(call->req);
            return;
        }
        agent_frame_clear(&f);
    }
    int64_t size = -1;
    if (f.type == PROTO_ERROR && !begun)
        sbio_respond_agent_error(call, &f);
    else if (f.type == PROTO_ERROR || agent_check_count(f.json, "size", &size, &err) < 0 ||
             (uint64_t)size != sent)
        /* The agent's account does not match what it sent: do not let the
         * client take a damaged file for a whole one. */
        begun ? abort_stream(call)
              : (void)http_respond_error(call->req, 409, "sandbox_error",
                                         "the sandbox agent sent an inconsistent file");
    else if (!begun)
        http_respond_raw(call->req, 200, "application/octet-stream", "", 0);
    else
        http_stream_end(call->req);
    agent_frame_clear(&f);
}

/* ---- PUT /files: file.write ---- */

/* "0644", "755" -> mode; -1 if not an octal mode. */
static long parse_mode(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 5 || strspn(s, "01234567") != n)
        return -1;
    long v = strtol(s, NULL, 8);
    return v <= 07777 ? v : -1;
}

/* Relay the body; returns 1 when the client's body ended cleanly, 0 when
 * the agent answered early (*f filled), -1 on failure (answered). */
static int relay_body(struct api_call *call, struct agent_client *c, uint8_t *buf, uint64_t *total,
                      struct agent_frame *f)
{
    lz_error err;
    for (;;) {
        ssize_t n = http_read_body(call->req, buf, PROTO_CHUNK);
        if (n == 0)
            return 1;
        if (n < 0) {
            /* Closing the agent connection (with CANCEL) leaves the old
             * file in place: the agent writes to a temporary file. */
            http_respond_error(call->req, 400, "bad_request", "the request body broke off");
            return -1;
        }
        /* An early answer (no space, permission denied) stops the upload
         * instead of pushing the rest of a large body into a dead stream. */
        int r = agent_client_next(c, f, false, &err);
        if (r == 1)
            return 0;
        if (r < 0 || agent_client_send(c, PROTO_DATA, buf, (size_t)n, &err) < 0) {
            sbio_respond_failure(call, c, &err);
            return -1;
        }
        *total += (uint64_t)n;
    }
}

static void file_write(struct api_call *call, struct agent_client *c, const struct file_target *t,
                       long mode)
{
    lz_error err;
    struct agent_frame f;
    memset(&f, 0, sizeof(f));
    cleanup_free uint8_t *buf = malloc(PROTO_CHUNK);
    json_t *rq = json_pack("{s:s,s:s,s:s,s:i}", "op", "file.write", "path", t->path, "user",
                           t->user, "mode", (int)mode);
    c->idle_ms = AGENT_IDLE_TIMEOUT_MS;
    int r = rq && buf ? agent_client_request(c, rq, 0, &err) : -1;
    json_decref(rq);
    if (r < 0) {
        if (!buf || !rq)
            c->failure = AGENT_FAIL_SYS, lz_error_set(&err, ENOMEM, "file write");
        sbio_respond_failure(call, c, &err);
        return;
    }
    uint64_t total = 0;
    r = relay_body(call, c, buf, &total, &f);
    if (r < 0)
        return;
    /* EOF commits: the agent renames its temporary file over the target. */
    if (r == 1 && (agent_client_send(c, PROTO_EOF, NULL, 0, &err) < 0 ||
                   agent_client_next(c, &f, true, &err) < 0)) {
        sbio_respond_failure(call, c, &err);
        return;
    }
    int64_t size;
    if (f.type == PROTO_ERROR)
        sbio_respond_agent_error(call, &f);
    else if (r == 0 || agent_check_count(f.json, "size", &size, &err) < 0 ||
             (uint64_t)size != total)
        http_respond_error(call->req, 409, "sandbox_error",
                           "the sandbox agent answered the write inconsistently");
    else
        http_respond_json(call->req, 200,
                          json_pack("{s:s,s:I}", "path", t->path, "size", (json_int_t)size));
    agent_frame_clear(&f);
}

/* ---- DELETE /files, list, stat, mkdir, rename ---- */

static void file_remove(struct api_call *call, struct agent_client *c, const struct file_target *t,
                        bool recursive)
{
    json_t *rq = json_pack("{s:s,s:s,s:s,s:b}", "op", "file.remove", "path", t->path, "user",
                           t->user, "recursive", recursive);
    json_t *res = sbio_simple_call(call, c, rq);
    json_decref(rq);
    if (res == NULL)
        return;
    json_decref(res);
    http_respond_raw(call->req, 204, NULL, NULL, 0);
}

/* list and stat: the answer is rebuilt from validated fields only. */
static void file_query(struct api_call *call, struct agent_client *c, const struct file_target *t,
                       bool list)
{
    json_t *rq = json_pack("{s:s,s:s,s:s}", "op", list ? "file.list" : "file.stat", "path", t->path,
                           "user", t->user);
    sbio_call_and_respond(call, c, rq, list ? agent_check_list : agent_check_stat);
}

/* mkdir {path, user?} and rename {from, to, user?}: answer {}. */
static void file_change(struct api_call *call, const char *sandbox_id, bool rename)
{
    json_t *body = sbio_read_body(call);
    if (body == NULL)
        return;
    const char *path, *to = NULL, *user, *user2;
    json_t *rq = NULL;
    if (target_from_body(call, body, rename ? "from" : "path", &path, &user) < 0 ||
        (rename && target_from_body(call, body, "to", &to, &user2) < 0))
        goto out;
    rq = rename ? json_pack("{s:s,s:s,s:s,s:s}", "op", "file.rename", "from", path, "to", to,
                            "user", user)
                : json_pack("{s:s,s:s,s:s}", "op", "file.mkdir", "path", path, "user", user);
    struct agent_client c;
    if (sbio_open(call, sandbox_id, &c, NULL) < 0)
        goto out;
    json_t *res = sbio_simple_call(call, &c, rq);
    if (res != NULL) {
        json_decref(res);
        http_respond_json(call->req, 200, json_object());
    }
    agent_client_close(&c);
out:
    json_decref(rq);
    json_decref(body);
}

static int method_is(struct api_call *call, const char *want)
{
    if (strcmp(call->req->method, want) == 0)
        return 1;
    http_respond_error(call->req, 405, "method_not_allowed", "use %s", want);
    return 0;
}

/* Parse the query of a bytes/list/stat call, then run it on a connection. */
static void files_on_path(struct api_call *call, const char *sandbox_id, const char *rest)
{
    const char *m = call->req->method;
    struct file_target t;
    long mode = 0644;
    bool recursive = false;
    if (target_from_query(call, &t) < 0)
        return;
    if (rest[0] == '\0' && strcmp(m, "PUT") == 0) {
        char v[16];
        int r = http_request_query(call->req, "mode", v, sizeof(v));
        if (r < 0 || (r == 1 && (mode = parse_mode(v)) < 0)) {
            bad_request(call, "query parameter 'mode' must be an octal mode like 0644");
            return;
        }
    }
    if (rest[0] == '\0' && strcmp(m, "DELETE") == 0) {
        char v[8];
        int r = http_request_query(call->req, "recursive", v, sizeof(v));
        if (r < 0 || (r == 1 && strcmp(v, "true") != 0 && strcmp(v, "false") != 0 &&
                      strcmp(v, "1") != 0 && strcmp(v, "0") != 0)) {
            bad_request(call, "query parameter 'recursive' must be true or false");
            return;
        }
        recursive = r == 1 && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
    }
    struct agent_client c;
    if (sbio_open(call, sandbox_id, &c, NULL) < 0)
        return;
    if (rest[0] != '\0')
        file_query(call, &c, &t, strcmp(rest, "/list") == 0);
    else if (strcmp(m, "GET") == 0)
        file_read(call, &c, &t);
    else if (strcmp(m, "PUT") == 0)
        file_write(call, &c, &t, mode);
    else
        file_remove(call, &c, &t, recursive);
    agent_client_close(&c);
}

void api_files(struct api_call *call, const char *sandbox_id, const char *rest)
{
    const char *m = call->req->method;
    if (strcmp(rest, "") == 0) {
        if (strcmp(m, "GET") != 0 && strcmp(m, "PUT") != 0 && strcmp(m, "DELETE") != 0)
            http_respond_error(call->req, 405, "method_not_allowed", "use GET, PUT or DELETE");
        else
            files_on_path(call, sandbox_id, rest);
    } else if (strcmp(rest, "/list") == 0 || strcmp(rest, "/stat") == 0) {
        if (method_is(call, "GET"))
            files_on_path(call, sandbox_id, rest);
    } else if (strcmp(rest, "/mkdir") == 0 || strcmp(rest, "/rename") == 0) {
        if (method_is(call, "POST"))
            file_change(call, sandbox_id, strcmp(rest, "/rename") == 0);
    } else {
        http_respond_error(call->req, 404, "not_found", "no such endpoint: %s", call->req->path);
    }
}
