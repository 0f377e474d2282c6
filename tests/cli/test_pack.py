"""`ireepkg pack`: manifest and file checks, native library inspection
(architecture, OS, freestanding, exported symbols), reproducible archives,
and --fatelf."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import EXAMPLES, copy_package, run

CLANG = shutil.which("clang-22")
LLD = shutil.which("ld.lld-22")


def build_so(tmp, name, source, target=None, freestanding=False):
    c = tmp / (name + ".c")
    c.write_text(source)
    out = tmp / (name + ".so")
    if freestanding:
        obj = tmp / (name + ".o")
        subprocess.run([CLANG, "-target", target, "-fPIC", "-ffreestanding", "-nostdlib",
                        "-fvisibility=hidden", "-c", c, "-o", obj], check=True)
        subprocess.run([LLD, "-shared", "--build-id=none", "-nostdlib", "-static", obj,
                        "-o", out], check=True)
    else:
        subprocess.run([CLANG, "-shared", "-fPIC", c, "-o", out], check=True)
    return out


QUERY = '__attribute__((visibility("default"))) const void* iree_hal_executable_plugin_query(unsigned v, void* r) { return 0; }\n'


def pack_err(pkg, tmp_path, *extra):
    r = run("pack", pkg, "-o", tmp_path / "out", *extra)
    return r


def test_reproducible(tmp_path):
    a = run("pack", EXAMPLES / "simple-mul", "-o", tmp_path / "a")
    b_src = tmp_path / "copy"
    shutil.copytree(EXAMPLES / "simple-mul", b_src)
    for p in b_src.rglob("*"):
        os.utime(p, (1_000_000, 1_000_000))  # other times, same content
    b = run("pack", b_src, "-o", tmp_path / "b")
    assert a.code == 0 and b.code == 0, a.err + b.err
    fa = (tmp_path / "a" / "simple-mul-1.2.0.ireepkg").read_bytes()
    fb = (tmp_path / "b" / "simple-mul-1.2.0.ireepkg").read_bytes()
    assert fa == fb


def test_archive_layout(tmp_path):
    out = run("pack", EXAMPLES / "simple-mul", "-o", tmp_path, "--json")
    j = json.loads(out.out)
    archive = tmp_path / "simple-mul-1.2.0.ireepkg"
    assert j["archive"] == str(archive) and len(j["sha256"]) == 64
    listing = subprocess.run(f"zstd -dc {archive} | tar -tv", shell=True, capture_output=True,
                             text=True, check=True).stdout.splitlines()
    names = [l.split()[-1] for l in listing]
    assert names == ["ireeplugin.json", ".ireepkg/RECORD.json",
                     "runtime/linux-x86_64/libsimple_mul.so", "runtime/simple_mul.aarch64.so",
                     "runtime/simple_mul.x86_64.so", "runtime/simple_mul.x86_64_v3.so",
                     "runtime/windows-aarch64/simple_mul.dll",
                     "runtime/windows-x86_64/simple_mul.dll"]
    for l in listing:
        assert " root/root " in l or " 0/0 " in l
        assert "1970-01-01" in l
    record = json.loads(subprocess.run(f"zstd -dc {archive} | tar -xO .ireepkg/RECORD.json",
                                       shell=True, capture_output=True, check=True).stdout)
    paths = [f["path"] for f in record["files"]]
    assert paths == sorted(paths) and "ireeplugin.json" in paths
    assert [f["path"] for f in j["files"]] == paths


def test_arch_mismatch_names_both(tmp_path):
    pkg = copy_package(EXAMPLES / "simple-mul", tmp_path / "pkg")
    rt = pkg / "runtime"
    shutil.copy(rt / "simple_mul.x86_64.so", rt / "simple_mul.aarch64.so")
    r = pack_err(pkg, tmp_path)
    assert r.code == 1
    assert ('/runtime/plugins/0/library/aarch64: "runtime/simple_mul.aarch64.so" is declared for '
            "aarch64 but it is an x86_64 ELF") in r.err
    lines = (pkg / "ireeplugin.json").read_text().splitlines()
    line = next(i for i, l in enumerate(lines, 1) if '"aarch64"' in l)
    assert f"ireeplugin.json:{line}:" in r.err


def test_embedded_plugin_must_be_freestanding(tmp_path):
    pkg = copy_package(EXAMPLES / "simple-mul", tmp_path / "pkg")
    rt = pkg / "runtime"
    shutil.copy(rt / "linux-x86_64" / "libsimple_mul.so", rt / "simple_mul.x86_64.so")
    r = pack_err(pkg, tmp_path)
    assert r.code == 1
    assert '"runtime/simple_mul.x86_64.so" is an embedded ELF but needs shared libraries (libc.so.6' in r.err
    assert "hint: embedded plugins are freestanding" in r.err


def test_runtime_plugins_must_export_the_query(tmp_path):
    pkg = copy_package(EXAMPLES / "simple-mul", tmp_path / "pkg")
    lib = build_so(tmp_path, "noquery", "int unrelated(void) { return 1; }\n")
    shutil.copy(lib, pkg / "runtime" / "linux-x86_64" / "libsimple_mul.so")
    emb = build_so(tmp_path, "noquery_emb", "__attribute__((visibility(\"default\"))) int f(void){return 1;}\n",
                   target="aarch64-none-elf", freestanding=True)
    shutil.copy(emb, pkg / "runtime" / "simple_mul.aarch64.so")
    r = pack_err(pkg, tmp_path)
    assert r.code == 1
    assert ('"runtime/linux-x86_64/libsimple_mul.so" does not export iree_hal_executable_plugin_query '
            "(required of a system-library runtime plugin)") in r.err
    assert ('"runtime/simple_mul.aarch64.so" does not export iree_hal_executable_plugin_query '
            "(required of a embedded-elf runtime plugin)") in r.err


def test_compiler_plugin_entry_point(tmp_path):
    pkg = tmp_path / "cpkg"
    (pkg / "lib").mkdir(parents=True)
    good = build_so(tmp_path, "good",
                    "struct Info { unsigned api; const char *name, *version; void (*cb)(void); };\n"
                    "static void reg(void) {}\n"
                    '__attribute__((visibility("default"))) struct Info mlirGetPassPluginInfo(void) '
                    '{ struct Info i = {1, "passes", "0.1", reg}; return i; }\n')
    shutil.copy(good, pkg / "lib" / "libpasses.so")
    manifest = {"schema_version": 1, "name": "passes", "version": "0.1.0",
                "compiler": {"plugins": [{"id": "passes", "kind": "mlir-pass-plugin",
                                          "library": {"linux-x86_64": "lib/libpasses.so"}}]}}
    (pkg / "ireeplugin.json").write_text(json.dumps(manifest, indent=2))
    assert pack_err(pkg, tmp_path).code == 0
    bad = build_so(tmp_path, "bad", "int other(void) { return 0; }\n")
    shutil.copy(bad, pkg / "lib" / "libpasses.so")
    r = pack_err(pkg, tmp_path)
    assert r.code == 1
    assert ('"lib/libpasses.so" does not export mlirGetPassPluginInfo '
            "(required of a mlir-pass-plugin plugin)") in r.err
    # A custom entry point is what gets checked (MLIR plugins have a fixed
    # one; an iree-dynamic plugin may name its own).
    manifest["compiler"]["plugins"][0].update(kind="iree-dynamic", entry_point="other")
    (pkg / "ireeplugin.json").write_text(json.dumps(manifest, indent=2))
    assert pack_err(pkg, tmp_path).code == 0


def test_wrong_os_is_named(tmp_path):
    pkg = tmp_path / "mac"
    (pkg / "lib").mkdir(parents=True)
    shutil.copy(build_so(tmp_path, "x", QUERY), pkg / "lib" / "libp.dylib")
    (pkg / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": "mac", "version": "1.0.0",
        "runtime": {"plugins": [{"name": "p", "format": "system-library",
                                 "library": {"macos-x86_64": "lib/libp.dylib"}}]}}))
    r = pack_err(pkg, tmp_path)
    assert r.code == 1
    assert ('"lib/libp.dylib" is declared for macos-x86_64 (a Mach-O file) but it is an x86_64 ELF'
            in r.err)


def test_not_a_binary(tmp_path):
    pkg = copy_package(EXAMPLES / "simple-mul", tmp_path / "pkg")
    os.chmod(pkg / "runtime" / "simple_mul.aarch64.so", 0o644)
    (pkg / "runtime" / "simple_mul.aarch64.so").write_text("not a library\n")
    r = pack_err(pkg, tmp_path)
    assert r.code == 1
    assert '"runtime/simple_mul.aarch64.so" is not a native library:' in r.err


def test_missing_file_and_symlink(tmp_path):
    pkg = copy_package(EXAMPLES / "simple-mul", tmp_path / "pkg")
    (pkg / "runtime" / "simple_mul.aarch64.so").unlink()
    os.symlink("/etc/passwd", pkg / "link")
    r = pack_err(pkg, tmp_path)
    assert r.code == 1
    assert '/runtime/plugins/0/library/aarch64: "runtime/simple_mul.aarch64.so" does not exist in the package directory' in r.err
    assert f"{pkg}/link: is a symbolic link; packages hold only regular files" in r.err
    assert not (tmp_path / "out").exists()


def test_invalid_manifest_is_refused_with_positions(tmp_path):
    pkg = copy_package(EXAMPLES / "simple-mul", tmp_path / "pkg", version="1.2", extra_field=1)
    r = pack_err(pkg, tmp_path)
    assert r.code == 1
    assert '/version: "1.2" is not a valid version: expected MAJOR.MINOR.PATCH' in r.err
    assert '/extra_field: unknown field "extra_field"' in r.err


def archive_member(archive, name):
    return subprocess.run(f"zstd -dc {archive} | tar -xO {name}", shell=True,
                          capture_output=True, check=True).stdout


def test_fatelf_joins_embedded_plugins(tmp_path):
    before = sorted(p.name for p in (EXAMPLES / "simple-mul" / "runtime").iterdir())
    r = run("pack", EXAMPLES / "simple-mul", "-o", tmp_path, "--fatelf", "--json")
    assert r.code == 0, r.err
    assert sorted(p.name for p in (EXAMPLES / "simple-mul" / "runtime").iterdir()) == before
    archive = tmp_path / "simple-mul-1.2.0.ireepkg"
    info = json.loads(run("info", archive, "--json").out)
    # The .sos is the plugin's library for every architecture it holds; the
    # x86_64_v3 build stays a file of its own (a FatELF holds one image per
    # architecture).
    fat = {"fat": "runtime/simple_mul.sos", "x86_64_v3": "runtime/simple_mul.x86_64_v3.so"}
    assert info["runtime_plugins"][0]["library"] == fat
    manifest = json.loads(archive_member(archive, "ireeplugin.json"))
    assert manifest["runtime"]["plugins"][0]["library"] == fat
    assert manifest["runtime"]["plugins"][1]["library"] == {
        "linux-x86_64": "runtime/linux-x86_64/libsimple_mul.so",
        "windows-x86_64": "runtime/windows-x86_64/simple_mul.dll",
        "windows-aarch64": "runtime/windows-aarch64/simple_mul.dll"}
    # The joined files are inside the .sos, not beside it.
    assert [f["path"] for f in json.loads(r.out)["files"]] == [
        "ireeplugin.json",
        "runtime/linux-x86_64/libsimple_mul.so", "runtime/simple_mul.sos",
        "runtime/simple_mul.x86_64_v3.so", "runtime/windows-aarch64/simple_mul.dll",
        "runtime/windows-x86_64/simple_mul.dll"]
    (tmp_path / "x.sos").write_bytes(archive_member(archive, "runtime/simple_mul.sos"))
    dump = json.loads(run("fatelf", "dump", tmp_path / "x.sos", "--json").out)
    assert [rec["arch"] for rec in dump["records"]] == ["aarch64", "x86_64"]
    assert run("fatelf", "split", tmp_path / "x.sos", "-o", tmp_path / "split").code == 0
    for arch in ("x86_64", "aarch64"):
        assert (tmp_path / "split" / f"x.{arch}.so").read_bytes() == \
            (EXAMPLES / "simple-mul" / "runtime" / f"simple_mul.{arch}.so").read_bytes()
    # Reproducible too.
    r2 = run("pack", EXAMPLES / "simple-mul", "-o", tmp_path / "again", "--fatelf")
    assert r2.code == 0
    assert (tmp_path / "again" / archive.name).read_bytes() == archive.read_bytes()


def test_fatelf_with_nothing_to_join_keeps_the_manifest(tmp_path):
    """No embedded-elf plugin without a .sos: the manifest is packed as
    written, byte for byte, and the archive is the one plain pack makes."""
    pkg = tmp_path / "pkg"
    (pkg / "data").mkdir(parents=True)
    text = ('{"schema_version": 1, "name": "plain", "version": "1.0.0",\n'
            '   "summary": "kept as written"}\n')
    (pkg / "ireeplugin.json").write_text(text)
    (pkg / "data" / "a.txt").write_text("a\n")
    r = run("pack", pkg, "-o", tmp_path / "fat", "--fatelf")
    assert r.code == 0, r.err
    archive = tmp_path / "fat" / "plain-1.0.0.ireepkg"
    assert archive_member(archive, "ireeplugin.json").decode() == text
    assert run("pack", pkg, "-o", tmp_path / "plain").code == 0
    assert (tmp_path / "plain" / archive.name).read_bytes() == archive.read_bytes()


def test_fatelf_keeps_a_plugin_that_has_one(tmp_path):
    """A plugin that already names a .sos is packed as it is."""
    pkg = copy_package(EXAMPLES / "simple-mul", tmp_path / "pkg")
    rt = pkg / "runtime"
    assert run("fatelf", "join", "-o", rt / "own.sos", rt / "simple_mul.x86_64.so").code == 0
    m = json.loads((pkg / "ireeplugin.json").read_text())
    m["runtime"]["plugins"][0]["library"]["fat"] = "runtime/own.sos"
    text = json.dumps(m, indent=4) + "\n"
    (pkg / "ireeplugin.json").write_text(text)
    r = run("pack", pkg, "-o", tmp_path / "out", "--fatelf", "--json")
    assert r.code == 0, r.err
    archive = tmp_path / "out" / "simple-mul-1.2.0.ireepkg"
    assert archive_member(archive, "ireeplugin.json").decode() == text
    assert "runtime/simple_mul.sos" not in [f["path"] for f in json.loads(r.out)["files"]]


def test_pack_needs_a_package_directory(tmp_path):
    r = run("pack", tmp_path / "nope")
    assert r.code == 1
    assert "not a directory" in r.err
    (tmp_path / "empty").mkdir()
    r = run("pack", tmp_path / "empty")
    assert r.code == 1
    assert "ireeplugin.json: cannot open: No such file or directory" in r.err


def test_declared_import_the_plugin_does_not_resolve(tmp_path):
    """Each runtime plugin this host can load (the x86_64 embedded ELF and
    the linux-x86_64 system library; not the aarch64 ELF) is loaded in the
    plugin probe and asked for its declared imports: one it does not
    resolve is an error at its place in the manifest."""
    pkg = copy_package(EXAMPLES / "simple-mul", tmp_path / "pkg")
    m = json.loads((pkg / "ireeplugin.json").read_text())
    for p in m["runtime"]["plugins"]:
        p["imports"] = ["simple_mul_workgroup", "simple_mul_missing"]
    (pkg / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    r = pack_err(pkg, tmp_path)
    assert r.code == 1, r
    lines = (pkg / "ireeplugin.json").read_text().splitlines()
    at = [i for i, l in enumerate(lines, 1) if '"simple_mul_missing"' in l]
    assert len(at) == 2
    assert r.err == (
        f"ireepkg: error: {pkg}/ireeplugin.json:{at[0]}:11: /runtime/plugins/0/imports/1: "
        'runtime plugin "simple_mul" declares import "simple_mul_missing", but its '
        "runtime/simple_mul.x86_64.so does not resolve it (loaded on this host with IREE's "
        "plugin ABI)\n"
        "  hint: export it from the plugin's resolve function, or remove it from \"imports\"\n"
        f"ireepkg: error: {pkg}/ireeplugin.json:{at[1]}:11: /runtime/plugins/1/imports/1: "
        'runtime plugin "simple_mul_system" declares import "simple_mul_missing", but its '
        "runtime/linux-x86_64/libsimple_mul.so does not resolve it (loaded on this host with "
        "IREE's plugin ABI)\n"
        "  hint: export it from the plugin's resolve function, or remove it from \"imports\"\n")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_declared_imports_are_checked_in_the_fatelf_image(tmp_path):
    """An embedded plugin shipped only as a FatELF: its x86_64 image is the
    one loaded."""
    pkg = copy_package(EXAMPLES / "simple-mul", tmp_path / "pkg")
    rt = pkg / "runtime"
    j = run("fatelf", "join", "-o", rt / "simple_mul.sos", rt / "simple_mul.x86_64.so",
            rt / "simple_mul.aarch64.so")
    assert j.code == 0, j
    for f in ["simple_mul.x86_64.so", "simple_mul.aarch64.so", "linux-x86_64/libsimple_mul.so"]:
        (rt / f).unlink()
    m = json.loads((pkg / "ireeplugin.json").read_text())
    m["runtime"]["plugins"] = [dict(m["runtime"]["plugins"][0],
                                    library={"fat": "runtime/simple_mul.sos"},
                                    imports=["simple_mul_workgroup", "simple_mul_missing"])]
    (pkg / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    r = pack_err(pkg, tmp_path)
    assert r.code == 1, r
    assert ('/runtime/plugins/0/imports/1: runtime plugin "simple_mul" declares import '
            '"simple_mul_missing", but its runtime/simple_mul.sos does not resolve it') in r.err
    # Declaring only what it resolves packs.
    m["runtime"]["plugins"][0]["imports"] = ["simple_mul_workgroup"]
    (pkg / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    r = pack_err(pkg, tmp_path)
    assert r.code == 0, r
def test_fatelf_checks_what_it_joined(tmp_path):
    """The records of the joined file come from each image's own header:
    an image with an OS ABI IREE never selects passes as a file of its own,
    but its record in the .sos would never be loaded."""
    pkg = copy_package(EXAMPLES / "simple-mul", tmp_path / "pkg")
    so = pkg / "runtime" / "simple_mul.x86_64.so"
    os.chmod(so, 0o644)
    data = bytearray(so.read_bytes())
    data[7] = 9  # EI_OSABI: FreeBSD
    so.write_bytes(bytes(data))
    assert run("pack", pkg, "-o", tmp_path / "plain").code == 0
    r = run("pack", pkg, "-o", tmp_path / "fat", "--fatelf")
    assert r.code == 1
    assert ('"runtime/simple_mul.sos" image 1 (x86_64) has ELF OS ABI 9, which '
            "IREE's loader never selects") in r.err
    assert not (tmp_path / "fat").exists() or not any((tmp_path / "fat").iterdir())


def test_quiet_prints_nothing_on_stdout(tmp_path):
    """--quiet (before or after the command) drops the `packed ...` line;
    the archive is the same, and without it the line is there."""
    from conftest import data_package
    pkg = data_package(tmp_path / "src", "quiet-pkg")
    loud = run("pack", pkg, "-o", tmp_path / "loud")
    assert loud.code == 0, loud.err
    assert loud.out.startswith("packed quiet-pkg 1.0.0 -> ")
    for i, args in enumerate((["pack", pkg, "-o", tmp_path / "q0", "--quiet"],
                              ["-q", "pack", pkg, "-o", tmp_path / "q1"])):
        r = run(*args)
        assert r.code == 0, r.err
        assert r.out == "" and r.err == ""
        assert (tmp_path / f"q{i}" / "quiet-pkg-1.0.0.ireepkg").read_bytes() == \
            (tmp_path / "loud" / "quiet-pkg-1.0.0.ireepkg").read_bytes()
    # Errors still print on stderr; --json is unaffected.
    r = run("pack", tmp_path / "missing", "-o", tmp_path / "x", "--quiet")
    assert r.code != 0 and r.out == "" and "error:" in r.err
    r = run("pack", pkg, "-o", tmp_path / "j", "--quiet", "--json")
    assert r.code == 0 and json.loads(r.out)["name"] == "quiet-pkg"
