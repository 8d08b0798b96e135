#include "agent_client.h"
#include "../common/json_util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../common/utf8.h"

/* The one stream each connection carries. Any non-zero id works (0 is
 * HELLO's); a fixed one makes "frame for another stream" easy to spot. */
#define AGENT_STREAM_ID 1
#define AGENT_READ_SIZE (PROTO_CHUNK + PROTO_HEADER_SIZE)
/* While we are blocked writing, frames from the agent are buffered; past
 * this we stop reading and let the agent wait (bounds daemon memory). */
#define AGENT_MAX_BUFFERED (2 * (PROTO_MAX_PAYLOAD + PROTO_HEADER_SIZE))
#define AGENT_MAX_NAME 4096 /* file names, paths, link targets */
#define AGENT_MAX_CMD 4096  /* command text in process listings */
#define AGENT_MAX_ENTRIES 100000

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int fail(struct agent_client *c, enum agent_failure why, lz_error *err, int errnum,
                const char *fmt, const char *detail)
{
    c->failure = why;
    return lz_error_set(err, errnum, fmt, detail ? detail : "");
}

/* ---- waiting ---- */

/* Milliseconds poll() may sleep given the call's deadline and idle bound;
 * -1 = forever. `since` is when the agent last made progress. */
static int wait_budget(const struct agent_client *c, int64_t since)
{
    int64_t now = mono_ms(), left = -1;
    if (c->deadline_ms > 0)
        left = c->deadline_ms - now;
    if (c->idle_ms > 0) {
        int64_t idle_left = since + c->idle_ms - now;
        if (left < 0 || idle_left < left)
            left = idle_left;
    }
    if (c->deadline_ms > 0 || c->idle_ms > 0)
        return left < 0 ? 0 : (int)(left > 3600000 ? 3600000 : left);
    return -1;
}

/* Wait until the agent fd has `events`. Returns the agent revents, or -1
 * with the failure set (timeout, client gone). */
static int wait_agent(struct agent_client *c, short events, int64_t since, lz_error *err)
{
    for (;;) {
        struct pollfd p[2] = {{c->fd, events, 0}, {c->client_fd, POLLRDHUP, 0}};
        int n = c->client_fd >= 0 ? 2 : 1;
        int budget = wait_budget(c, since);
        int r = poll(p, n, budget);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return fail(c, AGENT_FAIL_SYS, err, errno, "poll%s", NULL);
        }
        /* The client check comes first: once it is gone, output it can no
         * longer receive is not worth waiting for. */
        if (n == 2 && (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
            return fail(c, AGENT_FAIL_CLIENT, err, 0, "the client closed the connection%s", NULL);
        if (p[0].revents)
            return p[0].revents;
        if (r == 0 && budget >= 0 && wait_budget(c, since) == 0)
            return fail(c, AGENT_FAIL_TIMEOUT, err, 0, "the sandbox agent did not answer in time%s",
                        NULL);
    }
}

/* Read what is available into the decoder. 1 = got bytes, 0 = nothing
 * now (EAGAIN), -1 = failure (EOF is a failure: the stream was not over). */
static int fill(struct agent_client *c, lz_error *err)
{
    ssize_t r;
    do
        r = read(c->fd, c->rbuf, AGENT_READ_SIZE);
    while (r < 0 && errno == EINTR);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    if (r < 0)
        return fail(c, AGENT_FAIL_PEER, err, errno, "reading from the sandbox agent%s", NULL);
    if (r == 0)
        return fail(c, AGENT_FAIL_PEER, err, 0, "the sandbox agent closed the connection%s", NULL);
    if (proto_decoder_feed(&c->dec, c->rbuf, (size_t)r) < 0)
        return fail(c, AGENT_FAIL_SYS, err, ENOMEM, "buffering agent output%s", NULL);
    return 1;
}
/* The next frame of any stream, checked only as a frame: 1 and the frame,
 * 0 when !wait and nothing complete has arrived, -1 on failure. */
static int next_raw_frame(struct agent_client *c, struct proto_header *h, const uint8_t **p,
                          bool wait, lz_error *err)
{
    int64_t since = mono_ms();
    for (;;) {
        const char *why = NULL;
        int r = proto_decoder_next(&c->dec, h, p, &why);
        if (r < 0)
            return fail(c, AGENT_FAIL_PEER, err, 0, "bad frame from the sandbox agent: %s", why);
        if (r == 1)
            return 1;
        if (wait && wait_agent(c, POLLIN, since, err) < 0)
            return -1;
        r = fill(c, err);
        if (r < 0)
            return -1;
        if (r == 0 && !wait)
            return 0;
    }
}

/* ---- open / close ---- */

int agent_client_open(struct agent_client *c, int fd, int client_fd, lz_error *err)
{
    memset(c, 0, sizeof(*c));
    c->fd = fd;
    c->client_fd = client_fd;
    c->stream = AGENT_STREAM_ID;
    proto_decoder_init(&c->dec);
    /* Non-blocking so that no read or write can outlive the deadlines: an
     * agent that stops mid-frame must not pin this thread. */
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return fail(c, AGENT_FAIL_SYS, err, errno, "agent socket%s", NULL);
    c->rbuf = malloc(AGENT_READ_SIZE);
    if (c->rbuf == NULL)
        return fail(c, AGENT_FAIL_SYS, err, ENOMEM, "agent buffer%s", NULL);
    c->deadline_ms = mono_ms() + AGENT_HELLO_TIMEOUT_MS;
    struct proto_header h;
    const uint8_t *p;
    if (next_raw_frame(c, &h, &p, true, err) < 0)
        return -1;
    c->deadline_ms = 0;
    if (h.type != PROTO_HELLO)
        return fail(c, AGENT_FAIL_PEER, err, 0, "sandbox agent sent %s before HELLO",
                    proto_type_name(h.type));
    if (agent_parse_hello(p, h.length, c->agent, sizeof(c->agent), err) < 0) {
        c->failure = AGENT_FAIL_PEER;
        return -1;
    }
    return 0;
}

void agent_client_close(struct agent_client *c)
{
    if (c->fd >= 0) {
        /* Best effort: a CANCEL tells the agent why; closing alone already
         * makes it kill the stream's foreground process group and drop a
         * half-written file, so a full socket buffer is no problem. */
        if (c->active) {
            uint8_t hdr[PROTO_HEADER_SIZE];
            struct proto_header h = {PROTO_VERSION, PROTO_CANCEL, 0, c->stream, 0};
            proto_encode_header(&h, hdr);
            ssize_t r = send(c->fd, hdr, sizeof(hdr), MSG_NOSIGNAL | MSG_DONTWAIT);
            (void)r;
        }
        close(c->fd);
        c->fd = -1;
    }
    c->active = false;
    proto_decoder_free(&c->dec);
    free(c->rbuf);
    c->rbuf = NULL;
}

void agent_client_set_deadline(struct agent_client *c, int64_t ms)
{
    c->deadline_ms = ms > 0 ? mono_ms() + ms : 0;
}

/* ---- sending ---- */

static ssize_t write_nosignal(int fd, struct iovec *iov, int iovcnt)
{
    /* sendmsg for MSG_NOSIGNAL: an agent that died must give EPIPE, not
     * kill the daemon. Transports that are not sockets fall back to writev. */
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)iovcnt};
    ssize_t w = sendmsg(fd, &m, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK)
        w = writev(fd, iov, iovcnt);
    return w;
}

int agent_client_send(struct agent_client *c, uint8_t type, const void *data, size_t len,
                      lz_error *err)
{
    if (len > PROTO_MAX_PAYLOAD)
        return fail(c, AGENT_FAIL_SYS, err, EMSGSIZE, "frame to agent too large%s", NULL);
    uint8_t hdr[PROTO_HEADER_SIZE];
    struct proto_header h = {PROTO_VERSION, type, 0, c->stream, (uint32_t)len};
    proto_encode_header(&h, hdr);
    struct iovec iov[2] = {{hdr, sizeof(hdr)}, {(void *)data, len}};
    int iovcnt = len ? 2 : 1;
    size_t left = sizeof(hdr) + len;
    int64_t since = mono_ms();
    while (left > 0) {
        ssize_t w = write_nosignal(c->fd, iov, iovcnt);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return fail(c, AGENT_FAIL_PEER, err, errno, "writing to the sandbox agent%s", NULL);
        if (w > 0) {
            since = mono_ms();
            left -= (size_t)w;
            for (int i = 0; i < iovcnt && w > 0; i++) {
                size_t take = (size_t)w < iov[i].iov_len ? (size_t)w : iov[i].iov_len;
                iov[i].iov_base = (char *)iov[i].iov_base + take;
                iov[i].iov_len -= take;
                w -= (ssize_t)take;
            }
            continue;
        }
        /* The socket is full. Keep reading while we wait: an agent that
         * writes output while we feed it stdin must never block on us. */
        short ev = POLLOUT;
        if (c->dec.len < AGENT_MAX_BUFFERED)
            ev |= POLLIN;
        int rev = wait_agent(c, ev, since, err);
        if (rev < 0)
            return -1;
        if ((rev & (POLLIN | POLLHUP)) && !(rev & POLLOUT)) {
            int r = fill(c, err);
            if (r < 0)
                return -1;
            if (r > 0)
                since = mono_ms();
        }
    }
    return 0;
}

int agent_client_send_data(struct agent_client *c, const void *data, size_t len, lz_error *err)
{
    const uint8_t *p = data;
    while (len > 0) {
        size_t n = len < PROTO_CHUNK ? len : PROTO_CHUNK;
        if (agent_client_send(c, PROTO_DATA, p, n, err) < 0)
            return -1;
        p += n;
        len -= n;
    }
    return 0;
}

int agent_client_request(struct agent_client *c, json_t *request, unsigned allowed, lz_error *err)
{
    char *text = json_dumps(request, JSON_COMPACT);
    if (text == NULL)
        return fail(c, AGENT_FAIL_SYS, err, ENOMEM, "encoding agent request%s", NULL);
    c->allowed = allowed | AGENT_ALLOW(PROTO_RESPONSE) | AGENT_ALLOW(PROTO_ERROR);
    c->failure = AGENT_FAIL_NONE;
    int r = agent_client_send(c, PROTO_REQUEST, text, strlen(text), err);
    free(text);
    if (r == 0)
        c->active = true;
    return r;
}

/* ---- receiving ---- */

void agent_frame_clear(struct agent_frame *f)
{
    json_decref(f->json);
    memset(f, 0, sizeof(*f));
}

static int take_frame(struct agent_client *c, const struct proto_header *h, const uint8_t *p,
                      struct agent_frame *f, lz_error *err)
{
    if (h->stream != c->stream)
        return fail(c, AGENT_FAIL_PEER, err, 0, "sandbox agent answered on another stream%s", NULL);
    if (h->type >= 32 || !(c->allowed & AGENT_ALLOW(h->type)))
        return fail(c, AGENT_FAIL_PEER, err, 0, "sandbox agent sent an unexpected %s frame",
                    proto_type_name(h->type));
    f->type = h->type;
    f->data = p;
    f->len = h->length;
    if (h->type == PROTO_RESPONSE) {
        f->json = agent_parse_object(p, h->length, err);
        if (f->json == NULL) {
            c->failure = AGENT_FAIL_PEER;
            return -1;
        }
    } else if (h->type == PROTO_ERROR) {
        if (agent_parse_error(p, h->length, f->code, f->message, err) < 0) {
            c->failure = AGENT_FAIL_PEER;
            return -1;
        }
    }
    if (h->type == PROTO_RESPONSE || h->type == PROTO_ERROR)
        c->active = false;
    return 1;
}

int agent_client_next(struct agent_client *c, struct agent_frame *f, bool wait, lz_error *err)
{
    memset(f, 0, sizeof(*f));
    if (!c->active)
        return fail(c, AGENT_FAIL_SYS, err, EINVAL, "no agent stream in progress%s", NULL);
    struct proto_header h;
    const uint8_t *p;
    int r = next_raw_frame(c, &h, &p, wait, err);
    return r == 1 ? take_frame(c, &h, p, f, err) : r;
}

/* ---- payload validation ---- */

json_t *agent_clean_string(const char *s, size_t len, size_t max)
{
    if (len > max)
        len = max; /* a cut character becomes U+FFFD below */
    if (utf8_valid((const uint8_t *)s, len))
        return json_stringn_nocheck(s, len);
    char *buf = malloc(UTF8_SANITIZE_BOUND(len));
    if (buf == NULL)
        return NULL;
    size_t n = utf8_sanitize(NULL, (const uint8_t *)s, len, true, buf);
    json_t *j = json_stringn_nocheck(buf, n);
    free(buf);
    return j;
}

/* Copy an untrusted string into a fixed buffer: valid UTF-8, control
 * characters replaced by spaces (messages end up in logs and terminals). */
static void clean_message(const char *s, size_t len, char *out, size_t outsz)
{
    if (len > outsz - 1)
        len = outsz - 1;
    json_t *j = agent_clean_string(s, len, outsz - 1);
    const char *v = j ? json_string_value(j) : "";
    size_t n = j ? json_string_length(j) : 0;
    /* Sanitizing may grow the text (U+FFFD is 3 bytes): cut again, at a
     * character boundary. */
    if (n > outsz - 1) {
        n = outsz - 1;
        while (n > 0 && ((uint8_t)v[n] & 0xC0) == 0x80)
            n--;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = ((uint8_t)v[i] < 0x20 || v[i] == 0x7f) ? ' ' : v[i];
    out[n] = '\0';
    json_decref(j);
}

json_t *agent_parse_object(const uint8_t *p, size_t n, lz_error *err)
{
    json_error_t je;
    json_t *j = json_loadb((const char *)p, n, JSON_REJECT_DUPLICATES, &je);
    if (j == NULL) {
        lz_error_set(err, 0, "sandbox agent sent invalid JSON: %s", je.text);
        return NULL;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        lz_error_set(err, 0, "sandbox agent sent JSON that is not an object");
        return NULL;
    }
    return j;
}

int agent_parse_hello(const uint8_t *p, size_t n, char *agent, size_t agent_len, lz_error *err)
{
    json_t *j = agent_parse_object(p, n, err);
    if (j == NULL)
        return -1;
    json_t *v = json_object_get(j, "version");
    json_t *a = json_object_get(j, "agent");
    int r = 0;
    if (!json_is_integer(v) || json_integer_value(v) != PROTO_VERSION)
        r = lz_error_set(err, 0, "sandbox agent speaks an unsupported protocol version");
    else if (a != NULL && !json_is_string(a))
        r = lz_error_set(err, 0, "sandbox agent HELLO: 'agent' is not a string");
    else if (a != NULL)
        clean_message(json_string_value(a), json_string_length(a), agent, agent_len);
    else
        snprintf(agent, agent_len, "unknown");
    json_decref(j);
    return r;
}

static const char *const error_codes[] = {
    "invalid",   "not_found", "permission_denied", "exists", "not_directory", "is_directory",
    "not_empty", "no_space",  "unknown_user",      "busy",   "cancelled",     "io",
};

int agent_parse_error(const uint8_t *p, size_t n, char code[32],
                      char message[AGENT_MAX_MESSAGE + 1], lz_error *err)
{
    json_t *j = agent_parse_object(p, n, err);
    if (j == NULL)
        return -1;
    json_t *c = json_object_get(j, "code"), *m = json_object_get(j, "message");
    if (!json_is_string(c) || (m != NULL && !json_is_string(m))) {
        json_decref(j);
        return lz_error_set(err, 0, "sandbox agent sent a malformed ERROR");
    }
    /* Codes drive the HTTP status, so only the listed ones pass; anything
     * else is treated as a generic I/O failure. */
    snprintf(code, 32, "io");
    for (size_t i = 0; i < sizeof(error_codes) / sizeof(error_codes[0]); i++)
        if (strcmp(json_string_value(c), error_codes[i]) == 0)
            snprintf(code, 32, "%s", error_codes[i]);
    if (m != NULL)
        clean_message(json_string_value(m), json_string_length(m), message, AGENT_MAX_MESSAGE + 1);
    else
        snprintf(message, AGENT_MAX_MESSAGE + 1, "%s", code);
    json_decref(j);
    return 0;
}

/* Integer field within [min, max]. */
static int get_int(json_t *o, const char *key, int64_t min, int64_t max, int64_t *out,
                   lz_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
        return lz_error_set(err, 0, "sandbox agent sent a bad '%s'", key);
    *out = json_integer_value(v);
    return 0;
}

static int get_bool(json_t *o, const char *key, bool *out, lz_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_boolean(v))
        return lz_error_set(err, 0, "sandbox agent sent a bad '%s'", key);
    *out = json_is_true(v);
    return 0;
}

int agent_check_exec_result(json_t *o, struct agent_exec_result *out, lz_error *err)
{
    int64_t code, sig = 0;
    if (get_int(o, "exitCode", 0, 255, &code, err) < 0 ||
        get_bool(o, "timedOut", &out->timed_out, err) < 0 ||
        get_bool(o, "truncated", &out->truncated, err) < 0)
        return -1;
    json_t *s = json_object_get(o, "signal");
    if (s != NULL && !json_is_null(s) && get_int(o, "signal", 1, 64, &sig, err) < 0)
        return -1;
    out->exit_code = (int)code;
    out->signal = (int)sig;
    return 0;
}

/* PID_MAX_LIMIT on 64-bit Linux. */
#define AGENT_PID_MAX 4194304

int agent_check_pid(json_t *o, int *pid, lz_error *err)
{
    int64_t v;
    if (get_int(o, "pid", 1, AGENT_PID_MAX, &v, err) < 0)
        return -1;
    *pid = (int)v;
    return 0;
}

int agent_check_count(json_t *o, const char *key, int64_t *out, lz_error *err)
{
    return get_int(o, key, 0, INT64_MAX / 2, out, err);
}

static int set_clean_string(json_t *dst, const char *key, json_t *src, size_t max, bool required,
                            lz_error *err)
{
    json_t *v = json_object_get(src, key);
    if (v == NULL && !required)
        return 0;
    if (!json_is_string(v))
        return lz_error_set(err, 0, "sandbox agent sent a bad '%s'", key);
    json_t *s = agent_clean_string(json_string_value(v), json_string_length(v), max);
    if (s == NULL || json_object_set_new(dst, key, s) < 0)
        return lz_error_set(err, ENOMEM, "copying '%s'", key);
    return 0;
}

json_t *agent_check_stat(json_t *o, lz_error *err)
{
    static const char *const types[] = {"file", "dir", "symlink", "other"};
    if (!json_is_object(o)) {
        lz_error_set(err, 0, "sandbox agent sent a stat that is not an object");
        return NULL;
    }
    json_t *t = json_object_get(o, "type");
    const char *type = NULL;
    for (size_t i = 0; json_is_string(t) && i < 4; i++)
        if (strcmp(json_string_value(t), types[i]) == 0)
            type = types[i];
    int64_t size, mode, uid, gid;
    if (type == NULL) {
        lz_error_set(err, 0, "sandbox agent sent a bad 'type'");
        return NULL;
    }
    if (get_int(o, "size", 0, INT64_MAX / 2, &size, err) < 0 ||
        get_int(o, "mode", 0, 0177777, &mode, err) < 0 ||
        get_int(o, "uid", 0, UINT32_MAX, &uid, err) < 0 ||
        get_int(o, "gid", 0, UINT32_MAX, &gid, err) < 0)
        return NULL;
    json_t *m = json_object_get(o, "mtime");
    if (!json_is_number(m)) {
        lz_error_set(err, 0, "sandbox agent sent a bad 'mtime'");
        return NULL;
    }
    json_t *out =
        json_pack("{s:s,s:I,s:I,s:I,s:I,s:O}", "type", type, "size", (json_int_t)size, "mode",
                  (json_int_t)mode, "uid", (json_int_t)uid, "gid", (json_int_t)gid, "mtime", m);
    if (out == NULL) {
        lz_error_set(err, ENOMEM, "copying a stat");
        return NULL;
    }
    if (set_clean_string(out, "name", o, AGENT_MAX_NAME, true, err) < 0 ||
        set_clean_string(out, "path", o, AGENT_MAX_NAME, true, err) < 0 ||
        set_clean_string(out, "target", o, AGENT_MAX_NAME, false, err) < 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* {"KEY": [items...]} -> a fresh {"KEY": [checked items...]}, each item
 * rebuilt by `check` from its validated fields only. */
static json_t *check_array(json_t *o, const char *key, json_t *(*check)(json_t *, lz_error *),
                           lz_error *err)
{
    json_t *items = json_object_get(o, key);
    if (!json_is_array(items) || json_array_size(items) > AGENT_MAX_ENTRIES) {
        lz_error_set(err, 0, "sandbox agent sent a bad '%s'", key);
        return NULL;
    }
    json_t *out = json_array();
    size_t i;
    json_t *item;
    json_array_foreach(items, i, item)
    {
        json_t *clean = check(item, err);
        if (clean == NULL || json_array_append_new(out, clean) < 0) {
            json_decref(out);
            return NULL;
        }
    }
    return json_pack("{s:o}", key, out);
}

json_t *agent_check_list(json_t *o, lz_error *err)
{
    return check_array(o, "entries", agent_check_stat, err);
}

/* startedAt: ISO-8601 string (bounded, cleaned) or Unix milliseconds,
 * which become the API's ISO-8601 form. */
static json_t *clean_started_at(json_t *v, lz_error *err)
{
    if (json_is_string(v))
        return agent_clean_string(json_string_value(v), json_string_length(v), 64);
    if (json_is_integer(v) && json_integer_value(v) >= 0 &&
        json_integer_value(v) < 253402300800000LL) {
        return json_time_or_null(json_integer_value(v), 0);
    }
    if (v == NULL || json_is_null(v))
        return json_null();
    lz_error_set(err, 0, "sandbox agent sent a bad 'startedAt'");
    return NULL;
}

static json_t *check_process(json_t *p, lz_error *err)
{
    int64_t pid, code = 0;
    bool running = false;
    if (!json_is_object(p) || get_int(p, "pid", 1, AGENT_PID_MAX, &pid, err) < 0 ||
        get_bool(p, "running", &running, err) < 0)
        return NULL;
    json_t *ec = json_object_get(p, "exitCode");
    bool has_code = ec != NULL && !json_is_null(ec);
    if (has_code && get_int(p, "exitCode", 0, 255, &code, err) < 0)
        return NULL;
    json_t *started = clean_started_at(json_object_get(p, "startedAt"), err);
    if (started == NULL)
        return NULL;
    json_t *out =
        json_pack("{s:I,s:b,s:o,s:o}", "pid", (json_int_t)pid, "running", running, "exitCode",
                  has_code ? json_integer(code) : json_null(), "startedAt", started);
    if (out == NULL || set_clean_string(out, "cmd", p, AGENT_MAX_CMD, true, err) < 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}

json_t *agent_check_processes(json_t *o, lz_error *err)
{
    return check_array(o, "processes", check_process, err);
}

int agent_check_proc_output(json_t *o, struct agent_proc_status *out, lz_error *err)
{
    if (get_bool(o, "running", &out->running, err) < 0 ||
        get_bool(o, "truncated", &out->truncated, err) < 0)
        return -1;
    json_t *ec = json_object_get(o, "exitCode");
    out->has_exit_code = ec != NULL && !json_is_null(ec);
    int64_t code = 0;
    if (out->has_exit_code && get_int(o, "exitCode", 0, 255, &code, err) < 0)
        return -1;
    out->exit_code = (int)code;
    return 0;
}
