/* Exposed ports: token derivation and checking (see ports.h). */
#include "ports.h"
#include "../common/fsutil.h"
#include "../common/ids.h"

#include <errno.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ports_init(struct lizardd *d, lz_error *err)
{
    char path[PATH_MAX], *hex = NULL;
    snprintf(path, sizeof(path), "%s/port-key", d->data_dir);
    if (read_file(path, 256, &hex, NULL) == 0) {
        int ok = strlen(hex) >= 64;
        for (size_t i = 0; ok && i < sizeof(d->port_key); i++)
            ok = sscanf(hex + 2 * i, "%2hhx", &d->port_key[i]) == 1;
        free(hex);
        if (!ok)
            return lz_error_set(err, EINVAL,
                                "%s is malformed (delete it to make a new one; "
                                "exposed ports then need exposing again)",
                                path);
        return 0;
    }
    char text[2 * sizeof(d->port_key) + 2];
    if (random_bytes(d->port_key, sizeof(d->port_key)) < 0)
        return lz_error_sys(err, "getrandom");
    hex_encode(d->port_key, sizeof(d->port_key), text);
    strcat(text, "\n");
    return write_file_atomic(path, text, 0600, err);
}

int ports_expose(struct lizardd *d, const char *sandbox_id, int port, struct port_record *out,
                 lz_error *err)
{
    int r = store_port_get(d->store, sandbox_id, port, out, err);
    if (r != STORE_NOT_FOUND)
        return r;
    unsigned char nonce[16];
    if (random_bytes(nonce, sizeof(nonce)) < 0)
        return lz_error_sys(err, "getrandom");
    memset(out, 0, sizeof(*out));
    snprintf(out->sandbox_id, sizeof(out->sandbox_id), "%s", sandbox_id);
    out->port = port;
    hex_encode(nonce, sizeof(nonce), out->nonce);
    out->created_ms = now_ms();
    if (store_port_insert(d->store, out, err) == 0)
        return 0;
    /* A concurrent expose of the same port won: use its row. */
    if (err->errnum == EEXIST)
        return store_port_get(d->store, sandbox_id, port, out, err) == 0 ? 0 : -1;
    return -1;
}

void ports_token(const struct lizardd *d, const struct port_record *p,
                 char out[PORTS_TOKEN_LEN + 1])
{
    char msg[256];
    int n = snprintf(msg, sizeof(msg), "%s:%d:%s", p->sandbox_id, p->port, p->nonce);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    HMAC(EVP_sha256(), d->port_key, sizeof(d->port_key), (const unsigned char *)msg, (size_t)n, mac,
         &maclen);
    hex_encode(mac, PORTS_TOKEN_LEN / 2, out);
}

int ports_token_valid(struct lizardd *d, const char *sandbox_id, int port, const char *token,
                      lz_error *err)
{
    struct port_record p;
    int r = store_port_get(d->store, sandbox_id, port, &p, err);
    if (r == STORE_NOT_FOUND)
        return 0;
    if (r < 0)
        return -1;
    char want[PORTS_TOKEN_LEN + 1];
    ports_token(d, &p, want);
    /* The length is public (fixed); only the contents are compared, in
     * constant time. */
    return strlen(token) == PORTS_TOKEN_LEN && CRYPTO_memcmp(token, want, PORTS_TOKEN_LEN) == 0;
}

json_t *ports_json(const struct lizardd *d, const struct port_record *p, int with_token)
{
    char host[256], url[512], token[PORTS_TOKEN_LEN + 1];
    const char *scheme = d->tls ? "https" : "http";
    snprintf(host, sizeof(host), "%d-%s.%s", p->port, p->sandbox_id, d->domain);
    json_t *o = json_pack("{s:i, s:s}", "port", p->port, "hostname", host);
    if (with_token) {
        ports_token(d, p, token);
        snprintf(url, sizeof(url), "%s://%s:%d/?lizard_token=%s", scheme, host, d->listen_port,
                 token);
        json_object_set_new(o, "accessToken", json_string(token));
    } else {
        snprintf(url, sizeof(url), "%s://%s:%d/", scheme, host, d->listen_port);
    }
    json_object_set_new(o, "url", json_string(url));
    return o;
}
