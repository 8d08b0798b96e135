/* Random identifiers and secrets, from getrandom(2). */
#ifndef LZ_IDS_H
#define LZ_IDS_H

#include <stddef.h>

/* Fill buf with n random bytes. Returns 0, or -1 (errno set). */
int random_bytes(void *buf, size_t n);

/* "PREFIX" + `chars` random lowercase base-32 characters (5 bits each), NUL
 * terminated. out must hold strlen(prefix) + chars + 1 bytes. Ids are used in
 * paths and hostnames, so only [a-z0-9] follow the prefix. */
int random_id(char *out, size_t outsz, const char *prefix, size_t chars);

/* True when s is PREFIX followed by 1..64 characters of [a-z0-9]. Everything
 * that takes an id from a client checks it with this before using it. */
int id_is_valid(const char *s, const char *prefix);

/* Lowercase hex of n bytes into out (2n+1 bytes). */
void hex_encode(const unsigned char *in, size_t n, char *out);

#endif
