"""End-to-end tests of the example packages with the real IREE tools.

The build (CMake target `simple_mul_package`) lays out examples/simple-mul as a
package directory in <build>/examples/simple-mul: two freestanding embedded
ELF plugins (x86_64, aarch64) and a host system library. These tests check
the files (ELF machine, no dependencies, no interpreter, the exported entry
point), the plugin ABI itself through ctypes, and that IREE's
iree-compile / iree-run-module / iree.runtime of the pinned wheels run
examples/programs/simple_mul.mlir with each form of the plugin.
"""
import ctypes
import json
import os
import pathlib
import platform
import re
import struct
import subprocess
import sys

import pytest

from conftest import REPO

BUILD = pathlib.Path(os.environ.get("IREEPKG_BUILD_DIR", REPO / "build"))
SIMPLE_MUL = BUILD / "examples" / "simple-mul"
MUL_PIPELINE = BUILD / "examples" / "mul-pipeline"
PROGRAM = REPO / "examples" / "programs" / "simple_mul.mlir"
VENV_BIN = pathlib.Path(sys.executable).parent

EMBEDDED = {
    "x86_64": SIMPLE_MUL / "runtime" / "simple_mul.x86_64.so",
    "x86_64_v3": SIMPLE_MUL / "runtime" / "simple_mul.x86_64_v3.so",
    "aarch64": SIMPLE_MUL / "runtime" / "simple_mul.aarch64.so",
}
SYSTEM_LIB = SIMPLE_MUL / "runtime" / "linux-x86_64" / "libsimple_mul.so"
ELF_MACHINE = {"x86_64": 0x3E, "x86_64_v3": 0x3E, "aarch64": 0xB7}
QUERY = "iree_hal_executable_plugin_query"

HOST_ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64",
             "arm64": "aarch64"}.get(platform.machine().lower())
ON_LINUX_X86_64 = sys.platform.startswith("linux") and HOST_ARCH == "x86_64"

# What iree-run-module prints for @simple_mul(8xf32=2, 8xf32=4).
EXPECTED = "8xf32=8 8 8 8 8 8 8 8"
# What IREE reports when no plugin resolves `simple_mul_workgroup`: the
# embedded-ELF loader declines the executable and no other loader takes it.
MISSING_IMPORT = ("NOT_FOUND; no executable loader registered for the given "
                  "executable format 'embedded-elf-")

RUN_ARGS = ["--device=local-sync", "--function=simple_mul",
            "--input=8xf32=2", "--input=8xf32=4"]


def tool(name):
    path = VENV_BIN / name
    assert path.exists(), f"{path} is missing: run scripts/setup first"
    return path


def run_module(vmfb, *args, env=None):
    proc = subprocess.run(
        [str(tool("iree-run-module")), f"--module={vmfb}", *args],
        capture_output=True, text=True, timeout=120,
        env=dict(os.environ, **(env or {})))
    return proc


def compile_program(out, *extra):
    proc = subprocess.run(
        [str(tool("iree-compile")), str(PROGRAM),
         "--iree-hal-target-device=local",
         "--iree-hal-local-target-device-backends=llvm-cpu",
         "--iree-llvmcpu-target-cpu=host", *extra, "-o", str(out)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 0
    return out


@pytest.fixture(scope="module")
def vmfb(tmp_path_factory):
    return compile_program(tmp_path_factory.mktemp("vmfb") / "simple_mul.vmfb")


def host_plugin_specs():
    """Every --executable_plugin value that must work on this host."""
    specs = []
    if ON_LINUX_X86_64:
        specs.append(pytest.param(str(SYSTEM_LIB), id="system-library"))
    if HOST_ARCH in EMBEDDED:
        lib = EMBEDDED[HOST_ARCH]
        specs.append(pytest.param(f"embedded:{lib}", id="embedded-prefix"))
        # Without `embedded:` or `.sos` the system loader dlopen()s it; a
        # static, dependency-free ELF shared object loads that way too.
        specs.append(pytest.param(str(lib), id="embedded-elf-path"))
    return specs


#===-----------------------------------------------------------------------===#
# The package directory and its libraries
#===-----------------------------------------------------------------------===#

class Elf:
    """The few facts of a little-endian ELF64 shared object these tests need."""

    PT_DYNAMIC, PT_INTERP = 2, 3
    DT_NULL, DT_NEEDED = 0, 1
    SHT_DYNSYM = 11

    def __init__(self, path):
        self.data = data = pathlib.Path(path).read_bytes()
        assert data[:4] == b"\x7fELF", f"{path} is not ELF"
        assert data[4] == 2 and data[5] == 1, f"{path}: not ELF64 little-endian"
        (self.type, self.machine, _, _, phoff, shoff, _, _, phentsize, phnum,
         shentsize, shnum, _) = struct.unpack_from("<HHIQQQIHHHHHH", data, 16)
        self.segments = [struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
                         for i in range(phnum)]
        self.sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                         for i in range(shnum)]

    def has_interpreter(self):
        return any(seg[0] == self.PT_INTERP for seg in self.segments)

    def needed(self):
        """DT_NEEDED entries (as string-table offsets; only the count matters)."""
        entries = []
        for seg in self.segments:
            if seg[0] != self.PT_DYNAMIC:
                continue
            offset, size = seg[2], seg[5]
            for pos in range(offset, offset + size, 16):
                tag, value = struct.unpack_from("<qQ", self.data, pos)
                if tag == self.DT_NULL:
                    break
                if tag == self.DT_NEEDED:
                    entries.append(value)
        return entries

    def exported_functions(self):
        """Defined, global, default-visibility FUNC symbols of .dynsym."""
        names = set()
        for sec in self.sections:
            if sec[1] != self.SHT_DYNSYM:
                continue
            strtab = self.sections[sec[6]]
            str_off = strtab[4]
            sym_off, sym_size, entsize = sec[4], sec[5], sec[9]
            for pos in range(sym_off, sym_off + sym_size, entsize):
                name, info, other, shndx, _, _ = struct.unpack_from(
                    "<IBBHQQ", self.data, pos)
                if (info >> 4) == 1 and (info & 0xF) == 2 and shndx != 0 \
                        and (other & 3) == 0:
                    end = self.data.index(b"\0", str_off + name)
                    names.add(self.data[str_off + name:end].decode())
        return names


def test_package_layout_matches_manifest():
    manifest = json.loads((SIMPLE_MUL / "ireeplugin.json").read_text())
    source = json.loads(
        (REPO / "examples" / "simple-mul" / "ireeplugin.json").read_text())
    assert manifest == source
    paths = {path for plugin in manifest["runtime"]["plugins"]
             for path in plugin["library"].values()}
    assert paths == {"runtime/simple_mul.x86_64.so",
                     "runtime/simple_mul.x86_64_v3.so",
                     "runtime/simple_mul.aarch64.so",
                     "runtime/linux-x86_64/libsimple_mul.so",
                     "runtime/windows-x86_64/simple_mul.dll",
                     "runtime/windows-aarch64/simple_mul.dll"}
    for path in paths:
        assert (SIMPLE_MUL / path).is_file(), f"{path} was not built"
    for plugin in manifest["runtime"]["plugins"]:
        assert plugin["imports"] == ["simple_mul_workgroup"]
    pipeline = json.loads((MUL_PIPELINE / "ireeplugin.json").read_text())
    for hook in pipeline["compiler"]["hooks"]:
        if "file" in hook:
            assert (MUL_PIPELINE / hook["file"]).is_file()


@pytest.mark.parametrize("arch", sorted(EMBEDDED))
def test_embedded_elf_is_standalone(arch):
    elf = Elf(EMBEDDED[arch])
    assert elf.type == 3, "not a shared object (ET_DYN)"
    assert elf.machine == ELF_MACHINE[arch]
    assert elf.needed() == [], "an embedded ELF may not depend on libraries"
    assert not elf.has_interpreter()
    assert QUERY in elf.exported_functions()


@pytest.mark.skipif(not ON_LINUX_X86_64, reason="linux-x86_64 build only")
def test_system_library_exports_query():
    elf = Elf(SYSTEM_LIB)
    assert elf.machine == ELF_MACHINE["x86_64"]
    assert elf.exported_functions() & {QUERY} == {QUERY}


#===-----------------------------------------------------------------------===#
# The plugin ABI, driven from ctypes (our own stand-in for IREE's host)
#===-----------------------------------------------------------------------===#

class StringView(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("size", ctypes.c_size_t)]


class StringPair(ctypes.Structure):
    _fields_ = [("key", StringView), ("value", StringView)]


AllocatorCtl = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))


class Allocator(ctypes.Structure):
    _fields_ = [("self", ctypes.c_void_p), ("ctl", AllocatorCtl)]


class Environment(ctypes.Structure):
    _fields_ = [("host_allocator", Allocator)]


class Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("name", ctypes.c_char_p),
                ("description", ctypes.c_char_p), ("features", ctypes.c_uint32),
                ("sanitizer", ctypes.c_int), ("reserved", ctypes.c_uint64 * 8)]


class ResolveParams(ctypes.Structure):
    _fields_ = [("count", ctypes.c_size_t),
                ("symbol_names", ctypes.POINTER(ctypes.c_char_p)),
                ("out_fn_ptrs", ctypes.POINTER(ctypes.c_void_p)),
                ("out_fn_contexts", ctypes.POINTER(ctypes.c_void_p))]


LoadFn = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(Environment),
                          ctypes.c_size_t, ctypes.POINTER(StringPair),
                          ctypes.POINTER(ctypes.c_void_p))
UnloadFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
ResolveFn = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.POINTER(ResolveParams),
                             ctypes.POINTER(ctypes.c_uint32))
ImportFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_void_p)


class PluginV0(ctypes.Structure):
    _fields_ = [("header", ctypes.POINTER(Header)), ("load", LoadFn),
                ("unload", UnloadFn), ("resolve", ResolveFn)]


class MulParams(ctypes.Structure):
    """The packed arguments of simple_mul_workgroup (see simple_mul.c)."""
    _fields_ = [("a", ctypes.c_void_p), ("a_offset", ctypes.c_size_t),
                ("b", ctypes.c_void_p), ("b_offset", ctypes.c_size_t),
                ("out", ctypes.c_void_p), ("out_offset", ctypes.c_size_t),
                ("dim", ctypes.c_size_t), ("tile", ctypes.c_size_t)]


STANDALONE = 1 << 0
OK, INVALID_ARGUMENT, NOT_FOUND = 0, 3, 5
MISSING_OPTIONAL = 1 << 0
MALLOC, CALLOC, REALLOC, FREE = 0, 1, 2, 3


class HostAllocator:
    """A host allocator that records what the plugin allocates."""

    def __init__(self):
        self.blocks = {}
        self.ctl = AllocatorCtl(self._ctl)
        self.allocator = Allocator(None, self.ctl)

    def _ctl(self, _self, command, params, inout_ptr):
        if command in (MALLOC, CALLOC):
            size = ctypes.c_size_t.from_address(params).value
            block = ctypes.create_string_buffer(max(size, 1))
            self.blocks[ctypes.addressof(block)] = block
            inout_ptr[0] = ctypes.addressof(block)
            return OK
        if command == FREE:
            del self.blocks[inout_ptr[0]]
            return OK
        return 12  # UNIMPLEMENTED


def host_loadable_libraries():
    libs = []
    if ON_LINUX_X86_64:
        libs.append(pytest.param((SYSTEM_LIB, False), id="system-library"))
    if sys.platform.startswith("linux") and HOST_ARCH in EMBEDDED:
        libs.append(pytest.param((EMBEDDED[HOST_ARCH], True), id="embedded-elf"))
    return libs


@pytest.fixture(params=host_loadable_libraries())
def plugin(request):
    path, standalone = request.param
    lib = ctypes.CDLL(str(path))
    query = getattr(lib, QUERY)
    query.restype = ctypes.POINTER(PluginV0)
    query.argtypes = [ctypes.c_uint32, ctypes.c_void_p]
    assert not query(0, None), "version 0 predates v0.1: must return NULL"
    interface = query(1, None)
    assert interface
    return interface.contents, standalone


def status_code(status):
    return (status or 0) & 0x1F


def load(interface, host, **params):
    pairs = (StringPair * max(len(params), 1))()
    keep = []
    for i, (key, value) in enumerate(params.items()):
        k, v = key.encode(), value.encode()
        keep += [k, v]
        pairs[i] = StringPair(StringView(k, len(k)), StringView(v, len(v)))
    self_ptr = ctypes.c_void_p()
    env = Environment(host.allocator)
    status = interface.load(ctypes.byref(env), len(params), pairs,
                            ctypes.byref(self_ptr))
    return status_code(status), self_ptr.value


def resolve(interface, self_ptr, names, prefilled=None):
    count = len(names)
    symbols = (ctypes.c_char_p * count)(*[n.encode() for n in names])
    fns = (ctypes.c_void_p * count)()
    contexts = (ctypes.c_void_p * count)()
    for i, (fn, ctx) in (prefilled or {}).items():
        fns[i], contexts[i] = fn, ctx
    params = ResolveParams(count, symbols, fns, contexts)
    resolution = ctypes.c_uint32(0xFFFF)
    status = interface.resolve(self_ptr, ctypes.byref(params),
                               ctypes.byref(resolution))
    return status_code(status), resolution.value, list(fns), list(contexts)


def call_mul(fn, context, a, b, tile=0):
    n = len(a)
    fa, fb = (ctypes.c_float * n)(*a), (ctypes.c_float * n)(*b)
    out = (ctypes.c_float * (n + 1))(*([-1.0] * (n + 1)))
    params = MulParams(ctypes.addressof(fa), 0, ctypes.addressof(fb), 0,
                       ctypes.addressof(out), 1, n, tile)
    assert ImportFn(fn)(ctypes.byref(params), context, None) == 0
    return list(out)


def test_plugin_header(plugin):
    interface, standalone = plugin
    header = interface.header.contents
    assert header.version == 1
    assert header.name == b"simple_mul"
    assert header.features & STANDALONE == (STANDALONE if standalone else 0)
    assert header.sanitizer == 0
    assert list(header.reserved) == [0] * 8


def test_plugin_load_resolve_call_unload(plugin):
    interface, _ = plugin
    host = HostAllocator()
    status, self_ptr = load(interface, host)
    assert status == OK and self_ptr
    assert list(host.blocks) == [self_ptr], "state comes from the host allocator"

    status, resolution, fns, contexts = resolve(
        interface, self_ptr, ["simple_mul_workgroup"])
    assert (status, resolution) == (OK, 0)
    assert fns[0] and contexts[0] == self_ptr
    # The offset of `out` (1 element) is applied by the plugin itself.
    assert call_mul(fns[0], contexts[0], [1, 2, 3], [4, 5, 6]) == [-1, 4, 10, 18]

    interface.unload(self_ptr)
    assert host.blocks == {}, "unload frees the state"


def test_plugin_tiles_of_64(plugin):
    interface, _ = plugin
    host = HostAllocator()
    _, self_ptr = load(interface, host)
    _, _, fns, contexts = resolve(interface, self_ptr, ["simple_mul_workgroup"])
    a = [float(i) for i in range(100)]
    out = call_mul(fns[0], contexts[0], a, [2.0] * 100, tile=1)
    assert out[1:65] == [-1.0] * 64  # tile 0 untouched
    assert out[65:] == [2.0 * i for i in range(64, 100)]
    interface.unload(self_ptr)


def test_plugin_scale_parameter(plugin):
    interface, _ = plugin
    host = HostAllocator()
    status, self_ptr = load(interface, host, other="ignored", scale="3")
    assert status == OK
    _, _, fns, contexts = resolve(interface, self_ptr, ["simple_mul_workgroup"])
    assert call_mul(fns[0], contexts[0], [2, 4], [4, 4]) == [-1, 24, 48]
    interface.unload(self_ptr)
    assert host.blocks == {}
    for bad in ("", "x", "1.5", "99999999999"):
        status, self_ptr = load(interface, host, scale=bad)
        assert (status, self_ptr) == (INVALID_ARGUMENT, None), bad
    assert host.blocks == {}


def test_plugin_resolution_rules(plugin):
    interface, _ = plugin
    host = HostAllocator()
    _, self_ptr = load(interface, host)

    # Missing optional import: OK with the MISSING_OPTIONAL bit.
    status, resolution, fns, _ = resolve(
        interface, self_ptr, ["?absent", "simple_mul_workgroup"])
    assert (status, resolution) == (OK, MISSING_OPTIONAL)
    assert fns[0] is None and fns[1]

    # An optional import the plugin has resolves normally.
    status, resolution, fns, _ = resolve(
        interface, self_ptr, ["?simple_mul_workgroup"])
    assert (status, resolution, bool(fns[0])) == (OK, 0, True)

    # Missing required import: NOT_FOUND, but the rest is still filled.
    status, _, fns, _ = resolve(
        interface, self_ptr, ["absent", "simple_mul_workgroup"])
    assert status == NOT_FOUND
    assert fns[0] is None and fns[1]

    # Entries already filled (by a later-registered plugin) are left alone.
    status, resolution, fns, contexts = resolve(
        interface, self_ptr, ["absent", "simple_mul_workgroup"],
        prefilled={0: (0x1000, 0x2000), 1: (0x3000, 0x4000)})
    assert (status, resolution) == (OK, 0)
    assert (fns, contexts) == ([0x1000, 0x3000], [0x2000, 0x4000])

    interface.unload(self_ptr)
    assert host.blocks == {}


#===-----------------------------------------------------------------------===#
# IREE's tools and Python runtime
#===-----------------------------------------------------------------------===#

@pytest.mark.parametrize("spec", host_plugin_specs())
def test_run_module_with_plugin(vmfb, spec):
    proc = run_module(vmfb, *RUN_ARGS, f"--executable_plugin={spec}")
    assert proc.returncode == 0, proc.stderr
    assert EXPECTED in proc.stdout


@pytest.mark.skipif(HOST_ARCH not in EMBEDDED or not ON_LINUX_X86_64,
                    reason="needs both plugin forms")
def test_run_module_with_two_plugins(vmfb):
    # The last plugin is asked first; the embedded one has the import, the
    # system library is never consulted for it. Either order works.
    for order in ([SYSTEM_LIB, f"embedded:{EMBEDDED[HOST_ARCH]}"],
                  [f"embedded:{EMBEDDED[HOST_ARCH]}", SYSTEM_LIB]):
        proc = run_module(vmfb, *RUN_ARGS,
                          *[f"--executable_plugin={p}" for p in order])
        assert proc.returncode == 0, proc.stderr
        assert EXPECTED in proc.stdout


def test_run_module_without_plugin_fails(vmfb):
    proc = run_module(vmfb, *RUN_ARGS)
    assert proc.returncode != 0
    assert MISSING_IMPORT in proc.stderr, proc.stderr
    assert EXPECTED not in proc.stdout


@pytest.mark.parametrize("spec", host_plugin_specs())
def test_run_module_with_flagfile(vmfb, tmp_path, spec):
    flagfile = tmp_path / "plugins.flags"
    flagfile.write_text(
        "# written by ireepkg's tests\n"
        "\n"
        "// the plugin, unquoted (list flags keep quotes)\n"
        f"--executable_plugin={spec}\n"
        "--device=local-sync\n")
    proc = run_module(vmfb, f"--flagfile={flagfile}", "--function=simple_mul",
                      "--input=8xf32=2", "--input=8xf32=4")
    assert proc.returncode == 0, proc.stderr
    assert EXPECTED in proc.stdout


PY_CALL = """
import sys
import numpy as np
import iree.runtime as rt
module = rt.load_vm_flatbuffer_file(sys.argv[1], driver="local-sync")
a = np.arange(1, 101, dtype=np.float32)
b = np.full(100, 0.5, dtype=np.float32)
result = np.asarray(module.simple_mul(a, b).to_host())
assert result.dtype == np.float32 and result.shape == (100,)
assert (result == a * b).all(), result
print("product ok")
"""


@pytest.mark.parametrize("spec", host_plugin_specs())
def test_python_runtime_with_plugin(vmfb, spec):
    proc = subprocess.run(
        [sys.executable, "-c", PY_CALL, str(vmfb)],
        capture_output=True, text=True, timeout=120,
        env=dict(os.environ, IREE_PY_RUNTIME_FLAGS=f"--executable_plugin={spec}"))
    assert proc.returncode == 0, proc.stderr
    assert "product ok" in proc.stdout


def test_python_runtime_without_plugin_fails(vmfb):
    env = dict(os.environ)
    env.pop("IREE_PY_RUNTIME_FLAGS", None)
    proc = subprocess.run([sys.executable, "-c", PY_CALL, str(vmfb)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode != 0
    assert MISSING_IMPORT in proc.stderr, proc.stderr


@pytest.mark.skipif(HOST_ARCH not in EMBEDDED, reason="no plugin for this host")
def test_mul_pipeline_transform_spec(tmp_path):
    # The mul-pipeline package's spec is valid for this iree-compile and does
    # not change the program's result.
    spec = MUL_PIPELINE / "specs" / "mul_spec.mlir"
    out = compile_program(tmp_path / "with_spec.vmfb",
                          f"--iree-preprocessing-transform-spec-filename={spec}")
    proc = run_module(out, *RUN_ARGS,
                      f"--executable_plugin=embedded:{EMBEDDED[HOST_ARCH]}")
    assert proc.returncode == 0, proc.stderr
    assert EXPECTED in proc.stdout


def test_iree_opt_parses_transform_spec():
    spec = MUL_PIPELINE / "specs" / "mul_spec.mlir"
    proc = subprocess.run([str(tool("iree-opt")), str(spec)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"transform\.named_sequence @__transform_main", proc.stdout)
