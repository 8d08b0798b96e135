/* /v1/sandboxes/{id}/ports: expose, list and close ports (docs/api.md
 * "Ports"; the proxy itself is proxy.c). */
#include "api.h"
#include "ports.h"
#include "proxy.h"
#include "../common/json_util.h"

#include <stdlib.h>
#include <string.h>

static void expose(struct api_call *call, const struct sandbox_record *sb)
{
    json_t *body = api_read_object(call);
    if (body == NULL)
        return;
    char msg[256];
    int64_t port = 0;
    if (json_object_get(body, "port") == NULL) {
        http_respond_error(call->req, 400, "bad_request", "'port' is required");
    } else if (json_opt_int(body, "port", 1, 65535, &port, msg, sizeof(msg)) < 0) {
        http_respond_error(call->req, 400, "bad_request", "%s", msg);
    } else {
        struct port_record p;
        lz_error err;
        if (ports_expose(call->d, sb->id, (int)port, &p, &err) < 0)
            http_respond_error(call->req, 503, "unavailable", "%s", err.msg);
        else
            http_respond_json(call->req, 200, ports_json(call->d, &p, 1));
    }
    json_decref(body);
}

struct list_ctx {
    struct lizardd *d;
    json_t *ports;
};

static void add_port(const struct port_record *p, void *arg)
{
    struct list_ctx *c = arg;
    json_array_append_new(c->ports, ports_json(c->d, p, 0));
}

static void list(struct api_call *call, const struct sandbox_record *sb)
{
    struct list_ctx c = {call->d, json_array()};
    lz_error err;
    if (store_port_list(call->d->store, sb->id, add_port, &c, &err) < 0) {
        json_decref(c.ports);
        http_respond_error(call->req, 503, "unavailable", "%s", err.msg);
        return;
    }
    http_respond_json(call->req, 200, json_pack("{s:o}", "ports", c.ports));
}

static void unexpose(struct api_call *call, const struct sandbox_record *sb, const char *num)
{
    char *end;
    long port = strtol(num, &end, 10);
    lz_error err;
    int r = *num == '\0' || *end != '\0' || port < 1 || port > 65535
                ? STORE_NOT_FOUND
                : store_port_delete(call->d->store, sb->id, (int)port, &err);
    if (r == STORE_NOT_FOUND) {
        http_respond_error(call->req, 404, "not_found", "port %s of sandbox %s is not exposed", num,
                           sb->id);
    } else if (r < 0) {
        http_respond_error(call->req, 503, "unavailable", "%s", err.msg);
    } else {
        /* The token is dead; so are the connections it opened. */
        proxy_close_port(sb->id, (int)port);
        http_respond_raw(call->req, 204, NULL, NULL, 0);
    }
}

void api_ports(struct api_call *call, const char *id, const char *rest)
{
    const char *m = call->req->method;
    struct sandbox_record sb;
    int collection = *rest == '\0';
    int one = rest[0] == '/' && rest[1] != '\0';
    if (!((collection && (strcmp(m, "POST") == 0 || strcmp(m, "GET") == 0)) ||
          (one && strcmp(m, "DELETE") == 0))) {
        api_method_not_allowed(call);
        return;
    }
    if (api_find_running_sandbox(call, id, &sb) < 0)
        return;
    if (one)
        unexpose(call, &sb, rest + 1);
    else if (strcmp(m, "POST") == 0)
        expose(call, &sb);
    else
        list(call, &sb);
    sandbox_record_clear(&sb);
}
