/* API keys: generation, hashing, and checking a request's bearer token.
 * A key is "lz_<id>_<secret>": the id part finds the row (key_<id>), the
 * secret (160 random bits) is stored only as its SHA-256 and compared in
 * constant time. */
#ifndef LZ_AUTH_H
#define LZ_AUTH_H

#include "store.h"

#define AUTH_KEY_MAX 128

/* New key material: fills rec->id, rec->hash, rec->prefix and the full key
 * text (shown to the user once). */
int auth_key_generate(struct key_record *rec, char key_out[AUTH_KEY_MAX], lz_error *err);

/* Split "lz_<id>_<secret>" into the key id ("key_<id>") and secret. Pure;
 * returns -1 for anything malformed. */
int auth_key_parse(const char *key, char id_out[64], char secret_out[AUTH_KEY_MAX]);

/* hex SHA-256 of the secret. */
void auth_hash_secret(const char *secret, char out[65]);

/* Check "Bearer KEY" against the store. 0 and *out on success; -1 if the
 * header is missing, malformed, unknown or wrong (the caller answers 401). */
int auth_check(struct store *s, const char *authorization, struct key_record *out);

#endif
