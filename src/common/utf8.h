/* Turning untrusted bytes (command output, names from inside a sandbox) into
 * valid UTF-8 for JSON: every ill-formed sequence becomes U+FFFD, following
 * the Unicode "maximal subpart" practice (one U+FFFD per maximal invalid
 * prefix), and rejecting what jansson rejects: overlong forms, surrogates and
 * code points above U+10FFFF. Output arrives in chunks that may split a
 * character, so an incomplete trailing sequence is carried to the next call. */
#ifndef LZ_UTF8_H
#define LZ_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct utf8_carry {
    uint8_t buf[4];
    size_t len; /* bytes of an incomplete sequence held from the last chunk */
};

/* Space utf8_sanitize may write for n input bytes: each byte can become
 * the 3 bytes of U+FFFD, plus what the carry holds. */
#define UTF8_SANITIZE_BOUND(n) (3 * ((n) + 4))

/* Sanitize in[0..n) (after whatever the carry holds) into out, which must
 * have UTF8_SANITIZE_BOUND(n) bytes. With final, an incomplete trailing
 * sequence becomes U+FFFD; otherwise it is kept in the carry. Returns the
 * bytes written. carry may be NULL when final is true. */
size_t utf8_sanitize(struct utf8_carry *carry, const uint8_t *in, size_t n, bool final, char *out);

/* Whether s[0..n) is valid UTF-8 (by the same rules). */
bool utf8_valid(const uint8_t *s, size_t n);

#endif
