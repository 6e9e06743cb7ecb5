"""The package's PEP 517 build backend, standard library only.

`pip install /path/to/rpcctl/clients/python` then needs no network: pip's isolated build would
otherwise fetch setuptools and wheel from PyPI first, which fails on the air-gapped hosts where
merchants run payment code. The package is pure Python, so a wheel is a zip of `rpcctl/` and
three metadata files (PEP 427, PEP 566); an editable install is a `.pth` line (PEP 660).
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "rpcctl"
TAG = "py3-none-any"


def _project():
    """[project] of pyproject.toml: tomllib where it exists (3.11+), else its simple `key = "value"` lines."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        text = f.read()
    try:
        import tomllib
        return tomllib.loads(text.decode("utf-8"))["project"]
    except ImportError:
        section = text.decode("utf-8").split("[project]", 1)[1].split("\n[", 1)[0]
        return dict(re.findall(r'^([a-z-]+)\s*=\s*"([^"]*)"', section, re.M))


def _metadata(project):
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {project['name']}\nVersion: {project['version']}\n"
        f"Summary: {project['description']}\nRequires-Python: {project['requires-python']}\n"
        "License: MIT\nDescription-Content-Type: text/markdown\n\n" + readme
    )


def _dist_info(project):
    return f"{project['name']}-{project['version']}.dist-info"


def _wheel(wheel_directory, files):
    """Writes a wheel of `files` (archive name -> bytes) with its metadata and RECORD; returns its name."""
    project = _project()
    info = _dist_info(project)
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata(project).encode("utf-8")
    files[f"{info}/WHEEL"] = f"Wheel-Version: 1.0\nGenerator: rpcctl _build\nRoot-Is-Purelib: true\nTag: {TAG}\n".encode()
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    filename = f"{project['name']}-{project['version']}-{TAG}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return filename


def _sources():
    out = {}
    for name in sorted(os.listdir(os.path.join(ROOT, PACKAGE))):
        if name.endswith(".py") or name == "py.typed":
            with open(os.path.join(ROOT, PACKAGE, name), "rb") as f:
                out[f"{PACKAGE}/{name}"] = f.read()
    return out


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, _sources())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, {f"_{PACKAGE}_editable.pth": (ROOT + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = f"{project['name']}-{project['version']}"
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as tar:
        for name in ["pyproject.toml", "README.md", "_build/backend.py", *_sources()]:
            tar.add(os.path.join(ROOT, name), arcname=f"{base}/{name}")
        pkg_info = _metadata(project).encode("utf-8")
        member = tarfile.TarInfo(f"{base}/PKG-INFO")
        member.size = len(pkg_info)
        tar.addfile(member, io.BytesIO(pkg_info))
    return filename
