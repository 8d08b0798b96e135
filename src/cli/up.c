/* lizard up: start lizardd, in the foreground (exec) or detached (-d). */
#include "cli.h"
#include "args.h"
#include "../common/cleanup.h"
#include "../common/fsutil.h"
#include "../common/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UP_WAIT_MS 30000
#define LOG_TAIL 3000

static const char up_usage[] =
    "usage: lizard up [--listen ADDR:PORT] [--data-dir DIR] [--template-dir DIR] [-d]\n"
    "  Starts lizardd (default 127.0.0.1:7400, data dir $LIZARD_DATA_DIR or /var/lib/lizard).\n"
    "  -d: in the background (log: DATA/lizardd.log); returns once it answers /healthz,\n"
    "      printing its URL and, on first start, the admin key.\n";

struct up_opts {
    const char *listen, *data_dir, *template_dir;
    int detach;
};

static int up__argv(const struct up_opts *o, const char *lizardd, const char *argv[8])
{
    int n = 0;
    argv[n++] = lizardd;
    if (o->listen) {
        argv[n++] = "--listen";
        argv[n++] = o->listen;
    }
    /* Always explicit, so that lizardd and this process agree on it. */
    argv[n++] = "--data-dir";
    argv[n++] = o->data_dir;
    if (o->template_dir) {
        argv[n++] = "--template-dir";
        argv[n++] = o->template_dir;
    }
    argv[n] = NULL;
    return n;
}

/* Identity of a file, to notice that lizardd (re)wrote it. */
struct file_id {
    int exists;
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
};

static struct file_id file_id_of(const char *path)
{
    struct stat st;
    struct file_id id = {0};
    if (stat(path, &st) == 0)
        id = (struct file_id){1, st.st_dev, st.st_ino, st.st_mtim};
    return id;
}

static int file_id_changed(const struct file_id *a, const struct file_id *b)
{
    return a->exists != b->exists || a->dev != b->dev || a->ino != b->ino ||
           a->mtime.tv_sec != b->mtime.tv_sec || a->mtime.tv_nsec != b->mtime.tv_nsec;
}

static void print_log_tail(const char *log, off_t from)
{
    cleanup_close int fd = open(log, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        return;
    if (st.st_size - from > LOG_TAIL)
        from = st.st_size - LOG_TAIL;
    char buf[LOG_TAIL + 1];
    ssize_t n = pread(fd, buf, LOG_TAIL, from);
    if (n <= 0)
        return;
    buf[n] = '\0';
    fprintf(stderr, "--- %s ---\n%s%s", log, buf, buf[n - 1] == '\n' ? "" : "\n");
}

static int healthz_ok(const char *url)
{
    lz_error err;
    lizard_client *c = lizard_client_new(url, NULL, &err);
    if (c == NULL)
        return 0;
    int st = lizard_request(c, "GET", "/healthz", NULL, NULL, &err);
    lizard_client_free(c);
    return st == 200;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Wait for this start of lizardd: it rewrites DATA/api-url once it listens
 * (a URL file from an earlier run, or another lizardd already on the port,
 * must not count), then /healthz must answer. */
static int up__wait(pid_t pid, const char *data, const struct file_id *url_before, char *url,
                    size_t urlsz, lz_error *err)
{
    char url_path[4096];
    snprintf(url_path, sizeof(url_path), "%s/api-url", data);
    for (int waited = 0; waited < UP_WAIT_MS; waited += 100) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid)
            return lz_error_set(err, 0, "lizardd exited (%s %d) before it answered",
                                WIFEXITED(status) ? "status" : "signal",
                                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        struct file_id now = file_id_of(url_path);
        cleanup_free char *text = NULL;
        if (now.exists && file_id_changed(url_before, &now) &&
            read_file(url_path, urlsz - 1, &text, NULL) == 0) {
            text[strcspn(text, "\r\n")] = '\0';
            if (text[0] && healthz_ok(text)) {
                snprintf(url, urlsz, "%s", text);
                return 0;
            }
        }
        sleep_ms(100);
    }
    return lz_error_set(err, 0,
                        "lizardd (pid %d) did not answer /healthz within %d s; it is "
                        "still running",
                        (int)pid, UP_WAIT_MS / 1000);
}

static void up__report(const char *data, const char *url, pid_t pid, int key_was_there)
{
    char key_path[4096];
    snprintf(key_path, sizeof(key_path), "%s/admin-key", data);
    cleanup_free char *key = NULL;
    if (!key_was_there && read_file(key_path, 4096, &key, NULL) == 0)
        key[strcspn(key, "\r\n")] = '\0';
    if (cli_json) {
        json_t *o = cli_obj();
        json_object_set_new(o, "url", json_string(url));
        json_object_set_new(o, "pid", json_integer(pid));
        json_object_set_new(o, "dataDir", json_string(data));
        if (key)
            json_object_set_new(o, "adminKey", json_string(key));
        out_json(o);
        json_decref(o);
        return;
    }
    printf("lizardd listening on %s (pid %d, log %s/lizardd.log)\n", url, (int)pid, data);
    if (key)
        printf("admin key: %s\n(saved in %s; shown only on first start)\n", key, key_path);
}

static int up__detached(const struct up_opts *o, const char *lizardd)
{
    lz_error err = {0};
    char path[4096], log[4096], url[1024];
    if (mkdir_p(o->data_dir, 0755, &err) < 0)
        return cli_fail(&err);
    snprintf(path, sizeof(path), "%s/admin-key", o->data_dir);
    /* Before the start: whether this start creates the admin key decides
     * whether we print it. */
    int key_was_there = access(path, F_OK) == 0;
    snprintf(path, sizeof(path), "%s/api-url", o->data_dir);
    struct file_id url_before = file_id_of(path);
    snprintf(log, sizeof(log), "%s/lizardd.log", o->data_dir);
    cleanup_close int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (logfd < 0)
        return cli_failf("open %s: %s", log, strerror(errno));
    off_t log_start = lseek(logfd, 0, SEEK_END);
    const char *argv[8];
    up__argv(o, lizardd, argv);
    /* setsid: the daemon must not die with this terminal or its Ctrl-C. */
    struct spawn_opts so = {.stdout_fd = logfd, .stderr_fd = logfd, .new_session = 1};
    pid_t pid = spawn_start_opts(argv, NULL, &so, &err);
    if (pid < 0)
        return cli_fail(&err);
    if (up__wait(pid, o->data_dir, &url_before, url, sizeof(url), &err) < 0) {
        cli_fail(&err);
        print_log_tail(log, log_start);
        return EXIT_FAIL;
    }
    up__report(o->data_dir, url, pid, key_was_there);
    return 0;
}

int cmd_up(int argc, char **argv)
{
    static const struct option opts[] = {{"listen", required_argument, NULL, 'l'},
                                         {"data-dir", required_argument, NULL, 'D'},
                                         {"template-dir", required_argument, NULL, 'T'},
                                         {"detach", no_argument, NULL, 'd'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    struct up_opts o = {.data_dir = cli_data_dir()};
    lz_error err = {0};
    int c;
    optind = 0;
    while ((c = getopt_long(argc, argv, ":l:dh", opts, NULL)) != -1) {
        if (c == 'l')
            o.listen = optarg;
        else if (c == 'D')
            o.data_dir = optarg;
        else if (c == 'T')
            o.template_dir = optarg;
        else if (c == 'd')
            o.detach = 1;
        else if (c == 'h')
            return cli_group_usage(up_usage, 1);
        else
            return cli_opt_error("up", c, argv);
    }
    if (optind != argc)
        return cli_usage("up", "unexpected argument '%s'", argv[optind]);
    if (o.listen && args_check_listen(o.listen, &err) < 0)
        return cli_usage("up", "%s", err.msg);
    char lizardd[4096];
    if (cli_exe_dir(lizardd, sizeof(lizardd) - 16, &err) < 0)
        return cli_fail(&err);
    strcat(lizardd, "/lizardd");
    if (access(lizardd, X_OK) < 0)
        return cli_failf("lizardd not found next to lizard (%s): %s", lizardd, strerror(errno));
    if (o.detach)
        return up__detached(&o, lizardd);
    const char *args[8];
    up__argv(&o, lizardd, args);
    fflush(stdout);
    execv(lizardd, (char *const *)args);
    return cli_failf("exec %s: %s", lizardd, strerror(errno));
}
