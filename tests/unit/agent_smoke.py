"""Smoke tests of lizard-agent over its wire protocol (src/proto/proto.h).

Starts `build/lizard-agent --socket PATH` (not PID 1, same code) as root and
talks to it with a tiny frame codec. Run:
    /usr/bin/python3 -m pytest tests/unit/agent_smoke.py
"""
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AGENT = os.environ.get("LIZARD_AGENT_BIN", os.path.join(ROOT, "build", "lizard-agent"))

HELLO, REQUEST, DATA, STDOUT, STDERR, EOF, RESPONSE, ERROR, SIGNAL, CANCEL = range(1, 11)
HDR = struct.Struct(">BBHII")


def frame(ftype, stream, payload=b""):
    if isinstance(payload, (dict, list)):
        payload = json.dumps(payload).encode()
    return HDR.pack(1, ftype, 0, stream, len(payload)) + payload


class Conn:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(20)
        self.sock.connect(path)
        self.buf = b""
        self.pending = []  # frames read while waiting for another stream
        self.next_id = 1
        t, s, p = self.read_frame()
        assert (t, s) == (HELLO, 0)
        self.hello = json.loads(p)

    def send(self, ftype, stream, payload=b""):
        self.sock.sendall(frame(ftype, stream, payload))

    def _recv_exact(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_frame(self):
        v, t, flags, s, n = HDR.unpack(self._recv_exact(HDR.size))
        assert v == 1 and flags == 0
        return t, s, self._recv_exact(n)

    def frame_for(self, stream):
        for i, f in enumerate(self.pending):
            if f[1] == stream:
                return self.pending.pop(i)
        while True:
            f = self.read_frame()
            if f[1] == stream:
                return f
            self.pending.append(f)

    def open(self, req):
        sid = self.next_id
        self.next_id += 1
        self.send(REQUEST, sid, req)
        return sid

    def collect(self, sid):
        """All frames of a stream until RESPONSE/ERROR: (out, err, data, kind, json)."""
        out, err, data = b"", b"", b""
        while True:
            t, _, p = self.frame_for(sid)
            if t == STDOUT:
                out += p
            elif t == STDERR:
                err += p
            elif t == DATA:
                data += p
            elif t in (RESPONSE, ERROR):
                return out, err, data, t, json.loads(p)

    def call(self, req, body=None):
        sid = self.open(req)
        if body is not None:
            for i in range(0, len(body), 65536):
                self.send(DATA, sid, body[i : i + 65536])
            self.send(EOF, sid)
        return self.collect(sid)

    def close(self):
        self.sock.close()


@pytest.fixture(scope="module")
def agent():
    tmp = tempfile.mkdtemp(prefix="lizard-agent-test-")
    os.chmod(tmp, 0o755)  # uid 1000 must reach its home below it
    etc = os.path.join(tmp, "etc")
    os.mkdir(etc)
    home = os.path.join(tmp, "home-u")
    os.mkdir(home)
    os.chown(home, 1000, 1000)
    with open(os.path.join(etc, "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\n")
        f.write(f"u:x:1000:1000:U:{home}:/bin/sh\n")
    with open(os.path.join(etc, "group"), "w") as f:
        f.write("root:x:0:\nu:x:1000:\nextra:x:4242:u\n")
    sock = os.path.join(tmp, "agent.sock")
    env = dict(os.environ, LIZARD_AGENT_ETC=etc, LIZARD_AGENT_STATE=os.path.join(tmp, "state"),
               LIZARD_SANDBOX_ID="sbx-test")
    proc = subprocess.Popen([AGENT, "--socket", sock], env=env)
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.01)
    yield {"sock": sock, "tmp": tmp, "proc": proc, "home": home}
    proc.kill()
    proc.wait()
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def conn(agent):
    c = Conn(agent["sock"])
    yield c
    c.close()


def test_hello_and_ping(conn):
    assert conn.hello["version"] == 1
    assert conn.hello["sandboxId"] == "sbx-test"
    assert conn.call({"op": "ping"})[3:] == (RESPONSE, {})


def test_exec_echo(conn):
    out, err, _, t, res = conn.call({"op": "exec", "cmd": "echo hi; echo oops >&2"})
    assert t == RESPONSE and out == b"hi\n" and err == b"oops\n"
    assert res == {"exitCode": 0, "timedOut": False, "truncated": False, "signal": None}


def test_exec_env_and_user(conn, agent):
    out, _, _, _, res = conn.call(
        {"op": "exec", "argv": ["sh", "-c", "id -u; id -G; pwd; echo $HOME $USER $FOO"],
         "user": "u", "env": {"FOO": "bar"}})
    lines = out.decode().split("\n")
    assert lines[0] == "1000"
    assert set(lines[1].split()) == {"1000", "4242"}
    assert lines[2] == agent["home"]
    assert lines[3] == f"{agent['home']} u bar"


def test_exec_stdin(conn):
    sid = conn.open({"op": "exec", "argv": ["cat"], "stdin": True})
    conn.send(DATA, sid, b"hello ")
    conn.send(DATA, sid, b"world")
    conn.send(EOF, sid)
    out, _, _, t, res = conn.collect(sid)
    assert out == b"hello world" and res["exitCode"] == 0


def test_exit_codes(conn):
    assert conn.call({"op": "exec", "cmd": "exit 3"})[4]["exitCode"] == 3
    _, err, _, t, res = conn.call({"op": "exec", "argv": ["no-such-program-x"]})
    assert t == RESPONSE and res["exitCode"] == 127 and b"command not found" in err
    assert conn.call({"op": "exec", "argv": ["/etc/passwd"]})[4]["exitCode"] == 126
    res = conn.call({"op": "exec", "cmd": "kill -9 $$"})[4]
    assert res["exitCode"] == 137 and res["signal"] == 9


def test_exec_errors(conn):
    assert conn.call({"op": "exec", "argv": ["true"], "user": "nobody-x"})[4]["code"] == "unknown_user"
    assert conn.call({"op": "exec", "argv": ["true"], "cwd": "/nonexistent"})[4]["code"] == "not_found"
    for bad in [{"op": "exec"}, {"op": "exec", "argv": []}, {"op": "exec", "argv": "ls"},
                {"op": "exec", "cmd": "x", "timeoutMs": "1"}, {"op": "nope"}, [1, 2],
                {"op": "exec", "cmd": "true", "env": {"A": 1}}]:
        _, _, _, t, res = conn.call(bad)
        assert t == ERROR and res["code"] == "invalid", bad


def test_timeout_kills_group(conn):
    t0 = time.time()
    _, _, _, _, res = conn.call({"op": "exec", "cmd": "sleep 30 & sleep 30", "timeoutMs": 300})
    assert res["timedOut"] and res["exitCode"] == 137
    assert time.time() - t0 < 5


def test_truncation(conn):
    out, _, _, _, res = conn.call({"op": "exec", "cmd": "head -c 300000 /dev/zero",
                                   "maxOutput": 1000})
    assert len(out) == 1000 and res["truncated"] and res["exitCode"] == 0


def test_background_child_does_not_block(conn):
    t0 = time.time()
    _, _, _, _, res = conn.call({"op": "exec", "cmd": "sleep 3 & echo started"})
    assert res["exitCode"] == 0 and time.time() - t0 < 2


def test_concurrent_execs(conn):
    a = conn.open({"op": "exec", "cmd": "for i in 1 2 3; do echo a$i; sleep 0.1; done"})
    b = conn.open({"op": "exec", "cmd": "for i in 1 2 3; do echo b$i; sleep 0.1; done"})
    order = []
    done = set()
    while len(done) < 2:
        t, s, p = conn.read_frame()
        order.append(s)
        if t == RESPONSE:
            done.add(s)
    # Frames of the two streams interleave: b's output came before a finished.
    assert order.index(b) < max(i for i, s in enumerate(order) if s == a)


def test_signal_frame(conn):
    sid = conn.open({"op": "exec", "cmd": "sleep 30"})
    time.sleep(0.1)
    conn.send(SIGNAL, sid, {"signal": 15})
    res = conn.collect(sid)[4]
    assert res["signal"] == 15 and res["exitCode"] == 143


def test_cancel(conn):
    sid = conn.open({"op": "exec", "cmd": "sleep 30"})
    conn.send(CANCEL, sid)
    _, _, _, t, res = conn.collect(sid)
    assert t == ERROR and res["code"] == "cancelled"


def wait_exit(conn, pid):
    for _ in range(100):
        procs = conn.call({"op": "proc.list"})[4]["processes"]
        p = [x for x in procs if x["pid"] == pid][0]
        if not p["running"]:
            return p
        time.sleep(0.05)
    raise AssertionError("still running")


def test_background(conn, agent):
    res = conn.call({"op": "exec", "cmd": "echo out; echo err >&2; sleep 30",
                     "background": True})[4]
    pid = res["pid"]
    procs = conn.call({"op": "proc.list"})[4]["processes"]
    p = [x for x in procs if x["pid"] == pid][0]
    assert p["running"] and p["cmd"].startswith("echo out") and p["exitCode"] is None
    time.sleep(0.2)
    out, err, _, t, res = conn.call({"op": "proc.output", "pid": pid})
    assert (out, err) == (b"out\n", b"err\n") and res["running"]
    assert conn.call({"op": "proc.signal", "pid": pid, "signal": 9})[3] == RESPONSE
    p = wait_exit(conn, pid)
    assert p["exitCode"] == 137
    assert conn.call({"op": "proc.output", "pid": 999999999})[4]["code"] == "not_found"


def test_background_survives_connection(agent):
    c = Conn(agent["sock"])
    pid = c.call({"op": "exec", "argv": ["sleep", "30"], "background": True})[4]["pid"]
    c.close()
    time.sleep(0.2)
    os.kill(pid, 0)  # still alive
    os.kill(pid, 9)


def test_background_stdin(conn):
    pid = conn.call({"op": "exec", "argv": ["cat"], "background": True, "stdin": True})[4]["pid"]
    _, _, _, t, res = conn.call({"op": "proc.stdin", "pid": pid}, b"line1\n")
    assert t == RESPONSE and res["written"] == 6
    _, _, _, t, res = conn.call({"op": "proc.stdin", "pid": pid, "eof": True}, b"line2\n")
    assert t == RESPONSE
    assert wait_exit(conn, pid)["exitCode"] == 0
    out = conn.call({"op": "proc.output", "pid": pid})[0]
    assert out == b"line1\nline2\n"


def test_files(conn, agent):
    d = os.path.join(agent["tmp"], "files")
    blob = os.urandom(5 * 1024 * 1024 + 17)
    path = d + "/a/b/blob.bin"
    _, _, _, t, res = conn.call({"op": "file.write", "path": path, "mode": 0o600}, blob)
    assert t == RESPONSE and res["size"] == len(blob)
    _, _, data, t, res = conn.call({"op": "file.read", "path": path})
    assert t == RESPONSE and data == blob and res["size"] == len(blob)
    st = conn.call({"op": "file.stat", "path": path})[4]
    assert st["type"] == "file" and st["size"] == len(blob) and st["mode"] == 0o600
    assert st["name"] == "blob.bin"
    entries = conn.call({"op": "file.list", "path": d + "/a/b"})[4]["entries"]
    assert [e["name"] for e in entries] == ["blob.bin"]  # no temp file left
    assert conn.call({"op": "file.read", "path": d + "/a"})[4]["code"] == "is_directory"
    assert conn.call({"op": "file.read", "path": d + "/zz"})[4]["code"] == "not_found"
    assert conn.call({"op": "file.mkdir", "path": d + "/m/n/o"})[3] == RESPONSE
    assert conn.call({"op": "file.stat", "path": d + "/m/n/o"})[4]["type"] == "dir"
    assert conn.call({"op": "file.rename", "from": path, "to": d + "/m/x"})[3] == RESPONSE
    assert conn.call({"op": "file.stat", "path": path})[4]["code"] == "not_found"
    assert conn.call({"op": "file.remove", "path": d + "/m"})[4]["code"] == "not_empty"
    assert conn.call({"op": "file.remove", "path": d + "/m", "recursive": True})[3] == RESPONSE
    assert not os.path.exists(d + "/m")


def test_file_write_as_user(conn, agent):
    p = agent["home"] + "/sub/f.txt"
    assert conn.call({"op": "file.write", "path": p, "user": "u"}, b"x")[3] == RESPONSE
    st = os.stat(p)
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (1000, 1000, 0o644)
    assert os.stat(agent["home"] + "/sub").st_uid == 1000
    res = conn.call({"op": "file.write", "path": "/root/nope-lizard", "user": "u"}, b"x")[4]
    assert res["code"] == "permission_denied"


def test_file_write_cancel_keeps_old(conn, agent):
    p = os.path.join(agent["tmp"], "keep.txt")
    conn.call({"op": "file.write", "path": p}, b"old")
    sid = conn.open({"op": "file.write", "path": p})
    conn.send(DATA, sid, b"new")
    conn.send(CANCEL, sid)
    assert conn.collect(sid)[4]["code"] == "cancelled"
    assert open(p, "rb").read() == b"old"
    assert os.listdir(agent["tmp"]).count("keep.txt") == 1
    assert not [n for n in os.listdir(agent["tmp"]) if n.startswith(".keep")]


def test_dotdot_rejected(conn):
    for p in ["/tmp/../etc/passwd", "relative", "/a/..", "/a\u0000b"]:
        res = conn.call({"op": "file.read", "path": p})[4]
        assert res["code"] == "invalid", p


def test_garbage_closes_connection_agent_survives(agent):
    c = Conn(agent["sock"])
    c.sock.sendall(b"\x07" * 64)
    with pytest.raises((EOFError, ConnectionResetError)):
        c.read_frame()
    c.close()
    c2 = Conn(agent["sock"])
    assert c2.call({"op": "ping"})[3] == RESPONSE
    c2.close()
    assert agent["proc"].poll() is None


def test_connection_close_kills_foreground(agent):
    c = Conn(agent["sock"])
    marker = os.path.join(agent["tmp"], "fg.pid")
    sid = c.open({"op": "exec", "cmd": f"echo $$ > {marker}; exec sleep 30"})
    for _ in range(100):
        if os.path.exists(marker) and open(marker).read().strip():
            break
        time.sleep(0.02)
    pid = int(open(marker).read())
    c.close()
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    raise AssertionError("foreground exec survived its connection")


def test_finished_background_records_are_pruned(conn):
    # 140 finished jobs: the agent keeps at most 128 finished records, the newest.
    pids = [conn.call({"op": "exec", "argv": ["true"], "background": True})[4]["pid"]
            for _ in range(140)]
    for pid in pids[-3:]:
        wait_exit(conn, pid)
    conn.call({"op": "exec", "argv": ["true"], "background": True})  # prunes on start
    listed = {p["pid"] for p in conn.call({"op": "proc.list"})[4]["processes"]
              if not p["running"]}
    assert len(listed) <= 129
    assert pids[-1] in listed and pids[0] not in listed
