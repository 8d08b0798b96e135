"""Small result objects: attribute access in snake_case, item access by the
server's camelCase key or the snake_case name, readable repr, ``to_dict()``."""

from __future__ import annotations

import re
from typing import Any, Dict, Iterator, Mapping, Optional

__all__ = [
    "Record",
    "SandboxInfo",
    "ExecResult",
    "ProcessInfo",
    "ProcessOutput",
    "FileInfo",
    "ExposedPort",
    "Project",
    "ApiKey",
    "Template",
    "Snapshot",
]

_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake(name: str) -> str:
    """sandboxId -> sandbox_id, memoryMB -> memory_mb."""
    return _CAMEL.sub(r"_\1", name).lower()


class Record(Mapping[str, Any]):
    """A read-only view of one JSON object from the server.

    ``rec.sandbox_id``, ``rec["sandboxId"]`` and ``rec["sandbox_id"]`` are the
    same value. Iterating yields the server's keys, so ``dict(rec)`` is the
    original JSON object.
    """

    _fields: tuple = ()  # shown first in repr and always present as attributes

    def __init__(self, data: Optional[Mapping[str, Any]] = None, **kw: Any) -> None:
        raw: Dict[str, Any] = dict(data or {})
        raw.update(kw)
        object.__setattr__(self, "_raw", raw)
        object.__setattr__(self, "_snake", {snake(k): k for k in raw})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        key = self._snake.get(name)
        if key is not None:
            return self._raw[key]
        if name in self._fields:
            return None
        raise AttributeError("%s has no field %r" % (type(self).__name__, name))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("%s is read-only" % type(self).__name__)

    def __getitem__(self, key: str) -> Any:
        if key in self._raw:
            return self._raw[key]
        k = self._snake.get(key)
        if k is not None:
            return self._raw[k]
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Record):
            return self._raw == other._raw
        if isinstance(other, Mapping):
            return self._raw == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> Dict[str, Any]:
        """The server's JSON object (camelCase keys)."""
        return dict(self._raw)

    def __repr__(self) -> str:
        keys = [snake(k) for k in self._raw]
        order = [f for f in self._fields if f in keys] + [k for k in keys if k not in self._fields]
        inner = ", ".join("%s=%r" % (k, self._raw[self._snake[k]]) for k in order)
        return "%s(%s)" % (type(self).__name__, inner)

    def __dir__(self):  # helps tab completion
        return sorted(set(super().__dir__()) | set(self._snake) | set(self._fields))


class SandboxInfo(Record):
    """What ``get_info()`` returns."""

    _fields = (
        "sandbox_id",
        "project",
        "template",
        "status",
        "runtime",
        "size",
        "cpu_count",
        "memory_mb",
        "disk_mb",
        "region",
        "host",
        "created_at",
        "expires_at",
        "metadata",
        "env_keys",
    )


class ExecResult(Record):
    """Result of a finished command. A non-zero exit code is a result."""

    _fields = ("stdout", "stderr", "exit_code", "truncated", "timed_out")

    def __init__(self, data: Optional[Mapping[str, Any]] = None, **kw: Any) -> None:
        base = {"stdout": "", "stderr": "", "exitCode": None, "truncated": False,
                "timedOut": False}
        base.update(data or {})
        base.update(kw)
        super().__init__(base)

    @property
    def ok(self) -> bool:
        """exit_code == 0 and the command did not time out."""
        return self.exit_code == 0 and not self.timed_out


class ProcessInfo(Record):
    _fields = ("pid", "cmd", "running", "exit_code", "started_at")


class ProcessOutput(Record):
    _fields = ("stdout", "stderr", "running", "exit_code", "truncated")


class FileInfo(Record):
    """A stat result: name, path, type ("file"|"dir"|"symlink"|...), size, mode, uid, gid, mtime."""

    _fields = ("name", "path", "type", "size", "mode", "uid", "gid", "mtime", "target")

    @property
    def is_dir(self) -> bool:
        return self.type in ("dir", "directory")


class ExposedPort(Record):
    _fields = ("port", "url", "hostname", "access_token")


class Project(Record):
    _fields = ("id", "name", "slug", "created_at")


class ApiKey(Record):
    _fields = ("id", "name", "project", "admin", "key", "prefix", "created_at")


class Template(Record):
    _fields = ("name", "size_bytes", "built_at", "build_seconds", "description")


class Snapshot(Record):
    """A saved sandbox (files only on the container runtime: ``memory`` False)."""

    _fields = ("id", "name", "project", "status", "error", "memory", "pool_size", "pool_ready",
               "size_bytes", "size", "cpu_count", "memory_mb", "source_sandbox_id", "created_at")
