"""Persistent volumes (issue 5, docs/api.md "Volumes", docs/volumes.md):
the API and its bad input, attachment rules, data across kill, expiry and a
kill -9 of lizardd, the size limit, ownership, mount paths, the CLI."""

from __future__ import annotations

import glob
import json

import pytest

import lizard
from conftest import assert_error, unique, wait_until


@pytest.fixture
def volumes(daemon):
    """Makes volumes (in the admin key's project) and deletes them after the test."""
    made = []
    client = lizard.Lizard()

    def make(size_mb: int = 16, name: str = "") -> lizard.Volume:
        v = client.create_volume(name or unique("vol"), size_mb)
        made.append(v)
        return v

    yield make
    for v in made:
        try:
            # Teardown may run before make_sandbox's: free the volume first.
            holder = client.get_volume(v.id).attached_to
            if holder:
                client.connect(holder).kill()
            client.delete_volume(v.id)
        except lizard.NotFoundError:
            pass


def gone(sb: lizard.Sandbox) -> bool:
    try:
        sb.get_info()
        return False
    except lizard.NotFoundError:
        return True


def loop_backed(image_suffix: str) -> bool:
    """True while some loop device is backed by a file ending in image_suffix."""
    for f in glob.glob("/sys/block/loop*/loop/backing_file"):
        try:
            if open(f).read().strip().endswith(image_suffix):
                return True
        except OSError:
            pass
    return False


# ---- the API ----

def test_create_list_get_delete(raw, volumes):
    name = unique("data")
    v = volumes(16, name)
    assert v.id.startswith("vol_") and v.name == name and v.size_mb == 16
    assert v.attached_to is None and v.project.startswith("proj_") and v.created_at
    assert v.id in [x.id for x in lizard.Volume.list()]
    assert lizard.Lizard().get_volume(name) == v  # by name
    st, _, body = raw("GET", "/v1/volumes/" + v.id)
    assert st == 200 and body == v.to_dict()
    assert set(body) == {"id", "name", "project", "sizeMB", "createdAt", "attachedTo"}
    st, _, _ = raw("DELETE", "/v1/volumes/" + name)
    assert st == 204
    st, _, body = raw("GET", "/v1/volumes/" + v.id)
    assert_error(st, body, 404, "not_found")
    assert v.id not in [x.id for x in lizard.Volume.list()]
    with pytest.raises(lizard.NotFoundError):
        v.delete()


@pytest.mark.parametrize("body", [
    {"sizeMB": 16},
    {"name": "", "sizeMB": 16},
    {"name": "a/b", "sizeMB": 16},
    {"name": "..", "sizeMB": 16},
    {"name": "vol_abcdef", "sizeMB": 16},  # shaped like an id
    {"name": 5, "sizeMB": 16},
    {"name": "x" * 65, "sizeMB": 16},
    {"name": "x"},
    {"name": "x", "sizeMB": 0},
    {"name": "x", "sizeMB": -1},
    {"name": "x", "sizeMB": "16"},
    {"name": "x", "sizeMB": 1.5},
    {"name": "x", "sizeMB": 1048577},
    {"name": "x", "sizeMB": 2 ** 63},
    [1, 2],
])
def test_create_bad_input_is_400(raw, body):
    st, _, out = raw("POST", "/v1/volumes", body)
    assert_error(st, out, 400, "bad_request")


def test_create_bad_json_and_methods(raw):
    st, _, out = raw("POST", "/v1/volumes", "{not json")
    assert_error(st, out, 400)
    st, _, out = raw("PUT", "/v1/volumes")
    assert_error(st, out, 405)
    st, _, out = raw("POST", "/v1/volumes/whatever")
    assert_error(st, out, 405)
    st, _, out = raw("GET", "/v1/volumes/" + unique("missing"))
    assert_error(st, out, 404, "not_found")
    st, _, out = raw("DELETE", "/v1/volumes/vol_doesnotexist")
    assert_error(st, out, 404, "not_found")


def test_duplicate_name_is_409(raw, volumes):
    v = volumes(8)
    st, _, out = raw("POST", "/v1/volumes", {"name": v.name, "sizeMB": 8})
    assert_error(st, out, 409, "conflict")
    with pytest.raises(lizard.ConflictError):
        lizard.Volume.create(v.name, 8)


def test_other_projects_volumes_are_404(raw, admin, volumes):
    p = admin.create_project(unique("volproj"))
    key = admin.create_key(unique("volkey"), project=p.id).key
    mine = volumes(8)
    for method, path in (("GET", "/v1/volumes/" + mine.id), ("GET", "/v1/volumes/" + mine.name),
                         ("DELETE", "/v1/volumes/" + mine.id)):
        st, _, out = raw(method, path, key=key)
        assert_error(st, out, 404, "not_found")
    st, _, out = raw("GET", "/v1/volumes", key=key)
    assert st == 200 and out == {"volumes": []}
    st, _, out = raw("POST", "/v1/sandboxes",
                     {"template": "tiny", "volumes": [{"volume": mine.id}]}, key=key)
    assert_error(st, out, 404, "not_found")
    # Names are per project: the other project may use the same one.
    theirs = lizard.Volume.create(mine.name, 8, api_key=key)
    assert theirs.id != mine.id and theirs.project == p.id
    assert lizard.Volume.get(mine.name, api_key=key).id == theirs.id
    theirs.delete()
    assert lizard.Volume.get(mine.id).attached_to is None  # untouched


@pytest.mark.parametrize("vols", [
    "data",
    [{"mountPath": "/x"}],
    [{"volume": 5}],
    [{"volume": "V", "mountPath": "relative"}],
    [{"volume": "V", "mountPath": "/"}],
    [{"volume": "V", "mountPath": "/proc"}],
    [{"volume": "V", "mountPath": "/dev/shm"}],
    [{"volume": "V", "mountPath": "/sys/x"}],
    [{"volume": "V", "mountPath": "/a/../etc"}],
    [{"volume": "V", "mountPath": "/a//b"}],
    [{"volume": "V", "mountPath": "/x" * 200}],
    [{"volume": "V"}, {"volume": "W"}],  # both at /workspace
    [{"volume": "V", "mountPath": "/d%d" % i} for i in range(9)],
])
def test_sandbox_bad_volumes_is_400(raw, volumes, vols):
    v = volumes(8)
    body = json.loads(json.dumps(vols).replace('"V"', json.dumps(v.name)))
    st, _, out = raw("POST", "/v1/sandboxes", {"template": "tiny", "volumes": body})
    assert_error(st, out, 400, "bad_request")
    assert lizard.Volume.get(v.id).attached_to is None


def test_sandbox_unknown_or_repeated_volume(raw, volumes):
    v = volumes(8)
    st, _, out = raw("POST", "/v1/sandboxes",
                     {"template": "tiny", "volumes": [{"volume": unique("nope")}]})
    assert_error(st, out, 404, "not_found")
    # One known and one unknown: nothing stays attached.
    st, _, out = raw("POST", "/v1/sandboxes", {"template": "tiny", "volumes": [
        {"volume": v.id, "mountPath": "/a"}, {"volume": "vol_nope", "mountPath": "/b"}]})
    assert_error(st, out, 404, "not_found")
    st, _, out = raw("POST", "/v1/sandboxes", {"template": "tiny", "volumes": [
        {"volume": v.id, "mountPath": "/a"}, {"volume": v.name, "mountPath": "/b"}]})
    assert_error(st, out, 400, "bad_request")
    assert lizard.Volume.get(v.id).attached_to is None


# ---- attachment and persistence ----

def test_data_survives_kill_and_one_sandbox_at_a_time(raw, make_sandbox, volumes):
    v = volumes(16)
    first = make_sandbox("tiny", volumes=[{"volume": v.name}])
    first.fs.write("/workspace/notes.txt", "kept")
    assert first.process.exec_("echo more >> /workspace/notes.txt").exit_code == 0
    assert lizard.Volume.get(v.id).attached_to == first.sandbox_id
    # A second attach and a delete while attached are both 409.
    with pytest.raises(lizard.ConflictError):
        make_sandbox("tiny", volumes=[v])
    st, _, out = raw("DELETE", "/v1/volumes/" + v.id)
    assert_error(st, out, 409, "conflict")
    first.kill()
    assert lizard.Volume.get(v.id).attached_to is None
    assert not loop_backed(v.id + ".img"), "loop device not released after kill"
    second = make_sandbox("tiny", volumes=[v.id])
    assert second.fs.read("/workspace/notes.txt") == "keptmore\n"


def test_data_survives_expiry(make_sandbox, volumes):
    v = volumes(16)
    sb = make_sandbox("tiny", timeout_ms=2000, volumes=[v])
    sb.fs.write("/workspace/f", "before expiry")
    assert wait_until(lambda: gone(sb), 30), "sandbox did not expire"
    # The sandbox answers 404 from the moment its stop begins; the volume is
    # released once the stop has unmounted it (never earlier: two mounts of
    # one ext4 image would corrupt it), a moment later.
    assert wait_until(lambda: lizard.Volume.get(v.id).attached_to is None, 10), \
        "volume still attached after the sandbox expired"
    again = make_sandbox("tiny", volumes=[v])
    assert again.fs.read("/workspace/f") == "before expiry"


def test_data_and_attachment_survive_lizardd_kill9(daemon, make_sandbox, volumes):
    v = volumes(16)
    sb = make_sandbox("tiny", volumes=[v])
    sb.fs.write("/workspace/f", "before crash")
    daemon.kill9()
    daemon.start()
    # The sandbox kept running with its volume mounted, still attached.
    assert sb.process.exec_("cat /workspace/f").stdout == "before crash"
    assert lizard.Volume.get(v.id).attached_to == sb.sandbox_id
    with pytest.raises(lizard.ConflictError):
        make_sandbox("tiny", volumes=[v])
    sb.fs.write("/workspace/g", "after restart")
    sb.kill()
    again = make_sandbox("tiny", volumes=[v])
    assert again.process.exec_("cat /workspace/f /workspace/g").stdout == \
        "before crashafter restart"


def test_full_volume_is_enospc_and_nothing_else_breaks(daemon, make_sandbox, volumes):
    v = volumes(16)
    sb = make_sandbox("tiny", volumes=[v])
    r = sb.process.exec_("dd if=/dev/zero of=/workspace/big bs=1M count=32")
    assert r.exit_code != 0 and "No space left on device" in r.stderr
    # The sandbox, its own disk and the daemon carry on.
    assert sb.process.exec_("echo ok > /tmp/ok && cat /tmp/ok").stdout == "ok\n"
    assert daemon.healthy()
    with pytest.raises(lizard.LizardError):
        sb.fs.write("/workspace/more", b"x" * (4 << 20))
    r = sb.process.exec_("rm /workspace/big && echo fits > /workspace/small && cat /workspace/small")
    assert r.stdout == "fits\n"
    # Usable size is the volume's size less ext4's metadata and journal.
    df = sb.process.exec_("df -k /workspace | tail -1").stdout.split()
    assert 12 * 1024 <= int(df[1]) <= 16 * 1024


def test_files_are_owned_by_their_writer(make_sandbox, volumes):
    v = volumes(16)
    sb = make_sandbox("base", volumes=[v])
    assert sb.process.exec_("stat -c %U /workspace").stdout == "user\n"
    assert sb.process.exec_("echo u > /workspace/by-user", user="user").exit_code == 0
    assert sb.process.exec_("echo r > /workspace/by-root").exit_code == 0
    sb.fs.write("/workspace/api-user", "x", user="user")
    out = sb.process.exec_("stat -c '%n %U %G' /workspace/by-user /workspace/by-root "
                           "/workspace/api-user").stdout
    assert out.splitlines() == ["/workspace/by-user user user", "/workspace/by-root root root",
                                "/workspace/api-user user user"]
    # An empty volume is empty: no lost+found owned by someone unknown.
    fresh = volumes(8)
    sb2 = make_sandbox("tiny", volumes=[{"volume": fresh.id, "mountPath": "/data"}])
    assert sb2.process.exec_("ls -A /data").stdout == ""


def test_custom_mount_paths_and_two_volumes(make_sandbox, volumes):
    a, b = volumes(8), volumes(8)
    sb = make_sandbox("tiny", volumes=[{"volume": a.name, "mountPath": "/mnt/deep/a"},
                                       {"volume": b, "mount_path": "/srv/b"}])
    mounts = sb.process.exec_("grep -E ' /mnt/deep/a | /srv/b ' /proc/mounts").stdout
    assert len(mounts.splitlines()) == 2 and "ext4" in mounts
    sb.fs.write("/mnt/deep/a/which", "a")
    sb.fs.write("/srv/b/which", "b")
    sb.kill()
    # Swapped places in the next sandbox: the data follows the volume.
    sb2 = make_sandbox("tiny", volumes=[{"volume": b.id, "mountPath": "/mnt/deep/a"},
                                        {"volume": a.id, "mountPath": "/workspace"}])
    assert sb2.fs.read("/mnt/deep/a/which") == "b"
    assert sb2.fs.read("/workspace/which") == "a"


def test_cli_volume_commands(cli, make_sandbox):
    name = unique("clivol")
    rc, out, err = cli("volume", "create", name, "--size", "8")
    assert rc == 0, err
    assert name in out
    rc, out, _ = cli("--json", "volume", "ls")
    vol = [v for v in json.loads(out)["volumes"] if v["name"] == name][0]
    assert vol["sizeMB"] == 8
    rc, out, err = cli("sandbox", "create", "tiny", "--volume", name + ":/data")
    assert rc == 0, err
    sb = lizard.Sandbox.connect(out.strip())
    make_sandbox.made.append(sb)
    assert sb.process.exec_("grep -c ' /data ' /proc/mounts").stdout == "1\n"
    rc, out, err = cli("volume", "rm", name)
    assert rc != 0 and "attached" in err
    sb.kill()
    rc, out, err = cli("volume", "rm", vol["id"])
    assert rc == 0, err
    rc, _, err = cli("volume", "rm", vol["id"])
    assert rc != 0 and "not found" in err
    rc, _, err = cli("volume", "create", "x")
    assert rc == 2 and "--size" in err
