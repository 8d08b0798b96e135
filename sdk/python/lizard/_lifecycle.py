"""Pause/resume, waiting for a status, snapshots and restore (issue 5).

The Sandbox methods of the same names delegate here; this module holds the
waiting and retry logic so sandbox.py stays a list of calls.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Mapping, Optional

from . import errors
from ._http import Transport, quote_id
from .models import SandboxInfo, Snapshot

#: One long-poll asks the server to wait at most this long (its limit).
_POLL_MS = 60_000
#: Default for wait_for_status / wait_for_snapshot / restore(wait=True).
DEFAULT_WAIT_MS = 60_000


def _deadline(timeout_ms: Optional[float]) -> Optional[float]:
    return None if timeout_ms is None else time.monotonic() + timeout_ms / 1000.0


def _left_ms(deadline: Optional[float]) -> int:
    if deadline is None:
        return _POLL_MS
    return max(0, min(_POLL_MS, int((deadline - time.monotonic()) * 1000)))


def wait_for_status(t: Transport, sandbox_id: str, status: str,
                    timeout_ms: Optional[float]) -> str:
    """Long-poll until `status`; raise the transition's error or TimeoutError."""
    if not isinstance(status, str) or not status:
        raise errors.InvalidArgumentError("status must be a non-empty string")
    deadline = _deadline(timeout_ms)
    path = "/v1/sandboxes/%s/status" % quote_id(sandbox_id)
    while True:
        left = _left_ms(deadline)
        doc = t.request("GET", path, query={"wait": status, "timeoutMs": left},
                        timeout=left / 1000.0 + 30).json()
        if doc.get("reached"):
            return doc.get("status", status)
        err = doc.get("error")
        if isinstance(err, dict) and err.get("message"):
            raise errors.LizardError(err["message"], code=err.get("code"))
        if deadline is not None and time.monotonic() >= deadline:
            raise errors.TimeoutError(
                "sandbox %s did not reach %r within %s ms (it is %r)"
                % (sandbox_id, status, timeout_ms, doc.get("status")))


def snapshot(t: Transport, sandbox_id: str, name: str, pool_size: Optional[int]) -> Snapshot:
    body: Dict[str, Any] = {"name": name}
    if pool_size is not None:
        body["poolSize"] = pool_size
    doc = t.request("POST", "/v1/sandboxes/%s/snapshots" % quote_id(sandbox_id), json=body).json()
    return Snapshot(doc)


def get_snapshot(t: Transport, snapshot_id: str) -> Snapshot:
    return Snapshot(t.request("GET", "/v1/snapshots/" + quote_id(snapshot_id)).json())


def wait_for_snapshot(t: Transport, snapshot_id: str, timeout_ms: Optional[float]) -> Snapshot:
    """Poll until a restore can succeed: the snapshot is ready and, where the
    runtime keeps warm copies (no memory snapshot), one of them is ready.
    Raise LizardError if it failed, TimeoutError if slow."""
    deadline = _deadline(timeout_ms)
    delay = 0.02
    while True:
        s = get_snapshot(t, snapshot_id)
        if s.status == "ready" and (s.memory or not s.pool_size or s.pool_ready):
            return s
        if s.status == "failed":
            raise errors.LizardError("snapshot %s failed: %s" % (snapshot_id, s.error),
                                     code="snapshot_failed")
        if deadline is not None and time.monotonic() >= deadline:
            raise errors.TimeoutError("snapshot %s not ready within %s ms"
                                      % (snapshot_id, timeout_ms))
        time.sleep(delay)
        delay = min(delay * 2, 0.5)


def restore(t: Transport, snapshot_id: str, *, timeout_ms: Optional[int],
            metadata: Optional[Mapping[str, str]], env: Optional[Mapping[str, str]],
            wait: bool, wait_timeout_ms: Optional[float]) -> SandboxInfo:
    """A pooled copy; with `wait`, retry 503 (pool refilling) until the deadline."""
    body: Dict[str, Any] = {}
    if timeout_ms is not None:
        body["timeoutMs"] = int(timeout_ms)
    if metadata is not None:
        body["metadata"] = dict(metadata)
    if env is not None:
        body["env"] = dict(env)
    deadline = _deadline(wait_timeout_ms)
    path = "/v1/snapshots/%s/restore" % quote_id(snapshot_id)
    while True:
        try:
            return SandboxInfo(t.request("POST", path, json=body).json())
        except errors.UnavailableError as e:
            if not wait or (deadline is not None and time.monotonic() >= deadline):
                raise
            pause = e.retry_after if e.retry_after else 0.2
            if deadline is not None:
                pause = min(pause, max(0.0, deadline - time.monotonic()))
            time.sleep(min(pause, 0.2))


def list_snapshots(t: Transport, project: Optional[str]) -> List[Snapshot]:
    doc = t.request("GET", "/v1/snapshots", query={"project": project}).json()
    return [Snapshot(s) for s in doc.get("snapshots", [])]


def delete_snapshot(t: Transport, snapshot_id: str) -> bool:
    try:
        t.request("DELETE", "/v1/snapshots/" + quote_id(snapshot_id))
        return True
    except errors.NotFoundError:
        return False
