"""The `lizard` CLI against the real daemon: sandboxes, exec, keys, projects."""

import json

import lizard
import pytest

from conftest import require_template, unique


def create(cli, *args):
    rc, out, err = cli("sandbox", "create", *args, "--json")
    assert rc == 0, err
    info = json.loads(out)
    assert info["sandboxId"].startswith("sb_")
    return info


def test_sandbox_lifecycle(cli):
    require_template("tiny")
    rc, out, err = cli("sandbox", "create", "tiny", "--timeout", "2m")
    assert rc == 0, err
    sid = out.strip()
    assert sid.startswith("sb_") and "\n" not in sid  # human output: just the id
    try:
        rc, out, err = cli("sandbox", "exec", sid, "--", "echo", "hi")
        assert (rc, out) == (0, "hi\n"), err
        rc, out, err = cli("sandbox", "exec", sid, "--", "echo $((1+2)); echo e >&2; exit 7")
        assert (rc, out, err) == (7, "3\n", "e\n")
        rc, out, err = cli("sandbox", "exec", sid, "--", "no-such-program")
        assert rc == 127
        rc, out, err = cli("sandbox", "ls")
        assert rc == 0 and sid in out
        rc, out, err = cli("sandbox", "ls", "--json")
        assert sid in [s["sandboxId"] for s in json.loads(out)["sandboxes"]]
        rc, out, err = cli("sandbox", "info", sid, "--json")
        assert rc == 0
        info = json.loads(out)
        assert (info["sandboxId"], info["template"], info["status"], info["runtime"]) == \
            (sid, "tiny", "running", "container")
        rc, out, err = cli("sandbox", "info", sid)
        assert rc == 0 and sid in out and "running" in out
    finally:
        rc, out, err = cli("sandbox", "kill", sid)
    assert rc == 0, err
    rc, out, err = cli("sandbox", "info", sid)
    assert rc != 0 and out == ""
    assert "not found" in err.lower() and sid in err


def test_exec_options_and_timeout(cli):
    require_template("base")
    info = create(cli, "base", "--env", "FOO=bar=baz", "--metadata", "who=cli")
    sid = info["sandboxId"]
    try:
        assert info["metadata"] == {"who": "cli"}
        rc, out, _ = cli("sandbox", "exec", sid, "--", "python3", "-c", "print(2**10)")
        assert (rc, out) == (0, "1024\n")
        rc, out, _ = cli("sandbox", "exec", sid, "--user", "user", "--cwd", "/tmp", "--env",
                         "X=1", "--", "echo $(id -u) $PWD $X $FOO")
        assert (rc, out) == (0, "1000 /tmp 1 bar=baz\n")
        rc, out, _ = cli("sandbox", "exec", sid, "--timeout", "1s", "--", "sleep 30")
        assert rc == 124
    finally:
        cli("sandbox", "kill", sid)


def test_exec_streams_large_output(cli):
    require_template("tiny")
    sid = create(cli, "tiny")["sandboxId"]
    try:
        rc, out, _ = cli("sandbox", "exec", sid, "--", "seq 1 100000")
        assert rc == 0
        assert out.splitlines() == [str(i) for i in range(1, 100001)]
    finally:
        cli("sandbox", "kill", sid)


def test_errors_exit_non_zero_with_message(cli):
    for args in (("sandbox", "info", "sb_nosuchsandbox"),
                 ("sandbox", "kill", "sb_nosuchsandbox"),
                 ("sandbox", "exec", "sb_nosuchsandbox", "--", "true")):
        rc, out, err = cli(*args)
        assert rc != 0 and rc != 127
        assert "not found" in err.lower(), err
    rc, out, err = cli("sandbox", "create", "no-such-template")
    assert rc != 0 and "template" in err.lower()
    rc, out, err = cli("sandbox", "ls", key="lz_bad_key")
    assert rc != 0 and err.strip()
    rc, out, err = cli("sandbox", "frobnicate")
    assert rc == 2 and err.strip()


def test_keys_create_ls_rm_and_revoked_key(cli, admin, daemon):
    proj = unique("cliproj")
    rc, out, err = cli("projects", "create", proj, "--json")
    assert rc == 0, err
    pid = json.loads(out)["id"]
    rc, out, err = cli("projects", "ls")
    assert rc == 0 and proj in out
    rc, out, err = cli("keys", "create", unique("clikey"), "--project", proj, "--json")
    assert rc == 0, err
    k = json.loads(out)
    assert k["key"] and k["id"].startswith("key_")
    rc, out, err = cli("keys", "ls")
    assert rc == 0 and k["id"] in out
    assert k["key"] not in out
    # The new key works, in its own project.
    sb = lizard.Sandbox.create("tiny", api_key=k["key"], timeout_ms=60_000)
    try:
        assert sb.get_info().project in (pid, proj)
        rc, out, err = cli("sandbox", "ls", "--json", key=k["key"])
        assert [s["sandboxId"] for s in json.loads(out)["sandboxes"]] == [sb.sandbox_id]
    finally:
        sb.kill()
    rc, out, err = cli("keys", "rm", k["id"])
    assert rc == 0, err
    rc, out, err = cli("keys", "ls", "--json")
    assert k["id"] not in [x["id"] for x in json.loads(out)["keys"]]
    with pytest.raises(lizard.AuthenticationError):
        lizard.Sandbox.list(api_key=k["key"])
    rc, out, err = cli("sandbox", "ls", key=k["key"])
    assert rc != 0 and err.strip()


def test_template_ls(cli):
    rc, out, err = cli("template", "ls", "--json")
    assert rc == 0, err
    names = [t["name"] for t in json.loads(out)["templates"]]
    assert "tiny" in names and "base" in names
