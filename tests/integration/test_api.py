"""The REST API with raw HTTP: bad input, authentication, projects and keys."""

import json
import socket

import lizard
import pytest

from conftest import assert_error, unique


@pytest.fixture(scope="module")
def sid(tiny):
    return tiny.sandbox_id


def test_healthz_needs_no_key(raw):
    st, _, body = raw("GET", "/healthz", key=None)
    assert (st, body) == (200, {"status": "ok"})


@pytest.mark.parametrize("auth", [None, "Bearer nope", "Bearer lz_abc_def", "Basic Zm9vOmJhcg==",
                                  "Bearer "])
def test_bad_or_missing_key_is_401(raw, auth):
    h = {"Authorization": auth} if auth is not None else {}
    for method, path in (("GET", "/v1/sandboxes"), ("POST", "/v1/sandboxes"),
                         ("GET", "/v1/projects")):
        st, _, body = raw(method, path, body={} if method == "POST" else None, key=None, headers=h)
        assert_error(st, body, 401, "unauthorized")


def test_sdk_bad_key_raises_authentication_error(daemon):
    with pytest.raises(lizard.AuthenticationError) as ei:
        lizard.Sandbox.list(api_key="lz_bogus_bogus")
    assert ei.value.status == 401


@pytest.mark.parametrize("body", [
    "{not json", "[1,2]", '"str"', '{"template": 5}', '{"timeoutMs": "soon"}',
    '{"timeoutMs": -1}', '{"timeoutMs": 1.5e30}', '{"env": {"A": 1}}', '{"env": [1]}',
    '{"metadata": "x"}', '{"metadata": {"k": {"nested": 1}}}', '{"size": "gigantic"}',
    '{"memoryMB": "lots"}', '{"template": "tiny", "cpuCount": -3}',
])
def test_create_bad_input_is_400(raw, body):
    st, _, resp = raw("POST", "/v1/sandboxes", body=body,
                      headers={"Content-Type": "application/json"})
    assert_error(st, resp, 400, "bad_request")


def test_create_unknown_template_404(raw):
    st, _, body = raw("POST", "/v1/sandboxes", body={"template": "no-such-template"})
    assert_error(st, body, 404, "not_found")
    st, _, body = raw("POST", "/v1/sandboxes", body={"template": "../../etc"})
    assert st in (400, 404), body
    assert_error(st, body, st)


def test_unknown_sandbox_id_404(raw):
    for method, path, body in (
        ("GET", "/v1/sandboxes/sb_nosuchsandbox", None),
        ("DELETE", "/v1/sandboxes/sb_nosuchsandbox", None),
        ("POST", "/v1/sandboxes/sb_nosuchsandbox/exec", {"cmd": "true"}),
        ("POST", "/v1/sandboxes/sb_nosuchsandbox/timeout", {"timeoutMs": 1000}),
        ("GET", "/v1/sandboxes/sb_nosuchsandbox/files?path=/etc/hostname", None),
    ):
        st, _, resp = raw(method, path, body=body)
        assert_error(st, resp, 404)
    # An id that is not an id at all never reaches anything else.
    st, _, resp = raw("GET", "/v1/sandboxes/%2e%2e/files?path=/etc/hostname")
    assert st in (400, 404)
    assert_error(st, resp, st)


def test_unknown_route_and_method(raw, sid):
    st, _, body = raw("GET", "/v1/nothing-here")
    assert_error(st, body, 404)
    st, _, body = raw("PATCH", "/v1/sandboxes/" + sid)
    assert_error(st, body, 405)


@pytest.mark.parametrize("body", [
    "{", '{"cmd": 5}', '{"cmd": []}', '{"cmd": [1, 2]}', "{}", '{"cmd": "true", "env": "x"}',
    '{"cmd": "true", "timeoutMs": "x"}', '{"cmd": "true", "user": 7}',
])
def test_exec_bad_input_is_400(raw, sid, body):
    st, _, resp = raw("POST", "/v1/sandboxes/%s/exec" % sid, body=body,
                      headers={"Content-Type": "application/json"})
    assert_error(st, resp, 400)


def test_exec_unknown_user(raw, sid):
    st, _, resp = raw("POST", "/v1/sandboxes/%s/exec" % sid, body={"cmd": "true", "user": "nobody-here"})
    assert st in (400, 404), resp
    assert_error(st, resp, st)


def test_file_paths_bad_input(raw, sid):
    for q in ("path=/tmp/../etc/passwd", "path=relative", "path=/tmp/a%00b", ""):
        st, _, resp = raw("GET", "/v1/sandboxes/%s/files?%s" % (sid, q))
        assert_error(st, resp, 400)


def test_huge_json_body_is_413(daemon, sid):
    """A JSON body over 1 MiB answers 413 (read with a raw socket: the server
    may answer before it has read the whole body)."""
    for path in ("/v1/sandboxes", "/v1/sandboxes/%s/exec" % sid):
        payload = json.dumps({"cmd": "x" * (2 << 20), "metadata": {}}).encode()
        head = ("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                % (path, daemon.admin_key, len(payload))).encode()
        s = socket.create_connection(("127.0.0.1", daemon.port), timeout=30)
        try:
            s.sendall(head)
            try:
                s.sendall(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass
            resp = b""
            while b"\r\n\r\n" not in resp:
                chunk = s.recv(65536)
                if not chunk:
                    break
                resp += chunk
        finally:
            s.close()
        status_line = resp.split(b"\r\n", 1)[0]
        assert status_line.split()[1:2] == [b"413"], resp[:300]
    assert daemon.healthy()


def test_timeout_bad_input(raw, sid):
    st, _, resp = raw("POST", "/v1/sandboxes/%s/timeout" % sid, body={"timeoutMs": "x"})
    assert_error(st, resp, 400)
    st, _, resp = raw("POST", "/v1/sandboxes/%s/timeout" % sid, body={})
    assert_error(st, resp, 400)


# ---- projects, keys, ownership ----

@pytest.fixture(scope="module")
def two_projects(admin):
    out = []
    for tag in ("a", "b"):
        p = admin.create_project(unique("proj-" + tag))
        assert p.id.startswith("proj_")
        k = admin.create_key(unique("key-" + tag), project=p.id)
        assert k.key and k.id.startswith("key_")
        out.append((p, k))
    return out


def test_duplicate_project_is_409(admin, two_projects):
    with pytest.raises(lizard.ConflictError):
        admin.create_project(two_projects[0][0].name)


def test_projects_cannot_see_each_other(two_projects, raw):
    (pa, ka), (pb, kb) = two_projects
    a = lizard.Lizard(api_key=ka.key)
    b = lizard.Lizard(api_key=kb.key)
    sa = a.create("tiny", timeout_ms=120_000)
    sb = b.create("tiny", timeout_ms=120_000)
    try:
        assert sa.get_info().project in (pa.id, pa.slug, pa.name)
        assert [s.sandbox_id for s in a.list()] == [sa.sandbox_id]
        assert [s.sandbox_id for s in b.list()] == [sb.sandbox_id]
        # B's key on A's sandbox: 404 exactly like a missing id.
        with pytest.raises(lizard.NotFoundError):
            b.connect(sa.sandbox_id)
        for method, suffix, body in (("GET", "", None), ("DELETE", "", None),
                                     ("POST", "/exec", {"cmd": "true"}),
                                     ("GET", "/files?path=/etc/hostname", None),
                                     ("POST", "/timeout", {"timeoutMs": 1})):
            st, _, resp = raw(method, "/v1/sandboxes/" + sa.sandbox_id + suffix, body=body,
                              key=kb.key)
            assert_error(st, resp, 404, "not_found")
            st2, _, resp2 = raw(method, "/v1/sandboxes/sb_nosuchsandbox" + suffix, body=body,
                                key=kb.key)
            assert resp2["error"]["message"].replace("sb_nosuchsandbox", "ID") == \
                resp["error"]["message"].replace(sa.sandbox_id, "ID")
        # A project key cannot create in (or list) another project.
        with pytest.raises(lizard.NotFoundError):
            a.create("tiny", project=pb.id)
        st, _, resp = raw("GET", "/v1/sandboxes?project=" + pb.id, key=ka.key)
        assert_error(st, resp, 404)
        # A project key cannot manage projects or mint keys.
        st, _, resp = raw("POST", "/v1/projects", body={"name": unique("x")}, key=ka.key)
        assert_error(st, resp, 403)
        st, _, resp = raw("POST", "/v1/keys", body={"name": unique("x")}, key=ka.key)
        assert_error(st, resp, 403)
        # Still alive and usable by its owner; admin sees both.
        assert sa.process.exec_("echo mine").stdout == "mine\n"
        every = [s.sandbox_id for s in lizard.Sandbox.list()]
        assert sa.sandbox_id in every and sb.sandbox_id in every
    finally:
        sa.kill()
        sb.kill()


def test_keys_list_and_revoke_via_rest(admin, raw):
    k = admin.create_key(unique("temp"))
    st, _, body = raw("GET", "/v1/sandboxes", key=k.key)
    assert st == 200
    keys = {x.id: x for x in admin.list_keys()}
    assert k.id in keys and "key" not in keys[k.id]  # the secret is shown once only
    assert k.key not in json.dumps([x.to_dict() for x in keys.values()])
    admin.delete_key(k.id)
    st, _, body = raw("GET", "/v1/sandboxes", key=k.key)
    assert_error(st, body, 401)
    with pytest.raises(lizard.NotFoundError):
        admin.delete_key(k.id)


def test_api_key_not_visible_inside_sandbox(tiny, daemon):
    r = tiny.process.exec_("env; cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n'")
    assert daemon.admin_key not in r.stdout
    assert "LIZARD_API_KEY" not in r.stdout
