"""Install is where native libraries are checked against their manifest: an
archive made by hand (archive_forge.py) that `pack` would refuse is refused
by `install` with the same check, naming the archive's manifest
(line:column), the package, the member and the manifest pointer, and the
prefix (and the package cache) are left as they were.

Also: every image of a FatELF file gets the checks of an embedded ELF, at
pack and at install; inspection results are cached by content, so that
installing a version again does not run ireepkg-inspect."""
import json
import os
import pathlib
import shutil
import subprocess

import pytest

from archive_forge import MANIFEST, file, forge, manifest_bytes, snapshot
from conftest import EXAMPLES, run

QUERY = "iree_hal_executable_plugin_query"

PLUGIN_C = r"""
typedef struct { unsigned version; const char *name; } header_t;
static const header_t kHeader = {1, "native-check-test"};
static const header_t *const kHeaderPtr = &kHeader;
__attribute__((visibility("default"))) const header_t *const *
iree_hal_executable_plugin_query(unsigned max_version, void *reserved) {
  return max_version >= 1 ? &kHeaderPtr : 0;
}
"""

# No query function: only something else is exported.
NO_QUERY_C = r"""
__attribute__((visibility("default"))) int plugin_version(void) { return 1; }
"""

# A system library: links libc.
GLIBC_C = r"""
#include <stdio.h>
__attribute__((visibility("default"))) const void *
iree_hal_executable_plugin_query(unsigned max_version, void *reserved) {
  puts("hello");
  return 0;
}
"""

TARGETS = {"x86_64": "x86_64-none-elf", "aarch64": "aarch64-none-elf",
           "riscv64": "riscv64-none-elf"}


def freestanding(d, name, source, arch):
    c = d / f"{name}.c"
    c.write_text(source)
    obj, out = d / f"{name}.{arch}.o", d / f"{name}.{arch}.so"
    flags = ["-march=rv64gc"] if arch == "riscv64" else []
    subprocess.run(["clang-22", "-target", TARGETS[arch], *flags, "-std=c17", "-O2",
                    "-fPIC", "-ffreestanding", "-nostdlib", "-fvisibility=hidden",
                    "-c", c, "-o", obj], check=True)
    subprocess.run(["ld.lld-22", "-shared", "--build-id=none", "-nostdlib", "-static",
                    "--no-undefined", obj, "-o", out], check=True)
    return out.read_bytes()


@pytest.fixture(scope="module")
def elf(tmp_path_factory):
    """The bytes of the ELF files the cases are made of."""
    d = tmp_path_factory.mktemp("elf")
    out = {arch: freestanding(d, "plugin", PLUGIN_C, arch) for arch in TARGETS}
    out["no_query"] = freestanding(d, "noquery", NO_QUERY_C, "x86_64")
    (d / "glibc.c").write_text(GLIBC_C)
    subprocess.run(["clang-22", "-shared", "-fPIC", d / "glibc.c", "-o", d / "glibc.so"],
                   check=True)
    out["glibc"] = (d / "glibc.so").read_bytes()
    return out


def fatelf(tmp, *images):
    """A FatELF file joined by `ireepkg fatelf join` from `images` (bytes)."""
    names = []
    for i, data in enumerate(images):
        (tmp / f"img{i}.so").write_bytes(data)
        names.append(f"img{i}.so")
    r = run("fatelf", "join", *names, "-o", "out.sos", cwd=tmp)
    assert r.code == 0, r.err
    return (tmp / "out.sos").read_bytes()


def embedded(name, library):
    return dict(MANIFEST, name=name, runtime={"plugins": [
        {"name": "p", "format": "embedded-elf", "library": library}]})


def position(manifest: dict, pointer_value: str):
    """line:column of the JSON string `pointer_value` in the bytes forge()
    writes for `manifest` (where the check locates the library's value)."""
    text = manifest_bytes(manifest).decode()
    offset = text.index(json.dumps(pointer_value))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"{line}:{column}"


class Env:
    """A prefix holding the simple-mul example, its package cache under the
    test's directory, and snapshots of both."""

    def __init__(self, root: pathlib.Path):
        self.root = root
        self.prefix = root / "p"
        self.cache = root / "cache"
        self.env = {"IREEPKG_CACHE_DIR": str(self.cache), "TMPDIR": str(root / "tmp")}
        (root / "tmp").mkdir()
        archive = EXAMPLES / "dist" / "simple-mul-1.2.0.ireepkg"
        r = self.install(archive)
        assert r.code == 0, r.err

    def install(self, *archives, env=None):
        return run("install", "--prefix", self.prefix, *archives, cwd=self.root,
                   env={**self.env, **(env or {})})

    def snapshots(self):
        return snapshot(self.prefix), snapshot(self.cache), snapshot(self.root / "tmp")


@pytest.fixture
def env(tmp_path):
    return Env(tmp_path)


HINT_END = ("  hint: nothing was installed: the package's native libraries are "
            "not what its manifest declares\n")


def refused(env, archive, lines):
    """Installs `archive`, which must fail with exactly `lines` (one
    diagnostic and its hint each) and change nothing."""
    before = env.snapshots()
    r = env.install(archive)
    assert r.code == 1, r
    assert r.out == ""
    assert r.err == "".join(lines) + HINT_END
    assert env.snapshots() == before
    v = run("verify", "--prefix", env.prefix)
    assert v.code == 0, v.out + v.err


def test_wrong_architecture(env, elf):
    m = embedded("wrong-arch", {"x86_64": "runtime/p.so"})
    archive = forge(env.root / "a.ireepkg", [file("runtime/p.so", elf["aarch64"])],
                    manifest=m)
    refused(env, archive, [
        f"ireepkg: error: {archive}:ireeplugin.json:{position(m, 'runtime/p.so')}: "
        "package 'wrong-arch': member 'runtime/p.so': /runtime/plugins/0/library/x86_64: "
        '"runtime/p.so" is declared for x86_64 but it is an aarch64 ELF\n'])


def test_embedded_elf_with_dt_needed(env, elf):
    m = embedded("needy", {"x86_64": "runtime/p.so"})
    archive = forge(env.root / "a.ireepkg", [file("runtime/p.so", elf["glibc"])],
                    manifest=m)
    refused(env, archive, [
        f"ireepkg: error: {archive}:ireeplugin.json:{position(m, 'runtime/p.so')}: "
        "package 'needy': member 'runtime/p.so': /runtime/plugins/0/library/x86_64: "
        '"runtime/p.so" is an embedded ELF but needs shared libraries (libc.so.6)\n',
        "  hint: embedded plugins are freestanding: build with -ffreestanding "
        "-nostdlib and link with ld.lld -static -shared\n"])


def test_missing_query_export(env, elf):
    m = embedded("quiet", {"x86_64": "runtime/p.so"})
    archive = forge(env.root / "a.ireepkg", [file("runtime/p.so", elf["no_query"])],
                    manifest=m)
    refused(env, archive, [
        f"ireepkg: error: {archive}:ireeplugin.json:{position(m, 'runtime/p.so')}: "
        "package 'quiet': member 'runtime/p.so': /runtime/plugins/0/library/x86_64: "
        f'"runtime/p.so" does not export {QUERY} (required of a embedded-elf runtime '
        "plugin)\n",
        '  hint: export it with default visibility, e.g. '
        '__attribute__((visibility("default")))\n'])


def test_missing_query_export_of_a_windows_dll(tmp_path):
    """A DLL exports only what is declared __declspec(dllexport) (or in a
    .def file): pack's hint says so, not default visibility."""
    pkg = tmp_path / "windows-quiet"
    (pkg / "lib").mkdir(parents=True)
    src = tmp_path / "helper.c"
    src.write_text("int helper(void) { return 1; }\n")
    subprocess.run(["clang-22", "--target=x86_64-w64-mingw32", "-shared", "-nostdlib",
                    "-fuse-ld=lld", "-Wl,-e,helper", src, "-o", pkg / "lib" / "p.dll"],
                   check=True)
    m = dict(MANIFEST, name="windows-quiet", runtime={"plugins": [
        {"name": "p", "format": "system-library",
         "library": {"windows-x86_64": "lib/p.dll"}}]})
    (pkg / "ireeplugin.json").write_text(manifest_bytes(m).decode())
    r = run("pack", pkg, "-o", tmp_path / "dist")
    assert r.code == 1
    assert r.err == (
        f"ireepkg: error: {pkg}/ireeplugin.json:{position(m, 'lib/p.dll')}: "
        "/runtime/plugins/0/library/windows-x86_64: "
        f'"lib/p.dll" does not export {QUERY} (required of a system-library runtime '
        "plugin)\n"
        "  hint: export it from the DLL: declare it __declspec(dllexport) (or list "
        "it in a .def file's EXPORTS)\n"), r.err


def test_system_library_for_another_architecture(env, elf):
    m = dict(MANIFEST, name="sys", runtime={"plugins": [
        {"name": "p", "format": "system-library",
         "library": {"linux-x86_64": "lib/libp.so"}}]})
    archive = forge(env.root / "a.ireepkg", [file("lib/libp.so", elf["aarch64"])],
                    manifest=m)
    refused(env, archive, [
        f"ireepkg: error: {archive}:ireeplugin.json:{position(m, 'lib/libp.so')}: "
        "package 'sys': member 'lib/libp.so': /runtime/plugins/0/library/linux-x86_64: "
        '"lib/libp.so" is declared for x86_64 but it is an aarch64 ELF\n'])


def test_fatelf_image_linked_against_glibc(env, elf, tmp_path):
    """The issue's case: a .sos whose x86_64 image is a system library used
    to install and fail only when IREE loaded it."""
    sos = fatelf(tmp_path, elf["glibc"], elf["aarch64"])
    m = embedded("fat-glibc", {"fat": "runtime/p.sos"})
    archive = forge(env.root / "a.ireepkg", [file("runtime/p.sos", sos)], manifest=m)
    refused(env, archive, [
        f"ireepkg: error: {archive}:ireeplugin.json:{position(m, 'runtime/p.sos')}: "
        "package 'fat-glibc': member 'runtime/p.sos': /runtime/plugins/0/library/fat: "
        '"runtime/p.sos" image 0 (x86_64) is an embedded ELF but needs shared '
        "libraries (libc.so.6)\n",
        "  hint: embedded plugins are freestanding: build with -ffreestanding "
        "-nostdlib and link with ld.lld -static -shared\n"])


def test_fatelf_record_that_lies_about_its_image(env, elf, tmp_path):
    sos = bytearray(fatelf(tmp_path, elf["x86_64"], elf["aarch64"]))
    sos[8 + 24:8 + 24 + 2] = (0xF3).to_bytes(2, "little")  # record 1: riscv64
    m = embedded("fat-lie", {"fat": "runtime/p.sos"})
    archive = forge(env.root / "a.ireepkg", [file("runtime/p.sos", bytes(sos))],
                    manifest=m)
    refused(env, archive, [
        f"ireepkg: error: {archive}:ireeplugin.json:{position(m, 'runtime/p.sos')}: "
        "package 'fat-lie': member 'runtime/p.sos': /runtime/plugins/0/library/fat: "
        '"runtime/p.sos" image 1 (riscv64) holds an aarch64 ELF\n',
        "  hint: rebuild the file with `ireepkg fatelf join`, which writes each "
        "record from its image\n"])


def test_fatelf_image_without_the_query(env, elf, tmp_path):
    sos = fatelf(tmp_path, elf["aarch64"], elf["no_query"])
    m = embedded("fat-quiet", {"fat": "runtime/p.sos"})
    archive = forge(env.root / "a.ireepkg", [file("runtime/p.sos", sos)], manifest=m)
    refused(env, archive, [
        f"ireepkg: error: {archive}:ireeplugin.json:{position(m, 'runtime/p.sos')}: "
        "package 'fat-quiet': member 'runtime/p.sos': /runtime/plugins/0/library/fat: "
        f'"runtime/p.sos" image 1 (x86_64) does not export {QUERY} (required of a '
        "embedded-elf runtime plugin)\n",
        '  hint: export it with default visibility, e.g. '
        '__attribute__((visibility("default")))\n'])


def test_fatelf_with_two_images_for_one_architecture(env, elf, tmp_path):
    sos = bytearray(fatelf(tmp_path, elf["x86_64"], elf["riscv64"]))
    # Record 1 now says x86_64 too (its image is riscv64): IREE would never
    # load it.
    sos[8 + 24:8 + 24 + 2] = (0x3E).to_bytes(2, "little")
    m = embedded("fat-twice", {"fat": "runtime/p.sos"})
    archive = forge(env.root / "a.ireepkg", [file("runtime/p.sos", bytes(sos))],
                    manifest=m)
    refused(env, archive, [
        f"ireepkg: error: {archive}:ireeplugin.json:{position(m, 'runtime/p.sos')}: "
        "package 'fat-twice': member 'runtime/p.sos': /runtime/plugins/0/library/fat: "
        '"runtime/p.sos" image 1 (x86_64) is for the same architecture as image 0; '
        "IREE loads only the first\n",
        "  hint: a FatELF file holds one image per architecture\n"])


def test_not_a_fatelf_under_fat(env, elf):
    m = embedded("not-fat", {"fat": "runtime/p.sos"})
    archive = forge(env.root / "a.ireepkg", [file("runtime/p.sos", elf["x86_64"])],
                    manifest=m)
    refused(env, archive, [
        f"ireepkg: error: {archive}:ireeplugin.json:{position(m, 'runtime/p.sos')}: "
        "package 'not-fat': member 'runtime/p.sos': /runtime/plugins/0/library/fat: "
        '"runtime/p.sos" is declared as a FatELF ("fat") file but is an x86_64 ELF\n'])


def test_every_problem_of_every_archive_is_reported(env, elf):
    """Two archives in one command, three problems: all named, nothing
    installed."""
    m1 = embedded("one", {"x86_64": "runtime/p.so", "aarch64": "runtime/q.so"})
    a1 = forge(env.root / "one.ireepkg", [file("runtime/p.so", elf["aarch64"]),
                                          file("runtime/q.so", elf["glibc"])], manifest=m1)
    m2 = embedded("two", {"x86_64": "runtime/p.so"})
    a2 = forge(env.root / "two.ireepkg", [file("runtime/p.so", elf["no_query"])],
               manifest=m2)
    before = env.snapshots()
    r = env.install(a1, a2)
    assert r.code == 1
    errors = [l for l in r.err.splitlines() if l.startswith("ireepkg: error: ")]
    assert [e.split(": ", 2)[2].split(":", 1)[0] for e in errors] == [
        f"{a1}", f"{a1}", f"{a2}"]
    assert "/runtime/plugins/0/library/aarch64: \"runtime/q.so\" is declared for aarch64 " \
           "but it is an x86_64 ELF" in r.err
    assert "/runtime/plugins/0/library/x86_64: \"runtime/p.so\" is declared for x86_64 " \
           "but it is an aarch64 ELF" in r.err
    assert f"does not export {QUERY}" in errors[2]
    assert env.snapshots() == before


def test_good_hand_made_archive_installs(env, elf, tmp_path):
    """What the checks accept: a hand-made archive of correct files."""
    sos = fatelf(tmp_path, elf["x86_64"], elf["aarch64"])
    m = embedded("handmade", {"fat": "runtime/p.sos", "riscv64": "runtime/p.rv.so"})
    archive = forge(env.root / "a.ireepkg", [file("runtime/p.sos", sos),
                                             file("runtime/p.rv.so", elf["riscv64"])],
                    manifest=m)
    r = env.install(archive)
    assert r.code == 0, r.err
    activation = json.loads((env.prefix / "state" / "activation.json").read_text())
    assert [p["path"] for p in activation["runtime"] if p["package"] == "handmade"] == [
        f"{env.prefix}/packages/handmade/1.0.0/runtime/p.sos"]


def test_reinstall_uses_the_inspection_cache(env, elf, tmp_path):
    """Inspection results are kept by content: installing the version again
    (after remove) does not start ireepkg-inspect; without the cache it
    does."""
    m = embedded("cached", {"x86_64": "runtime/p.so", "aarch64": "runtime/q.so"})
    archive = forge(env.root / "a.ireepkg", [file("runtime/p.so", elf["x86_64"]),
                                             file("runtime/q.so", elf["aarch64"])],
                    manifest=m)
    assert env.install(archive).code == 0
    assert run("remove", "cached", "--prefix", env.prefix).code == 0
    # An inspector that fails whenever it is started.
    broken = tmp_path / "broken-inspect"
    broken.write_text("#!/bin/sh\necho 'inspector started' >&2\nexit 3\n")
    broken.chmod(0o755)
    r = env.install(archive, env={"IREEPKG_INSPECT": str(broken)})
    assert r.code == 0, r.err
    assert run("remove", "cached", "--prefix", env.prefix).code == 0
    r = run("install", "--prefix", env.prefix, "--no-cache", archive, cwd=env.root,
            env={**env.env, "IREEPKG_INSPECT": str(broken)})
    assert r.code == 1
    assert "ireepkg-inspect failed with exit status 3" in r.err
    assert "inspector started" in r.err


def test_pack_refuses_a_fatelf_image_linked_against_glibc(elf, tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "runtime").mkdir(parents=True)
    (pkg / "runtime" / "p.sos").write_bytes(fatelf(tmp_path, elf["aarch64"], elf["glibc"]))
    m = embedded("fat-glibc", {"fat": "runtime/p.sos"})
    (pkg / "ireeplugin.json").write_bytes(manifest_bytes(m))
    r = run("pack", pkg, "-o", tmp_path / "out")
    assert r.code == 1
    assert r.err == (
        f"ireepkg: error: {pkg}/ireeplugin.json:{position(m, 'runtime/p.sos')}: "
        '/runtime/plugins/0/library/fat: "runtime/p.sos" image 1 (x86_64) is an '
        "embedded ELF but needs shared libraries (libc.so.6)\n"
        "  hint: embedded plugins are freestanding: build with -ffreestanding "
        "-nostdlib and link with ld.lld -static -shared\n")
    assert not (tmp_path / "out").exists()


def test_sync_refuses_what_install_refuses(tmp_path, elf, monkeypatch):
    """sync installs through the same path: a published archive whose
    x86_64 library is an aarch64 ELF is refused, nothing is installed."""
    from regfix import Registry, project
    monkeypatch.setenv("IREEPKG_CACHE_DIR", str(tmp_path / "cache"))
    reg = Registry(tmp_path)
    m = embedded("wrong-arch", {"x86_64": "runtime/p.so"})
    archive = forge(tmp_path / "wrong-arch-1.0.0.ireepkg",
                    [file("runtime/p.so", elf["aarch64"])], manifest=m)
    reg.publish_archive(archive)
    d = project(tmp_path, reg, [{"name": "wrong-arch"}], platforms=["linux-x86_64"])
    r = run("sync", cwd=d)
    assert r.code == 1, r
    assert ("package 'wrong-arch': member 'runtime/p.so': /runtime/plugins/0/library/x86_64: "
            '"runtime/p.so" is declared for x86_64 but it is an aarch64 ELF\n') in r.err
    prefix = d / ".iree-plugins"
    assert not (prefix / "packages" / "wrong-arch").exists()
    assert not (prefix / "state" / "installed.json").exists() or \
        "wrong-arch" not in (prefix / "state" / "installed.json").read_text()


def test_fatelf_plugin_not_activated_where_it_has_no_image(tmp_path, elf):
    """A riscv64 prefix: the plugin whose .sos holds x86_64 and aarch64 only
    is not activated (install says why), the package's riscv64 plugin is."""
    sos = fatelf(tmp_path, elf["x86_64"], elf["aarch64"])
    m = dict(MANIFEST, name="mixed", runtime={"plugins": [
        {"name": "fat_one", "format": "embedded-elf",
         "library": {"fat": "runtime/fat_one.sos"}},
        {"name": "rv_one", "format": "embedded-elf",
         "library": {"riscv64": "runtime/rv_one.so"}}]})
    archive = forge(tmp_path / "mixed.ireepkg", [
        file("runtime/fat_one.sos", sos), file("runtime/rv_one.so", elf["riscv64"])],
        manifest=m)
    prefix = tmp_path / "rv"
    r = run("install", "--prefix", prefix, "--platform", "linux-riscv64", archive,
            env={"IREEPKG_CACHE_DIR": str(tmp_path / "cache")})
    assert r.code == 0, r.err
    from regfix import without_summary
    assert without_summary(r.err) == (
        "ireepkg: warning: package 'mixed': runtime plugin \"fat_one\" has no build "
        "for linux-riscv64 (its FatELF file runtime/fat_one.sos holds x86_64, "
        "aarch64); it is not activated\n")
    pkg = prefix / "packages" / "mixed" / "1.0.0"
    activation = json.loads((prefix / "state" / "activation.json").read_text())
    assert [p["path"] for p in activation["runtime"]] == [f"{pkg}/runtime/rv_one.so"]
    assert activation["skipped"] == [{
        "package": "mixed", "plugin": "fat_one",
        "reason": "no build for linux-riscv64 (its FatELF file runtime/fat_one.sos "
                  "holds x86_64, aarch64)"}]
    assert [l for l in (prefix / "state" / "runtime.flags").read_text().splitlines()
            if not l.startswith("#")] == [f"--executable_plugin=embedded:{pkg}/runtime/rv_one.so"]
    # flags for the prefix's platform agree, and say why on stderr.
    r = run("flags", "runtime", "--prefix", prefix, "--platform", "linux-riscv64")
    assert r.out == f"--executable_plugin=embedded:{pkg}/runtime/rv_one.so\n"
    assert r.err == (
        'ireepkg: note: mixed 1.0.0: runtime plugin "fat_one" is not activated: no '
        "build for linux-riscv64 (its FatELF file runtime/fat_one.sos holds x86_64, "
        "aarch64)\n")
    v = run("verify", "--prefix", prefix)
    assert v.code == 0, v.out + v.err
