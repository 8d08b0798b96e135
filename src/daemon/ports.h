/* Exposed ports: access tokens and the names a port is reached by.
 *
 * A token is HMAC-SHA256(port_key, "SANDBOXID:PORT:NONCE"), cut to 160
 * bits: the store holds only the random per-port nonce, and the key lives in
 * DATA/port-key (0600), so a copy of the database opens nothing, yet exposing
 * the same port again returns the same token (docs/ports.md). */
#ifndef LZ_PORTS_H
#define LZ_PORTS_H

#include <jansson.h>
#include "daemon.h"

#define PORTS_TOKEN_LEN 40 /* hex characters */

/* Load DATA/port-key, making it on first start. */
int ports_init(struct lizardd *d, lz_error *err);

/* The row of (sandbox, port), made with a fresh nonce if there is none yet. */
int ports_expose(struct lizardd *d, const char *sandbox_id, int port, struct port_record *out,
                 lz_error *err);

void ports_token(const struct lizardd *d, const struct port_record *p,
                 char out[PORTS_TOKEN_LEN + 1]);

/* 1 when token opens (sandbox, port), 0 when not, -1 on a store failure.
 * Constant time in the token's contents. */
int ports_token_valid(struct lizardd *d, const char *sandbox_id, int port, const char *token,
                      lz_error *err);

/* {port, url, hostname[, accessToken]} */
json_t *ports_json(const struct lizardd *d, const struct port_record *p, int with_token);

#endif
