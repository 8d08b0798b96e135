#include "auth.h"
#include "../common/ids.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define KEY_ID_CHARS 12
#define KEY_SECRET_CHARS 32 /* 32 x 5 bits = 160 bits */

void auth_hash_secret(const char *secret, char out[65])
{
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)secret, strlen(secret), digest);
    hex_encode(digest, sizeof(digest), out);
}

int auth_key_generate(struct key_record *rec, char key_out[AUTH_KEY_MAX], lz_error *err)
{
    char idpart[KEY_ID_CHARS + 1], secret[KEY_SECRET_CHARS + 1];
    if (random_id(idpart, sizeof(idpart), "", KEY_ID_CHARS) < 0 ||
        random_id(secret, sizeof(secret), "", KEY_SECRET_CHARS) < 0)
        return lz_error_sys(err, "random");
    snprintf(rec->id, sizeof(rec->id), "key_%s", idpart);
    snprintf(key_out, AUTH_KEY_MAX, "lz_%s_%s", idpart, secret);
    auth_hash_secret(secret, rec->hash);
    snprintf(rec->prefix, sizeof(rec->prefix), "lz_%s", idpart);
    return 0;
}

int auth_key_parse(const char *key, char id_out[64], char secret_out[AUTH_KEY_MAX])
{
    if (key == NULL || strncmp(key, "lz_", 3) != 0)
        return -1;
    const char *idpart = key + 3;
    const char *sep = strchr(idpart, '_');
    if (sep == NULL || sep == idpart || sep - idpart > 32)
        return -1;
    const char *secret = sep + 1;
    size_t slen = strlen(secret);
    if (slen == 0 || slen >= AUTH_KEY_MAX)
        return -1;
    snprintf(id_out, 64, "key_%.*s", (int)(sep - idpart), idpart);
    if (!id_is_valid(id_out, "key_"))
        return -1;
    memcpy(secret_out, secret, slen + 1);
    return 0;
}

int auth_check(struct store *s, const char *authorization, struct key_record *out)
{
    if (authorization == NULL || strncmp(authorization, "Bearer ", 7) != 0)
        return -1;
    const char *key = authorization + 7;
    while (*key == ' ')
        key++;
    char id[64], secret[AUTH_KEY_MAX], hash[65];
    if (auth_key_parse(key, id, secret) < 0)
        return -1;
    /* Hash before the lookup, so a wrong id and a wrong secret cost the same. */
    auth_hash_secret(secret, hash);
    if (store_key_get(s, id, out, NULL) != 0)
        return -1;
    return CRYPTO_memcmp(hash, out->hash, 64) == 0 ? 0 : -1;
}
