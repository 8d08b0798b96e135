#!/usr/bin/python3
"""Exposed-port proxy benchmark: one-stream throughput (MB/s) and p50 request
latency through lizardd's proxy versus direct, as ratios.

"Direct" runs the same client inside the sandbox against 127.0.0.1:PORT (the
only place the server is reachable without the proxy); "proxy" runs it on the
host through lizardd. The server is tests/integration/port_server.py in a
`base` sandbox. Needs a running lizardd (LIZARD_API_URL / LIZARD_API_KEY).

    /usr/bin/python3 bench/ports_bench.py [-n 300] [--mib 512]
"""
import argparse
import http.client
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "..", "tests", "integration", "port_server.py")


def client(addr, port, host, token, n, mib, ssl_context=None):
    """Runs on the host (proxy) or in the sandbox (direct); returns the figures.
    With ssl_context, over HTTPS (bench/tls_bench.py)."""
    headers = {"Host": host}

    def connect():
        if ssl_context is not None:
            return http.client.HTTPSConnection(addr, port, timeout=60, context=ssl_context)
        return http.client.HTTPConnection(addr, port, timeout=60)

    if token:
        headers["X-Lizard-Access-Token"] = token

    def one(c):
        t0 = time.perf_counter()
        c.request("GET", "/headers", headers=headers)
        r = c.getresponse()
        r.read()
        assert r.status == 200, r.status
        return (time.perf_counter() - t0) * 1000

    fresh = []
    for _ in range(n):  # a new connection per request (what a page load does often)
        t0 = time.perf_counter()
        c = connect()
        one(c)
        c.close()
        fresh.append((time.perf_counter() - t0) * 1000)
    c = connect()
    kept = [one(c) for _ in range(n)]  # keep-alive
    size = mib << 20
    t0 = time.perf_counter()
    c.request("GET", "/download?n=%d" % size, headers=headers)
    r = c.getresponse()
    got = 0
    while True:
        chunk = r.read(1 << 20)
        if not chunk:
            break
        got += len(chunk)
    secs = time.perf_counter() - t0
    assert got == size, got
    c.close()
    return {"p50_new_conn_ms": statistics.median(fresh),
            "p50_keepalive_ms": statistics.median(kept),
            "MB_per_s": size / 1e6 / secs}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("--mib", type=int, default=512)
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(HERE, "..", "sdk", "python"))
    import lizard
    from urllib.parse import urlsplit

    with lizard.Sandbox.create("base", timeout_ms=600_000) as sb:
        sb.fs.write("/tmp/port_server.py", open(SERVER).read())
        sb.fs.write("/tmp/ports_bench.py", open(os.path.abspath(__file__)).read())
        sb.process.exec_("nohup python3 /tmp/port_server.py 3001 >/tmp/srv.log 2>&1 </dev/null &")
        time.sleep(1)
        e = sb.expose_port(3001)
        api = urlsplit(os.environ.get("LIZARD_API_URL", "http://127.0.0.1:7400"))
        direct = sb.process.exec_(["python3", "/tmp/ports_bench.py", "client", "127.0.0.1",
                                   "3001", "127.0.0.1:3001", "", str(a.n), str(a.mib)],
                                  timeout_ms=600_000)
        assert direct.exit_code == 0, direct.stderr
        d = json.loads(direct.stdout)
        os.environ["PYTHONUNBUFFERED"] = "1"
        import subprocess
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "client", api.hostname,
                            str(api.port), "%s:%d" % (e.hostname, api.port), e.access_token,
                            str(a.n), str(a.mib)], capture_output=True, text=True, check=True)
        x = json.loads(p.stdout)
    out = {"direct": d, "proxy": x, "ratio_proxy_over_direct": {
        k: round(x[k] / d[k], 2) for k in d}}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        addr, port, host, token, n, mib = sys.argv[2:8]
        print(json.dumps(client(addr, int(port), host, token, int(n), int(mib))))
    else:
        main()
