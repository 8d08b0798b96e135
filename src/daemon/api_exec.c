/* POST /v1/sandboxes/{id}/exec and /processes (docs/api.md, "Exec" and
 * "Background processes"). The request is validated here, the sandbox's
 * env is merged under the exec's own, and the agent's answer is relayed:
 * collected into one JSON object, or streamed as NDJSON lines. Output sizes
 * are enforced again here because the agent is not trusted to do it. */
#include "api_sandbox_io.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/cleanup.h"
#include "../common/json_util.h"
#include "../common/utf8.h"

#define EXEC_DEFAULT_TIMEOUT_MS 60000
#define EXEC_MAX_TIMEOUT_MS 86400000LL
#define EXEC_DEFAULT_MAX_OUTPUT (1 << 20)
#define EXEC_MAX_OUTPUT (16 << 20)
#define EXEC_MAX_ARGV 4096
#define EXEC_MAX_ENV 4096
#define EXEC_MAX_PATH 4095
/* How long past the exec's own timeout we wait for the agent to report it:
 * killing a process group and collecting its last output takes a moment. */
#define EXEC_TIMEOUT_MARGIN_MS 10000
/* proc.output has no maxOutput of its own: the agent kept at most what the
 * exec allowed, which is at most this. */
#define PROC_OUTPUT_MAX EXEC_MAX_OUTPUT

struct exec_params {
    json_t *argv; /* borrowed from the body; NULL when cmd is a string */
    const char *cmd;
    const char *user;
    const char *cwd;
    json_t *env; /* borrowed; NULL = none */
    int64_t timeout_ms, max_output;
    const char *stdin_data;
    size_t stdin_len;
    int has_stdin, background;
};

static int bad(char *errbuf, size_t errlen, const char *msg)
{
    snprintf(errbuf, errlen, "%s", msg);
    return -1;
}

static bool env_name_ok(const char *k)
{
    if (!(isalpha((unsigned char)k[0]) || k[0] == '_'))
        return false;
    for (const char *p = k; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return false;
    return strlen(k) <= 255;
}

static int parse_cmd(json_t *body, struct exec_params *p, char *errbuf, size_t errlen)
{
    json_t *cmd = json_object_get(body, "cmd");
    if (json_is_string(cmd)) {
        if (json_string_length(cmd) == 0 ||
            strlen(json_string_value(cmd)) != json_string_length(cmd))
            return bad(errbuf, errlen, "field 'cmd' must be a non-empty string without NUL");
        p->cmd = json_string_value(cmd);
        return 0;
    }
    if (!json_is_array(cmd) || json_array_size(cmd) == 0 || json_array_size(cmd) > EXEC_MAX_ARGV)
        return bad(errbuf, errlen,
                   "field 'cmd' is required: a non-empty string or a non-empty array of strings");
    size_t i;
    json_t *a;
    json_array_foreach(cmd, i, a)
    {
        if (!json_is_string(a) || strlen(json_string_value(a)) != json_string_length(a))
            return bad(errbuf, errlen, "field 'cmd' must hold only strings without NUL");
    }
    p->argv = cmd;
    return 0;
}

static int parse_env(json_t *body, struct exec_params *p, char *errbuf, size_t errlen)
{
    if (json_opt_string_map(body, "env", EXEC_MAX_ENV, &p->env, errbuf, errlen) < 0)
        return -1;
    const char *k;
    json_t *v;
    json_object_foreach(p->env, k, v)
    {
        if (!env_name_ok(k)) {
            snprintf(errbuf, errlen, "field 'env': '%.64s' is not a valid variable name", k);
            return -1;
        }
        if (strlen(json_string_value(v)) != json_string_length(v))
            return bad(errbuf, errlen, "field 'env' values must not contain NUL");
    }
    return 0;
}

static int exec_params_parse(json_t *body, struct exec_params *p, char *errbuf, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    p->user = "root";
    p->timeout_ms = EXEC_DEFAULT_TIMEOUT_MS;
    p->max_output = EXEC_DEFAULT_MAX_OUTPUT;
    if (parse_cmd(body, p, errbuf, errlen) < 0 ||
        json_opt_string(body, "user", &p->user, errbuf, errlen) < 0 ||
        json_opt_string(body, "cwd", &p->cwd, errbuf, errlen) < 0 ||
        parse_env(body, p, errbuf, errlen) < 0 ||
        json_opt_int(body, "timeoutMs", 0, EXEC_MAX_TIMEOUT_MS, &p->timeout_ms, errbuf, errlen) <
            0 ||
        json_opt_int(body, "maxOutputBytes", 1, EXEC_MAX_OUTPUT, &p->max_output, errbuf, errlen) <
            0 ||
        json_opt_bool(body, "background", &p->background, errbuf, errlen) < 0)
        return -1;
    if (!sbio_username_ok(p->user))
        return bad(errbuf, errlen, "field 'user' must be a user name ([a-z_][a-z0-9_-]*)");
    if (p->cwd && (p->cwd[0] != '/' || strlen(p->cwd) > EXEC_MAX_PATH))
        return bad(errbuf, errlen, "field 'cwd' must be an absolute path");
    /* stdin is data, not a name: NUL characters are allowed. */
    json_t *in = json_object_get(body, "stdin");
    if (in != NULL && !json_is_null(in)) {
        if (!json_is_string(in))
            return bad(errbuf, errlen, "field 'stdin' must be a string");
        p->has_stdin = 1;
        p->stdin_data = json_string_value(in);
        p->stdin_len = json_string_length(in);
    }
    return 0;
}

/* Sandbox env (from create; stored by us, still checked) under the exec's. */
static json_t *merge_env(const char *sandbox_env, json_t *own)
{
    json_t *env = json_object();
    json_t *base = sandbox_env ? json_loads(sandbox_env, 0, NULL) : NULL;
    const char *k;
    json_t *v;
    if (json_is_object(base))
        json_object_foreach(base, k, v)
        {
            if (json_is_string(v) && env_name_ok(k))
                json_object_set(env, k, v);
        }
    json_decref(base);
    if (own)
        json_object_update(env, own);
    return env;
}

static json_t *exec_request(const struct exec_params *p, const char *sandbox_env)
{
    json_t *rq = json_pack("{s:s,s:s,s:o,s:I,s:I,s:b,s:b}", "op", "exec", "user", p->user, "env",
                           merge_env(sandbox_env, p->env), "timeoutMs", (json_int_t)p->timeout_ms,
                           "maxOutput", (json_int_t)p->max_output,
                           /* Background processes always get a stdin pipe so
                            * that /processes/PID/stdin can feed them later. */
                           "stdin", p->has_stdin || p->background, "background", p->background);
    if (rq == NULL)
        return NULL;
    if (p->argv)
        json_object_set(rq, "argv", p->argv);
    else
        json_object_set_new(rq, "cmd", json_string(p->cmd));
    if (p->cwd)
        json_object_set_new(rq, "cwd", json_string(p->cwd));
    return rq;
}

/* ---- output capture (collect mode, proc.output) ---- */

struct capture {
    char *buf;
    size_t len, cap, max;
    bool truncated;
};

static int capture_add(struct capture *c, const uint8_t *p, size_t n)
{
    size_t take = n < c->max - c->len ? n : c->max - c->len;
    if (take < n)
        c->truncated = true;
    if (take == 0)
        return 0;
    if (c->len + take > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + take)
            cap *= 2;
        if (cap > c->max)
            cap = c->max;
        char *nb = realloc(c->buf, cap);
        if (nb == NULL)
            return -1;
        c->buf = nb;
        c->cap = cap;
    }
    memcpy(c->buf + c->len, p, take);
    c->len += take;
    return 0;
}

static json_t *capture_text(const struct capture *c)
{
    return agent_clean_string(c->buf ? c->buf : "", c->len, c->len);
}

/* Read STDOUT/STDERR frames into two captures until RESPONSE/ERROR. Returns
 * 1 with *f = the final frame, or -1 (failure answered). */
static int collect_output(struct api_call *call, struct agent_client *c, struct capture out[2],
                          struct agent_frame *f)
{
    lz_error err;
    for (;;) {
        if (agent_client_next(c, f, true, &err) < 0) {
            sbio_respond_failure(call, c, &err);
            return -1;
        }
        if (f->type == PROTO_RESPONSE || f->type == PROTO_ERROR)
            return 1;
        if (capture_add(&out[f->type == PROTO_STDERR], f->data, f->len) < 0) {
            c->failure = AGENT_FAIL_SYS;
            lz_error_set(&err, ENOMEM, "collecting output");
            sbio_respond_failure(call, c, &err);
            return -1;
        }
        agent_frame_clear(f);
    }
}

static void exec_collect(struct api_call *call, struct agent_client *c, int64_t max_output)
{
    struct capture out[2] = {{.max = (size_t)max_output}, {.max = (size_t)max_output}};
    struct agent_frame f;
    lz_error err;
    if (collect_output(call, c, out, &f) < 0)
        goto done;
    if (f.type == PROTO_ERROR) {
        sbio_respond_agent_error(call, &f);
        goto done;
    }
    struct agent_exec_result res;
    if (agent_check_exec_result(f.json, &res, &err) < 0) {
        c->failure = AGENT_FAIL_PEER;
        sbio_respond_failure(call, c, &err);
        goto done;
    }
    json_t *body =
        json_pack("{s:o,s:o,s:i,s:b,s:b}", "stdout", capture_text(&out[0]), "stderr",
                  capture_text(&out[1]), "exitCode", res.exit_code, "truncated",
                  res.truncated || out[0].truncated || out[1].truncated, "timedOut", res.timed_out);
    if (body == NULL)
        http_respond_error(call->req, 503, "unavailable", "out of memory building the result");
    else
        http_respond_json(call->req, 200, body);
done:
    agent_frame_clear(&f);
    free(out[0].buf);
    free(out[1].buf);
}

/* ---- NDJSON streaming ---- */

struct ndjson {
    struct http_request *req;
    bool begun;
    bool broken; /* the client went away mid-stream */
    struct utf8_carry carry[2];
    uint64_t seen[2], max;
    bool truncated;
    char *line;
    size_t cap;
    char *text;
    size_t text_cap;
};

static int ndjson_begin(struct ndjson *s)
{
    if (s->begun)
        return 0;
    s->begun = true;
    if (http_stream_begin(s->req, 200, "application/x-ndjson") < 0) {
        s->broken = true;
        return -1;
    }
    return 0;
}

/* Write j as one line (j is released). */
static int ndjson_line(struct ndjson *s, json_t *j)
{
    if (j == NULL || ndjson_begin(s) < 0)
        goto fail;
    size_t need = json_dumpb(j, NULL, 0, JSON_COMPACT);
    if (need == 0)
        goto fail;
    if (need + 1 > s->cap) {
        char *nb = realloc(s->line, need + 1);
        if (nb == NULL)
            goto fail;
        s->line = nb;
        s->cap = need + 1;
    }
    json_dumpb(j, s->line, need, JSON_COMPACT);
    s->line[need] = '\n';
    json_decref(j);
    if (http_stream_write(s->req, s->line, need + 1) < 0) {
        s->broken = true;
        return -1;
    }
    return 0;
fail:
    json_decref(j);
    s->broken = true;
    return -1;
}

/* One output chunk: bounded by max, made valid UTF-8 (a character split
 * between chunks is carried to the next one), sent as a line. */
static int ndjson_output(struct ndjson *s, int which, const uint8_t *p, size_t n, bool final)
{
    uint64_t room = s->max - s->seen[which];
    if (n > room) {
        n = (size_t)room;
        s->truncated = true;
    }
    s->seen[which] += n;
    if (n == 0 && (!final || s->carry[which].len == 0))
        return 0;
    if (UTF8_SANITIZE_BOUND(n) > s->text_cap) {
        char *nb = realloc(s->text, UTF8_SANITIZE_BOUND(n));
        if (nb == NULL)
            return -1;
        s->text = nb;
        s->text_cap = UTF8_SANITIZE_BOUND(n);
    }
    size_t len = utf8_sanitize(&s->carry[which], p, n, final, s->text);
    if (len == 0)
        return 0;
    return ndjson_line(s, json_pack("{s:s,s:o}", "type", which ? "stderr" : "stdout", "data",
                                    json_stringn_nocheck(s->text, len)));
}

static void ndjson_error(struct ndjson *s, const char *code, const char *msg)
{
    ndjson_line(
        s, json_pack("{s:s,s:{s:s,s:s}}", "type", "error", "error", "code", code, "message", msg));
}

static void ndjson_finish(struct api_call *call, struct agent_client *c, struct ndjson *s,
                          struct agent_frame *f)
{
    if (f->type == PROTO_ERROR && !s->begun) {
        /* Nothing sent yet: a real HTTP status is still possible. */
        sbio_respond_agent_error(call, f);
        return;
    }
    if (f->type == PROTO_ERROR) {
        const char *code;
        sbio_error_status(f->code, &code);
        ndjson_error(s, code, f->message);
        return;
    }
    struct agent_exec_result res;
    lz_error err;
    if (agent_check_exec_result(f->json, &res, &err) < 0) {
        c->failure = AGENT_FAIL_PEER;
        if (!s->begun)
            sbio_respond_failure(call, c, &err);
        else
            ndjson_error(s, sbio_failure_code(c), err.msg);
        return;
    }
    /* Flush characters left incomplete at the very end as U+FFFD. */
    if (ndjson_output(s, 0, NULL, 0, true) < 0 || ndjson_output(s, 1, NULL, 0, true) < 0)
        return;
    ndjson_line(s,
                json_pack("{s:s,s:i,s:b,s:b}", "type", "exit", "exitCode", res.exit_code,
                          "truncated", res.truncated || s->truncated, "timedOut", res.timed_out));
}

static void exec_stream(struct api_call *call, struct agent_client *c, int64_t max_output)
{
    struct ndjson s = {.req = call->req, .max = (uint64_t)max_output};
    struct agent_frame f;
    lz_error err;
    for (;;) {
        if (agent_client_next(c, &f, true, &err) < 0) {
            if (!s.begun)
                sbio_respond_failure(call, c, &err);
            else
                ndjson_error(&s, sbio_failure_code(c), err.msg);
            break;
        }
        if (f.type == PROTO_RESPONSE || f.type == PROTO_ERROR) {
            ndjson_finish(call, c, &s, &f);
            break;
        }
        if (ndjson_output(&s, f.type == PROTO_STDERR, f.data, f.len, false) < 0)
            break; /* client gone: closing the agent connection kills the command */
        agent_frame_clear(&f);
    }
    agent_frame_clear(&f);
    if (s.begun)
        http_stream_end(call->req);
    free(s.line);
    free(s.text);
}

/* ---- background ---- */

/* Feed data to a background process's stdin over the open connection. */
static json_t *proc_stdin_call(struct api_call *call, struct agent_client *c, int pid,
                               const char *data, size_t len, bool eof)
{
    lz_error err;
    json_t *rq = json_pack("{s:s,s:i,s:b}", "op", "proc.stdin", "pid", pid, "eof", eof);
    c->idle_ms = AGENT_IDLE_TIMEOUT_MS;
    int r = rq ? agent_client_request(c, rq, 0, &err) : -1;
    json_decref(rq);
    /* DATA...EOF, then the answer. The agent may answer ERROR early (no such
     * process); its frame waits in our buffer until we read it. */
    if (r < 0 || agent_client_send_data(c, data, len, &err) < 0 ||
        agent_client_send(c, PROTO_EOF, NULL, 0, &err) < 0) {
        sbio_respond_failure(call, c, &err);
        return NULL;
    }
    return sbio_read_result(call, c);
}

static void exec_background(struct api_call *call, struct agent_client *c,
                            const struct exec_params *p)
{
    struct agent_frame f;
    lz_error err;
    int pid;
    c->idle_ms = AGENT_IDLE_TIMEOUT_MS;
    if (agent_client_next(c, &f, true, &err) < 0) {
        sbio_respond_failure(call, c, &err);
        return;
    }
    if (f.type == PROTO_ERROR) {
        sbio_respond_agent_error(call, &f);
        agent_frame_clear(&f);
        return;
    }
    int r = agent_check_pid(f.json, &pid, &err);
    agent_frame_clear(&f);
    if (r < 0) {
        c->failure = AGENT_FAIL_PEER;
        sbio_respond_failure(call, c, &err);
        return;
    }
    if (p->has_stdin) {
        /* The process keeps its stdin open for later /stdin calls. */
        json_t *res = proc_stdin_call(call, c, pid, p->stdin_data, p->stdin_len, false);
        if (res == NULL)
            return;
        json_decref(res);
    }
    http_respond_json(call->req, 201, json_pack("{s:i}", "pid", pid));
}

/* ---- POST /exec ---- */

static bool wants_ndjson(struct http_request *req)
{
    const char *accept = http_request_header(req, "Accept");
    return accept && strcasestr(accept, "application/x-ndjson") != NULL;
}

void api_exec(struct api_call *call, const char *sandbox_id)
{
    if (strcmp(call->req->method, "POST") != 0) {
        http_respond_error(call->req, 405, "method_not_allowed", "use POST");
        return;
    }
    json_t *body = sbio_read_body(call);
    if (body == NULL)
        return;
    struct exec_params p;
    char msg[256];
    if (exec_params_parse(body, &p, msg, sizeof(msg)) < 0) {
        http_respond_error(call->req, 400, "bad_request", "%s", msg);
        json_decref(body);
        return;
    }
    struct sandbox_record sb;
    struct agent_client c;
    if (sbio_open(call, sandbox_id, &c, &sb) < 0) {
        json_decref(body);
        return;
    }
    json_t *rq = exec_request(&p, sb.env_json);
    sandbox_record_clear(&sb);
    lz_error err;
    unsigned allowed = p.background ? 0 : AGENT_ALLOW(PROTO_STDOUT) | AGENT_ALLOW(PROTO_STDERR);
    if (rq == NULL || agent_client_request(&c, rq, allowed, &err) < 0) {
        if (rq == NULL)
            c.failure = AGENT_FAIL_SYS, lz_error_set(&err, ENOMEM, "building the request");
        sbio_respond_failure(call, &c, &err);
        goto out;
    }
    /* Bound the whole wait: the agent enforces timeoutMs; if it has not
     * answered a margin after that, it is broken. Without a timeout only
     * the client's patience bounds the call (a hang-up ends it). */
    if (p.timeout_ms > 0 && !p.background)
        agent_client_set_deadline(&c, p.timeout_ms + EXEC_TIMEOUT_MARGIN_MS);
    /* Foreground stdin goes before we read: the command may need all of it
     * before it writes anything. A command that exits without reading makes
     * the agent drop the rest; a failed send then is not an error by itself,
     * the answer (or the failure) comes from the reads below. */
    if (p.has_stdin && !p.background) {
        if (agent_client_send_data(&c, p.stdin_data, p.stdin_len, &err) == 0)
            agent_client_send(&c, PROTO_EOF, NULL, 0, &err);
        if (c.failure == AGENT_FAIL_CLIENT) {
            sbio_respond_failure(call, &c, &err);
            goto out;
        }
        c.failure = AGENT_FAIL_NONE;
    }
    if (p.background)
        exec_background(call, &c, &p);
    else if (wants_ndjson(call->req))
        exec_stream(call, &c, p.max_output);
    else
        exec_collect(call, &c, p.max_output);
out:
    json_decref(rq);
    agent_client_close(&c);
    json_decref(body);
}

/* ---- /processes ---- */

/* "SIGTERM", "TERM", "term", "15" or 15 -> 15; -1 if not a signal. */
static int parse_signal(json_t *v)
{
    if (json_is_integer(v))
        return json_integer_value(v) >= 1 && json_integer_value(v) <= 64
                   ? (int)json_integer_value(v)
                   : -1;
    if (!json_is_string(v))
        return -1;
    const char *s = json_string_value(v);
    if (strncasecmp(s, "SIG", 3) == 0)
        s += 3;
    char *end;
    long n = strtol(s, &end, 10);
    if (*s && *end == '\0' && isdigit((unsigned char)*s))
        return n >= 1 && n <= 64 ? (int)n : -1;
    for (int sig = 1; sig < 65; sig++) {
        const char *name = sigabbrev_np(sig);
        if (name && strcasecmp(name, s) == 0)
            return sig;
    }
    return -1;
}

static void proc_list(struct api_call *call, struct agent_client *c)
{
    sbio_call_and_respond(call, c, json_pack("{s:s}", "op", "proc.list"), agent_check_processes);
}

static void proc_signal(struct api_call *call, struct agent_client *c, int pid, json_t *body)
{
    int sig = parse_signal(json_object_get(body, "signal"));
    if (sig < 0) {
        http_respond_error(call->req, 400, "bad_request",
                           "field 'signal' must be 1..64 or a name like \"SIGTERM\"");
        return;
    }
    json_t *rq = json_pack("{s:s,s:i,s:i}", "op", "proc.signal", "pid", pid, "signal", sig);
    json_t *res = sbio_simple_call(call, c, rq);
    json_decref(rq);
    if (res == NULL)
        return;
    json_decref(res);
    http_respond_json(call->req, 200, json_object());
}

static void proc_stdin(struct api_call *call, struct agent_client *c, int pid, json_t *body)
{
    char msg[256];
    int eof = 0;
    json_t *data = json_object_get(body, "data");
    if (data != NULL && !json_is_null(data) && !json_is_string(data)) {
        http_respond_error(call->req, 400, "bad_request", "field 'data' must be a string");
        return;
    }
    if (json_opt_bool(body, "eof", &eof, msg, sizeof(msg)) < 0) {
        http_respond_error(call->req, 400, "bad_request", "%s", msg);
        return;
    }
    const char *text = json_is_string(data) ? json_string_value(data) : "";
    size_t len = json_is_string(data) ? json_string_length(data) : 0;
    json_t *res = proc_stdin_call(call, c, pid, text, len, eof);
    if (res == NULL)
        return;
    int64_t written;
    lz_error err;
    int r = agent_check_count(res, "written", &written, &err);
    json_decref(res);
    if (r < 0 || (uint64_t)written > len) {
        c->failure = AGENT_FAIL_PEER;
        if (r == 0)
            lz_error_set(&err, 0, "sandbox agent reported more bytes written than sent");
        sbio_respond_failure(call, c, &err);
        return;
    }
    http_respond_json(call->req, 200, json_pack("{s:I}", "written", (json_int_t)written));
}

static void proc_output(struct api_call *call, struct agent_client *c, int pid)
{
    struct capture out[2] = {{.max = PROC_OUTPUT_MAX}, {.max = PROC_OUTPUT_MAX}};
    struct agent_frame f;
    lz_error err;
    json_t *rq = json_pack("{s:s,s:i}", "op", "proc.output", "pid", pid);
    c->idle_ms = AGENT_IDLE_TIMEOUT_MS;
    int r =
        agent_client_request(c, rq, AGENT_ALLOW(PROTO_STDOUT) | AGENT_ALLOW(PROTO_STDERR), &err);
    json_decref(rq);
    memset(&f, 0, sizeof(f));
    if (r < 0) {
        sbio_respond_failure(call, c, &err);
        goto done;
    }
    if (collect_output(call, c, out, &f) < 0)
        goto done;
    if (f.type == PROTO_ERROR) {
        sbio_respond_agent_error(call, &f);
        goto done;
    }
    struct agent_proc_status st;
    if (agent_check_proc_output(f.json, &st, &err) < 0) {
        c->failure = AGENT_FAIL_PEER;
        sbio_respond_failure(call, c, &err);
        goto done;
    }
    http_respond_json(call->req, 200,
                      json_pack("{s:o,s:o,s:b,s:o,s:b}", "stdout", capture_text(&out[0]), "stderr",
                                capture_text(&out[1]), "running", st.running, "exitCode",
                                st.has_exit_code ? json_integer(st.exit_code) : json_null(),
                                "truncated", st.truncated || out[0].truncated || out[1].truncated));
done:
    agent_frame_clear(&f);
    free(out[0].buf);
    free(out[1].buf);
}

/* "/123/signal" -> pid 123, action "signal". */
static int parse_proc_path(const char *rest, int *pid, const char **action)
{
    if (rest[0] != '/' || !isdigit((unsigned char)rest[1]))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(rest + 1, &end, 10);
    if (errno || v < 1 || v > 4194304 || *end != '/')
        return -1;
    *pid = (int)v;
    *action = end + 1;
    return 0;
}

void api_processes(struct api_call *call, const char *sandbox_id, const char *rest)
{
    const char *method = call->req->method;
    int pid = 0;
    const char *action = "";
    if (rest[0] != '\0' && (parse_proc_path(rest, &pid, &action) < 0 ||
                            (strcmp(action, "signal") != 0 && strcmp(action, "stdin") != 0 &&
                             strcmp(action, "output") != 0))) {
        http_respond_error(call->req, 404, "not_found", "no such endpoint");
        return;
    }
    bool is_get = rest[0] == '\0' || strcmp(action, "output") == 0;
    if (strcmp(method, is_get ? "GET" : "POST") != 0) {
        http_respond_error(call->req, 405, "method_not_allowed", "use %s", is_get ? "GET" : "POST");
        return;
    }
    json_t *body = NULL;
    if (!is_get && (body = sbio_read_body(call)) == NULL)
        return;
    struct agent_client c;
    if (sbio_open(call, sandbox_id, &c, NULL) == 0) {
        if (rest[0] == '\0')
            proc_list(call, &c);
        else if (strcmp(action, "output") == 0)
            proc_output(call, &c, pid);
        else if (strcmp(action, "signal") == 0)
            proc_signal(call, &c, pid, body);
        else
            proc_stdin(call, &c, pid, body);
        agent_client_close(&c);
    }
    json_decref(body);
}
