"""HTTPS (issue 4): `lizardd --tls-cert/--tls-key` serves the API and the port
proxy over TLS on its one listener, with a throwaway CA (tlscerts.py).

OpenSSL's name check (Python's ssl) refuses to match the certificate's
`*.lizard.localhost` against a label with `_`, and sandbox ids are `sb_…`, so
the Python proxy tests check the chain only; the seed test (Node) checks both.
The daemon listens on 127.0.0.1:443 when that port is free (the seed's
`https://${hostname}/` has no port), else on a free port (the seed test then
skips)."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import select
import socket
import ssl
import subprocess
import threading
from pathlib import Path

import pytest

import lizard
from conftest import Daemon, free_port, require_template, stop_and_clean
from test_examples import EXAMPLES, TS_CREATE_EXEC, prepare_ts_examples, seed_text
from test_ports import start_server
from tlscerts import DOMAIN, make_certs, openssl
from wsclient import WebSocket, check_echo

HERE = Path(__file__).resolve().parent
MIB = 1 << 20
PATTERN = bytes(range(256)) * 256
IDLE_TIMEOUT = 5  # --idle-timeout of this daemon: bounds a stalled handshake


def port_443_free() -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", 443))
            return True
        except OSError:
            return False


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("tls")
    make_certs(d)
    return d


@pytest.fixture(scope="module")
def tls(certs):
    """A second lizardd speaking HTTPS; the SDK trusts its CA (LIZARD_CA_FILE)."""
    ctx = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    port = 443 if port_443_free() else free_port()
    d = Daemon(certs / "data", port, tls=ctx, extra_args=[
        "--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server.key"),
        "--domain", DOMAIN, "--idle-timeout", str(IDLE_TIMEOUT)])
    old = os.environ.get("LIZARD_CA_FILE")
    os.environ["LIZARD_CA_FILE"] = str(certs / "ca.pem")
    try:
        d.start()
        yield d
    finally:
        stop_and_clean(d)
        if old is None:
            os.environ.pop("LIZARD_CA_FILE", None)
        else:
            os.environ["LIZARD_CA_FILE"] = old


@pytest.fixture(scope="module")
def chain_only(certs) -> ssl.SSLContext:
    """Verifies the chain, not the name (`sb_…` labels: see the module doc)."""
    ctx = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    ctx.check_hostname = False
    return ctx


@pytest.fixture(scope="module")
def web(tls):
    """A base sandbox on the TLS daemon: http.server on 3000, port_server.py on 3001."""
    require_template("base")
    sb = lizard.Sandbox.create("base", api_url=tls.url, api_key=tls.admin_key,
                               timeout_ms=600_000)
    try:
        sb.fs.write("/tmp/www/index.html", "<h1>page one</h1>")
        sb.fs.write("/tmp/port_server.py", (HERE / "port_server.py").read_text())
        start_server(sb, "python3 -m http.server 3000 --bind 0.0.0.0 --directory /tmp/www",
                     3000)
        start_server(sb, "python3 /tmp/port_server.py 3001", 3001)
        yield sb, sb.expose_port(3000), sb.expose_port(3001)
    finally:
        sb.kill()


def proxy_request(tls, ctx, exposed, method, path, headers=None, body=None, token=True):
    h = {"Host": "%s:%d" % (exposed.hostname, tls.port)}
    if token:
        h["X-Lizard-Access-Token"] = exposed.access_token
    h.update(headers or {})
    c = http.client.HTTPSConnection("127.0.0.1", tls.port, timeout=60, context=ctx)
    try:
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def closed_by_server(s: socket.socket, wait: float) -> bool:
    """True once the server has closed `s` (EOF or reset) within `wait` seconds."""
    r, _, _ = select.select([s], [], [], wait)
    if not r:
        return False
    try:
        return s.recv(1) == b""
    except ConnectionError:
        return True


# ---- the API over HTTPS ----

def test_api_url_and_health(tls):
    assert (tls.data_dir / "api-url").read_text().strip() == tls.url
    assert tls.healthy()


def test_exec_and_20mb_files_over_tls(web):
    sb = web[0]
    r = sb.process.exec_("echo hello over tls")
    assert (r.stdout, r.exit_code) == ("hello over tls\n", 0)
    data = os.urandom(20 * MIB)
    sb.fs.write("/tmp/big.bin", data)
    assert sb.process.exec_("sha256sum /tmp/big.bin").stdout.split()[0] == \
        hashlib.sha256(data).hexdigest()
    assert sb.fs.read_bytes("/tmp/big.bin") == data


def test_streamed_exec_over_tls(web):
    out = []
    r = web[0].process.exec_("for i in 1 2 3; do echo line $i; done",
                             on_stdout=lambda s: out.append(s))
    assert r.exit_code == 0 and "".join(out) == "line 1\nline 2\nline 3\n"


def test_untrusted_certificate_is_refused(tls, monkeypatch):
    monkeypatch.delenv("LIZARD_CA_FILE")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with pytest.raises(lizard.APIConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        lizard.Lizard(api_url=tls.url, api_key=tls.admin_key).list()


# ---- the CLI (C client) over HTTPS ----

def tls_env(tls, certs) -> dict:
    return {"LIZARD_API_URL": tls.url, "LIZARD_CA_FILE": str(certs / "ca.pem")}


def test_cli_over_https(tls, certs, cli):
    require_template("tiny")
    env = tls_env(tls, certs)
    rc, sid, err = cli("sandbox", "create", "tiny", key=tls.admin_key, env=env)
    assert rc == 0, err
    sid = sid.strip()
    try:
        rc, out, err = cli("sandbox", "exec", sid, "--", "echo", "hi", key=tls.admin_key, env=env)
        assert (rc, out) == (0, "hi\n"), err
        # NDJSON streaming: several events, both streams, the exit code.
        rc, out, err = cli("sandbox", "exec", sid, "--",
                           "for i in 1 2 3; do echo line $i; done; echo e >&2; exit 7",
                           key=tls.admin_key, env=env)
        assert (rc, out, err) == (7, "line 1\nline 2\nline 3\n", "e\n")
        rc, out, err = cli("sandbox", "ls", "--json", key=tls.admin_key, env=env)
        assert rc == 0, err
        assert sid in {s["sandboxId"] for s in json.loads(out)["sandboxes"]}
        # The certificate names localhost too: a DNS name is checked as such.
        rc, out, err = cli("sandbox", "info", sid, key=tls.admin_key,
                           env=dict(env, LIZARD_API_URL="https://localhost:%d" % tls.port))
        assert rc == 0 and sid in out, err
    finally:
        cli("sandbox", "kill", sid, key=tls.admin_key, env=env)


def test_cli_refuses_untrusted_certificate(tls, cli, monkeypatch):
    monkeypatch.delenv("LIZARD_CA_FILE")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    rc, out, err = cli("sandbox", "ls", key=tls.admin_key, env={"LIZARD_API_URL": tls.url})
    assert rc != 0 and out == ""
    assert "certificate verify failed: unable to get local issuer certificate" in err, err
    assert "LIZARD_CA_FILE" in err
    rc, _, err = cli("sandbox", "ls", key=tls.admin_key,
                     env={"LIZARD_API_URL": tls.url, "LIZARD_CA_FILE": "/nonexistent.pem"})
    assert rc != 0 and "LIZARD_CA_FILE=/nonexistent.pem: No such file" in err, err
    # http:// to the TLS port: lizardd answers in plain text.
    rc, _, err = cli("sandbox", "ls", key=tls.admin_key,
                     env={"LIZARD_API_URL": tls.url.replace("https:", "http:")})
    assert rc != 0 and "https://" in err, err


def test_cli_checks_the_certificate_names_the_host(certs, cli):
    """A certificate from the trusted CA, but for another name: refused."""
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", "other.key", "-out", "other.csr", "-subj", "/CN=other", cwd=certs)
    (certs / "other.cnf").write_text("subjectAltName=DNS:other.example\n")
    openssl("x509", "-req", "-in", "other.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-out", "other.pem", "-days", "2", "-extfile", "other.cnf", cwd=certs)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs / "other.pem", certs / "other.key")
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]

    def serve():  # one handshake per client; the client aborts it
        for _ in range(2):
            c, _ = srv.accept()
            try:
                ctx.wrap_socket(c, server_side=True).close()
            except (ssl.SSLError, OSError):
                c.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        for host, why in (("127.0.0.1", "IP address mismatch"), ("localhost", "hostname mismatch")):
            rc, _, err = cli("sandbox", "ls", env={
                "LIZARD_API_URL": "https://%s:%d" % (host, port),
                "LIZARD_CA_FILE": str(certs / "ca.pem")})
            assert rc != 0 and "certificate verify failed: " + why in err, err
        t.join(30)
    finally:
        srv.close()


# ---- the port proxy over HTTPS ----

def test_expose_returns_https_url(web, tls):
    sb, e, _ = web
    assert e.hostname == "3000-%s.%s" % (sb.sandbox_id, DOMAIN)
    assert e.url == "https://%s:%d/?lizard_token=%s" % (e.hostname, tls.port, e.access_token)


def test_proxy_header_query_token_and_cookie(web, tls, chain_only):
    _, e, _ = web
    st, _, data = proxy_request(tls, chain_only, e, "GET", "/index.html")
    assert st == 200 and data == b"<h1>page one</h1>"
    st, _, _ = proxy_request(tls, chain_only, e, "GET", "/index.html", token=False)
    assert st == 401
    st, h, _ = proxy_request(tls, chain_only, e, "GET",
                             "/index.html?lizard_token=" + e.access_token, token=False)
    assert st == 302 and h["location"] == "/index.html"
    cookie = h["set-cookie"].split(";")[0]
    assert cookie == "lizard_token_3000=" + e.access_token
    st, _, data = proxy_request(tls, chain_only, e, "GET", "/index.html", token=False,
                                headers={"Cookie": cookie})
    assert st == 200 and data == b"<h1>page one</h1>"


def test_proxy_20mib_download_and_upload(web, tls, chain_only):
    _, _, q = web
    n = 20 * MIB
    st, h, data = proxy_request(tls, chain_only, q, "GET", "/download?n=%d" % n)
    assert st == 200 and len(data) == n
    assert data == (PATTERN * (n // len(PATTERN) + 1))[:n]
    body = os.urandom(n)
    st, _, data = proxy_request(tls, chain_only, q, "POST", "/upload", body=body)
    assert st == 200, data
    assert json.loads(data) == {"n": n, "sha256": hashlib.sha256(body).hexdigest()}


def test_websocket_echo_over_tls(web, tls, chain_only):
    _, _, q = web
    ws = WebSocket.connect(("127.0.0.1", tls.port), "%s:%d" % (q.hostname, tls.port), "/ws",
                           {"X-Lizard-Access-Token": q.access_token}, tls=chain_only)
    check_echo(ws)


# ---- what is not TLS ----

def test_plain_http_gets_a_clear_400(tls):
    c = http.client.HTTPConnection("127.0.0.1", tls.port, timeout=30)
    c.request("GET", "/healthz")
    r = c.getresponse()
    assert r.status == 400
    assert "https" in json.loads(r.read())["error"]["message"]
    c.close()
    with socket.create_connection(("127.0.0.1", tls.port), timeout=30) as s:
        s.sendall(b"\x00garbage that is neither TLS nor HTTP\r\n\r\n")
        assert closed_by_server(s, 30)
    assert tls.alive() and tls.healthy()


def test_stalled_handshake_is_cut(tls):
    # Silent after connecting, and a record header then nothing: both cut
    # after the idle timeout while the daemon serves others.
    silent = socket.create_connection(("127.0.0.1", tls.port), timeout=30)
    partial = socket.create_connection(("127.0.0.1", tls.port), timeout=30)
    partial.sendall(b"\x16\x03\x01\x02\x00")
    try:
        assert tls.healthy()
        assert closed_by_server(silent, 10 * IDLE_TIMEOUT)
        assert closed_by_server(partial, 10 * IDLE_TIMEOUT)
    finally:
        silent.close()
        partial.close()


def test_trickled_handshake_is_cut(tls):
    # One byte of a hello at a time, each well inside the idle timeout: the
    # handshake as a whole is bounded, not each read.
    s = socket.create_connection(("127.0.0.1", tls.port), timeout=30)
    try:
        s.sendall(b"\x16\x03\x01\x02\x00")
        cut = False
        for _ in range(20 * IDLE_TIMEOUT):
            try:
                s.sendall(b"\x01")
            except OSError:
                cut = True
                break
            if closed_by_server(s, 0.5):
                cut = True
                break
        assert cut
    finally:
        s.close()
    assert tls.healthy()


# ---- the seed quickstart's TypeScript port flow, verbatim ----

SEED_TS_PORTS = '''await sandbox.process.exec(
  "nohup python -m http.server 3000 --bind 0.0.0.0 --directory /tmp >/tmp/http.log 2>&1 </dev/null &",
);
const { url, hostname, accessToken } = await sandbox.exposePort(3000);
console.log(url); // open in a browser
const res = await fetch(`https://${hostname}/`, {
  headers: { 'X-Lizard-Access-Token': accessToken },
});
'''

# RFC 6761: *.localhost names are loopback. Browsers know; this machine's
# resolver (getaddrinfo, which Node's dns.lookup uses) does not.
LOOPBACK_PRELOAD = '''import dns from 'node:dns';
const lookup = dns.lookup;
dns.lookup = function (hostname, options, callback) {
  if (typeof options === 'function') { callback = options; options = {}; }
  if (typeof options === 'number') options = { family: options };
  if (typeof hostname === 'string' && hostname.endsWith('.localhost')) {
    const a = { address: '127.0.0.1', family: 4 };
    process.nextTick(() => (options && options.all ? callback(null, [a]) : callback(null, a.address, 4)));
    return {};
  }
  return lookup.call(this, hostname, options, callback);
};
'''


def resolves_to_loopback(name: str) -> bool:
    try:
        return {a[4][0] for a in socket.getaddrinfo(name, 443)} <= {"127.0.0.1", "::1"}
    except socket.gaierror:
        return False


def test_seed_ts_port_flow(tls, certs):
    assert SEED_TS_PORTS in seed_text()
    if tls.port != 443:
        pytest.skip("127.0.0.1:443 was taken: the seed's https://HOSTNAME/ needs lizardd on 443")
    require_template("interpreter")
    prepare_ts_examples()
    admin = lizard.Lizard(api_url=tls.url, api_key=tls.admin_key)
    if "proj_123" not in {p.name for p in admin.list_projects()}:
        admin.create_project("proj_123")
    env = dict(os.environ, LIZARD_API_URL="https://localhost", LIZARD_API_KEY=tls.admin_key,
               NODE_EXTRA_CA_CERTS=str(certs / "ca.pem"))
    if not resolves_to_loopback("3000-sb-x." + DOMAIN):
        preload = certs / "loopback.mjs"
        preload.write_text(LOOPBACK_PRELOAD)
        env["NODE_OPTIONS"] = "--import %s" % preload.as_uri()
    code = (TS_CREATE_EXEC.split("try {")[0] + SEED_TS_PORTS
            + "console.log(res.status);\nconsole.log(await res.text());\nawait sandbox.kill();\n")
    p = subprocess.run(["node", "--input-type=module"], input=code, env=env, cwd=EXAMPLES / "ts",
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    print(p.stdout)
    lines = p.stdout.splitlines()
    assert re.fullmatch(r"https://3000-sb_[a-z0-9]+\.%s:443/\?lizard_token=[0-9a-f]{40}"
                        % re.escape(DOMAIN), lines[0]), p.stdout
    assert lines[1] == "200", p.stdout
    assert "Directory listing for /" in p.stdout
