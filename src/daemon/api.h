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

/* Read a JSON object body; on failure responds 400/413 and returns NULL.
 * An empty body gives an empty object. */
json_t *api_read_object(struct api_call *call);
/* Resolve a project reference (id, slug or name) the caller may use; the
 * key's own project when ref is NULL. Responds 404 and returns -1 when the
 * project does not exist or belongs to someone else. */
int api_resolve_project(struct api_call *call, const char *ref, struct project_record *out);
/* Admin-only calls: responds 403 and returns -1 for project keys. */
int api_require_admin(struct api_call *call);
void api_method_not_allowed(struct api_call *call);

/* Used by the API and by first-start bootstrap (main.c). */
int daemon_project_create(struct lizardd *d, const char *name, const char *slug,
                          struct project_record *out, lz_error *err);
int daemon_key_create(struct lizardd *d, const char *name, const char *project_id, int admin,
                      struct key_record *out, char key_text[AUTH_KEY_MAX], lz_error *err);

#endif
