"""Isolation and limits, checked from both sides: inside the sandbox and on
the host. After each abuse the daemon must still be healthy."""

import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

import lizard
import pytest

from conftest import TEST_DISK_MB, host_pids_with, proc_status, unique, wait_until

CGROUP = Path("/sys/fs/cgroup")


def cgroup_dirs(sid):
    """Every cgroup directory of the sandbox, in any v1 controller or v2."""
    out = []
    for ctrl in CGROUP.iterdir():
        for cand in (ctrl / "lizard" / sid, ctrl / sid):
            if cand.is_dir():
                out.append(cand)
    return out


@pytest.fixture
def host_marker_process():
    marker = unique("hostproc")
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker])
    try:
        assert wait_until(lambda: host_pids_with(marker), 10)
        yield marker
    finally:
        p.kill()
        p.wait()


def test_sandbox_sees_only_its_own_processes(tiny, host_marker_process):
    r = tiny.process.exec_("cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
    assert r.exit_code == 0
    assert host_marker_process not in r.stdout
    pids = tiny.process.exec_("ls /proc | grep -E '^[0-9]+$'").stdout.split()
    assert "1" in pids
    assert len(pids) < 10, pids  # the agent, this shell and its pipeline
    assert "lizard-agent" in tiny.process.exec_("cat /proc/1/cmdline").stdout
    ps = tiny.process.exec_("ps -o pid,args").stdout
    assert host_marker_process not in ps and "lizardd" not in ps


def test_hostname_is_sandbox_id(tiny):
    assert tiny.process.exec_("hostname").stdout.strip() == tiny.sandbox_id


def test_host_files_invisible(tiny):
    marker = unique("hostfile")
    paths = ["/tmp/" + marker, "/root/" + marker]
    for p in paths:
        Path(p).write_text("HOST SECRET " + marker)
    try:
        for p in paths:
            r = tiny.process.exec_(["cat", p])
            assert r.exit_code != 0 and marker not in r.stdout
            with pytest.raises(lizard.NotFoundError):
                tiny.fs.read(p)
        r = tiny.process.exec_("grep -rl %s /tmp /root /home 2>/dev/null; ls -a /tmp /root" % marker)
        assert marker not in r.stdout
        # And the other way: what the sandbox writes is not on the host's /tmp.
        tiny.fs.write("/tmp/from-sandbox-" + marker, "x")
        assert not Path("/tmp/from-sandbox-" + marker).exists()
    finally:
        for p in paths:
            os.unlink(p)


def test_root_inside_is_not_root_outside(tiny):
    marker = unique("uidcheck")
    h = tiny.process.exec_(["sh", "-c", "sleep 600; echo %s" % marker], background=True)
    try:
        assert tiny.process.exec_("id -u").stdout == "0\n"
        pids = wait_until(lambda: host_pids_with(marker), 10)
        assert pids, "sandbox process not found on the host"
        for pid in pids:
            st = proc_status(pid)
            uids = st["Uid"].split()
            gids = st["Gid"].split()
            assert set(uids) == {"100000"}, st["Uid"]
            assert set(gids) == {"100000"}, st["Gid"]
            with open("/proc/%d/uid_map" % pid) as f:
                first = f.read().split()
            assert first[:2] == ["0", "100000"]  # root inside = 100000 outside
            # Capabilities are those of the user namespace, not the host's.
            assert st["NoNewPrivs"] == "1"
            assert st["Seccomp"] == "2"  # a seccomp filter is in force
            assert os.readlink("/proc/%d/ns/pid" % pid) != os.readlink("/proc/self/ns/pid")
            assert os.readlink("/proc/%d/ns/net" % pid) != os.readlink("/proc/self/ns/net")
            assert os.readlink("/proc/%d/ns/mnt" % pid) != os.readlink("/proc/self/ns/mnt")
    finally:
        h.kill()


def test_sandboxes_do_not_share_files(make_sandbox):
    a = make_sandbox("tiny")
    b = make_sandbox("tiny")
    a.fs.write("/root/secret-a", "only in A")
    assert a.fs.read("/root/secret-a") == "only in A"
    with pytest.raises(lizard.NotFoundError):
        b.fs.read("/root/secret-a")
    assert b.process.exec_("cat /root/secret-a").exit_code != 0
    # The template's own files are shared read-only: changing one in A is private to A.
    a.process.exec_("echo changed > /etc/hostname-test; echo x >> /etc/passwd")
    assert "x" not in b.process.exec_("tail -n1 /etc/passwd").stdout.split()
    assert b.process.exec_("cat /etc/hostname-test").exit_code != 0


def fetch(sb, host, port):
    """HTTP GET / from inside a `tiny` sandbox with busybox nc (busybox wget
    crashes in a static, NSS-less rootfs). Returns what came back."""
    r = sb.process.exec_(
        'printf "GET /index.html HTTP/1.0\\r\\n\\r\\n" | nc -w 3 %s %d' % (host, port),
        timeout_ms=20_000)
    return r.stdout


def serve_in(sb, text):
    """Start busybox httpd on :8123 in `sb`; returns its handle once it answers."""
    sb.fs.write("/www/index.html", text)
    h = sb.process.exec_(["httpd", "-f", "-p", "8123", "-h", "/www"], background=True)
    # Positive control: the sandbox reaches its own server with the same probe.
    assert wait_until(lambda: fetch(sb, "127.0.0.1", 8123).endswith(text), 15), \
        "httpd never answered inside its own sandbox"
    return h


def test_network_namespaces(make_sandbox):
    a = make_sandbox("tiny")
    b = make_sandbox("tiny")
    hb = serve_in(b, "from B")
    ha = None
    try:
        assert "from B" not in fetch(a, "127.0.0.1", 8123)
        ha = serve_in(a, "from A")  # the same port in A is A's own
        assert "from A" not in fetch(b, "127.0.0.1", 8123)
        # Only a loopback interface exists.
        ifaces = [ln.split(":")[0].strip() for ln in
                  a.process.exec_("cat /proc/net/dev").stdout.splitlines()[2:]]
        assert ifaces == ["lo"], ifaces
    finally:
        hb.kill()
        if ha is not None:
            ha.kill()


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"HOST SERVICE"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def test_sandbox_cannot_reach_host_services(make_sandbox):
    srv = http.server.ThreadingHTTPServer(("0.0.0.0", 0), _Hello)
    port = srv.server_address[1]
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        import urllib.request
        assert urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=5).read() == \
            b"HOST SERVICE"  # positive control from the host
        host_ips = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
        tiny = make_sandbox("tiny")
        h = serve_in(tiny, "sandbox's own")  # proves the probe works in there
        for ip in ["127.0.0.1"] + [i for i in host_ips if ":" not in i]:
            assert "HOST SERVICE" not in fetch(tiny, ip, port), ip
        h.kill()
        base = make_sandbox("base")
        r = base.process.exec_(
            ["python3", "-c",
             "import socket\n"
             "for ip in %r:\n"
             "    s = socket.socket(); s.settimeout(3)\n"
             "    try: s.connect((ip, %d)); print('CONNECTED', ip)\n"
             "    except OSError as e: print('refused', ip, e)\n"
             % (["127.0.0.1"] + [i for i in host_ips if ":" not in i], port)])
        assert r.exit_code == 0, r.stderr
        assert "CONNECTED" not in r.stdout and "refused 127.0.0.1" in r.stdout
    finally:
        srv.shutdown()
        srv.server_close()


def test_memory_limit_oom_kills_inside_only(make_sandbox, daemon):
    sb = make_sandbox("base", memory_mb=256)
    assert sb.get_info().memory_mb == 256
    limits = [d / "memory.limit_in_bytes" for d in cgroup_dirs(sb.sandbox_id)
              if (d / "memory.limit_in_bytes").exists()] + \
             [d / "memory.max" for d in cgroup_dirs(sb.sandbox_id) if (d / "memory.max").exists()]
    assert limits, "no memory cgroup for the sandbox on the host"
    assert int(limits[0].read_text()) == 256 << 20
    r = sb.process.exec_(["python3", "-c",
                          "b = b'x' * (600 << 20); print('ALLOCATED', len(b))"],
                         timeout_ms=60_000)
    assert "ALLOCATED" not in r.stdout
    assert r.exit_code == 137, (r.exit_code, r.stderr)
    assert daemon.healthy()
    assert sb.process.exec_("echo survived").stdout == "survived\n"
    r = sb.process.exec_(["python3", "-c", "b = b'x' * (100 << 20); print('ok', len(b))"])
    assert r.stdout == "ok %d\n" % (100 << 20)


def test_pids_limit(make_sandbox, daemon):
    sb = make_sandbox("tiny")
    other = make_sandbox("tiny")
    files = [d / "pids.max" for d in cgroup_dirs(sb.sandbox_id) if (d / "pids.max").exists()]
    assert files, "no pids cgroup for the sandbox on the host"
    limit = files[0].read_text().strip()
    assert limit.isdigit(), "pids.max is %r" % limit
    limit = int(limit)
    # A bounded fork bomb: more short-lived processes than the limit allows.
    # Each exits by itself, so even an unenforced limit could not hurt the host.
    r = sb.process.exec_(
        "i=0; while [ $i -lt %d ]; do i=$((i+1)); echo $i > /tmp/count; sleep 20 & done; echo ALL"
        % (limit + 200), timeout_ms=120_000)
    assert "ALL" not in r.stdout, "spawned %d processes under pids.max=%d" % (limit + 200, limit)
    assert "fork" in r.stderr.lower() or r.exit_code != 0
    # Another sandbox and the daemon are unaffected meanwhile.
    assert other.process.exec_("echo fine").stdout == "fine\n"
    assert daemon.healthy()

    # Once the processes end, the sandbox is usable again.
    def usable():
        try:
            return sb.process.exec_("echo back", timeout_ms=10_000).stdout == "back\n"
        except lizard.LizardError:
            return False
    assert wait_until(usable, 90, interval=1.0)
    count = int(sb.fs.read("/tmp/count"))
    assert count <= limit


def test_disk_limit(make_sandbox, daemon):
    sb = make_sandbox("tiny")
    assert sb.get_info().disk_mb == TEST_DISK_MB
    r = sb.process.exec_("dd if=/dev/zero of=/root/fill bs=1M count=%d" % (TEST_DISK_MB + 64),
                         timeout_ms=120_000)
    assert r.exit_code != 0
    assert "no space left" in r.stderr.lower(), r.stderr
    assert daemon.healthy()
    # Through the API as well: the write fails with 413 (disk full).
    with pytest.raises(lizard.PayloadTooLargeError):
        sb.fs.write("/root/more", b"\0" * (64 << 20))
    sb.fs.remove("/root/fill")
    if sb.fs.exists("/root/more"):
        sb.fs.remove("/root/more")
    assert sb.process.exec_("echo ok > /root/small && cat /root/small").stdout == "ok\n"


@pytest.mark.parametrize("how", ["kill", "expire"])
def test_nothing_left_on_host(make_sandbox, daemon, how):
    sb = make_sandbox("tiny", timeout_ms=3000 if how == "expire" else 600_000)
    sid = sb.sandbox_id
    marker = unique("leftover")
    sb.process.exec_(["sh", "-c", "sleep 600; echo %s" % marker], background=True)
    assert wait_until(lambda: host_pids_with(marker), 10)
    data_entry = daemon.data_dir / "sandboxes" / sid
    assert data_entry.exists(), "expected the sandbox's state under %s" % data_entry
    assert cgroup_dirs(sid), "expected cgroup directories for the sandbox"
    if how == "kill":
        assert sb.kill() is True
    else:
        assert wait_until(lambda: not sb.is_running(), 10)
        # Expiry cleans up in the background; give it the promised second.
        wait_until(lambda: not data_entry.exists() and not cgroup_dirs(sid), 2)
    assert host_pids_with(marker) == []
    assert cgroup_dirs(sid) == []
    assert not data_entry.exists()
    with open("/proc/self/mountinfo") as f:
        assert [ln for ln in f if sid in ln] == []
    assert daemon.healthy()
