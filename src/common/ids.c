#include "ids.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

int random_bytes(void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t r = getrandom(p, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static const char id_alphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";

int random_id(char *out, size_t outsz, const char *prefix, size_t chars)
{
    size_t plen = strlen(prefix);
    if (plen + chars + 1 > outsz || chars > 64) {
        errno = ENAMETOOLONG;
        return -1;
    }
    unsigned char raw[64];
    if (random_bytes(raw, chars) < 0)
        return -1;
    memcpy(out, prefix, plen);
    for (size_t i = 0; i < chars; i++)
        out[plen + i] = id_alphabet[raw[i] & 31];
    out[plen + chars] = '\0';
    return 0;
}

int id_is_valid(const char *s, const char *prefix)
{
    if (s == NULL)
        return 0;
    size_t plen = strlen(prefix);
    if (strncmp(s, prefix, plen) != 0)
        return 0;
    const char *p = s + plen;
    size_t n = 0;
    for (; *p; p++, n++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
            return 0;
    }
    return n >= 1 && n <= 64;
}

void hex_encode(const unsigned char *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}
