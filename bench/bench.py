#!/usr/bin/python3
"""Lizard benchmarks: create -> first exec result, exec round trip, and the
same start-run-exit with crun and bwrap on the same root filesystem, in the
same run, reported as ratios. Needs a running lizardd (LIZARD_API_URL /
LIZARD_API_KEY, or the local data dir) and root for the peers.

    /usr/bin/python3 bench/bench.py [-n 20] [--templates tiny,base]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "sdk", "python"))
from lizard import Sandbox  # noqa: E402


def summary(samples_ms):
    s = sorted(samples_ms)
    p99 = s[min(len(s) - 1, int(round(0.99 * (len(s) - 1))))]
    return {"n": len(s), "median_ms": round(statistics.median(s), 2), "p99_ms": round(p99, 2)}


def timed(fn, n):
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def lizard_create_exec(template):
    def once():
        sb = Sandbox.create(template, timeout_ms=60_000)
        r = sb.process.exec_("echo hi")
        assert r.stdout == "hi\n", r
        sb.kill()
    return once


def exec_round_trip(n):
    sb = Sandbox.create("tiny", timeout_ms=60_000)
    try:
        sb.process.exec_(["true"])
        return timed(lambda: sb.process.exec_(["true"]), n)
    finally:
        sb.kill()


def bwrap_once(rootfs):
    def once():
        subprocess.run(["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", rootfs, "/",
                        "--proc", "/proc", "--dev", "/dev", "/bin/echo", "hi"],
                       check=True, stdout=subprocess.DEVNULL)
    return once


def crun_once(rootfs, workdir):
    bundle = os.path.join(workdir, "bundle")
    os.makedirs(bundle, exist_ok=True)
    subprocess.run(["crun", "spec"], cwd=bundle, check=True)
    with open(os.path.join(bundle, "config.json")) as f:
        spec = json.load(f)
    spec["root"] = {"path": rootfs, "readonly": True}
    spec["process"]["args"] = ["/bin/echo", "hi"]
    spec["process"]["terminal"] = False
    with open(os.path.join(bundle, "config.json"), "w") as f:
        json.dump(spec, f)
    counter = [0]

    def once():
        counter[0] += 1
        subprocess.run(["crun", "run", "-b", bundle, f"lzbench{os.getpid()}-{counter[0]}"],
                       check=True, stdout=subprocess.DEVNULL)
    return once


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--templates", default="tiny,base")
    ap.add_argument("--template-dir", default=os.environ.get("LIZARD_TEMPLATE_DIR",
                                                              "/var/lib/lizard/templates"))
    args = ap.parse_args()
    results = {}
    for t in args.templates.split(","):
        results[f"lizard create->first exec ({t})"] = summary(timed(lizard_create_exec(t), args.n))
    results["lizard exec round trip (true)"] = summary(exec_round_trip(max(args.n, 50)))
    rootfs = os.path.join(args.template_dir, "tiny", "rootfs")
    with tempfile.TemporaryDirectory() as work:
        if shutil.which("bwrap"):
            results["bwrap start-run-exit (tiny rootfs)"] = summary(timed(bwrap_once(rootfs), args.n))
        if shutil.which("crun"):
            results["crun run start-run-exit (tiny rootfs)"] = summary(
                timed(crun_once(rootfs, work), args.n))
    width = max(len(k) for k in results)
    print(f"{'benchmark':<{width}}  {'n':>4}  {'median ms':>10}  {'p99 ms':>8}")
    for k, v in results.items():
        print(f"{k:<{width}}  {v['n']:>4}  {v['median_ms']:>10}  {v['p99_ms']:>8}")
    base = results.get("lizard create->first exec (tiny)")
    if base:
        for peer in ("bwrap start-run-exit (tiny rootfs)", "crun run start-run-exit (tiny rootfs)"):
            if peer in results:
                ratio = results[peer]["median_ms"] / base["median_ms"]
                print(f"ratio {peer} / lizard create->first exec (tiny): {ratio:.2f}x")


if __name__ == "__main__":
    main()
