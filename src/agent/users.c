#include "agent.h"
#include "../common/cleanup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *open_etc(const char *name)
{
    const char *dir = getenv("LIZARD_AGENT_ETC");
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "/etc", name);
    return fopen(path, "re");
}

/* Split a line into at most n ':'-separated fields in place. */
static int split_fields(char *line, char **f, int n)
{
    line[strcspn(line, "\n")] = '\0';
    int i = 0;
    f[i++] = line;
    for (char *p = line; *p && i < n; p++)
        if (*p == ':') {
            *p = '\0';
            f[i++] = p + 1;
        }
    return i;
}

static int parse_id(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno || v > 0xfffffffeul)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int find_passwd(const char *name, struct agent_user *u, lz_error *err)
{
    cleanup_fclose FILE *f = open_etc("passwd");
    if (f == NULL)
        return lz_error_sys(err, "open passwd");
    cleanup_free char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        char *fld[7];
        unsigned uid, gid;
        if (split_fields(line, fld, 7) != 7 || strcmp(fld[0], name) != 0)
            continue;
        if (parse_id(fld[2], &uid) < 0 || parse_id(fld[3], &gid) < 0)
            return lz_error_set(err, EINVAL, "bad passwd entry for %s", name);
        snprintf(u->name, sizeof(u->name), "%s", name);
        u->uid = uid;
        u->gid = gid;
        snprintf(u->home, sizeof(u->home), "%s", fld[5][0] == '/' ? fld[5] : "/");
        snprintf(u->shell, sizeof(u->shell), "%s", fld[6][0] == '/' ? fld[6] : "/bin/sh");
        return 0;
    }
    return lz_error_set(err, ENOENT, "unknown user %s", name);
}

static void add_group(struct agent_user *u, gid_t gid)
{
    for (int i = 0; i < u->ngroups; i++)
        if (u->groups[i] == gid)
            return;
    if (u->ngroups < AGENT_MAX_GROUPS)
        u->groups[u->ngroups++] = gid;
}

static bool member_of(char *members, const char *name)
{
    char *save = NULL;
    for (char *m = strtok_r(members, ",", &save); m; m = strtok_r(NULL, ",", &save))
        if (strcmp(m, name) == 0)
            return true;
    return false;
}

/* Supplementary groups as initgroups(3) would set them: the primary group
 * plus every group listing the user. A missing /etc/group is not fatal. */
static void find_groups(struct agent_user *u)
{
    add_group(u, u->gid);
    cleanup_fclose FILE *f = open_etc("group");
    if (f == NULL)
        return;
    cleanup_free char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        char *fld[4];
        unsigned gid;
        if (split_fields(line, fld, 4) != 4 || parse_id(fld[2], &gid) < 0)
            continue;
        if (member_of(fld[3], u->name))
            add_group(u, gid);
    }
}

int users_lookup(const char *name, struct agent_user *u, lz_error *err)
{
    memset(u, 0, sizeof(*u));
    if (find_passwd(name, u, err) < 0) {
        /* root must work even in a rootfs without /etc/passwd. */
        if (strcmp(name, "root") != 0 || err == NULL || err->errnum == EINVAL)
            return -1;
        snprintf(u->name, sizeof(u->name), "root");
        snprintf(u->home, sizeof(u->home), "/root");
        snprintf(u->shell, sizeof(u->shell), "/bin/sh");
    }
    find_groups(u);
    return 0;
}
