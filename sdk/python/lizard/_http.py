"""HTTP transport: http.client with keep-alive, typed errors, safe retries.

One connection per thread (http.client connections are not thread safe), kept
alive between calls. Retries are limited to what cannot run a request twice:
a failure while *connecting* (nothing was sent) is retried for every method,
a failure after sending only for GET and DELETE, which are idempotent.
"""

from __future__ import annotations

import http.client
import json as _json
import os
import select
import socket
import ssl
import threading
import time
import urllib.parse
from typing import Any, Dict, Iterable, Iterator, Mapping, Optional, Tuple, Union

from . import errors
from .errors import APIConnectionError, AuthenticationError, LizardError, error_for_status

DEFAULT_API_URL = "http://127.0.0.1:7400"
#: Socket timeout for ordinary calls (seconds). Exec and file calls compute their own.
DEFAULT_REQUEST_TIMEOUT = 60.0
_USER_AGENT = "lizard-sdk-python/0.1.0"
_IDEMPOTENT = frozenset({"GET", "HEAD", "DELETE"})
_RETRIES = 3
#: Bytes per read/write when streaming bodies: large enough that a 64 MiB
#: transfer is not dominated by per-call overhead.
BLOCK_SIZE = 256 * 1024

# Failures after which the connection is unusable.
_CONN_ERRORS = (
    http.client.RemoteDisconnected,
    http.client.BadStatusLine,
    http.client.IncompleteRead,
    ConnectionError,  # refused, reset, aborted, broken pipe
    ssl.SSLError,
)

Body = Union[None, bytes, Iterable[bytes]]


def _env_url(api_url: Optional[str]) -> str:
    return api_url or os.environ.get("LIZARD_API_URL") or DEFAULT_API_URL


def _env_key(api_key: Optional[str]) -> Optional[str]:
    return api_key or os.environ.get("LIZARD_API_KEY") or None


class Transport:
    """A configured client of one Lizard server with one API key."""

    def __init__(
        self,
        api_url: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        request_timeout: Optional[float] = None,
    ) -> None:
        self.api_url = _env_url(api_url).rstrip("/")
        self.api_key = _env_key(api_key)
        self.request_timeout = (
            DEFAULT_REQUEST_TIMEOUT if request_timeout is None else request_timeout
        )
        u = urllib.parse.urlsplit(self.api_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise errors.InvalidArgumentError(
                "LIZARD_API_URL must be http(s)://HOST[:PORT][/PREFIX], got %r" % self.api_url
            )
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port or (443 if self._https else 80)
        self._prefix = u.path.rstrip("/")
        self._ssl = _ssl_context() if self._https else None
        self._local = threading.local()

    # ---- connections ----

    def _new_conn(self, timeout: Optional[float]) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(
                self._host, self._port, timeout=timeout, blocksize=BLOCK_SIZE, context=self._ssl
            )
        return http.client.HTTPConnection(
            self._host, self._port, timeout=timeout, blocksize=BLOCK_SIZE
        )

    def _conn(self, timeout: Optional[float]) -> Tuple[http.client.HTTPConnection, bool]:
        """The thread's connection (reused, True) or a fresh one (False)."""
        c = getattr(self._local, "conn", None)
        if c is not None and (c.sock is None or _peer_closed(c.sock)):
            # The server closed an idle keep-alive connection. Checking
            # before sending is what makes reuse safe for POST: otherwise the
            # request would fail half-way and could not be retried.
            c.close()
            c = None
        if c is None:
            c = self._new_conn(timeout)
            self._local.conn = c
            return c, False
        c.timeout = timeout
        c.sock.settimeout(timeout)
        return c, True

    def _drop_conn(self) -> None:
        c = getattr(self._local, "conn", None)
        self._local.conn = None
        if c is not None:
            c.close()

    def close(self) -> None:
        """Close this thread's keep-alive connection."""
        self._drop_conn()

    # ---- requests ----

    def url_path(self, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
        full = self._prefix + path
        if query:
            q = {k: _query_value(v) for k, v in query.items() if v is not None}
            if q:
                full += "?" + urllib.parse.urlencode(q, quote_via=urllib.parse.quote)
        return full

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        json: Any = None,
        body: Body = None,
        content_length: Optional[int] = None,
        headers: Optional[Mapping[str, str]] = None,
        timeout: Union[float, None, str] = "default",
        stream: bool = False,
        auth: bool = True,
    ) -> "Response":
        """Send a request and return its response (status < 400).

        `timeout` is the socket timeout in seconds (None = wait forever).
        With `stream`, the caller reads the body from the returned response
        and must close it; otherwise the body is read here.
        Raises the typed error of the server's answer for status >= 400.
        """
        if timeout == "default":
            timeout = self.request_timeout
        hdrs = {"User-Agent": _USER_AGENT, "Accept": "application/json"}
        if auth:
            if not self.api_key:
                raise AuthenticationError(
                    "no API key: set LIZARD_API_KEY or pass api_key=", status=None
                )
            hdrs["Authorization"] = "Bearer " + self.api_key
        if json is not None:
            body = _json.dumps(json, separators=(",", ":")).encode()
            hdrs["Content-Type"] = "application/json"
        elif method in ("POST", "PUT") and body is None:
            body = b""
        if isinstance(body, (bytes, bytearray, memoryview)):
            content_length = len(body)
        if content_length is not None:
            hdrs["Content-Length"] = str(content_length)
        elif body is not None:
            hdrs["Transfer-Encoding"] = "chunked"
        if headers:
            hdrs.update(headers)
        target = self.url_path(path, query)
        # A streamed body (an iterator) can be sent only once.
        replayable = body is None or isinstance(body, (bytes, bytearray, memoryview))

        attempt = 0
        while True:
            attempt += 1
            conn, reused = self._conn(timeout)  # type: ignore[arg-type]
            sent = False
            try:
                if conn.sock is None:
                    conn.connect()
                sent = True
                conn.request(
                    method,
                    target,
                    body=body,
                    headers=hdrs,
                    encode_chunked=content_length is None and body is not None,
                )
                resp = conn.getresponse()
            except socket.timeout as e:
                self._drop_conn()
                raise errors.TimeoutError(
                    "%s %s: no answer within %ss" % (method, path, timeout)
                ) from e
            except _CONN_ERRORS as e:
                self._drop_conn()
                retry_ok = replayable and (not sent or method in _IDEMPOTENT)
                if retry_ok and attempt < _RETRIES:
                    time.sleep(0.05 * attempt)
                    continue
                raise APIConnectionError(
                    "%s %s: cannot reach %s: %s" % (method, path, self.api_url, e)
                ) from e
            except OSError as e:  # DNS failure, unreachable network, ...
                self._drop_conn()
                raise APIConnectionError(
                    "%s %s: cannot reach %s: %s" % (method, path, self.api_url, e)
                ) from e
            r = Response(self, resp, conn)
            if resp.status >= 400:
                raise r.error()
            if stream:
                # The stream owns the connection until it is read to the end,
                # so calls made meanwhile (e.g. from an output callback) on
                # this thread open their own connection instead of writing
                # into the middle of this response.
                self._local.conn = None
            else:
                r.read_all()
            return r


class Response:
    """A response whose body is read from the thread's connection."""

    def __init__(
        self, transport: Transport, resp: http.client.HTTPResponse,
        conn: http.client.HTTPConnection,
    ) -> None:
        self._t = transport
        self._conn = conn
        self.raw = resp
        self.status = resp.status
        self.headers = resp.headers
        self.data = b""
        self._done = False

    def read_all(self) -> bytes:
        try:
            self.data = self.raw.read()
        except socket.timeout as e:
            self._abandon()
            raise errors.TimeoutError("timed out reading the server's answer") from e
        except _CONN_ERRORS as e:
            self._abandon()
            raise APIConnectionError("connection lost while reading: %s" % e) from e
        self._finish()
        return self.data

    def json(self) -> Any:
        if not self.data:
            return {}
        try:
            return _json.loads(self.data)
        except ValueError as e:
            raise LizardError(
                "server answered invalid JSON (HTTP %d)" % self.status, status=self.status
            ) from e

    def iter_chunks(self, size: int = BLOCK_SIZE) -> Iterator[bytes]:
        """Yield the body in pieces (for streamed responses)."""
        def pieces() -> Iterator[bytes]:
            while True:
                b = self.raw.read1(size) if hasattr(self.raw, "read1") else self.raw.read(size)
                if not b:
                    return
                yield b
        return self._guarded(pieces(), "timed out reading the server's answer",
                             "connection lost while reading")

    def iter_lines(self) -> Iterator[bytes]:
        """Yield body lines (NDJSON), each without its newline."""
        def lines() -> Iterator[bytes]:
            while True:
                line = self.raw.readline()
                if not line:
                    return
                line = line.rstrip(b"\r\n")
                if line:
                    yield line
        return self._guarded(lines(), "timed out waiting for the command's output",
                             "connection lost while streaming")

    def _guarded(self, items: Iterator[bytes], timeout_msg: str,
                 lost_msg: str) -> Iterator[bytes]:
        """Pass items through; map transport failures to SDK errors and keep
        the connection only when the body was read to its end."""
        try:
            yield from items
        except socket.timeout as e:
            self._abandon()
            raise errors.TimeoutError(timeout_msg) from e
        except _CONN_ERRORS as e:
            self._abandon()
            raise APIConnectionError("%s: %s" % (lost_msg, e)) from e
        except BaseException:
            # The caller's callback raised or the generator was dropped: the
            # rest of the stream is still in flight, so the connection cannot
            # be reused.
            self._abandon()
            raise
        self._finish()

    def close(self) -> None:
        if not self._done:
            self._abandon()

    def _finish(self) -> None:
        """Body read to the end: the connection may serve the next call."""
        self._done = True
        local = self._t._local
        current = getattr(local, "conn", None)
        if self.raw.will_close:
            self._conn.close()
            if current is self._conn:
                local.conn = None
        elif current is None:
            local.conn = self._conn  # a stream gives its connection back
        elif current is not self._conn:
            self._conn.close()  # another call opened one meanwhile; keep that

    def _abandon(self) -> None:
        """Body not read to the end: the connection cannot be reused."""
        self._done = True
        self._conn.close()
        if getattr(self._t._local, "conn", None) is self._conn:
            self._t._local.conn = None

    def error(self) -> LizardError:
        try:
            raw = self.raw.read()
            self._finish()
        except (OSError, http.client.HTTPException):
            raw = b""
            self._abandon()
        code = None
        message = ""
        try:
            doc = _json.loads(raw) if raw else None
            err = doc.get("error") if isinstance(doc, dict) else None
            if isinstance(err, dict):
                code = err.get("code")
                message = err.get("message") or ""
            elif isinstance(err, str):
                message = err
        except ValueError:
            message = raw.decode("utf-8", "replace").strip()[:500]
        if not message:
            message = "HTTP %d %s" % (self.status, self.raw.reason)
        retry_after = None
        ra = self.headers.get("Retry-After")
        if ra:
            try:
                retry_after = float(ra)
            except ValueError:
                pass
        return error_for_status(self.status, message, code, retry_after)


def _ssl_context() -> ssl.SSLContext:
    """The system's trust (which honours SSL_CERT_FILE / SSL_CERT_DIR) plus the
    PEM certificates in LIZARD_CA_FILE, if set: the CA of a lizardd with its
    own certificate (like Node's NODE_EXTRA_CA_CERTS)."""
    ctx = ssl.create_default_context()
    ca = os.environ.get("LIZARD_CA_FILE")
    if ca:
        try:
            ctx.load_verify_locations(cafile=ca)
        except (OSError, ssl.SSLError) as e:
            raise errors.InvalidArgumentError("LIZARD_CA_FILE=%s: %s" % (ca, e)) from e
    return ctx


def _peer_closed(sock: socket.socket) -> bool:
    """True if an idle connection was closed by the server (or has junk)."""
    try:
        r, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    # An idle keep-alive connection is readable only at EOF or error.
    return bool(r)


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def quote_id(s: str) -> str:
    """An id as one path segment (no '/' or '..' tricks)."""
    if not isinstance(s, str) or not s:
        raise errors.InvalidArgumentError("id must be a non-empty string")
    return urllib.parse.quote(s, safe="")


def headers_dict(h: Any) -> Dict[str, str]:
    return {k: v for k, v in h.items()}
