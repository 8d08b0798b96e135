"""Exec through the Python SDK: shells and argv, exit codes, users, env,
timeouts, the output cap, streaming and background processes."""

import lizard
import pytest

from conftest import unique, wait_until


def test_create_exec_kill_tiny(make_sandbox):
    sb = make_sandbox("tiny")
    assert sb.sandbox_id.startswith("sb_")
    r = sb.process.exec_('echo "hello from Lizard"')
    assert r.stdout == "hello from Lizard\n"
    assert r.stderr == ""
    assert r.exit_code == 0
    assert r.truncated is False and r.timed_out is False
    assert sb.kill() is True
    with pytest.raises(lizard.NotFoundError):
        lizard.Sandbox.connect(sb.sandbox_id)
    with pytest.raises(lizard.NotFoundError):
        sb.process.exec_("true")
    assert sb.kill() is False  # already gone


def test_python_on_base(make_sandbox):
    sb = make_sandbox("base")
    r = sb.process.exec_("python3 -c 'print(2**10)'")
    assert (r.exit_code, r.stdout) == (0, "1024\n")


def test_context_manager_kills(daemon):
    with lizard.Sandbox.create("tiny", timeout_ms=60_000) as sb:
        assert sb.process.exec_("echo in").stdout == "in\n"
        sid = sb.sandbox_id
    with pytest.raises(lizard.NotFoundError):
        lizard.Sandbox.connect(sid)


def test_string_runs_through_shell_argv_does_not(tiny):
    r = tiny.process.exec_("echo $((6*7)) | tr 4 X")
    assert r.stdout == "X2\n"
    r = tiny.process.exec_(["echo", "$((6*7))", "|", "tr"])
    assert r.stdout == "$((6*7)) | tr\n"
    r = tiny.process.exec_(["sh", "-c", 'printf "%s-" "$@"', "x", "a b", "c"])
    assert r.stdout == "a b-c-"


def test_exit_codes_are_results(tiny):
    assert tiny.process.exec_("exit 3").exit_code == 3
    assert tiny.process.exec_(["sh", "-c", "exit 42"]).exit_code == 42
    r = tiny.process.exec_("echo out; echo err >&2; false")
    assert (r.stdout, r.stderr, r.exit_code) == ("out\n", "err\n", 1)


def test_missing_program_is_127(tiny):
    r = tiny.process.exec_(["/no/such/program", "x"])
    assert r.exit_code == 127
    r = tiny.process.exec_(["no-such-program-xyz"])
    assert r.exit_code == 127
    r = tiny.process.exec_("no-such-program-xyz --flag")
    assert r.exit_code == 127
    assert "not found" in r.stderr


def test_user_cwd_env(base):
    r = base.process.exec_("id -u; echo $HOME; pwd", user="user")
    assert r.stdout.split() == ["1000", "/home/user", "/home/user"]
    r = base.process.exec_("id -u; echo $HOME", )
    assert r.stdout.split() == ["0", "/root"]
    r = base.process.exec_(["pwd"], cwd="/etc")
    assert r.stdout == "/etc\n"
    r = base.process.exec_('echo "$A|$B"', env={"A": "1", "B": "two words"})
    assert r.stdout == "1|two words\n"
    r = base.process.exec_("cat", stdin="piped\ninput")
    assert r.stdout == "piped\ninput"


def test_create_env_applies_to_every_exec(make_sandbox):
    sb = make_sandbox("tiny", env={"GREETING": "hi", "OTHER": "x"})
    assert sb.process.exec_("echo $GREETING").stdout == "hi\n"
    assert sb.process.exec_(["sh", "-c", "echo $GREETING-$OTHER"]).stdout == "hi-x\n"
    # The exec's own env overrides the sandbox's.
    assert sb.process.exec_("echo $GREETING", env={"GREETING": "yo"}).stdout == "yo\n"
    assert sb.process.exec_("echo $GREETING").stdout == "hi\n"


def test_timeout_kills_everything(tiny):
    marker = "2997"  # an odd sleep length to look for in ps
    r = tiny.process.exec_("sleep %s & sleep %s; echo never" % (marker, marker), timeout_ms=1000)
    assert r.timed_out is True
    assert "never" not in r.stdout
    ps = tiny.process.exec_("ps -o pid,args")
    assert ps.exit_code == 0
    assert "sleep %s" % marker not in ps.stdout, ps.stdout
    # The sandbox still works after a timeout.
    assert tiny.process.exec_("echo ok").stdout == "ok\n"


def test_sdk_read_timeout_exceeds_exec_timeout(tiny):
    # The client's socket timeout must be longer than the command may run.
    r = tiny.process.exec_("sleep 2; echo done", timeout_ms=3000)
    assert (r.stdout, r.timed_out) == ("done\n", False)


def test_output_cap_1mib(tiny):
    r = tiny.process.exec_("head -c 3000000 /dev/zero | tr '\\0' a; echo tail >&2")
    assert r.truncated is True
    assert len(r.stdout) == 1 << 20
    assert set(r.stdout) == {"a"}
    assert r.stderr == "tail\n"
    assert r.exit_code == 0


def test_small_output_not_truncated(tiny):
    r = tiny.process.exec_("head -c 100000 /dev/zero | tr '\\0' b")
    assert r.truncated is False and len(r.stdout) == 100000


def test_streaming_callbacks_in_order(tiny):
    events = []
    r = tiny.process.exec_(
        "for i in 1 2 3 4 5; do echo line$i; echo e$i >&2; sleep 0.05; done; exit 4",
        on_stdout=lambda s: events.append(("out", s)),
        on_stderr=lambda s: events.append(("err", s)),
    )
    assert r.exit_code == 4
    out = "".join(s for k, s in events if k == "out")
    err = "".join(s for k, s in events if k == "err")
    assert out == "".join("line%d\n" % i for i in range(1, 6))
    assert err == "".join("e%d\n" % i for i in range(1, 6))
    assert r.stdout == out and r.stderr == err


def test_streaming_delivers_output_before_exit(tiny):
    """The command waits for a file that the stdout callback creates, so it
    only finishes if the callback ran while the command was still running."""
    go = "/tmp/" + unique("go")
    seen = []

    def on_out(s):
        seen.append(s)
        if "ready" in "".join(seen) and not tiny.fs.exists(go):
            tiny.fs.write(go, "1")

    r = tiny.process.exec_(
        "echo ready; i=0; while [ ! -e %s ]; do sleep 0.05; i=$((i+1));"
        " [ $i -gt 300 ] && exit 9; done; echo done" % go,
        on_stdout=on_out, timeout_ms=30_000,
    )
    assert (r.exit_code, r.timed_out) == (0, False)
    assert "".join(seen) == "ready\ndone\n"


def test_background_stdin_output_list(tiny):
    h = tiny.process.exec_("cat; echo bye >&2", background=True)
    assert isinstance(h.pid, int) and h.pid > 0
    listed = {p.pid: p for p in tiny.process.list()}
    assert h.pid in listed and listed[h.pid].running is True
    assert tiny.process.send_stdin(h.pid, "hello ") == 6
    h.send_stdin("world\n", eof=True)
    out = h.wait(timeout_ms=20_000)
    assert (out.stdout, out.stderr, out.exit_code, out.running) == ("hello world\n", "bye\n", 0, False)
    listed = {p.pid: p for p in tiny.process.list()}
    assert listed[h.pid].running is False and listed[h.pid].exit_code == 0


def test_background_signal(tiny):
    h = tiny.process.exec_(["sleep", "333"], background=True)
    assert tiny.process.output(h.pid).running is True
    tiny.process.signal(h.pid, "SIGTERM")
    out = h.wait(timeout_ms=20_000)
    assert out.running is False
    assert out.exit_code == 128 + 15
    h2 = tiny.process.exec_("echo started; sleep 334", background=True)
    assert wait_until(lambda: tiny.process.output(h2.pid).stdout == "started\n", 20)
    tiny.process.kill(h2.pid, signal=9)
    assert h2.wait(timeout_ms=20_000).exit_code == 128 + 9


def test_background_unknown_pid(tiny):
    with pytest.raises(lizard.NotFoundError):
        tiny.process.output(999_999)
    with pytest.raises(lizard.NotFoundError):
        tiny.process.signal(999_999, 15)
