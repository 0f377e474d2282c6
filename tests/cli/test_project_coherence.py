"""Project commands that do not lose work: inside a project, `install
<name>` of a package plugins.json does not list is refused (the next `sync`
would take it out again) with a hint to `add` it, and `remove` of a package
plugins.json asks for warns that `sync` brings it back."""
import json

from conftest import run, snapshot
from regfix import installed, project


# The `reg` and `cache` fixtures' (conftest.py).
REGISTRY = [
    ("base-kernels", "1.0.0"),
    ("fft-kit", "1.0.0", {"base-kernels": "^1.0"}),
    ("extra", "1.0.0"),
]
NO_PREFIX_FROM_ENVIRONMENT = True


def test_install_of_an_unlisted_package_into_the_project_prefix_is_refused(
        tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    r = run("sync", cwd=d)
    assert r.code == 0, r
    prefix = d / ".iree-plugins"
    before = snapshot(prefix)
    r = run("install", "extra", "--registry", reg.dir, "--registry-key",
            reg.pub, cwd=d)
    assert r.code == 1, r
    assert r.out == ""
    assert r.err == (
        f'ireepkg: error: {d}/plugins.json: "extra" is not in '
        f"{d}/plugins.json: installed into the project's prefix, the next "
        "`ireepkg sync` would remove it again\n"
        "  hint: add it to the project (`ireepkg add extra`, which locks "
        "and syncs), or install it into another prefix (--prefix DIR)\n")
    assert snapshot(prefix) == before
    # --json says the same as a report.
    r = run("install", "extra", "--registry", reg.dir, "--registry-key",
            reg.pub, "--json", cwd=d)
    assert r.code == 1, r
    assert json.loads(r.out)["error"]["code"] == "conflict"
    # Into another prefix it is fine, from the same directory.
    other = tmp_path / "other"
    r = run("install", "extra", "--registry", reg.dir, "--registry-key",
            reg.pub, "--prefix", other, cwd=d)
    assert r.code == 0, r
    assert set(installed(other)) == {"extra"}
    # A package plugins.json lists installs into the project's prefix.
    r = run("install", "fft-kit", "--registry", reg.dir, "--registry-key",
            reg.pub, cwd=d)
    assert r.code == 0, r


def test_remove_of_a_package_the_project_asks_for_warns(tmp_path, reg,
                                                         cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    assert run("sync", cwd=d).code == 0
    prefix = d / ".iree-plugins"
    r = run("remove", "fft-kit", cwd=d)
    assert r.code == 0, r
    assert r.err == (
        f'ireepkg: warning: {d}/plugins.json: "fft-kit" is in plugins.json: '
        "the next `ireepkg sync` installs it again\n"
        "  hint: to take it out of the project, run `ireepkg rm fft-kit` "
        "(which locks and syncs)\n")
    assert "fft-kit" not in installed(prefix)
    # And sync does bring it back.
    assert run("sync", cwd=d).code == 0
    assert "fft-kit" in installed(prefix)
    # Outside a project's prefix nothing is said.
    other = tmp_path / "other"
    assert run("install", "extra", "--registry", reg.dir, "--registry-key",
               reg.pub, "--prefix", other).code == 0
    r = run("remove", "extra", "--prefix", other, cwd=d)
    assert r.code == 0, r
    assert r.err == ""
