/* The agent wire protocol: how lizardd talks to lizard-agent inside a
 * sandbox. The same bytes run over a Unix socket (container runtime) and a
 * virtio-serial channel (micro-VM runtime), so the protocol carries its own
 * framing, version and multiplexing and assumes nothing of the transport.
 *
 * Frame = 12-byte header + payload, integers big-endian:
 *
 *   u8  version   PROTO_VERSION; a peer rejects any other
 *   u8  type      enum proto_type
 *   u16 flags     0 (reserved; a peer rejects non-zero)
 *   u32 stream    stream id chosen by the daemon; 0 only for HELLO
 *   u32 length    payload bytes, at most PROTO_MAX_PAYLOAD
 *
 * A connection starts with the agent sending HELLO on stream 0 (JSON
 * {"version":1,"agent":"lizard-agent/..."}). The daemon opens a stream by
 * sending REQUEST with a fresh stream id; JSON payload {"op": "...", ...}.
 * Streams are independent and may interleave. A stream ends when the agent
 * sends RESPONSE (JSON result) or ERROR (JSON {"code","message"}); after
 * that the id may be reused. The daemon may send CANCEL to abandon a stream
 * (a foreground exec is then killed) — the agent still answers with ERROR
 * {"code":"cancelled"} or a RESPONSE if it had already finished.
 *
 * Ops (REQUEST payloads) and what flows on their stream:
 *
 *   ping        {}                                   -> RESPONSE {}
 *   exec        {"argv":[...]} or {"cmd":"sh text"}, "user":"root",
 *               "cwd":"/path" (default: the user's home), "env":{"K":"V"},
 *               "timeoutMs":N (0 = none), "maxOutput":N (bytes per stream,
 *               default 1 MiB), "stdin":bool (daemon will send DATA...EOF;
 *               else stdin is /dev/null), "background":bool
 *               foreground: agent sends STDOUT/STDERR frames as output is
 *               produced (at most maxOutput bytes each; the rest is read and
 *               dropped), then RESPONSE {"exitCode":N,"timedOut":b,
 *               "truncated":b,"signal":N|null}. A missing program gives
 *               exitCode 127 and a message on stderr, like a shell.
 *               background: RESPONSE {"pid":N} at once; the process
 *               survives the connection; output is kept by the agent
 *               (up to maxOutput per stream) for proc.output.
 *   signal      (frame type SIGNAL on an exec stream) {"signal":N}
 *   proc.list   {}                 -> RESPONSE {"processes":[{"pid","cmd",
 *                                     "running","exitCode","startedAt"}]}
 *   proc.signal {"pid":N,"signal":N}                 -> RESPONSE {}
 *   proc.stdin  {"pid":N,"eof":b}, then DATA... EOF  -> RESPONSE {"written":N}
 *   proc.output {"pid":N}  -> STDOUT/STDERR frames with everything kept so
 *               far, then RESPONSE {"running":b,"exitCode":N|null,
 *               "truncated":b}
 *   file.read   {"path","user"}    -> DATA frames, then RESPONSE {"size":N}
 *   file.write  {"path","user","mode":N (default 0644)}, then daemon sends
 *               DATA... EOF        -> RESPONSE {"size":N}. Parents are
 *               created (mkdir -p, owned by user). Written to a temporary
 *               file and renamed over the target when EOF arrives, so a
 *               cancelled write leaves the old file.
 *   file.list   {"path","user"}    -> RESPONSE {"entries":[stat...]}
 *   file.stat   {"path","user"}    -> RESPONSE stat = {"name","path","type":
 *               "file"|"dir"|"symlink"|"other","size","mode","uid","gid",
 *               "mtime" (seconds),"target" (symlinks)}
 *   file.mkdir  {"path","user"}    -> RESPONSE {}   (mkdir -p)
 *   file.remove {"path","user","recursive":b} -> RESPONSE {}
 *   file.rename {"from","to","user"}          -> RESPONSE {}
 *
 * ERROR codes: "invalid", "not_found", "permission_denied", "exists",
 * "not_directory", "is_directory", "not_empty", "no_space", "unknown_user",
 * "busy", "cancelled", "io". File ops run with the requesting user's
 * uid/gid/groups (fsuid), so the kernel enforces permissions and sets owners.
 *
 * The daemon never trusts what the agent sends: every frame is validated by
 * proto_decode_header and every JSON payload is checked field by field.
 */
#ifndef LZ_PROTO_H
#define LZ_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define PROTO_VERSION 1
#define PROTO_HEADER_SIZE 12
#define PROTO_MAX_PAYLOAD (1u << 20)
/* Size of DATA/STDOUT/STDERR chunks senders should use. */
#define PROTO_CHUNK 65536

enum proto_type {
    PROTO_HELLO = 1,
    PROTO_REQUEST = 2,
    PROTO_DATA = 3,
    PROTO_STDOUT = 4,
    PROTO_STDERR = 5,
    PROTO_EOF = 6,
    PROTO_RESPONSE = 7,
    PROTO_ERROR = 8,
    PROTO_SIGNAL = 9,
    PROTO_CANCEL = 10,
};

struct proto_header {
    uint8_t version;
    uint8_t type;
    uint16_t flags;
    uint32_t stream;
    uint32_t length;
};

/* Pure encoding/decoding (unit tested, fuzzed). */
void proto_encode_header(const struct proto_header *h, uint8_t out[PROTO_HEADER_SIZE]);
/* Returns 0 for a valid header, or -1 with *why set to a static message. */
int proto_decode_header(const uint8_t in[PROTO_HEADER_SIZE], struct proto_header *h,
                        const char **why);
const char *proto_type_name(uint8_t type);

/* Blocking I/O on a stream socket/fd (EINTR-safe, full reads and writes).
 * proto_write_frame sends header+payload with one writev. */
int proto_write_frame(int fd, uint8_t type, uint32_t stream, const void *payload, size_t len);
/* Reads one frame; *payload is malloc'd (NUL-terminated for convenience,
 * not counted in h->length), caller frees. Returns 1 on a frame, 0 on a
 * clean EOF before any header byte, -1 on error (errno set; EPROTO for a
 * malformed frame). */
int proto_read_frame(int fd, struct proto_header *h, uint8_t **payload);

/* Incremental decoder for non-blocking readers: feed bytes, take frames.
 * Decoding stops (returns -1) at the first malformed header. */
struct proto_decoder {
    uint8_t *buf;
    size_t len, cap;
    size_t pending; /* bytes of the frame last returned, dropped on the next call */
};
void proto_decoder_init(struct proto_decoder *d);
void proto_decoder_free(struct proto_decoder *d);
int proto_decoder_feed(struct proto_decoder *d, const void *data, size_t n);
/* Returns 1 and a frame (payload points into the decoder; valid until the
 * next feed/next call), 0 when more bytes are needed, -1 on a bad frame. */
int proto_decoder_next(struct proto_decoder *d, struct proto_header *h, const uint8_t **payload,
                       const char **why);

#endif
