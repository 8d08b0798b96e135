/* POST /v1/sandboxes/{id}/pause, /resume (202, queued) and
 * GET /v1/sandboxes/{id}/status?wait=STATUS&timeoutMs=N (long-poll). */
#include "api.h"
#include "lifecycle.h"
#include "pause.h"
#include "sandboxes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_DEFAULT_MS 30000
#define WAIT_MAX_MS 60000

static void pause_or_resume(struct api_call *call, const struct sandbox_record *r, int resume)
{
    struct api_failure fail = {0};
    if (sandbox_pause_request(call->d, r, resume, &fail) < 0) {
        api_respond_failure(call, &fail);
        return;
    }
    http_respond_json(
        call->req, 202,
        json_pack("{s:s, s:s}", "sandboxId", r->id, "status", resume ? "resuming" : "pausing"));
}

/* timeoutMs from the query: WAIT_DEFAULT_MS when absent, -1 when bad. */
static int64_t query_timeout(struct api_call *call)
{
    char buf[32];
    int r = http_request_query(call->req, "timeoutMs", buf, sizeof(buf));
    if (r == 0)
        return WAIT_DEFAULT_MS;
    if (r < 0 || buf[0] < '0' || buf[0] > '9')
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (*end || errno || v > WAIT_MAX_MS)
        return -1;
    return v;
}

static void wait_status(struct api_call *call, const struct sandbox_record *r)
{
    char want[32] = "";
    enum sandbox_status st;
    int64_t timeout = query_timeout(call);
    int wr = http_request_query(call->req, "wait", want, sizeof(want));
    if (wr < 0 || (wr == 1 && lifecycle_status_parse(want, &st) < 0)) {
        http_respond_error(call->req, 400, "bad_request",
                           "query 'wait' must be a status: running, paused, ...");
        return;
    }
    if (timeout < 0) {
        http_respond_error(call->req, 400, "bad_request",
                           "query 'timeoutMs' must be an integer 0..%d", WAIT_MAX_MS);
        return;
    }
    /* No wait= : the current status at once. */
    json_t *answer =
        sandbox_wait_status(call->d, r->id, wr == 1 ? want : r->status, wr == 1 ? timeout : 0);
    if (answer == NULL)
        http_respond_error(call->req, 404, "not_found", "sandbox '%s' not found", r->id);
    else
        http_respond_json(call->req, 200, answer);
}

int api_sandbox_pause(struct api_call *call, const struct sandbox_record *r, const char *sub)
{
    const char *m = call->req->method;
    if (strcmp(sub, "/pause") == 0 || strcmp(sub, "/resume") == 0) {
        if (strcmp(m, "POST") == 0)
            pause_or_resume(call, r, sub[1] == 'r');
        else
            api_method_not_allowed(call);
        return 1;
    }
    if (strcmp(sub, "/status") == 0) {
        if (strcmp(m, "GET") == 0)
            wait_status(call, r);
        else
            api_method_not_allowed(call);
        return 1;
    }
    return 0;
}
