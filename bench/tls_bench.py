#!/usr/bin/python3
"""TLS overhead: the same calls against two lizardd started here, one plain and
one with --tls-cert/--tls-key (a throwaway CA, tests/integration/tlscerts.py):
the API exec round trip (`true`, SDK, keep-alive, p50) and, through the port
proxy to tests/integration/port_server.py in a `base` sandbox, one-stream
throughput and p50 request latency (bench/ports_bench.py's client).

    /usr/bin/python3 bench/tls_bench.py [-n 300] [--mib 512]
"""
import argparse
import json
import os
import ssl
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "integration"))
sys.path.insert(0, str(HERE))

from conftest import Daemon, free_port, stop_and_clean  # noqa: E402  (also puts the SDK on the path)
from ports_bench import client  # noqa: E402
from tlscerts import DOMAIN, make_certs  # noqa: E402

import lizard  # noqa: E402

SERVER = HERE.parent / "tests" / "integration" / "port_server.py"


def measure(d, ctx, n, mib):
    sb = lizard.Sandbox.create("base", api_url=d.url, api_key=d.admin_key, timeout_ms=600_000)
    try:
        sb.process.exec_("true")
        rt = []
        for _ in range(n):
            t0 = time.perf_counter()
            sb.process.exec_("true")
            rt.append((time.perf_counter() - t0) * 1000)
        sb.fs.write("/tmp/port_server.py", SERVER.read_text())
        sb.process.exec_("nohup python3 /tmp/port_server.py 3001 >/tmp/srv.log 2>&1 </dev/null &")
        e = sb.expose_port(3001)
        out = client("127.0.0.1", d.port, "%s:%d" % (e.hostname, d.port), e.access_token, n, mib,
                     ssl_context=ctx)
        out["p50_api_exec_ms"] = statistics.median(rt)
        return out
    finally:
        sb.kill()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("--mib", type=int, default=512)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lizard-tls-bench-"))
    make_certs(tmp)
    os.environ["LIZARD_CA_FILE"] = str(tmp / "ca.pem")
    # The chain is checked, not the name: OpenSSL will not match *.DOMAIN
    # against the `_` of sandbox ids (tests/integration/test_tls.py).
    ctx = ssl.create_default_context(cafile=str(tmp / "ca.pem"))
    ctx.check_hostname = False
    plain = Daemon(tmp / "plain", free_port(), extra_args=["--domain", DOMAIN])
    tls = Daemon(tmp / "tls", free_port(), tls=ctx, extra_args=[
        "--domain", DOMAIN, "--tls-cert", str(tmp / "server.pem"),
        "--tls-key", str(tmp / "server.key")])
    res = {}
    try:
        for name, d, c in (("plain", plain, None), ("tls", tls, ctx)):
            d.start()
            res[name] = measure(d, c, a.n, a.mib)
    finally:
        for d in (plain, tls):
            stop_and_clean(d)
    res["ratio_tls_over_plain"] = {k: round(res["tls"][k] / res["plain"][k], 2)
                                   for k in res["plain"]}
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
