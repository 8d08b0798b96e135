"""A tiny in-tree PEP 517 build backend for lizard-sdk.

pip builds packages in an isolated environment and downloads the backend
named in pyproject.toml into it. Lizard hosts often have no PyPI, so this
backend needs nothing but the standard library: `pip install ./sdk/python`
works offline. The package is pure Python, so a wheel is just a zip of the
`lizard` package plus the dist-info files.
"""
import base64
import io
import hashlib
import os
import tarfile
import zipfile

NAME = "lizard_sdk"
DIST = "lizard-sdk"
VERSION = "0.1.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "lizard"


def _metadata():
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {DIST}\n"
        f"Version: {VERSION}\n"
        "Summary: Python SDK for Lizard sandboxes\n"
        "License: Apache-2.0\n"
        "Requires-Python: >=3.9\n"
        "Description-Content-Type: text/markdown\n"
        "\n" + readme
    )


def _package_files():
    root = os.path.join(HERE, PACKAGE)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in sorted(filenames):
            if name.endswith((".py", ".typed")):
                full = os.path.join(dirpath, name)
                yield full, os.path.relpath(full, HERE).replace(os.sep, "/")


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel_name = f"{NAME}-{VERSION}-py3-none-any.whl"
    info = f"{NAME}-{VERSION}.dist-info"
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w",
                         zipfile.ZIP_DEFLATED) as whl:
        def add(arcname, data):
            whl.writestr(arcname, data)
            records.append(_record_line(arcname, data))

        for full, arcname in _package_files():
            with open(full, "rb") as f:
                add(arcname, f.read())
        add(f"{info}/METADATA", _metadata().encode())
        add(f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: lizard_build\n"
                             b"Root-Is-Purelib: true\nTag: py3-none-any\n")
        records.append(f"{info}/RECORD,,")
        whl.writestr(f"{info}/RECORD", "\n".join(records) + "\n")
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{VERSION}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for rel in ("pyproject.toml", "README.md", "_build/lizard_build.py"):
            tar.add(os.path.join(HERE, rel), f"{base}/{rel}")
        for full, arcname in _package_files():
            tar.add(full, f"{base}/{arcname}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)

        tar.addfile(info, io.BytesIO(data))
    return name
