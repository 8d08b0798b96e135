"""A small server run *inside* a sandbox by test_ports.py (python3 stdlib only).

GET  /download?n=N   N bytes of a fixed 64 KiB pattern (Content-Length)
POST /upload         reads the body (Content-Length), answers {"n", "sha256"}
GET  /headers        the request line and headers it received, as JSON
GET  /sse            three server-sent events, chunked, flushed one by one
GET  /ws             WebSocket echo (RFC 6455; text, binary, ping, close)
"""

import base64
import hashlib
import json
import socketserver
import struct
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PATTERN = bytes(range(256)) * 256
WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def recv_exact(f, n):
    data = f.read(n)
    if len(data) != n:
        raise EOFError
    return data


def ws_read_frame(f):
    b0, b1 = recv_exact(f, 2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", recv_exact(f, 2))[0]
    elif n == 127:
        n = struct.unpack("!Q", recv_exact(f, 8))[0]
    mask = recv_exact(f, 4) if b1 & 0x80 else b"\0\0\0\0"
    data = bytearray(recv_exact(f, n))
    for i in range(n):
        data[i] ^= mask[i % 4]
    return b0 & 0x0F, bytes(data)


def ws_frame(opcode, data):
    n = len(data)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, n)
    return head + data


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # head and body are separate writes

    def log_message(self, *a):
        pass

    def send_json(self, obj):
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path, _, query = self.path.partition("?")
        if path == "/download":
            n = int(query.split("=", 1)[1])
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            while n > 0:
                k = min(n, len(PATTERN))
                self.wfile.write(PATTERN[:k])
                n -= k
        elif path == "/headers":
            self.send_json({"requestline": self.requestline, "headers": self.headers.items()})
        elif path == "/sse":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(3):
                ev = b"data: event %d\n\n" % i
                self.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/ws":
            self.websocket()
        else:
            self.send_error(404)

    def do_POST(self):
        n = int(self.headers["Content-Length"])
        h = hashlib.sha256()
        got = 0
        while got < n:
            chunk = self.rfile.read(min(1 << 20, n - got))
            if not chunk:
                break
            h.update(chunk)
            got += len(chunk)
        self.send_json({"n": got, "sha256": h.hexdigest()})

    def websocket(self):
        key = self.headers["Sec-WebSocket-Key"].encode()
        accept = base64.b64encode(hashlib.sha1(key + WS_GUID).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        while True:
            try:
                op, data = ws_read_frame(self.rfile)
            except EOFError:
                break
            if op == 8:
                self.wfile.write(ws_frame(8, data))
                break
            self.wfile.write(ws_frame(10 if op == 9 else op, data))
            self.wfile.flush()
        self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512


if __name__ == "__main__":
    socketserver.TCPServer.allow_reuse_address = True
    Server(("0.0.0.0", int(sys.argv[1])), Handler).serve_forever()
