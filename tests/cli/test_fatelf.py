"""`ireepkg fatelf join|split|select|dump` on real plugin-like ELF shared
objects (built with clang-22 and ld.lld-22 for x86_64, aarch64 and riscv64):
exact text and JSON output, byte-identical round trips, the runtime's
selection rule, every refusal, and usage errors (exit status 2)."""
import json
import platform
import shutil
import subprocess

import pytest

from conftest import run, REPO  # noqa: F401  (REPO: the checkout)

PLUGIN_C = r"""
typedef struct {
  unsigned version;
  const char *name;
} header_t;

static const header_t kHeader = {1, "fatelf-test"};
static const header_t *const kHeaderPtr = &kHeader;

__attribute__((visibility("default"))) const header_t *const *
iree_hal_executable_plugin_query(unsigned max_version, void *reserved) {
  return max_version >= 1 ? &kHeaderPtr : 0;
}
"""

TARGET_FLAGS = {
    "x86_64": ["-target", "x86_64-none-elf"],
    "aarch64": ["-target", "aarch64-none-elf"],
    "riscv64": ["-target", "riscv64-none-elf", "-march=rv64gc"],
}

ARCHS = ["x86_64", "aarch64", "riscv64"]
MACHINES = {"x86_64": 0x3E, "aarch64": 0xB7, "riscv64": 0xF3}


def build_plugin(directory, arch):
    """Compiles and links a freestanding plugin for `arch`; returns its path."""
    src = directory / "plugin.c"
    src.write_text(PLUGIN_C)
    obj = directory / f"plugin.{arch}.o"
    out = directory / f"plugin.{arch}.so"
    subprocess.run(["clang-22", *TARGET_FLAGS[arch], "-std=c17", "-O2", "-fPIC",
                    "-ffreestanding", "-nostdlib", "-fvisibility=hidden",
                    "-c", str(src), "-o", str(obj)], check=True)
    subprocess.run(["ld.lld-22", "-shared", "--build-id=none", "-nostdlib",
                    "-static", "--no-undefined", str(obj), "-o", str(out)],
                   check=True)
    return out


@pytest.fixture(scope="module")
def plugins(tmp_path_factory):
    """{arch: path} of one built plugin per architecture."""
    directory = tmp_path_factory.mktemp("plugins")
    return {arch: build_plugin(directory, arch) for arch in ARCHS}


@pytest.fixture
def work(tmp_path, plugins):
    """A fresh directory holding copies of the plugins, named <arch>.so."""
    for arch, path in plugins.items():
        shutil.copy(path, tmp_path / f"plugin.{arch}.so")
    return tmp_path


def host_arch():
    machine = platform.machine().lower()
    return {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64",
            "arm64": "aarch64", "riscv64": "riscv64"}.get(machine)


def page(n):
    return (n + 4095) // 4096 * 4096


def expected_layout(sizes):
    """(offset, size) of each image as the writer lays them out."""
    out, offset = [], 4096
    for size in sizes:
        out.append((offset, size))
        offset += page(size)
    return out, offset


def join(work, *archs, out="plugin.sos"):
    r = run("fatelf", "join", *[f"plugin.{a}.so" for a in archs], "-o", out,
            cwd=work)
    assert r.code == 0, r
    return work / out


def test_join_writes_the_layout(work):
    r = run("fatelf", "join", "plugin.x86_64.so", "plugin.aarch64.so",
            "plugin.riscv64.so", "-o", "plugin.sos", cwd=work)
    assert r.code == 0, r
    assert r.out == "wrote plugin.sos (x86_64, aarch64, riscv64)\n"
    assert r.err == ""
    data = (work / "plugin.sos").read_bytes()
    inputs = [(work / f"plugin.{a}.so").read_bytes() for a in ARCHS]
    layout, total = expected_layout([len(i) for i in inputs])
    assert len(data) == total
    assert data[:8] == bytes([0xFA, 0x70, 0x0E, 0x1F, 1, 0, 3, 0])
    for i, arch in enumerate(ARCHS):
        rec = data[8 + 24 * i: 8 + 24 * (i + 1)]
        machine = int.from_bytes(rec[0:2], "little")
        assert machine == MACHINES[arch]
        assert rec[2:8] == bytes([0, 0, 2, 1, 0, 0])  # osabi, ver, 64, LE
        offset = int.from_bytes(rec[8:16], "little")
        size = int.from_bytes(rec[16:24], "little")
        assert (offset, size) == layout[i]
        assert data[offset:offset + size] == inputs[i]
        assert data[offset + size:offset + page(size)] == b"\0" * (page(size) - size)
    assert data[8 + 24 * 3:4096] == b"\0" * (4096 - 80)
    # Written atomically: no temporary files left behind.
    assert sorted(p.name for p in work.iterdir()) == sorted(
        [f"plugin.{a}.so" for a in ARCHS] + ["plugin.sos"])


def test_dump_text(work):
    join(work, *ARCHS)
    sizes = [(work / f"plugin.{a}.so").stat().st_size for a in ARCHS]
    layout, _ = expected_layout(sizes)
    r = run("fatelf", "dump", "plugin.sos", cwd=work)
    assert r.code == 0, r
    assert r.err == ""
    expected = "plugin.sos: FatELF version 1, 3 records\n"
    for i, arch in enumerate(ARCHS):
        offset, size = layout[i]
        expected += (f"  {i}: {arch} osabi=0 word_size=64 byte_order=little "
                     f"offset={offset} size={size}\n")
    assert r.out == expected


def test_dump_json(work):
    join(work, "aarch64", "x86_64")
    sizes = [(work / f"plugin.{a}.so").stat().st_size for a in ("aarch64", "x86_64")]
    layout, _ = expected_layout(sizes)
    r = run("fatelf", "dump", "plugin.sos", "--json", cwd=work)
    assert r.code == 0, r
    assert json.loads(r.out) == {
        "version": 1,
        "records": [
            {"index": i, "arch": arch, "machine": MACHINES[arch], "osabi": 0,
             "osabi_version": 0, "word_size": 64, "byte_order": "little",
             "offset": layout[i][0], "size": layout[i][1]}
            for i, arch in enumerate(["aarch64", "x86_64"])
        ],
    }
    # Keys in the documented order.
    assert list(json.loads(r.out)["records"][0]) == [
        "index", "arch", "machine", "osabi", "osabi_version", "word_size",
        "byte_order", "offset", "size"]


def test_dump_names_machines_that_are_not_ours(work):
    sos = join(work, "x86_64", "aarch64")
    data = bytearray(sos.read_bytes())
    data[8 + 24:8 + 24 + 2] = (0x15).to_bytes(2, "little")  # EM_PPC64
    data[8 + 24 + 5] = 0                                      # big-endian
    (work / "odd.sos").write_bytes(data)
    r = run("fatelf", "dump", "odd.sos", cwd=work)
    assert r.code == 0, r
    assert r.out.splitlines()[2].startswith(
        "  1: machine 0x15 osabi=0 word_size=64 byte_order=big offset=8192 ")
    j = json.loads(run("fatelf", "dump", "odd.sos", "--json", cwd=work).out)
    assert j["records"][1]["arch"] is None
    assert j["records"][1]["machine"] == 0x15
    assert j["records"][1]["byte_order"] == "big"
    # split names such a record by its machine.
    r = run("fatelf", "split", "odd.sos", "-o", "parts", cwd=work)
    assert r.code == 0, r
    assert r.out == ("wrote parts/odd.x86_64.so\n"
                     "wrote parts/odd.machine-0x15.so\n")


def test_split_gives_back_the_inputs(work):
    join(work, *ARCHS)
    r = run("fatelf", "split", "plugin.sos", "-o", "out", cwd=work)
    assert r.code == 0, r
    assert r.out == "".join(f"wrote out/plugin.{a}.so\n" for a in ARCHS)
    for arch in ARCHS:
        assert (work / "out" / f"plugin.{arch}.so").read_bytes() == \
            (work / f"plugin.{arch}.so").read_bytes()
    assert sorted(p.name for p in (work / "out").iterdir()) == sorted(
        f"plugin.{a}.so" for a in ARCHS)


def test_split_defaults_to_the_current_directory(work):
    join(work, "x86_64", "aarch64", out="kernels.sos")
    (work / "here").mkdir()
    r = run("fatelf", "split", "../kernels.sos", cwd=work / "here")
    assert r.code == 0, r
    assert r.out == "wrote kernels.x86_64.so\nwrote kernels.aarch64.so\n"
    assert (work / "here" / "kernels.aarch64.so").read_bytes() == \
        (work / "plugin.aarch64.so").read_bytes()


def test_select_picks_the_host_image(work):
    arch = host_arch()
    if arch not in ARCHS:
        pytest.skip(f"no test plugin for host {platform.machine()}")
    join(work, *ARCHS)
    r = run("fatelf", "select", "plugin.sos", "-o", "host.so", cwd=work)
    assert r.code == 0, r
    assert r.out == f"wrote host.so ({arch}, record {ARCHS.index(arch)})\n"
    assert (work / "host.so").read_bytes() == \
        (work / f"plugin.{arch}.so").read_bytes()


def test_select_with_arch(work):
    join(work, *ARCHS)
    r = run("fatelf", "select", "plugin.sos", "--arch", "aarch64", "-o",
            "a.so", cwd=work)
    assert r.code == 0, r
    assert r.out == "wrote a.so (aarch64, record 1)\n"
    assert (work / "a.so").read_bytes() == (work / "plugin.aarch64.so").read_bytes()
    r = run("fatelf", "select", "plugin.sos", "--arch=riscv64", "-o",
            "r.so", cwd=work)
    assert r.code == 0, r
    assert (work / "r.so").read_bytes() == (work / "plugin.riscv64.so").read_bytes()


def test_select_refuses_a_missing_architecture(work):
    join(work, "x86_64", "aarch64")
    r = run("fatelf", "select", "plugin.sos", "--arch", "riscv32", "-o",
            "x.so", cwd=work)
    assert r.code == 1
    assert r.out == ""
    assert r.err == (
        "ireepkg: error: plugin.sos: no image for riscv32 (the file holds: "
        "x86_64; aarch64)\n"
        "  hint: select another architecture with --arch, or add a riscv32 "
        "image with `ireepkg fatelf join`\n")
    assert not (work / "x.so").exists()


def test_select_skips_other_os_abis(work):
    sos = join(work, "x86_64", "aarch64")
    data = bytearray(sos.read_bytes())
    data[8 + 2] = 97  # record 0: ELFOSABI_ARM, which IREE never selects
    (work / "abi.sos").write_bytes(data)
    r = run("fatelf", "select", "abi.sos", "--arch", "x86_64", "-o", "x.so",
            cwd=work)
    assert r.code == 1
    assert "no image for x86_64 (the file holds: x86_64 (osabi 97); aarch64)" in r.err


def test_join_refuses_non_elf_input(work):
    (work / "notes.txt").write_text("not an ELF file at all\n")
    r = run("fatelf", "join", "plugin.x86_64.so", "notes.txt", "-o", "x.sos",
            cwd=work)
    assert r.code == 1
    assert r.err == "ireepkg: error: notes.txt: not an ELF file\n"
    assert not (work / "x.sos").exists()


def test_join_refuses_a_fatelf_input_with_a_hint(work):
    join(work, "x86_64", "aarch64")
    r = run("fatelf", "join", "plugin.sos", "plugin.riscv64.so", "-o", "x.sos",
            cwd=work)
    assert r.code == 1
    assert r.err.startswith("ireepkg: error: plugin.sos: not an ELF file\n"
                            "  hint: this is already a FatELF file")


def test_join_refuses_duplicate_architectures(work):
    shutil.copy(work / "plugin.x86_64.so", work / "other.so")
    r = run("fatelf", "join", "plugin.x86_64.so", "plugin.aarch64.so",
            "other.so", "-o", "x.sos", cwd=work)
    assert r.code == 1
    assert r.err == (
        "ireepkg: error: other.so: same architecture (x86_64) as "
        "plugin.x86_64.so\n"
        "  hint: a FatELF file holds one image per architecture\n")
    assert not (work / "x.sos").exists()


def test_join_refuses_a_missing_input(work):
    r = run("fatelf", "join", "plugin.x86_64.so", "nope.so", "-o", "x.sos",
            cwd=work)
    assert r.code == 1
    assert r.err == ("ireepkg: error: nope.so: cannot read: No such file or "
                     "directory\n")


def test_join_into_a_missing_directory(work):
    r = run("fatelf", "join", "plugin.x86_64.so", "-o", "no/such/dir/x.sos",
            cwd=work)
    assert r.code == 1
    assert r.err == ("ireepkg: error: no/such/dir/x.sos: cannot create a file "
                     "in no/such/dir: No such file or directory\n")


def test_join_warns_about_the_extension(work):
    r = run("fatelf", "join", "plugin.x86_64.so", "-o", "plugin.bin", cwd=work)
    assert r.code == 0, r
    assert "does not end in .sos" in r.err


def test_join_overwrites_atomically(work):
    (work / "plugin.sos").write_bytes(b"old contents")
    join(work, "x86_64")
    assert (work / "plugin.sos").read_bytes()[:4] == b"\xFA\x70\x0E\x1F"


def refusal(work, data, message, *hint):
    """Every reading command refuses `data` with the same message."""
    (work / "bad.sos").write_bytes(bytes(data))
    expected = f"ireepkg: error: bad.sos: {message}\n" + "".join(
        f"  hint: {h}\n" for h in hint)
    for cmd in (["dump"], ["dump", "--json"], ["split", "-o", "out"],
                ["select", "-o", "x.so", "--arch", "x86_64"]):
        r = run("fatelf", cmd[0], "bad.sos", *cmd[1:], cwd=work)
        assert r.code == 1, (cmd, r)
        assert r.out == ""
        assert r.err == expected, cmd
    assert not (work / "x.so").exists()
    assert not (work / "out").exists() or not any((work / "out").iterdir())


def test_refuses_bad_magic(work):
    refusal(work, (work / "plugin.x86_64.so").read_bytes(),
            "not a FatELF file (bad magic)",
            "a FatELF file starts with the bytes FA 70 0E 1F")


def test_refuses_an_empty_file(work):
    refusal(work, b"", "not a FatELF file (bad magic)",
            "a FatELF file starts with the bytes FA 70 0E 1F")


def test_refuses_a_truncated_header(work):
    data = join(work, *ARCHS).read_bytes()
    refusal(work, data[:5],
            "truncated FatELF header (5 bytes, the header needs 8)")


def test_refuses_a_truncated_table(work):
    data = join(work, *ARCHS).read_bytes()
    refusal(work, data[:50],
            "truncated FatELF record table (3 records need 80 bytes, the file "
            "has 50)")


def test_refuses_version_2(work):
    data = bytearray(join(work, *ARCHS).read_bytes())
    data[4] = 2
    refusal(work, data,
            "unsupported FatELF version 2 (ireepkg and IREE read version 1)")


def test_refuses_a_record_past_the_end(work):
    data = bytearray(join(work, *ARCHS).read_bytes())
    size = int.from_bytes(data[8 + 24 + 16:8 + 24 + 24], "little")
    data[8 + 24 + 8:8 + 24 + 16] = (1 << 20).to_bytes(8, "little")
    refusal(work, data,
            f"record 1 (aarch64) points outside the file: offset 1048576, "
            f"size {size}, but the file has {len(data)} bytes",
            "the file is truncated or corrupt; rebuild it with `ireepkg fatelf "
            "join`")


def test_refuses_a_truncated_image(work):
    data = join(work, *ARCHS).read_bytes()
    size = int.from_bytes(data[8 + 48 + 16:8 + 48 + 24], "little")
    cut = data[:3 * 4096 + 100]
    refusal(work, cut,
            f"record 2 (riscv64) points outside the file: offset 12288, size "
            f"{size}, but the file has {len(cut)} bytes",
            "the file is truncated or corrupt; rebuild it with `ireepkg fatelf "
            "join`")


@pytest.mark.parametrize("args,message", [
    (["join", "-o", "x.sos"], "'fatelf join' needs <elf>... [-o <out.sos>]"),
    (["select", "plugin.sos", "--arch", "arm64", "-o", "x.so"],
     "unknown architecture 'arm64' (did you mean \"aarch64\"?)"),
    (["select", "plugin.sos", "--arch", "sparc", "-o", "x.so"],
     "unknown architecture 'sparc'"),
    (["split", "a.sos", "b.sos"],
     "'fatelf split' takes at most 1 argument(s), got 'b.sos'"),
    (["dump"], "'fatelf dump' needs <file.sos> [--json]"),
    (["dump", "plugin.sos", "--jsn"],
     "unknown option '--jsn' for 'fatelf dump' (did you mean '--json'?)"),
])
def test_usage_errors(work, args, message):
    join(work, "x86_64")
    r = run("fatelf", *args, cwd=work)
    assert r.code == 2, r
    assert r.out == ""
    assert r.err.startswith(f"ireepkg: error: {message}\n  hint: ")
    assert not (work / "x.so").exists() and not (work / "x.sos").exists()


def to_stdout(work, *args):
    """Runs ireepkg with its standard output redirected to a file, as a
    shell's `> file` does; returns (exit code, bytes written, stderr)."""
    from conftest import ireepkg_path
    with open(work / "stdout.bin", "wb") as out:
        r = subprocess.run([str(ireepkg_path()), *args], cwd=work, stdout=out,
                           stderr=subprocess.PIPE, text=False, timeout=60)
    return r.returncode, (work / "stdout.bin").read_bytes(), r.stderr.decode()


def test_join_and_select_write_to_standard_output(work):
    """IREE's own build runs `iree-fatelf join a.so b.so > out.sos`: the same
    bytes as -o, with nothing else on standard output."""
    written = join(work, "x86_64", "aarch64").read_bytes()
    inputs = ["plugin.x86_64.so", "plugin.aarch64.so"]
    assert to_stdout(work, "fatelf", "join", *inputs) == (0, written, "")
    assert to_stdout(work, "fatelf", "join", *inputs, "-o", "-") == (0, written, "")
    r = run("fatelf", "select", "plugin.sos", "--arch", "aarch64", "-o", "a.so",
            cwd=work)
    assert r.code == 0, r.err
    image = (work / "a.so").read_bytes()
    assert image == (work / "plugin.aarch64.so").read_bytes()
    assert to_stdout(work, "fatelf", "select", "plugin.sos", "--arch",
                     "aarch64") == (0, image, "")
    assert to_stdout(work, "fatelf", "select", "plugin.sos", "--arch", "aarch64",
                     "-o", "-") == (0, image, "")


@pytest.mark.parametrize("args,message", [
    (["join", "plugin.x86_64.so"],
     "'fatelf join' needs -o <out.sos> (or -o - for standard output)"),
    (["select", "plugin.sos"],
     "'fatelf select' needs -o <out> (or -o - for standard output)"),
])
def test_join_and_select_write_no_binary_to_a_terminal(work, args, message):
    import os
    import pty
    from conftest import ireepkg_path
    join(work, "x86_64")
    primary, secondary = pty.openpty()
    try:
        r = subprocess.run([str(ireepkg_path()), "fatelf", *args], cwd=work,
                           stdout=secondary, stderr=subprocess.PIPE, text=True,
                           timeout=60)
    finally:
        os.close(secondary)
        os.close(primary)
    assert r.returncode == 2, r
    assert r.stderr.startswith(f"ireepkg: error: {message}\n  hint: "), r.stderr


def test_unknown_arch_lists_the_architectures(work):
    r = run("fatelf", "select", "plugin.sos", "--arch", "x86-64", "-o", "x.so",
            cwd=work)
    assert r.code == 2
    assert r.err == (
        "ireepkg: error: unknown architecture 'x86-64' (did you mean "
        "\"x86_64\"?)\n"
        "  hint: architectures are: x86_64, aarch64, riscv64, riscv32, arm\n")
