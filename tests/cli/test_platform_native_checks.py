"""Native libraries for Windows and macOS are checked in their platform's own
terms, at `pack` and again at `install` (an archive made by another tool):

- a DLL is for the declared machine (an i386 or arm64 DLL declared for
  windows-x86_64 is refused, naming both), exports the query function (the
  hint says __declspec(dllexport)), and imports only DLLs Windows finds:
  IREE opens plugins with LoadLibraryA(path), which does not search the
  plugin's own directory, so a DLL it imports from beside it is a warning;
- a Mach-O library, thin or universal, is (or holds a slice) for the
  declared architecture, exports _iree_hal_executable_plugin_query, carries
  a code signature when it is arm64, and reaches its dependencies outside
  /usr/lib and /System through @rpath or @loader_path (a warning otherwise);
- a truncated or crafted file is refused with a clean message.

The DLLs are linked here with mingw-w64's gcc and clang-22 (lld), the
Mach-O libraries with clang-22 and ld64.lld-22; universal files are joined
by `universal()` below."""
import json
import struct
import subprocess

import pytest

from archive_forge import MANIFEST, file, forge, manifest_bytes
from conftest import run, ireepkg_path
from test_native_checks import position

QUERY = "iree_hal_executable_plugin_query"

# The query function, exported as each platform's toolchain exports it.
PLUGIN_C = r"""
#ifdef _WIN32
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif
typedef struct { unsigned version; const char *name; } header_t;
static const header_t kHeader = {1, "platform-check-test"};
static const header_t *const kHeaderPtr = &kHeader;
EXPORT const header_t *const *
iree_hal_executable_plugin_query(unsigned max_version, void *reserved) {
  return max_version >= 1 ? &kHeaderPtr : 0;
}
#if defined(_WIN32) && defined(NO_CRT)
int __stdcall DllMainCRTStartup(void *module, unsigned reason, void *reserved) {
  return 1;
}
#endif
"""

# Exports something else only.
NO_QUERY_C = r"""
#ifdef _WIN32
__declspec(dllexport)
#endif
int plugin_version(void) { return 1; }
#if defined(_WIN32) && defined(NO_CRT)
int __stdcall DllMainCRTStartup(void *module, unsigned reason, void *reserved) {
  return 1;
}
#endif
"""

# A plugin calling into libraries it was linked against.
USER_C = r"""
#ifdef _WIN32
#define EXPORT __declspec(dllexport)
#define IMPORT __declspec(dllimport)
#else
#define EXPORT __attribute__((visibility("default")))
#define IMPORT
#endif
IMPORT int dep_value(void);
#ifdef WITH_MORE
IMPORT int system_value(void);
IMPORT int rpath_value(void);
#endif
EXPORT void *iree_hal_executable_plugin_query(unsigned max_version,
                                              void *reserved) {
#ifdef WITH_MORE
  return (void *)(long)(dep_value() + system_value() + rpath_value());
#else
  return (void *)(long long)dep_value();
#endif
}
"""


def cc(d, name, source, args):
    c = d / f"{name}.src.c"
    c.write_text(source)
    subprocess.run([*args, c], check=True, cwd=d)


def clang_dll(d, name, source, arch):
    out = d / f"{name}.{arch}.dll"
    cc(d, f"{name}.{arch}", source, ["clang-22", f"--target={arch}-w64-mingw32", "-O1",
                                     "-DNO_CRT", "-shared", "-nostdlib", "-fuse-ld=lld",
                                     "-o", out])
    return out.read_bytes()


def dylib(d, name, source, arch, *extra, install_name=None):
    out = d / f"lib{name}.{arch}.dylib"
    args = ["clang-22", f"--target={arch}-apple-macos11", "-O1", "-nostdlib", "-shared",
            "-fuse-ld=lld", "-o", out]
    if install_name:
        args.append(f"-Wl,-install_name,{install_name}")
    cc(d, f"{name}.{arch}", source, [*args, *extra])
    return out.read_bytes()


def universal(*slices: bytes) -> bytes:
    """A universal (fat) Mach-O file of thin `slices`, as lipo writes one:
    a big-endian fat_header and fat_arch table, each slice aligned to 2^14."""
    align = 14
    table = struct.pack(">II", 0xCAFEBABE, len(slices))
    body = b""
    offset = 1 << align
    for s in slices:
        cputype, cpusubtype = struct.unpack_from("<iI", s, 4)
        table += struct.pack(">iIIII", cputype, cpusubtype, offset, len(s), align)
        body += s + b"\0" * (-len(s) % (1 << align))
        offset += len(s) + (-len(s) % (1 << align))
    return table + b"\0" * ((1 << align) - len(table)) + body


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    """The bytes of the DLLs and Mach-O libraries the cases are made of."""
    d = tmp_path_factory.mktemp("native")
    out = {}
    # A DLL as mingw-w64 links one: it imports KERNEL32.dll and msvcrt.dll.
    cc(d, "mingw", PLUGIN_C, ["x86_64-w64-mingw32-gcc", "-O1", "-shared", "-o",
                              d / "mingw.dll"])
    out["dll"] = (d / "mingw.dll").read_bytes()
    for arch in ("i686", "aarch64"):
        out[f"dll_{arch}"] = clang_dll(d, "plugin", PLUGIN_C, arch)
    out["dll_no_query"] = clang_dll(d, "noquery", NO_QUERY_C, "x86_64")
    # A plugin importing a DLL of its own (shipped beside it), and the
    # system DLLs mingw-w64's runtime needs.
    cc(d, "dep", "__declspec(dllexport) int dep_value(void) { return 2; }\n",
       ["x86_64-w64-mingw32-gcc", "-shared", "-o", d / "libdep.dll"])
    cc(d, "user", USER_C, ["x86_64-w64-mingw32-gcc", "-O1", "-shared", "-o",
                           d / "user.dll", d / "libdep.dll"])
    out["dll_user"] = (d / "user.dll").read_bytes()

    for arch in ("arm64", "x86_64"):
        out[f"dylib_{arch}"] = dylib(d, "plugin", PLUGIN_C, arch)
    out["dylib_unsigned"] = dylib(d, "unsigned", PLUGIN_C, "arm64",
                                  "-Wl,-no_adhoc_codesign")
    out["dylib_no_query"] = dylib(d, "noquery", NO_QUERY_C, "arm64")
    # Dependencies: a system library, one through @rpath, one at a fixed
    # place outside the system (stubs with those install names).
    dylib(d, "dep", "int dep_value(void) { return 2; }\n", "arm64",
          install_name="/opt/dep/lib/libdep.dylib")
    dylib(d, "sys", "int system_value(void) { return 3; }\n", "arm64",
          install_name="/usr/lib/libSystem.B.dylib")
    dylib(d, "ok", "int rpath_value(void) { return 4; }\n", "arm64",
          install_name="@rpath/libok.dylib")
    out["dylib_user"] = dylib(d, "user", USER_C, "arm64", "-DWITH_MORE",
                              "-Wl,-fixup_chains", d / "libdep.arm64.dylib",
                              d / "libsys.arm64.dylib", d / "libok.arm64.dylib")
    return out


def system_plugin(name, library):
    return dict(MANIFEST, name=name, runtime={"plugins": [
        {"name": "p", "format": "system-library", "library": library}]})


def pack(tmp_path, manifest, files):
    """Packs a directory holding `files` ({path: bytes}) and `manifest`."""
    pkg = tmp_path / manifest["name"]
    for rel, data in files.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_bytes(data)
    (pkg / "ireeplugin.json").write_bytes(manifest_bytes(manifest))
    return pkg, run("pack", pkg, "-o", tmp_path / "dist")


def install(tmp_path, manifest, files, platform):
    """Installs a hand-made archive of `files` into a new prefix for
    `platform`."""
    archive = forge(tmp_path / f"{manifest['name']}.ireepkg",
                    [file(rel, data) for rel, data in files.items()],
                    manifest=manifest)
    r = run("install", "--prefix", tmp_path / "prefix", "--platform", platform, archive,
            env={"IREEPKG_CACHE_DIR": str(tmp_path / "cache")})
    return archive, r


def pack_error(pkg, m, value, pointer, message, hint):
    return (f"ireepkg: error: {pkg}/ireeplugin.json:{position(m, value)}: {pointer}: "
            f"{message}\n" + (f"  hint: {hint}\n" if hint else ""))


INSTALL_HINT = ("  hint: nothing was installed: the package's native libraries are "
                "not what its manifest declares\n")


def install_error(archive, m, value, pointer, message, hint):
    return (f"ireepkg: error: {archive}:ireeplugin.json:{position(m, value)}: "
            f"package '{m['name']}': member '{value}': {pointer}: {message}\n" +
            (f"  hint: {hint}\n" if hint else "") + INSTALL_HINT)


def warns_at_both(tmp_path, m, files, platform, value, warning):
    """`pack` packs the package and `install` installs its hand-made archive
    into a prefix for `platform`, each with `warning` (and its hint) about
    the library at `value`."""
    pointer = f"/runtime/plugins/0/library/{platform}"
    pkg, r = pack(tmp_path, m, files)
    assert r.code == 0, r.err
    assert r.err == (f"ireepkg: warning: {pkg}/ireeplugin.json:{position(m, value)}: "
                     f"{pointer}: {warning}")
    archive, r = install(tmp_path, m, files, platform)
    assert r.code == 0, r.err
    from regfix import without_summary
    assert without_summary(r.err) == (
        f"ireepkg: warning: {archive}:ireeplugin.json:{position(m, value)}: "
        f"package '{m['name']}': member '{value}': {pointer}: {warning}")


def check_both(tmp_path, m, files, platform, value, pointer, message, hint):
    """`pack` refuses the package and `install` its hand-made archive, with
    the same message; the prefix is not created."""
    pkg, r = pack(tmp_path, m, files)
    assert r.code == 1, r
    assert r.err == pack_error(pkg, m, value, pointer, message, hint)
    assert not (tmp_path / "dist").exists()
    archive, r = install(tmp_path, m, files, platform)
    assert r.code == 1, r
    assert r.err == install_error(archive, m, value, pointer, message, hint)
    assert not (tmp_path / "prefix" / "packages" / m["name"]).exists()


# --- Windows ----------------------------------------------------------------

WIN_REBUILD = ("build it for x86_64, e.g. with clang --target=x86_64-w64-mingw32 (or "
               "x86_64-pc-windows-msvc), or declare it for the platform it is built for")


@pytest.mark.parametrize("arch,found", [
    ("i686", "an i386 DLL (IMAGE_FILE_MACHINE_I386)"),
    ("aarch64", "an aarch64 DLL (IMAGE_FILE_MACHINE_ARM64)")])
def test_dll_for_another_machine(tmp_path, libs, arch, found):
    m = system_plugin("win-arch", {"windows-x86_64": "lib/p.dll"})
    check_both(tmp_path, m, {"lib/p.dll": libs[f"dll_{arch}"]}, "windows-x86_64",
               "lib/p.dll", "/runtime/plugins/0/library/windows-x86_64",
               f'"lib/p.dll" is declared for windows-x86_64 but it is {found}',
               WIN_REBUILD)


def test_dll_whose_machine_field_says_i386(tmp_path, libs):
    """An x86_64 DLL with only its COFF Machine field changed to i386: the
    field is what Windows goes by."""
    data = bytearray(libs["dll"])
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    assert data[pe:pe + 4] == b"PE\0\0"
    struct.pack_into("<H", data, pe + 4, 0x14C)  # IMAGE_FILE_MACHINE_I386
    m = system_plugin("win-patched", {"windows-x86_64": "lib/p.dll"})
    check_both(tmp_path, m, {"lib/p.dll": bytes(data)}, "windows-x86_64",
               "lib/p.dll", "/runtime/plugins/0/library/windows-x86_64",
               '"lib/p.dll" is declared for windows-x86_64 but it is an i386 DLL '
               "(IMAGE_FILE_MACHINE_I386)", WIN_REBUILD)


def test_dll_without_the_query_export(tmp_path, libs):
    m = system_plugin("win-quiet", {"windows-x86_64": "lib/p.dll"})
    check_both(tmp_path, m, {"lib/p.dll": libs["dll_no_query"]}, "windows-x86_64",
               "lib/p.dll", "/runtime/plugins/0/library/windows-x86_64",
               f'"lib/p.dll" does not export {QUERY} (required of a system-library '
               "runtime plugin)",
               "export it from the DLL: declare it __declspec(dllexport) (or list it "
               "in a .def file's EXPORTS)")


DLL_IMPORT_WARNING = (
    '"lib/p.dll" imports libdep.dll, which Windows will not look for beside the '
    "plugin: IREE loads plugins with LoadLibraryA(path), and a DLL a plugin imports "
    "is searched for in the application's directory, the system directories and "
    "PATH, not in the plugin's own directory\n"
    "  hint: link it statically into the plugin (MinGW's own runtime DLLs: "
    "-static-libgcc -static-libstdc++, or -static), or ship it next to the "
    "application that loads the plugin or in a directory on PATH\n")


def test_dll_importing_a_dll_of_its_own(tmp_path, libs):
    """Shipped beside the plugin, libdep.dll is not found when IREE loads it:
    a warning at pack, and at install for a Windows prefix; KERNEL32.dll and
    msvcrt.dll, which the plugin imports too, are not named."""
    m = system_plugin("win-dep", {"windows-x86_64": "lib/p.dll"})
    warns_at_both(tmp_path, m, {"lib/p.dll": libs["dll_user"]}, "windows-x86_64",
                  "lib/p.dll", DLL_IMPORT_WARNING)


def test_dll_of_another_platform_is_not_warned_about_at_install(tmp_path, libs):
    """A windows-aarch64 prefix does not load the package's x86_64 DLL: its
    imports are pack's business, not this install's."""
    m = system_plugin("win-dep", {"windows-x86_64": "lib/p.dll",
                                  "windows-aarch64": "lib/p-arm64.dll"})
    files = {"lib/p.dll": libs["dll_user"], "lib/p-arm64.dll": libs["dll_aarch64"]}
    archive, r = install(tmp_path, m, files, "windows-aarch64")
    assert r.code == 0, r.err
    assert "warning" not in r.err, r.err


def test_good_dlls_pack_and_install(tmp_path, libs):
    """What the checks accept: mingw-w64's x86_64 DLL (KERNEL32.dll and
    msvcrt.dll are system DLLs) and an aarch64 DLL for windows-aarch64."""
    m = system_plugin("win-good", {"windows-x86_64": "lib/p.dll",
                                   "windows-aarch64": "lib/p-arm64.dll"})
    files = {"lib/p.dll": libs["dll"], "lib/p-arm64.dll": libs["dll_aarch64"]}
    pkg, r = pack(tmp_path, m, files)
    assert (r.code, r.err) == (0, "")
    archive, r = install(tmp_path, m, files, "windows-x86_64")
    assert r.code == 0, r.err
    assert "warning" not in r.err


# --- macOS ------------------------------------------------------------------

def test_dylib_for_another_architecture(tmp_path, libs):
    m = system_plugin("mac-arch", {"macos-x86_64": "lib/libp.dylib"})
    check_both(tmp_path, m, {"lib/libp.dylib": libs["dylib_arm64"]}, "macos-x86_64",
               "lib/libp.dylib", "/runtime/plugins/0/library/macos-x86_64",
               '"lib/libp.dylib" is declared for macos-x86_64 but it is an aarch64 '
               "Mach-O library (CPU_TYPE_ARM64)",
               "build it for x86_64, e.g. with clang --target=x86_64-apple-macos11, "
               "or declare it for the platform it is built for")


def test_universal_dylib_without_the_declared_slice(tmp_path, libs):
    m = system_plugin("mac-fat", {"macos-aarch64": "lib/libp.dylib"})
    check_both(tmp_path, m, {"lib/libp.dylib": universal(libs["dylib_x86_64"])},
               "macos-aarch64", "lib/libp.dylib",
               "/runtime/plugins/0/library/macos-aarch64",
               '"lib/libp.dylib" is declared for macos-aarch64 but it is a universal '
               "binary without an aarch64 slice (it holds x86_64)",
               "add the slice (lipo -create <one file per architecture> -output "
               "lib/libp.dylib), or declare the file only for the architectures it "
               "holds")


SIGN_HINT = ("sign it (ad hoc is enough): codesign -s - lib/libp.dylib; or link it "
             "with ld64.lld, which signs arm64 output ad hoc")


def test_unsigned_arm64_dylib(tmp_path, libs):
    m = system_plugin("mac-unsigned", {"macos-aarch64": "lib/libp.dylib"})
    check_both(tmp_path, m, {"lib/libp.dylib": libs["dylib_unsigned"]},
               "macos-aarch64", "lib/libp.dylib",
               "/runtime/plugins/0/library/macos-aarch64",
               '"lib/libp.dylib" is an arm64 Mach-O file without a code signature; '
               "macOS does not load unsigned arm64 code", SIGN_HINT)


def test_unsigned_arm64_slice_of_a_universal_dylib(tmp_path, libs):
    m = system_plugin("mac-fat-unsigned", {"macos-aarch64": "lib/libp.dylib",
                                           "macos-x86_64": "lib/libp.dylib"})
    fat = universal(libs["dylib_x86_64"], libs["dylib_unsigned"])
    check_both(tmp_path, m, {"lib/libp.dylib": fat}, "macos-aarch64",
               "lib/libp.dylib", "/runtime/plugins/0/library/macos-aarch64",
               '"lib/libp.dylib" (its aarch64 slice) is an arm64 Mach-O file without '
               "a code signature; macOS does not load unsigned arm64 code", SIGN_HINT)


def test_dylib_without_the_query_export(tmp_path, libs):
    m = system_plugin("mac-quiet", {"macos-aarch64": "lib/libp.dylib"})
    check_both(tmp_path, m, {"lib/libp.dylib": libs["dylib_no_query"]},
               "macos-aarch64", "lib/libp.dylib",
               "/runtime/plugins/0/library/macos-aarch64",
               f'"lib/libp.dylib" does not export {QUERY} (required of a '
               "system-library runtime plugin)",
               'export it with default visibility, e.g. __attribute__((visibility('
               f'"default"))); Mach-O names it with a leading underscore (_{QUERY})')


DYLIB_DEP_WARNING = (
    '"lib/libp.dylib" loads /opt/dep/lib/libdep.dylib by a path that is neither the '
    "system's (/usr/lib, /System) nor the plugin's (@rpath, @loader_path): the "
    "machine the package is installed on need not have it\n"
    "  hint: ship it in the package and refer to it through @loader_path or @rpath "
    "(e.g. install_name_tool -change /opt/dep/lib/libdep.dylib "
    "@loader_path/libdep.dylib lib/libp.dylib), or link it statically\n")


def test_dylib_with_a_fixed_dependency_path(tmp_path, libs):
    """/opt/dep/lib/libdep.dylib is named; /usr/lib/libSystem.B.dylib and
    @rpath/libok.dylib, which the plugin loads too, are not."""
    m = system_plugin("mac-dep", {"macos-aarch64": "lib/libp.dylib"})
    warns_at_both(tmp_path, m, {"lib/libp.dylib": libs["dylib_user"]},
                  "macos-aarch64", "lib/libp.dylib", DYLIB_DEP_WARNING)


def test_good_dylibs_pack_and_install(tmp_path, libs):
    """ld64.lld signs arm64 output ad hoc; a universal file serves both
    macOS platforms, a thin one its own."""
    fat = universal(libs["dylib_x86_64"], libs["dylib_arm64"])
    m = system_plugin("mac-good", {"macos-aarch64": "lib/libp.dylib",
                                   "macos-x86_64": "lib/libp.dylib"})
    m["runtime"]["plugins"].append({"name": "q", "format": "system-library",
                                    "library": {"macos-aarch64": "lib/libq.dylib"}})
    files = {"lib/libp.dylib": fat, "lib/libq.dylib": libs["dylib_arm64"]}
    pkg, r = pack(tmp_path, m, files)
    assert (r.code, r.err) == (0, "")
    archive, r = install(tmp_path, m, files, "macos-aarch64")
    assert r.code == 0, r.err
    assert "warning" not in r.err


# --- Malformed files --------------------------------------------------------

def inspect(path):
    tool = ireepkg_path().parent / "ireepkg-inspect"
    p = subprocess.run([tool, "--", path], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["files"][0]


def crafted(libs):
    """Files cut short or pointing outside themselves, each with the name of
    what it claims to be."""
    dll, dylib_ = libs["dll"], libs["dylib_arm64"]
    pe = struct.unpack_from("<I", dll, 0x3C)[0]
    fat = bytearray(universal(libs["dylib_x86_64"], libs["dylib_arm64"]))
    struct.pack_into(">I", fat, 8 + 20 + 8, len(fat))  # slice 1 starts at the end
    huge_sig = bytearray(dylib_)
    # Every load command of the thin arm64 file, to find LC_CODE_SIGNATURE
    # (0x1d) and point its data past the end.
    ncmds, sizeofcmds = struct.unpack_from("<II", huge_sig, 16)
    at = 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", huge_sig, at)
        if cmd == 0x1D:
            struct.pack_into("<II", huge_sig, at + 8, len(huge_sig) - 4, 4096)
        at += size
    return {
        "dll-headers-only": dll[:pe + 24],
        "dll-half": dll[:len(dll) // 2],
        "dylib-header-only": dylib_[:40],
        "dylib-half": dylib_[:len(dylib_) // 2],
        "fat-slice-outside": bytes(fat),
        "fat-table-only": bytes(fat[:48]),
        "dylib-signature-outside": bytes(huge_sig),
    }


def test_crafted_files_give_clean_errors(tmp_path, libs):
    """ireepkg-inspect describes each without crashing, with what is wrong;
    pack and install refuse each with that message, naming the file."""
    (tmp_path / "raw").mkdir()
    for name, data in crafted(libs).items():
        path = tmp_path / "raw" / name
        path.write_bytes(data)
        why = inspect(path)["error"]
        assert why, name
        if name == "dll-half":
            assert why.endswith(") lies outside the file (is the file cut short?)"), why
        is_dll = name.startswith("dll")
        platform = "windows-x86_64" if is_dll else "macos-aarch64"
        rel = "lib/p.dll" if is_dll else "lib/libp.dylib"
        m = system_plugin(f"crafted-{name}", {platform: rel})
        d = tmp_path / name
        d.mkdir()
        pointer = f"/runtime/plugins/0/library/{platform}"
        message = f'"{rel}" is not a native library: {why}'
        pkg, r = pack(d, m, {rel: data})
        assert r.code == 1, (name, r)
        assert r.err == pack_error(pkg, m, rel, pointer, message, ""), (name, r.err)
        archive, r = install(d, m, {rel: data}, platform)
        assert r.code == 1, (name, r)
        assert r.err == install_error(archive, m, rel, pointer, message, ""), (name, r.err)
