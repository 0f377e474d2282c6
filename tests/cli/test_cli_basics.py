"""The CLI's shared behaviour: --version, help, --help on every command,
unknown commands and options (exit code 2, "did you mean")."""
import re

from conftest import run


def test_version():
    r = run("--version")
    assert r.code == 0
    assert re.match(r"^ireepkg \d+\.\d+\.\d+\n", r.out)
    assert "host platform: linux-" in r.out


def test_version_json():
    import json
    r = run("version", "--json")
    assert r.code == 0
    j = json.loads(r.out)
    assert j["schema_version"] == 1 and j["lock_version"] == 1


def test_help_lists_every_command():
    r = run("help")
    assert r.code == 0
    for name in ("help", "version", "manifest check"):
        assert f"\n  {name}" in r.out


def test_no_arguments_is_a_usage_error():
    r = run()
    assert r.code == 2
    assert "Usage: ireepkg <command>" in r.out


def test_every_command_has_help():
    listing = run("help").out
    names = re.findall(r"^  ([a-z][a-z -]*?)(?:\s{2,}|\n)", listing, re.M)
    assert "manifest check" in names
    for name in names:
        r = run(*name.split(), "--help")
        assert r.code == 0, name
        assert r.out.startswith(f"ireepkg {name} - "), name
        assert "Usage: ireepkg " + name in r.out
        assert "-h, --help" in r.out
        assert r.out == run("help", *name.split()).out


def test_unknown_command_suggests_closest():
    r = run("manifst", "check", "x")
    assert r.code == 2
    assert r.err.startswith("ireepkg: error: unknown command 'manifst' (did you mean 'manifest'?)\n")


def test_unknown_command_without_suggestion():
    r = run("frobnicate")
    assert r.code == 2
    assert r.err == ("ireepkg: error: unknown command 'frobnicate'\n"
                     "  hint: see `ireepkg help` for the list of commands\n")


def test_unknown_subcommand_suggests_closest():
    r = run("manifest", "chek", "x.json")
    assert r.code == 2
    assert "unknown command 'manifest chek' (did you mean 'manifest check'?)" in r.err


def test_group_without_subcommand():
    r = run("manifest")
    assert r.code == 2
    assert "'manifest' needs a sub-command: check" in r.err


def test_unknown_option_suggests_closest():
    r = run("manifest", "check", "--jsn", "x.json")
    assert r.code == 2
    assert "unknown option '--jsn' for 'manifest check' (did you mean '--json'?)" in r.err


def test_option_missing_value():
    r = run("manifest", "check", "x.json", "--kind")
    assert r.code == 2
    assert "option '--kind' needs a value (KIND)" in r.err


def test_flag_with_value_is_rejected():
    r = run("manifest", "check", "--json=yes", "x.json")
    assert r.code == 2
    assert "option '--json' takes no value" in r.err


def test_missing_positional():
    r = run("manifest", "check")
    assert r.code == 2
    assert "'manifest check' needs <file|dir>..." in r.err


def test_too_many_positionals():
    r = run("version", "extra")
    assert r.code == 2
    assert "'version' takes no arguments, got 'extra'" in r.err


def test_help_for_unknown_command():
    r = run("help", "instal")
    assert r.code == 2
    assert "unknown command 'instal'" in r.err


def test_cli_reference_is_current():
    """docs/cli.md is exactly what `ireepkg help --markdown` prints."""
    from conftest import REPO
    r = run("help", "--markdown")
    assert r.code == 0
    assert (REPO / "docs" / "cli.md").read_text() == r.out, \
        "docs/cli.md is stale: build/bin/ireepkg help --markdown > docs/cli.md"
