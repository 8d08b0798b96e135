#include "utf8.h"

#include <string.h>

static const char REPLACEMENT[3] = {(char)0xEF, (char)0xBF, (char)0xBD};

/* Length of the sequence a lead byte starts (0 = never a lead byte). */
static size_t lead_len(uint8_t b)
{
    if (b < 0x80)
        return 1;
    if (b >= 0xC2 && b <= 0xDF)
        return 2;
    if (b >= 0xE0 && b <= 0xEF)
        return 3;
    if (b >= 0xF0 && b <= 0xF4)
        return 4;
    return 0;
}

/* Whether b may follow lead at position 1; the second byte's range depends
 * on the lead, which is what excludes overlongs, surrogates and > U+10FFFF. */
static bool second_ok(uint8_t lead, uint8_t b)
{
    switch (lead) {
    case 0xE0:
        return b >= 0xA0 && b <= 0xBF;
    case 0xED:
        return b >= 0x80 && b <= 0x9F;
    case 0xF0:
        return b >= 0x90 && b <= 0xBF;
    case 0xF4:
        return b >= 0x80 && b <= 0x8F;
    default:
        return b >= 0x80 && b <= 0xBF;
    }
}

/* Examine the sequence at s[0..n). Returns its length if complete and
 * valid; otherwise 0 and *valid_prefix = how many bytes form a valid but
 * incomplete prefix (the maximal subpart; at least 1 byte is consumed). */
static size_t scan(const uint8_t *s, size_t n, size_t *valid_prefix)
{
    size_t need = lead_len(s[0]);
    *valid_prefix = 1;
    if (need == 0)
        return 0;
    if (need == 1)
        return 1;
    size_t i = 1;
    for (; i < need && i < n; i++) {
        bool ok = i == 1 ? second_ok(s[0], s[1]) : (s[i] & 0xC0) == 0x80;
        if (!ok)
            break;
    }
    *valid_prefix = i;
    return i == need ? need : 0;
}

size_t utf8_sanitize(struct utf8_carry *carry, const uint8_t *in, size_t n, bool final, char *out)
{
    size_t w = 0;
    /* First finish a sequence held from the previous chunk: complete it with
     * bytes from `in` in a small buffer so the scan sees it whole. */
    if (carry && carry->len > 0) {
        uint8_t tmp[4];
        size_t have = carry->len;
        memcpy(tmp, carry->buf, have);
        size_t need = lead_len(tmp[0]);
        size_t take = need - have < n ? need - have : n;
        if (take > 0)
            memcpy(tmp + have, in, take);
        size_t prefix;
        size_t len = scan(tmp, have + take, &prefix);
        if (len == 0 && prefix == have + take && !final) {
            /* Still incomplete (the chunk was tiny): keep waiting. */
            memcpy(carry->buf, tmp, have + take);
            carry->len = have + take;
            return 0;
        }
        carry->len = 0;
        if (len > 0) {
            memcpy(out, tmp, len);
            w += len;
            in += len - have;
            n -= len - have;
        } else {
            /* The carry only ever holds a valid prefix, so the maximal
             * subpart covers all of it and ends at or after its end. */
            memcpy(out, REPLACEMENT, 3);
            w += 3;
            in += prefix - have;
            n -= prefix - have;
        }
    }
    size_t i = 0;
    while (i < n) {
        /* Fast path for ASCII runs, the common case for command output. */
        if (in[i] < 0x80) {
            size_t j = i;
            while (j < n && in[j] < 0x80)
                j++;
            memcpy(out + w, in + i, j - i);
            w += j - i;
            i = j;
            continue;
        }
        size_t prefix;
        size_t len = scan(in + i, n - i, &prefix);
        if (len > 0) {
            memcpy(out + w, in + i, len);
            w += len;
            i += len;
        } else if (i + prefix == n && !final && carry && lead_len(in[i]) > prefix) {
            memcpy(carry->buf, in + i, prefix);
            carry->len = prefix;
            i = n;
        } else {
            memcpy(out + w, REPLACEMENT, 3);
            w += 3;
            i += prefix;
        }
    }
    return w;
}

bool utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t prefix;
        size_t len = scan(s + i, n - i, &prefix);
        if (len == 0)
            return false;
        i += len;
    }
    return true;
}
