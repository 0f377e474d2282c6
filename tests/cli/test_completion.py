"""Shell completion (`ireepkg completion bash|zsh|fish|powershell`) and the
manual page (`ireepkg help --man`, docs/man/ireepkg.1), both generated from
the command table. The bash script is loaded into bash and driven as bash
drives it (COMP_WORDS, COMP_CWORD); the zsh and fish scripts are checked by
those shells; the manual page is installed by `cmake --install` and
rendered by man."""
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import BUILD, REPO, data_package, ireepkg_path, pack, run


def script(shell):
    r = run("completion", shell)
    assert r.code == 0, r
    return r.out


def bash_complete(tmp_path, words, env=None):
    """What the bash completion offers for `words` (the last one being
    completed), with ireepkg on PATH."""
    f = tmp_path / "ireepkg.bash"
    f.write_text(script("bash"))
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    program = (f"source {f}\n"
               f"COMP_WORDS=({quoted}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))\n"
               "_ireepkg\n"
               "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    full = dict(os.environ)
    full["PATH"] = f"{ireepkg_path().parent}:{full['PATH']}"
    full.update(env or {})
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], env=full,
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert p.returncode == 0 and p.stderr == "", p
    return [l for l in p.stdout.splitlines() if l]


def test_bash_completion_loads(tmp_path):
    f = tmp_path / "ireepkg.bash"
    f.write_text(script("bash"))
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", f"source {f}; complete -p ireepkg"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p
    assert p.stdout == "complete -o filenames -F _ireepkg ireepkg\n"


def test_bash_completes_commands_and_sub_commands(tmp_path):
    assert bash_complete(tmp_path, ["ireepkg", "ins"]) == ["install"]
    assert bash_complete(tmp_path, ["ireepkg", "-q", "--color", "never", "ins"]) == ["install"]
    assert bash_complete(tmp_path, ["ireepkg", "un"]) == ["uninstall"]
    assert bash_complete(tmp_path, ["ireepkg", "config", ""]) == ["list", "get", "set", "unset"]
    assert bash_complete(tmp_path, ["ireepkg", "cache", "p"]) == ["prune"]
    every = bash_complete(tmp_path, ["ireepkg", ""])
    listing = run("help").out
    for word in every:
        if word != "uninstall":
            assert f"\n  {word}" in listing, word


def test_bash_completes_options_and_their_values(tmp_path):
    opts = bash_complete(tmp_path, ["ireepkg", "outdated", "--"])
    assert "--exit-code" in opts and "--json" in opts and "--color" in opts
    assert "--prefix" not in opts
    assert bash_complete(tmp_path, ["ireepkg", "--color", ""]) == ["auto", "always", "never"]
    assert bash_complete(tmp_path, ["ireepkg", "list", "--color", "a"]) == ["auto", "always"]
    assert bash_complete(tmp_path, ["ireepkg", "flags", "runtime", "--format", ""]) == [
        "args", "flagfile", "json"]
    assert bash_complete(tmp_path, ["ireepkg", "new", "x", "--kind", "mlir"]) == [
        "mlir-passes", "mlir-dialect"]
    assert bash_complete(tmp_path, ["ireepkg", "manifest", "check", "--kind", "reg"]) == [
        "registry-config"]
    assert bash_complete(tmp_path, ["ireepkg", "config", "get", "c"]) == ["cache-dir", "color"]
    assert bash_complete(tmp_path, ["ireepkg", "completion", ""]) == [
        "bash", "zsh", "fish", "powershell"]
    # A DIR value completes directories.
    (tmp_path / "somedir").mkdir()
    (tmp_path / "somefile").write_text("")
    assert bash_complete(tmp_path, ["ireepkg", "-C", "some"]) == ["somedir"]
    assert sorted(bash_complete(tmp_path, ["ireepkg", "pack", "some"])) == [
        "somedir", "somefile"]


def test_bash_completes_installed_package_names(tmp_path):
    prefix = tmp_path / "p"
    for name in ("alpha-kernels", "alpine", "beta"):
        archive = pack(data_package(tmp_path / "src", name, "1.0.0"), tmp_path / "dist")
        assert run("install", archive, "--prefix", prefix).code == 0
    r = run("list", "--names", "--prefix", prefix)
    assert r.code == 0 and r.out == "alpha-kernels\nalpine\nbeta\n"
    env = {"IREEPKG_PREFIX": str(prefix)}
    assert bash_complete(tmp_path, ["ireepkg", "remove", "al"], env) == ["alpha-kernels",
                                                                         "alpine"]
    assert bash_complete(tmp_path, ["ireepkg", "uninstall", "b"], env) == ["beta"]
    assert bash_complete(tmp_path, ["ireepkg", "info", ""], env) == ["alpha-kernels",
                                                                     "alpine", "beta"]
    assert bash_complete(tmp_path, ["ireepkg", "tree", "--invert", "be"], env) == ["beta"]
    assert run("list", "--names", "--json", "--prefix", prefix).code == 2


def test_zsh_script_is_valid_zsh_and_completes(tmp_path):
    zsh = shutil.which("zsh")
    assert zsh, "zsh is installed by scripts/setup.sh"
    f = tmp_path / "_ireepkg"
    f.write_text(script("zsh"))
    p = subprocess.run([zsh, "-n", f], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p
    # Called as bashcompinit's _bash_complete calls it: in sh emulation
    # (0-based arrays). zsh's compgen leaves the matching of the word to
    # compadd, so the candidates are filtered here.
    def complete(*words):
        w = " ".join(words)
        program = (f"autoload -U compinit && compinit -u; source {f}\n"
                   "f() { emulate -L sh; setopt kshglob noshglob braceexpand\n"
                   f"  COMP_WORDS=({w}); COMP_CWORD={len(words) - 1}\n"
                   "  _ireepkg; print -l \"${COMPREPLY[@]}\"; }; f\n")
        p = subprocess.run([zsh, "-f", "-c", program], capture_output=True, text=True,
                           timeout=60, env={**os.environ, "HOME": str(tmp_path)})
        assert p.returncode == 0 and p.stderr == "", p
        return [l for l in p.stdout.splitlines() if l.startswith(words[-1].strip("'"))]

    assert complete("ireepkg", "-q", "ins") == ["install"]
    assert complete("ireepkg", "--color", "''") == ["auto", "always", "never"]
    assert complete("ireepkg", "manifest", "''") == ["check"]


def test_fish_script_is_valid_fish_and_completes(tmp_path):
    fish = shutil.which("fish")
    assert fish, "fish is installed by scripts/setup.sh"
    f = tmp_path / "ireepkg.fish"
    f.write_text(script("fish"))
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "XDG_DATA_HOME": str(tmp_path / "data")}
    p = subprocess.run([fish, "-n", f], capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0, p

    def complete(line):
        p = subprocess.run([fish, "--no-config", "-c", f"source {f}; complete -C '{line}'"],
                           capture_output=True, text=True, timeout=60, env=env)
        assert p.returncode == 0, p
        return [l.split("\t")[0] for l in p.stdout.splitlines()]

    assert complete("ireepkg ins") == ["install"]
    assert complete("ireepkg manifest ") == ["check"]
    assert complete("ireepkg --color ") == ["always", "auto", "never"]
    assert "--exit-code" in complete("ireepkg outdated --")


def test_powershell_script_names_every_command():
    text = script("powershell")
    assert text.startswith("# PowerShell completion for ireepkg")
    assert "Register-ArgumentCompleter -Native -CommandName ireepkg" in text
    assert "'outdated' = @('--all', '--exit-code'," in text
    pwsh = shutil.which("pwsh")
    if pwsh:  # not a Debian package; checked where it is installed
        p = subprocess.run([pwsh, "-NoProfile", "-Command", text], capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, p


def test_completion_of_an_unknown_shell():
    r = run("completion", "tcsh")
    assert r.code == 2
    assert r.err.startswith("ireepkg: error: no completion for 'tcsh'")


def test_man_page_is_current():
    r = run("help", "--man")
    assert r.code == 0
    assert (REPO / "docs" / "man" / "ireepkg.1").read_text() == r.out, \
        "docs/man/ireepkg.1 is stale: build/bin/ireepkg help --man > docs/man/ireepkg.1"


def test_man_page_is_installed_and_renders(tmp_path):
    dest = tmp_path / "inst"
    # The install rules of the command-line tool's directory (what `cmake
    # --install` runs for it, without writing install_manifest.txt into the
    # build tree, which the unprivileged run cannot write).
    p = subprocess.run(["cmake", f"-DCMAKE_INSTALL_PREFIX={dest}", "-P",
                        str(BUILD / "cli" / "cmake_install.cmake")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p
    page = dest / "share" / "man" / "man1" / "ireepkg.1"
    assert page.read_text() == (REPO / "docs" / "man" / "ireepkg.1").read_text()
    man = shutil.which("man")
    assert man, "man-db is installed by scripts/setup.sh"
    p = subprocess.run([man, "-l", str(page)], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "MANWIDTH": "80", "MAN_KEEP_FORMATTING": "",
                            "PAGER": "cat", "MANPAGER": "cat"})
    assert p.returncode == 0, p
    text = p.stdout
    assert "NAME\n       ireepkg - packages, versions and automatic activation" in text
    assert "GLOBAL OPTIONS" in text and "EXIT STATUS" in text
    assert "   ireepkg outdated" in text
    assert "--exit-code" in text
    # groff found nothing to warn about.
    p = subprocess.run(["groff", "-man", "-ww", "-z", str(page)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p
