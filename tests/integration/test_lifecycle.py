"""Lifetimes, info, connect, list, and durability across a kill -9 of lizardd."""

import datetime as dt
import re
import time

import lizard
import pytest

from conftest import host_pids_with, unique, wait_until

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def parse_iso(s: str) -> float:
    return dt.datetime.strptime(s.replace("Z", "+0000"),
                                "%Y-%m-%dT%H:%M:%S.%f%z" if "." in s else
                                "%Y-%m-%dT%H:%M:%S%z").timestamp()


def gone(sid: str) -> bool:
    try:
        lizard.Sandbox.connect(sid)
        return False
    except lizard.NotFoundError:
        return True


def test_info_fields(make_sandbox):
    sb = make_sandbox("tiny", timeout_ms=120_000, metadata={"purpose": "test", "n": "1"})
    c = lizard.Sandbox.connect(sb.sandbox_id)
    info = c.get_info()
    assert info.sandbox_id == sb.sandbox_id == info["sandboxId"]
    assert info.project  # the admin key acts on project `default`
    assert info.template == "tiny"
    assert info.status == "running"
    assert info.runtime == "container"
    assert info.cpu_count == 4 and info.memory_mb == 4096  # template defaults
    assert ISO.match(info.created_at) and ISO.match(info.expires_at)
    lifetime = parse_iso(info.expires_at) - parse_iso(info.created_at)
    assert abs(lifetime - 120) < 1.0
    assert info.metadata == {"purpose": "test", "n": "1"}
    assert "sandbox_id" in repr(info) and sb.sandbox_id in repr(info)


def test_default_lifetime_is_5_minutes(make_sandbox):
    sb = lizard.Sandbox.create("tiny")  # the SDK default, not the factory's
    make_sandbox.made.append(sb)
    info = sb.get_info()
    assert abs(parse_iso(info.expires_at) - parse_iso(info.created_at) - 300) < 1.0


def test_no_expiry(make_sandbox):
    sb = make_sandbox("tiny", timeout_ms=0)
    assert sb.get_info().expires_at is None
    assert sb.get_info()["expiresAt"] is None


def test_expiry_not_before_deadline_and_soon_after(make_sandbox):
    sb = make_sandbox("tiny", timeout_ms=2000)
    # It exists right after create, and exec does not extend it.
    assert lizard.Sandbox.connect(sb.sandbox_id).get_info().status == "running"
    deadline = parse_iso(sb.get_info().expires_at)
    assert sb.process.exec_("echo alive").stdout == "alive\n"
    assert wait_until(lambda: gone(sb.sandbox_id), timeout=deadline - time.time() + 5,
                      interval=0.02), "sandbox still there 5 s after its deadline"
    seen_gone_at = time.time()
    assert seen_gone_at >= deadline - 0.01, "stopped %.3fs before its deadline" % (
        deadline - seen_gone_at)
    with pytest.raises(lizard.NotFoundError):
        sb.process.exec_("true")
    assert sb.sandbox_id not in [s.sandbox_id for s in lizard.Sandbox.list()]


def test_set_timeout_extends(make_sandbox):
    sb = make_sandbox("tiny", timeout_ms=2000)
    info = sb.set_timeout(60_000)
    assert abs(parse_iso(info.expires_at) - time.time() - 60) < 2
    # Past the first deadline it is still there.
    time.sleep(3)
    assert sb.process.exec_("echo still").stdout == "still\n"
    assert sb.set_timeout(0).expires_at is None


def test_connect_unknown(daemon):
    with pytest.raises(lizard.NotFoundError) as ei:
        lizard.Sandbox.connect("sb_doesnotexist0000")
    assert ei.value.status == 404 and ei.value.code == "not_found"


def test_list_and_lizard_client(admin):
    lz = lizard.Lizard(project="default")
    sb = lz.create("tiny", timeout_ms=60_000)
    try:
        ids = [s.sandbox_id for s in lz.list()]
        assert sb.sandbox_id in ids
        assert sb.sandbox_id in [s.sandbox_id for s in lizard.Sandbox.list(status="running")]
        assert lz.connect(sb.sandbox_id).process.exec_("echo x").stdout == "x\n"
    finally:
        sb.kill()
    assert sb.sandbox_id not in [s.sandbox_id for s in lz.list()]


def test_unknown_template_and_project(daemon):
    with pytest.raises(lizard.NotFoundError):
        lizard.Sandbox.create("no-such-template")
    with pytest.raises(lizard.NotFoundError):
        lizard.Sandbox.create("tiny", project="no-such-project-" + unique("p"))


def test_durability_kill9_restart(daemon, make_sandbox):
    keep = make_sandbox("tiny", timeout_ms=600_000)
    keep.fs.write("/tmp/state", "before crash")
    bg = keep.process.exec_("sleep 600", background=True)
    short = make_sandbox("tiny", timeout_ms=3000)
    marker = unique("shortlived")
    short.process.exec_(["sh", "-c", "sleep 600; echo %s" % marker], background=True)
    assert host_pids_with(marker), "marker process not visible on the host"
    deadline = parse_iso(short.get_info().expires_at)
    keep_expiry = keep.get_info().expires_at

    daemon.kill9()
    # The short sandbox's deadline passes while the daemon is down.
    time.sleep(max(0.0, deadline - time.time()) + 1.0)
    daemon.start()

    assert gone(short.sandbox_id), "expired sandbox not stopped at start-up"
    assert wait_until(lambda: not host_pids_with(marker), 10), \
        "processes of the expired sandbox still run on the host"
    listed = [s.sandbox_id for s in lizard.Sandbox.list()]
    assert keep.sandbox_id in listed and short.sandbox_id not in listed
    again = lizard.Sandbox.connect(keep.sandbox_id)
    info = again.get_info()
    assert info.status == "running" and info.expires_at == keep_expiry
    assert again.process.exec_("cat /tmp/state").stdout == "before crash"
    assert keep.process.exec_("echo after").stdout == "after\n"  # old handle works too
    assert again.fs.read("/tmp/state") == "before crash"
    # Background processes kept running: the agent (PID 1) outlived lizardd.
    procs = {p.pid: p for p in again.process.list()}
    assert bg.pid in procs and procs[bg.pid].running is True
    # New sandboxes work after the restart as well.
    new = make_sandbox("tiny")
    assert new.process.exec_("echo new").stdout == "new\n"


def test_concurrent_creates_all_succeed(daemon):
    # Regression: sandboxes cloned from the multi-threaded daemon once hung
    # in glibc's set*id broadcast when creates ran concurrently.
    from concurrent.futures import ThreadPoolExecutor

    def one(i):
        sb = lizard.Sandbox.create("tiny", timeout_ms=120_000)
        try:
            return sb.process.exec_(["echo", str(i)]).stdout
        finally:
            sb.kill()

    with ThreadPoolExecutor(16) as pool:
        outs = list(pool.map(one, range(64)))
    assert outs == ["%d\n" % i for i in range(64)]
