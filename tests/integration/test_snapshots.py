"""Snapshots (files, not processes), warm pools, restore, delete, restarts,
a kill -9 of lizardd in the middle of a snapshot, and bad input."""

import os
import signal
import time

import lizard
import pytest

from conftest import assert_error, unique, wait_until


@pytest.fixture
def snapshots(daemon):
    """Deletes the snapshots a test made (and so their warm pools)."""
    made = []
    yield made
    for sid in made:
        lizard.Sandbox.delete_snapshot(sid)


def take(sb, snapshots, name=None, pool_size=None):
    saved = sb.snapshot(name or unique("snap"), pool_size=pool_size)
    snapshots.append(saved.id)
    return lizard.Sandbox.wait_for_snapshot(saved.id)


def restore(made, snapshot_id, **kw):
    sb = lizard.Sandbox.restore(snapshot_id, **kw)
    made.made.append(sb)
    return sb


def test_quickstart_flow(make_sandbox, snapshots):
    sandbox = make_sandbox("base", size="small")
    sandbox.fs.write("/workspace/app.txt", "state\n")
    name = unique("my-app")
    # The seed's three lines, through the Python SDK.
    saved = sandbox.snapshot(name, pool_size=5)
    snapshots.append(saved.id)
    lizard.Sandbox.wait_for_snapshot(saved.id)
    copy = lizard.Sandbox.restore(saved.id, wait=True)
    make_sandbox.made.append(copy)
    assert saved.id.startswith("snap_") and saved.memory is False
    assert copy.sandbox_id != sandbox.sandbox_id
    info = copy.get_info()
    # The source's size, by name too (so it is billed at that size's price).
    assert (info.size, info.cpu_count, info.memory_mb) == ("small", 1, 1024)
    assert info.status == "running" and info.snapshot_id == saved.id
    assert copy.fs.read("/workspace/app.txt") == "state\n"
    # A straight create from the snapshot by name keeps it as well.
    direct = lizard.Sandbox.create(name)
    make_sandbox.made.append(direct)
    assert (direct.get_info().size, direct.get_info().cpu_count) == ("small", 1)


def test_files_not_processes(make_sandbox, snapshots):
    src = make_sandbox("base")
    src.process.exec_("mkdir -p /workspace/d && echo data > /workspace/d/f && "
                      "echo etc > /etc/added && rm /etc/motd && chmod 0600 /workspace/d/f && "
                      "chown user /workspace/d/f && ln -s d/f /workspace/link && "
                      "mkfifo /workspace/fifo")
    src.process.exec_("nohup sleep 1000 >/dev/null 2>&1 </dev/null &")
    snap = take(src, snapshots, pool_size=1)
    assert snap.status == "ready" and snap.size_bytes > 0
    copy = restore(make_sandbox, snap.id, wait=True)
    r = copy.process.exec_("cat /workspace/d/f /etc/added /workspace/link; "
                           "stat -c '%a %U' /workspace/d/f; test -p /workspace/fifo && echo fifo; "
                           "test -e /etc/motd || echo no-motd; hostname; pgrep -x sleep || true")
    assert r.stdout.splitlines() == ["data", "etc", "data", "600 user", "fifo", "no-motd",
                                     copy.sandbox_id]
    # The restored sandbox has its own writable layer.
    copy.fs.write("/workspace/d/f", "changed\n")
    assert src.fs.read("/workspace/d/f") == "data\n"


def test_pool_exhaustion_and_refill(make_sandbox, snapshots, raw):
    src = make_sandbox("tiny")
    src.fs.write("/root/x", "x")
    snap = take(src, snapshots, pool_size=1)
    assert wait_until(lambda: lizard.Sandbox.get_snapshot(snap.id).pool_ready == 1, 20)
    got, unavailable = [], None
    for _ in range(50):  # restores come faster than one refill
        try:
            got.append(restore(make_sandbox, snap.id))
        except lizard.UnavailableError as e:
            unavailable = e
            break
    assert unavailable is not None, "never saw an empty pool"
    assert unavailable.retry_after and unavailable.retry_after >= 1
    assert "refilling" in str(unavailable)
    st, hdrs, body = raw("POST", "/v1/snapshots/%s/restore" % snap.id)
    if st != 201:
        assert_error(st, body, 503, "unavailable")
        assert hdrs.get("retry-after")
    else:
        lizard.Sandbox.connect(body["sandboxId"]).kill()
    # Waiting for the refill works.
    sb = restore(make_sandbox, snap.id, wait=True, wait_timeout_ms=30_000)
    assert len({s.sandbox_id for s in got + [sb]}) == len(got) + 1
    assert sb.fs.read("/root/x") == "x"
    # Pooled copies are nobody's sandboxes: not listed.
    listed = {s.sandbox_id for s in lizard.Sandbox.list()}
    assert sb.sandbox_id in listed


def test_delete_keeps_restored_sandboxes(daemon, make_sandbox, snapshots):
    src = make_sandbox("tiny")
    src.fs.write("/workspace/keep", "kept\n")
    snap = take(src, snapshots, pool_size=1)
    copy = restore(make_sandbox, snap.id, wait=True)
    layer = daemon.data_dir / "snapshots" / snap.id
    assert layer.is_dir()
    assert lizard.Sandbox.delete_snapshot(snap.id)
    assert not lizard.Sandbox.delete_snapshot(snap.id)  # 404 the second time
    with pytest.raises(lizard.NotFoundError):
        lizard.Sandbox.get_snapshot(snap.id)
    with pytest.raises(lizard.NotFoundError):
        lizard.Sandbox.restore(snap.id)
    assert snap.id not in [s.id for s in lizard.Sandbox.list_snapshots()]
    # The restored sandbox still reads through the layer...
    assert copy.fs.read("/workspace/keep") == "kept\n"
    assert copy.process.exec_("ls /workspace").stdout == "keep\n"
    assert layer.is_dir()
    # ...which goes once nothing uses it any more.
    copy.kill()
    assert wait_until(lambda: not layer.exists(), 15)


def test_create_by_name_and_snapshot_of_restored(make_sandbox, snapshots):
    src = make_sandbox("tiny")
    src.fs.write("/a", "1")
    name = unique("app")
    first = take(src, snapshots, name=name, pool_size=1)
    sb = lizard.Sandbox.create(name)  # Sandbox.create("my-app"): a straight create
    make_sandbox.made.append(sb)
    assert sb.get_info().snapshot_id == first.id
    assert sb.fs.read("/a") == "1"
    # A snapshot of a sandbox that came from a snapshot stacks on it.
    sb.fs.write("/b", "2")
    second = take(sb, snapshots, pool_size=1)
    deeper = restore(make_sandbox, second.id, wait=True)
    assert deeper.process.exec_("cat /a /b").stdout == "12"
    # Deleting the lower snapshot does not break the upper one.
    lizard.Sandbox.delete_snapshot(first.id)
    assert restore(make_sandbox, second.id, wait=True).process.exec_("cat /a").stdout == "1"


def test_snapshot_of_paused_sandbox(make_sandbox, snapshots):
    src = make_sandbox("tiny")
    src.fs.write("/p", "paused")
    src.pause()
    src.wait_for_status("paused")
    snap = take(src, snapshots, pool_size=1)
    assert snap.freeze_ms == 0
    assert src.get_info().status == "paused"  # still paused afterwards
    assert restore(make_sandbox, snap.id, wait=True).fs.read("/p") == "paused"


def test_snapshots_survive_restart(daemon, make_sandbox, snapshots):
    src = make_sandbox("tiny")
    src.fs.write("/r", "restart")
    snap = take(src, snapshots, pool_size=2)
    assert wait_until(lambda: lizard.Sandbox.get_snapshot(snap.id).pool_ready == 2, 20)
    daemon.restart()
    s = lizard.Sandbox.get_snapshot(snap.id)
    assert s.status == "ready" and s.pool_size == 2
    assert wait_until(lambda: lizard.Sandbox.get_snapshot(snap.id).pool_ready == 2, 20)
    assert restore(make_sandbox, snap.id).fs.read("/r") == "restart"


def test_kill9_during_snapshot(daemon, make_sandbox, snapshots):
    src = make_sandbox("tiny")
    # A big layer makes the copy take a while (the test daemon's disk limit
    # is 256 MB): 200 files of 1 MiB.
    src.process.exec_("mkdir /big && for i in $(seq 200); do "
                      "head -c 1048576 /dev/urandom > /big/$i; done", timeout_ms=120_000)
    saved = src.snapshot(unique("big"), pool_size=1)
    tmp = daemon.data_dir / "snapshots" / (".tmp-" + saved.id)
    assert wait_until(lambda: tmp.exists(), 30, interval=0.002), "the copy never started"
    daemon.proc.send_signal(signal.SIGKILL)
    daemon.proc.wait(timeout=30)
    daemon.start()
    final = daemon.data_dir / "snapshots" / saved.id
    try:
        s = lizard.Sandbox.get_snapshot(saved.id)
        snapshots.append(saved.id)
        # complete: ready, and every file is there
        assert s.status == "ready"
        assert len(os.listdir(final / "big")) == 200
    except lizard.NotFoundError:
        assert not final.exists()  # none: nothing left behind
    assert not tmp.exists()
    # The source is not left frozen.
    assert src.process.exec_("echo ok").stdout == "ok\n"
    assert src.get_info().status == "running"


def test_bad_input(make_sandbox, snapshots, raw, admin):
    sb = make_sandbox("tiny")
    path = "/v1/sandboxes/%s/snapshots" % sb.sandbox_id
    for body in ({}, {"name": 5}, {"name": ""}, {"name": "Bad Name"}, {"name": "x" * 49},
                 {"name": "snap_x"}, {"name": "ok", "poolSize": 0},
                 {"name": "ok", "poolSize": 11}, {"name": "ok", "poolSize": "3"}, [1]):
        st, _, resp = raw("POST", path, body)
        assert_error(st, resp, 400, "bad_request")
    st, _, resp = raw("POST", path, "{not json")
    assert_error(st, resp, 400)
    st, _, resp = raw("POST", path, {"name": "base"})
    assert_error(st, resp, 409, "conflict")
    name = unique("dup")
    take(sb, snapshots, name=name, pool_size=1)
    st, _, resp = raw("POST", path, {"name": name})
    assert_error(st, resp, 409, "conflict")
    st, _, resp = raw("GET", path)
    assert_error(st, resp, 405)
    st, _, resp = raw("POST", "/v1/sandboxes/sb_nonexistent000000000/snapshots", {"name": "a"})
    assert_error(st, resp, 404, "not_found")
    for method, p in (("GET", "/v1/snapshots/snap_nope"), ("DELETE", "/v1/snapshots/nope"),
                      ("POST", "/v1/snapshots/snap_nope/restore"),
                      ("GET", "/v1/snapshots/x/y")):
        st, _, resp = raw(method, p)
        assert_error(st, resp, 404, "not_found")
    st, _, resp = raw("POST", "/v1/snapshots/%s/restore" % name, {"timeoutMs": "soon"})
    assert_error(st, resp, 400, "bad_request")
    st, _, resp = raw("POST", "/v1/snapshots/%s/restore" % name, {"env": {"A=B": "x"}})
    assert_error(st, resp, 400, "bad_request")
    st, _, resp = raw("PUT", "/v1/snapshots")
    assert_error(st, resp, 405)
    # Another project's snapshot answers like a missing one, by id and by name.
    other = admin.create_project(unique("snap-other"))
    key = admin.create_key("k", project=other.id).key
    sid = snapshots[-1]
    for p in ("/v1/snapshots/" + sid, "/v1/snapshots/" + name):
        st, _, resp = raw("GET", p, key=key)
        assert_error(st, resp, 404, "not_found")
    st, _, resp = raw("GET", "/v1/snapshots", key=key)
    assert st == 200 and resp == {"snapshots": []}
    with pytest.raises(lizard.NotFoundError):
        lizard.Sandbox.create(name, api_key=key)


def test_cli(make_sandbox, snapshots, cli):
    sb = make_sandbox("tiny")
    sb.fs.write("/c", "cli")
    name = unique("cli")
    rc, out, err = cli("sandbox", "snapshot", sb.sandbox_id, "--name", name, "--pool-size", "1")
    assert rc == 0, err
    sid = out.strip()
    snapshots.append(sid)
    assert sid.startswith("snap_")
    rc, out, err = cli("snapshot", "ls")
    assert rc == 0 and name in out and sid in out
    assert wait_until(lambda: lizard.Sandbox.get_snapshot(sid).pool_ready == 1, 20)
    rc, out, err = cli("sandbox", "restore", sid)
    assert rc == 0, err
    copy = lizard.Sandbox.connect(out.strip())
    make_sandbox.made.append(copy)
    assert copy.fs.read("/c") == "cli"
    rc, out, err = cli("sandbox", "snapshot", sb.sandbox_id, "--name", name)
    assert rc == 1 and "exists" in err
    rc, out, err = cli("sandbox", "snapshot", sb.sandbox_id, "--name", "x", "--pool-size", "11")
    assert rc == 2
    rc, out, err = cli("snapshot", "rm", sid)
    assert rc == 0
    rc, out, err = cli("snapshot", "rm", sid)
    assert rc == 1 and "not found" in err
