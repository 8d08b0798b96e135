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


def lizard_create_exec(template, n):
    """Returns (create -> first exec result, create -> exec -> kill done)."""
    first, full = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        sb = Sandbox.create(template, timeout_ms=60_000)
        r = sb.process.exec_("echo hi")
        t1 = time.perf_counter()
        sb.kill()
        t2 = time.perf_counter()
        assert r.stdout == "hi\n", r
        first.append((t1 - t0) * 1000)
        full.append((t2 - t0) * 1000)
    return first, full


def exec_round_trip(n):
    sb = Sandbox.create("tiny", timeout_ms=60_000)
    try:
        sb.process.exec_(["true"])
        return timed(lambda: sb.process.exec_(["true"]), n)
    finally:
        sb.kill()


def concurrent_creates(total=100, workers=16):
    """`total` creates from `workers` threads: sandboxes/s and failures."""
    from concurrent.futures import ThreadPoolExecutor
    made, failures = [], []

    def one(_):
        try:
            made.append(Sandbox.create("tiny", timeout_ms=120_000))
        except Exception as e:  # noqa: BLE001 - counted and reported
            failures.append(repr(e))
    t0 = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(total)))
    elapsed = time.perf_counter() - t0
    for sb in made:
        sb.kill()
    return total / elapsed, len(failures)


def idle_memory(count=50):
    """Host memory charged per idle sandbox: the sandboxes' memory cgroups
    (v1 here; usage includes their kernel objects and tmpfs pages)."""
    made = [Sandbox.create("tiny", timeout_ms=120_000) for _ in range(count)]
    try:
        total = 0
        for sb in made:
            path = f"/sys/fs/cgroup/memory/lizard/{sb.sandbox_id}/memory.usage_in_bytes"
            if not os.path.exists(path):
                path = f"/sys/fs/cgroup/lizard/{sb.sandbox_id}/memory.current"
            with open(path) as f:
                total += int(f.read())
        return total / count / (1 << 20)
    finally:
        for sb in made:
            sb.kill()


def file_throughput(size=64 << 20):
    sb = Sandbox.create("tiny", timeout_ms=120_000)
    try:
        data = os.urandom(size)
        t0 = time.perf_counter()
        sb.fs.write("/tmp/blob", data)
        t1 = time.perf_counter()
        back = sb.fs.read_bytes("/tmp/blob")
        t2 = time.perf_counter()
        assert back == data
        return size / (t1 - t0) / 1e6, size / (t2 - t1) / 1e6
    finally:
        sb.kill()


def bwrap_once(rootfs):
    def once():
        subprocess.run(["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", rootfs, "/",
                        "--proc", "/proc", "--dev", "/dev", "/bin/echo", "hi"],
                       check=True, stdout=subprocess.DEVNULL)
    return once


def oci_bundle(rootfs, workdir):
    """An OCI bundle running /bin/echo hi on the template's root filesystem."""
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
    return bundle


def oci_once(tool, bundle):
    counter = [0]
    cmd = [tool] + (["--cgroup-manager=disabled"] if tool == "crun" else [])

    def once():
        counter[0] += 1
        subprocess.run(cmd + ["run", "-b", bundle, f"lzbench{os.getpid()}-{counter[0]}"],
                       check=True, stdout=subprocess.DEVNULL)
    return once


def crun_samples(bundle, n):
    """crun 1.8 refuses this host's hybrid cgroup layout (a cgroup2 mount with
    the hugetlb controller beside v1), so it runs in a private mount namespace
    without that mount and with its cgroup manager off: it does less work
    than lizard or runc there, which favours crun in the comparison."""
    out = subprocess.run(["unshare", "-m", "--", sys.executable, os.path.abspath(__file__),
                          "--crun-inner", bundle, "-n", str(n)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--templates", default="tiny,base")
    ap.add_argument("--template-dir", default=os.environ.get("LIZARD_TEMPLATE_DIR",
                                                              "/var/lib/lizard/templates"))
    ap.add_argument("--crun-inner", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.crun_inner:
        subprocess.run(["umount", "/sys/fs/cgroup/unified"], check=False)
        print(json.dumps(timed(oci_once("crun", args.crun_inner), args.n)))
        return
    results = {}
    for t in args.templates.split(","):
        first, full = lizard_create_exec(t, args.n)
        results[f"lizard create->first exec ({t})"] = summary(first)
        results[f"lizard create+exec+kill ({t})"] = summary(full)
    results["lizard exec round trip (true)"] = summary(exec_round_trip(max(args.n, 50)))
    rate, failures = concurrent_creates()
    extra = [f"create rate, 100 creates from 16 threads: {rate:.1f} sandboxes/s, {failures} failures",
             f"idle sandbox memory (50 idle tiny sandboxes): {idle_memory():.2f} MiB each"]
    w, r = file_throughput()
    extra.append(f"64 MiB file through the API: write {w:.0f} MB/s, read {r:.0f} MB/s")
    rootfs = os.path.join(args.template_dir, "tiny", "rootfs")
    with tempfile.TemporaryDirectory() as work:
        if shutil.which("bwrap"):
            results["bwrap start-run-exit (tiny rootfs)"] = summary(timed(bwrap_once(rootfs), args.n))
        bundle = oci_bundle(rootfs, work) if shutil.which("crun") else None
        if bundle and shutil.which("runc"):
            results["runc run start-run-exit (tiny rootfs)"] = summary(
                timed(oci_once("runc", bundle), args.n))
        if bundle:
            results["crun run start-run-exit (tiny rootfs)"] = summary(crun_samples(bundle, args.n))
    width = max(len(k) for k in results)
    print(f"{'benchmark':<{width}}  {'n':>4}  {'median ms':>10}  {'p99 ms':>8}")
    for k, v in results.items():
        print(f"{k:<{width}}  {v['n']:>4}  {v['median_ms']:>10}  {v['p99_ms']:>8}")
    for line in extra:
        print(line)
    base = results.get("lizard create+exec+kill (tiny)")
    if base:
        for peer in ("bwrap start-run-exit (tiny rootfs)", "runc run start-run-exit (tiny rootfs)",
                     "crun run start-run-exit (tiny rootfs)"):
            if peer in results:
                ratio = results[peer]["median_ms"] / base["median_ms"]
                print(f"ratio {peer} / lizard create+exec+kill (tiny): {ratio:.2f}x"
                      " (>1 means lizard is faster)")


if __name__ == "__main__":
    main()
