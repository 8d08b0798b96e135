"""``sandbox.process``: run commands, stream their output, manage background ones."""

from __future__ import annotations

import json as _json
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from . import errors
from ._http import quote_id
from .models import ExecResult, ProcessInfo, ProcessOutput

if TYPE_CHECKING:
    from .sandbox import Sandbox

#: What the server uses when an exec names no timeout.
SERVER_DEFAULT_EXEC_TIMEOUT_MS = 60_000
#: How much longer than the command's own limit the client waits for the
#: answer: the server needs a moment to kill the process group and reply.
_READ_MARGIN_S = 30.0

Command = Union[str, Sequence[str]]
OutputCallback = Callable[[str], Any]


def _read_timeout(timeout_ms: Optional[int]) -> Optional[float]:
    """Socket timeout for an exec: always longer than the command may run."""
    if timeout_ms is None:
        timeout_ms = SERVER_DEFAULT_EXEC_TIMEOUT_MS
    if timeout_ms == 0:
        return None  # the command may run forever; so may our wait
    return timeout_ms / 1000.0 + _READ_MARGIN_S


class ProcessHandle:
    """A background process started with ``exec_(..., background=True)``."""

    def __init__(self, process: "Process", pid: int) -> None:
        self._process = process
        self.pid = pid

    def output(self) -> ProcessOutput:
        return self._process.output(self.pid)

    def send_stdin(self, data: Union[str, bytes], eof: bool = False) -> int:
        return self._process.send_stdin(self.pid, data, eof=eof)

    def signal(self, signal: Union[int, str]) -> None:
        self._process.signal(self.pid, signal)

    def kill(self, signal: Union[int, str] = "SIGKILL") -> None:
        self._process.signal(self.pid, signal)

    def wait(self, timeout_ms: Optional[int] = None, poll_interval: float = 0.05) -> ProcessOutput:
        """Poll until the process exits; returns its final output.

        Raises ``lizard.TimeoutError`` if it still runs after `timeout_ms`.
        """
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000.0
        while True:
            out = self.output()
            if not out.running:
                return out
            if deadline is not None and time.monotonic() >= deadline:
                raise errors.TimeoutError("process %d still running after %d ms" % (self.pid, timeout_ms))
            time.sleep(poll_interval)

    def __repr__(self) -> str:
        return "ProcessHandle(pid=%d)" % self.pid


class Process:
    def __init__(self, sandbox: "Sandbox") -> None:
        self._sb = sandbox

    def _path(self, suffix: str = "") -> str:
        return "/v1/sandboxes/%s%s" % (quote_id(self._sb.sandbox_id), suffix)

    def exec_(
        self,
        cmd: Command,
        *,
        user: Optional[str] = None,
        cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
        timeout_ms: Optional[int] = None,
        stdin: Optional[Union[str, bytes]] = None,
        on_stdout: Optional[OutputCallback] = None,
        on_stderr: Optional[OutputCallback] = None,
        background: bool = False,
        max_output_bytes: Optional[int] = None,
    ) -> Any:
        """Run `cmd` and wait for it.

        A string runs through ``/bin/sh -c``; a list runs the program
        directly. Returns an :class:`ExecResult` (a non-zero exit code and
        a timeout are results, not errors). With `on_stdout`/`on_stderr`
        the output is streamed and each callback gets every chunk of text as
        it arrives; the result still holds the whole (capped) output. With
        `background=True` returns a :class:`ProcessHandle` at once.
        """
        body: Dict[str, Any] = {"cmd": _command(cmd)}
        if user is not None:
            body["user"] = user
        if cwd is not None:
            body["cwd"] = cwd
        if env is not None:
            body["env"] = dict(env)
        if timeout_ms is not None:
            body["timeoutMs"] = int(timeout_ms)
        if stdin is not None:
            body["stdin"] = stdin.decode("utf-8") if isinstance(stdin, bytes) else stdin
        if max_output_bytes is not None:
            body["maxOutputBytes"] = int(max_output_bytes)
        t = self._sb._t
        if background:
            if on_stdout or on_stderr:
                raise errors.InvalidArgumentError(
                    "background processes do not stream; read their output with output(pid)"
                )
            body["background"] = True
            doc = t.request("POST", self._path("/exec"), json=body).json()
            return ProcessHandle(self, int(doc["pid"]))
        timeout = _read_timeout(timeout_ms)
        if on_stdout is None and on_stderr is None:
            doc = t.request("POST", self._path("/exec"), json=body, timeout=timeout).json()
            return ExecResult(doc)
        return self._exec_stream(body, timeout, on_stdout, on_stderr)

    # `exec` is a Python 2 keyword only; as a method name it is fine.
    exec = exec_

    def _exec_stream(
        self,
        body: Dict[str, Any],
        timeout: Optional[float],
        on_stdout: Optional[OutputCallback],
        on_stderr: Optional[OutputCallback],
    ) -> ExecResult:
        resp = self._sb._t.request(
            "POST",
            self._path("/exec"),
            json=body,
            timeout=timeout,
            headers={"Accept": "application/x-ndjson"},
            stream=True,
        )
        out: List[str] = []
        err: List[str] = []
        final: Optional[Dict[str, Any]] = None
        try:
            for line in resp.iter_lines():
                ev = _json.loads(line)
                kind = ev.get("type")
                if kind == "stdout":
                    out.append(ev.get("data", ""))
                    if on_stdout:
                        on_stdout(ev.get("data", ""))
                elif kind == "stderr":
                    err.append(ev.get("data", ""))
                    if on_stderr:
                        on_stderr(ev.get("data", ""))
                elif kind == "exit":
                    final = ev
                elif kind == "error":
                    e = ev.get("error") or {}
                    code = e.get("code")
                    raise errors.error_for_status(
                        _STATUS_OF_CODE.get(code), e.get("message") or "exec failed", code
                    )
        finally:
            resp.close()
        if final is None:
            raise errors.APIConnectionError("the exec stream ended without an exit event")
        return ExecResult(
            stdout="".join(out),
            stderr="".join(err),
            exitCode=final.get("exitCode"),
            truncated=bool(final.get("truncated")),
            timedOut=bool(final.get("timedOut")),
        )

    def list(self) -> List[ProcessInfo]:
        """Background processes of the sandbox (running and finished)."""
        doc = self._sb._t.request("GET", self._path("/processes")).json()
        return [ProcessInfo(p) for p in doc.get("processes", [])]

    def signal(self, pid: int, signal: Union[int, str] = "SIGTERM") -> None:
        self._sb._t.request(
            "POST", self._path("/processes/%d/signal" % int(pid)), json={"signal": signal}
        )

    def kill(self, pid: int, signal: Union[int, str] = "SIGKILL") -> None:
        """Send `signal` (default SIGKILL) to a background process."""
        self.signal(pid, signal)

    def send_stdin(self, pid: int, data: Union[str, bytes], eof: bool = False) -> int:
        """Write text to a background process's stdin; `eof` closes it after."""
        if isinstance(data, bytes):
            data = data.decode("utf-8")
        doc = self._sb._t.request(
            "POST",
            self._path("/processes/%d/stdin" % int(pid)),
            json={"data": data, "eof": bool(eof)},
        ).json()
        return int(doc.get("written", len(data.encode())))

    def output(self, pid: int) -> ProcessOutput:
        """Output collected so far (capped like exec), whether it runs, its exit code."""
        doc = self._sb._t.request("GET", self._path("/processes/%d/output" % int(pid))).json()
        return ProcessOutput(doc)


_STATUS_OF_CODE = {
    "bad_request": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "too_large": 413,
    "rate_limited": 429,
    "unavailable": 503,
}


def _command(cmd: Command) -> Any:
    if isinstance(cmd, str):
        return cmd
    if isinstance(cmd, (bytes, bytearray)):
        raise errors.InvalidArgumentError("cmd must be str or a list of str, not bytes")
    argv = list(cmd)
    if not argv or not all(isinstance(a, str) for a in argv):
        raise errors.InvalidArgumentError("cmd as a list must be non-empty strings")
    return argv
