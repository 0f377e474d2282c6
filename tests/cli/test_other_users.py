"""Files another user owns or may write: what ireepkg keeps in a package
cache, configuration files, a project's `.iree-plugins` and the directory
`cache clean` and `cache prune` are given. Another user must not be able to
change what the current user installs or trusts through them, nor make
ireepkg delete the current user's files.

Setting up files of another user (uid 65534) needs root: those tests skip
in the unprivileged run of this file."""
import hashlib
import json
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import ROOT_ONLY, data_package, pack, run, snapshot

OTHER = 65534
AS_OTHER = ["setpriv", f"--reuid={OTHER}", f"--regid={OTHER}", "--clear-groups"]


def needs_root():
    if os.geteuid() != 0:
        pytest.skip(f"{ROOT_ONLY} files of another user; the root run of this "
                    "file does it")


def give_to_other(root: pathlib.Path):
    """Makes `root` and everything under it the other user's."""
    for p in [root, *root.rglob("*")]:
        os.lchown(p, OTHER, OTHER)


def as_other(code: str, *args):
    """Runs Python `code` as the other user."""
    r = subprocess.run([*AS_OTHER, "/usr/bin/python3", "-c", code, *map(str, args)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def shared_warning(path) -> str:
    return (f"ireepkg: warning: {path}: another user owns it or may write it, "
            "so nothing of the package cache there is used (use a cache "
            "directory of your own: IREEPKG_CACHE_DIR, or cache-dir in "
            "config.toml)\n")


@pytest.fixture
def reachable():
    """A directory the other user can reach (pytest's are root's, 0700)."""
    import tempfile
    d = pathlib.Path(tempfile.mkdtemp(prefix="ireepkg-other-users-", dir="/tmp"))
    os.chmod(d, 0o755)
    yield d
    for p in d.rglob("*"):
        if p.is_dir() and not p.is_symlink():
            os.chmod(p, 0o755)
    shutil.rmtree(d)


# --- the package cache ----------------------------------------------------------

def test_blobs_of_another_user_are_not_linked(reachable, example_archives):
    """A cache whose blobs another user owned was hard-linked into root's
    prefix; that user then changed root's installed plugin."""
    needs_root()
    cache = reachable / "cache"
    env = {"IREEPKG_CACHE_DIR": str(cache)}
    prefix = reachable / "p"
    archive = example_archives["simple-mul"]
    assert run("install", "--prefix", prefix, archive, env=env).code == 0
    assert run("remove", "--prefix", prefix, "simple-mul", env=env).code == 0
    give_to_other(cache)
    r = run("install", "--prefix", prefix, archive, env=env)
    assert r.code == 0, r.err
    installed = [p for p in (prefix / "packages").rglob("*")
                 if p.is_file() and not p.is_symlink()]
    assert installed
    assert {p.stat().st_uid for p in installed} == {0}
    blobs = [p for p in (cache / "files").rglob("*")
             if p.is_file() and ".ok-" not in p.name]
    assert blobs
    inodes = {p.stat().st_ino for p in blobs}
    assert not inodes & {p.stat().st_ino for p in installed}
    # That user rewrites every blob: root's prefix is unchanged.
    as_other("import os, sys\n"
             "for p in sys.argv[1:]:\n"
             "    os.chmod(p, 0o644)\n"
             "    open(p, 'r+b').write(b'X')\n", *blobs)
    v = run("verify", "--prefix", prefix, env=env)
    assert v.code == 0 and v.out.rstrip().endswith(": ok"), v
    # Named once, however many of its files were passed over.
    assert r.err.count(shared_warning(cache)) == 1, r.err
    # Nor does root add its files to that user's directories.
    assert {p.stat().st_uid for p in (cache / "files").rglob("*")} == {OTHER}


def test_trust_record_of_another_user_does_not_allow_rollback(reachable):
    """That user rewrote trust.json to an older version, and root then
    accepted a rolled-back snapshot."""
    needs_root()
    tmp = reachable
    assert run("key", "generate", "-o", tmp / "k").code == 0
    line = (tmp / "k.pub").read_text().splitlines()[1]
    reg = tmp / "registry"
    assert run("registry", "init", reg, "--key", tmp / "k.key").code == 0
    archive = pack(data_package(tmp / "src", "base"), tmp / "dist")
    assert run("publish", archive, "--registry", reg, "--key", tmp / "k.key").code == 0
    old = {n: (reg / n).read_bytes()
           for n in ("snapshot.json", "snapshot.json.minisig")}
    assert run("registry", "resign", reg, "--key", tmp / "k.key").code == 0
    cache = tmp / "cache"
    env = {"IREEPKG_CACHE_DIR": str(cache)}
    verify = ("registry", "verify", reg, "--registry-key", line)
    assert run(*verify, env=env).code == 0
    [trust] = cache.rglob("trust.json")
    seen = json.loads(trust.read_text())["snapshot_version"]
    give_to_other(cache)
    as_other("import json, sys\n"
             "p = sys.argv[1]\n"
             "j = json.load(open(p))\n"
             "j['snapshot_version'] -= 1\n"
             "open(p + '.new', 'w').write(json.dumps(j))\n"
             "import os; os.replace(p + '.new', p)\n", trust)
    for n, b in old.items():
        (reg / n).write_bytes(b)
    assert json.loads((reg / "snapshot.json").read_text())["version"] == seen - 1
    r = run(*verify, env=env)
    assert r.code == 1, r
    assert r.err == (
        shared_warning(cache) +
        f"ireepkg: error: {trust}: this machine's record of the registry, or "
        "a directory it is in, is another user's or others may write it, so "
        "it cannot protect against rollback\n"
        "  hint: use a cache directory of your own (IREEPKG_CACHE_DIR, or "
        "cache-dir in config.toml)\n")


# --- configuration files ----------------------------------------------------------

def config_warning(f) -> str:
    return (f"ireepkg: warning: {f}: not used: another user may change it (it "
            "must belong to you or to root, and neither its group nor others "
            "may write it)\n")


def test_config_file_others_may_write_is_not_used(tmp_path):
    f = tmp_path / "config.toml"
    f.write_text("parallel-downloads = 7\n")
    env = {"IREEPKG_CONFIG_FILE": str(f)}
    r = run("config", "get", "parallel-downloads", env=env)
    assert (r.code, r.out, r.err) == (0, "7\n", ""), r
    f.chmod(0o646)
    r = run("config", "get", "parallel-downloads", env=env)
    assert (r.code, r.out, r.err) == (0, "50\n", config_warning(f)), r


def test_config_file_of_another_user_is_not_used(tmp_path):
    needs_root()
    f = tmp_path / "config.toml"
    f.write_text("parallel-downloads = 7\n")
    env = {"IREEPKG_CONFIG_FILE": str(f)}
    # Writable by a group of other users.
    os.chown(f, 0, OTHER)
    f.chmod(0o664)
    r = run("config", "get", "parallel-downloads", env=env)
    assert (r.code, r.out, r.err) == (0, "50\n", config_warning(f)), r
    # Another user's.
    os.chown(f, OTHER, OTHER)
    f.chmod(0o644)
    r = run("config", "get", "parallel-downloads", env=env)
    assert (r.code, r.out, r.err) == (0, "50\n", config_warning(f)), r


# --- a project's prefix ------------------------------------------------------------

def hostile_checkout(tmp_path, example_archives):
    """A prefix with a package, and a checkout whose .iree-plugins links to
    it, with a plugins.json that lists no plugin."""
    victim = tmp_path / "victim"
    r = run("install", "--prefix", victim, example_archives["simple-mul"])
    assert r.code == 0, r
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "plugins.json").write_text(json.dumps(
        {"schema_version": 1, "registries": [], "plugins": []}) + "\n")
    return victim, checkout


def installed_names(prefix):
    r = run("list", "--prefix", prefix, "--json")
    assert r.code == 0, r
    return [p["name"] for p in json.loads(r.out)["packages"]]


def test_symlinked_project_prefix_is_refused(tmp_path, example_archives):
    """`sync` in a checkout whose .iree-plugins was a symlink removed every
    package of the prefix it pointed to."""
    victim, checkout = hostile_checkout(tmp_path, example_archives)
    link = checkout / ".iree-plugins"
    link.symlink_to(victim)
    message = (f"ireepkg: error: {link}: the project's prefix is a symlink (to "
               f"{victim}): not used, since whoever made the checkout chose "
               "where it points\n"
               f"  hint: pass --prefix {link} to use it all the same, if you "
               "trust it, or remove the link\n")
    for cmd in (["sync"], ["list"], ["flags", "runtime"]):
        r = run(*cmd, cwd=checkout)
        assert (r.code, r.err) == (1, message), (cmd, r)
    assert installed_names(victim) == ["simple-mul"]
    # Named, it is used.
    r = run("list", "--prefix", link, cwd=checkout)
    assert r.code == 0 and "simple-mul" in r.out, r


def test_project_prefix_in_a_directory_others_may_write_is_refused(
        tmp_path, example_archives):
    victim, checkout = hostile_checkout(tmp_path, example_archives)
    checkout.chmod(0o777)
    prefix = checkout / ".iree-plugins"
    r = run("sync", cwd=checkout)
    assert r.code == 1
    assert r.err == (
        f"ireepkg: error: {prefix}: the project's prefix is in a directory "
        f"another user may write ({checkout}): not used, since that user could "
        "replace it with a link to another prefix\n"
        f"  hint: pass --prefix {prefix} to use it all the same, if you trust "
        "it, or make the directory yours alone (chmod go-w)\n"), r
    assert not prefix.exists()
    # Sticky, as /tmp: others may not replace what is in it.
    checkout.chmod(0o1777)
    r = run("sync", cwd=checkout)
    assert r.code == 0, r
    checkout.chmod(0o755)


# --- cache clean and prune ---------------------------------------------------------

def test_cache_clean_and_prune_refuse_a_directory_that_is_not_a_cache(tmp_path):
    """`cache clean` given a home directory removed .ssh and Documents."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("secret\n")
    (home / "Documents").mkdir()
    (home / "Documents" / "notes.txt.part-2147483646-0011223344556677"
     ).write_text("mine\n")
    (home / "files").mkdir()
    (home / "files" / "thesis.tex").write_text("mine too\n")
    before = snapshot(home)
    env = {"IREEPKG_CACHE_DIR": str(home)}
    for cmd in (["clean"], ["clean", "simple-mul"], ["prune"]):
        r = run("cache", *cmd, env=env)
        assert r.code == 1, (cmd, r)
        assert r.err == (
            f"ireepkg: error: {home}: not an ireepkg cache directory: it holds "
            ".ssh, Documents, which ireepkg never makes there; nothing was "
            "removed\n"
            "  hint: give the cache directory itself (`ireepkg cache dir` "
            "prints it; IREEPKG_CACHE_DIR, XDG_CACHE_HOME and cache-dir in "
            "config.toml choose it)\n"), (cmd, r)
        assert snapshot(home) == before


def test_prune_removes_partials_only_where_the_cache_writes_them(tmp_path):
    cache = tmp_path / "cache"
    http = cache / "registries" / "abc" / "http"
    http.mkdir(parents=True)
    stale = http / "x.part-2147483646-0011223344556677"
    stale.write_bytes(b"x")
    elsewhere = [cache / "registries" / "abc" / "y.part-2147483646-0011223344556677",
                 cache / "downloads" / "aa" / "deep" / "z.tmp-2147483646",
                 cache / "inspect" / "w.part-2147483646-0011223344556677"]
    for p in elsewhere:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"keep")
    r = run("cache", "prune", env={"IREEPKG_CACHE_DIR": str(cache)})
    assert (r.code, r.err) == (0, ""), r
    assert r.out == (f"removed 1 file, 1 B from {cache}\n"
                     "  partial    1 file, 1 B\n")
    assert not stale.exists()
    assert all(p.exists() for p in elsewhere)
