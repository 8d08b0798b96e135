"""Persistent volumes: storage that outlives sandboxes.

    from lizard import Sandbox, Volume

    vol = Volume.create("data", size_mb=1024)
    with Sandbox.create("base", volumes=[{"volume": "data", "mountPath": "/workspace"}]) as sb:
        sb.fs.write("/workspace/notes.txt", "kept")

A volume is attached to at most one running sandbox at a time; it is free
again once that sandbox is killed or expires.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import errors
from ._http import Transport, quote_id
from .models import Record

#: Where a volume appears when no mount path is given.
DEFAULT_MOUNT_PATH = "/workspace"


class Volume(Record):
    """One volume: ``.id .name .project .size_mb .created_at .attached_to``."""

    _fields = ("id", "name", "project", "size_mb", "created_at", "attached_to")

    def __init__(self, data: Optional[Mapping[str, Any]] = None,
                 transport: Optional[Transport] = None, **kw: Any) -> None:
        super().__init__(data, **kw)
        object.__setattr__(self, "_t", transport)

    @classmethod
    def create(cls, name: str, size_mb: int, *, project: Optional[str] = None,
               api_key: Optional[str] = None, api_url: Optional[str] = None) -> "Volume":
        """A new, empty volume of `size_mb` megabytes (1 .. 1048576)."""
        return _create(Transport(api_url, api_key), name, size_mb, project)

    @classmethod
    def list(cls, *, project: Optional[str] = None, api_key: Optional[str] = None,
             api_url: Optional[str] = None) -> List["Volume"]:
        return _list(Transport(api_url, api_key), project)

    @classmethod
    def get(cls, volume: str, *, project: Optional[str] = None, api_key: Optional[str] = None,
            api_url: Optional[str] = None) -> "Volume":
        """By id or name. Raises NotFoundError."""
        return _get(Transport(api_url, api_key), volume, project)

    def delete(self) -> None:
        """Delete it and its data. ConflictError while a sandbox has it attached."""
        _delete(self._t or Transport(), self.id)


VolumeSpec = Union[str, Volume, Mapping[str, Any]]


def mount_request(v: VolumeSpec) -> Dict[str, Any]:
    """One entry of a create's ``volumes``: ``"data"``, a Volume, or
    ``{"volume": "data" | Volume, "mountPath" | "mount_path": "/path"}``."""
    if isinstance(v, Volume):
        return {"volume": v.id}
    if isinstance(v, str):
        return {"volume": v}
    if isinstance(v, Mapping):
        ref = v.get("volume")
        if isinstance(ref, Volume):
            ref = ref.id
        out: Dict[str, Any] = {"volume": ref}
        path = v.get("mountPath", v.get("mount_path"))
        if path is not None:
            out["mountPath"] = path
        return out
    raise errors.InvalidArgumentError(
        "a volume is a name, a Volume or {'volume': ..., 'mountPath': ...}, not %r" % (v,))


def mount_requests(volumes: Sequence[VolumeSpec]) -> List[Dict[str, Any]]:
    if isinstance(volumes, (str, Mapping, Volume)):
        volumes = [volumes]
    return [mount_request(v) for v in volumes]


def _create(t: Transport, name: str, size_mb: int, project: Optional[str]) -> Volume:
    body: Dict[str, Any] = {"name": name, "sizeMB": size_mb}
    if project is not None:
        body["project"] = project
    return Volume(t.request("POST", "/v1/volumes", json=body).json(), t)


def _list(t: Transport, project: Optional[str]) -> List[Volume]:
    doc = t.request("GET", "/v1/volumes", query={"project": project}).json()
    return [Volume(v, t) for v in doc.get("volumes", [])]


def _get(t: Transport, ref: str, project: Optional[str]) -> Volume:
    return Volume(t.request("GET", "/v1/volumes/" + quote_id(ref),
                            query={"project": project}).json(), t)


def _delete(t: Transport, ref: str, project: Optional[str] = None) -> None:
    t.request("DELETE", "/v1/volumes/" + quote_id(ref), query={"project": project})
