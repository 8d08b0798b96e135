/* Drives the container runtime directly, for tests/unit/container_smoke.sh
 * and for timing create+destroy without the daemon.
 *
 *   container_driver create  DATA TEMPLATES AGENT ID   -> prints "PID STARTTIME"
 *   container_driver connect DATA TEMPLATES AGENT ID   -> connects to the agent socket
 *   container_driver stats   DATA TEMPLATES AGENT ID
 *   container_driver alive   DATA TEMPLATES AGENT ID PID STARTTIME
 *   container_driver destroy DATA TEMPLATES AGENT ID PID STARTTIME
 *   container_driver bench   DATA TEMPLATES AGENT N  -> create+destroy N times
 *
 * Template "tiny"; limits come from LZ_DISK_BYTES, LZ_MEMORY_MB, LZ_PIDS
 * when set. create and destroy run in separate processes in the smoke test,
 * so destroy is exercised on a sandbox that is not its child. */
#include "../src/runtime/runtime.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v ? strtol(v, NULL, 10) : dflt;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int bench(const struct runtime_config *cfg, struct sandbox_spec *spec, int n)
{
    double *c = calloc(n, sizeof(double)), *d = calloc(n, sizeof(double));
    lz_error err;
    char id[32];
    for (int i = 0; i < n; i++) {
        snprintf(id, sizeof(id), "bench%d", i);
        spec->id = id;
        struct runtime_handle h;
        double t0 = now_ms();
        if (container_runtime.create(cfg, spec, &h, &err) < 0) {
            fprintf(stderr, "create: %s\n", err.msg);
            return 1;
        }
        double t1 = now_ms();
        if (container_runtime.destroy(cfg, id, &h, &err) < 0) {
            fprintf(stderr, "destroy: %s\n", err.msg);
            return 1;
        }
        c[i] = t1 - t0;
        d[i] = now_ms() - t1;
    }
    qsort(c, n, sizeof(double), cmp_double);
    qsort(d, n, sizeof(double), cmp_double);
    printf("create  ms: p50 %.2f p90 %.2f max %.2f\n", c[n / 2], c[n * 9 / 10], c[n - 1]);
    printf("destroy ms: p50 %.2f p90 %.2f max %.2f\n", d[n / 2], d[n * 9 / 10], d[n - 1]);
    free(c);
    free(d);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr,
                "usage: %s create|connect|stats|alive|destroy|bench DATA TEMPLATES "
                "AGENT ID|N [PID START]\n",
                argv[0]);
        return 2;
    }
    const char *cmd = argv[1];
    struct runtime_config cfg = {
        .data_dir = argv[2],
        .template_dir = argv[3],
        .agent_path = argv[4],
        .uid_base = 100000,
        .uid_count = 65536,
        .cgroup_root = "/sys/fs/cgroup",
        .cgroup_parent = getenv("LZ_CGROUP_PARENT") ? getenv("LZ_CGROUP_PARENT") : "lizard",
    };
    struct sandbox_spec spec = {
        .id = argv[5],
        .template_name = "tiny",
        .cpu_count = 2,
        .memory_mb = (int)env_long("LZ_MEMORY_MB", 512),
        .pids_max = (int)env_long("LZ_PIDS", 256),
        .disk_bytes = (uint64_t)env_long("LZ_DISK_BYTES", 64 << 20),
        .nofile = 4096,
    };
    struct runtime_handle h = {0, 0};
    if (argc >= 8) {
        h.init_pid = (pid_t)atoi(argv[6]);
        h.init_start_time = strtoull(argv[7], NULL, 10);
    }
    lz_error err;
    if (container_runtime.init(&cfg, &err) < 0) {
        fprintf(stderr, "init: %s\n", err.msg);
        return 1;
    }
    if (strcmp(cmd, "create") == 0) {
        double t0 = now_ms();
        if (container_runtime.create(&cfg, &spec, &h, &err) < 0) {
            fprintf(stderr, "create: %s\n", err.msg);
            return 1;
        }
        fprintf(stderr, "create took %.2f ms\n", now_ms() - t0);
        printf("%d %" PRIu64 "\n", (int)h.init_pid, h.init_start_time);
        return 0;
    }
    if (strcmp(cmd, "connect") == 0) {
        int fd = container_runtime.connect_agent(&cfg, spec.id, &err);
        if (fd < 0) {
            fprintf(stderr, "connect: %s\n", err.msg);
            return 1;
        }
        printf("connected\n");
        close(fd);
        return 0;
    }
    if (strcmp(cmd, "stats") == 0) {
        struct runtime_stats st;
        if (container_runtime.stats(&cfg, spec.id, &st, &err) < 0) {
            fprintf(stderr, "stats: %s\n", err.msg);
            return 1;
        }
        printf("memory %" PRIu64 " cpu_usec %" PRIu64 " pids %u\n", st.memory_bytes, st.cpu_usec,
               st.pids);
        return 0;
    }
    if (strcmp(cmd, "alive") == 0) {
        printf("%d\n", container_runtime.is_alive(&h));
        return 0;
    }
    if (strcmp(cmd, "destroy") == 0) {
        double t0 = now_ms();
        if (container_runtime.destroy(&cfg, spec.id, &h, &err) < 0) {
            fprintf(stderr, "destroy: %s\n", err.msg);
            return 1;
        }
        fprintf(stderr, "destroy took %.2f ms\n", now_ms() - t0);
        return 0;
    }
    if (strcmp(cmd, "bench") == 0)
        return bench(&cfg, &spec, atoi(argv[5]));
    fprintf(stderr, "unknown command %s\n", cmd);
    return 2;
}
