"""Serve HTTP from a sandbox and reach it through an exposed port.

    export LIZARD_API_KEY=...
    python3 ports.py

Ports are private: a request needs the access token (the `lizard_token`
query parameter of `url`, the X-Lizard-Access-Token header, or the cookie a
browser gets); without it the answer is 401.
"""
import http.client
import time
from urllib.parse import urlsplit

from lizard import Sandbox


def get(url, path, token=None):
    """GET `path` on the exposed port behind `url` -> (status, body)."""
    u = urlsplit(url)
    # Browsers resolve every *.localhost name to the loopback address (the
    # server's default domain); the system resolver may not, so connect to
    # it directly and name the port in the Host header.
    addr = "127.0.0.1" if u.hostname.endswith(".localhost") else u.hostname
    conn_class = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
    conn = conn_class(addr, u.port, timeout=10)
    headers = {"Host": u.netloc}
    if token:
        headers["X-Lizard-Access-Token"] = token
    try:
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


with Sandbox.create("interpreter", timeout_ms=120_000) as sandbox:
    sandbox.fs.write("/tmp/index.html", "hello from port 3000\n")
    sandbox.process.exec_(
        "nohup python -m http.server 3000 --bind 0.0.0.0 --directory /tmp >/tmp/http.log 2>&1 </dev/null &"
    )
    exposed = sandbox.expose_port(3000)
    print(exposed.url)  # open in a browser

    # The server needs a moment to start listening; until then the proxy
    # answers 502.
    deadline = time.monotonic() + 30
    while True:
        status, body = get(exposed.url, "/index.html", exposed.access_token)
        if status != 502 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    print(status, body.strip())

    status, _ = get(exposed.url, "/index.html")
    print("without a token:", status)
