"""Sandbox handles and the project-scoped ``Lizard`` client."""

from __future__ import annotations

import datetime
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import errors
from ._http import Transport, quote_id
from .fs import Filesystem
from .models import ApiKey, ExposedPort, Project, SandboxInfo, Template
from .process import Process
from . import _lifecycle
from ._lifecycle import DEFAULT_WAIT_MS
from .models import Snapshot
from . import volume
from .volume import Volume, VolumeSpec, mount_requests

#: Lifetime the SDK asks for when the caller names none (SPEC: 5 minutes).
DEFAULT_TIMEOUT_MS = 300_000

#: A point in time for usage(): ISO 8601 text or a datetime.
TimeArg = Union[str, datetime.datetime]


class Sandbox:
    """One sandbox. Make it with :meth:`create` or :meth:`connect`.

    ``with Sandbox.create(...) as sandbox:`` kills it when the block ends.
    """

    def __init__(self, sandbox_id: str, transport: Transport,
                 info: Optional[SandboxInfo] = None) -> None:
        self.sandbox_id = sandbox_id
        self._t = transport
        self._info = info
        self.process = Process(self)
        self.fs = Filesystem(self)

    # ---- making handles ----

    @classmethod
    def create(
        cls,
        template: str = "base",
        *,
        project: Optional[str] = None,
        project_id: Optional[str] = None,
        timeout_ms: Optional[int] = DEFAULT_TIMEOUT_MS,
        size: Optional[str] = None,
        cpu_count: Optional[int] = None,
        memory_mb: Optional[int] = None,
        env: Optional[Mapping[str, str]] = None,
        metadata: Optional[Mapping[str, str]] = None,
        volumes: Optional[Sequence[VolumeSpec]] = None,
        api_key: Optional[str] = None,
        api_url: Optional[str] = None,
        request_timeout: Optional[float] = None,
    ) -> "Sandbox":
        """Start a sandbox from `template` and return its handle.

        `timeout_ms` is the sandbox's lifetime (default 5 minutes; 0 = no
        expiry); it is not the timeout of any command. `volumes` attaches
        volumes of the project: ``[{"volume": "data", "mountPath": "/workspace"}]``
        (a name, id or :class:`Volume`; mount path default ``/workspace``).
        """
        t = Transport(api_url, api_key, request_timeout=request_timeout)
        return cls._create(
            t, template, project=project, project_id=project_id, timeout_ms=timeout_ms,
            size=size, cpu_count=cpu_count, memory_mb=memory_mb, env=env, metadata=metadata,
            volumes=volumes,
        )

    @classmethod
    def _create(cls, t: Transport, template: str, *, project: Optional[str] = None,
                project_id: Optional[str] = None, timeout_ms: Optional[int] = DEFAULT_TIMEOUT_MS,
                size: Optional[str] = None, cpu_count: Optional[int] = None,
                memory_mb: Optional[int] = None, env: Optional[Mapping[str, str]] = None,
                metadata: Optional[Mapping[str, str]] = None,
                volumes: Optional[Sequence[VolumeSpec]] = None) -> "Sandbox":
        if project is not None and project_id is not None and project != project_id:
            raise errors.InvalidArgumentError("give project or project_id, not both")
        body: Dict[str, Any] = {"template": template}
        proj = project if project is not None else project_id
        if proj is not None:
            body["project"] = proj
        if timeout_ms is not None:
            body["timeoutMs"] = int(timeout_ms)
        for k, v in (("size", size), ("cpuCount", cpu_count), ("memoryMB", memory_mb)):
            if v is not None:
                body[k] = v
        if env is not None:
            body["env"] = dict(env)
        if metadata is not None:
            body["metadata"] = dict(metadata)
        if volumes is not None:
            body["volumes"] = mount_requests(volumes)
        info = SandboxInfo(t.request("POST", "/v1/sandboxes", json=body).json())
        return cls(info.sandbox_id, t, info)

    @classmethod
    def connect(cls, sandbox_id: str, *, api_key: Optional[str] = None,
                api_url: Optional[str] = None) -> "Sandbox":
        """A handle to an existing sandbox. Raises NotFoundError once it stopped.

        Does not resume a paused sandbox.
        """
        t = Transport(api_url, api_key)
        return cls._connect(t, sandbox_id)

    @classmethod
    def _connect(cls, t: Transport, sandbox_id: str) -> "Sandbox":
        info = SandboxInfo(t.request("GET", "/v1/sandboxes/" + quote_id(sandbox_id)).json())
        return cls(info.sandbox_id or sandbox_id, t, info)

    @classmethod
    def list(cls, *, project: Optional[str] = None, status: Optional[str] = None,
             api_key: Optional[str] = None, api_url: Optional[str] = None) -> List[SandboxInfo]:
        """Running and paused sandboxes the key may see (its project's; admin: any)."""
        return _list(Transport(api_url, api_key), project, status)

    # ---- this sandbox ----

    def _path(self, suffix: str = "") -> str:
        return "/v1/sandboxes/%s%s" % (quote_id(self.sandbox_id), suffix)

    def get_info(self) -> SandboxInfo:
        self._info = SandboxInfo(self._t.request("GET", self._path()).json())
        return self._info

    def is_running(self) -> bool:
        try:
            return self.get_info().status == "running"
        except errors.NotFoundError:
            return False

    def set_timeout(self, timeout_ms: int) -> SandboxInfo:
        """New lifetime counted from now (0 = no expiry)."""
        self._info = SandboxInfo(
            self._t.request("POST", self._path("/timeout"), json={"timeoutMs": int(timeout_ms)}).json()
        )
        return self._info

    def expose_port(self, port: int) -> ExposedPort:
        """Make a server listening on 0.0.0.0:`port` in the sandbox reachable.

        Returns ``.url`` (with the access token), ``.hostname`` and
        ``.access_token``. Needs a server with the port proxy (issue 4).
        """
        doc = self._t.request("POST", self._path("/ports"), json={"port": int(port)}).json()
        return ExposedPort(doc)

    # ---- pause, resume, snapshots ----

    def pause(self) -> None:
        """Queue a pause (returns at once); then ``wait_for_status("paused")``."""
        self._t.request("POST", self._path("/pause"))

    def resume(self) -> None:
        """Queue a resume (also retries a failed one); then ``wait_for_status("running")``."""
        self._t.request("POST", self._path("/resume"))

    def wait_for_status(self, status: str, timeout_ms: Optional[float] = DEFAULT_WAIT_MS) -> str:
        """Wait until the sandbox has `status` ("paused", "running", ...).

        Raises LizardError with the reason when the pause/resume failed,
        TimeoutError when `status` was not reached in `timeout_ms` (None: no limit).
        """
        return _lifecycle.wait_for_status(self._t, self.sandbox_id, status, timeout_ms)

    def snapshot(self, name: str, pool_size: Optional[int] = None) -> Snapshot:
        """Save this sandbox's files as project template `name` (``.id``; ready later:
        :meth:`wait_for_snapshot`). `pool_size` (1-10, server default 5) ready copies
        are kept for :meth:`restore`."""
        return _lifecycle.snapshot(self._t, self.sandbox_id, name, pool_size)

    @classmethod
    def wait_for_snapshot(cls, snapshot_id: str, timeout_ms: Optional[float] = DEFAULT_WAIT_MS,
                          *, api_key: Optional[str] = None,
                          api_url: Optional[str] = None) -> Snapshot:
        """Wait until the snapshot is ready (raises LizardError if it failed)."""
        return _lifecycle.wait_for_snapshot(Transport(api_url, api_key), snapshot_id, timeout_ms)

    @classmethod
    def restore(cls, snapshot_id: str, *, timeout_ms: Optional[int] = DEFAULT_TIMEOUT_MS,
                metadata: Optional[Mapping[str, str]] = None,
                env: Optional[Mapping[str, str]] = None, wait: bool = False,
                wait_timeout_ms: Optional[float] = DEFAULT_WAIT_MS,
                api_key: Optional[str] = None, api_url: Optional[str] = None) -> "Sandbox":
        """A new sandbox from a snapshot (a ready copy from its pool).

        With no ready copy the server answers 503: raises UnavailableError,
        or with ``wait=True`` retries until `wait_timeout_ms`.
        """
        t = Transport(api_url, api_key)
        info = _lifecycle.restore(t, snapshot_id, timeout_ms=timeout_ms, metadata=metadata,
                                  env=env, wait=wait, wait_timeout_ms=wait_timeout_ms)
        return cls(info.sandbox_id, t, info)

    @classmethod
    def get_snapshot(cls, snapshot_id: str, *, api_key: Optional[str] = None,
                     api_url: Optional[str] = None) -> Snapshot:
        return _lifecycle.get_snapshot(Transport(api_url, api_key), snapshot_id)

    @classmethod
    def list_snapshots(cls, *, project: Optional[str] = None, api_key: Optional[str] = None,
                       api_url: Optional[str] = None) -> List[Snapshot]:
        return _lifecycle.list_snapshots(Transport(api_url, api_key), project)

    @classmethod
    def delete_snapshot(cls, snapshot_id: str, *, api_key: Optional[str] = None,
                        api_url: Optional[str] = None) -> bool:
        """Delete a snapshot and its pooled copies; restored sandboxes keep working.
        False if it did not exist."""
        return _lifecycle.delete_snapshot(Transport(api_url, api_key), snapshot_id)

    def kill(self) -> bool:
        """Stop the sandbox now. True if it was killed, False if it was already gone."""
        try:
            self._t.request("DELETE", self._path())
            return True
        except errors.NotFoundError:
            return False

    def close(self) -> None:
        """Close the keep-alive connection (the sandbox keeps running)."""
        self._t.close()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.kill()
        finally:
            self._t.close()

    def __repr__(self) -> str:
        return "Sandbox(sandbox_id=%r)" % self.sandbox_id


class Lizard:
    """A client bound to one key, server and (optionally) project.

    ``Lizard(project="my-project").create("base", timeout_ms=120_000)``.
    Also holds the admin calls (projects, keys).
    """

    def __init__(self, project: Optional[str] = None, *, api_key: Optional[str] = None,
                 api_url: Optional[str] = None, request_timeout: Optional[float] = None) -> None:
        self.project = project
        self._t = Transport(api_url, api_key, request_timeout=request_timeout)

    @property
    def api_url(self) -> str:
        return self._t.api_url

    def create(self, template: str = "base", **opts: Any) -> Sandbox:
        """Like :meth:`Sandbox.create`, in this client's project."""
        if self.project is not None and "project" not in opts and "project_id" not in opts:
            opts["project"] = self.project
        return Sandbox._create(self._t, template, **opts)

    def connect(self, sandbox_id: str) -> Sandbox:
        return Sandbox._connect(self._t, sandbox_id)

    def list(self, *, status: Optional[str] = None) -> List[SandboxInfo]:
        return _list(self._t, self.project, status)

    # ---- volumes (in this client's project) ----

    def create_volume(self, name: str, size_mb: int) -> Volume:
        return volume._create(self._t, name, size_mb, self.project)

    def list_volumes(self) -> List[Volume]:
        return volume._list(self._t, self.project)

    def get_volume(self, volume_ref: str) -> Volume:
        """By id or name."""
        return volume._get(self._t, volume_ref, self.project)

    def delete_volume(self, volume_ref: str) -> None:
        """ConflictError while a sandbox has it attached."""
        volume._delete(self._t, volume_ref, self.project)

    def templates(self) -> List[Template]:
        doc = self._t.request("GET", "/v1/templates").json()
        return [Template(x) for x in doc.get("templates", [])]

    def usage(self, *, project: Optional[str] = None, from_: Optional[TimeArg] = None,
              to: Optional[TimeArg] = None) -> Dict[str, Any]:
        """Metering (GET /v1/usage): compute seconds, volume GB-months and cost
        per project over [from_, to) (default: this calendar month so far).
        Times are ISO 8601 strings or datetimes (naive ones are UTC). A project
        key sees its own project; the admin key every project, or ``project``."""
        q = {"project": project or self.project, "from": _iso(from_), "to": _iso(to)}
        return self._t.request("GET", "/v1/usage", query=q).json()

    # ---- admin ----

    def create_project(self, name: str, slug: Optional[str] = None) -> Project:
        body = {"name": name}
        if slug is not None:
            body["slug"] = slug
        return Project(self._t.request("POST", "/v1/projects", json=body).json())

    def list_projects(self) -> List[Project]:
        doc = self._t.request("GET", "/v1/projects").json()
        return [Project(p) for p in doc.get("projects", [])]

    def create_key(self, name: str, *, project: Optional[str] = None, admin: bool = False) -> ApiKey:
        """A new API key; its secret (``.key``) is shown only in this answer."""
        body: Dict[str, Any] = {"name": name}
        if project is not None:
            body["project"] = project
        if admin:
            body["admin"] = True
        return ApiKey(self._t.request("POST", "/v1/keys", json=body).json())

    def list_keys(self) -> List[ApiKey]:
        doc = self._t.request("GET", "/v1/keys").json()
        return [ApiKey(k) for k in doc.get("keys", [])]

    def delete_key(self, key_id: str) -> None:
        self._t.request("DELETE", "/v1/keys/" + quote_id(key_id))

    def close(self) -> None:
        self._t.close()

    def __enter__(self) -> "Lizard":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _iso(t: Optional[TimeArg]) -> Optional[str]:
    if t is None or isinstance(t, str):
        return t
    if t.tzinfo is not None:
        t = t.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return t.isoformat(timespec="milliseconds") + "Z"


def _list(t: Transport, project: Optional[str], status: Optional[str]) -> List[SandboxInfo]:
    doc = t.request("GET", "/v1/sandboxes", query={"project": project, "status": status}).json()
    return [SandboxInfo(s) for s in doc.get("sandboxes", [])]
