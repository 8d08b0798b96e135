/* Volume images and attachment. An image is a sparse file formatted as ext4:
 * the size is enforced by the file system itself (a full volume is ENOSPC
 * inside, nothing else notices), it works the same for a loop mount
 * (container runtime) and a virtio disk (microvm), and the data is one file
 * that outlives every sandbox. */
#include "volumes.h"
#include "../common/cleanup.h"
#include "../common/fsutil.h"
#include "../common/json_util.h"
#include "../common/log.h"
#include "../common/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The sandbox's `user` (uid 1000 inside) owns a new volume's root, so both
 * `user` and root (who has CAP_DAC_OVERRIDE inside) can write to it. */
#define VOLUME_OWNER_UID 1000

int volume_image_path(struct lizardd *d, const char *id, char *out, size_t outsz, lz_error *err)
{
    int r = snprintf(out, outsz, "%s/volumes/%s.img", d->data_dir, id);
    if (r < 0 || (size_t)r >= outsz)
        return lz_error_set(err, ENAMETOOLONG, "volume path for %s", id);
    return 0;
}

static int run_quiet(const char *const argv[], lz_error *err)
{
    /* mkfs prints notes ("too small for a journal") that are not errors;
     * the exit code is what counts. */
    cleanup_close int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    struct spawn_opts o = {.stdout_fd = null, .stderr_fd = null};
    pid_t pid = spawn_start_opts(argv, NULL, &o, err);
    if (pid < 0)
        return -1;
    int rc = spawn_wait(pid, err);
    if (rc != 0)
        return rc < 0 ? -1 : lz_error_set(err, 0, "%s exited with %d", argv[0], rc);
    return 0;
}

static int format_image(struct lizardd *d, const char *path, int64_t size_mb, lz_error *err)
{
    char ext[160], rmlf[] = "rmdir lost+found";
    uid_t owner = d->rcfg.uid_base + VOLUME_OWNER_UID;
    cleanup_close int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return lz_error_sys(err, "create %s", path);
    if (ftruncate(fd, (off_t)size_mb << 20) < 0)
        return lz_error_sys(err, "size %s", path);
    /* -m 0: the volume's user gets all of it. nodiscard and lazy init keep
     * the file sparse and mkfs at ~0.1 s even for 1 TiB; the tables they
     * skip read back as zeros from a fresh sparse file, which is what
     * initialising would write (the mount uses noinit_itable). */
    snprintf(ext, sizeof(ext), "root_owner=%u:%u,nodiscard,lazy_itable_init=1,lazy_journal_init=1",
             (unsigned)owner, (unsigned)owner);
    const char *const mkfs[] = {"mkfs.ext4", "-q", "-F", "-m", "0", "-E", ext, path, NULL};
    /* lost+found belongs to host root, which is nobody inside: users would
     * find an unreadable directory in their empty volume. fsck recreates
     * it if ever needed. */
    const char *const debugfs[] = {"debugfs", "-w", "-R", rmlf, path, NULL};
    if (run_quiet(mkfs, err) < 0 || run_quiet(debugfs, err) < 0)
        return lz_error_prefix(err, "format volume");
    return 0;
}

int volume_image_create(struct lizardd *d, const char *id, int64_t size_mb, lz_error *err)
{
    char dir[512], path[512], tmp[520];
    snprintf(dir, sizeof(dir), "%s/volumes", d->data_dir);
    if (mkdir_p(dir, 0700, err) < 0 || volume_image_path(d, id, path, sizeof(path), err) < 0)
        return -1;
    /* Formatted under a temporary name: a crash never leaves a half-made
     * image under a volume's name. */
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (format_image(d, tmp, size_mb, err) < 0) {
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) < 0) {
        lz_error_sys(err, "rename %s", tmp);
        unlink(tmp);
        return -1;
    }
    return 0;
}

int volume_image_delete(struct lizardd *d, const char *id, lz_error *err)
{
    char path[512];
    if (volume_image_path(d, id, path, sizeof(path), err) < 0)
        return -1;
    if (unlink(path) < 0 && errno != ENOENT)
        return lz_error_sys(err, "unlink %s", path);
    return 0;
}

static int find_one(struct lizardd *d, const char *project_id, const char *ref,
                    struct volume_record *v, struct api_failure *fail)
{
    lz_error err;
    int r = store_volume_find(d->store, project_id, ref, v, &err);
    if (r == STORE_NOT_FOUND)
        return api_failure_set(fail, 404, "not_found", "volume '%s' not found", ref);
    if (r < 0)
        return api_failure_set(fail, 503, "unavailable", "%s", err.msg);
    return 0;
}

static int attach_one(struct lizardd *d, const char *sandbox_id, const char *ref,
                      const struct volume_record *v, struct api_failure *fail)
{
    lz_error err;
    int r = store_volume_attach(d->store, v->id, sandbox_id, &err);
    if (r < 0)
        return api_failure_set(fail, 503, "unavailable", "%s", err.msg);
    if (r == 0)
        return api_failure_set(fail, 409, "conflict",
                               "volume '%s' is attached to sandbox %s; a volume is attached to "
                               "one running sandbox at a time",
                               ref, v->attached_to[0] ? v->attached_to : "(another)");
    return 0;
}

static int attach_all(struct lizardd *d, const char *project_id, const char *sandbox_id,
                      const struct volume_request *rq, int n, struct volume_attachments *out,
                      struct api_failure *fail)
{
    char ids[VOLUMES_MAX][64];
    lz_error err;
    for (int i = 0; i < n; i++) {
        struct volume_record v;
        if (find_one(d, project_id, rq[i].ref, &v, fail) < 0)
            return -1;
        /* Two entries naming one volume (by id and by name, say) would
         * otherwise look like a conflict with this very sandbox. */
        for (int j = 0; j < i; j++)
            if (strcmp(ids[j], v.id) == 0)
                return api_failure_set(fail, 400, "bad_request", "volume '%s' is listed twice",
                                       rq[i].ref);
        if (attach_one(d, sandbox_id, rq[i].ref, &v, fail) < 0)
            return -1;
        snprintf(ids[i], sizeof(ids[i]), "%s", v.id);
        if (volume_image_path(d, v.id, out->image[i], sizeof(out->image[i]), &err) < 0)
            return api_failure_set(fail, 503, "unavailable", "%s", err.msg);
        out->mounts[i].image_path = out->image[i];
        out->mounts[i].mount_path = rq[i].mount_path;
        out->n = i + 1;
    }
    return 0;
}

int volumes_attach(struct lizardd *d, const char *project_id, const char *sandbox_id,
                   const struct volume_request *rq, int n, struct volume_attachments *out,
                   struct api_failure *fail)
{
    memset(out, 0, sizeof(*out));
    if (n > VOLUMES_MAX)
        return api_failure_set(fail, 400, "bad_request", "at most %d volumes", VOLUMES_MAX);
    if (attach_all(d, project_id, sandbox_id, rq, n, out, fail) < 0) {
        volumes_release(d, sandbox_id);
        return -1;
    }
    return 0;
}

void volumes_release(struct lizardd *d, const char *sandbox_id)
{
    lz_error err;
    /* A failure here is harmless: a volume whose sandbox row is gone
     * counts as free (store.c, VOLUME_ATTACHED). */
    if (store_volume_release(d->store, sandbox_id, &err) < 0)
        log_warn("release volumes of %s: %s", sandbox_id, err.msg);
}

static int parse_one(json_t *item, int i, struct volume_request *out, char *msg, size_t msglen)
{
    char inner[200];
    out->mount_path = VOLUME_DEFAULT_MOUNT;
    if (!json_is_object(item)) {
        snprintf(msg, msglen, "volumes[%d] must be an object {volume, mountPath?}", i);
        return -1;
    }
    if (json_req_string(item, "volume", &out->ref, inner, sizeof(inner)) < 0 ||
        json_opt_string(item, "mountPath", &out->mount_path, inner, sizeof(inner)) < 0 ||
        volume_mount_path_check(out->mount_path, inner, sizeof(inner)) < 0) {
        snprintf(msg, msglen, "volumes[%d]: %s", i, inner);
        return -1;
    }
    return 0;
}

int volume_requests_parse(json_t *body, struct volume_request out[VOLUMES_MAX], int *n, char *msg,
                          size_t msglen)
{
    json_t *list = json_object_get(body, "volumes");
    *n = 0;
    if (list == NULL || json_is_null(list))
        return 0;
    if (!json_is_array(list) || json_array_size(list) > VOLUMES_MAX) {
        snprintf(msg, msglen, "field 'volumes' must be an array of at most %d volumes",
                 VOLUMES_MAX);
        return -1;
    }
    for (size_t i = 0; i < json_array_size(list); i++) {
        if (parse_one(json_array_get(list, i), (int)i, &out[i], msg, msglen) < 0)
            return -1;
        /* One volume over another would write into the first one's file
         * system, as host root; and the same path twice hides a volume. */
        for (size_t j = 0; j < i; j++)
            if (volume_mount_paths_overlap(out[i].mount_path, out[j].mount_path)) {
                snprintf(msg, msglen, "volumes[%zu]: mountPath %s overlaps %s", i,
                         out[i].mount_path, out[j].mount_path);
                return -1;
            }
        *n = (int)i + 1;
    }
    return 0;
}
