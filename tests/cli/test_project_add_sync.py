"""`ireepkg add` and `rm` as `uv add` and `uv remove`: they lock and sync by
default, `--no-sync` stops after the lock, `--frozen` after plugins.json;
and `add` checks what it adds against the registries (an unknown package, a
constraint no version matches, an option the package does not declare or a
value its schema refuses), leaving every file as it was when it refuses."""
import json

import pytest

from conftest import EXAMPLES, pack, run, snapshot
from regfix import PROJECT_REGISTRY, PROJECT_YANKED, Registry, installed, project


# The `reg` and `cache` fixtures' (conftest.py).
REGISTRY = PROJECT_REGISTRY
YANKED = PROJECT_YANKED
NO_PREFIX_FROM_ENVIRONMENT = True


def lock_of(d):
    return {p["name"]: p["version"]
            for p in json.loads((d / "plugins.lock.json").read_text())["packages"]}


def test_add_locks_and_syncs_by_default(tmp_path, reg, cache):
    d = project(tmp_path, reg, [])
    r = run("add", "fft-kit", cwd=d)
    assert r.code == 0, r
    prefix = d / ".iree-plugins"
    assert json.loads((d / "plugins.json").read_text())["plugins"] == [
        {"name": "fft-kit", "version": "^1.0.0"}]
    assert lock_of(d) == {"fft-kit": "1.0.0", "base-kernels": "1.1.0"}
    assert set(installed(prefix)) == {"fft-kit", "base-kernels"}
    lines = r.out.splitlines()
    assert lines[:2] == ["added fft-kit: version ^1.0.0",
                         f"wrote {d / 'plugins.json'}"]
    assert "  + fft-kit 1.0.0" in lines
    assert f"wrote {d / 'plugins.lock.json'} (2 packages)" in lines
    assert "installed fft-kit 1.0.0" in lines
    assert "installed base-kernels 1.1.0" in lines
    # The lock it wrote is the one `lock` would write: nothing to do.
    r = run("lock", "--check", cwd=d)
    assert r.code == 0, r


def test_add_json_reports_the_lock_and_the_prefix(tmp_path, reg, cache):
    d = project(tmp_path, reg, [])
    r = run("add", "extra@^2", "--json", cwd=d)
    assert r.code == 0, r
    out = json.loads(r.out)
    assert out["plugins"] == [{"name": "extra", "action": "added",
                               "version": "^2", "options": {}}]
    assert out["lock"]["written"] is True
    assert out["lock"]["changes"] == [{"name": "extra", "from": None,
                                       "to": "2.0.0"}]
    assert out["sync"]["changes"] == [{"name": "extra", "from": None,
                                       "to": "2.0.0"}]
    assert out["sync"]["prefix"] == str(d / ".iree-plugins")


def test_add_no_sync_locks_but_leaves_the_prefix(tmp_path, reg, cache):
    d = project(tmp_path, reg, [])
    r = run("add", "fft-kit", "--no-sync", cwd=d)
    assert r.code == 0, r
    assert lock_of(d) == {"fft-kit": "1.0.0", "base-kernels": "1.1.0"}
    assert not (d / ".iree-plugins").exists()
    assert "installed" not in r.out


def test_add_frozen_only_edits_plugins_json(tmp_path, reg, cache):
    d = project(tmp_path, reg, [])
    r = run("add", "fft-kit@^1", "--frozen", cwd=d)
    assert r.code == 0, r
    assert not (d / "plugins.lock.json").exists()
    assert not (d / ".iree-plugins").exists()
    assert r.out == f"added fft-kit: version ^1\nwrote {d / 'plugins.json'}\n"
    # Both at once is a usage error.
    r = run("add", "extra", "--frozen", "--no-sync", cwd=d)
    assert r.code == 2, r
    assert "--no-sync and --frozen cannot be used together" in r.err


def test_rm_locks_and_syncs_by_default(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}, {"name": "extra"}])
    assert run("sync", cwd=d).code == 0
    prefix = d / ".iree-plugins"
    r = run("rm", "fft-kit", cwd=d)
    assert r.code == 0, r
    assert lock_of(d) == {"extra": "2.0.0"}
    assert set(installed(prefix)) == {"extra"}
    assert r.out.splitlines()[:2] == ["removed fft-kit",
                                      f"wrote {d / 'plugins.json'}"]
    assert "removed fft-kit 1.0.0" in r.out
    assert "removed base-kernels 1.1.0" in r.out


def test_rm_no_sync_updates_the_lock_and_leaves_the_prefix(tmp_path, reg,
                                                           cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}, {"name": "extra"}])
    assert run("sync", cwd=d).code == 0
    prefix = d / ".iree-plugins"
    before = snapshot(prefix)
    r = run("rm", "extra", "--no-sync", cwd=d)
    assert r.code == 0, r
    assert lock_of(d) == {"fft-kit": "1.0.0", "base-kernels": "1.1.0"}
    assert snapshot(prefix) == before
    # The next sync follows.
    r = run("sync", cwd=d)
    assert r.code == 0, r
    assert set(installed(prefix)) == {"fft-kit", "base-kernels"}


def test_rm_frozen_leaves_lock_and_prefix(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}, {"name": "extra"}])
    assert run("sync", cwd=d).code == 0
    before = snapshot(d)
    r = run("rm", "extra", "--frozen", cwd=d)
    assert r.code == 0, r
    after = snapshot(d)
    assert {k for k in before if before[k] != after.get(k)} == {"plugins.json"}


# --- add checks what it adds --------------------------------------------------

def refused(d, *args):
    """Runs `add` expecting a refusal that changes nothing; its stderr."""
    before = snapshot(d)
    r = run("add", *args, cwd=d)
    assert r.code == 1, r
    assert r.out == ""
    assert snapshot(d) == before
    return r.err


def test_add_refuses_an_unknown_package(tmp_path, reg, cache):
    d = project(tmp_path, reg, [])
    for args in (["fft-kti"], ["fft-kti@^1.0"], ["fft-kti@^1.0", "--no-sync"]):
        err = refused(d, *args)
        assert ('no registry of plugins.json has a package "fft-kti"; did '
                'you mean "fft-kit"?') in err, err


def test_add_refuses_a_constraint_no_version_matches(tmp_path, reg, cache):
    d = project(tmp_path, reg, [])
    err = refused(d, "base-kernels@^2.0")
    assert err == (
        f"ireepkg: error: {d / 'plugins.json'}: no version of "
        '"base-kernels" matches ^2.0 in registry "test"; it has 1.0.0, '
        "1.1.0 (yanked: 0.9.0)\n"
        "  hint: e.g. `ireepkg add base-kernels@^1.1.0`, or leave out the "
        "version for the newest\n")
    # A yanked version alone does not match either.
    err = refused(d, "base-kernels@=0.9.0")
    assert "(yanked: 0.9.0)" in err


@pytest.fixture
def options_reg(tmp_path):
    r = Registry(tmp_path)
    r.publish_archive(pack(EXAMPLES / "simple-mul", r.dist))
    r.publish_archive(pack(EXAMPLES / "mul-pipeline", r.dist))
    return r


def test_add_refuses_an_option_the_package_does_not_declare(
        tmp_path, options_reg, cache):
    d = project(tmp_path, options_reg, [])
    err = refused(d, "mul-pipeline", "--option",
                  "iree-llvmcpu-distribution-sise=4", "--iree-version",
                  "3.13.0")
    assert ('plugin "mul-pipeline" has no option '
            '"iree-llvmcpu-distribution-sise" (did you mean '
            '"iree-llvmcpu-distribution-size"?)') in err, err
    assert ("declares: iree-llvmcpu-distribution-size, "
            "iree-torch-decompose-complex-ops") in err, err


def test_add_refuses_an_option_value_of_the_wrong_type(tmp_path, options_reg,
                                                       cache):
    d = project(tmp_path, options_reg, [])
    for value, problem in (("many", "integer"), ("4096", "1024")):
        err = refused(d, "mul-pipeline", "--option",
                      f"iree-llvmcpu-distribution-size={value}",
                      "--iree-version", "3.13.0")
        assert 'option "iree-llvmcpu-distribution-size"' in err, err
        assert problem in err, err
    # A value the schema accepts goes through, to the prefix.
    r = run("add", "mul-pipeline", "--option",
            "iree-llvmcpu-distribution-size=64", "--iree-version", "3.13.0",
            "--no-sync", cwd=d)
    assert r.code == 0, r
    assert "mul-pipeline" in lock_of(d)


def test_sync_applies_a_changed_option_value(tmp_path, options_reg, cache):
    """An option value changed in plugins.json reaches the prefix at the
    next sync, though no package changes (the lock's input hash does not
    cover option values)."""
    d = project(tmp_path, options_reg, [])
    r = run("add", "mul-pipeline", "--option",
            "iree-llvmcpu-distribution-size=64", "--iree-version", "3.13.0",
            cwd=d)
    assert r.code == 0, r
    prefix = d / ".iree-plugins"
    flags = run("flags", "compiler", "--prefix", str(prefix), cwd=d)
    assert flags.code == 0, flags
    assert "--iree-llvmcpu-distribution-size=64" in flags.out, flags.out
    pj = json.loads((d / "plugins.json").read_text())
    pj["plugins"][0]["options"]["iree-llvmcpu-distribution-size"] = 128
    (d / "plugins.json").write_text(json.dumps(pj, indent=2) + "\n")
    r = run("sync", "--iree-version", "3.13.0", cwd=d)
    assert r.code == 0, r
    assert r.out.splitlines() == [
        f"{prefix} is up to date with the lock (2 packages)",
        "option values and hook choices updated from plugins.json"], r
    flags = run("flags", "compiler", "--prefix", str(prefix), cwd=d)
    assert flags.code == 0, flags
    assert "--iree-llvmcpu-distribution-size=128" in flags.out, flags.out
    # Nothing changed since: nothing said about options.
    r = run("sync", "--iree-version", "3.13.0", "--json", cwd=d)
    assert r.code == 0, r
    assert json.loads(r.out)["options_changed"] is False, r
    assert "=64" not in flags.out, flags.out
