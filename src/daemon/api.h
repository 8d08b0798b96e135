/* The REST API: routing (api.c) and one file per resource. */
#ifndef LZ_API_H
#define LZ_API_H

#include "daemon.h"
#include "auth.h"

#define API_MAX_JSON_BODY (1 << 20)

/* The http_server handler: health, auth, routing. ctx is struct lizardd. */
void api_handle(struct http_request *req, void *ctx);

/* Per resource; `rest` is the path after the resource name ("" or "/id..."). */
void api_projects(struct api_call *call, const char *rest);
void api_keys(struct api_call *call, const char *rest);
void api_templates(struct api_call *call, const char *rest);
void api_sandboxes(struct api_call *call, const char *rest);
void api_snapshots(struct api_call *call, const char *rest);
/* Sub-resources of one sandbox r the caller may see (api_pause.c,
 * api_snapshots.c): return 1 when `sub` was theirs (and answered). */
int api_sandbox_pause(struct api_call *call, const struct sandbox_record *r, const char *sub);
int api_sandbox_snapshot(struct api_call *call, const struct sandbox_record *r, const char *sub);
/* timeoutMs (default 5 min, 0 = none), env and metadata of a create or
 * restore body; responds 400 itself and returns -1 on bad input. */
int api_parse_lifetime(struct api_call *call, json_t *body, int64_t *timeout_ms, json_t **env,
                       json_t **metadata);
void api_volumes(struct api_call *call, const char *rest);
/* GET /v1/usage (api_usage.c). */
void api_usage(struct api_call *call, const char *rest);
/* /v1/sandboxes/{id}/ports[/PORT] (api_ports.c); rest is what follows "/ports". */
void api_ports(struct api_call *call, const char *id, const char *rest);

/* Read a JSON object body; on failure responds 400/413 and returns NULL.
 * An empty body gives an empty object. */
json_t *api_read_object(struct api_call *call);
/* Resolve a project reference (id, slug or name) the caller may use; the
 * key's own project when ref is NULL. Responds 404 and returns -1 when the
 * project does not exist or belongs to someone else. */
int api_resolve_project(struct api_call *call, const char *ref, struct project_record *out);
/* The project filter of a listing: ?project=REF when given (resolved and
 * visible to the caller), else the key's own project, or every project
 * (*project_id = NULL) for an admin key. Responds 400/404 and returns -1. */
int api_list_scope(struct api_call *call, struct project_record *buf, const char **project_id);
/* Admin-only calls: responds 403 and returns -1 for project keys. */
int api_require_admin(struct api_call *call);
void api_method_not_allowed(struct api_call *call);
struct api_failure;
/* Answer a failed operation (sandboxes.h), with Retry-After when it has one. */
void api_respond_failure(struct api_call *call, const struct api_failure *f);

/* Used by the API and by first-start bootstrap (main.c). */
int daemon_project_create(struct lizardd *d, const char *name, const char *slug,
                          struct project_record *out, lz_error *err);
int daemon_key_create(struct lizardd *d, const char *name, const char *project_id, int admin,
                      struct key_record *out, char key_text[AUTH_KEY_MAX], lz_error *err);

#endif
