"""``sandbox.fs``: files inside the sandbox, streamed both ways."""

from __future__ import annotations

import io
import os
import stat as _stat
from typing import TYPE_CHECKING, Any, BinaryIO, Iterator, List, Optional, Tuple, Union

from . import errors
from ._http import BLOCK_SIZE, quote_id
from .models import FileInfo

if TYPE_CHECKING:
    from .sandbox import Sandbox

#: Socket timeout for file transfers: per read/write call, not for the whole
#: transfer, so large files are fine as long as bytes keep moving.
FILE_IO_TIMEOUT = 300.0

Data = Union[str, bytes, bytearray, memoryview, BinaryIO, Any]


class Filesystem:
    def __init__(self, sandbox: "Sandbox") -> None:
        self._sb = sandbox

    def _path(self, suffix: str = "") -> str:
        return "/v1/sandboxes/%s/files%s" % (quote_id(self._sb.sandbox_id), suffix)

    def write(
        self,
        path: str,
        data: Data,
        *,
        user: Optional[str] = None,
        mode: Optional[int] = None,
    ) -> FileInfo:
        """Write `data` (str as UTF-8, bytes, or a readable file object) to `path`.

        Parent directories are created; the file belongs to `user` (default
        root). A file object is streamed in blocks, never read whole.
        Returns ``{path, size}``.
        """
        body, length = _body(data)
        query = {"path": path, "user": user, "mode": None if mode is None else "%04o" % mode}
        r = self._sb._t.request(
            "PUT",
            self._path(),
            query=query,
            body=body,
            content_length=length,
            headers={"Content-Type": "application/octet-stream"},
            timeout=FILE_IO_TIMEOUT,
        )
        return FileInfo(r.json())

    def read(
        self, path: str, *, user: Optional[str] = None, encoding: str = "utf-8",
        errors: str = "strict",
    ) -> str:
        """The file's content as text."""
        return self.read_bytes(path, user=user).decode(encoding, errors)

    def read_bytes(self, path: str, *, user: Optional[str] = None) -> bytes:
        """The file's content as bytes."""
        r = self._sb._t.request(
            "GET", self._path(), query={"path": path, "user": user}, timeout=FILE_IO_TIMEOUT
        )
        return r.data

    def read_to(self, path: str, fileobj: BinaryIO, *, user: Optional[str] = None) -> int:
        """Stream the file into a writable binary file object; returns bytes copied."""
        n = 0
        for chunk in self.iter_bytes(path, user=user):
            fileobj.write(chunk)
            n += len(chunk)
        return n

    def iter_bytes(self, path: str, *, user: Optional[str] = None) -> Iterator[bytes]:
        """Yield the file's content in pieces as it arrives."""
        r = self._sb._t.request(
            "GET",
            self._path(),
            query={"path": path, "user": user},
            timeout=FILE_IO_TIMEOUT,
            stream=True,
        )
        try:
            yield from r.iter_chunks()
        finally:
            r.close()

    def list(self, path: str, *, user: Optional[str] = None) -> List[FileInfo]:
        doc = self._sb._t.request(
            "GET", self._path("/list"), query={"path": path, "user": user}
        ).json()
        return [FileInfo(e) for e in doc.get("entries", [])]

    def stat(self, path: str, *, user: Optional[str] = None) -> FileInfo:
        doc = self._sb._t.request(
            "GET", self._path("/stat"), query={"path": path, "user": user}
        ).json()
        return FileInfo(doc)

    def exists(self, path: str, *, user: Optional[str] = None) -> bool:
        try:
            self.stat(path, user=user)
            return True
        except errors.NotFoundError:
            return False

    def mkdir(self, path: str, *, user: Optional[str] = None) -> None:
        """``mkdir -p``."""
        body = {"path": path}
        if user is not None:
            body["user"] = user
        self._sb._t.request("POST", self._path("/mkdir"), json=body)

    def remove(self, path: str, *, recursive: bool = False, user: Optional[str] = None) -> None:
        query = {"path": path, "recursive": True if recursive else None, "user": user}
        self._sb._t.request("DELETE", self._path(), query=query)

    def rename(self, src: str, dst: str, *, user: Optional[str] = None) -> None:
        body = {"from": src, "to": dst}
        if user is not None:
            body["user"] = user
        self._sb._t.request("POST", self._path("/rename"), json=body)


def _body(data: Data) -> Tuple[Any, Optional[int]]:
    """(body, Content-Length or None for chunked) for a write."""
    if isinstance(data, str):
        return data.encode("utf-8"), None
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data) if isinstance(data, memoryview) else data, None
    if not hasattr(data, "read"):
        raise errors.InvalidArgumentError(
            "data must be str, bytes or a readable file object, not %s" % type(data).__name__
        )
    return _blocks(data), _remaining_size(data)


def _remaining_size(f: Any) -> Optional[int]:
    """Bytes left in a regular binary file, so it can go with a Content-Length."""
    if isinstance(f, io.TextIOBase):
        return None  # encoded size unknown until read
    try:
        st = os.fstat(f.fileno())
        if not _stat.S_ISREG(st.st_mode):
            return None
        return max(0, st.st_size - f.tell())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


def _blocks(f: Any) -> Iterator[bytes]:
    while True:
        b = f.read(BLOCK_SIZE)
        if not b:
            return
        if isinstance(b, str):
            b = b.encode("utf-8")
        yield b
