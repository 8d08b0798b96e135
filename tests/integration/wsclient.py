"""A minimal RFC 6455 WebSocket client (stdlib only), plain or over TLS: the
echo tests of the port proxy (test_ports.py, test_tls.py) and the DevTools
connection of the browser test."""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import ssl
import struct
from typing import Optional


class WebSocket:
    """A minimal RFC 6455 client (stdlib), for the echo test and for CDP."""

    def __init__(self, sock: socket.socket, leftover: bytes = b"") -> None:
        self.sock = sock
        self.buf = leftover

    @classmethod
    def connect(cls, addr, host: str, path: str, headers=None, timeout: float = 30,
                tls: Optional[ssl.SSLContext] = None):
        """Handshake on `addr` with `Host: host`; with `tls`, over TLS (SNI:
        host without the port)."""
        s = socket.create_connection(addr, timeout=timeout)
        if tls is not None:
            s = tls.wrap_socket(s, server_hostname=host.rsplit(":", 1)[0])
        key = base64.b64encode(os.urandom(16)).decode()
        lines = ["GET %s HTTP/1.1" % path, "Host: %s" % host, "Upgrade: websocket",
                 "Connection: Upgrade", "Sec-WebSocket-Key: %s" % key,
                 "Sec-WebSocket-Version: 13"]
        lines += ["%s: %s" % kv for kv in (headers or {}).items()]
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                raise ConnectionError("closed during the handshake: %r" % data)
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        status = int(head.split(b" ")[1])
        if status != 101:
            raise ConnectionError("handshake answered %d: %r" % (status, data))
        want = base64.b64encode(hashlib.sha1(
            key.encode() + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
        assert want in head, head
        return cls(s, rest)

    def _exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, data, opcode: int = 0):
        if isinstance(data, str):
            data, opcode = data.encode(), opcode or 1
        opcode = opcode or 2
        n = len(data)
        if n < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(head + mask + masked)

    def recv(self):
        b0, b1 = self._exact(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._exact(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._exact(8))[0]
        return b0 & 0x0F, self._exact(n)

    def close(self):
        self.sock.close()


def check_echo(ws: WebSocket) -> None:
    """Text, a 300 KiB binary message and a close through port_server.py's
    /ws echo; closes ws."""
    try:
        ws.send("hello")
        assert ws.recv() == (1, b"hello")
        big = os.urandom(300 * 1024)
        ws.send(big)
        assert ws.recv() == (2, big)
        ws.send(b"bye", opcode=8)
        assert ws.recv()[0] == 8
    finally:
        ws.close()
