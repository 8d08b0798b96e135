/* liblizard: a small blocking client of the Lizard REST API (http:// and
 * https://; for https the certificate is checked against the system's trust
 * store plus the PEM file in LIZARD_CA_FILE, and must name the URL's host).
 * One TCP connection per request ("Connection: close"), so a caller never
 * has to drain a body it does not want. Thread-compatible: one client per
 * thread. Every call returns the HTTP status (2xx) on success, -STATUS
 * when the server answered non-2xx (err->msg = the server's message), or -1
 * when no answer arrived (err->msg says why). */
#ifndef LIZARD_CLIENT_H
#define LIZARD_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "../common/error.h"

typedef struct lizard_client lizard_client;

/* url: "http[s]://HOST[:PORT][/PREFIX]"; key may be NULL (only /healthz
 * then). Fails for a LIZARD_CA_FILE that cannot be loaded. */
lizard_client *lizard_client_new(const char *url, const char *key, lz_error *err);
void lizard_client_free(lizard_client *c);

/* body may be NULL; *out_json (if out_json) gets the parsed 2xx body, or NULL
 * for an empty one. The caller json_decref()s it. */
int lizard_request(lizard_client *c, const char *method, const char *path, json_t *body,
                   json_t **out_json, lz_error *err);

/* Streaming: cb gets every piece of a 2xx body as it arrives; a non-zero
 * return stops reading (the call then returns -1 with err->msg "aborted").
 * accept may be NULL ("application/json"). */
typedef int (*lizard_chunk_cb)(const char *data, size_t len, void *ud);
int lizard_request_stream(lizard_client *c, const char *method, const char *path, json_t *body,
                          const char *accept, lizard_chunk_cb cb, void *ud, lz_error *err);

/* NDJSON on top of the stream: cb gets one parsed object per line (borrowed;
 * strings may hold NUL bytes: use json_string_length). */
typedef int (*lizard_line_cb)(json_t *obj, void *ud);
int lizard_request_ndjson(lizard_client *c, const char *method, const char *path, json_t *body,
                          lizard_line_cb cb, void *ud, lz_error *err);

/* Raw bodies (files): the request body is read from in_fd (-1: none; a
 * regular file is sent with Content-Length, anything else chunked); a 2xx
 * body goes to out_fd if >= 0, else is parsed as JSON into *out_json. */
int lizard_request_fd(lizard_client *c, const char *method, const char *path, int in_fd, int out_fd,
                      json_t **out_json, lz_error *err);

/* Percent-encode a query value (malloc'd; NULL on ENOMEM). */
char *lizard_url_escape(const char *s);
/* Split "http[s]://host:port/prefix" (pure; for tests). *tls = https; host is
 * unbracketed; the port defaults to 80 or 443. */
int lizard_url_parse(const char *url, int *tls, char *host, size_t hostsz, char *port,
                     size_t portsz, char *prefix, size_t prefixsz, lz_error *err);

#endif
