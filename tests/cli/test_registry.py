"""`ireepkg registry init`, `publish`, `yank`, `registry resign` and
`registry verify` on directory registries: exact output and --json, the
files written (checked against the published JSON Schemas and by `manifest
check`), publishing twice, conflicts, keys that do not belong to the
registry, encrypted keys, tampering seen by the verifying client, and
minisign interoperability both ways: a snapshot signed by `minisign -S`
verifies in the client, and snapshots and archives ireepkg signed verify
with `minisign -V`.

minisign takes a secret key's password on stdin when stdin is not a
terminal."""
import json
import pathlib
import re
import shutil
import subprocess
import time

import jsonschema
import pytest

from conftest import REPO, data_package, pack, run

MINISIGN = shutil.which("minisign")
TIMEOUT = 60
SCHEMAS = REPO / "manifest_schema"
needs_minisign = pytest.mark.skipif(
    MINISIGN is None, reason="minisign is missing: run scripts/setup.sh")


def ireepkg(*args, **kw):
    return run(*args, timeout=TIMEOUT, **kw)


def ok(*args, **kw):
    r = ireepkg(*args, **kw)
    assert r.code == 0, r
    return r


def minisign(*args, password=None):
    return subprocess.run(
        [MINISIGN, *map(str, args)],
        input=None if password is None else password + "\n",
        stdin=subprocess.DEVNULL if password is None else None,
        capture_output=True, text=True, timeout=TIMEOUT)


def keypair(tmp, name="signing", password=None):
    args = ["key", "generate", "-o", tmp / name]
    if password is not None:
        (tmp / f"{name}.password").write_text(password + "\n")
        args += ["--password-file", tmp / f"{name}.password"]
    ok(*args)
    pub = tmp / f"{name}.pub"
    return pub, tmp / f"{name}.key", pub.read_text().splitlines()[1]


def key_id(pub):
    return pub.read_text().splitlines()[0].rsplit(" ", 1)[1]


@pytest.fixture
def empty_reg(tmp_path):
    """An initialized registry, its key and a few packed archives."""
    pub, key, line = keypair(tmp_path)
    d = tmp_path / "registry"
    ok("registry", "init", d, "--key", key, "--name", "test-reg")
    dist = tmp_path / "dist"
    src = tmp_path / "src"
    archives = {
        "base-1.0.0": pack(data_package(src, "base", "1.0.0"), dist),
        "app-1.0.0": pack(data_package(src, "app", "1.0.0",
                                       dependencies={"base": "^1.0"}), dist),
    }

    class Reg:
        pass
    r = Reg()
    r.dir, r.pub, r.key, r.line, r.tmp = d, pub, key, line, tmp_path
    r.archives, r.src, r.dist = archives, src, dist
    return r


def schema_check(d: pathlib.Path):
    """Every registry file is valid against its published schema."""
    def check(path, schema):
        jsonschema.validate(json.loads(path.read_text()),
                            json.loads((SCHEMAS / schema).read_text()))
    check(d / "config.json", "registry-config.schema.json")
    check(d / "snapshot.json", "registry-snapshot.schema.json")
    for f in (d / "index").glob("*.json"):
        check(f, "registry-index.schema.json")
    r = ireepkg("manifest", "check", d)
    assert r.code == 0, r


def snapshot_json(d):
    return json.loads((d / "snapshot.json").read_text())


# -- init ---------------------------------------------------------------------

def test_init_output_and_files(tmp_path):
    pub, key, line = keypair(tmp_path)
    d = tmp_path / "my-registry"
    r = ok("registry", "init", d, "--key", key, "--mirror",
           "https://mirror.example.org/iree", "--description", "test plugins")
    lines = r.out.splitlines()
    assert lines[0] == f'created registry "my-registry" in {d}'
    assert lines[1] == f"signing key: {key_id(pub)} ({line})"
    assert re.fullmatch(r"snapshot version 1, expires \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",
                        lines[2]), lines[2]
    assert lines[3] == (f"clients trust it with --registry-key {line}, or "
                        f'"public_key": "{line}" in plugins.json')
    assert r.err == ""
    config = json.loads((d / "config.json").read_text())
    assert config == {"schema_version": 1, "name": "my-registry",
                      "keys": [line],
                      "mirrors": ["https://mirror.example.org/iree"],
                      "description": "test plugins"}
    # Deterministic: sorted keys, two spaces, final newline.
    text = (d / "config.json").read_text()
    assert text == json.dumps(config, indent=2, sort_keys=True) + "\n"
    snap = snapshot_json(d)
    assert snap["version"] == 1 and snap["index"] == {}
    assert (d / "index").is_dir() and (d / "archives").is_dir()
    schema_check(d)


def test_init_json_and_refusals(tmp_path):
    pub, key, line = keypair(tmp_path)
    d = tmp_path / "r"
    r = ok("registry", "init", d, "--key", key, "--json", "--expires-days", "7")
    j = json.loads(r.out)
    assert j["ok"] is True and j["name"] == "r" and j["public_key"] == line
    assert j["key_id"] == key_id(pub) and j["snapshot_version"] == 1
    expires = time.mktime(time.strptime(j["expires"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    assert abs(expires - (time.time() + 7 * 86400)) < 120

    r = ireepkg("registry", "init", d, "--key", key)
    assert r.code == 1
    assert r.err.startswith(f"ireepkg: error: {d}: is already a registry\n")

    r = ireepkg("registry", "init", tmp_path / "nokey")
    assert r.code == 2
    assert "'registry init' needs --key <secret key>" in r.err
    assert "ireepkg key generate -o registry-signing" in r.err
    assert not (tmp_path / "nokey").exists()

    r = ireepkg("registry", "init", tmp_path / "x", "--key", key,
                "--expires-days", "0")
    assert r.code == 2
    assert "--expires-days must be a number of days from 1 to 3650, not '0'" in r.err


def test_encrypted_key_needs_its_password(tmp_path):
    pub, key, line = keypair(tmp_path, password="registry secret")
    r = ireepkg("registry", "init", tmp_path / "r", "--key", key)
    assert r.code == 2
    assert "the secret key is encrypted; its password is needed" in r.err
    assert "--password-file FILE" in r.err
    ok("registry", "init", tmp_path / "r", "--key", key,
       "--password-file", tmp_path / "signing.password")
    assert json.loads((tmp_path / "r" / "config.json").read_text())["keys"] == [line]


# -- publish ------------------------------------------------------------------

def test_publish_output_files_and_twice(empty_reg):
    a = empty_reg.archives["base-1.0.0"]
    r = ok("publish", a, "--registry", empty_reg.dir, "--key", empty_reg.key)
    m = re.fullmatch(r"published base 1\.0\.0: archives/base/base-1\.0\.0\.ireepkg "
                     r"\(.+, sha256 ([0-9a-f]{12})\.\.\.\), snapshot version 2\n", r.out)
    assert m, r.out
    dest = empty_reg.dir / "archives" / "base" / "base-1.0.0.ireepkg"
    assert dest.read_bytes() == a.read_bytes()
    import hashlib
    sha = hashlib.sha256(a.read_bytes()).hexdigest()
    assert m.group(1) == sha[:12]
    index = json.loads((empty_reg.dir / "index" / "base.json").read_text())
    assert index == {"schema_version": 1, "name": "base", "versions": [{
        "version": "1.0.0", "archive": "archives/base/base-1.0.0.ireepkg",
        "sha256": sha, "size": a.stat().st_size, "yanked": False,
        "platforms": [], "summary": "test package base"}]}
    snap = snapshot_json(empty_reg.dir)
    assert snap["version"] == 2
    assert snap["index"]["base"] == "sha256:" + hashlib.sha256(
        (empty_reg.dir / "index" / "base.json").read_bytes()).hexdigest()
    schema_check(empty_reg.dir)

    before = {p: p.read_bytes() for p in empty_reg.dir.rglob("*") if p.is_file()}
    r = ok("publish", a, "--registry", empty_reg.dir, "--key", empty_reg.key)
    assert r.out == ("base 1.0.0 is already published with the same contents; "
                     "nothing changed\n")
    after = {p: p.read_bytes() for p in empty_reg.dir.rglob("*") if p.is_file()}
    assert after == before

    # A dependency the registry does not have yet: a warning.
    r = ok("publish", empty_reg.archives["app-1.0.0"], "--registry", empty_reg.dir,
           "--key", empty_reg.key, "--json")
    assert r.err == ""
    assert json.loads(r.out)["published"][0]["snapshot_version"] == 3
    r = ok("yank", "app@1.0.0", "--registry", empty_reg.dir, "--key", empty_reg.key)
    lone = empty_reg.tmp / "lone"
    ok("registry", "init", lone, "--key", empty_reg.key)
    r = ok("publish", empty_reg.archives["app-1.0.0"], "--registry", lone, "--key", empty_reg.key)
    assert r.err == (f"ireepkg: warning: {empty_reg.archives['app-1.0.0']}: package 'app': "
                     "app 1.0.0 depends on base ^1.0, which this registry does not have\n"
                     "  hint: publish base too: until then, installing app from "
                     "this registry fails\n")

    r = ok("publish", empty_reg.archives["app-1.0.0"], a, "--registry", empty_reg.dir,
           "--key", empty_reg.key, "--json")
    j = json.loads(r.out)
    assert j["ok"] is True and j["registry"] == str(empty_reg.dir)
    assert [(p["name"], p["version"], p["already_published"], p["snapshot_version"])
            for p in j["published"]] == [("app", "1.0.0", True, 4),
                                          ("base", "1.0.0", True, 4)]
    assert j["published"][0]["path"] == "archives/app/app-1.0.0.ireepkg"
    index = json.loads((empty_reg.dir / "index" / "app.json").read_text())
    assert index["versions"][0]["dependencies"] == {"base": "^1.0"}


def files_of(d):
    return {p.relative_to(d): p.read_bytes() for p in d.rglob("*") if p.is_file()}


def test_publish_conflict_publishes_nothing(empty_reg):
    """One refused archive among good ones: nothing is published, every
    file of the registry is as it was, and the error names the archive."""
    ok("publish", empty_reg.archives["base-1.0.0"], "--registry", empty_reg.dir,
       "--key", empty_reg.key)
    other = pack(data_package(empty_reg.tmp / "other", "base", "1.0.0",
                              files={"data/x.txt": "other bytes\n"}),
                 empty_reg.tmp / "other-dist")
    extra = pack(data_package(empty_reg.tmp / "src2", "extra", "1.0.0"), empty_reg.tmp / "dist2")
    before = files_of(empty_reg.dir)
    r = ireepkg("publish", empty_reg.archives["app-1.0.0"], other, extra, "--registry",
                empty_reg.dir, "--key", empty_reg.key)
    assert r.code == 1
    assert r.out == ""
    assert (f"ireepkg: error: {other}: package 'base': base 1.0.0 is already published in "
            f"{empty_reg.dir} with other contents") in r.err
    assert "hint: a published version never changes: raise the version" in r.err
    assert "`ireepkg yank base@1.0.0`" in r.err
    assert files_of(empty_reg.dir) == before
    assert not [p for p in empty_reg.dir.iterdir() if p.name.startswith(".incoming")]

    # Two refused archives: both are named, nothing is published.
    broken = empty_reg.tmp / "broken.ireepkg"
    broken.write_bytes(b"not an archive")
    r = ireepkg("publish", other, extra, broken, "--registry", empty_reg.dir,
                "--key", empty_reg.key, "--json")
    assert r.code == 1
    j = json.loads(r.out)
    assert j["ok"] is False
    files = [d.get("file") for d in j["error"]["diagnostics"]]
    assert str(other) in files and str(broken) in files, j
    assert "2 of the 3 archives cannot be published" == j["error"]["message"]
    assert "nothing was published" in r.err
    assert files_of(empty_reg.dir) == before


def test_publish_many_in_one_snapshot(empty_reg, tmp_path, monkeypatch):
    """Three archives in one call: one new snapshot holding all three, which
    `registry verify` accepts and a client installs from; the same archive
    given twice is published once; two archives of one name and version
    with other contents are refused."""
    monkeypatch.setenv("IREEPKG_CACHE_DIR", str(tmp_path / "cache"))
    lib = pack(data_package(empty_reg.src, "lib", "2.0.0"), empty_reg.dist)
    a, b = empty_reg.archives["base-1.0.0"], empty_reg.archives["app-1.0.0"]
    v = snapshot_json(empty_reg.dir)["version"]
    r = ok("publish", b, a, lib, a, "--registry", empty_reg.dir, "--key", empty_reg.key)
    assert r.err == ""  # app's dependency base comes in the same publish
    lines = r.out.splitlines()
    assert len(lines) == 4
    for line, name, version in zip(lines, ["app", "base", "lib"],
                                   ["1.0.0", "1.0.0", "2.0.0"]):
        assert line.startswith(f"published {name} {version}: "), line
        assert line.endswith(f", snapshot version {v + 1}"), line
    assert lines[3] == ("base 1.0.0 is already published with the same "
                        "contents; nothing changed")
    snap = snapshot_json(empty_reg.dir)
    assert snap["version"] == v + 1
    assert sorted(snap["index"]) == ["app", "base", "lib"]
    for name, archive in [("app", b), ("base", a), ("lib", lib)]:
        index = json.loads((empty_reg.dir / "index" / f"{name}.json").read_text())
        assert [e["version"] for e in index["versions"]] == [
            "2.0.0" if name == "lib" else "1.0.0"]
        dest = empty_reg.dir / index["versions"][0]["archive"]
        assert dest.read_bytes() == archive.read_bytes()
        assert (dest.parent / (dest.name + ".minisig")).is_file()
    schema_check(empty_reg.dir)
    r = ok("registry", "verify", empty_reg.dir, "--registry-key", empty_reg.line, "--archives")
    assert "3 packages, 3 versions: every index file matches" in r.out
    assert not [p for p in empty_reg.dir.iterdir() if p.name.startswith(".")
                and p.name != ".lock"]

    # A client installs from the result (app and its dependency base).
    prefix = tmp_path / "prefix"
    r = ok("install", "app", "--registry", empty_reg.dir, "--registry-key",
           empty_reg.line, "--prefix", prefix, "--json")
    assert {(c["name"], c["to"]) for c in json.loads(r.out)["changes"]} == {
        ("app", "1.0.0"), ("base", "1.0.0")}

    # Everything already there: no new snapshot.
    r = ok("publish", a, lib, "--registry", empty_reg.dir, "--key", empty_reg.key, "--json")
    assert [p["already_published"] for p in json.loads(r.out)["published"]] == [True, True]
    assert snapshot_json(empty_reg.dir)["version"] == v + 1

    # Two archives of one name and version with other contents.
    one = pack(data_package(tmp_path / "x1", "twin", "1.0.0"), tmp_path / "d1")
    two = pack(data_package(tmp_path / "x2", "twin", "1.0.0",
                            files={"data/y.txt": "y\n"}), tmp_path / "d2")
    before = files_of(empty_reg.dir)
    r = ireepkg("publish", one, two, "--registry", empty_reg.dir, "--key", empty_reg.key)
    assert r.code == 1 and r.out == ""
    assert (f"ireepkg: error: {two}: package 'twin': twin 1.0.0 is given twice "
            f"with other contents: {one}") in r.err
    assert files_of(empty_reg.dir) == before


def test_publish_with_a_key_the_registry_does_not_list(empty_reg):
    pub2, key2, line2 = keypair(empty_reg.tmp, "intruder")
    snap = (empty_reg.dir / "snapshot.json").read_bytes()
    r = ireepkg("publish", empty_reg.archives["base-1.0.0"], "--registry", empty_reg.dir,
                "--key", key2)
    assert r.code == 1
    assert (f"ireepkg: error: {key2}: the signing key {key_id(pub2)} is not one "
            f"of the registry's keys (config.json lists: {key_id(empty_reg.pub)})") in r.err
    assert line2 in r.err  # the hint says what to add to config.json
    assert (empty_reg.dir / "snapshot.json").read_bytes() == snap
    assert not (empty_reg.dir / "archives" / "base").exists()


def test_publish_needs_a_registry_directory(empty_reg):
    r = ireepkg("publish", empty_reg.archives["base-1.0.0"], "--registry",
                "https://plugins.example.org/iree", "--key", empty_reg.key)
    assert r.code == 2
    assert "'publish' writes into a registry directory" in r.err
    r = ireepkg("publish", empty_reg.archives["base-1.0.0"], "--key", empty_reg.key)
    assert r.code == 2 and "'publish' needs --registry <dir>" in r.err
    r = ireepkg("publish", empty_reg.archives["base-1.0.0"], "--registry", empty_reg.tmp,
                "--key", empty_reg.key)
    assert r.code == 1
    assert f"{empty_reg.tmp} is not a registry: it has no config.json" in r.err


def test_quiet_prints_only_errors(empty_reg):
    """--quiet: init, publish (new and already published), yank, resign,
    `registry verify` and `key generate` print nothing on stdout, errors
    still go to stderr, and --json is unchanged."""
    q = empty_reg.tmp / "quiet"
    q.mkdir()
    r = ok("key", "generate", "-o", q / "k", "--quiet")
    assert r.out == "" and r.err == "" and (q / "k.key").is_file()
    d = q / "registry"
    r = ok("registry", "init", d, "--key", empty_reg.key, "--name", "quiet-reg",
           "--quiet")
    assert r.out == "" and r.err == ""
    assert snapshot_json(d)["version"] == 1
    a = empty_reg.archives["base-1.0.0"]
    for _ in range(2):  # published, then already published
        r = ok("publish", a, "--registry", d, "--key", empty_reg.key, "--quiet")
        assert r.out == "" and r.err == ""
    assert snapshot_json(d)["version"] == 2
    r = ok("-q", "yank", "base@1.0.0", "--registry", d, "--key", empty_reg.key)
    assert r.out == "" and r.err == ""
    r = ok("registry", "resign", d, "--key", empty_reg.key, "-q")
    assert r.out == "" and r.err == ""
    r = ok("registry", "verify", d, "--registry-key", empty_reg.line, "-q")
    assert r.out == "" and r.err == ""
    # An error still goes to stderr.
    other = pack(data_package(q / "src", "base", "1.0.0",
                              files={"data/x.txt": "other\n"}), q / "dist")
    r = ireepkg("publish", other, "--registry", d, "--key", empty_reg.key, "--quiet")
    assert r.code == 1 and r.out == ""
    assert "base 1.0.0 is already published" in r.err
    # --json is not affected by --quiet.
    r = ok("publish", empty_reg.archives["app-1.0.0"], "--registry", d, "--key",
           empty_reg.key, "--quiet", "--json")
    assert json.loads(r.out)["published"][0]["name"] == "app"
    # Without --quiet, the lines are there.
    r = ok("yank", "app@1.0.0", "--registry", d, "--key", empty_reg.key)
    assert r.out.startswith("yanked app 1.0.0, snapshot version ")


# -- yank and resign ----------------------------------------------------------

def test_yank_undo_and_resign(empty_reg):
    ok("publish", empty_reg.archives["base-1.0.0"], "--registry", empty_reg.dir,
       "--key", empty_reg.key)
    r = ok("yank", "base@1.0.0", "--registry", empty_reg.dir, "--key", empty_reg.key)
    assert r.out == "yanked base 1.0.0, snapshot version 3\n"
    index = json.loads((empty_reg.dir / "index" / "base.json").read_text())
    assert index["versions"][0]["yanked"] is True
    r = ok("yank", "base@1.0.0", "--registry", empty_reg.dir, "--key", empty_reg.key)
    assert r.out == "base 1.0.0 is already yanked; nothing changed\n"
    r = ok("yank", "base@1.0.0", "--undo", "--registry", empty_reg.dir, "--key",
           empty_reg.key, "--json")
    assert json.loads(r.out) == {"ok": True, "registry": str(empty_reg.dir),
                                 "name": "base", "version": "1.0.0",
                                 "yanked": False, "changed": True,
                                 "snapshot_version": 4}
    r = ireepkg("yank", "base@2.0.0", "--registry", empty_reg.dir, "--key", empty_reg.key)
    assert r.code == 1
    assert "base 2.0.0 is not published (base has: 1.0.0)" in r.err
    r = ireepkg("yank", "base", "--registry", empty_reg.dir, "--key", empty_reg.key)
    assert r.code == 2 and "'base' is not <name>@<version>" in r.err

    r = ok("registry", "resign", empty_reg.dir, "--key", empty_reg.key, "--expires-days", "90")
    m = re.fullmatch(rf"re-signed {re.escape(str(empty_reg.dir))}: snapshot version 5, "
                     rf"expires (\S+) \(key {key_id(empty_reg.pub)}\)\n", r.out)
    assert m, r.out
    assert snapshot_json(empty_reg.dir)["expires"] == m.group(1)
    r = ok("registry", "resign", empty_reg.dir, "--key", empty_reg.key, "--json")
    assert json.loads(r.out)["snapshot_version"] == 6
    schema_check(empty_reg.dir)


# -- the verifying client -----------------------------------------------------

def test_registry_verify(empty_reg):
    # Both archives in one snapshot (version 2), then the yank (3).
    ok("publish", empty_reg.archives["base-1.0.0"], empty_reg.archives["app-1.0.0"],
       "--registry", empty_reg.dir, "--key", empty_reg.key)
    ok("yank", "app@1.0.0", "--registry", empty_reg.dir, "--key", empty_reg.key)
    r = ok("registry", "verify", empty_reg.dir, "--registry-key", empty_reg.line, "--archives")
    lines = r.out.splitlines()
    assert re.fullmatch(rf'registry "test-reg" \({re.escape(str(empty_reg.dir))}\): snapshot '
                        rf"version 3 signed by {key_id(empty_reg.pub)}, expires \S+", lines[0])
    assert lines[1:] == [
        "  app: 1.0.0 (yanked)",
        "  base: 1.0.0",
        "2 packages, 2 versions: every index file matches the signed snapshot",
        "every archive has the size and SHA-256 of its index entry"]
    # The key as a .pub file, and --json.
    j = json.loads(ok("registry", "verify", f"file://{empty_reg.dir}", "--registry-key",
                      empty_reg.pub, "--json").out)
    assert j["signed_by"] == key_id(empty_reg.pub) and j["snapshot_version"] == 3
    assert [p["name"] for p in j["packages"]] == ["app", "base"]
    assert j["packages"][0]["versions"][0]["yanked"] is True


def test_registry_verify_refusals(empty_reg, tmp_path):
    ok("publish", empty_reg.archives["base-1.0.0"], "--registry", empty_reg.dir,
       "--key", empty_reg.key)
    # No key configured: the registry's own key is shown, never trusted.
    r = ireepkg("registry", "verify", empty_reg.dir)
    assert r.code == 1
    assert (f"no trusted key is configured for registry {empty_reg.dir}, so "
            f"its snapshot cannot be checked; its config.json lists {empty_reg.line} "
            f"(key id {key_id(empty_reg.pub)})") in r.err
    assert f"`--registry-key {empty_reg.line}`" in r.err
    # Another key.
    pub2, _, line2 = keypair(tmp_path, "other")
    r = ireepkg("registry", "verify", empty_reg.dir, "--registry-key", line2, "--json")
    assert r.code == 1
    j = json.loads(r.out)
    assert j["ok"] is False
    assert j["error"]["message"] == (
        f"snapshot.json of {empty_reg.dir} is signed by key {key_id(empty_reg.pub)}, which is "
        f"not a key you trust for this registry (trusted: {key_id(pub2)})")
    # A tampered archive: nothing lands in the download cache.
    cache = tmp_path / "cache"
    archive = empty_reg.dir / "archives" / "base" / "base-1.0.0.ireepkg"
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 1
    archive.write_bytes(bytes(data))
    r = ireepkg("registry", "verify", empty_reg.dir, "--registry-key", empty_reg.line,
                "--archives", env={"IREEPKG_CACHE_DIR": str(cache)})
    assert r.code == 1
    assert "base 1.0.0: the archive's SHA-256 is " in r.err
    assert not [p for p in (cache / "downloads").rglob("*") if p.is_file()]
    # Rollback: an older snapshot after a newer one was seen.
    old = {n: (empty_reg.dir / n).read_bytes() for n in ("snapshot.json", "snapshot.json.minisig")}
    ok("registry", "resign", empty_reg.dir, "--key", empty_reg.key)
    ok("registry", "verify", empty_reg.dir, "--registry-key", empty_reg.line,
       env={"IREEPKG_CACHE_DIR": str(cache)})
    for n, b in old.items():
        (empty_reg.dir / n).write_bytes(b)
    r = ireepkg("registry", "verify", empty_reg.dir, "--registry-key", empty_reg.line,
                env={"IREEPKG_CACHE_DIR": str(cache)})
    assert r.code == 1
    assert (f"rollback: snapshot.json of {empty_reg.dir} is version 2, older than "
            "version 3 that this machine has already seen") in r.err


def test_registry_verify_checks_again_what_the_cache_remembers(empty_reg, tmp_path):
    """`registry verify` reads the registry's own files every time: neither
    the record of a snapshot verified before nor the parsed forms of index
    files in the cache stand in for them."""
    ok("publish", empty_reg.archives["base-1.0.0"], empty_reg.archives["app-1.0.0"],
       "--registry", empty_reg.dir, "--key", empty_reg.key)
    env = {"IREEPKG_CACHE_DIR": str(tmp_path / "cache")}
    args = ("registry", "verify", empty_reg.dir, "--registry-key", empty_reg.line)
    first = ok(*args, "-v", "-v", env=env)
    assert "index/base.json of %s: read from" % empty_reg.dir in first.err
    # What a first run leaves, the others use...
    registry_cache = next((tmp_path / "cache" / "registries").iterdir())
    assert (registry_cache / "snapshot.verified").is_file()
    assert (registry_cache / "index.pack").is_file()
    # ...but not verify: it checks the signature and reads every index file.
    again = ok(*args, "-v", "-v", env=env)
    assert "verified before" not in again.err
    assert "parsed copy in the cache" not in again.err
    assert "index/app.json of %s: read from" % empty_reg.dir in again.err
    assert "index/base.json of %s: read from" % empty_reg.dir in again.err
    # An index file changed in the registry is found, cache or no cache.
    index = empty_reg.dir / "index" / "base.json"
    index.write_bytes(index.read_bytes() + b" ")
    r = ireepkg(*args, env=env)
    assert r.code == 1
    assert ("index/base.json of %s does not match snapshot.json" % empty_reg.dir) in r.err


# -- minisign, both ways ------------------------------------------------------

@needs_minisign
def test_ireepkg_signatures_verify_with_minisign(empty_reg):
    ok("publish", empty_reg.archives["base-1.0.0"], "--registry", empty_reg.dir,
       "--key", empty_reg.key)
    r = minisign("-Vm", empty_reg.dir / "snapshot.json", "-P", empty_reg.line)
    assert r.returncode == 0, r.stderr
    assert "Signature and comment signature verified" in r.stdout + r.stderr
    assert re.search(r"Trusted comment: timestamp:\d+\tfile:snapshot.json\t"
                     r"version:2\texpires:\S+Z", r.stdout), r.stdout
    archive = empty_reg.dir / "archives" / "base" / "base-1.0.0.ireepkg"
    r = minisign("-Vm", archive, "-p", empty_reg.pub, "-H")
    assert r.returncode == 0, r.stderr
    assert "\tsha256:" in r.stdout


@needs_minisign
def test_snapshot_signed_by_minisign_verifies_in_the_client(tmp_path):
    """A registry whose key was made by minisign: ireepkg publishes with it,
    then minisign re-signs snapshot.json, and the client accepts it."""
    mpub, mkey = tmp_path / "ms.pub", tmp_path / "ms.key"
    r = minisign("-G", "-W", "-p", mpub, "-s", mkey)
    assert r.returncode == 0, r.stderr
    line = mpub.read_text().splitlines()[1]
    d = tmp_path / "registry"
    ok("registry", "init", d, "--key", mkey)
    a = pack(data_package(tmp_path / "src", "base", "1.0.0"), tmp_path / "dist")
    ok("publish", a, "--registry", d, "--key", mkey)
    (d / "snapshot.json.minisig").unlink()
    r = minisign("-S", "-s", mkey, "-m", d / "snapshot.json",
                 "-t", "signed by minisign")
    assert r.returncode == 0, r.stderr
    assert (d / "snapshot.json.minisig").exists()
    j = json.loads(ok("registry", "verify", d, "--registry-key", line,
                      "--archives", "--json").out)
    assert j["signed_by"] == key_id(mpub)
    assert j["snapshot_version"] == 2
    # The publisher builds on the minisign-signed state.
    b = pack(data_package(tmp_path / "src", "base", "1.1.0"), tmp_path / "dist")
    ok("publish", b, "--registry", d, "--key", mkey)
    r = minisign("-Vm", d / "snapshot.json", "-p", mpub)
    assert r.returncode == 0, r.stderr
    # And a legacy (non-prehashed) minisign signature verifies too.
    (d / "snapshot.json.minisig").unlink()
    assert minisign("-S", "-l", "-s", mkey, "-m", d / "snapshot.json").returncode == 0
    assert ok("registry", "verify", d, "--registry-key", mpub).out.startswith(
        'registry "registry"')
    # A snapshot minisign signed with another key is refused.
    opub, okey = tmp_path / "o.pub", tmp_path / "o.key"
    assert minisign("-G", "-W", "-p", opub, "-s", okey).returncode == 0
    (d / "snapshot.json.minisig").unlink()
    assert minisign("-S", "-s", okey, "-m", d / "snapshot.json").returncode == 0
    r = ireepkg("registry", "verify", d, "--registry-key", line)
    assert r.code == 1
    assert f"is signed by key {key_id(opub)}, which is not a key you trust" in r.err


def test_concurrent_publishers_take_turns(empty_reg):
    """Four publishers at once: the lock serializes them, every package is
    published and each one raised the snapshot version once."""
    import os
    archives = [pack(data_package(empty_reg.src, f"pkg{i}", "1.0.0"), empty_reg.dist)
                for i in range(4)]
    from conftest import ireepkg_path
    procs = [subprocess.Popen([str(ireepkg_path()), "publish", a, "--registry",
                               empty_reg.dir, "--key", empty_reg.key],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=dict(os.environ))
             for a in archives]
    for p in procs:
        out, err = p.communicate(timeout=TIMEOUT)
        assert p.returncode == 0, err
    snap = snapshot_json(empty_reg.dir)
    assert snap["version"] == 5
    assert sorted(snap["index"]) == [f"pkg{i}" for i in range(4)]
    j = json.loads(ok("registry", "verify", empty_reg.dir, "--registry-key", empty_reg.line,
                      "--archives", "--json").out)
    assert [p["name"] for p in j["packages"]] == [f"pkg{i}" for i in range(4)]
    schema_check(empty_reg.dir)


# -- interrupted writes ---------------------------------------------------------

# Where a publish or yank is killed (IREEPKG_FAULT=<point>:stop, then kill -9),
# whether readers then see the registry as it was ("old") or as the
# operation makes it ("new"), and whether the next command that writes
# finishes the operation (once its staged snapshot is complete): the staged
# snapshot's temporary file written; the staged snapshot and its signature
# written; the index files renamed into place; the signature renamed over
# snapshot.json.minisig.
KILL_POINTS = [("registry-snapshot-temp-written", "old", False),
               ("registry-intent-written", "old", True),
               ("registry-index-renamed", "new", True),
               ("registry-signature-renamed", "new", True)]


def test_publish_of_two_killed_between_its_index_renames(empty_reg, tmp_path,
                                                         monkeypatch):
    """A publish of two packages killed after renaming the first index file
    and before the second: a reader that meets the renamed one takes the
    staged snapshot and reads the other package's staged index file, so an
    install that needs both sees the new state, and the next operation
    finishes the publish."""
    from conftest import kill_at_fault_point
    monkeypatch.setenv("IREEPKG_CACHE_DIR", str(tmp_path / "cache"))
    new = [pack(data_package(empty_reg.src, "base", "1.1.0"), empty_reg.dist),
           pack(data_package(empty_reg.src, "app", "1.1.0",
                             dependencies={"base": "^1.1"}), empty_reg.dist)]
    ok("publish", empty_reg.archives["base-1.0.0"], empty_reg.archives["app-1.0.0"],
       "--registry", empty_reg.dir, "--key", empty_reg.key)
    kill_at_fault_point(["publish", *new, "--registry", empty_reg.dir, "--key",
                         empty_reg.key], "registry-first-index-renamed")
    staged = [p.name for p in empty_reg.dir.iterdir()
              if p.name.startswith(".index-")]
    assert len(staged) == 1, staged
    r = ok("install", "app", "--registry", empty_reg.dir, "--registry-key",
           empty_reg.line, "--prefix", tmp_path / "p")
    assert "installed app 1.1.0" in r.out, r
    r = ok("list", "--prefix", tmp_path / "p")
    assert re.search(r"^base +1\.1\.0", r.out, re.M), r
    r = ok("registry", "verify", empty_reg.dir, "--registry-key", empty_reg.line)
    assert "snapshot version 3 " in r.out, r
    ok("yank", "base@1.0.0", "--registry", empty_reg.dir, "--key", empty_reg.key)
    assert snapshot_json(empty_reg.dir)["version"] == 4
    assert sorted(p.name for p in empty_reg.dir.iterdir()
                  if p.name.startswith(".")) == [".lock"]


@pytest.mark.parametrize("point,state,finished", KILL_POINTS)
@pytest.mark.parametrize("operation", ["publish", "yank"])
def test_killed_publish_leaves_a_signed_state(empty_reg, tmp_path, monkeypatch,
                                              operation, point, state,
                                              finished):
    """A publish or yank killed between two of its writes: `registry verify`
    and `install` from the registry see the old or the new signed state,
    never a mix, and the next command that writes finishes or drops the
    operation and leaves no file of it behind."""
    from conftest import kill_at_fault_point
    monkeypatch.setenv("IREEPKG_CACHE_DIR", str(tmp_path / "cache"))
    base = {v: pack(data_package(empty_reg.src, "base", v), empty_reg.dist)
            for v in ("1.1.0", "1.2.0")}
    ok("publish", empty_reg.archives["base-1.0.0"], base["1.1.0"],
       "--registry", empty_reg.dir, "--key", empty_reg.key)
    op = (["publish", base["1.2.0"]] if operation == "publish"
          else ["yank", "base@1.1.0"])
    pid = kill_at_fault_point([*op, "--registry", empty_reg.dir, "--key", empty_reg.key],
                              point)
    if point == "registry-snapshot-temp-written":
        assert (empty_reg.dir / f"..snapshot.json.new.tmp.{pid}").exists()

    versions = {("publish", "old"): "1.0.0, 1.1.0",
                ("publish", "new"): "1.0.0, 1.1.0, 1.2.0",
                ("yank", "old"): "1.0.0, 1.1.0",
                ("yank", "new"): "1.0.0, 1.1.0 (yanked)"}[operation, state]
    r = ok("registry", "verify", empty_reg.dir, "--registry-key", empty_reg.line)
    assert f"snapshot version {2 if state == 'old' else 3} " in r.out
    assert f"  base: {versions}" in r.out.splitlines()
    r = ok("install", "base", "--registry", empty_reg.dir, "--registry-key",
           empty_reg.line, "--prefix", tmp_path / "prefix")
    chosen = {("publish", "new"): "1.2.0", ("yank", "new"): "1.0.0"}.get(
        (operation, state), "1.1.0")
    assert f"installed base {chosen}" in r.out

    # The next command that writes finishes (or drops) the operation first.
    ok("publish", empty_reg.archives["app-1.0.0"], "--registry", empty_reg.dir,
       "--key", empty_reg.key)
    assert snapshot_json(empty_reg.dir)["version"] == (4 if finished else 3)
    assert sorted(p.name for p in empty_reg.dir.iterdir()
                  if p.name.startswith(".")) == [".lock"]
    r = ok("registry", "verify", empty_reg.dir, "--registry-key", empty_reg.line,
           "--archives")
    if finished:
        versions = {"publish": "1.0.0, 1.1.0, 1.2.0",
                    "yank": "1.0.0, 1.1.0 (yanked)"}[operation]
    assert f"  base: {versions}" in r.out.splitlines()
