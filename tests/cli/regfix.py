"""The registries of the CLI tests: Registry, a signed directory registry
built with the CLI (tests/cli/conftest.py's `reg` fixture fills one with
what a test module's REGISTRY lists); project(), a plugins.json naming it;
what a prefix has installed; an install's stderr without its summary; and
the environments with and without the IREE of .venv; and the registries
more than one test module uses."""
import json
import os
import pathlib
import re
import sys

from conftest import data_package, pack, run


class Registry:
    """A signed directory registry with a key pair, built with the CLI."""

    def __init__(self, root: pathlib.Path):
        self.root = root
        self.dir = root / "registry"
        self.dist = root / "dist"
        self.src = root / "src"
        base = root / "keys" / "registry"
        base.parent.mkdir(parents=True)
        r = run("key", "generate", "-o", base)
        assert r.code == 0, r
        self.key = pathlib.Path(str(base) + ".key")
        self.pub_file = pathlib.Path(str(base) + ".pub")
        self.pub = self.pub_file.read_text().splitlines()[1].strip()
        r = run("registry", "init", self.dir, "--key", self.key, "--name", "test")
        assert r.code == 0, r

    def publish_archive(self, archive):
        r = run("publish", archive, "--registry", self.dir, "--key", self.key)
        assert r.code == 0, r
        return archive

    def publish(self, name, version, dependencies=None, requires=None,
                files=None):
        d = data_package(self.src, name, version, dependencies, files)
        if requires:
            m = json.loads((d / "ireeplugin.json").read_text())
            m["requires"] = requires
            (d / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
        return self.publish_archive(pack(d, self.dist))

    def yank(self, spec):
        r = run("yank", spec, "--registry", self.dir, "--key", self.key)
        assert r.code == 0, r

    def index(self, name):
        return json.loads((self.dir / "index" / f"{name}.json").read_text())


def write_project(d, registry, plugins, **fields):
    """Writes d/plugins.json (making d): one registry (its entry), `plugins`,
    then `fields` (platforms, choose, ..., or another value for one of
    those)."""
    d.mkdir(parents=True, exist_ok=True)
    p = {"schema_version": 1, "registries": [registry], "plugins": plugins,
         **fields}
    (d / "plugins.json").write_text(json.dumps(p, indent=2) + "\n")
    return d


def project(tmp_path, reg, plugins, platforms=None, extra=None):
    """A project in tmp_path/proj naming `reg` as the registry "test", by
    a relative URL."""
    d = tmp_path / "proj"
    registry = {"name": "test", "url": os.path.relpath(reg.dir, d),
                "public_key": reg.pub}
    fields = {"platforms": platforms} if platforms else {}
    fields.update(extra or {})
    return write_project(d, registry, plugins, **fields)


# What ends the stderr of an install or sync that changed something.
SUMMARY = re.compile(r"(Downloaded \d+ packages? \(\d+(\.\d)? (B|KiB|MiB)\) in \S+\n)?"
                     r"Installed \d+ packages? in \S+\n\Z")


def without_summary(err):
    """`err` without its summary lines, which must be there."""
    m = SUMMARY.search(err)
    assert m, err
    return err[:m.start()]


def installed(prefix):
    st = json.loads((prefix / "state" / "installed.json").read_text())
    return {p["name"]: p for p in st["packages"]}


# The pinned IREE wheels of .venv: iree-base-compiler 3.13.0, whose
# `iree-compile --version` says 3.13.0rc20261016.
VENV_BIN = pathlib.Path(sys.executable).parent
WITH_IREE = {"PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
WITHOUT_IREE = {"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": ""}
IREE_SOURCE = f"iree-base-compiler 3.13.0 ({VENV_BIN}/iree-compile)"


def http_project(tmp_path, url, reg, plugins, mirrors=None):
    """A project in tmp_path/proj naming `reg`, served at `url`, as the
    registry "web"."""
    entry = {"name": "web", "url": url, "public_key": reg.pub}
    if mirrors:
        entry["mirrors"] = mirrors
    return write_project(tmp_path / "proj", entry, plugins)


# Registries as the `reg` fixture reads them from a module's REGISTRY and
# YANKED (see conftest.py). Two releases of base-kernels and fft-kit, which
# depends on it:
FFT_KIT = [
    ("base-kernels", "1.0.0"),
    ("base-kernels", "1.1.0"),
    ("fft-kit", "1.0.0", {"base-kernels": "^1.0"}),
]
# The projects' commands (add, rm, sync, update): the same with an older
# base-kernels that is yanked, and a package nothing depends on.
PROJECT_REGISTRY = [
    ("base-kernels", "1.0.0"),
    ("base-kernels", "1.1.0"),
    ("base-kernels", "0.9.0"),
    ("fft-kit", "1.0.0", {"base-kernels": "^1.0"}),
    ("extra", "2.0.0"),
]
PROJECT_YANKED = ["base-kernels@0.9.0"]
