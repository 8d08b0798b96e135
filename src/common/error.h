/* Error reporting in the crun style: a function that fails returns a negative
 * value and fills an lz_error with errno and a message. The caller either
 * handles it, adds context with lz_error_prefix, or passes it up. */
#ifndef LZ_ERROR_H
#define LZ_ERROR_H

struct lz_error {
    int errnum;    /* errno at the failure, 0 when not a system error */
    char msg[512]; /* human readable, already includes strerror(errnum) */
};
typedef struct lz_error lz_error;

/* Fill *err (if err is not NULL) and return -1. */
int lz_error_set(lz_error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Like lz_error_set with errnum = errno. */
int lz_error_sys(lz_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prepend "context: " to an existing message. Returns -1. */
int lz_error_prefix(lz_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
