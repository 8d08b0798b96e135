/* libFuzzer target: arbitrary bytes through the incremental frame decoder
 * (fed in varying chunk sizes), and every REQUEST/SIGNAL payload through
 * the agent's own request validation (src/agent/request.c). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../src/agent/request.h"
#include "../../src/proto/proto.h"

static void check_request(const struct proto_header *h, const uint8_t *p)
{
    if (h->type == PROTO_SIGNAL) {
        int sig = request_parse_signal(p, h->length, NULL);
        if (sig != -1 && (sig < 1 || sig > 64))
            __builtin_trap();
        return;
    }
    if (h->type != PROTO_REQUEST)
        return;
    struct request req;
    lz_error err;
    if (request_parse(p, h->length, &req, &err) < 0)
        return;
    /* What the agent relies on after a successful parse. */
    if (req.user == NULL || req.root == NULL)
        __builtin_trap();
    if (req.path && !request_path_ok(req.path, strlen(req.path)))
        __builtin_trap();
    if (req.op == OP_EXEC && (req.argv == NULL || req.argv[0] == NULL))
        __builtin_trap();
    request_free(&req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct proto_decoder d;
    proto_decoder_init(&d);
    /* The first byte picks the chunk size, so splits are explored too. */
    size_t chunk = size ? (size_t)data[0] % 64 + 1 : 1;
    struct proto_header h;
    const uint8_t *p;
    for (size_t off = 0; off < size; off += chunk) {
        size_t n = size - off < chunk ? size - off : chunk;
        if (proto_decoder_feed(&d, data + off, n) < 0)
            break;
        int r;
        while ((r = proto_decoder_next(&d, &h, &p, NULL)) == 1) {
            if (h.length > PROTO_MAX_PAYLOAD)
                __builtin_trap();
            check_request(&h, p);
        }
        if (r < 0)
            break;
    }
    proto_decoder_free(&d);

    /* The whole input as one REQUEST payload too: JSON-heavy inputs reach
     * the validator without needing a valid header in front. */
    if (size <= PROTO_MAX_PAYLOAD) {
        struct proto_header rh = {PROTO_VERSION, PROTO_REQUEST, 0, 1, (uint32_t)size};
        check_request(&rh, data);
    }
    return 0;
}
