"""--dry-run of `install`, `remove`, `sync`, `add`, `rm` and `update`: it
prints what would change and changes nothing (the project's files, the
prefix and the download cache's archives are byte for byte as before), and
what it prints is what the real run then does."""
import json

from conftest import run, snapshot
from regfix import PROJECT_REGISTRY, PROJECT_YANKED, installed, project

# The `reg` and `cache` fixtures' (conftest.py).
REGISTRY = PROJECT_REGISTRY
YANKED = PROJECT_YANKED
NO_PREFIX_FROM_ENVIRONMENT = True


def archives(cache):
    """Everything in the download cache but registry metadata (which a dry
    run may fetch) and parsed lockfiles (locks/, which it may keep):
    archives, extracted files, package records."""
    if not cache.exists():
        return []
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*")
                  if p.is_file() and
                  p.relative_to(cache).parts[0] not in ("registries", "locks"))


def dry(d, cache, *args, env=None):
    """Runs `args` with --dry-run --json; checks that nothing changed; the
    report."""
    before, before_cache = snapshot(d), archives(cache)
    r = run(*args, "--dry-run", "--json", cwd=d, env=env)
    assert r.code == 0, r
    assert snapshot(d) == before
    assert archives(cache) == before_cache
    out = json.loads(r.out)
    assert out["dry_run"] is True
    # The text form says the same and changes nothing either.
    r = run(*args, "--dry-run", cwd=d, env=env)
    assert r.code == 0, r
    assert r.out.endswith("dry run: nothing was changed\n"), r.out
    assert snapshot(d) == before
    return out, r.out


def real(d, *args):
    r = run(*args, "--json", cwd=d)
    assert r.code == 0, r
    return json.loads(r.out)


def by_name(changes):
    return sorted((c["name"], c["from"], c["to"]) for c in changes)


def test_sync_dry_run(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    plan, text = dry(d, cache, "sync")
    assert not (d / "plugins.lock.json").exists()
    assert not (d / ".iree-plugins").exists()
    assert by_name(plan["changes"]) == [("base-kernels", None, "1.1.0"),
                                        ("fft-kit", None, "1.0.0")]
    assert plan["relocked"] is True
    assert "would install fft-kit 1.0.0\n" in text
    assert "would install base-kernels 1.1.0\n" in text
    assert f"plugins.json changed: would update {d / 'plugins.lock.json'}\n" in text
    done = real(d, "sync")
    assert by_name(done["changes"]) == by_name(plan["changes"])
    assert done["lock_changes"] == plan["lock_changes"]
    # Up to date: the plan is empty.
    plan, text = dry(d, cache, "sync")
    assert plan["changes"] == []
    assert "would not change" in text


def test_add_and_rm_dry_run(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "extra"}])
    assert run("sync", cwd=d).code == 0
    plan, text = dry(d, cache, "add", "fft-kit")
    assert plan["plugins"][0]["action"] == "added"
    assert plan["plugins"][0]["version"] == "^1.0.0"
    assert by_name(plan["lock"]["changes"]) == [
        ("base-kernels", None, "1.1.0"), ("fft-kit", None, "1.0.0")]
    assert by_name(plan["sync"]["changes"]) == by_name(plan["lock"]["changes"])
    assert text.startswith("would add fft-kit: version ^1.0.0\n"
                           f"would write {d / 'plugins.json'}\n")
    assert f"would write {d / 'plugins.lock.json'} (3 packages)\n" in text
    done = real(d, "add", "fft-kit")
    for key in ("plugins", "changed"):
        assert done[key] == plan[key]
    assert done["lock"]["changes"] == plan["lock"]["changes"]
    assert by_name(done["sync"]["changes"]) == by_name(plan["sync"]["changes"])

    plan, text = dry(d, cache, "rm", "fft-kit")
    assert by_name(plan["sync"]["changes"]) == [
        ("base-kernels", "1.1.0", None), ("fft-kit", "1.0.0", None)]
    assert "would remove fft-kit from plugins.json\n" in text
    assert "would remove fft-kit 1.0.0\n" in text
    done = real(d, "rm", "fft-kit")
    assert done["lock"]["changes"] == plan["lock"]["changes"]
    assert by_name(done["sync"]["changes"]) == by_name(plan["sync"]["changes"])

    # --no-sync and --frozen plan only as far as they go.
    plan, _ = dry(d, cache, "add", "fft-kit", "--no-sync")
    assert "lock" in plan and "sync" not in plan
    plan, text = dry(d, cache, "add", "fft-kit@^1", "--frozen")
    assert "lock" not in plan and "sync" not in plan
    assert text == ("would add fft-kit: version ^1\n"
                    f"would write {d / 'plugins.json'}\n"
                    "dry run: nothing was changed\n")


def test_update_dry_run(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    assert run("sync", cwd=d).code == 0
    reg.publish("base-kernels", "1.2.0")
    plan, text = dry(d, cache, "update")
    assert plan["changes"] == [{"name": "base-kernels", "from": "1.1.0",
                                "to": "1.2.0"}]
    assert plan["installed"] == plan["changes"]
    assert "  ~ base-kernels 1.1.0 -> 1.2.0\n" in text
    assert "would change base-kernels 1.1.0 -> 1.2.0\n" in text
    done = real(d, "update")
    assert done["changes"] == plan["changes"]
    assert done["installed"] == plan["installed"]
    assert installed(d / ".iree-plugins")["base-kernels"]["version"] == "1.2.0"


def test_install_and_remove_dry_run(tmp_path, reg, cache):
    work = tmp_path / "work"
    work.mkdir()
    prefix = work / "prefix"
    key = ["--registry", str(reg.dir), "--registry-key", reg.pub,
           "--prefix", str(prefix)]
    plan, text = dry(work, cache, "install", "fft-kit", *key)
    assert not prefix.exists()
    assert by_name(plan["changes"]) == [("base-kernels", None, "1.1.0"),
                                        ("fft-kit", None, "1.0.0")]
    assert "would install fft-kit 1.0.0\n" in text
    done = real(work, "install", "fft-kit", *key)
    assert by_name(done["changes"]) == by_name(plan["changes"])

    plan, text = dry(work, cache, "remove", "--cascade", "base-kernels",
                     "--prefix", str(prefix))
    assert by_name(plan["changes"]) == [("base-kernels", "1.1.0", None),
                                        ("fft-kit", "1.0.0", None)]
    assert "would remove base-kernels 1.1.0\n" in text
    # Refused as the real run would be: without --cascade.
    r = run("remove", "base-kernels", "--prefix", prefix, "--dry-run")
    assert r.code == 1, r
    assert "depends on it" in r.err
    done = real(work, "remove", "--cascade", "base-kernels", "--prefix",
                str(prefix))
    assert by_name(done["changes"]) == by_name(plan["changes"])

    # From archive files: read and checked, nothing installed.
    archive = reg.dist / "extra-2.0.0.ireepkg"
    plan, text = dry(work, cache, "install", str(archive), "--prefix",
                     str(prefix))
    assert plan["changes"] == [{"name": "extra", "from": None, "to": "2.0.0"}]
    assert "extra" not in installed(prefix)


def test_sync_keeps_the_parsed_lockfile_only_for_the_same_bytes(
        tmp_path, reg, cache):
    """sync keeps the lockfile as it parsed it (<cache>/locks/*.parsed),
    keyed by the SHA-256 of the lockfile's bytes' SHA-256 and of the
    ireepkg version: an edited lockfile is read again, and a parsed copy that
    others may write is not read."""
    import hashlib
    import os
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    assert run("lock", cwd=d).code == 0
    plan, _ = dry(d, cache, "sync")
    want = [("base-kernels", None, "1.1.0"), ("fft-kit", None, "1.0.0")]
    assert by_name(plan["changes"]) == want
    parsed = list((cache / "locks").glob("*.parsed"))
    assert len(parsed) == 1
    parsed = parsed[0]
    assert dry(d, cache, "sync")[0]["changes"] == plan["changes"]
    first = parsed.read_bytes()

    # Edited by hand (plugins.json unchanged, so not stale): read again.
    lockfile = d / "plugins.lock.json"
    lock = json.loads(lockfile.read_text())
    for p in lock["packages"]:
        if p["name"] == "base-kernels":
            p["version"] = "1.0.7"
    lockfile.write_text((json.dumps(lock, indent=2) + "\n").replace(
        '"base-kernels@1.1.0"', '"base-kernels@1.0.7"'))
    edited = [("base-kernels", None, "1.0.7"), ("fft-kit", None, "1.0.0")]
    assert by_name(dry(d, cache, "sync")[0]["changes"]) == edited

    # A parsed copy of the first lockfile, keyed as if it were of the
    # edited one (as someone able to write the cache could make it): used
    # when it is the user's own and no one else may write it, which shows
    # that the parsed copy is what is read; passed over otherwise.
    version = run("--version").out.split()[1]
    digest = hashlib.sha256(lockfile.read_bytes()).hexdigest()
    key = hashlib.sha256(f"ireepkg parsed lockfile {version}\n".encode() +
                         digest.encode()).hexdigest().encode()
    # "IREEPKGP", u32 format, u32 kind, then the 64-digit key.
    forged = first[:16] + key + first[80:]
    parsed.write_bytes(forged)
    os.chmod(parsed, 0o664)
    assert by_name(dry(d, cache, "sync")[0]["changes"]) == edited
    parsed.write_bytes(forged)
    os.chmod(parsed, 0o644)
    assert by_name(dry(d, cache, "sync")[0]["changes"]) == want
    # Damaged: ignored, and parsed again.
    parsed.write_bytes(forged[:-3])
    assert by_name(dry(d, cache, "sync")[0]["changes"]) == edited
