/* lizard: the command-line client of lizardd. Each command group lives in
 * its own file (up.c, keys.c, projects.c, sandbox.c, template.c), shared
 * helpers in cli.c; this file is global options and dispatch only (it is
 * left out of the unit-test link, which takes every other object). */
#include "cli.h"
#include "args.h"

#include <stdio.h>
#include <string.h>

static const char usage_text[] =
    "usage: lizard [--json] COMMAND ...\n"
    "\n"
    "  up [--listen ADDR:PORT] [--data-dir DIR] [-d]   start lizardd (-d: in the background)\n"
    "  keys create NAME [--project P] [--admin] | ls | rm ID\n"
    "  projects create NAME [--slug S] | ls\n"
    "  sandbox create [TEMPLATE] [--timeout MS] [--project P] [--size S]\n"
    "                 [--env K=V]... [--metadata K=V]...\n"
    "  sandbox ls [--project P] | info ID | kill ID | timeout ID MS\n"
    "  sandbox exec ID [--user U] [--cwd DIR] [--env K=V]... [--timeout MS] -- CMD [ARGS...]\n"
    "  sandbox pause ID | resume ID | snapshot ID --name N [--pool-size K] | restore SNAP\n"
    "  template ls | build NAME [--dir TEMPLATE_DIR]\n"
    "  snapshot ls [--project P] | rm ID|NAME\n"
    "  volume create NAME --size MB [--project P] | ls [--project P] | rm ID|NAME\n"
    "  usage [--project P] [--from DATE] [--to DATE]   metering: seconds, GB-months, cost\n"
    "\n"
    "  --json   print the server's JSON instead of tables\n"
    "\n"
    "The server and key come from LIZARD_API_URL and LIZARD_API_KEY, else from\n"
    "the local data dir (LIZARD_DATA_DIR, default " DEFAULT_DATA_DIR "): api-url, admin-key.\n"
    "Run 'lizard COMMAND --help' for a command's options.\n";

static const struct {
    const char *name;
    int (*fn)(int, char **);
} commands[] = {
    {"up", cmd_up},
    {"keys", cmd_keys},
    {"projects", cmd_projects},
    {"sandbox", cmd_sandbox},
    {"template", cmd_template},
    {"volume", cmd_volume},
    {"snapshot", cmd_snapshot},
    {"usage", cmd_usage},
};

int main(int argc, char **argv)
{
    /* Output is read by people and pipes alike; lines must arrive in order
     * with the command output that sandbox exec writes with write(2). */
    setvbuf(stdout, NULL, _IOLBF, 0);
    cli_json = args_take_flag(&argc, argv, "--json");
    if (argc < 2) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "lizard: unknown command '%s'\n\n%s", cmd, usage_text);
    return EXIT_USAGE;
}
