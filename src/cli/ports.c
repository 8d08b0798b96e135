/* lizard sandbox expose ID PORT: make a port of a sandbox reachable through
 * lizardd's proxy and print its private URL (the token is in it). */
#include "cli.h"
#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char expose_usage[] =
    "usage: lizard sandbox expose ID PORT   prints the URL (with its access token) of a\n"
    "  server listening on 0.0.0.0:PORT or 127.0.0.1:PORT in the sandbox\n";

int cmd_sandbox_expose(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--help") == 0)
        return cli_group_usage(expose_usage, 1);
    if (argc != 3)
        return cli_usage("sandbox", "sandbox expose takes an ID and a PORT");
    if (!args_is_id(argv[1]))
        return cli_usage("sandbox", "'%s' is not a sandbox id", argv[1]);
    char *end;
    long port = strtol(argv[2], &end, 10);
    if (*argv[2] == '\0' || *end != '\0' || port < 1 || port > 65535)
        return cli_usage("sandbox", "'%s' is not a port (1-65535)", argv[2]);
    char path[256];
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/ports", argv[1]);
    json_t *body = cli_obj(), *out = NULL;
    json_object_set_new(body, "port", json_integer(port));
    int st = cli_call("POST", path, body, &out);
    json_decref(body);
    if (st < 0)
        return EXIT_FAIL;
    if (cli_json)
        out_json(out);
    else
        printf("%s\n", json_string_value(json_object_get(out, "url")));
    json_decref(out);
    return 0;
}
