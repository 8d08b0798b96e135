/* The pieces api_exec.c and api_files.c share: reaching the agent and
 * turning what goes wrong there into API answers. */
#include "api_sandbox_io.h"

#include <string.h>

#include "../common/cleanup.h"

#define SBIO_MAX_BODY (1u << 20)

int sbio_open(struct api_call *call, const char *sandbox_id, struct agent_client *c,
              struct sandbox_record *sb)
{
    struct sandbox_record local;
    struct sandbox_record *rec = sb ? sb : &local;
    memset(rec, 0, sizeof(*rec));
    c->fd = -1;
    if (api_find_running_sandbox(call, sandbox_id, rec) < 0)
        return -1;
    int fd = api_connect_agent(call, rec);
    if (sb == NULL)
        sandbox_record_clear(&local);
    if (fd < 0) {
        if (sb)
            sandbox_record_clear(sb);
        return -1;
    }
    lz_error err;
    /* The client socket is watched from here on: a client that leaves while
     * we wait for the agent ends the call. */
    if (agent_client_open(c, fd, call->req->fd, &err) < 0) {
        sbio_respond_failure(call, c, &err);
        agent_client_close(c);
        if (sb)
            sandbox_record_clear(sb);
        return -1;
    }
    return 0;
}

const char *sbio_failure_code(const struct agent_client *c)
{
    switch (c->failure) {
    case AGENT_FAIL_CLIENT:
        return "client_closed";
    case AGENT_FAIL_SYS:
        return "unavailable";
    default:
        return "sandbox_unavailable";
    }
}

void sbio_respond_failure(struct api_call *call, const struct agent_client *c, const lz_error *err)
{
    const char *msg = err ? err->msg : "sandbox agent failed";
    switch (c->failure) {
    case AGENT_FAIL_CLIENT:
        /* Nobody reads this; it keeps the HTTP layer's bookkeeping whole. */
        http_respond_error(call->req, 400, "client_closed", "%s", msg);
        break;
    case AGENT_FAIL_SYS:
        /* Our own resources (memory): the host is out of capacity. */
        http_add_header(call->req, "Retry-After", "1");
        http_respond_error(call->req, 503, "unavailable", "%s", msg);
        break;
    default:
        /* The agent died, hung or talked nonsense: the sandbox's problem,
         * so a conflict with its state rather than a server error. */
        http_respond_error(call->req, 409, "sandbox_unavailable", "%s", msg);
    }
}

int sbio_error_status(const char *agent_code, const char **api_code)
{
    static const struct {
        const char *agent;
        int status;
        const char *api;
    } map[] = {
        {"not_found", 404, "not_found"},
        {"permission_denied", 403, "forbidden"},
        {"exists", 409, "conflict"},
        {"not_empty", 409, "conflict"},
        {"busy", 409, "conflict"},
        {"not_directory", 400, "bad_request"},
        {"is_directory", 400, "bad_request"},
        {"invalid", 400, "bad_request"},
        {"unknown_user", 400, "bad_request"},
        {"no_space", 413, "too_large"},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(agent_code, map[i].agent) == 0) {
            *api_code = map[i].api;
            return map[i].status;
        }
    *api_code = "sandbox_error";
    return 409;
}

void sbio_respond_agent_error(struct api_call *call, const struct agent_frame *f)
{
    const char *code;
    int status = sbio_error_status(f->code, &code);
    http_respond_error(call->req, status, code, "%s", f->message);
}

json_t *sbio_read_result(struct api_call *call, struct agent_client *c)
{
    lz_error err;
    struct agent_frame f;
    if (agent_client_next(c, &f, true, &err) < 0) {
        sbio_respond_failure(call, c, &err);
        return NULL;
    }
    if (f.type == PROTO_ERROR) {
        sbio_respond_agent_error(call, &f);
        agent_frame_clear(&f);
        return NULL;
    }
    json_t *res = steal_ptr(&f.json);
    agent_frame_clear(&f);
    return res;
}

json_t *sbio_simple_call(struct api_call *call, struct agent_client *c, json_t *request)
{
    lz_error err;
    c->idle_ms = AGENT_IDLE_TIMEOUT_MS;
    if (agent_client_request(c, request, 0, &err) < 0) {
        sbio_respond_failure(call, c, &err);
        return NULL;
    }
    return sbio_read_result(call, c);
}

void sbio_call_and_respond(struct api_call *call, struct agent_client *c, json_t *request,
                           json_t *(*check)(json_t *, lz_error *))
{
    json_t *res = sbio_simple_call(call, c, request);
    json_decref(request);
    if (res == NULL)
        return;
    lz_error err;
    json_t *clean = check(res, &err);
    json_decref(res);
    if (clean == NULL) {
        c->failure = AGENT_FAIL_PEER;
        sbio_respond_failure(call, c, &err);
        return;
    }
    http_respond_json(call->req, 200, clean);
}

json_t *sbio_read_body(struct api_call *call)
{
    int status = 0;
    char msg[256] = "";
    json_t *body = http_read_json(call->req, SBIO_MAX_BODY, &status, msg, sizeof(msg));
    if (body == NULL) {
        if (status == 0)
            http_respond_error(call->req, 400, "bad_request", "a JSON body is required");
        else
            http_respond_error(call->req, status, status == 413 ? "too_large" : "bad_request", "%s",
                               msg);
        return NULL;
    }
    if (!json_is_object(body)) {
        json_decref(body);
        http_respond_error(call->req, 400, "bad_request", "the body must be a JSON object");
        return NULL;
    }
    return body;
}

bool sbio_username_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 32 || !((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
              s[i] == '-'))
            return false;
    return true;
}
