/* Which paths inside a sandbox may hold a volume. Shared by the API (a bad
 * mountPath is a 400) and the runtime (which checks again before mounting as
 * host root). Pure string logic, unit-tested in tests/unit/test_volume_path.c. */
#include "runtime.h"

#include <stdio.h>
#include <string.h>

/* Mounting over these would hide what the runtime mounts there itself
 * (or, for "/", the whole root file system). */
static const char *const reserved[] = {"/proc", "/dev", "/sys", NULL};

static int under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int volume_mount_path_check(const char *path, char *msg, size_t msglen)
{
    size_t n = path ? strlen(path) : 0;
    if (n == 0 || path[0] != '/' || n > 255) {
        snprintf(msg, msglen, "mountPath must be an absolute path of at most 255 bytes");
        return -1;
    }
    if (n == 1) {
        snprintf(msg, msglen, "mountPath cannot be /");
        return -1;
    }
    /* Components: no empty ones ("//", a trailing "/"), no "." or "..":
     * then two paths overlap exactly when one is a prefix of the other. */
    for (const char *c = path + 1; *c;) {
        size_t len = strcspn(c, "/");
        if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.') ||
            (c[len] == '/' && c[len + 1] == '\0')) {
            snprintf(msg, msglen, "mountPath '%s' must be a plain path like /workspace", path);
            return -1;
        }
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)c[i] < 0x20) {
                snprintf(msg, msglen, "mountPath has a control character");
                return -1;
            }
        c += len + (c[len] == '/');
    }
    for (int i = 0; reserved[i]; i++)
        if (under(path, reserved[i])) {
            snprintf(msg, msglen, "mountPath cannot be in %s", reserved[i]);
            return -1;
        }
    return 0;
}

int volume_mount_paths_overlap(const char *a, const char *b)
{
    return under(a, b) || under(b, a);
}
