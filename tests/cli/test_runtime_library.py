"""libireepkg_runtime (build/lib/libireepkg_runtime.so) through ctypes, on
prefixes made by the real CLI: the library lists what activation.json lists,
formats what runtime.flags holds, finds the prefix the way the CLI does,
reports damaged prefixes, and serves 8 threads enumerating one handle.

Every install writes state/runtime.index (runtime_integration's
StateWriter); a prefix without one fails the test."""
import ctypes
import json
import os
import pathlib
import re
import shutil
import threading

import pytest

from conftest import (BUILD, EXAMPLES, REPO, copy_package,
                      make_writable, pack, run, simple_mul_build)

LIB_PATH = BUILD / "lib" / "libireepkg_runtime.so"
HEADER = REPO / "runtime_integration" / "include" / "ireepkg" / "runtime.h"
ARCHIVE = EXAMPLES / "dist" / "simple-mul-1.2.0.ireepkg"
FAT_ARCHIVE = EXAMPLES / "dist-fatelf" / "simple-mul-1.2.0.ireepkg"

OK, INVALID_ARGUMENT, NO_PREFIX, MISSING_INDEX, CORRUPT_INDEX, NEWER_SCHEMA, \
    FILE_MISSING, OUT_OF_MEMORY, IO = range(9)
CHECK_FILES = 0x1
FLAGS_LINES, FLAGS_FLAGFILE, FLAGS_NUL = 0, 1, 2

c_char_p, c_size_t, c_int, c_void_p, c_uint32 = (
    ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32)


class Parameter(ctypes.Structure):
    _fields_ = [("key", c_char_p), ("value", c_char_p)]


class Plugin(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("package", c_char_p),
                ("package_version", c_char_p), ("format", c_char_p),
                ("format_kind", c_int), ("skip_reason", c_int),
                ("library_key", c_char_p), ("path", c_char_p), ("spec", c_char_p),
                ("import_count", c_size_t), ("imports", ctypes.POINTER(c_char_p)),
                ("parameter_count", c_size_t),
                ("parameters", ctypes.POINTER(Parameter))]


class PluginList(ctypes.Structure):
    _fields_ = [("prefix", c_char_p), ("target_platform", c_char_p),
                ("target_arch", c_char_p), ("count", c_size_t),
                ("plugins", ctypes.POINTER(Plugin)), ("skipped_count", c_size_t),
                ("skipped", ctypes.POINTER(Plugin))]


class Location(ctypes.Structure):
    _fields_ = [("path", c_char_p), ("source", c_int), ("source_name", c_char_p),
                ("project_file", c_char_p)]


class RuntimeError_(Exception):
    def __init__(self, status, message, path):
        super().__init__(f"{status}: {message}")
        self.status, self.message, self.path = status, message, path


def load_library():
    lib = ctypes.CDLL(str(LIB_PATH))
    P = ctypes.POINTER
    sig = {
        "ireepkg_runtime_version": (c_char_p, []),
        "ireepkg_runtime_version_number": (c_uint32, []),
        "ireepkg_runtime_host_platform": (c_char_p, []),
        "ireepkg_runtime_status_name": (c_char_p, [c_int]),
        "ireepkg_runtime_error_status": (c_int, [c_void_p]),
        "ireepkg_runtime_error_message": (c_char_p, [c_void_p]),
        "ireepkg_runtime_error_path": (c_char_p, [c_void_p]),
        "ireepkg_runtime_error_hint": (c_char_p, [c_void_p]),
        "ireepkg_runtime_free_error": (None, [c_void_p]),
        "ireepkg_runtime_locate_prefix": (c_int, [c_char_p, c_char_p, P(P(Location)), P(c_void_p)]),
        "ireepkg_runtime_free_prefix_location": (None, [P(Location)]),
        "ireepkg_runtime_open": (c_int, [c_char_p, c_uint32, P(c_void_p), P(c_void_p)]),
        "ireepkg_runtime_locate_and_open": (c_int, [c_char_p, c_char_p, c_uint32, P(c_void_p), P(c_void_p)]),
        "ireepkg_runtime_close": (None, [c_void_p]),
        "ireepkg_runtime_index_prefix": (c_char_p, [c_void_p]),
        "ireepkg_runtime_index_platform": (c_char_p, [c_void_p]),
        "ireepkg_runtime_index_plugin_count": (c_size_t, [c_void_p]),
        "ireepkg_runtime_list_plugins": (c_int, [c_void_p, c_char_p, c_uint32, P(P(PluginList)), P(c_void_p)]),
        "ireepkg_runtime_free_plugin_list": (None, [P(PluginList)]),
        "ireepkg_runtime_format_flags": (c_int, [P(PluginList), c_int, P(c_void_p), P(c_size_t), P(c_void_p)]),
        "ireepkg_runtime_flag_argv": (c_int, [P(PluginList), P(c_void_p), P(c_size_t), P(c_void_p)]),
        "ireepkg_runtime_free_string": (None, [c_void_p]),
        "ireepkg_runtime_free_argv": (None, [c_void_p]),
    }
    for name, (restype, argtypes) in sig.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


@pytest.fixture(scope="module")
def lib():
    if not LIB_PATH.exists():
        pytest.fail(f"{LIB_PATH} is not built")
    return load_library()


def b(s):
    return None if s is None else str(s).encode()


def take_error(lib, err):
    """Raises the error held in the c_void_p `err`, freeing it."""
    status = lib.ireepkg_runtime_error_status(err)
    message = lib.ireepkg_runtime_error_message(err).decode()
    path = lib.ireepkg_runtime_error_path(err).decode()
    lib.ireepkg_runtime_free_error(err)
    raise RuntimeError_(status, message, path)


def open_prefix(lib, prefix):
    index, err = c_void_p(), c_void_p()
    status = lib.ireepkg_runtime_open(b(prefix), 0, ctypes.byref(index), ctypes.byref(err))
    if status != OK:
        take_error(lib, err)
    return index


def plugin_dict(p):
    return {
        "name": p.name.decode(), "package": p.package.decode(),
        "version": p.package_version.decode(), "format": p.format.decode(),
        "path": p.path.decode() if p.path else None,
        "spec": p.spec.decode() if p.spec else None,
        "imports": [p.imports[i].decode() for i in range(p.import_count)],
        "parameters": {p.parameters[i].key.decode(): p.parameters[i].value.decode()
                       for i in range(p.parameter_count)},
    }


def list_plugins(lib, index, target=None, flags=0):
    """(plugins, skipped, flag lines) for `target`."""
    lst, err = ctypes.POINTER(PluginList)(), c_void_p()
    status = lib.ireepkg_runtime_list_plugins(index, b(target), flags, ctypes.byref(lst),
                                              ctypes.byref(err))
    if status != OK:
        take_error(lib, err)
    try:
        L = lst.contents
        plugins = [plugin_dict(L.plugins[i]) for i in range(L.count)]
        skipped = [plugin_dict(L.skipped[i]) for i in range(L.skipped_count)]
        text, size = c_void_p(), c_size_t()
        assert lib.ireepkg_runtime_format_flags(lst, FLAGS_LINES, ctypes.byref(text),
                                                ctypes.byref(size), None) == OK
        lines = ctypes.string_at(text, size.value).decode()
        lib.ireepkg_runtime_free_string(text)
        return plugins, skipped, lines
    finally:
        lib.ireepkg_runtime_free_plugin_list(lst)


def install(prefix: pathlib.Path, archive=ARCHIVE):
    r = run("install", "--prefix", prefix, archive)
    assert r.code == 0, r.err
    assert (prefix / "state" / "runtime.index").exists(), \
        "ireepkg install wrote no state/runtime.index"
    return prefix


def host_platform(lib):
    return lib.ireepkg_runtime_host_platform().decode()


# ---------------------------------------------------------------------------
# The library itself


def test_version_matches_header_and_project(lib):
    header = HEADER.read_text()
    version = re.search(r'#define IREEPKG_RUNTIME_VERSION_STRING "([^"]+)"', header).group(1)
    assert lib.ireepkg_runtime_version().decode() == version
    major, minor, patch = map(int, version.split("."))
    assert lib.ireepkg_runtime_version_number() == (major << 16) | (minor << 8) | patch
    project = re.search(r"project\(ireepkg VERSION ([0-9.]+)",
                        (REPO / "CMakeLists.txt").read_text()).group(1)
    assert version == project
    assert re.fullmatch(r"[a-z]+-[a-z0-9_]+", host_platform(lib))


def test_status_names(lib):
    names = [lib.ireepkg_runtime_status_name(s).decode() for s in range(9)]
    assert names == ["ok", "invalid argument", "no prefix", "missing index",
                     "corrupt index", "newer schema", "file missing",
                     "out of memory", "I/O error"]


# ---------------------------------------------------------------------------
# Prefixes made by the CLI


def test_lists_what_activation_json_lists(lib, tmp_path):
    prefix = install(tmp_path / "prefix")
    activation = json.loads((prefix / "state" / "activation.json").read_text())
    index = open_prefix(lib, prefix)
    try:
        assert lib.ireepkg_runtime_index_prefix(index).decode() == str(prefix)
        assert lib.ireepkg_runtime_index_platform(index).decode() == activation["platform"]
        plugins, skipped, _ = list_plugins(lib, index, activation["platform"])
    finally:
        lib.ireepkg_runtime_close(index)
    # The embedded plugin's build for this CPU: the example's x86_64_v3 one
    # where the CPU can run it.
    build = f"simple_mul.{simple_mul_build()}.so"
    expected = [{"name": e["name"], "package": e["package"], "version": e["version"],
                 "format": e["format"],
                 "path": e["path"].replace("simple_mul.x86_64.so", build),
                 "spec": e["spec"].replace("simple_mul.x86_64.so", build),
                 "imports": e["imports"], "parameters": e["parameters"]}
                for e in activation["runtime"]]
    assert plugins == expected
    # What the library skips, activation.json reports as skipped.
    assert {(s["package"], s["name"]) for s in skipped} <= {
        (s["package"], s["plugin"]) for s in activation["skipped"]}
    assert len(plugins) + len(skipped) == 2  # simple-mul's runtime plugins


def test_flags_are_runtime_flags(lib, tmp_path):
    prefix = install(tmp_path / "prefix")
    flagfile = (prefix / "state" / "runtime.flags").read_text()
    wanted = "".join(line + "\n" for line in flagfile.splitlines()
                     if line and not line.startswith("#"))
    index = open_prefix(lib, prefix)
    try:
        _, _, lines = list_plugins(lib, index, lib.ireepkg_runtime_index_platform(index).decode())
        assert lines == wanted
        assert lines.startswith("--executable_plugin=embedded:" + str(prefix))
        # argv: the same flags, NULL-terminated.
        lst = ctypes.POINTER(PluginList)()
        assert lib.ireepkg_runtime_list_plugins(index, None, 0, ctypes.byref(lst), None) == OK
        argv, argc = c_void_p(), c_size_t()
        assert lib.ireepkg_runtime_flag_argv(lst, ctypes.byref(argv), ctypes.byref(argc), None) == OK
        array = ctypes.cast(argv, ctypes.POINTER(c_char_p))
        got = [array[i].decode() for i in range(argc.value)]
        assert array[argc.value] is None
        lib.ireepkg_runtime_free_argv(argv)
        lib.ireepkg_runtime_free_plugin_list(lst)
        if host_platform(lib) == lib.ireepkg_runtime_index_platform(index).decode():
            assert got == wanted.splitlines()
    finally:
        lib.ireepkg_runtime_close(index)


def test_targets(lib, tmp_path):
    prefix = install(tmp_path / "prefix")
    pkg = prefix / "packages" / "simple-mul" / "1.2.0"
    index = open_prefix(lib, prefix)
    try:
        plugins, skipped, _ = list_plugins(lib, index, "linux-aarch64")
        assert [(p["name"], p["spec"]) for p in plugins] == [
            ("simple_mul", f"embedded:{pkg}/runtime/simple_mul.aarch64.so")]
        assert [p["name"] for p in skipped] == ["simple_mul_system"]
        assert skipped[0]["path"] is None
        # An architecture without a build: nothing to load.
        plugins, skipped, lines = list_plugins(lib, index, "riscv64")
        assert plugins == [] and lines == ""
        assert [p["name"] for p in skipped] == ["simple_mul", "simple_mul_system"]
        with pytest.raises(RuntimeError_) as e:
            list_plugins(lib, index, "linux-x86-64")
        assert e.value.status == INVALID_ARGUMENT
        assert "unknown target 'linux-x86-64'" in e.value.message
    finally:
        lib.ireepkg_runtime_close(index)


def library_keys(lib, index, target):
    """{plugin name: (library key, path)} of what `target` lists."""
    lst = ctypes.POINTER(PluginList)()
    assert lib.ireepkg_runtime_list_plugins(index, b(target), 0, ctypes.byref(lst),
                                            None) == OK
    try:
        L = lst.contents
        return {L.plugins[i].name.decode(): (L.plugins[i].library_key.decode(),
                                             L.plugins[i].path.decode())
                for i in range(L.count)}
    finally:
        lib.ireepkg_runtime_free_plugin_list(lst)


def test_fatelf_for_other_architectures(lib, tmp_path):
    """`pack --fatelf` makes the .sos the plugin's library for every
    architecture it holds (x86_64, aarch64), and for no other; the
    example's x86_64_v3 build stays beside it, for CPUs that can run it."""
    prefix = install(tmp_path / "prefix", FAT_ARCHIVE)
    pkg = prefix / "packages" / "simple-mul" / "1.2.0"
    sos = f"{pkg}/runtime/simple_mul.sos"
    # What this host's CPU gets for linux-x86_64.
    host_key = simple_mul_build()
    host_build = sos if host_key == "x86_64" else f"{pkg}/runtime/simple_mul.{host_key}.so"
    index = open_prefix(lib, prefix)
    try:
        for arch, key, path in (("x86_64", host_key, host_build), ("aarch64", "aarch64", sos)):
            plugins, _, lines = list_plugins(lib, index, f"linux-{arch}")
            assert plugins[0]["spec"] == f"embedded:{path}"
            assert library_keys(lib, index, f"linux-{arch}")["simple_mul"] == (key, path)
        # No riscv64 image in the .sos: nothing to load there.
        plugins, skipped, lines = list_plugins(lib, index, "riscv64")
        assert plugins == [] and lines == ""
        assert [p["name"] for p in skipped] == ["simple_mul", "simple_mul_system"]
    finally:
        lib.ireepkg_runtime_close(index)
    # `flags runtime` says why, one line per plugin, on stderr.
    r = run("flags", "runtime", "--prefix", prefix, "--platform", "linux-riscv64")
    assert r.code == 0, r.err
    assert r.out == ""
    assert r.err == (
        'ireepkg: note: simple-mul 1.2.0: runtime plugin "simple_mul" is not '
        "activated: no build for linux-riscv64 (its FatELF file "
        "runtime/simple_mul.sos holds aarch64, x86_64)\n"
        'ireepkg: note: simple-mul 1.2.0: runtime plugin "simple_mul_system" '
        "is not activated: no build for linux-riscv64\n")
    r = run("flags", "runtime", "--prefix", prefix, "--platform", "linux-riscv64",
            "--format", "json")
    assert r.code == 0 and r.err == ""
    assert [(s["name"], s["reason"]) for s in json.loads(r.out)["skipped"]] == [
        ("simple_mul", "no build for linux-riscv64 (its FatELF file "
                       "runtime/simple_mul.sos holds aarch64, x86_64)"),
        ("simple_mul_system", "no build for linux-riscv64")]
    # Nothing skipped, nothing said.
    r = run("flags", "runtime", "--prefix", prefix, "--platform", "linux-x86_64")
    assert r.code == 0 and r.err == ""
    assert r.out == (f"--executable_plugin=embedded:{host_build}\n"
                     f"--executable_plugin={pkg}/runtime/linux-x86_64/libsimple_mul.so\n")


def test_own_file_first_then_the_fatelf_images(lib, tmp_path):
    """A manifest with an architecture's own file and a .sos: the own file
    for its architecture, the .sos for the others it holds, nothing for the
    rest."""
    pkg = copy_package(EXAMPLES / "simple-mul", tmp_path / "pkg")
    rt = pkg / "runtime"
    r = run("fatelf", "join", "-o", rt / "simple_mul.sos",
            rt / "simple_mul.x86_64.so", rt / "simple_mul.aarch64.so")
    assert r.code == 0, r.err
    m = json.loads((pkg / "ireeplugin.json").read_text())
    m["runtime"]["plugins"][0]["library"] = {
        "aarch64": "runtime/simple_mul.aarch64.so", "fat": "runtime/simple_mul.sos"}
    (pkg / "ireeplugin.json").write_text(json.dumps(m, indent=2))
    prefix = install(tmp_path / "prefix", pack(pkg, tmp_path / "out"))
    root = prefix / "packages" / "simple-mul" / "1.2.0" / "runtime"
    activation = json.loads((prefix / "state" / "activation.json").read_text())
    assert activation["runtime"][0]["path"] == f"{root}/simple_mul.sos"
    index = open_prefix(lib, prefix)
    try:
        assert library_keys(lib, index, "x86_64")["simple_mul"] == (
            "x86_64", f"{root}/simple_mul.sos")
        assert library_keys(lib, index, "aarch64")["simple_mul"] == (
            "aarch64", f"{root}/simple_mul.aarch64.so")
        assert library_keys(lib, index, "riscv64") == {}
    finally:
        lib.ireepkg_runtime_close(index)


def test_fatelf_prefix_for_an_architecture_it_lacks(tmp_path):
    """A prefix for riscv64: the package's only embedded build is a .sos
    without a riscv64 image, so it has no build there at all, like the
    package with per-architecture files."""
    prefix = tmp_path / "rv"
    for archive in (FAT_ARCHIVE, ARCHIVE):
        r = run("install", "--prefix", prefix, "--platform", "linux-riscv64", archive)
        assert r.code == 1
        has = ("fat (aarch64, x86_64), linux-x86_64, windows-aarch64, windows-x86_64, "
               "x86_64_v3" if archive == FAT_ARCHIVE
               else "aarch64, linux-x86_64, windows-aarch64, windows-x86_64, x86_64, "
               "x86_64_v3")
        assert (f'package "simple-mul" 1.2.0 has no build for linux-riscv64 '
                f"(it has: {has})") in r.err
        assert not (prefix / "packages" / "simple-mul").exists()


def test_missing_plugin_file(lib, tmp_path):
    prefix = install(tmp_path / "prefix")
    pkg = prefix / "packages" / "simple-mul" / "1.2.0"
    index = open_prefix(lib, prefix)
    try:
        assert len(list_plugins(lib, index, "linux-x86_64", CHECK_FILES)[0]) == 2
        make_writable(prefix)
        victim = pkg / "runtime" / "linux-x86_64" / "libsimple_mul.so"
        victim.unlink()
        with pytest.raises(RuntimeError_) as e:
            list_plugins(lib, index, "linux-x86_64", CHECK_FILES)
        assert e.value.status == FILE_MISSING
        assert e.value.path == str(victim)
        assert f"runtime plugin 'simple_mul_system' of simple-mul 1.2.0: '{victim}' does not exist" \
            == e.value.message
        # Without the check the list is still given.
        assert len(list_plugins(lib, index, "linux-x86_64")[0]) == 2
    finally:
        lib.ireepkg_runtime_close(index)


def test_damaged_index(lib, tmp_path):
    prefix = install(tmp_path / "prefix")
    index_file = prefix / "state" / "runtime.index"
    make_writable(prefix)
    index_file.chmod(0o644)
    data = bytearray(index_file.read_bytes())
    assert data[:8] == b"IRPKGRT\0"
    index_file.write_bytes(data[: len(data) - 5])
    with pytest.raises(RuntimeError_) as e:
        open_prefix(lib, prefix)
    assert e.value.status == CORRUPT_INDEX
    assert e.value.message == (f"the runtime index '{index_file}' is corrupted: "
                               f"it is truncated: {len(data) - 5} of {len(data)} bytes")
    data[-2] ^= 1
    index_file.write_bytes(bytes(data))
    with pytest.raises(RuntimeError_) as e:
        open_prefix(lib, prefix)
    assert e.value.status == CORRUPT_INDEX and e.value.message.endswith("checksum mismatch")
    data[8:12] = bytes([2, 0, 0, 0])  # version 2.0
    index_file.write_bytes(bytes(data))
    with pytest.raises(RuntimeError_) as e:
        open_prefix(lib, prefix)
    assert e.value.status == NEWER_SCHEMA
    assert "was written by a newer ireepkg (format 2.0;" in e.value.message


def test_prefix_without_index(lib, tmp_path):
    # Installed, then everything removed: nothing to list either way.
    prefix = tmp_path / "prefix"
    assert run("install", "--prefix", prefix, ARCHIVE).code == 0
    assert run("remove", "--prefix", prefix, "simple-mul").code == 0
    index = open_prefix(lib, prefix)
    try:
        assert list_plugins(lib, index)[:2] == ([], [])
    finally:
        lib.ireepkg_runtime_close(index)
    # Packages but no index: an older ireepkg wrote the prefix.
    other = tmp_path / "other"
    assert run("install", "--prefix", other, ARCHIVE).code == 0
    make_writable(other)
    (other / "state" / "runtime.index").unlink(missing_ok=True)
    with pytest.raises(RuntimeError_) as e:
        open_prefix(lib, other)
    assert e.value.status == MISSING_INDEX
    assert "has installed packages but no runtime index" in e.value.message
    with pytest.raises(RuntimeError_) as e:
        open_prefix(lib, tmp_path / "nothing-here")
    assert e.value.status == NO_PREFIX
    assert e.value.message == (f"no ireepkg prefix at '{tmp_path / 'nothing-here'}': "
                               f"'{tmp_path / 'nothing-here' / 'state'}' does not exist")


# ---------------------------------------------------------------------------
# Finding the prefix


def locate(lib, explicit=None, start=None):
    loc, err = ctypes.POINTER(Location)(), c_void_p()
    status = lib.ireepkg_runtime_locate_prefix(b(explicit), b(start), ctypes.byref(loc),
                                               ctypes.byref(err))
    if status != OK:
        take_error(lib, err)
    L = loc.contents
    out = (L.path.decode(), L.source_name.decode(),
           L.project_file.decode() if L.project_file else None)
    lib.ireepkg_runtime_free_prefix_location(loc)
    return out


def cli_prefix(cwd, env):
    r = run("list", "--json", cwd=cwd, env=env)
    assert r.code == 0, r.err
    return json.loads(r.out)["prefix"]


def test_locate_prefix_like_the_cli(lib, tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "src" / "deep").mkdir(parents=True)
    (project / "plugins.json").write_text('{"schema_version": 1, "plugins": []}\n')
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "IREEPKG_PREFIX": "", "XDG_DATA_HOME": ""}
    for k, v in env.items():
        monkeypatch.setenv(k, v)

    deep = project / "src" / "deep"
    assert locate(lib, start=deep) == (str(project / ".iree-plugins"), "project",
                                       str(project / "plugins.json"))
    assert cli_prefix(deep, env) == str(project / ".iree-plugins")

    outside = tmp_path / "outside"
    outside.mkdir()
    if not any((p / "plugins.json").is_file() for p in [outside, *outside.parents]):
        assert locate(lib, start=outside) == (str(home / ".local/share/ireepkg"), "default", None)
        assert cli_prefix(outside, env) == str(home / ".local/share/ireepkg")
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
        assert locate(lib, start=outside)[:2] == (str(tmp_path / "xdg" / "ireepkg"), "XDG_DATA_HOME")
        assert cli_prefix(outside, {**env, "XDG_DATA_HOME": str(tmp_path / "xdg")}) == \
            str(tmp_path / "xdg" / "ireepkg")

    monkeypatch.setenv("IREEPKG_PREFIX", str(tmp_path / "env-prefix") + "/")
    assert locate(lib, start=deep)[:2] == (str(tmp_path / "env-prefix"), "IREEPKG_PREFIX")
    assert cli_prefix(deep, {**env, "IREEPKG_PREFIX": str(tmp_path / "env-prefix") + "/"}) == \
        str(tmp_path / "env-prefix")
    assert locate(lib, explicit=str(tmp_path / "a" / ".." / "b"))[:2] == (str(tmp_path / "b"), "--prefix")


def test_locate_and_open_names_the_rule(lib, tmp_path, monkeypatch):
    monkeypatch.setenv("IREEPKG_PREFIX", str(tmp_path / "missing"))
    index, err = c_void_p(), c_void_p()
    status = lib.ireepkg_runtime_locate_and_open(None, None, 0, ctypes.byref(index),
                                                 ctypes.byref(err))
    assert status == NO_PREFIX
    with pytest.raises(RuntimeError_) as e:
        take_error(lib, err)
    assert "(chosen by IREEPKG_PREFIX)" in e.value.message


# ---------------------------------------------------------------------------
# Threads


def test_eight_threads_enumerate_one_handle(lib, tmp_path):
    prefix = install(tmp_path / "prefix", FAT_ARCHIVE)
    index = open_prefix(lib, prefix)
    targets = [None, "aarch64", "riscv64", "linux-aarch64", "android-x86_64"]
    expected = {t: list_plugins(lib, index, t) for t in targets}
    failures, barrier = [], threading.Barrier(8)

    def worker(n):
        barrier.wait()
        for i in range(300):
            t = targets[(n + i) % len(targets)]
            try:
                got = list_plugins(lib, index, t, CHECK_FILES)
            except Exception as e:  # noqa: BLE001 - collected and reported
                failures.append(repr(e))
                continue
            if got != expected[t]:
                failures.append(f"{t}: {got} != {expected[t]}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lib.ireepkg_runtime_close(index)
    assert failures == []
