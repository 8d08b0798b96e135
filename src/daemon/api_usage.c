/* GET /v1/usage (docs/api.md "Usage"): compute seconds and volume GB-months
 * with their cost, per project, over a period. The intervals are written by
 * the store with every status change (store.h "metering"); this file only
 * clips and sums them (usage.h). */
#include "api.h"
#include "usage.h"
#include "../common/json_util.h"

#include <string.h>

struct report {
    json_t *projects;  /* the answer's array */
    json_t *by_id;     /* project id -> its entry in `projects` (borrowed) */
    const char *scope; /* one project id, or NULL for all */
    int64_t from, to, now;
    double volume_price;
};

static void add(json_t *obj, const char *key, double v)
{
    json_object_set_new(obj, key, json_real(json_real_value(json_object_get(obj, key)) + v));
}

static void add_project(const struct project_record *p, void *arg)
{
    struct report *r = arg;
    if (r->scope && strcmp(r->scope, p->id) != 0)
        return;
    json_t *e = json_pack("{s:s, s:s, s:{s:f, s:f, s:{}}, s:{s:f, s:f}, s:f}", "project", p->id,
                          "name", p->name, "compute", "seconds", 0.0, "cost", 0.0, "bySize",
                          "volumes", "gbMonths", 0.0, "cost", 0.0, "total", 0.0);
    json_object_set(r->by_id, p->id, e);
    json_array_append_new(r->projects, e);
}

/* The entry an interval counts toward and the milliseconds of it inside the
 * period; NULL when none (another project, or outside the period). */
static json_t *counts_for(struct report *r, const struct usage_interval *u, int64_t *ms)
{
    *ms = usage_overlap_ms(u->start_ms, u->end_ms, r->now, r->from, r->to);
    return *ms > 0 ? json_object_get(r->by_id, u->project_id) : NULL;
}

static void add_compute(const struct usage_interval *u, void *arg)
{
    int64_t ms;
    json_t *e = counts_for(arg, u, &ms);
    if (e == NULL)
        return;
    double seconds = (double)ms / 1000.0, cost = usage_compute_cost(ms, u->price_micros);
    json_t *compute = json_object_get(e, "compute");
    json_t *by_size = json_object_get(compute, "bySize");
    json_t *size = json_object_get(by_size, u->size);
    if (size == NULL) {
        size = json_pack("{s:f, s:f}", "seconds", 0.0, "cost", 0.0);
        json_object_set_new(by_size, u->size, size);
    }
    add(compute, "seconds", seconds);
    add(compute, "cost", cost);
    add(size, "seconds", seconds);
    add(size, "cost", cost);
}

static void add_volume(const struct usage_interval *u, void *arg)
{
    struct report *r = arg;
    int64_t ms;
    json_t *e = counts_for(r, u, &ms);
    if (e == NULL)
        return;
    double gbm = usage_gb_months(u->size_mb, ms);
    json_t *vols = json_object_get(e, "volumes");
    add(vols, "gbMonths", gbm);
    add(vols, "cost", gbm * r->volume_price);
}

static void add_totals(struct report *r)
{
    size_t i;
    json_t *e;
    json_array_foreach(r->projects, i, e)
    {
        double compute = json_real_value(json_object_get(json_object_get(e, "compute"), "cost"));
        double vols = json_real_value(json_object_get(json_object_get(e, "volumes"), "cost"));
        json_object_set_new(e, "total", json_real(compute + vols));
    }
}

/* ?from= / ?to= (ISO 8601); absent leaves *ms alone. Responds 400 on a bad one. */
static int query_time(struct api_call *call, const char *name, int64_t *ms)
{
    char v[64];
    int r = http_request_query(call->req, name, v, sizeof(v));
    if (r == 0)
        return 0;
    if (r < 0 || usage_parse_time(v, ms) < 0) {
        http_respond_error(call->req, 400, "bad_request",
                           "'%s' must be a date (2024-05-01) or a UTC time (2024-05-01T10:00:00Z)",
                           name);
        return -1;
    }
    return 0;
}

static void usage_report(struct api_call *call)
{
    struct project_record buf;
    struct report r = {.now = now_ms(), .volume_price = call->d->volume_price_per_gb_month};
    /* Default period: this calendar month (UTC) so far. */
    r.from = usage_month_start(r.now);
    r.to = r.now;
    if (api_list_scope(call, &buf, &r.scope) < 0 || query_time(call, "from", &r.from) < 0 ||
        query_time(call, "to", &r.to) < 0)
        return;
    if (r.from >= r.to) {
        http_respond_error(call->req, 400, "bad_request", "'from' must be before 'to'");
        return;
    }
    r.projects = json_array();
    r.by_id = json_object();
    lz_error err;
    struct store *st = call->d->store;
    if (store_project_list(st, add_project, &r, &err) < 0 ||
        store_usage_list(st, 0, r.scope, r.from, r.to, add_compute, &r, &err) < 0 ||
        store_usage_list(st, 1, r.scope, r.from, r.to, add_volume, &r, &err) < 0) {
        http_respond_error(call->req, 503, "unavailable", "store: %s", err.msg);
    } else {
        add_totals(&r);
        http_respond_json(call->req, 200,
                          json_pack("{s:o, s:o, s:O}", "from", json_time_or_null(r.from, 0), "to",
                                    json_time_or_null(r.to, 0), "projects", r.projects));
    }
    json_decref(r.projects);
    json_decref(r.by_id);
}

void api_usage(struct api_call *call, const char *rest)
{
    if (rest[0] != '\0') {
        http_respond_error(call->req, 404, "not_found", "no such endpoint: %s %s",
                           call->req->method, call->req->path);
        return;
    }
    if (strcmp(call->req->method, "GET") != 0) {
        api_method_not_allowed(call);
        return;
    }
    usage_report(call);
}
