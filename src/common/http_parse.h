/* HTTP/1.1 message-head parsing, shared by lizardd (requests from anyone on
 * the network: untrusted, fuzzed) and the C client (responses). Pure: no I/O.
 */
#ifndef LZ_HTTP_PARSE_H
#define LZ_HTTP_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_MAX_HEAD 16384 /* request line + headers; larger -> 431 */
#define HTTP_MAX_HEADERS 64

struct http_header {
    char *name; /* points into the head buffer, NUL-terminated */
    char *value;
};

struct http_head {
    /* request: method, target; response: status, reason */
    char *method;
    char *target;
    int status;
    char *reason;
    int minor_version; /* 0 or 1 */
    struct http_header headers[HTTP_MAX_HEADERS];
    size_t nheaders;
};

/* Find the end of the head ("\r\n\r\n", also accepts bare "\n\n") in buf.
 * Returns the head length including the terminator, or 0 if not complete. */
size_t http_head_end(const char *buf, size_t len);

/* Parse a complete head in place (buf is modified; strings point into it).
 * Returns 0, or a negative HTTP status with *why set to a static message:
 * -400 malformed, -431 head too large / too many headers, -505 an HTTP
 * version other than 1.0/1.1 (requests only; responses get -400). Bytes
 * after the empty line that ends the head are ignored. */
int http_parse_request_head(char *buf, size_t len, struct http_head *out, const char **why);
int http_parse_response_head(char *buf, size_t len, struct http_head *out, const char **why);

/* Case-insensitive header lookup; NULL if absent. */
const char *http_header_get(const struct http_head *h, const char *name);

/* Body framing from the head. Returns 0 and sets *chunked / *content_length
 * (-1 = none given), or -1 with *why (conflicting or invalid lengths). */
int http_body_framing(const struct http_head *h, int *chunked, int64_t *content_length,
                      const char **why);

/* Chunked transfer decoding as a state machine fed with arbitrary slices. */
struct http_chunked {
    int state;
    uint64_t remaining; /* bytes left in the current chunk */
    int digits;         /* bytes of the current size line / trailers (bounded) */
};
void http_chunked_init(struct http_chunked *c);
/* Consume input; decoded body bytes are moved to the front of buf in place.
 * Returns the number of body bytes produced (at buf, never more than len),
 * sets *consumed to the input bytes used (all of them unless *done: bytes
 * after the final CRLF are left for the caller, e.g. a pipelined request)
 * and *done when the last chunk and trailers are read. Returns -1 on
 * malformed input (*why set); the decoder then stays failed. */
long http_chunked_decode(struct http_chunked *c, char *buf, size_t len, size_t *consumed, int *done,
                         const char **why);

/* Percent-decoding into out (NUL-terminated). Returns the decoded length, or
 * -1 for a bad escape, an embedded (raw or decoded) NUL, or no room.
 * plus_is_space: 1 for query components, 0 for paths. */
long http_percent_decode(const char *in, size_t len, char *out, size_t outsz, int plus_is_space);
/* Percent-decoding of a query component ("+" is a space). */
long http_url_decode(const char *in, size_t len, char *out, size_t outsz);
/* Find query parameter NAME in "a=1&b=2" (the part after '?') and decode it
 * into out ("a" alone gives ""; the first occurrence wins). Returns 1 found,
 * 0 absent, -1 malformed/too long. */
int http_query_param(const char *query, const char *name, char *out, size_t outsz);

#endif
