"""A sync with nothing to do: once a sync has left the prefix exactly as the
lockfile says, the next one with the same lockfile, project and IREE finds
that out from its record (<cache>/syncs/) without opening an archive; and
anything that could make a full sync do something else makes it check in
full again."""
import json
import os
import shutil
import time

from conftest import EXAMPLES, pack, run
from regfix import FFT_KIT, IREE_SOURCE, WITH_IREE, Registry, installed, project

# The `reg` and `cache` fixtures' (conftest.py).
REGISTRY = FFT_KIT
NO_PREFIX_FROM_ENVIRONMENT = True


def records(cache):
    d = cache / "syncs"
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def without_archives(reg, cache):
    """Removes every copy of every archive: the registry's and the download
    cache's. A sync that opens one now fails."""
    shutil.rmtree(reg.dir / "archives")
    shutil.rmtree(cache / "downloads", ignore_errors=True)


def up_to_date(r, prefix, n):
    assert r.code == 0, r
    s = "" if n == 1 else "s"
    assert r.out == f"{prefix} is up to date with the lock ({n} package{s})\n", r


def test_no_op_sync_opens_no_archive(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    prefix = d / ".iree-plugins"
    r = run("sync", cwd=d)
    assert r.code == 0, r
    assert len(records(cache)) == 1
    # A no-op sync the long way (no record: a prefix synced before there
    # were records) finds nothing to do, and records that.
    shutil.rmtree(cache / "syncs")
    up_to_date(run("sync", cwd=d), prefix, 2)
    assert len(records(cache)) == 1
    before = (prefix / "state" / "installed.json").read_bytes()
    without_archives(reg, cache)
    r = run("sync", "-v", cwd=d)
    up_to_date(r, prefix, 2)
    assert "nothing to check" in r.err, r
    r = run("sync", "--json", cwd=d)
    assert r.code == 0, r
    out = json.loads(r.out)
    assert out["changes"] == [] and out["relocked"] is False
    assert sorted(out["unchanged"]) == ["base-kernels 1.1.0", "fft-kit 1.0.0"]
    assert (prefix / "state" / "installed.json").read_bytes() == before
    assert run("verify", "--prefix", prefix).code == 0


def test_a_changed_prefix_is_checked_in_full(tmp_path, reg, cache):
    """Another command changing the prefix, a package directory gone, or an
    interrupted change: the record no longer holds, and sync puts back
    exactly the lock."""
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    prefix = d / ".iree-plugins"
    assert run("sync", cwd=d).code == 0
    # Something else installed into the prefix: sync removes it.
    extra = reg.publish("extra", "2.0.0")
    assert run("install", extra, "--prefix", prefix).code == 0
    r = run("sync", cwd=d)
    assert r.code == 0, r
    assert "extra" not in installed(prefix)
    assert set(installed(prefix)) == {"base-kernels", "fft-kit"}
    # A package removed behind sync's back: sync installs it again.
    assert run("remove", "base-kernels", "--cascade", "--prefix",
               prefix).code == 0
    r = run("sync", cwd=d)
    assert r.code == 0, r
    assert set(installed(prefix)) == {"base-kernels", "fft-kit"}
    # A package's directory gone (installed.json unchanged): put back.
    pkg = prefix / "packages" / "fft-kit" / "1.0.0"
    run_chmod = [p for p in [pkg, *pkg.rglob("*")] if p.is_dir()]
    for p in run_chmod:
        p.chmod(0o755)
    shutil.rmtree(pkg)
    r = run("sync", cwd=d)
    assert r.code == 0, r
    assert "fft-kit" in r.out and "up to date" not in r.out, r
    assert pkg.is_dir()
    assert run("verify", "--prefix", prefix).code == 0
    # A change left half done (a staging directory): recovered first.
    (prefix / ".staging").mkdir()
    r = run("sync", cwd=d)
    up_to_date(r, prefix, 2)
    assert not (prefix / ".staging").exists()


def test_a_changed_lock_or_project_is_checked_in_full(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    prefix = d / ".iree-plugins"
    assert run("sync", cwd=d).code == 0
    p = json.loads((d / "plugins.json").read_text())
    p["plugins"].append({"name": "base-kernels", "version": "=1.0.0"})
    (d / "plugins.json").write_text(json.dumps(p, indent=2))
    assert run("sync", cwd=d).code == 0  # relocks, installs 1.0.0
    assert installed(prefix)["base-kernels"]["version"] == "1.0.0"
    assert installed(prefix)["base-kernels"]["reason"] == "explicit"
    up_to_date(run("sync", cwd=d), prefix, 2)
    # The pin dropped: `lock` keeps 1.0.0, but the lockfile's bytes changed
    # (its input hash), and base-kernels is only a dependency now.
    p["plugins"].pop()
    (d / "plugins.json").write_text(json.dumps(p, indent=2))
    assert run("lock", cwd=d).code == 0
    up_to_date(run("sync", cwd=d), prefix, 2)
    assert installed(prefix)["base-kernels"]["reason"] == "dependency"
    # Asked for by name again, the lockfile as it is (--frozen): the same
    # lockfile bytes, another project; the reason changes back.
    p["plugins"].append({"name": "base-kernels"})
    (d / "plugins.json").write_text(json.dumps(p, indent=2))
    up_to_date(run("sync", "--frozen", cwd=d), prefix, 2)
    assert installed(prefix)["base-kernels"]["reason"] == "explicit"


def test_an_option_value_changed_after_a_recorded_sync(tmp_path, cache):
    reg = Registry(tmp_path)
    reg.publish_archive(pack(EXAMPLES / "simple-mul", reg.dist))
    reg.publish_archive(pack(EXAMPLES / "mul-pipeline", reg.dist))
    d = project(tmp_path, reg, [
        {"name": "mul-pipeline",
         "options": {"iree-llvmcpu-distribution-size": 64}}])
    prefix = d / ".iree-plugins"
    assert run("sync", "--iree-version", "3.13.0", cwd=d).code == 0
    assert records(cache)
    p = json.loads((d / "plugins.json").read_text())
    p["plugins"][0]["options"]["iree-llvmcpu-distribution-size"] = 256
    (d / "plugins.json").write_text(json.dumps(p, indent=2))
    assert run("sync", "--iree-version", "3.13.0", cwd=d).code == 0
    flags = run("flags", "compiler", "--prefix", prefix)
    assert "--iree-llvmcpu-distribution-size=256" in flags.out, flags
    # And back, now with a record for 256.
    p["plugins"][0]["options"]["iree-llvmcpu-distribution-size"] = 64
    (d / "plugins.json").write_text(json.dumps(p, indent=2))
    assert run("sync", "--iree-version", "3.13.0", cwd=d).code == 0
    flags = run("flags", "compiler", "--prefix", prefix)
    assert "--iree-llvmcpu-distribution-size=64" in flags.out, flags


def test_another_iree_is_checked_again(tmp_path, reg, cache):
    """requires.iree is checked against the IREE in use at every sync: a
    record made with one IREE says nothing for another."""
    reg.publish("needs-four", "1.0.0", requires={"iree": ">=4.0.0"})
    d = project(tmp_path, reg, [{"name": "needs-four"}])
    prefix = d / ".iree-plugins"
    assert run("lock", "--iree-version", "4.1.0", cwd=d).code == 0
    assert run("sync", "--iree-version", "4.1.0", cwd=d).code == 0
    assert records(cache)
    up_to_date(run("sync", "--iree-version", "4.1.0", cwd=d), prefix, 1)
    r = run("sync", cwd=d, env=WITH_IREE)  # IREE 3.13.0 from the wheels
    assert r.code == 1, r
    assert ("needs-four 1.0.0 requires IREE >=4.0.0, but IREE 3.13.0 is in "
            f"use: {IREE_SOURCE}") in r.err


def test_a_warning_is_given_at_every_sync(tmp_path, reg, cache):
    """A sync that warned writes no record: the next one warns again."""
    reg.publish("needs-four", "1.0.0", requires={"iree": ">=4.0.0"})
    d = project(tmp_path, reg, [{"name": "needs-four"}])
    assert run("lock", "--iree-version", "4.1.0", cwd=d).code == 0
    for _ in range(2):
        r = run("sync", "--ignore-iree-version", cwd=d, env=WITH_IREE)
        assert r.code == 0, r
        assert "installing it anyway (--ignore-iree-version)" in r.err, r
    assert records(cache) == []


def test_a_record_that_is_not_ours_is_not_used(tmp_path, reg, cache):
    """A record for another state, or one another user could have written,
    counts for nothing: the sync checks in full (which here needs archives
    that are gone, so it fails, changing nothing)."""
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    prefix = d / ".iree-plugins"
    assert run("lock", cwd=d).code == 0
    assert run("sync", cwd=d).code == 0
    [name] = records(cache)
    record = cache / "syncs" / name
    good = record.read_bytes()
    without_archives(reg, cache)
    before = (prefix / "state" / "installed.json").read_bytes()
    record.write_text("0" * 64)
    r = run("sync", cwd=d)
    assert r.code == 1, r
    assert (prefix / "state" / "installed.json").read_bytes() == before
    record.write_bytes(good)
    record.chmod(0o666)
    r = run("sync", cwd=d)
    assert r.code == 1, r
    record.chmod(0o644)
    up_to_date(run("sync", cwd=d), prefix, 2)
    assert (prefix / "state" / "installed.json").read_bytes() == before


def overwrite_keeping_mtime(path, data):
    """Writes `data` over `path` in place (same inode, same size), then puts
    its mtime back, as a careless tool might."""
    st = path.stat()
    assert len(data) == st.st_size
    with open(path, "r+b") as f:
        f.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_files_known_by_their_stamps_are_read_again_once_changed(
        tmp_path, reg, cache):
    """lock and sync keep the SHA-256 of the lockfile and of installed.json
    by each file's stamp (<cache>/digests/), so that a run with nothing to
    do hashes neither again; a change of the same size with the old mtime
    put back is still seen (the ctime moved), by lock and by sync."""
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    prefix = d / ".iree-plugins"
    lock = d / "plugins.lock.json"
    state = prefix / "state" / "installed.json"
    assert run("sync", cwd=d).code == 0
    # Only settled stamps are kept (a change within the clock's tick could
    # keep one): none yet.
    up_to_date(run("sync", cwd=d), prefix, 2)
    assert not (cache / "digests").exists()
    time.sleep(2.1)
    assert run("lock", cwd=d).code == 0
    up_to_date(run("sync", cwd=d), prefix, 2)
    assert len(list((cache / "digests").iterdir())) == 2
    up_to_date(run("sync", cwd=d), prefix, 2)

    # The lockfile's input hash changed in place: stale, for sync and lock.
    good = lock.read_bytes()
    at = good.index(b'"input_hash": "sha256:') + len(b'"input_hash": "sha256:')
    bad = good[:at] + (b"1" if good[at:at + 1] == b"0" else b"0") + good[at + 1:]
    overwrite_keeping_mtime(lock, bad)
    r = run("sync", "--locked", cwd=d)
    assert r.code != 0, r
    assert "plugins.lock.json is out of date" in r.err, r
    r = run("lock", cwd=d)
    assert r.code == 0, r
    assert lock.read_bytes() == good
    up_to_date(run("sync", cwd=d), prefix, 2)

    # installed.json changed in place behind sync's back (a package's
    # reason): checked in full, and put back as the lock says.
    time.sleep(2.1)
    up_to_date(run("sync", cwd=d), prefix, 2)
    text = state.read_bytes()
    assert b'"reason": "dependency"' in text
    overwrite_keeping_mtime(
        state, text.replace(b'"reason": "dependency"', b'"reason": "explicit"'
                            .ljust(len(b'"reason": "dependency"')), 1))
    r = run("sync", "-v", cwd=d)
    assert r.code == 0, r
    assert "nothing to check" not in r.err, r
    assert installed(prefix)["base-kernels"]["reason"] == "dependency"
    assert run("verify", "--prefix", prefix).code == 0
