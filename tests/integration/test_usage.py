"""Metering (SPEC "Metering"): GET /v1/usage, `lizard usage`, the size table
and prices from a `--config` file. A daemon of this module's own, so the
prices are known and its restarts disturb no other test. No timing
assertions: billed seconds are checked against bounds that hold however slow
the machine is (at least the time slept, at most the wall time elapsed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import lizard
from conftest import (LIZARD_CLI, LIZARDD, Daemon, TEMPLATE_DIR, assert_error, free_port,
                      require_template, unique)

# Round prices: 3.6/h is 0.001 per second.
CONFIG = {
    "sizes": [
        {"name": "default", "cpuCount": 1, "memoryMB": 256, "pricePerHour": 3.6},
        {"name": "small", "cpuCount": 1, "memoryMB": 128, "pricePerHour": 36},
    ],
    "volumePricePerGBMonth": 2.0,
    "maxRunningPerProject": 1,  # the --max-running flag below must win over this
}
SLACK = 0.002  # ms rounding of the two clock readings an interval is made of


@pytest.fixture(scope="module")
def meter():
    require_template("tiny")
    tmp = Path(tempfile.mkdtemp(prefix="lz-use-"))  # short: agent sockets live under it
    cfg = tmp / "lizard.json"
    cfg.write_text(json.dumps(CONFIG))
    d = Daemon(tmp / "data", free_port(), extra_args=["--config", str(cfg), "--max-running", "3"])
    d.start()
    try:
        yield d
    finally:
        adm = lizard.Lizard(api_url=d.url, api_key=d.admin_key)
        if d.alive():
            for sb in adm.list():
                adm.connect(sb.sandbox_id).kill()
        d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def client(d: Daemon, key: str = "") -> lizard.Lizard:
    return lizard.Lizard(api_url=d.url, api_key=key or d.admin_key)


def new_project(d: Daemon) -> str:
    return client(d).create_project(unique("meter")).id


def report(d: Daemon, project: str, **kw) -> dict:
    """The usage entry of one project (the admin's view)."""
    doc = client(d).usage(project=project, **kw)
    assert [p["project"] for p in doc["projects"]] == [project], doc
    return doc["projects"][0]


def create(d: Daemon, project: str, **kw) -> lizard.Sandbox:
    kw.setdefault("timeout_ms", 600_000)
    return lizard.Sandbox.create("tiny", project=project, api_url=d.url, api_key=d.admin_key, **kw)


def test_running_time_is_billed_at_the_size_price(meter):
    p = new_project(meter)
    t0 = time.time()
    sb = create(meter, p, size="small")
    assert sb.get_info().memory_mb == 128  # the size table came from the config file
    time.sleep(1.5)
    u = report(meter, p)
    wall = time.time() - t0
    c = u["compute"]
    assert 1.5 <= c["seconds"] <= wall + SLACK, (c, wall)
    assert c["cost"] == pytest.approx(c["seconds"] * 36 / 3600, rel=1e-6)
    assert c["bySize"] == {"small": c["bySize"]["small"]}
    assert c["bySize"]["small"]["seconds"] == pytest.approx(c["seconds"])
    assert u["total"] == pytest.approx(c["cost"] + u["volumes"]["cost"])
    sb.kill()


def test_default_size_price_and_killed_sandbox_stops_accruing(meter):
    p = new_project(meter)
    t0 = time.time()
    sb = create(meter, p)
    time.sleep(1.0)
    sb.kill()
    wall = time.time() - t0
    first = report(meter, p)["compute"]
    assert 1.0 <= first["seconds"] <= wall + SLACK
    assert first["cost"] == pytest.approx(first["seconds"] * 3.6 / 3600, rel=1e-6)
    time.sleep(1.0)
    assert report(meter, p)["compute"] == first  # closed at the kill


def test_paused_time_is_not_billed(meter):
    p = new_project(meter)
    t0 = time.time()
    sb = create(meter, p)
    sb.pause()
    sb.wait_for_status("paused")
    time.sleep(2.0)
    sb.resume()
    sb.wait_for_status("running")
    sb.kill()
    wall = time.time() - t0
    billed = report(meter, p)["compute"]["seconds"]
    # At least the 2 s asleep were paused; allow 0.5 s for what a slow
    # pause or resume leaves unbilled on either side of them.
    assert 0 < billed <= wall - 1.5, (billed, wall)


def test_period_clips_the_intervals(meter):
    p = new_project(meter)
    sb = create(meter, p)
    time.sleep(1.0)
    sb.kill()
    whole = report(meter, p)["compute"]["seconds"]
    # A window that ends before anything ran bills nothing; a window that
    # covers the whole life of the sandbox bills all of it.
    assert report(meter, p, from_="2020-01-01", to="2020-02-01")["compute"]["seconds"] == 0
    assert report(meter, p, from_="2020-01-01T00:00:00Z",
                  to="2099-01-01")["compute"]["seconds"] == pytest.approx(whole)


def test_volumes_accrue_gb_months(meter):
    p = new_project(meter)
    adm = lizard.Lizard(p, api_url=meter.url, api_key=meter.admin_key)
    t0 = time.time()
    v = adm.create_volume(unique("vol"), 1024)  # 1 GB
    time.sleep(1.0)
    vols = report(meter, p)["volumes"]
    month = 30 * 86400
    assert 1.0 / month <= vols["gbMonths"] <= (time.time() - t0 + SLACK) / month
    assert vols["cost"] == pytest.approx(vols["gbMonths"] * 2.0, rel=1e-6)
    v.delete()
    gone = report(meter, p)["volumes"]
    assert gone["gbMonths"] >= vols["gbMonths"]  # past usage stays reportable
    time.sleep(0.5)
    assert report(meter, p)["volumes"] == gone  # and stops accruing at the delete


def test_project_keys_see_only_their_project(meter):
    adm = client(meter)
    a, b = new_project(meter), new_project(meter)
    key_a = adm.create_key(unique("key"), project=a).key
    mine = client(meter, key_a).usage()
    assert [x["project"] for x in mine["projects"]] == [a]
    with pytest.raises(lizard.NotFoundError):
        client(meter, key_a).usage(project=b)
    everyone = {x["project"] for x in adm.usage()["projects"]}
    assert {a, b} <= everyone


def test_config_limit_is_overridden_by_the_flag(meter):
    # The file says 1 running sandbox per project, --max-running says 3.
    p = new_project(meter)
    made = [create(meter, p) for _ in range(3)]
    with pytest.raises(lizard.RateLimitError):
        create(meter, p)
    for sb in made:
        sb.kill()


def test_kill9_restart_keeps_usage(meter):
    p = new_project(meter)
    t0 = time.time()
    running = create(meter, p)
    done = create(meter, p, size="small")
    time.sleep(1.0)
    done.kill()
    before = report(meter, p)["compute"]
    meter.restart()  # kill -9 and start on the same data dir
    time.sleep(0.5)
    after = report(meter, p)["compute"]
    wall = time.time() - t0
    # The killed one's interval is unchanged; the running one kept its open
    # interval across the restart: no loss, and no second copy of it (which
    # would bill more than the wall time).
    assert after["bySize"]["small"] == before["bySize"]["small"]
    assert before["bySize"]["default"]["seconds"] + 0.5 <= after["bySize"]["default"]["seconds"]
    assert after["bySize"]["default"]["seconds"] <= wall + SLACK
    running.kill()


def test_sandbox_that_expired_while_down_is_billed_to_its_deadline(meter):
    p = new_project(meter)
    create(meter, p, timeout_ms=1500)
    meter.kill9()
    time.sleep(2.5)  # its deadline passes while lizardd is down
    meter.start()
    billed = report(meter, p)["compute"]["seconds"]
    assert 1.0 <= billed <= 1.5 + SLACK, billed


def test_bad_query_input_is_400(meter):
    adm = client(meter)
    for kw in ({"from_": "yesterday"}, {"to": "2024-13-01"}, {"from_": "2024-02-30"},
               {"from_": "2024-05-02", "to": "2024-05-01"}, {"from_": "2024-05-01",
                                                             "to": "2024-05-01"}):
        with pytest.raises(lizard.InvalidArgumentError):
            adm.usage(**kw)
    with pytest.raises(lizard.NotFoundError):
        adm.usage(project="no-such-project")


def test_cli_usage(meter):
    p = new_project(meter)
    sb = create(meter, p, size="small")
    time.sleep(0.2)  # some running time to report (create and kill can share a millisecond)
    sb.kill()
    env = {"LIZARD_API_URL": meter.url, "LIZARD_API_KEY": meter.admin_key, "PATH": "/usr/bin:/bin"}
    out = subprocess.run([str(LIZARD_CLI), "usage", "--project", p, "--json"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["projects"][0]["compute"]["bySize"]["small"]["seconds"] > 0
    table = subprocess.run([str(LIZARD_CLI), "usage", "--project", p, "--from", "2020-01-01"],
                           env=env, capture_output=True, text=True, timeout=60)
    assert table.returncode == 0, table.stderr
    assert p in table.stdout and "small" in table.stdout
    bad = subprocess.run([str(LIZARD_CLI), "usage", "--from", "soon"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "from" in bad.stderr


@pytest.mark.parametrize("cfg, want", [
    ('{"sizes": [{"name": "default", "cpuCount": 1, "memoryMB": 64, "pricePerHour": 1,'
     ' "gpus": 1}]}', "unknown key 'gpus' in sizes[0]"),
    ('{"maxRunning": 3}', "unknown key 'maxRunning'"),
    ('{"sizes": [{"name": "tiny", "cpuCount": 1, "memoryMB": 64, "pricePerHour": 1}]}',
     '"default"'),
    ('{"diskMB": ', "line 1"),
])
def test_bad_config_fails_at_start(cfg, want):
    tmp = Path(tempfile.mkdtemp(prefix="lz-cfg-"))
    try:
        (tmp / "c.json").write_text(cfg)
        p = subprocess.run([str(LIZARDD), "--config", str(tmp / "c.json"), "--data-dir",
                            str(tmp / "data"), "--template-dir", str(TEMPLATE_DIR),
                            "--listen", "127.0.0.1:%d" % free_port()],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 2, (p.returncode, p.stderr)
        assert want in p.stderr and str(tmp / "c.json") in p.stderr, p.stderr
        assert not (tmp / "data").exists()  # nothing started
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
