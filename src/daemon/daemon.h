/* lizardd's shared state and the pieces every API file uses. */
#ifndef LZ_DAEMON_H
#define LZ_DAEMON_H

#include <stdint.h>
#include "http_server.h"
#include "config.h"
#include "store.h"
#include "../runtime/runtime.h"

struct lizardd {
    const char *listen;
    const char *data_dir;
    const char *host_name; /* this host's name in sandbox rows */
    struct runtime_config rcfg;
    const struct runtime_ops *runtime;
    struct store *store;
    int max_running_per_project;
    int max_sandboxes_per_host;
    uint64_t default_disk_bytes;
    int default_pids_max;
    int default_nofile; /* RLIMIT_NOFILE inside, at most our own hard limit */
    struct size_class sizes[CONFIG_MAX_SIZES]; /* from the server config (config.h) */
    int nsizes;
    double volume_price_per_gb_month;
    /* exposed ports (ports.h): PORT-SANDBOXID.DOMAIN on our own listener */
    const char *domain;
    int listen_port;            /* the bound port, for port URLs */
    int tls;                    /* the listener speaks TLS: URLs are https */
    unsigned char port_key[32]; /* HMAC key of port access tokens */
};

/* One authenticated API call. */
struct api_call {
    struct lizardd *d;
    struct http_request *req;
    char key_id[64];
    char project_id[64]; /* the key's project; for admin keys the default project */
    int admin;
};

/* Find sandbox `id` as the caller may see it (another project's id answers
 * 404 like a missing one) and require status "running". On failure this
 * responds (404/409) itself and returns -1. On success fills *out (caller
 * calls sandbox_record_clear) and returns 0. */
int api_find_running_sandbox(struct api_call *call, const char *id, struct sandbox_record *out);

/* Connect to the agent of a sandbox found above. On failure responds 409/503
 * ("sandbox is not reachable") and returns -1; else a blocking fd. */
int api_connect_agent(struct api_call *call, const struct sandbox_record *sb);

int64_t now_ms(void);

#endif
