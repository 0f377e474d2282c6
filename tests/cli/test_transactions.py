"""Every change to a prefix is one transaction.

- Crash matrix: the process is killed with SIGKILL (IREEPKG_FAULT=<point>)
  at every step of install, upgrade and remove; after the next command
  (which recovers), the prefix is byte-for-byte either as it was before or
  as it is after a clean run, `verify` passes, and nothing is left over.
- Concurrency: 8 install/remove commands at once on one prefix lose and
  corrupt nothing.
- Lock: a second command waits with a message, or gives up after
  --lock-timeout.
"""
import fcntl
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import (copy_package, data_package, EXAMPLES, ireepkg_path,
                      kill_at_fault_point, make_writable, pack, run,
                      snapshot)

# In transaction order; points up to state-staged roll back, the rest roll
# forward.
FAULT_POINTS = ["journal-written", "package-staged", "state-staged",
                "commit-marked", "applying", "applied", "journal-removed"]
ROLLS_BACK = {"journal-written", "package-staged", "state-staged"}


def clean(prefix_tree):
    """What must never survive recovery."""
    return not any(k.startswith((".staging", ".trash")) or k == "state/journal.json"
                   for k in prefix_tree)


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    root = tmp_path_factory.mktemp("pkgs")
    out = root / "dist"
    a = {"simple-mul": pack(EXAMPLES / "simple-mul", out),
         "mul-pipeline": pack(EXAMPLES / "mul-pipeline", out)}
    newer = copy_package(EXAMPLES / "simple-mul", root / "simple-mul-1.3.0", version="1.3.0")
    a["simple-mul-1.3.0"] = pack(newer, out)
    return a


SCENARIOS = {
    # name: (setup commands, the operation)
    "install": ([["install", "simple-mul"]], ["install", "mul-pipeline"]),
    "upgrade": ([["install", "simple-mul", "mul-pipeline"]], ["install", "simple-mul-1.3.0"]),
    "remove": ([["install", "simple-mul", "mul-pipeline"]], ["remove", "mul-pipeline"]),
    "remove-cascade": ([["install", "simple-mul", "mul-pipeline"]], ["remove", "--cascade", "simple-mul"]),
}


def expand(args, archives):
    """Archive names stand for their files in install commands."""
    if args[0] != "install":
        return list(args)
    return [str(archives[a]) if a in archives else a for a in args]


def prepare(prefix, setup, archives):
    if prefix.exists():
        make_writable(prefix)
        shutil.rmtree(prefix)
    for cmd in setup:
        r = run(*expand(cmd, archives), "--prefix", prefix)
        assert r.code == 0, r.err


CASES = [(s, p) for s in SCENARIOS for p in FAULT_POINTS
         if not (s.startswith("remove") and p == "package-staged")]  # nothing to stage


@pytest.mark.parametrize("scenario,point", CASES)
def test_crash_at_every_step(tmp_path, archives, scenario, point):
    setup, op = SCENARIOS[scenario]
    prefix = tmp_path / "prefix"
    op = expand(op, archives) + ["--prefix", str(prefix)]

    prepare(prefix, setup, archives)
    before = snapshot(prefix)
    r = run(*op)
    assert r.code == 0, r.err
    after = snapshot(prefix)
    assert before != after

    prepare(prefix, setup, archives)
    assert snapshot(prefix) == before
    r = run(*op, env={"IREEPKG_FAULT": point})
    assert r.code == -signal.SIGKILL, f"did not reach {point}: {r}"

    # The next command, whatever it is, completes or rolls back.
    v = run("verify", "--prefix", prefix)
    assert v.code == 0, v.out + v.err
    expected_note = ("rolled back an interrupted change" if point in ROLLS_BACK
                     else "completed an interrupted change")
    if point != "journal-removed":
        assert f"ireepkg: note: {expected_note} in {prefix}" in v.err
    recovered = snapshot(prefix)
    assert clean(recovered)
    assert recovered == (before if point in ROLLS_BACK else after)


def test_recovery_by_a_read_only_command(tmp_path, archives):
    prefix = tmp_path / "p"
    prepare(prefix, [["install", "simple-mul"]], archives)
    r = run("install", archives["mul-pipeline"], "--prefix", prefix,
            env={"IREEPKG_FAULT": "applying"})
    assert r.code == -signal.SIGKILL
    assert (prefix / "state" / "journal.json").exists()
    listing = run("list", "--prefix", prefix)
    assert listing.code == 0
    assert "completed an interrupted change" in listing.err
    assert "mul-pipeline" in listing.out
    assert not (prefix / "state" / "journal.json").exists()


@pytest.mark.parametrize("writes", [1, 2])
def test_kill_while_the_journal_is_written(tmp_path, archives, writes):
    """kill -9 once the journal's temporary file is written, before it is
    renamed (IREEPKG_FAULT=journal-temp-written:stop, at the first journal,
    phase staging, or at the second, phase committing): the next command
    rolls back and removes the temporary file, and `verify` passes."""
    prefix = tmp_path / "p"
    prepare(prefix, [["install", "simple-mul"]], archives)
    before = snapshot(prefix)
    pid = kill_at_fault_point(
        ["install", archives["mul-pipeline"], "--prefix", prefix],
        "journal-temp-written", stops=writes)
    temporary = prefix / "state" / f".journal.json.tmp.{pid}"
    assert temporary.exists()
    assert (prefix / "state" / "journal.json").exists() == (writes == 2)

    v = run("verify", "--prefix", prefix)
    assert v.code == 0, v.out + v.err
    note = ("rolled back an interrupted change" if writes == 2
            else "removed scratch files of an interrupted change")
    assert f"ireepkg: note: {note} in {prefix}" in v.err
    assert snapshot(prefix) == before
    r = run("install", archives["mul-pipeline"], "--prefix", prefix)
    assert r.code == 0, r.err
    assert run("verify", "--prefix", prefix).code == 0
    assert not [k for k in snapshot(prefix) if ".tmp." in k]


def test_recovery_removes_only_its_own_temporary_files(tmp_path, archives):
    """Recovery removes the temporary names of writeFileAtomic in state/
    and nothing else: not a file of that shape elsewhere, not other names."""
    prefix = tmp_path / "p"
    prepare(prefix, [["install", "simple-mul"]], archives)
    (prefix / "state" / ".runtime.flags.tmp.4242").write_text("partial")
    (prefix / "keep.tmp.1").write_text("mine")
    (prefix / ".notes.tmp.7").write_text("mine")
    r = run("list", "--prefix", prefix)
    assert r.code == 0, r.err
    assert f"ireepkg: note: removed scratch files of an interrupted change in {prefix}" in r.err
    assert not (prefix / "state" / ".runtime.flags.tmp.4242").exists()
    assert (prefix / "keep.tmp.1").read_text() == "mine"
    assert (prefix / ".notes.tmp.7").read_text() == "mine"


def test_corrupted_journal_is_reported(tmp_path, archives):
    prefix = tmp_path / "p"
    prepare(prefix, [["install", "simple-mul"]], archives)
    (prefix / "state" / "journal.json").write_text("{not json")
    r = run("list", "--prefix", prefix)
    assert r.code == 1
    assert "the transaction journal is corrupted" in r.err
    assert "hint: an interrupted change cannot be completed" in r.err


def test_concurrent_installs_and_removes(tmp_path):
    prefix = tmp_path / "prefix"
    src = tmp_path / "src"
    out = tmp_path / "dist"
    first = [pack(data_package(src, f"p{i}", files={f"data/{j}.bin": os.urandom(20000) for j in range(5)}), out)
             for i in range(8)]
    second = [pack(data_package(src, f"q{i}"), out) for i in range(4)]

    def all_at_once(commands):
        procs = [subprocess.Popen([str(ireepkg_path()), *map(str, c), "--prefix", str(prefix)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for c in commands]
        results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
        for out_text, err_text, code in results:
            assert code == 0, err_text
        return results

    all_at_once([["install", a] for a in first])
    listing = json.loads(run("list", "--json", "--prefix", prefix).out)
    assert sorted(p["name"] for p in listing["packages"]) == [f"p{i}" for i in range(8)]
    assert run("verify", "--prefix", prefix).code == 0

    results = all_at_once([["remove", f"p{i}"] for i in range(4)] +
                          [["install", a] for a in second])
    assert any("waiting for ireepkg (pid" in err for _, err, _ in results)
    listing = json.loads(run("list", "--json", "--prefix", prefix).out)
    assert sorted(p["name"] for p in listing["packages"]) == \
        sorted([f"p{i}" for i in range(4, 8)] + [f"q{i}" for i in range(4)])
    v = run("verify", "--json", "--prefix", prefix)
    assert v.code == 0, v.out
    assert json.loads(v.out)["files"] == 4 * 6 + 4 * 2  # manifest + data files
    flags = (prefix / "state" / "runtime.flags").read_text()
    assert flags.startswith("# IREE runtime flags")
    tree = snapshot(prefix)
    assert clean(tree)
    assert sorted(k for k in tree if k.count("/") == 2 and k.startswith("packages/")) == \
        sorted(f"packages/{n}/1.0.0" for n in [f"p{i}" for i in range(4, 8)] + [f"q{i}" for i in range(4)])


def test_lock_timeout_and_waiting_message(tmp_path, archives):
    prefix = tmp_path / "p"
    prepare(prefix, [["install", "simple-mul"]], archives)
    with open(prefix / "state" / "lock", "r+") as f:
        fcntl.lockf(f, fcntl.LOCK_EX)
        start = time.monotonic()
        r = run("install", archives["mul-pipeline"], "--prefix", prefix, "--lock-timeout", "0.5")
        elapsed = time.monotonic() - start
        assert r.code == 1
        assert f"ireepkg: waiting for ireepkg (pid {os.getpid()}) to finish with prefix {prefix} ..." in r.err
        assert f"ireepkg (pid {os.getpid()}) is working on this prefix; gave up after 0.5 s" in r.err
        assert 0.5 <= elapsed < 10
        # A waiting command proceeds once the lock is released.
        p = subprocess.Popen([str(ireepkg_path()), "install", str(archives["mul-pipeline"]),
                              "--prefix", str(prefix)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        assert p.poll() is None
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert "installed mul-pipeline 0.3.0" in out


def test_bad_lock_timeout_is_a_usage_error(tmp_path, archives):
    r = run("install", archives["simple-mul"], "--prefix", tmp_path / "p", "--lock-timeout", "soon")
    assert r.code == 2
    assert "--lock-timeout takes a number of seconds, not 'soon'" in r.err
