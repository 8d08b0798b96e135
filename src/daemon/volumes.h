/* Persistent volumes: the image files under DATA/volumes and their
 * attachment to sandboxes. The API is in api_volumes.c; the runtime mounts
 * the images (struct volume_mount in runtime.h). */
#ifndef LZ_VOLUMES_H
#define LZ_VOLUMES_H

#include "daemon.h"
#include "sandboxes.h"

#define VOLUME_MAX_MB (1 << 20) /* 1 TiB */
#define VOLUME_DEFAULT_MOUNT "/workspace"

/* One entry of a create's `volumes` (borrowed from the request body). */
struct volume_request {
    const char *ref;        /* volume id or name, in the sandbox's project */
    const char *mount_path; /* checked; never NULL (default filled in by the parser) */
};

/* What the runtime gets for the volumes of one sandbox. */
struct volume_attachments {
    int n;
    char image[VOLUMES_MAX][512];
    struct volume_mount mounts[VOLUMES_MAX];
};

/* The `volumes` field of a create body: at most VOLUMES_MAX entries, each
 * {volume, mountPath?} with a valid, non-overlapping mountPath (default
 * /workspace). Strings are borrowed from body. -1 and a message for a 400. */
int volume_requests_parse(json_t *body, struct volume_request out[VOLUMES_MAX], int *n, char *msg,
                          size_t msglen);

/* DATA/volumes/ID.img */
int volume_image_path(struct lizardd *d, const char *id, char *out, size_t outsz, lz_error *err);
/* A sparse ext4 image of size_mb whose root directory belongs to the
 * sandbox's `user`. On failure nothing is left behind. */
int volume_image_create(struct lizardd *d, const char *id, int64_t size_mb, lz_error *err);
int volume_image_delete(struct lizardd *d, const char *id, lz_error *err);

/* Resolve each request in the project and attach it to sandbox_id, which
 * must already have its store row. 404 unknown, 409 attached elsewhere; on
 * failure nothing stays attached to sandbox_id. */
int volumes_attach(struct lizardd *d, const char *project_id, const char *sandbox_id,
                   const struct volume_request *rq, int n, struct volume_attachments *out,
                   struct api_failure *fail);
/* After the sandbox's destroy: its volumes are free again. */
void volumes_release(struct lizardd *d, const char *sandbox_id);

#endif
