/* lizardd: parse flags, open the store, make the first admin key, find the
 * sandboxes a previous run left, then serve HTTP until told to stop.
 * Sandboxes outlive lizardd: stopping it (or SIGKILL) leaves them running,
 * and the next start picks them up from the store. */
#include "api.h"
#include "config.h"
#include "daemon.h"
#include "ports.h"
#include "sandboxes.h"
#include "snapshots.h"
#include "../common/fsutil.h"
#include "../common/log.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

struct options {
    const char *listen;
    const char *data_dir;
    const char *template_dir;
    const char *agent;
    const char *config;
    int64_t max_running; /* -1: not given (the config file or default decides) */
    int64_t max_host;
    int64_t disk_mb;
    const char *domain;
    const char *tls_cert, *tls_key;
    int idle_timeout;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: lizardd [--listen ADDR:PORT] [--data-dir DIR] [--template-dir DIR]\n"
            "               [--config FILE] [--agent PATH] [--max-running N] [--max-sandboxes N]\n"
            "               [--disk-mb N] [--domain DOMAIN] [--idle-timeout SEC]\n"
            "               [--tls-cert CERT.pem --tls-key KEY.pem]\n"
            "defaults: 127.0.0.1:7400, /var/lib/lizard, $LIZARD_TEMPLATE_DIR or\n"
            "/var/lib/lizard/templates, lizard-agent next to this program,\n"
            "100 running sandboxes per project, 1000 per host, 10240 MiB disk each,\n"
            "exposed ports at PORT-SANDBOXID.localhost, 60 s idle/slow-client timeout;\n"
            "with a certificate and key, API and port proxy speak HTTPS;\n"
            "--config FILE: sizes, prices and limits (docs/config.md); flags win over it\n");
}

/* A whole decimal number >= min for a count flag; -1 when it is not one. */
static int64_t parse_count(const char *s, int64_t min)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    return errno || end == s || *end != '\0' || v < min || v > 1000000000 ? -1 : v;
}

/* Exposed ports are named PORT-ID.DOMAIN: DOMAIN must be a plain host name. */
static int domain_is_valid(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n < 200 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789.-") == n &&
           s[0] != '.' && s[n - 1] != '.';
}

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"data-dir", required_argument, NULL, 'd'},
        {"template-dir", required_argument, NULL, 't'},
        {"agent", required_argument, NULL, 'a'},
        {"config", required_argument, NULL, 'c'},
        {"max-running", required_argument, NULL, 'r'},
        {"max-sandboxes", required_argument, NULL, 'm'},
        {"disk-mb", required_argument, NULL, 'k'},
        {"domain", required_argument, NULL, 'D'},
        {"tls-cert", required_argument, NULL, 'C'},
        {"tls-key", required_argument, NULL, 'K'},
        {"idle-timeout", required_argument, NULL, 'I'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *env_tdir = getenv("LIZARD_TEMPLATE_DIR");
    *o = (struct options){"127.0.0.1:7400",
                          "/var/lib/lizard",
                          env_tdir && *env_tdir ? env_tdir : "/var/lib/lizard/templates",
                          NULL,
                          NULL,
                          -1,
                          -1,
                          -1,
                          "localhost",
                          NULL,
                          NULL,
                          60};
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'l':
            o->listen = optarg;
            break;
        case 'd':
            o->data_dir = optarg;
            break;
        case 't':
            o->template_dir = optarg;
            break;
        case 'a':
            o->agent = optarg;
            break;
        case 'c':
            o->config = optarg;
            break;
        case 'r':
            if ((o->max_running = parse_count(optarg, 1)) < 0)
                goto bad;
            break;
        case 'm':
            if ((o->max_host = parse_count(optarg, 1)) < 0)
                goto bad;
            break;
        case 'k':
            if ((o->disk_mb = parse_count(optarg, 16)) < 0)
                goto bad;
            break;
        case 'D':
            o->domain = optarg;
            break;
        case 'C':
            o->tls_cert = optarg;
            break;
        case 'K':
            o->tls_key = optarg;
            break;
        case 'I':
            o->idle_timeout = atoi(optarg);
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            goto bad;
        }
    }
    if (optind != argc || !domain_is_valid(o->domain) || o->idle_timeout < 1)
        goto bad;
    if (!o->tls_cert != !o->tls_key) {
        fprintf(stderr, "lizardd: --tls-cert and --tls-key go together (HTTPS needs both)\n");
        return -1;
    }
    return 0;
bad:
    usage(stderr);
    return -1;
}

/* Defaults, then the config file, then the flags given on the command line:
 * a flag is the most specific wish. */
static int load_config(const struct options *o, struct lizardd *d, lz_error *err)
{
    struct lizard_config c;
    config_defaults(&c);
    if (o->config && config_load(o->config, &c, err) < 0)
        return -1;
    if (o->max_running > 0)
        c.max_running_per_project = (int)o->max_running;
    if (o->max_host > 0)
        c.max_sandboxes_per_host = (int)o->max_host;
    if (o->disk_mb > 0)
        c.disk_mb = o->disk_mb;
    memcpy(d->sizes, c.sizes, sizeof(c.sizes));
    d->nsizes = c.nsizes;
    d->volume_price_per_gb_month = c.volume_price_per_gb_month;
    d->max_running_per_project = c.max_running_per_project;
    d->max_sandboxes_per_host = c.max_sandboxes_per_host;
    d->default_disk_bytes = (uint64_t)c.disk_mb << 20;
    return 0;
}

/* Each connection is a thread with a socket, and each exec holds an agent
 * socket: raise our soft fd limit to the hard one. Sandboxes get up to 65536
 * open files, but never more than the hard limit we can pass on. */
static int raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 1024;
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    return rl.rlim_max > 65536 ? 65536 : (int)rl.rlim_max;
}

static char *agent_next_to_self(void)
{
    static char path[PATH_MAX];
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n < 0)
        return "lizard-agent";
    self[n] = '\0';
    snprintf(path, sizeof(path), "%s/lizard-agent", dirname(self));
    return path;
}

/* First start on an empty data dir: project "default" and an admin key,
 * printed once and kept in DATA/admin-key (0600) for the local CLI. */
static int bootstrap(struct lizardd *d, lz_error *err)
{
    struct project_record p;
    int r = store_project_find(d->store, "default", &p, err);
    if (r == -1)
        return -1;
    if (r == STORE_NOT_FOUND && daemon_project_create(d, "default", "default", &p, err) < 0)
        return -1;
    int keys = store_key_count(d->store, err);
    if (keys < 0)
        return -1;
    if (keys > 0)
        return 0;
    struct key_record k;
    char key[AUTH_KEY_MAX], path[PATH_MAX], line[AUTH_KEY_MAX + 2];
    if (daemon_key_create(d, "admin", p.id, 1, &k, key, err) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/admin-key", d->data_dir);
    snprintf(line, sizeof(line), "%s\n", key);
    if (write_file_atomic(path, line, 0600, err) < 0)
        return -1;
    printf("admin key: %s\n(saved in %s; it is shown only once)\n", key, path);
    fflush(stdout);
    return 0;
}

static int open_data_dir(struct lizardd *d, lz_error *err)
{
    char path[PATH_MAX];
    /* Agent sockets live at DATA/sandboxes/ID/agent.sock, and a Unix
     * socket path must fit sun_path: say so now rather than at each create. */
    size_t longest = strlen(d->data_dir) + strlen("/sandboxes/") + strlen("sb_") +
                     SANDBOX_ID_CHARS + strlen("/agent.sock");
    if (longest >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return lz_error_set(err, ENAMETOOLONG,
                            "data dir %s is too long for the agent sockets under it (at most "
                            "%zu characters)",
                            d->data_dir,
                            sizeof(((struct sockaddr_un *)0)->sun_path) - 1 -
                                (longest - strlen(d->data_dir)));
    if (mkdir_p(d->data_dir, 0700, err) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/sandboxes", d->data_dir);
    if (mkdir_p(path, 0700, err) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/lizard.db", d->data_dir);
    d->store = store_open(path, err);
    return d->store ? 0 : -1;
}

static void on_term(int sig)
{
    (void)sig;
    /* Sandboxes keep running; the store is consistent after every commit. */
    _exit(0);
}

int main(int argc, char **argv)
{
    struct options o;
    log_init("lizardd", LOG_LEVEL_INFO);
    if (parse_options(argc, argv, &o) < 0)
        return 2;
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);

    static struct lizardd d;
    static char hostname[64];
    gethostname(hostname, sizeof(hostname) - 1);
    d.listen = o.listen;
    d.data_dir = o.data_dir;
    d.host_name = hostname;
    d.domain = o.domain;
    d.default_pids_max = 4096;
    d.default_nofile = raise_nofile();
    lz_error err;
    if (load_config(&o, &d, &err) < 0) {
        fprintf(stderr, "lizardd: %s\n", err.msg);
        return 2;
    }
    d.runtime = &container_runtime;
    d.rcfg = (struct runtime_config){
        .data_dir = o.data_dir,
        .template_dir = o.template_dir,
        .agent_path = o.agent ? o.agent : agent_next_to_self(),
        .uid_base = 100000,
        .uid_count = 65536,
        .cgroup_root = "/sys/fs/cgroup",
        .cgroup_parent = "lizard",
    };

    if (open_data_dir(&d, &err) < 0 || bootstrap(&d, &err) < 0 || ports_init(&d, &err) < 0 ||
        d.runtime->init(&d.rcfg, &err) < 0) {
        log_error("%s", err.msg);
        return 1;
    }
    if (access(d.rcfg.agent_path, X_OK) < 0) {
        log_error("agent binary %s: %s", d.rcfg.agent_path, strerror(errno));
        return 1;
    }
    sandboxes_recover(&d);

    char errbuf[256];
    struct http_server_config hcfg = {
        .listen = o.listen,
        .max_json_body = API_MAX_JSON_BODY,
        .idle_timeout_sec = o.idle_timeout,
        .tls_cert = o.tls_cert,
        .tls_key = o.tls_key,
        .handler = api_handle,
        .ctx = &d,
    };
    struct http_server *server = http_server_new(&hcfg, errbuf, sizeof(errbuf));
    if (server == NULL) {
        log_error("%s", errbuf); /* names the address or the TLS file */
        return 1;
    }
    d.listen_port = http_server_port(server); /* before run(): no request has come yet */
    d.tls = o.tls_cert != NULL;
    if (sandboxes_watch_start(&d, &err) < 0 || snapshots_pool_start(&d, &err) < 0) {
        log_error("%s", err.msg);
        return 1;
    }
    char url[128], path[PATH_MAX], host[64];
    snprintf(host, sizeof(host), "%s", o.listen);
    char *colon = strrchr(host, ':');
    if (colon)
        *colon = '\0';
    snprintf(url, sizeof(url), "%s://%s:%d\n", d.tls ? "https" : "http", host,
             http_server_port(server));
    snprintf(path, sizeof(path), "%s/api-url", d.data_dir);
    write_file_atomic(path, url, 0644, NULL);
    printf("lizardd listening on %s", url);
    fflush(stdout);
    http_server_run(server);
    return 0;
}
