"""`ireepkg-inspect`, the LLVM-based reader of native libraries that `pack`
and `verify` run as a child process: one JSON document on stdout with the
fields of BinaryInfo for every file, in order, for ELF (freestanding plugins,
Linux libraries and executables), Mach-O, COFF and FatELF, and an "error"
(never a crash) for text, empty, truncated and corrupted files."""
import json
import random
import shutil
import subprocess

import pytest

from conftest import ireepkg_path, run

FIELDS = ["path", "format", "arch", "machine", "os", "is64", "little_endian",
          "type", "needed", "interpreter", "exports", "code_signature",
          "cpu_scanned", "cpu_uses", "fat_archs", "fat_images", "slices",
          "error"]
IMAGE_FIELDS = [f for f in FIELDS
                if f not in ("path", "fat_archs", "fat_images", "slices")]

QUERY = "iree_hal_executable_plugin_query"

PLUGIN_C = r"""
typedef struct {
  unsigned version;
  const char *name;
} header_t;

static const header_t kHeader = {1, "inspect-test"};
static const header_t *const kHeaderPtr = &kHeader;

__attribute__((visibility("default"))) const header_t *const *
iree_hal_executable_plugin_query(unsigned max_version, void *reserved) {
  return max_version >= 1 ? &kHeaderPtr : 0;
}

int hidden_helper(void) { return 1; }
"""

TARGET_FLAGS = {
    "x86_64": ["-target", "x86_64-none-elf"],
    "aarch64": ["-target", "aarch64-none-elf"],
    "riscv64": ["-target", "riscv64-none-elf", "-march=rv64gc"],
    "riscv32": ["-target", "riscv32-none-elf", "-march=rv32gc"],
    "arm": ["-target", "armv7a-none-eabi"],
    "aarch64_be": ["-target", "aarch64_be-none-elf"],
}


def tool():
    return ireepkg_path().parent / "ireepkg-inspect"


def inspect(*paths, cwd=None):
    """Runs the tool; returns the list of file objects (checks exit 0 and
    that stdout is exactly one JSON document)."""
    proc = subprocess.run([str(tool()), *map(str, paths)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc
    doc = json.loads(proc.stdout)
    assert list(doc) == ["files"]
    assert len(doc["files"]) == len(paths)
    for f in doc["files"]:
        assert list(f) == FIELDS
        for image in f["fat_images"]:
            assert list(image) == ["record", "arch", "machine", "osabi", "is64",
                                   "little_endian", "image"]
            assert list(image["image"]) == IMAGE_FIELDS
        for slice_ in f["slices"]:
            assert list(slice_) == IMAGE_FIELDS
    return doc["files"]


def cc(*args):
    subprocess.run(["clang-22", *map(str, args)], check=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Binaries built once for the whole module: {name: path}."""
    d = tmp_path_factory.mktemp("binaries")
    (d / "plugin.c").write_text(PLUGIN_C)
    out = {}
    for arch, flags in TARGET_FLAGS.items():
        obj = d / f"plugin.{arch}.o"
        so = d / f"plugin.{arch}.so"
        cc(*flags, "-std=c17", "-fPIC", "-ffreestanding", "-nostdlib",
           "-fvisibility=hidden", "-c", d / "plugin.c", "-o", obj)
        subprocess.run(["ld.lld-22", "-shared", "--build-id=none", "-nostdlib",
                        "-static", str(obj), "-o", str(so)], check=True)
        out[f"{arch}.o"] = obj
        out[f"{arch}.so"] = so
    (d / "lib.c").write_text(
        "#include <stdio.h>\nint greet(void) { return puts(\"hi\"); }\n")
    out["linux.so"] = d / "libgreet.so"
    cc("-shared", "-fPIC", d / "lib.c", "-o", out["linux.so"])
    out["macho.o"] = d / "plugin.macho.o"
    cc("-target", "x86_64-apple-macos", "-c", d / "plugin.c", "-o",
       out["macho.o"])
    out["coff.o"] = d / "plugin.coff.obj"
    cc("-target", "x86_64-pc-windows-msvc", "-c", d / "plugin.c", "-o",
       out["coff.o"])
    return out


def test_freestanding_plugins(built):
    files = inspect(built["x86_64.so"], built["aarch64.so"])
    for f, arch, machine in zip(files, ["x86_64", "aarch64"],
                                ["EM_X86_64", "EM_AARCH64"]):
        assert f == {
            "path": str(built[f"{arch}.so"]), "format": "elf", "arch": arch,
            "machine": machine, "os": "none", "is64": True,
            "little_endian": True, "type": "shared", "needed": [],
            "interpreter": "", "exports": [QUERY], "code_signature": False,
            # x86-64 code is scanned for the CPU features it needs (this
            # plugin, built for the baseline, needs none); other
            # architectures are not.
            "cpu_scanned": arch == "x86_64", "cpu_uses": [],
            "fat_archs": [], "fat_images": [], "slices": [], "error": ""}


@pytest.mark.parametrize("name,arch,machine,is64,little", [
    ("riscv64", "riscv64", "EM_RISCV", True, True),
    ("riscv32", "riscv32", "EM_RISCV", False, True),
    ("arm", "arm", "EM_ARM", False, True),
    ("aarch64_be", "aarch64", "EM_AARCH64", True, False),
])
def test_other_architectures(built, name, arch, machine, is64, little):
    [f] = inspect(built[f"{name}.so"])
    assert (f["arch"], f["machine"], f["is64"], f["little_endian"]) == \
        (arch, machine, is64, little)
    assert f["os"] == "none" and f["exports"] == [QUERY] and f["error"] == ""


def test_relocatable_object_uses_the_symbol_table(built):
    [f] = inspect(built["x86_64.o"])
    assert f["type"] == "relocatable"
    assert f["os"] == "none"
    # Hidden symbols are not exported.
    assert f["exports"] == [QUERY]


def test_linux_shared_library(built):
    [f] = inspect(built["linux.so"])
    assert f["format"] == "elf"
    assert f["os"] == "linux"
    assert f["type"] == "shared"
    assert "libc.so.6" in f["needed"]
    assert f["interpreter"] == ""
    assert "greet" in f["exports"]
    assert "puts" not in f["exports"]  # undefined: imported, not exported
    assert f["error"] == ""


def test_executable():
    [f] = inspect("/bin/ls")
    assert f["format"] == "elf"
    assert f["type"] == "executable"
    assert f["os"] == "linux"
    assert f["interpreter"].startswith("/lib")
    assert "ld-linux" in f["interpreter"] or "ld-musl" in f["interpreter"]
    assert "libc.so.6" in f["needed"]
    assert f["error"] == ""


def test_text_file(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("just some text\n")
    [f] = inspect(p)
    assert f == {"path": str(p), "format": "unknown", "arch": None,
                 "machine": "", "os": "", "is64": False,
                 "little_endian": True, "type": "other", "needed": [],
                 "interpreter": "", "exports": [], "code_signature": False,
                 "cpu_scanned": False, "cpu_uses": [],
                 "fat_archs": [], "fat_images": [], "slices": [],
                 "error": "not an object file"}


def test_empty_file(tmp_path):
    p = tmp_path / "empty.so"
    p.write_bytes(b"")
    [f] = inspect(p)
    assert f["format"] == "unknown"
    assert f["error"] == "empty file"


def test_truncated_elf(tmp_path, built):
    p = tmp_path / "truncated.so"
    p.write_bytes(built["linux.so"].read_bytes()[:100])
    [f] = inspect(p)
    assert f["format"] == "elf"
    assert f["arch"] == "x86_64"
    assert f["error"].startswith("program headers are longer than binary of "
                                 "size 100")
    assert f["os"] == ""  # not claimed to be platform-independent


def test_missing_file_and_directory(tmp_path):
    files = inspect(tmp_path / "nope.so", tmp_path)
    assert files[0]["error"] == "cannot read: No such file or directory"
    assert files[1]["error"] == "is a directory"


def test_fatelf(tmp_path, built):
    shutil.copy(built["x86_64.so"], tmp_path / "k.x86_64.so")
    shutil.copy(built["aarch64.so"], tmp_path / "k.aarch64.so")
    r = run("fatelf", "join", "k.x86_64.so", "k.aarch64.so", "-o", "k.sos",
            cwd=tmp_path)
    assert r.code == 0, r
    [f] = inspect(tmp_path / "k.sos")
    assert f["format"] == "fatelf"
    assert f["fat_archs"] == ["x86_64", "aarch64"]
    assert f["arch"] is None and f["exports"] == [] and f["error"] == ""
    # Each record, and its image read like a file of its own.
    [single_x86, single_arm] = inspect(tmp_path / "k.x86_64.so",
                                       tmp_path / "k.aarch64.so")
    assert [i["record"] for i in f["fat_images"]] == [0, 1]
    for image, single, arch, machine in zip(
            f["fat_images"], [single_x86, single_arm], ["x86_64", "aarch64"],
            ["EM_X86_64", "EM_AARCH64"]):
        assert (image["arch"], image["machine"], image["osabi"], image["is64"],
                image["little_endian"]) == (arch, machine, 0, True, True)
        assert image["image"] == {k: single[k] for k in IMAGE_FIELDS}
    # A FatELF whose record points past the end is reported.
    data = bytearray((tmp_path / "k.sos").read_bytes())
    data[8 + 8:8 + 16] = (1 << 30).to_bytes(8, "little")
    (tmp_path / "bad.sos").write_bytes(data)
    [f] = inspect(tmp_path / "bad.sos")
    assert f["format"] == "fatelf"
    assert f["error"] == "FatELF record 0 points outside the file"
    assert f["fat_images"][0]["image"]["error"] == \
        "the record points outside the file"
    assert f["fat_images"][1]["image"]["error"] == ""


def test_fatelf_images_that_are_not_plugins(tmp_path, built):
    """The image of a record is described as it is, whatever the record says:
    a Linux library, an image of another machine than its record's, bytes
    that are not ELF, a FatELF inside the FatELF."""
    shutil.copy(built["linux.so"], tmp_path / "a.so")
    shutil.copy(built["aarch64.so"], tmp_path / "b.so")
    assert run("fatelf", "join", "a.so", "b.so", "-o", "k.sos",
               cwd=tmp_path).code == 0
    data = bytearray((tmp_path / "k.sos").read_bytes())
    [f] = inspect(tmp_path / "k.sos")
    linux = f["fat_images"][0]["image"]
    assert linux["arch"] == "x86_64" and linux["os"] == "linux"
    assert any(n.startswith("libc.so") for n in linux["needed"])
    # Record 1 claims riscv64; its image is still aarch64.
    data[8 + 24:8 + 24 + 2] = (0xF3).to_bytes(2, "little")
    (tmp_path / "lie.sos").write_bytes(data)
    [f] = inspect(tmp_path / "lie.sos")
    assert f["fat_archs"] == ["x86_64", "riscv64"]
    assert f["fat_images"][1]["arch"] == "riscv64"
    assert f["fat_images"][1]["image"]["arch"] == "aarch64"
    # Not ELF, and a FatELF image.
    offset = int.from_bytes(data[8 + 24 + 8:8 + 24 + 16], "little")
    junk = bytearray(data)
    junk[offset:offset + 4] = b"junk"
    (tmp_path / "junk.sos").write_bytes(junk)
    [f] = inspect(tmp_path / "junk.sos")
    assert f["error"] == ""
    assert f["fat_images"][1]["image"]["error"] == "not an ELF image"
    nested = bytearray(data)
    nested[offset:offset + 4] = bytes([0xFA, 0x70, 0x0E, 0x1F])
    (tmp_path / "nested.sos").write_bytes(nested)
    [f] = inspect(tmp_path / "nested.sos")
    assert f["fat_images"][1]["image"]["error"] == \
        "a FatELF file inside a FatELF file"


def test_macho_object(built):
    [f] = inspect(built["macho.o"])
    assert f["format"] == "macho"
    assert f["arch"] == "x86_64"
    assert f["machine"] == "CPU_TYPE_X86_64"
    assert f["os"] == "macos"
    assert f["type"] == "relocatable"
    assert f["is64"] and f["little_endian"]
    assert QUERY in f["exports"]  # the leading underscore is stripped
    assert f["error"] == ""


def test_macho_dylib(tmp_path, built):
    out = tmp_path / "libplugin.dylib"
    cc("-target", "arm64-apple-macos11", "-shared", "-fuse-ld=lld",
       "-nostdlib", "-Wl,-undefined,dynamic_lookup", "-fvisibility=hidden",
       built["x86_64.o"].parent / "plugin.c", "-o", out)
    [f] = inspect(out)
    assert f["format"] == "macho"
    assert f["arch"] == "aarch64"
    assert f["type"] == "shared"
    assert f["exports"] == [QUERY]
    assert f["code_signature"]  # ld64.lld signs arm64 output ad hoc
    assert f["slices"] == []


def test_macho_universal_dylib_slice_by_slice(tmp_path, built):
    """Each slice of a universal file as a thin file: its architecture,
    exports and code signature (the x86_64 slice is unsigned)."""
    from test_platform_native_checks import universal
    slices = []
    for target in ("x86_64-apple-macos11", "arm64-apple-macos11"):
        out = tmp_path / f"{target}.dylib"
        cc("-target", target, "-shared", "-fuse-ld=lld", "-nostdlib",
           "-Wl,-undefined,dynamic_lookup", "-fvisibility=hidden",
           built["x86_64.o"].parent / "plugin.c", "-o", out)
        slices.append(out.read_bytes())
    (tmp_path / "fat.dylib").write_bytes(universal(*slices))
    [f] = inspect(tmp_path / "fat.dylib")
    assert (f["format"], f["arch"], f["error"]) == ("macho", None, "")
    assert f["fat_archs"] == ["x86_64", "aarch64"]
    assert [(s["arch"], s["machine"], s["exports"], s["code_signature"])
            for s in f["slices"]] == [
        ("x86_64", "CPU_TYPE_X86_64", [QUERY], False),
        ("aarch64", "CPU_TYPE_ARM64", [QUERY], True)]


def test_coff_object(built):
    [f] = inspect(built["coff.o"])
    assert f["format"] == "coff"
    assert f["arch"] == "x86_64"
    assert f["machine"] == "IMAGE_FILE_MACHINE_AMD64"
    assert f["os"] == "windows"
    assert f["type"] == "relocatable"
    assert f["is64"]
    assert f["error"] == ""


def test_coff_dll_imports_and_exports(tmp_path):
    (tmp_path / "dep.c").write_text(
        "__declspec(dllexport) int dep_fn(void) { return 2; }\n")
    (tmp_path / "main.c").write_text(
        "__declspec(dllimport) int dep_fn(void);\n"
        "__declspec(dllexport) int exported_fn(void) { return dep_fn(); }\n")
    flags = ["-target", "x86_64-pc-windows-msvc", "-shared", "-fuse-ld=lld",
             "-nostdlib", "-Wl,-noentry"]
    cc(*flags, tmp_path / "dep.c", "-o", tmp_path / "dep.dll")
    cc(*flags, tmp_path / "main.c", tmp_path / "dep.lib", "-o",
       tmp_path / "main.dll")
    [f] = inspect(tmp_path / "main.dll")
    assert f["format"] == "coff"
    assert f["type"] == "shared"
    assert f["needed"] == ["dep.dll"]
    assert f["exports"] == ["exported_fn"]


def test_many_files_in_order(tmp_path, built):
    (tmp_path / "t.txt").write_text("x")
    paths = [built["x86_64.so"], tmp_path / "t.txt", built["macho.o"],
             built["aarch64.so"]] * 5
    files = inspect(*paths)
    assert [f["path"] for f in files] == [str(p) for p in paths]
    assert [f["format"] for f in files[:4]] == ["elf", "unknown", "macho", "elf"]


def test_paths_after_double_dash(tmp_path, built):
    shutil.copy(built["x86_64.so"], tmp_path / "-odd.so")
    proc = subprocess.run([str(tool()), "--", "-odd.so"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0
    [f] = json.loads(proc.stdout)["files"]
    assert f["path"] == "-odd.so" and f["arch"] == "x86_64"


@pytest.mark.parametrize("args", [[], ["--bogus"], ["-x", "a.so"]])
def test_usage_errors(args):
    proc = subprocess.run([str(tool()), *args], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "usage: ireepkg-inspect" in proc.stderr


def test_corrupted_files_never_crash(tmp_path, built):
    """Random byte changes and truncations of real binaries: always exit 0
    with one well-formed document."""
    seeds = [built[k].read_bytes() for k in
             ("x86_64.so", "aarch64_be.so", "arm.so", "linux.so", "macho.o",
              "coff.o", "x86_64.o")]
    rng = random.Random(20261)
    paths = []
    for i in range(300):
        data = bytearray(rng.choice(seeds))
        if rng.random() < 0.3:
            data = data[:rng.randrange(1, len(data))]
        for _ in range(rng.randrange(1, 16)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        p = tmp_path / f"corrupt{i}"
        p.write_bytes(data)
        paths.append(p)
    files = inspect(*paths)
    assert len(files) == 300
