#!/usr/bin/python3
"""Pause/resume and snapshot figures, through the Python SDK. Needs a running
lizardd (LIZARD_API_URL / LIZARD_API_KEY) whose disk limit takes 100 MiB.

    /usr/bin/python3 bench/pause_snapshot_bench.py [-n 20] [--layer-mb 100]

pause / resume: 202 of the call -> wait_for_status reached (the long-poll
answer), each; snapshot: POST -> wait_for_snapshot for a sandbox whose
writable layer holds --layer-mb of files (the server's own copy and freeze
times come from GET /v1/snapshots/ID: freezeMs); restore: from a full pool,
and with an empty pool (a direct create from the snapshot).
"""
import argparse
import json
import os
import statistics
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "sdk", "python"))
from lizard import Sandbox  # noqa: E402


def ms(t0):
    return (time.perf_counter() - t0) * 1000


def p50(samples):
    return round(statistics.median(samples), 2)


def pause_resume(n):
    sb = Sandbox.create("tiny", timeout_ms=600_000)
    pauses, resumes = [], []
    try:
        for _ in range(n):
            t0 = time.perf_counter()
            sb.pause()
            sb.wait_for_status("paused")
            pauses.append(ms(t0))
            t0 = time.perf_counter()
            sb.resume()
            sb.wait_for_status("running")
            resumes.append(ms(t0))
    finally:
        sb.kill()
    return pauses, resumes


def snapshot_and_restore(n, layer_mb, pool):
    src = Sandbox.create("tiny", timeout_ms=600_000)
    made = []
    snap = None
    try:
        src.process.exec_("mkdir /data && for i in $(seq %d); do "
                          "head -c 1048576 /dev/urandom > /data/$i; done" % layer_mb,
                          timeout_ms=300_000)
        t0 = time.perf_counter()
        saved = src.snapshot("bench-" + uuid.uuid4().hex[:8], pool_size=pool)
        snap = Sandbox.wait_for_snapshot(saved.id, timeout_ms=600_000)
        snap_ms = ms(t0)
        from_pool, direct = [], []
        for _ in range(n):
            # wait until the pool is full again, then time one hand-out
            deadline = time.monotonic() + 60
            while Sandbox.get_snapshot(snap.id).pool_ready < pool and time.monotonic() < deadline:
                time.sleep(0.05)
            t0 = time.perf_counter()
            sb = Sandbox.restore(snap.id)
            sb.process.exec_(["true"])
            from_pool.append(ms(t0))
            made.append(sb)
            # empty pool: a straight create on the snapshot's layers
            t0 = time.perf_counter()
            sb = Sandbox.create(snap.name, timeout_ms=600_000)
            sb.process.exec_(["true"])
            direct.append(ms(t0))
            made.append(sb)
        return snap, snap_ms, from_pool, direct
    finally:
        for sb in made:
            sb.kill()
        if snap is not None:
            Sandbox.delete_snapshot(snap.id)
        src.kill()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--layer-mb", type=int, default=100)
    ap.add_argument("--pool", type=int, default=2)
    a = ap.parse_args()
    pauses, resumes = pause_resume(a.n)
    snap, snap_ms, from_pool, direct = snapshot_and_restore(min(a.n, 10), a.layer_mb, a.pool)
    print(json.dumps({
        "pause_p50_ms": p50(pauses),
        "resume_p50_ms": p50(resumes),
        "pause_resume_round_trip_p50_ms": p50([p + r for p, r in zip(pauses, resumes)]),
        "snapshot_layer_mb": a.layer_mb,
        "snapshot_ms": round(snap_ms, 1),
        "snapshot_freeze_ms": snap.freeze_ms,
        "restore_from_pool_p50_ms": p50(from_pool),
        "restore_empty_pool_direct_create_p50_ms": p50(direct),
        "note": "restore times include the first exec (true) in the new sandbox",
    }, indent=2))


if __name__ == "__main__":
    main()
