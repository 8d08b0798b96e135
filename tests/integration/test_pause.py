"""Pause and resume: processes and their memory are kept, the lifetime clock
stops, paused sandboxes survive a restart of lizardd, and bad calls answer 4xx."""

import time

import lizard
import pytest

from conftest import assert_error, unique, wait_until

# A process with a counter in memory, written to a file every 50 ms, and a
# TCP server that answers with how many connections it has served (also
# only in memory). If either restarted, its numbers would start over.
WORKLOAD = r"""
import os, socket, threading, time
def counter():
    n = 0
    while True:
        n += 1
        with open('/tmp/counter.tmp', 'w') as f:
            f.write('%d %d' % (os.getpid(), n))
        os.rename('/tmp/counter.tmp', '/tmp/counter')
        time.sleep(0.05)
def server():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.0.1', 8000)); s.listen(8)
    served = 0
    while True:
        c, _ = s.accept(); served += 1
        c.sendall(b'%d\n' % served); c.close()
threading.Thread(target=server, daemon=True).start()
counter()
"""

CLIENT = ("python3 -c \"import socket; s=socket.create_connection(('127.0.0.1', 8000), 5);"
          " print(s.recv(64).decode().strip())\"")


def host_counter(daemon, sid):
    """(pid, n) read from the host side: the file is in the sandbox's layer."""
    p = daemon.data_dir / "sandboxes" / sid / "layer" / "upper" / "tmp" / "counter"
    try:
        pid, n = p.read_text().split()
        return int(pid), int(n)
    except (OSError, ValueError):
        return None


def start_workload(daemon, sb):
    sb.fs.write("/tmp/work.py", WORKLOAD)
    sb.process.exec_("nohup python3 /tmp/work.py >/tmp/work.log 2>&1 </dev/null &")
    assert wait_until(lambda: (host_counter(daemon, sb.sandbox_id) or (0, 0))[1] >= 3, 10)
    assert wait_until(lambda: sb.process.exec_(CLIENT).stdout.strip() != "", 10)


def test_quickstart_flow(make_sandbox):
    # The seed's pause/resume steps, through the Python SDK.
    sandbox = make_sandbox("tiny")
    sandbox.pause()
    sandbox.wait_for_status('paused')
    assert sandbox.get_info().status == "paused"
    sandbox.resume()
    sandbox.wait_for_status('running')
    assert sandbox.process.exec_("echo back").stdout == "back\n"


def test_processes_and_memory_survive(daemon, make_sandbox):
    sb = make_sandbox("base")
    start_workload(daemon, sb)
    served_before = int(sb.process.exec_(CLIENT).stdout)
    sb.pause()
    sb.wait_for_status("paused")
    frozen = host_counter(daemon, sb.sandbox_id)
    time.sleep(0.5)  # ten counter periods: a running counter would have moved
    assert host_counter(daemon, sb.sandbox_id) == frozen, "the counter advanced while paused"
    sb.resume()
    sb.wait_for_status("running")
    # Same process, counting on from where it stopped.
    assert wait_until(lambda: host_counter(daemon, sb.sandbox_id)[1] > frozen[1], 10)
    pid, n = host_counter(daemon, sb.sandbox_id)
    assert pid == frozen[0] and n > frozen[1]
    # The TCP server kept its in-memory count too.
    assert int(sb.process.exec_(CLIENT).stdout) == served_before + 1


def test_exec_and_files_on_paused_answer_409(make_sandbox, raw):
    sb = make_sandbox("tiny")
    sb.pause()
    sb.wait_for_status("paused")
    with pytest.raises(lizard.ConflictError) as e:
        sb.process.exec_("true")
    assert e.value.code == "paused" and "resume" in str(e.value)
    with pytest.raises(lizard.ConflictError):
        sb.fs.read("/etc/hostname")
    st, _, body = raw("GET", "/v1/sandboxes/%s/files?path=/etc/hostname" % sb.sandbox_id)
    assert_error(st, body, 409, "paused")
    # Twice is a conflict, as is resuming a running sandbox.
    st, _, body = raw("POST", "/v1/sandboxes/%s/pause" % sb.sandbox_id)
    assert_error(st, body, 409, "conflict")
    sb.resume()
    sb.wait_for_status("running")
    st, _, body = raw("POST", "/v1/sandboxes/%s/resume" % sb.sandbox_id)
    assert_error(st, body, 409, "conflict")
    # Paused sandboxes are listed and can be killed.
    sb.pause()
    sb.wait_for_status("paused")
    assert sb.sandbox_id in [s.sandbox_id for s in lizard.Sandbox.list(status="paused")]
    assert sb.kill()
    with pytest.raises(lizard.NotFoundError):
        lizard.Sandbox.connect(sb.sandbox_id)


def test_lifetime_stops_while_paused(make_sandbox):
    sb = make_sandbox("tiny", timeout_ms=3000)
    sb.pause()
    sb.wait_for_status("paused")
    time.sleep(4)  # past the original deadline
    assert sb.get_info().status == "paused"
    sb.resume()
    sb.wait_for_status("running")
    assert sb.process.exec_("echo alive").stdout == "alive\n"
    # ...and the rest of the lifetime still runs out after the resume.
    assert wait_until(lambda: not sb.is_running(), 10)


def test_set_timeout_while_paused(make_sandbox):
    sb = make_sandbox("tiny", timeout_ms=60_000)
    sb.pause()
    sb.wait_for_status("paused")
    sb.set_timeout(0)  # no expiry, from the resume on
    assert sb.get_info().expires_at is None
    sb.resume()
    sb.wait_for_status("running")
    assert sb.get_info().expires_at is None


def test_wait_for_status_times_out(make_sandbox):
    sb = make_sandbox("tiny")
    with pytest.raises(lizard.TimeoutError):
        sb.wait_for_status("paused", timeout_ms=200)


def test_status_endpoint(make_sandbox, raw):
    sb = make_sandbox("tiny")
    path = "/v1/sandboxes/%s/status" % sb.sandbox_id
    st, _, body = raw("GET", path)
    assert st == 200 and body == {"status": "running", "reached": True, "error": None}
    st, _, body = raw("GET", path + "?wait=paused&timeoutMs=0")
    assert st == 200 and body["reached"] is False and body["status"] == "running"
    for q in ("?wait=bogus", "?wait=paused&timeoutMs=abc", "?wait=paused&timeoutMs=60001",
              "?wait=paused&timeoutMs=-1"):
        st, _, body = raw("GET", path + q)
        assert_error(st, body, 400, "bad_request")
    st, _, body = raw("POST", path)
    assert_error(st, body, 405)
    st, _, body = raw("GET", "/v1/sandboxes/%s/pause" % sb.sandbox_id)
    assert_error(st, body, 405)
    for sub in ("pause", "resume", "status"):
        st, _, body = raw("POST" if sub != "status" else "GET",
                          "/v1/sandboxes/sb_nonexistent000000000/%s" % sub)
        assert_error(st, body, 404, "not_found")


def test_other_projects_sandbox_is_404(make_sandbox, admin, raw):
    other = admin.create_project(unique("pause-other"))
    key = admin.create_key("k", project=other.id).key
    sb = make_sandbox("tiny")
    st, _, body = raw("POST", "/v1/sandboxes/%s/pause" % sb.sandbox_id, key=key)
    assert_error(st, body, 404, "not_found")
    assert sb.get_info().status == "running"


def test_paused_survives_restart(daemon, make_sandbox):
    sb = make_sandbox("base", timeout_ms=120_000)
    start_workload(daemon, sb)
    sb.pause()
    sb.wait_for_status("paused")
    frozen = host_counter(daemon, sb.sandbox_id)
    expires = sb.get_info().expires_at
    daemon.restart()  # kill -9 and start again on the same data dir
    c = lizard.Sandbox.connect(sb.sandbox_id)
    assert c.get_info().status == "paused"
    assert host_counter(daemon, sb.sandbox_id) == frozen
    time.sleep(1.1)
    # The clock is still stopped: the shown deadline moved with the wall clock.
    assert c.get_info().expires_at > expires
    c.resume()
    c.wait_for_status("running")
    assert wait_until(lambda: host_counter(daemon, sb.sandbox_id)[1] > frozen[1], 10)
    assert host_counter(daemon, sb.sandbox_id)[0] == frozen[0]


def test_cli_pause_resume(make_sandbox, cli):
    sb = make_sandbox("tiny")
    rc, out, err = cli("sandbox", "pause", sb.sandbox_id)
    assert rc == 0, err
    assert out.strip() == "%s paused" % sb.sandbox_id
    rc, out, err = cli("sandbox", "pause", sb.sandbox_id)
    assert rc == 1 and "paused" in err
    rc, out, err = cli("sandbox", "resume", sb.sandbox_id)
    assert rc == 0 and out.strip() == "%s running" % sb.sandbox_id
    rc, out, err = cli("sandbox", "pause", "not-an-id!")
    assert rc == 2


def test_paused_sandboxes_do_not_count_toward_the_cap():
    # A daemon of its own with a cap of one running sandbox per project
    # (short data dir: agent sockets live under it, and sun_path is short).
    import shutil
    import tempfile
    from pathlib import Path

    from conftest import Daemon, free_port

    tmp = Path(tempfile.mkdtemp(prefix="lz-cap-"))
    d = Daemon(tmp / "data", free_port(), extra_args=["--max-running", "1"])
    d.start()
    try:
        opts = dict(api_url=d.url, api_key=d.admin_key)
        a = lizard.Sandbox.create("tiny", **opts)
        with pytest.raises(lizard.RateLimitError):
            lizard.Sandbox.create("tiny", **opts)
        a.pause()
        a.wait_for_status("paused")
        b = lizard.Sandbox.create("tiny", **opts)  # room again: a is paused
        # Resuming a would exceed the cap again: refused, a stays paused.
        with pytest.raises(lizard.RateLimitError):
            a.resume()
        assert a.get_info().status == "paused"
        b.kill()
        a.resume()
        a.wait_for_status("running")
        assert a.process.exec_(["echo", "back"]).stdout == "back\n"
        a.kill()
    finally:
        d.stop()
        shutil.rmtree(tmp, ignore_errors=True)
