"""Builds runtime_integration on its own for one target with its toolchain
file (cmake/toolchains/<platform>.cmake) and checks what came out: the
format and architecture of libireepkg_runtime (shared and static) and of
ireepkg-runtime, and that they need nothing beyond the target's C library.

    build_runtime.py <platform> <build directory>

The lanes (test_windows.py, test_aarch64.py) run the ireepkg-runtime built
here; the macOS builds are checked here and nowhere else (there is no macOS
machine to run them)."""
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]

# What each target's files must be: (magic, where the machine is, the
# machine, library names, the program, what they may need).
ELF_AARCH64 = 183
MACHO_ARM64, MACHO_X86_64 = 0x0100000C, 0x01000007
PE_AMD64 = 0x8664


def machine_of(path: pathlib.Path) -> tuple[str, int]:
    data = path.read_bytes()
    if data[:4] == b"\x7fELF":
        return "elf", int.from_bytes(data[18:20], "little")
    if data[:4] == b"\xcf\xfa\xed\xfe":
        return "macho", int.from_bytes(data[4:8], "little")
    if data[:2] == b"MZ":
        pe = int.from_bytes(data[0x3C:0x40], "little")
        assert data[pe:pe + 4] == b"PE\0\0", f"{path}: MZ without a PE header"
        return "pe", int.from_bytes(data[pe + 4:pe + 6], "little")
    raise AssertionError(f"{path}: not ELF, Mach-O or PE")


def needed(path: pathlib.Path, fmt: str) -> list[str]:
    if fmt == "pe":
        out = subprocess.run(["x86_64-w64-mingw32-objdump", "-p", path],
                             capture_output=True, text=True, check=True).stdout
        return sorted({l.split("DLL Name:")[1].strip() for l in out.splitlines()
                       if "DLL Name:" in l})
    if fmt == "elf":
        out = subprocess.run(["llvm-readelf-22", "-d", path],
                             capture_output=True, text=True, check=True).stdout
        return sorted(l.split("[")[1].split("]")[0] for l in out.splitlines()
                      if "(NEEDED)" in l)
    out = subprocess.run(["llvm-objdump-22", "--macho", "--dylibs-used", path],
                         capture_output=True, text=True, check=True).stdout
    return sorted(l.split(" (")[0].strip() for l in out.splitlines()[1:]
                  if l.strip() and "libireepkg_runtime" not in l)


TARGETS = {
    "windows-x86_64": ("pe", PE_AMD64, "bin/libireepkg_runtime.dll",
                       "bin/ireepkg-runtime.exe", ["KERNEL32.dll", "msvcrt.dll"]),
    "linux-aarch64": ("elf", ELF_AARCH64, "lib/libireepkg_runtime.so.0",
                      "bin/ireepkg-runtime", ["libc.so.6"]),
    "macos-arm64": ("macho", MACHO_ARM64, "lib/libireepkg_runtime.0.dylib",
                    "bin/ireepkg-runtime", ["/usr/lib/libSystem.B.dylib"]),
    "macos-x86_64": ("macho", MACHO_X86_64, "lib/libireepkg_runtime.0.dylib",
                     "bin/ireepkg-runtime", ["/usr/lib/libSystem.B.dylib"]),
}


def main() -> int:
    platform, build = sys.argv[1], pathlib.Path(sys.argv[2])
    fmt, machine, shared, program, allowed = TARGETS[platform]
    shutil.rmtree(build, ignore_errors=True)
    for cmd in (["cmake", "-S", REPO / "runtime_integration", "-B", build,
                 "-G", "Ninja",
                 f"-DCMAKE_TOOLCHAIN_FILE={REPO}/cmake/toolchains/{platform}.cmake"],
                ["cmake", "--build", build]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            print(r.stdout, r.stderr, sep="\n")
            print(f"FAIL: {' '.join(map(str, cmd))} exited {r.returncode}")
            return 1
    failures = []
    for rel in (shared, program):
        got = machine_of(build / rel)
        if got != (fmt, machine):
            failures.append(f"{rel} is {got}, expected {(fmt, machine)}")
        deps = needed(build / rel, fmt)
        if deps != allowed:
            failures.append(f"{rel} needs {deps}, expected only {allowed}")
    if not (build / "lib" / "libireepkg_runtime.a").is_file():
        failures.append("no static library lib/libireepkg_runtime.a")
    for f in failures:
        print(f"FAIL: {platform}: {f}")
    if not failures:
        print(f"ok: {platform}: {shared}, {program} and the static library")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
