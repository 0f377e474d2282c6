"""Runtime builds chosen by CPU level, end to end: one prefix holds
simple-mul with its baseline embedded-ELF build (the example's) and
x86_64_v3 and x86_64_v4 builds of the same kernel (built here as
cmake/ireepkgHelpers.cmake builds ARCHES x86_64_v3). A program linked against libireepkg_runtime
(build/bin/ireepkg_cpu_choice) picks the build for the CPU it runs on:
under `qemu-x86_64 -cpu Nehalem` (x86-64-v2), `-cpu Haswell` (v3) and
natively (v4 where the CPU has AVX-512). What each CPU should get is read
from the CPU itself, through IREE's iree-cpuinfo run the same way, never
assumed; IREE's iree-run-module, run the same way with the flags the program
wrote, gives the same numbers with each build. `ireepkg flags runtime
--cpu-level` chooses for another machine's CPU."""
import json
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import BUILD, EXAMPLES, REPO, pack, run
from cpufix import RUNTIME_LIBS, V2, VENV_BIN, cpuinfo, expected_key

CPU_CHOICE = BUILD / "bin" / "ireepkg_cpu_choice"
RUN_ARGS = ["--device=local-sync", "--function=simple_mul",
            "--input=8xf32=1,2,3,4,5,6,7,8", "--input=8xf32=3"]
PRODUCT = "8xf32=3 6 9 12 15 18 21 24"

# How each CPU is reached: qemu-user's CPU models, and this machine.
CPUS = {"Nehalem": ["qemu-x86_64", "-cpu", "Nehalem"],
        "Haswell": ["qemu-x86_64", "-cpu", "Haswell"],
        "native": []}

pytestmark = pytest.mark.skipif(
    os.uname().machine != "x86_64", reason="x86-64 CPU levels need an x86_64 host")


def build_level(out: pathlib.Path, level: int, *extra: str) -> pathlib.Path:
    """simple-mul's kernel as an embedded ELF for x86-64-v<level> (1: the
    baseline), with the flags of cmake/ireepkgHelpers.cmake and `extra`."""
    tag = "".join(extra).replace("-", "").replace("=", "")
    obj = out / f"simple_mul.v{level}{tag}.o"
    lib = out / f"simple_mul.x86_64_v{level}{tag}.so"
    march = "x86-64" if level == 1 else f"x86-64-v{level}"
    subprocess.run(["clang-22", "-target", "x86_64-none-elf", f"-march={march}", *extra,
                    "-std=c17", "-O2", "-fPIC", "-ffreestanding", "-fvisibility=hidden",
                    "-fno-plt", "-fdata-sections", "-ffunction-sections",
                    "-DIREEPKG_EMBEDDED_ELF=1", f"-I{REPO / 'include'}", "-c",
                    REPO / "examples" / "simple-mul" / "src" / "simple_mul.c", "-o", obj],
                   check=True, timeout=120)
    subprocess.run(["ld.lld-22", "--build-id=none", "-nostdlib", "-static", "-shared",
                    "--no-undefined", "--gc-sections", "-z", "now", "--hash-style=sysv",
                    obj, "-o", lib], check=True, timeout=120)
    return lib


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cpu-level")
    d = tmp / "simple-mul"
    shutil.copytree(EXAMPLES / "simple-mul", d)
    m = json.loads((d / "ireeplugin.json").read_text())
    embedded = m["runtime"]["plugins"][0]
    for level in (3, 4):
        key = f"x86_64_v{level}"
        embedded["library"][key] = f"runtime/simple_mul.{key}.so"
        shutil.copy(build_level(tmp, level), d / "runtime" / f"simple_mul.{key}.so")
    m["runtime"]["plugins"] = [embedded]
    m.pop("tests", None)
    (d / "ireeplugin.json").write_text(json.dumps(m, indent=2))
    shutil.rmtree(d / "runtime" / "linux-x86_64")
    archive = pack(d, tmp / "dist")
    p = tmp / "prefix"
    r = run("install", archive, "--prefix", p)
    assert r.code == 0, r.err
    return p


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    """The program, compiled for any x86-64 CPU (a module built for this
    host would itself die under the older CPU models)."""
    out = tmp_path_factory.mktemp("vmfb") / "simple_mul.vmfb"
    subprocess.run([VENV_BIN / "iree-compile", REPO / "examples" / "programs" / "simple_mul.mlir",
                    "--iree-hal-target-device=local",
                    "--iree-hal-local-target-device-backends=llvm-cpu",
                    "--iree-llvmcpu-target-cpu=generic", "-o", out], check=True, timeout=300)
    return out


@pytest.mark.parametrize("cpu", list(CPUS))
def test_detection_agrees_with_iree_cpuinfo(cpu):
    runner = CPUS[cpu]
    iree = cpuinfo(runner)
    ours = set(subprocess.run([*runner, CPU_CHOICE, "features"], capture_output=True,
                              text=True, check=True, timeout=120).stdout.split())
    # Every feature both name: the same answer.
    from_header = (REPO / "include" / "ireepkg" / "manifest_schema" / "cpu_level.h").read_text()
    both = [f for f in ("sse3", "ssse3", "sse4.1", "sse4.2", "avx", "avx2", "fma", "f16c",
                        "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl",
                        "avx512vnni", "avx512bf16", "avx512fp16") if f'"{f}"' in from_header]
    assert len(both) == 16
    assert {f for f in both if f in ours} == {f for f in both if f in iree}


@pytest.mark.parametrize("cpu,level", [("Nehalem", "x86_64"), ("Haswell", "x86_64_v3"),
                                       ("native", None)])
def test_each_cpu_gets_its_build(prefix, module, tmp_path, cpu, level):
    runner = CPUS[cpu]
    want = expected_key(cpuinfo(runner))
    if level is not None:  # what the issue observed of qemu's models
        assert want == level
        assert all(f in cpuinfo(runner) for f in V2)
    flagfile = tmp_path / "runtime.flags"
    r = subprocess.run([*runner, CPU_CHOICE, "choose", prefix, flagfile],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    name, key, path = r.stdout.split()
    assert (name, key) == ("simple_mul", want)
    suffix = "" if want == "x86_64" else want[len("x86_64"):]
    assert path.endswith(f"/runtime/simple_mul.x86_64{suffix}.so")
    flags = flagfile.read_text()
    assert f"--executable_plugin=embedded:{path}\n" in flags
    # IREE runs the program with that build on that CPU: the same numbers.
    r = subprocess.run([*runner, RUNTIME_LIBS / "iree-run-module", f"--flagfile={flagfile}",
                        f"--module={module}", *RUN_ARGS],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert PRODUCT in r.stdout


@pytest.fixture(scope="module")
def example_prefix(tmp_path_factory):
    """The example package as the build packs it (its x86_64 and x86_64_v3
    embedded builds, and its system library), installed on this machine."""
    p = tmp_path_factory.mktemp("example") / "prefix"
    r = run("install", EXAMPLES / "dist" / "simple-mul-1.2.0.ireepkg", "--prefix", p)
    assert r.code == 0, r.err
    return p


@pytest.mark.parametrize("cpu", ["Nehalem", "native"])
def test_the_example_package_has_an_x86_64_v3_build(example_prefix, module, tmp_path, cpu):
    """simple-mul's own x86_64_v3 build: a CPU that can run it gets it (this
    machine, where it has AVX2 and FMA), an older one the plain build; both
    give IREE the same numbers."""
    runner = CPUS[cpu]
    want = "x86_64" if expected_key(cpuinfo(runner)) == "x86_64" else "x86_64_v3"
    if cpu == "Nehalem":
        assert want == "x86_64"
    runtime = example_prefix / "packages" / "simple-mul" / "1.2.0" / "runtime"
    r = subprocess.run([*runner, CPU_CHOICE, "choose", example_prefix],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert [l.split() for l in r.stdout.splitlines()] == [
        ["simple_mul", want, str(runtime / f"simple_mul.{want}.so")],
        ["simple_mul_system", "linux-x86_64",
         str(runtime / "linux-x86_64" / "libsimple_mul.so")]]
    if cpu == "native":  # what install wrote, and what the CLI says, here
        build = f"--executable_plugin=embedded:{runtime / f'simple_mul.{want}.so'}\n"
        assert build in (example_prefix / "state" / "runtime.flags").read_text()
        r = run("flags", "runtime", "--prefix", example_prefix)
        assert r.code == 0, r.err
        assert r.out.startswith(build)
    # The embedded build alone (the system library would answer first).
    r = subprocess.run([*runner, RUNTIME_LIBS / "iree-run-module",
                        f"--executable_plugin=embedded:{runtime / f'simple_mul.{want}.so'}",
                        f"--module={module}", *RUN_ARGS],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert PRODUCT in r.stdout


def test_a_build_above_the_cpu_dies_there(prefix, module):
    """Why the choice matters: the v3 build under Nehalem is an illegal
    instruction (IREE checks nothing)."""
    v3 = next(prefix.glob("packages/simple-mul/*/runtime/simple_mul.x86_64_v3.so"))
    r = subprocess.run([*CPUS["Nehalem"], RUNTIME_LIBS / "iree-run-module",
                        f"--executable_plugin=embedded:{v3}", f"--module={module}", *RUN_ARGS],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and PRODUCT not in r.stdout
    assert "Illegal instruction" in r.stderr


def test_flags_for_another_machines_cpu(prefix):
    for level, key in [("x86_64_v1", "x86_64"), ("x86_64_v2", "x86_64"),
                       ("x86_64_v3", "x86_64_v3"), ("x86_64_v4", "x86_64_v4"),
                       ("x86_64+avx512f", "x86_64")]:
        r = run("flags", "runtime", "--prefix", prefix, "--cpu-level", level, "--json")
        assert r.code == 0, r.err
        j = json.loads(r.out)
        assert [p["library_key"] for p in j["plugins"]] == [key], level
    r = run("flags", "runtime", "--prefix", prefix, "--cpu-level", "x86_64_v9")
    assert r.code == 2
    assert r.err == ("ireepkg: error: \"x86_64_v9\" is not a CPU level of linux-x86_64\n"
                     "  hint: CPU levels are x86_64_v1 (the baseline) to x86_64_v4, or "
                     "x86_64+<feature>..., e.g. x86_64+avx512f\n")


@pytest.mark.parametrize("args", [[], ["--cpu-level", "x86_64_v1"],
                                  ["--cpu-level", "x86_64_v3"],
                                  ["--cpu-level", "x86_64_v4"],
                                  ["--platform", "x86_64", "--cpu-level", "x86_64_v4"],
                                  ["--cpu-level", "x86_64+avx512f"],
                                  ["--cpu-level", "x86_64_v9"],
                                  ["--cpu-level", "aarch64+sve"]])
@pytest.mark.parametrize("fmt", ["args", "json"])
def test_runtime_tool_chooses_as_the_cli_does(prefix, args, fmt):
    """ireepkg-runtime, built from libireepkg_runtime alone, takes the same
    --cpu-level and prints what `ireepkg flags runtime` prints, this CPU's
    builds without it; a level of another architecture is the same usage
    error."""
    t = subprocess.run([BUILD / "bin" / "ireepkg-runtime", "flags", "--prefix", prefix,
                        "--format", fmt, *args], capture_output=True, text=True, timeout=60)
    c = run("flags", "runtime", "--prefix", prefix, "--format", fmt, *args)
    assert (t.returncode, t.stdout) == (c.code, c.out)
    assert t.stderr == c.err.replace("ireepkg: ", "ireepkg-runtime: ")
    if args == ["--cpu-level", "x86_64_v3"] and fmt == "args":
        assert t.stdout.endswith("/runtime/simple_mul.x86_64_v3.so\n")
    if args == ["--cpu-level", "aarch64+sve"]:
        assert t.returncode == 2
        assert t.stderr == ("ireepkg-runtime: error: \"aarch64+sve\" is not a CPU level of "
                            "linux-x86_64\n  hint: CPU levels are x86_64_v1 (the baseline) "
                            "to x86_64_v4, or x86_64+<feature>..., e.g. x86_64+avx512f\n")


@pytest.mark.parametrize("cpu", list(CPUS))
def test_info_says_which_build_and_why(prefix, cpu):
    want = expected_key(cpuinfo(CPUS[cpu]))
    level = {"x86_64_v4": "x86-64-v4", "x86_64_v3": "x86-64-v3"}.get(want, "x86-64-v2")
    r = subprocess.run([*CPUS[cpu], os.environ.get("IREEPKG_BIN", BUILD / "bin" / "ireepkg"),
                        "info", "simple-mul", "--prefix", prefix],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    last = r.stdout.splitlines()[-1]
    if want == "x86_64":
        assert last.startswith("  runtime plugin simple_mul on this machine: x86_64, the "
                               f"baseline build, as this CPU lacks what the others need: {level} (")
    else:
        assert last.startswith(f"  runtime plugin simple_mul on this machine: {want}, chosen "
                               f"for this CPU: {level} (")
    r = run("info", "simple-mul", "--prefix", prefix, "--json")
    builds = json.loads(r.out)["runtime_builds"]
    assert [(b["plugin"], b["library_key"]) for b in builds] == [
        ("simple_mul", expected_key(cpuinfo([])))]


def test_doctor_checks_the_build_this_cpu_uses(prefix):
    want = expected_key(cpuinfo([]))
    env = {"PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}"}
    r = run("doctor", "--prefix", prefix, "--json", env=env, timeout=300)
    checks = [c for c in json.loads(r.out)["plugins"] if c["plugin"] == "simple_mul"]
    assert len(checks) == 1 and checks[0]["ok"], r.out
    if want == "x86_64":
        assert "build" not in checks[0]
        assert checks[0]["path"].endswith("/simple_mul.x86_64.so")
    else:
        assert checks[0]["build"].startswith(f"{want}, chosen for this CPU: ")
        assert checks[0]["path"].endswith(f"/simple_mul.{want}.so")
    r = run("doctor", "--prefix", prefix, env=env, timeout=300)
    if want != "x86_64":
        assert f"      build {want}, chosen for this CPU: " in r.out


def test_install_for_another_machines_cpu_level(prefix, tmp_path):
    """install --cpu-level writes runtime.flags for that CPU and keeps the
    setting (installed.json's cpu_level) for later commands; "host" clears
    it."""
    p = tmp_path / "prefix"
    shutil.copytree(prefix, p, symlinks=True)
    archive = next((prefix.parent / "dist").glob("*.ireepkg"))

    def flags_key():
        for line in (p / "state" / "runtime.flags").read_text().splitlines():
            if line.startswith("--executable_plugin="):
                return line.rsplit("simple_mul.", 1)[1].removesuffix(".so")

    r = run("install", archive, "--prefix", p, "--cpu-level", "x86_64_v3")
    assert r.code == 0, r.err
    assert json.loads((p / "state" / "installed.json").read_text())["cpu_level"] == "x86_64_v3"
    assert flags_key() == "x86_64_v3"
    r = run("install", archive, "--prefix", p, "--cpu-level", "x86_64_v1")
    assert r.code == 0, r.err
    assert flags_key() == "x86_64"
    r = run("verify", "--prefix", p)
    assert r.code == 0, r.err + r.out
    r = run("install", archive, "--prefix", p, "--cpu-level", "host")
    assert r.code == 0, r.err
    assert "cpu_level" not in json.loads((p / "state" / "installed.json").read_text())
    assert flags_key() == expected_key(cpuinfo([]))
    r = run("install", archive, "--prefix", p, "--cpu-level", "aarch64+sve")
    assert r.code == 2
    assert r.err == ("ireepkg: error: \"aarch64+sve\" is not a CPU level of linux-x86_64\n"
                     "  hint: CPU levels are x86_64_v1 (the baseline) to x86_64_v4, or "
                     "x86_64+<feature>..., e.g. x86_64+avx512f\n")


def test_activation_json_names_the_build_runtime_flags_uses(prefix, tmp_path):
    """activation.json's runtime entries name the build chosen (by
    --cpu-level, else for this CPU), as runtime.flags does."""
    p = tmp_path / "prefix"
    shutil.copytree(prefix, p, symlinks=True)
    archive = next((prefix.parent / "dist").glob("*.ireepkg"))
    root = p / "packages" / "simple-mul" / "1.2.0" / "runtime"
    for level, key in (("x86_64_v3", "x86_64_v3"), ("x86_64_v1", "x86_64"),
                       ("host", expected_key(cpuinfo([])))):
        r = run("install", archive, "--prefix", p, "--cpu-level", level)
        assert r.code == 0, r.err
        entry = json.loads((p / "state" / "activation.json").read_text())["runtime"][0]
        path = f"{root}/simple_mul.{key}.so"
        assert (entry["library_key"], entry["path"], entry["spec"]) == (
            key, path, f"embedded:{path}"), level
        assert f"--executable_plugin=embedded:{path}\n" in (
            p / "state" / "runtime.flags").read_text()


def test_sync_for_another_machines_cpu_level(prefix, tmp_path, monkeypatch):
    """sync --cpu-level, as install --cpu-level: runtime.flags and
    activation.json for that CPU level, kept in installed.json by later
    syncs (also when the prefix is already as the lock says); "host"
    clears it."""
    from regfix import Registry, project
    monkeypatch.setenv("IREEPKG_CACHE_DIR", str(tmp_path / "cache"))
    reg = Registry(tmp_path)
    reg.publish_archive(next((prefix.parent / "dist").glob("*.ireepkg")))
    d = project(tmp_path, reg, [{"name": "simple-mul"}])
    state = d / ".iree-plugins" / "state"

    def chosen():
        installed = json.loads((state / "installed.json").read_text())
        entry = json.loads((state / "activation.json").read_text())["runtime"][0]
        assert f"--executable_plugin={entry['spec']}\n" in (state / "runtime.flags").read_text()
        return installed.get("cpu_level"), entry["library_key"]

    host = expected_key(cpuinfo([]))
    r = run("sync", cwd=d)
    assert r.code == 0, r.err
    assert chosen() == (None, host)
    r = run("sync", "--cpu-level", "x86_64_v3", cwd=d)
    assert r.code == 0, r.err
    assert chosen() == ("x86_64_v3", "x86_64_v3")
    r = run("sync", cwd=d)
    assert r.code == 0, r.err
    assert chosen() == ("x86_64_v3", "x86_64_v3")
    r = run("sync", "--cpu-level", "x86_64_v1", cwd=d)
    assert r.code == 0, r.err
    assert chosen() == ("x86_64_v1", "x86_64")
    r = run("sync", "--cpu-level", "host", cwd=d)
    assert r.code == 0, r.err
    assert chosen() == (None, host)
    r = run("sync", "--cpu-level", "aarch64+sve", cwd=d)
    assert r.code == 2
    assert r.err == ("ireepkg: error: \"aarch64+sve\" is not a CPU level of linux-x86_64\n"
                     "  hint: CPU levels are x86_64_v1 (the baseline) to x86_64_v4, or "
                     "x86_64+<feature>..., e.g. x86_64+avx512f\n")


# pack's check of a build's code against its key (pkg/inspect/x86_scan.cpp).

def levels_package(d: pathlib.Path, builds: dict) -> pathlib.Path:
    """A package whose embedded-elf plugin "mul" has `builds` (key -> file)."""
    (d / "runtime").mkdir(parents=True)
    library = {}
    for key, lib in builds.items():
        shutil.copy(lib, d / "runtime" / f"{key}.so")
        library[key] = f"runtime/{key}.so"
    m = {"schema_version": 1, "name": "levels", "version": "1.0.0", "summary": "CPU levels",
         "license": "MIT", "requires": {"iree": ">=3.10.0, <4.0.0"},
         "runtime": {"plugins": [{"name": "mul", "format": "embedded-elf",
                                  "library": library}]}}
    (d / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    return d


def first_use(lib: pathlib.Path, feature: str):
    """ireepkg-inspect's first instruction of `lib` needing `feature`."""
    out = subprocess.run([BUILD / "bin" / "ireepkg-inspect", lib], capture_output=True,
                         text=True, check=True, timeout=120).stdout
    f = json.loads(out)["files"][0]
    assert f["cpu_scanned"] and f["error"] == "", f
    return next(u for u in f["cpu_uses"] if u["feature"] == feature)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    out = tmp_path_factory.mktemp("kernels")
    return {"v1": build_level(out, 1), "v2": build_level(out, 2), "v3": build_level(out, 3),
            "v4": build_level(out, 4, "-mprefer-vector-width=512")}


def test_pack_refuses_avx_code_under_the_plain_key(kernels, tmp_path):
    """The dangerous case: a build for x86-64-v3 declared as the baseline
    dies with SIGILL on an older CPU."""
    d = levels_package(tmp_path / "pkg", {"x86_64": kernels["v3"]})
    use = first_use(kernels["v3"], "avx")
    m = (d / "ireeplugin.json").read_text()
    line = m[:m.index('"runtime/x86_64.so"')].count("\n") + 1
    column = m.index('"runtime/x86_64.so"') - m.rfind("\n", 0, m.index('"runtime/x86_64.so"'))
    r = run("pack", d, "-o", tmp_path / "dist")
    assert r.code == 1, r
    assert r.err == (
        f"ireepkg: error: {d}/ireeplugin.json:{line}:{column}: /runtime/plugins/0/library/x86_64: "
        "package 'levels', runtime plugin 'mul': \"runtime/x86_64.so\" uses instructions above "
        f"its declared CPU level: {use['mnemonic']} at offset {use['offset']:#x} "
        f"(.text, in {use['symbol']}) is VEX-encoded: it needs AVX (x86_64_v3), but the build "
        "is declared under \"x86_64\"\n"
        "  hint: build it with -march=x86-64 for the plain key \"x86_64\", or declare it "
        "under \"x86_64_v3\"\n")
    assert use["mnemonic"].startswith("v") and use["symbol"].startswith("simple_mul")
    assert not (tmp_path / "dist").exists() or not any((tmp_path / "dist").iterdir())


@pytest.mark.parametrize("key,build,needs", [
    ("x86_64_v3", "v4", "is EVEX-encoded: it needs AVX-512 (x86_64_v4)"),
    ("x86_64+avx2", "v4", "is EVEX-encoded: it needs AVX-512 (x86_64_v4)"),
    ("x86_64_v2", "v3", "is VEX-encoded: it needs AVX (x86_64_v3)"),
])
def test_pack_refuses_code_above_a_declared_level(kernels, tmp_path, key, build, needs):
    d = levels_package(tmp_path / "pkg", {"x86_64": kernels["v1"], key: kernels[build]})
    r = run("pack", d, "-o", tmp_path / "dist")
    assert r.code == 1, r
    errors = [l for l in r.err.splitlines() if l.startswith("ireepkg: error: ")]
    assert len(errors) == 1, r.err
    assert f": /runtime/plugins/0/library/{key}: " in errors[0]
    assert f" {needs}, but the build is declared under \"{key}\"" in errors[0]


def test_pack_accepts_builds_within_their_levels(kernels, tmp_path):
    """Each build under the key it was compiled for, and AVX-512 code under
    an explicit +avx512f, packs; so does the example's own baseline build."""
    assert first_use(kernels["v4"], "avx512f")  # the fixture really is EVEX code
    d = levels_package(tmp_path / "pkg", {"x86_64": kernels["v1"], "x86_64_v2": kernels["v2"],
                                          "x86_64_v3": kernels["v3"],
                                          "x86_64_v4": kernels["v4"],
                                          "x86_64+avx512f": kernels["v4"]})
    pack(d, tmp_path / "dist")
    pack(EXAMPLES / "simple-mul", tmp_path / "dist")


def test_install_refuses_what_pack_would(kernels, tmp_path):
    """A hand-made archive gets the same check at install (one
    implementation: native_check.cpp), also when the file's inspection comes
    from the cache (the same file installed before under x86_64_v3)."""
    from archive_forge import MANIFEST, file, forge

    def archive(name, builds):
        m = dict(MANIFEST, name=name, runtime={"plugins": [
            {"name": "mul", "format": "embedded-elf",
             "library": {key: f"runtime/{build}.so" for key, build in builds.items()}}]})
        return forge(tmp_path / f"{name}.ireepkg",
                     [file(f"runtime/{build}.so", kernels[build].read_bytes())
                      for build in builds.values()], manifest=m)

    r = run("install", archive("good", {"x86_64": "v1", "x86_64_v3": "v3"}),
            "--prefix", tmp_path / "prefix")
    assert r.code == 0, r.err
    r = run("install", archive("handmade", {"x86_64": "v3"}), "--prefix", tmp_path / "prefix")
    assert r.code == 1, r
    assert ("package 'handmade': member 'runtime/v3.so': /runtime/plugins/0/library/x86_64: "
            "runtime plugin 'mul': \"runtime/v3.so\" uses instructions above its declared CPU "
            "level: ") in r.err
    assert "is VEX-encoded: it needs AVX (x86_64_v3), but the build is declared under " \
           "\"x86_64\"\n" in r.err
