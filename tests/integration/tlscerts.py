"""A throwaway CA and a server certificate for a lizardd with --tls-cert/--tls-key
(test_tls.py, bench/tls_bench.py), made with the openssl CLI.

The certificate names localhost, 127.0.0.1 and *.DOMAIN, and that daemon runs
with --domain DOMAIN: TLS clients refuse a wildcard right under a one-label
name such as *.localhost, so port hostnames get a second label."""

from __future__ import annotations

import subprocess
from pathlib import Path

DOMAIN = "lizard.localhost"


def openssl(*args: str, cwd: Path) -> None:
    p = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    assert p.returncode == 0, "openssl %s:\n%s" % (" ".join(args), p.stderr)


def make_certs(d: Path) -> None:
    """ca.pem (a CA) and server.pem/server.key (localhost, *.DOMAIN, 127.0.0.1)."""
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=lizard test CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign", cwd=d)
    openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost",
            cwd=d)
    (d / "ext.cnf").write_text(
        "subjectAltName=DNS:localhost,DNS:*.%s,IP:127.0.0.1\n"
        "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n" % DOMAIN)
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf", cwd=d)
