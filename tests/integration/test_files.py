"""Files through the Python SDK: text, binary, large and streamed transfers,
list/stat/mkdir/remove/rename, ownership and path checks."""

import hashlib
import io
import os
import tempfile

import lizard
import pytest

from conftest import unique


def test_text_round_trip_and_exec_sees_it(tiny):
    tiny.fs.write("/tmp/task.sh", "echo 42\n")
    assert tiny.fs.read("/tmp/task.sh") == "echo 42\n"
    assert tiny.process.exec_("sh /tmp/task.sh").stdout == "42\n"
    tiny.fs.write("/tmp/utf8.txt", "héllo wörld ✓\n")
    assert tiny.fs.read("/tmp/utf8.txt") == "héllo wörld ✓\n"
    assert tiny.process.exec_("wc -c < /tmp/utf8.txt").stdout.strip() == str(
        len("héllo wörld ✓\n".encode()))


def test_binary_all_byte_values(tiny):
    data = bytes(range(256)) * 4
    tiny.fs.write("/tmp/bin", data)
    assert tiny.fs.read_bytes("/tmp/bin") == data
    r = tiny.process.exec_("sha256sum /tmp/bin")
    assert r.stdout.split()[0] == hashlib.sha256(data).hexdigest()


def test_empty_file(tiny):
    tiny.fs.write("/tmp/empty", b"")
    assert tiny.fs.read_bytes("/tmp/empty") == b""
    assert tiny.fs.stat("/tmp/empty").size == 0


def test_overwrite_truncates(tiny):
    tiny.fs.write("/tmp/ow", "long content here")
    tiny.fs.write("/tmp/ow", "short")
    assert tiny.fs.read("/tmp/ow") == "short"


def test_20mb_round_trip(tiny):
    data = os.urandom(20 << 20)
    info = tiny.fs.write("/tmp/big.bin", data)
    assert info.size == len(data)
    r = tiny.process.exec_("sha256sum /tmp/big.bin")
    assert r.stdout.split()[0] == hashlib.sha256(data).hexdigest()
    assert tiny.fs.read_bytes("/tmp/big.bin") == data


def test_streamed_write_from_file_and_chunked(tiny):
    data = os.urandom(5 << 20)
    with tempfile.TemporaryFile() as f:  # a real file: sent with Content-Length
        f.write(data)
        f.seek(0)
        assert tiny.fs.write("/tmp/from-file", f).size == len(data)
    # A file object of unknown size: sent chunked.
    assert tiny.fs.write("/tmp/from-stream", io.BufferedReader(io.BytesIO(data))).size == len(data)
    for p in ("/tmp/from-file", "/tmp/from-stream"):
        out = io.BytesIO()
        assert tiny.fs.read_to(p, out) == len(data)
        assert out.getvalue() == data


def test_parents_created_and_list_stat(tiny):
    d = "/tmp/" + unique("dir")
    tiny.fs.write(d + "/a/b/c.txt", "x")
    st = tiny.fs.stat(d + "/a/b")
    assert st.type in ("dir", "directory")
    st = tiny.fs.stat(d + "/a/b/c.txt")
    assert (st.type, st.size, st.name) == ("file", 1, "c.txt")
    assert st.path == d + "/a/b/c.txt"
    tiny.fs.write(d + "/a/two", "22")
    names = sorted(e.name for e in tiny.fs.list(d + "/a"))
    assert names == ["b", "two"]
    by_name = {e.name: e for e in tiny.fs.list(d + "/a")}
    assert by_name["two"].size == 2 and by_name["b"].is_dir


def test_mkdir_remove_rename(tiny):
    d = "/tmp/" + unique("m")
    tiny.fs.mkdir(d + "/x/y")
    tiny.fs.mkdir(d + "/x/y")  # mkdir -p: no error if it exists
    assert tiny.fs.stat(d + "/x/y").is_dir
    tiny.fs.write(d + "/x/y/f", "data")
    tiny.fs.rename(d + "/x/y/f", d + "/g")
    assert tiny.fs.read(d + "/g") == "data"
    assert not tiny.fs.exists(d + "/x/y/f")
    tiny.fs.remove(d + "/g")
    with pytest.raises(lizard.NotFoundError):
        tiny.fs.stat(d + "/g")
    with pytest.raises(lizard.ConflictError):
        tiny.fs.remove(d + "/x")  # not empty without recursive
    tiny.fs.remove(d + "/x", recursive=True)
    assert not tiny.fs.exists(d + "/x")


def test_ownership_is_the_requesting_user(base):
    d = "/tmp/" + unique("own")
    base.fs.write(d + "/by-user/f.txt", "u", user="user")
    st = base.fs.stat(d + "/by-user/f.txt")
    assert (st.uid, st.gid) == (1000, 1000)
    assert base.fs.stat(d + "/by-user").uid == 1000  # created parent too
    base.fs.write(d + "/by-root.txt", "r")
    assert base.fs.stat(d + "/by-root.txt").uid == 0
    r = base.process.exec_("stat -c %u " + d + "/by-user/f.txt")
    assert r.stdout.strip() == "1000"
    base.fs.mkdir("/home/user/newdir", user="user")
    assert base.fs.stat("/home/user/newdir").uid == 1000


def test_permission_denied_for_user(base):
    with pytest.raises(lizard.ForbiddenError):
        base.fs.write("/root/nope.txt", "x", user="user")
    with pytest.raises(lizard.ForbiddenError):
        base.fs.read("/etc/shadow", user="user")


def test_dotdot_and_relative_paths_rejected(tiny):
    for bad in ("/tmp/../etc/passwd", "/..", "tmp/x", "/tmp/a/../../b"):
        with pytest.raises(lizard.InvalidArgumentError) as ei:
            tiny.fs.read(bad)
        assert ei.value.status == 400
    with pytest.raises(lizard.InvalidArgumentError):
        tiny.fs.write("/tmp/../x", "x")


def test_symlink_cannot_escape(tiny):
    """A symlink inside the sandbox resolves inside the sandbox's root."""
    marker = unique("hostfile")
    host_path = "/tmp/" + marker
    with open(host_path, "w") as f:
        f.write("HOST SECRET")
    try:
        tiny.process.exec_("ln -sf %s /tmp/link-out" % host_path)
        with pytest.raises(lizard.NotFoundError):
            tiny.fs.read("/tmp/link-out")
    finally:
        os.unlink(host_path)


def test_missing_file_is_not_found(tiny):
    with pytest.raises(lizard.NotFoundError) as ei:
        tiny.fs.read("/tmp/definitely-missing")
    assert ei.value.status == 404 and str(ei.value)
    with pytest.raises(lizard.NotFoundError):
        tiny.fs.list("/tmp/definitely-missing-dir")


def test_read_a_directory_is_an_error(tiny):
    with pytest.raises(lizard.InvalidArgumentError):
        tiny.fs.read("/tmp")
