/* The port proxy's pure parsing: which sandbox port a Host names, where a
 * request carries its access token, and the request head forwarded to the
 * sandbox with the token removed. No I/O; unit-tested and fuzzed. */
#ifndef LZ_PROXY_PARSE_H
#define LZ_PROXY_PARSE_H

#include <stddef.h>
#include "../common/http_parse.h"

#define PROXY_TOKEN_HEADER "X-Lizard-Access-Token"
#define PROXY_TOKEN_PARAM "lizard_token"
#define PROXY_TOKEN_MAX 128 /* longer tokens are never valid */
#define PROXY_COOKIE_NAME_MAX 32

/* "PORT-SANDBOXID.DOMAIN[:N]" (case-insensitive) -> *port (1..65535) and the
 * sandbox id in lowercase (a valid "sb_" id). Returns 0, or -1 when the host
 * is anything else (then the request is for the API). */
int proxy_parse_host(const char *host, const char *domain, int *port, char *id, size_t idsz);

/* The cookie a query-token visit sets: "lizard_token_PORT". */
void proxy_cookie_name(int port, char out[PROXY_COOKIE_NAME_MAX]);

/* Value of cookie `name` in a Cookie header value. 1 found, 0 absent, -1
 * when it does not fit in out. */
int proxy_cookie_get(const char *cookie, const char *name, char *out, size_t outsz);

/* The Cookie header value without the pairs named `name` ("" when none are
 * left). Returns the length, or -1 when out is too small. */
long proxy_cookie_strip(const char *cookie, const char *name, char *out, size_t outsz);

/* The request target without any lizard_token query parameter (names are
 * compared percent-decoded, like http_query_param finds them); the '?' goes
 * too when nothing is left. Returns the length, or -1 when out is too small. */
long proxy_target_strip(const char *target, char *out, size_t outsz);

/* Token carried by a request, in the order header, query parameter, cookie.
 * *from is set to "header", "query" or "cookie". Returns 1 found, 0 none,
 * -1 malformed (too long, bad escape). */
int proxy_request_token(const struct http_head *h, const char *target, int port, char *out,
                        size_t outsz, const char **from);

/* The head sent to the sandbox: request line with `target`, every header
 * except the token header, Cookie headers without the token cookie. Returns
 * the length, or -1 when it does not fit in out. */
long proxy_build_head(const struct http_head *h, const char *target, int port, char *out,
                      size_t outsz);

#endif
