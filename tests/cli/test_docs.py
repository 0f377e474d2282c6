"""The documentation's examples run, and print what the documentation shows.

A ```console block right after the line `<!-- doctest -->` in README.md,
docs/guide-*.md or docs/cli.md is a shell session: lines starting with `$ `
are commands (a line ending in `\\` continues on the next), the lines after
a command are what it prints, stdout and stderr together as a terminal shows
them. Every block of one file runs in order in one bash process (the working
directory carries over, as in a reader's shell), in a pseudo-terminal, in a
scratch directory that is also $HOME and holds:

    build/ .venv/ examples/     the checkout's build (build/bin/ireepkg,
                                build/examples/dist, its CMake package),
                                IREE's wheels, examples
    site/ireepkg                the Python package, on PYTHONPATH (where
                                the wheel would install it)
    registry/                   a signed directory registry "examples" with
                                simple-mul 1.2.0 and mul-pipeline 0.3.0
    keys/examples.{pub,key}     its key pair
    simple-mul-1.2.0.ireepkg, mul-pipeline-0.3.0.ireepkg

with build/bin and .venv/bin on PATH, an empty package cache, and no
network (a proxy on a closed port). Every command must exit 0, and its
output must match: a line `...` stands for any number of lines, and `...`
within a line for any text. Blocks that cannot run here (other machines,
the network, minutes of building) are left unmarked.

A fenced block right after the line `<!-- file: <path> -->` shows the
checkout's file <path> whole: it must be that file, byte for byte (so a
walkthrough that runs files of examples/ shows what it runs).

docs/cli.md is generated from the command table; its examples are checked
to be commands the parser accepts (test_cli_examples_parse), and those that
can run here run, in one scenario, each exiting 0 (test_cli_examples_run);
the others are listed with the reason they cannot (CLI_NOT_RUN), and a new
example must be put in one list or the other."""
import os
import pathlib
import re
import shlex
import shutil
import sys

import pytest

from conftest import EXAMPLES, REPO, ireepkg_path, run
from test_progress import Screen, run_in_pty

MARK = "<!-- doctest -->"
DOCS = ["README.md", "docs/guide-users.md", "docs/guide-projects.md",
        "docs/guide-plugin-authors.md", "docs/guide-deploying.md"]
DIST = EXAMPLES / "dist"
VENV = pathlib.Path(sys.executable).parent.parent


def block_after(path, lines, i, fence, what):
    """(line number, [lines]) of the fenced block that must follow the mark
    on line i (0-based)."""
    assert i + 1 < len(lines) and lines[i + 1].startswith(fence), \
        f"{path}:{i + 1}: {what} must come right before a {fence} block"
    end = i + 2
    while not lines[end].startswith("```"):
        end += 1
    return i + 3, lines[i + 2:end]


def marked_blocks(path):
    """(line number, [lines]) of each console block after MARK."""
    lines = path.read_text().splitlines()
    return [block_after(path, lines, i, "```console", MARK)
            for i, line in enumerate(lines) if line.strip() == MARK]


def session(block):
    """[(command, [expected lines])] of a console block."""
    steps = []
    lines = list(block)
    while lines:
        line = lines.pop(0)
        if line.startswith("$ "):
            cmd = line[2:]
            while cmd.endswith("\\"):
                cmd = cmd[:-1] + " " + lines.pop(0).strip()
            steps.append((cmd, []))
        else:
            assert steps, f"output before the first command: {line!r}"
            steps[-1][1].append(line)
    return steps


def pattern(expected):
    parts = []
    for line in expected:
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append("[^\n]*?".join(re.escape(p)
                                         for p in line.split("...")))
            parts.append(r"\n")
    return "".join(parts)


def test_wildcards():
    assert re.fullmatch(pattern(["a ... c", "...", "z"]), "a b c\nx\ny\nz\n")
    assert re.fullmatch(pattern(["a", "...", "z"]), "a\nz\n")
    assert not re.fullmatch(pattern(["a", "z"]), "a\nb\nz\n")
    assert not re.fullmatch(pattern(["a...c"]), "a\nc\n")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    d = tmp_path_factory.mktemp("docs")
    (d / "build").mkdir()
    for name in ("bin", "lib", "examples", "ireepkgConfig.cmake",
                 "ireepkgConfigVersion.cmake", "ireepkgBuildTreeTargets.cmake"):
        (d / "build" / name).symlink_to(ireepkg_path().parent.parent / name)
    (d / "site").mkdir()
    (d / "site" / "ireepkg").symlink_to(REPO / "python" / "ireepkg")
    (d / ".venv").symlink_to(VENV)
    (d / "examples").symlink_to(REPO / "examples")
    for archive in ("simple-mul-1.2.0.ireepkg", "mul-pipeline-0.3.0.ireepkg"):
        shutil.copy(DIST / archive, d / archive)
    (d / "keys").mkdir()
    assert run("key", "generate", "-o", d / "keys" / "examples").code == 0
    assert run("registry", "init", d / "registry", "--key",
               d / "keys" / "examples.key", "--name", "examples").code == 0
    r = run("publish", d / "simple-mul-1.2.0.ireepkg",
            d / "mul-pipeline-0.3.0.ireepkg", "--registry", d / "registry",
            "--key", d / "keys" / "examples.key")
    assert r.code == 0, r
    return d


def scratch_env(home):
    """The environment of a reader's shell in the scratch directory `home`:
    its build and IREE on PATH, its own caches and configuration, no
    colour and no network (a proxy on a closed port)."""
    return {"HOME": str(home),
            "PATH": f"{home}/build/bin:{home}/.venv/bin:/usr/bin:/bin",
            "NO_COLOR": "1", "TERM": "xterm", "LANG": "C.UTF-8",
            "IREEPKG_CACHE_DIR": str(home / ".cache" / "ireepkg"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "PYTHONPATH": str(home / "site"),
            "http_proxy": "http://127.0.0.1:9", "https_proxy":
            "http://127.0.0.1:9", "ALL_PROXY": "http://127.0.0.1:9"}


def run_doc(path, scratch):
    blocks = marked_blocks(path)
    steps = []
    for lineno, block in blocks:
        steps += [(lineno, cmd, expected) for cmd, expected in session(block)]
    home = scratch / path.stem
    shutil.copytree(scratch, home, symlinks=True)
    script = ["set +e"]
    for n, (_, cmd, _) in enumerate(steps):
        script += [cmd, f"echo \"@@doctest {n} $?@@\""]
    (home / ".doctest.sh").write_text("\n".join(script) + "\n")
    env = scratch_env(home)
    code, shown = run_in_pty(["bash", "--noprofile", "--norc",
                              str(home / ".doctest.sh")], cwd=home,
                             program="/bin/bash", env=env, columns=200,
                             timeout=300)
    assert code == 0, shown
    screen = Screen(200)
    screen.feed(shown)
    output = []
    results = {}
    for line in screen.lines():
        m = re.fullmatch(r"@@doctest (\d+) (\d+)@@", line)
        if m:
            results[int(m.group(1))] = (int(m.group(2)), output)
            output = []
        else:
            output.append(line)
    for n, (lineno, cmd, expected) in enumerate(steps):
        assert n in results, f"{path.name}:{lineno}: `{cmd}` never finished"
        status, got = results[n]
        text = "".join(line + "\n" for line in got)
        where = f"{path.name}:{lineno}: `{cmd}`"
        assert status == 0, f"{where} exited {status}:\n{text}"
        assert re.fullmatch(pattern(expected), text), \
            f"{where} printed:\n{text}\nbut the documentation shows:\n" + \
            "\n".join(expected)


FILE_MARK = re.compile(r"<!-- file: (\S+) -->")


def shown_files(path):
    """(line number, file path, shown text) of each block after a file
    mark."""
    lines = path.read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        m = FILE_MARK.fullmatch(line.strip())
        if m:
            lineno, shown = block_after(path, lines, i, "```", "a file mark")
            out.append((lineno, m.group(1), "".join(l + "\n" for l in shown)))
    return out


@pytest.mark.parametrize("doc", DOCS)
def test_doc_files_are_the_checkouts(doc):
    for lineno, rel, shown in shown_files(REPO / doc):
        assert (REPO / rel).is_file(), f"{doc}:{lineno}: {rel} does not exist"
        assert shown == (REPO / rel).read_text(), \
            f"{doc}:{lineno}: the block differs from {rel}; show the file as it is"


@pytest.mark.parametrize("doc", DOCS)
def test_doc_examples(doc, scratch):
    path = REPO / doc
    if not marked_blocks(path):
        pytest.fail(f"{doc} has no {MARK} block")
    run_doc(path, scratch)


def cli_examples():
    """Every command in the `Examples:` blocks of docs/cli.md."""
    text = (REPO / "docs" / "cli.md").read_text()
    out = []
    for block in re.findall(r"Examples:\n\n```\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("ireepkg "):
                out.append(line)
    return out


def test_cli_examples_parse(tmp_path):
    """Each example of docs/cli.md is a command line the parser accepts: run
    with --help appended, the command shows its help instead of a usage
    error (exit 2)."""
    examples = cli_examples()
    assert len(examples) > 50
    for line in examples:
        args = shlex.split(line)[1:]
        if "--" in args:
            args = args[:args.index("--")]
        r = run(*args, "--help", cwd=tmp_path)
        assert r.code == 0 and "\nUsage: ireepkg " in r.out, (line, r)


# The examples of docs/cli.md that run here, in this order, in the scratch
# directory of the guides (the "examples" registry at ~/registry, its keys,
# the example archives), each after the set-up lines before it (`$`
# prefixed: not examples, only what they need). Every example must exit 0.
CLI_RUNS = """
ireepkg help
ireepkg help manifest check
ireepkg version
ireepkg --version
ireepkg manifest check examples/simple-mul examples/project
$ cd examples/simple-mul
ireepkg manifest check ireeplugin.json
$ cd ~
$ mkdir dist && cp simple-mul-1.2.0.ireepkg dist/
ireepkg manifest check dist/simple-mul-1.2.0.ireepkg
$ printf '{"schema_version": 1, "name": "my-manifest", "version": "1.0.0"}' > my-manifest.json
ireepkg manifest check --kind manifest my-manifest.json --json
$ mkdir proj && cd proj && ln -s ../registry registry && cp ../keys/examples.pub registry-signing.pub
ireepkg init
ireepkg registry add local ./registry --registry-key registry-signing.pub
ireepkg registry list
ireepkg registry list --json
$ ireepkg registry add staging https://staging.example/iree
ireepkg registry remove staging
ireepkg add simple-mul --dry-run
ireepkg add simple-mul@^1.2 --no-sync
ireepkg add simple-mul@^1.2
ireepkg add mul-pipeline --option iree-llvmcpu-distribution-size=64
$ mkdir -p plugins/local-experiment && printf '{"schema_version": 1, "name": "local-experiment", "version": "0.1.0"}' > plugins/local-experiment/ireeplugin.json
ireepkg add --path ./plugins/local-experiment
ireepkg lock
ireepkg lock --upgrade-package simple-mul
ireepkg lock --check
ireepkg sync
ireepkg sync --locked
ireepkg sync --dry-run
ireepkg sync --offline
ireepkg update --dry-run
ireepkg update
ireepkg update simple-mul
ireepkg outdated
ireepkg outdated --json
ireepkg outdated --exit-code || echo 'updates available'
ireepkg search mul
ireepkg search fft --json
$ ireepkg rm local-experiment
ireepkg bundle create -o vendor.ireebundle
ireepkg sync --bundle vendor.ireebundle
ireepkg list
ireepkg list --json
ireepkg tree
ireepkg tree --depth 1
ireepkg tree -i simple-mul
ireepkg why simple-mul
ireepkg info simple-mul
$ cp ../simple-mul-1.2.0.ireepkg .
ireepkg info simple-mul-1.2.0.ireepkg
ireepkg verify
ireepkg verify simple-mul --json
ireepkg flags runtime
ireepkg flags runtime --format json
ireepkg env --json
ireepkg remove --dry-run --cascade simple-mul
ireepkg remove --cascade simple-mul
$ ireepkg sync
ireepkg install simple-mul-1.2.0.ireepkg
$ ireepkg rm mul-pipeline
ireepkg remove simple-mul
ireepkg rm simple-mul --no-sync
$ ireepkg add simple-mul@^1.2
ireepkg rm simple-mul
$ cd ~ && mkdir authoring && cd authoring
ireepkg new my-kernels --kind runtime
ireepkg new tag-passes --kind mlir-passes
$ mkdir ~/publishing && cd ~/publishing
ireepkg key generate -o registry-signing
ireepkg registry init ./registry --key registry-signing.key
$ mkdir dist && cp ~/simple-mul-1.2.0.ireepkg ~/mul-pipeline-0.3.0.ireepkg dist/
ireepkg publish dist/simple-mul-1.2.0.ireepkg --registry ./registry --key registry-signing.key
ireepkg publish dist/*.ireepkg --registry ./registry --key registry-signing.key --site ./registry/site --site-url https://plugins.example.org/iree
ireepkg yank simple-mul@1.2.0 --registry ./registry --key registry-signing.key
ireepkg registry resign ./registry --key registry-signing.key --expires-days 90
ireepkg registry site ./registry -o ./registry/site --url https://plugins.example.org/iree
$ cp registry/snapshot.json .
ireepkg sign snapshot.json --key registry-signing.key
$ cd ~/proj
ireepkg cache dir
ireepkg cache clean simple-mul
ireepkg cache clean
ireepkg cache prune
ireepkg config list
ireepkg config list --json
ireepkg config get cache-dir
ireepkg config set offline true
ireepkg config unset offline
ireepkg config set registry https://plugins.example.org/iree
$ mkdir -p ~/.config/fish/completions
ireepkg completion fish > ~/.config/fish/completions/ireepkg.fish
"""

# The examples that cannot run here, and why.
CLI_NOT_RUN = {
    "ireepkg pack examples/simple-mul -o dist/": "the example's native libraries, which the CMake build makes (build/examples)",
    "ireepkg init --registry default=https://plugins.example.org/iree --registry-key RWQ... --platform linux-x86_64 --platform linux-aarch64": "a placeholder server and key",
    "ireepkg add 'torch-input@>=2.0.0, <3.0.0' --registry local": "a package the example registry does not have",
    "ireepkg install --prefix /opt/iree-plugins *.ireepkg": "a system directory",
    "ireepkg install simple-mul@^1.2 --registry https://plugins.example.org/iree --registry-key RWQ...": "a placeholder server and key",
    "ireepkg install --bundle vendor.ireebundle --registry-key RWQ... simple-mul": "a placeholder key",
    "ireepkg registry mirror oci://ghcr.io/acme/iree-plugins ./static-copy --registry-key registry-signing.pub": "a registry on GHCR (test_oci_registry.py mirrors one served on loopback)",
    "ireepkg fatelf join -o plugin.sos plugin.x86_64.so plugin.aarch64.so": "plugin libraries built for two architectures",
    "ireepkg fatelf join plugin.x86_64.so plugin.aarch64.so > plugin.sos": "plugin libraries built for two architectures (test_fatelf.py writes to standard output)",
    "ireepkg fatelf split plugin.sos -o out/": "a FatELF plugin",
    "ireepkg fatelf select plugin.sos -o plugin.so": "a FatELF plugin",
    "ireepkg fatelf dump plugin.sos": "a FatELF plugin",
    "ireepkg flags runtime --platform linux-aarch64": "a prefix for another machine",
    "ireepkg flags runtime --cpu-level x86_64_v3": "a prefix with builds for CPU levels (test_cpu_level.py runs it)",
    "ireepkg env fish | source": "fish, not bash",
    "ireepkg exec -- iree-run-module --device=local-sync --module=m.vmfb --function=main --input=4xf32=1": "a compiled module",
    "ireepkg exec -- python train.py": "the user's own script",
    "ireepkg exec -- pytest": "the user's own tests",
    "ireepkg test": "a package directory with tests and the IREE tools",
    "ireepkg test my-plugin --json": "an installed package with tests",
    "ireepkg test ./build/package": "a package directory with tests",
    "ireepkg doctor": "an IREE installation to diagnose (its exit status says what it found)",
    "ireepkg doctor --json": "an IREE installation to diagnose",
    "ireepkg signature verify snapshot.json -p RWQ...": "a placeholder key",
    "ireepkg registry add-existing simple-mul@1.2.0 --registry oci://ghcr.io/acme/iree-plugins --key registry-signing.key": "an OCI registry on the network",
    "ireepkg registry verify ./registry --registry-key RWQ...": "a placeholder key",
    "ireepkg registry verify https://plugins.example.org/iree --registry-key registry-signing.pub --archives": "a placeholder server",
    "ireepkg registry site https://plugins.example.org/iree --registry-key RWQ... -o site": "a placeholder server and key",
    "ireepkg registry add default https://plugins.example.org/iree --registry-key RWQ...": "a placeholder key",
    "ireepkg config set --system parallel-downloads 8": "writes /etc",
}


def test_cli_examples_are_run_or_say_why_not():
    runs = {line for line in CLI_RUNS.splitlines()
            if line and not line.startswith("$ ")}
    for line in cli_examples():
        assert line in runs or line in CLI_NOT_RUN, \
            f"docs/cli.md example `{line}`: add it to CLI_RUNS, or to " \
            "CLI_NOT_RUN with the reason"
    stale = (runs | set(CLI_NOT_RUN)) - set(cli_examples())
    assert not stale, f"no longer examples of docs/cli.md: {stale}"


def test_cli_examples_run(scratch):
    """The runnable examples of docs/cli.md, in order, each exiting 0."""
    home = scratch / "cli"
    shutil.copytree(scratch, home, symlinks=True)
    script = ["set +e"]
    steps = []
    for line in CLI_RUNS.strip().splitlines():
        setup = line.startswith("$ ")
        cmd = line[2:] if setup else line
        script += [cmd, f'echo "@@step {len(steps)} $?@@"']
        steps.append((setup, cmd))
    (home / ".cli-examples.sh").write_text("\n".join(script) + "\n")
    env = scratch_env(home)
    import subprocess
    p = subprocess.run(["bash", "--noprofile", "--norc",
                        str(home / ".cli-examples.sh")], cwd=home, env=env,
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=600)
    out = p.stdout
    for n, (setup, cmd) in enumerate(steps):
        m = re.search(rf"^@@step {n} (\d+)@@$", out, re.M)
        assert m, f"`{cmd}` never finished:\n{out}\n{p.stderr}"
        before = out[:m.start()]
        assert m.group(1) == "0", \
            f"{'set-up' if setup else 'docs/cli.md example'} `{cmd}` exited " \
            f"{m.group(1)}:\n{before[-800:]}\nstderr:\n{p.stderr[-1500:]}"
