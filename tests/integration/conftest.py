"""Integration test harness: a real lizardd on a free port with a temporary
data dir, driven through the Python SDK, raw HTTP and the `lizard` CLI.

Run with Debian's pytest: `/usr/bin/python3 -m pytest -q tests/integration`
(or tests/run-integration.sh, which also builds the templates).

Environment knobs:
  LIZARD_BUILD_DIR           where lizardd/lizard are (default REPO/build)
  LIZARD_TEMPLATE_DIR        machine-wide template cache (default /var/lib/lizard/templates)
  LIZARD_TEST_INSTALLED_SDK  =1: import the pip-installed `lizard`, not sdk/python
  LIZARD_TEST_KEEP           =1: keep the data dir and daemon log after the run
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Sequence, Any, Callable, Dict, List, Optional, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LIZARD_BUILD_DIR", REPO / "build"))
LIZARDD = BUILD / "lizardd"
LIZARD_CLI = BUILD / "lizard"
TEMPLATE_DIR = Path(os.environ.get("LIZARD_TEMPLATE_DIR", "/var/lib/lizard/templates"))
# The writable layer of every sandbox of the test daemon. Small so the disk
# limit test can fill it quickly; large enough for the 20 MB file test.
TEST_DISK_MB = 256

if not os.environ.get("LIZARD_TEST_INSTALLED_SDK"):
    sys.path.insert(0, str(REPO / "sdk" / "python"))

import lizard  # noqa: E402  (after the sys.path choice above)


def pytest_report_header(config):
    return "lizard SDK: %s; lizardd: %s" % (lizard.__file__, LIZARDD)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unique(prefix: str) -> str:
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


class Daemon:
    """One lizardd process on a fixed port and data dir; can be killed -9 and
    restarted on the same data dir. With `tls` (a client context that trusts
    its certificate) it speaks HTTPS: `extra_args` then hold --tls-cert/--tls-key."""

    def __init__(self, data_dir: Path, port: int, extra_args: Sequence[str] = (),
                 tls: Optional[ssl.SSLContext] = None) -> None:
        self.extra_args = list(extra_args)
        self.data_dir = data_dir
        self.port = port
        self.tls = tls
        self.url = "%s://127.0.0.1:%d" % ("https" if tls else "http", port)
        self.proc: Optional[subprocess.Popen] = None
        self.admin_key = ""
        self.log_path = data_dir.parent / "lizardd.log"
        self.starts = 0

    def start(self, timeout: float = 60.0) -> None:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        env = dict(os.environ, LIZARD_TEMPLATE_DIR=str(TEMPLATE_DIR))
        log = open(self.log_path, "ab")
        log.write(b"\n===== start %d =====\n" % self.starts)
        log.flush()
        self.starts += 1
        self.proc = subprocess.Popen(
            [str(LIZARDD), "--listen", "127.0.0.1:%d" % self.port,
             "--data-dir", str(self.data_dir), "--template-dir", str(TEMPLATE_DIR),
             "--disk-mb", str(TEST_DISK_MB)] + self.extra_args,
            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("lizardd exited with %s during start-up:\n%s"
                                   % (self.proc.returncode, self.log_tail()))
            if self.healthy():
                break
            if time.monotonic() > deadline:
                raise RuntimeError("lizardd did not answer /healthz within %ss:\n%s"
                                   % (timeout, self.log_tail()))
            time.sleep(0.05)
        self.admin_key = (self.data_dir / "admin-key").read_text().strip()

    def conn(self, timeout: float = 60) -> http.client.HTTPConnection:
        if self.tls:
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                               context=self.tls)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def healthy(self) -> bool:
        try:
            c = self.conn(timeout=5)
            c.request("GET", "/healthz")
            r = c.getresponse()
            body = r.read()
            c.close()
            return r.status == 200 and json.loads(body).get("status") == "ok"
        except (OSError, http.client.HTTPException, ValueError):
            return False

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def restart(self) -> None:
        if self.alive():
            self.kill9()
        self.start()

    def stop(self) -> None:
        if not self.alive():
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)

    def log_tail(self, n: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"


@pytest.fixture(scope="session")
def daemon():
    for p in (LIZARDD, LIZARD_CLI):
        if not p.exists():
            pytest.fail("%s is missing: run `make` first" % p, pytrace=False)
    tmp = Path(tempfile.mkdtemp(prefix="lizard-it-"))
    data = tmp / "data"
    d = Daemon(data, free_port())
    d.start()
    old = {k: os.environ.get(k) for k in ("LIZARD_API_URL", "LIZARD_API_KEY")}
    os.environ["LIZARD_API_URL"] = d.url
    os.environ["LIZARD_API_KEY"] = d.admin_key
    try:
        yield d
    finally:
        stop_and_clean(d)
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if os.environ.get("LIZARD_TEST_KEEP"):
            print("kept %s" % tmp, file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def stop_and_clean(d: Daemon) -> None:
    """Kill what the tests left, then stop the daemon. Sandboxes outlive the
    daemon by design (so a restart finds them), hence the kills first."""
    if d.alive():
        try:
            adm = lizard.Lizard(api_url=d.url, api_key=d.admin_key)
            # Deleting a snapshot kills its warm pool (unlisted sandboxes).
            for snap in lizard.Sandbox.list_snapshots(api_url=d.url, api_key=d.admin_key):
                lizard.Sandbox.delete_snapshot(snap.id, api_url=d.url, api_key=d.admin_key)
            for sb in adm.list():
                adm.connect(sb.sandbox_id).kill()
        except lizard.LizardError as e:
            print("cleanup failed: %s" % e, file=sys.stderr)
    d.stop()


def require_template(name: str) -> None:
    if not (TEMPLATE_DIR / name / "meta.json").exists():
        pytest.fail("template %r is not built in %s: run `build/lizard template build %s`"
                    % (name, TEMPLATE_DIR, name), pytrace=False)


@pytest.fixture(scope="session")
def admin(daemon) -> "lizard.Lizard":
    return lizard.Lizard(api_url=daemon.url, api_key=daemon.admin_key)


@pytest.fixture(scope="session")
def project_named(admin) -> Callable[[str], "lizard.Project"]:
    """The project called NAME, created on first use: documented examples
    name fixed projects ("proj_123", "my-project") that several tests share."""
    def get(name: str) -> "lizard.Project":
        for p in admin.list_projects():
            if p.name == name:
                return p
        return admin.create_project(name)
    return get


class SandboxFactory:
    """Creates sandboxes and kills whatever is left at the end of its scope."""

    def __init__(self) -> None:
        self.made: List[lizard.Sandbox] = []

    def __call__(self, template: str = "tiny", **kw: Any) -> "lizard.Sandbox":
        require_template(template)
        kw.setdefault("timeout_ms", 600_000)
        sb = lizard.Sandbox.create(template, **kw)
        self.made.append(sb)
        return sb

    def cleanup(self) -> None:
        for sb in self.made:
            try:
                sb.kill()
            except lizard.LizardError:
                pass


@pytest.fixture
def make_sandbox(daemon):
    f = SandboxFactory()
    yield f
    f.cleanup()


def shared_sandbox(template: str):
    """One sandbox of `template` shared by a module's tests that do not disturb it."""
    f = SandboxFactory()
    yield f(template)
    f.cleanup()


@pytest.fixture(scope="module")
def tiny(daemon):
    yield from shared_sandbox("tiny")


@pytest.fixture(scope="module")
def base(daemon):
    """Debian + python3 + user."""
    yield from shared_sandbox("base")


@pytest.fixture(scope="module")
def interpreter(daemon):
    """base + python and the scientific stack."""
    yield from shared_sandbox("interpreter")


# ---- raw HTTP ----

class Raw:
    """Bare HTTP calls, for what the SDK would never send."""

    def __init__(self, daemon: Daemon) -> None:
        self.d = daemon

    def __call__(self, method: str, path: str, body: Any = None, *,
                 key: Optional[str] = "admin", headers: Optional[Dict[str, str]] = None,
                 ) -> Tuple[int, Dict[str, str], Any]:
        """Returns (status, headers, parsed JSON or raw bytes)."""
        h = dict(headers or {})
        if key == "admin":
            key = self.d.admin_key
        if key is not None:
            h.setdefault("Authorization", "Bearer " + key)
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
            h.setdefault("Content-Type", "application/json")
        if isinstance(body, str):
            body = body.encode()
        c = http.client.HTTPConnection("127.0.0.1", self.d.port, timeout=60)
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            data = r.read()
            hdrs = {k.lower(): v for k, v in r.getheaders()}
        finally:
            c.close()
        if hdrs.get("content-type", "").startswith("application/json") and data:
            return r.status, hdrs, json.loads(data)
        return r.status, hdrs, data


@pytest.fixture(scope="session")
def raw(daemon) -> Raw:
    return Raw(daemon)


def assert_error(status: int, body: Any, want_status: int, want_code: Optional[str] = None):
    """A JSON error answer {"error": {"code", "message"}} with the given status."""
    assert status == want_status, "got %d %r, want %d" % (status, body, want_status)
    assert isinstance(body, dict) and isinstance(body.get("error"), dict), body
    assert isinstance(body["error"].get("message"), str) and body["error"]["message"], body
    if want_code:
        assert body["error"].get("code") == want_code, body


# ---- CLI ----

@pytest.fixture(scope="session")
def cli(daemon) -> Callable[..., Tuple[int, str, str]]:
    def run(*args: str, key: Optional[str] = None, env: Optional[Dict[str, str]] = None,
            input: Optional[str] = None, timeout: float = 120) -> Tuple[int, str, str]:
        e = dict(os.environ)
        e["LIZARD_API_URL"] = daemon.url
        e["LIZARD_API_KEY"] = key if key is not None else daemon.admin_key
        e["LIZARD_TEMPLATE_DIR"] = str(TEMPLATE_DIR)
        if env:
            e.update(env)
        p = subprocess.run([str(LIZARD_CLI), *args], env=e, input=input, capture_output=True,
                           text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    return run


# ---- host-side inspection ----

def host_pids_with(marker: str) -> List[int]:
    """Host pids whose command line contains `marker`."""
    out = []
    me = os.getpid()
    for e in os.listdir("/proc"):
        if not e.isdigit() or int(e) == me:
            continue
        try:
            with open("/proc/%s/cmdline" % e, "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if marker.encode() in cmd:
            out.append(int(e))
    return out


def proc_status(pid: int) -> Dict[str, str]:
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


def wait_until(pred: Callable[[], Any], timeout: float, interval: float = 0.05) -> Any:
    """Poll `pred` until truthy (returned) or `timeout` seconds (returns the last value)."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() > deadline:
            return v
        time.sleep(interval)
