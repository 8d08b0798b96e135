#!/usr/bin/python3
"""Last steps of a template build (called by lib.sh; standard library only).

  shift    chown every file of the rootfs to uid+BASE / gid+BASE
  meta     write meta.json
  install  move the finished build into place atomically
"""
import argparse
import ctypes
import datetime
import errno
import json
import os
import shutil
import stat
import sys
import time

CAP_XATTR = "security.capability"


def shift_one(path, st, base):
    # chown(2) clears setuid/setgid bits and file capabilities, so both are
    # read before and put back after: a rootfs without a working `su` or
    # `ping` would be a different template.
    caps = None
    if not stat.S_ISLNK(st.st_mode):
        try:
            caps = os.getxattr(path, CAP_XATTR, follow_symlinks=False)
        except OSError:
            caps = None
    os.lchown(path, st.st_uid + base, st.st_gid + base)
    if stat.S_ISLNK(st.st_mode):
        return
    if st.st_mode & (stat.S_ISUID | stat.S_ISGID):
        os.chmod(path, stat.S_IMODE(st.st_mode))
    if caps is not None:
        os.setxattr(path, CAP_XATTR, caps, follow_symlinks=False)


def cmd_shift(args):
    base = args.uid_base
    seen = set()  # hard links share an inode: shift each inode once
    root_st = os.lstat(args.rootfs)
    stack = [args.rootfs]
    count = 0
    while stack:
        path = stack.pop()
        st = os.lstat(path)
        if st.st_dev != root_st.st_dev:
            sys.exit("refusing to cross a mount point: " + path)
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            if st.st_uid >= base or st.st_gid >= base:
                sys.exit("already shifted (uid %d): %s" % (st.st_uid, path))
            shift_one(path, st, base)
            count += 1
        if stat.S_ISDIR(st.st_mode):
            with os.scandir(path) as it:
                stack.extend(e.path for e in it)
    print("  shifted %d inodes" % count)


def tree_size(root):
    seen = set()
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            st = os.lstat(os.path.join(dirpath, name))
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += st.st_size
    return total


def cmd_meta(args):
    now = datetime.datetime.now(datetime.timezone.utc)
    meta = {
        "name": args.name,
        "description": args.description,
        "sizeBytes": tree_size(args.rootfs),
        "builtAt": now.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (now.microsecond // 1000),
        "buildSeconds": round(time.time() - args.started, 1),
        "uidBase": args.uid_base,
    }
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, args.out)


def rename_exchange(a, b):
    """renameat2(RENAME_EXCHANGE): swap two paths in one step, so readers see
    the old template or the new one, never no template."""
    libc = ctypes.CDLL(None, use_errno=True)
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    fn = libc.renameat2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), a)


def cmd_install(args):
    # Make the new tree durable before it becomes visible under its name.
    os.sync()
    try:
        os.rename(args.work, args.target)
        return
    except OSError as e:
        if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
            raise
    rename_exchange(args.work, args.target)
    # args.work now holds the previous build. Sandboxes that were started
    # from it keep their overlay mounts on the old directory inodes; the
    # daemon is expected to use a template only while its files exist, so
    # rebuilding under running sandboxes of that template is the caller's call.
    shutil.rmtree(args.work)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("shift")
    s.add_argument("--rootfs", required=True)
    s.add_argument("--uid-base", type=int, required=True)
    m = sub.add_parser("meta")
    m.add_argument("--rootfs", required=True)
    m.add_argument("--uid-base", type=int, required=True)
    m.add_argument("--name", required=True)
    m.add_argument("--description", required=True)
    m.add_argument("--started", type=float, required=True)
    m.add_argument("--out", required=True)
    i = sub.add_parser("install")
    i.add_argument("--work", required=True)
    i.add_argument("--target", required=True)
    args = p.parse_args()
    {"shift": cmd_shift, "meta": cmd_meta, "install": cmd_install}[args.cmd](args)


if __name__ == "__main__":
    main()
