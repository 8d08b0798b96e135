#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int error_vset(lz_error *err, int errnum, const char *fmt, va_list ap)
{
    if (err == NULL)
        return -1;
    err->errnum = errnum;
    int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    if (errnum != 0 && n >= 0 && (size_t)n < sizeof(err->msg))
        snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(errnum));
    return -1;
}

int lz_error_set(lz_error *err, int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, errnum, fmt, ap);
    va_end(ap);
    return -1;
}

int lz_error_sys(lz_error *err, const char *fmt, ...)
{
    int saved = errno;
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, saved, fmt, ap);
    va_end(ap);
    errno = saved;
    return -1;
}

int lz_error_prefix(lz_error *err, const char *fmt, ...)
{
    if (err == NULL)
        return -1;
    char prefix[256], old[sizeof(err->msg)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof(old));
    /* Assemble by hand: the result is cut at the buffer size on purpose. */
    size_t plen = strnlen(prefix, sizeof(prefix) - 1);
    memcpy(err->msg, prefix, plen);
    memcpy(err->msg + plen, ": ", 2);
    size_t room = sizeof(err->msg) - plen - 3;
    size_t olen = strnlen(old, room);
    memcpy(err->msg + plen + 2, old, olen);
    err->msg[plen + 2 + olen] = '\0';
    return -1;
}
