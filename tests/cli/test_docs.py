"""The documentation's examples run, and print what the documentation shows.

A ```console block right after the line `<!-- doctest -->` in README.md,
docs/guide-*.md or docs/cli.md is a shell session: lines starting with `$ `
are commands (a line ending in `\\` continues on the next), the lines after
a command are what it prints, stdout and stderr together as a terminal shows
them. Every block of one file runs in order in one bash process (the working
directory carries over, as in a reader's shell), in a pseudo-terminal, in a
scratch directory that is also $HOME and holds:

    build/ .venv/ examples/     the checkout's build (build/bin/ireepkg,
                                build/examples/dist), IREE's wheels, examples
    registry/                   a signed directory registry "examples" with
                                simple-mul 1.2.0 and mul-pipeline 0.3.0
    keys/examples.{pub,key}     its key pair
    simple-mul-1.2.0.ireepkg, mul-pipeline-0.3.0.ireepkg

with build/bin and .venv/bin on PATH, an empty package cache, and no
network (a proxy on a closed port). Every command must exit 0, and its
output must match: a line `...` stands for any number of lines, and `...`
within a line for any text. Blocks that cannot run here (other machines,
the network, minutes of building) are left unmarked.

docs/cli.md is generated from the command table; its examples are checked
to be commands the parser accepts (test_cli_examples_parse)."""
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
        "docs/guide-plugin-authors.md"]
DIST = EXAMPLES / "dist"
VENV = pathlib.Path(sys.executable).parent.parent


def marked_blocks(path):
    """(line number, [lines]) of each console block after MARK."""
    lines = path.read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.strip() != MARK:
            continue
        assert i + 1 < len(lines) and lines[i + 1].startswith("```console"), \
            f"{path}:{i + 1}: {MARK} must come right before a ```console block"
        end = i + 2
        while not lines[end].startswith("```"):
            end += 1
        out.append((i + 3, lines[i + 2:end]))
    return out


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
    for name in ("bin", "lib", "examples"):
        (d / "build" / name).symlink_to(ireepkg_path().parent.parent / name)
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
    env_path = f"{home}/build/bin:{home}/.venv/bin:/usr/bin:/bin"
    env = {"HOME": str(home), "PATH": env_path, "NO_COLOR": "1",
           "TERM": "xterm", "LANG": "C.UTF-8",
           "IREEPKG_CACHE_DIR": str(home / ".cache" / "ireepkg"),
           "XDG_DATA_HOME": str(home / ".local" / "share"),
           "XDG_CACHE_HOME": str(home / ".cache"),
           "XDG_CONFIG_HOME": str(home / ".config"),
           "http_proxy": "http://127.0.0.1:9", "https_proxy":
           "http://127.0.0.1:9", "ALL_PROXY": "http://127.0.0.1:9"}
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
