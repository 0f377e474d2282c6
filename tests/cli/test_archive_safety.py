"""Malicious and malformed package archives: every one is refused with the
rule it breaks (naming the member), and the prefix it was to be installed
into is left byte-for-byte as it was, with nothing written outside it.

Each case starts from a prefix holding a good package (the simple-mul
example), installs a forged archive (see archive_forge.py) that breaks
exactly one rule, and compares snapshots of the prefix, and of everything
else under the test's directory, from before and after.
"""
import hashlib
import json
import os
import pathlib
import random
import re

import pytest

from archive_forge import (MANIFEST, MANIFEST_NAME, RECORD_NAME, Member, file, forge,
                           manifest_bytes, manifest_member, random_bytes, record_bytes,
                           record_for, snapshot)
from conftest import REPO, run

EXAMPLES = pathlib.Path(os.environ.get("IREEPKG_BUILD_DIR", REPO / "build")) / "examples"

OK_TXT = file("data/a.txt", "hello\n")


# -- helpers ---------------------------------------------------------------


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def unlisted(*names):
    """A RECORD transformer that drops `names` (so that the member's own rule,
    not RECORD's check of the same path, is what refuses it)."""
    def f(r):
        return {**r, "files": [e for e in r["files"] if e["path"] not in names]}
    return f


def edit_entry(path, **changes):
    def f(r):
        return {**r, "files": [dict(e, **changes) if e["path"] == path else e
                               for e in r["files"]]}
    return f


@pytest.fixture(scope="session")
def good_archive(tmp_path_factory):
    out = tmp_path_factory.mktemp("good")
    r = run("pack", EXAMPLES / "simple-mul", "-o", out, "--json")
    assert r.code == 0, r.err
    return pathlib.Path(json.loads(r.out)["archive"])


class Env:
    """A test directory with a prefix holding simple-mul, and the helpers to
    check that a refused install changed nothing."""

    def __init__(self, tmp_path: pathlib.Path, good_archive: pathlib.Path):
        self.root = tmp_path
        self.prefix = tmp_path / "p"
        self.env = {}
        for var, sub in (("HOME", "home"), ("XDG_CACHE_HOME", "cache"),
                         ("XDG_DATA_HOME", "data"), ("TMPDIR", "tmp")):
            (tmp_path / sub).mkdir()
            self.env[var] = str(tmp_path / sub)
        # The package cache lives under the test's directory too, so that the
        # "nothing written outside the prefix" check covers it: a refused
        # archive must leave nothing there either.
        self.cache = tmp_path / "cache" / "ireepkg"
        self.env["IREEPKG_CACHE_DIR"] = str(self.cache)
        self.env["IREEPKG_PREFIX"] = str(self.prefix)
        r = self.install(good_archive)
        assert r.code == 0, r.err

    def install(self, *archives):
        return run("install", "--prefix", self.prefix, *archives, cwd=self.root, env=self.env)

    def snapshots(self, ignore_cache=False):
        skip = [self.prefix] + ([self.cache] if ignore_cache else [])
        return (snapshot(self.prefix), snapshot(self.root, exclude=skip))

    def assert_unchanged(self, before, ignore_cache=False):
        prefix_before, outside_before = before
        prefix_after, outside_after = self.snapshots(ignore_cache)
        assert sorted(prefix_after) == sorted(prefix_before), "paths in the prefix changed"
        assert prefix_after == prefix_before, "the prefix's content or modes changed"
        assert outside_after == outside_before, "something was written outside the prefix"
        for leftover in (".staging", ".trash", "state/journal.json"):
            assert not (self.prefix / leftover).exists(), leftover


@pytest.fixture
def env(tmp_path, good_archive):
    return Env(tmp_path, good_archive)


# -- the cases -------------------------------------------------------------
#
# Each builds its archive under `d` (the test's directory) and gives the
# strings (or regular expressions) that stderr must contain: the rule's exact
# phrase from archive.cpp / record.cpp, and the member it names.


def c_absolute(d):
    name = f"{d}/abs_escaped"
    return forge(d / "a.ireepkg", [file(name, "pwned")], record=unlisted(name)), [
        f"member '{name}': absolute paths are not allowed"], ["abs_escaped"]


def c_dotdot(d):
    return forge(d / "a.ireepkg", [file("../x", "pwned")], record=unlisted("../x")), [
        "member '../x': \"..\" components are not allowed"], []


def c_dotdot_inner(d):
    return forge(d / "a.ireepkg", [file("a/../../x", "pwned")], record=unlisted("a/../../x")), [
        "member 'a/../../x': \"..\" components are not allowed"], []


def c_dotdot_deep(d):
    # From <prefix>/.staging/<id>/packages/evil/1.0.0 this reaches `d`.
    name = "../" * 6 + "escaped"
    return forge(d / "a.ireepkg", [file(name, "pwned")], record=unlisted(name)), [
        f"member '{name}': \"..\" components are not allowed"], ["escaped"]


def c_dotdot_listed(d):
    return forge(d / "a.ireepkg", [file("../x", "pwned")]), [
        "member '.ireepkg/RECORD.json': /files/0/path: lists \"../x\", a path that leaves the package ('..')"], []


def c_dot_segment(d):
    return forge(d / "a.ireepkg", [file("./x", "x")], record=unlisted("./x")), [
        "member './x': is a path with a '.' segment"], []


def c_empty_segment(d):
    return forge(d / "a.ireepkg", [file("a//b", "x")], record=unlisted("a//b")), [
        "member 'a//b': is a path with an empty segment"], []


def c_long_path(d):
    name = "/".join(["d" * 250] * 4 + ["f" * 40])  # 1044 bytes, components fine
    assert len(name) > 1024
    return forge(d / "a.ireepkg", [file(name, "x")]), [
        f"member '{name}': path is longer than 1024 bytes"], []


def c_long_component(d):
    name = "data/" + "c" * 256
    return forge(d / "a.ireepkg", [file(name, "x")]), [
        f"member '{name}': a path component is longer than 255 bytes"], []


def c_backslash(d):
    name = "data\\..\\..\\x"
    return forge(d / "a.ireepkg", [file(name, "x")], record=unlisted(name)), [
        f"member '{name}': is a path with a backslash (use '/')"], []


def c_control_char(d):
    name = "ctl\x01name"
    # How the name is shown is another test's business; the rule must hold.
    return forge(d / "a.ireepkg", [file(name, "x")], record=unlisted(name)), [
        "member 'ctl", "name': is a path with a control character"], []


def c_symlink(d):
    return forge(d / "a.ireepkg", [Member("data/l", type="symlink", linkname="/etc/passwd")]), [
        "member 'data/l': symbolic links are not allowed"], []


def c_symlink_manifest(d):
    head = [Member(MANIFEST_NAME, type="symlink", linkname="/etc/passwd"),
            file(RECORD_NAME, record_bytes(record_for([manifest_member()])))]
    return forge(d / "a.ireepkg", [], head=head), [
        "member 'ireeplugin.json': symbolic links are not allowed"], []


def c_hardlink(d):
    return forge(d / "a.ireepkg", [OK_TXT, Member("data/h", type="hardlink",
                                                  linkname="data/a.txt")]), [
        "member 'data/h': hard links are not allowed"], []


def c_chr(d):
    return forge(d / "a.ireepkg", [Member("dev/null", type="chr")]), [
        "member 'dev/null': device files are not allowed"], []


def c_blk(d):
    return forge(d / "a.ireepkg", [Member("dev/sda", type="blk")]), [
        "member 'dev/sda': device files are not allowed"], []


def c_fifo(d):
    return forge(d / "a.ireepkg", [Member("data/pipe", type="fifo")]), [
        "member 'data/pipe': FIFOs are not allowed"], []


def c_sparse(d):
    real = bytes(4096) + b"hi"
    m = Member("data/sparse", b"hi", pax={
        "GNU.sparse.major": "0", "GNU.sparse.minor": "1", "GNU.sparse.name": "data/sparse",
        "GNU.sparse.realsize": str(len(real)), "GNU.sparse.size": str(len(real)),
        "GNU.sparse.map": "4096,2"})
    return forge(d / "a.ireepkg", [m], record=edit_entry("data/sparse", sha256=sha(real),
                                                          size=len(real))), [
        "member 'data/sparse': sparse files are not allowed"], []


def _mode_case(mode, name="bin/tool", type="file"):
    def c(d):
        m = Member(name, b"#!/bin/sh\n" if type == "file" else b"", type=type, mode=mode)
        return forge(d / "a.ireepkg", [m]), [
            f"member '{name}': set-id and sticky bits are not allowed"], []
    return c


def c_duplicate(d):
    return forge(d / "a.ireepkg", [OK_TXT, OK_TXT], record=lambda r: record_for(
        [manifest_member(), OK_TXT])), [
        "member 'data/a.txt': appears more than once"], []


def c_not_in_record(d):
    return forge(d / "a.ireepkg", [OK_TXT, file("data/extra", "x")],
                 record=unlisted("data/extra")), [
        "member 'data/extra': is not listed in .ireepkg/RECORD.json"], []


def c_missing_from_archive(d):
    ghost = file("data/ghost", "boo")
    return forge(d / "a.ireepkg", [OK_TXT], record=lambda r: record_for(
        [manifest_member(), OK_TXT, ghost])), [
        "member 'data/ghost': is listed in .ireepkg/RECORD.json but missing from the archive"], []


def c_hash_mismatch(d):
    return forge(d / "a.ireepkg", [file("data/a.txt", "evil!\n")],
                 record=edit_entry("data/a.txt", sha256=sha(b"good!\n"))), [
        "member 'data/a.txt': SHA-256 does not match .ireepkg/RECORD.json"], []


def c_size_larger(d):
    return forge(d / "a.ireepkg", [file("data/a.txt", "1234")],
                 record=edit_entry("data/a.txt", size=5)), [
        "member 'data/a.txt': size 4 does not match .ireepkg/RECORD.json (5)"], []


def c_size_smaller(d):
    return forge(d / "a.ireepkg", [file("data/a.txt", "1234")],
                 record=edit_entry("data/a.txt", size=3)), [
        "member 'data/a.txt': size 4 does not match .ireepkg/RECORD.json (3)"], []


def c_case_files(d):
    return forge(d / "a.ireepkg", [file("lib/Lib.so", "a"), file("lib/lib.so", "b")]), [
        "member 'lib/lib.so': collides with \"lib/Lib.so\" on a case-insensitive file system"], []


def c_case_dirs(d):
    return forge(d / "a.ireepkg", [file("A/x", "a"), file("a/y", "b")]), [
        "member 'a/y': collides with \"A\" on a case-insensitive file system"], []


def c_case_manifest(d):
    return forge(d / "a.ireepkg", [file("IREEPLUGIN.JSON", "{}")]), [
        "member 'IREEPLUGIN.JSON': collides with \"ireeplugin.json\" on a case-insensitive "
        "file system"], []


def c_case_unicode(d):
    # Ä and ä are one name on APFS, HFS+ and NTFS. Member paths are portable
    # ASCII, so the first of them is already refused.
    return forge(d / "a.ireepkg", [file("data/\u00c4.txt", "a"), file("data/\u00e4.txt", "b")]), [
        # Quoted escaped: a message never carries raw bytes of an archive.
        "member '.ireepkg/RECORD.json': /files/0/path: lists \"data/\\xc3\\x84.txt\", a path with a non-ASCII character"], []


def c_normalization(d):
    # NFC and NFD spellings of é are one name on APFS and HFS+; neither is
    # portable ASCII.
    return forge(d / "a.ireepkg", [file("data/\u00e9.txt", "a"), file("data/e\u0301.txt", "b")]), [
        "member '.ireepkg/RECORD.json': /files/0/path: lists \"data/e\\xcc\\x81.txt\", a path with a non-ASCII character"], []


def c_file_under_file(d):
    return forge(d / "a.ireepkg", [file("a", "x"), file("a/b", "y")]), [
        "member 'a/b': is inside \"a\", which is a file"], []


def c_file_over_dir(d):
    return forge(d / "a.ireepkg", [file("a/b", "y"), file("a", "x")]), [
        "member 'a': is a file where other members put a directory"], []


def c_bomb_ratio(d):
    return forge(d / "a.ireepkg", [file("data/zeros", bytes(64 << 20))]), [
        re.compile(r"the archive expands \d+ times \(\d+ bytes to 67108\d\d\d\), more than "
                   r"the limit of 200")], []


def c_bomb_total(d):
    return forge(d / "a.ireepkg", [file("data/big", "x")],
                 record=edit_entry("data/big", size=5 << 30)), [
        re.compile(r"the archive unpacks to 5368709\d\d\d bytes, more than the limit of "
                   r"4294967296")], []


def c_manifest_too_big(d):
    doc = dict(MANIFEST, description="d" * (5 << 20))
    return forge(d / "a.ireepkg", [], manifest=doc), [
        "member 'ireeplugin.json': is larger than 4194304 bytes"], []


def c_first_not_manifest(d):
    rec = file(RECORD_NAME, record_bytes(record_for([manifest_member()])))
    return forge(d / "a.ireepkg", [], head=[rec, manifest_member()]), [
        "the first member must be ireeplugin.json, not \".ireepkg/RECORD.json\""], []


def c_second_not_record(d):
    man = manifest_member()
    rec = file(RECORD_NAME, record_bytes(record_for([man, OK_TXT])))
    return forge(d / "a.ireepkg", [rec], head=[man, OK_TXT]), [
        "the second member must be .ireepkg/RECORD.json, not \"data/a.txt\""], []


def c_ends_early(d):
    return forge(d / "a.ireepkg", [], head=[manifest_member()]), [
        "the archive ends before .ireepkg/RECORD.json"], []


def c_manifest_not_json(d):
    return forge(d / "a.ireepkg", [OK_TXT], manifest_raw=b'{"schema_version": 1, "name": '), [
        re.compile(r"a\.ireepkg:ireeplugin\.json:\d+:\d+: invalid JSON")], []


def c_manifest_names_missing_file(d):
    doc = dict(MANIFEST, runtime={"plugins": [
        {"name": "p", "format": "system-library",
         "library": {"linux-x86_64": "runtime/libp.so"}}]})
    return forge(d / "a.ireepkg", [OK_TXT], manifest=doc), [
        "member 'runtime/libp.so': ireeplugin.json names \"runtime/libp.so\", which is not in "
        "the archive"], []


def c_manifest_hash(d):
    # RECORD lists the hash of the good manifest; the archive holds another
    # of the same size.
    good = manifest_bytes()
    evil = manifest_bytes(dict(MANIFEST, name="evjl"))
    assert len(good) == len(evil)
    return forge(d / "a.ireepkg", [OK_TXT], manifest_raw=evil,
                 record=edit_entry(MANIFEST_NAME, sha256=sha(good))), [
        "member 'ireeplugin.json': SHA-256 does not match .ireepkg/RECORD.json"], []


def c_manifest_unlisted(d):
    return forge(d / "a.ireepkg", [OK_TXT], record=unlisted(MANIFEST_NAME)), [
        "member 'ireeplugin.json': is not listed in .ireepkg/RECORD.json"], []


def c_record_not_json(d):
    return forge(d / "a.ireepkg", [OK_TXT], record=b'{"schema_version": 1, "files": ['), [
        "member '.ireepkg/RECORD.json': is not valid JSON"], []


def c_record_duplicate(d):
    return forge(d / "a.ireepkg", [OK_TXT], record=lambda r: {
        **r, "files": r["files"] + [r["files"][-1]]}), [
        "member '.ireepkg/RECORD.json': /files/2/path: lists \"ireeplugin.json\" twice"], []


def c_record_unsorted(d):
    return forge(d / "a.ireepkg", [OK_TXT], record=lambda r: {
        **r, "files": list(reversed(r["files"]))}), [
        "member '.ireepkg/RECORD.json': /files/1/path: is not sorted by path"], []


def c_record_bad_hash(d):
    return forge(d / "a.ireepkg", [OK_TXT], record=edit_entry("data/a.txt", sha256="0" * 63)), [
        "member '.ireepkg/RECORD.json': /files/0/sha256: has a malformed hash for \"data/a.txt\""], []


def c_record_newer(d):
    return forge(d / "a.ireepkg", [OK_TXT], record=lambda r: {**r, "schema_version": 2}), [
        "member '.ireepkg/RECORD.json': /schema_version: schema_version 2 is newer than this ireepkg "
        "understands"], []


def c_record_deep(d):
    # About 150,000 levels once crashed install and info (stack overflow
    # while printing the malformed entry).
    depth = 150_000
    raw = (b'{"schema_version": 1, "files": [' + b"[" * depth + b"]" * depth + b"]}")
    return forge(d / "a.ireepkg", [OK_TXT], record=raw), [
        "member '.ireepkg/RECORD.json': is not valid JSON: ",
        "JSON nesting is deeper than 8 levels"], []


def c_record_duplicate_key(d):
    def dup(r):
        text = json.dumps(r)
        # The manifest's entry says its size twice: the second would win.
        return text.replace('"size": ', '"size": 1, "size": ', 1).encode()
    return forge(d / "a.ireepkg", [OK_TXT], record=dup), [
        "member '.ireepkg/RECORD.json': is not valid JSON: ",
        'duplicate key "size"'], []


def c_record_executable_not_bool(d):
    return forge(d / "a.ireepkg", [OK_TXT],
                 record=edit_entry("data/a.txt", executable="yes")), [
        "member '.ireepkg/RECORD.json': /files/0/executable: has an \"executable\" "
        "that is a string, not true or false"], []


def c_record_sizes_wrap(d):
    # 6 GiB plus (2^64 - 6 GiB + 100) wraps to 100 bytes in 64 bits: it
    # once passed the 4 GiB and ratio limits and extraction wrote until the
    # disk was full.
    six = 6 << 30
    def wrap(r):
        files = r["files"] + [
            {"path": "data/z1", "sha256": "0" * 64, "size": six},
            {"path": "data/z2", "sha256": "0" * 64, "size": 2**64 - six + 100}]
        return {**r, "files": sorted(files, key=lambda e: e["path"])}
    return forge(d / "a.ireepkg", [OK_TXT], record=wrap), [
        "member '.ireepkg/RECORD.json': /files/2/size: lists sizes that add up to "
        "more than 2^64 bytes"], []


def c_windows_trailing_dot(d):
    return forge(d / "a.ireepkg", [OK_TXT, file("data/x.", "x")]), [
        "lists \"data/x.\", a path with a name ending in '.', which Windows "
        "does not keep"], []


def c_windows_device(d):
    return forge(d / "a.ireepkg", [OK_TXT, file("data/nul.txt", "x")]), [
        "lists \"data/nul.txt\", a path with the name \"nul.txt\", which "
        "Windows reserves for a device"], []


def c_windows_device_dir(d):
    return forge(d / "a.ireepkg", [OK_TXT, file("CON/x", "x")]), [
        "a path with the name \"CON\", which Windows reserves for a device"], []


NOT_ARCHIVE = "not an ireepkg archive (a zstd-compressed tar): "


def c_gzip(d):
    return forge(d / "a.ireepkg", [OK_TXT], compress="gzip"), [
        NOT_ARCHIVE + "Unrecognized archive format"], []


def c_plain_tar(d):
    return forge(d / "a.ireepkg", [OK_TXT], compress="none"), [
        "not an ireepkg archive: it is a tar, but not zstd-compressed"], []


def c_random(d):
    return random_bytes(d / "a.ireepkg", 64 << 10), [
        NOT_ARCHIVE + "Unrecognized archive format"], []


def c_empty_file(d):
    (d / "a.ireepkg").write_bytes(b"")
    return d / "a.ireepkg", [NOT_ARCHIVE], []


BIG = file("data/big.bin", random.Random(7).randbytes(256 << 10))


def c_truncated(d):
    # Cut the compressed stream in the middle of data/big.bin's data.
    return forge(d / "a.ireepkg", [OK_TXT, BIG], truncate_at=0.6), [
        "member 'data/big.bin': is truncated or corrupt: Truncated zstd input"], []


CASES = {
    "absolute-path": c_absolute,
    "dotdot": c_dotdot,
    "dotdot-inside": c_dotdot_inner,
    "dotdot-deep": c_dotdot_deep,
    "dotdot-listed-in-record": c_dotdot_listed,
    "dot-segment": c_dot_segment,
    "empty-segment": c_empty_segment,
    "path-over-1024-bytes": c_long_path,
    "component-over-255-bytes": c_long_component,
    "backslash": c_backslash,
    "control-character": c_control_char,
    "symlink": c_symlink,
    "manifest-is-symlink": c_symlink_manifest,
    "hardlink": c_hardlink,
    "char-device": c_chr,
    "block-device": c_blk,
    "fifo": c_fifo,
    "sparse": c_sparse,
    "setuid": _mode_case(0o4755),
    "setgid": _mode_case(0o2755),
    "sticky": _mode_case(0o1644),
    "setgid-directory": _mode_case(0o2755, "data", "dir"),
    "duplicate-member": c_duplicate,
    "member-not-in-record": c_not_in_record,
    "record-entry-missing-from-archive": c_missing_from_archive,
    "hash-mismatch": c_hash_mismatch,
    "size-larger-in-record": c_size_larger,
    "size-smaller-in-record": c_size_smaller,
    "case-collision-files": c_case_files,
    "case-collision-dirs": c_case_dirs,
    "case-collision-manifest": c_case_manifest,
    "case-collision-unicode": c_case_unicode,
    "normalization-collision": c_normalization,
    "file-under-file": c_file_under_file,
    "file-over-directory": c_file_over_dir,
    "bomb-ratio": c_bomb_ratio,
    "bomb-total-over-4gib": c_bomb_total,
    "manifest-over-4mib": c_manifest_too_big,
    "first-member-not-manifest": c_first_not_manifest,
    "second-member-not-record": c_second_not_record,
    "ends-before-record": c_ends_early,
    "manifest-not-json": c_manifest_not_json,
    "manifest-names-missing-file": c_manifest_names_missing_file,
    "manifest-hash-mismatch": c_manifest_hash,
    "manifest-not-in-record": c_manifest_unlisted,
    "record-not-json": c_record_not_json,
    "record-duplicate-entry": c_record_duplicate,
    "record-unsorted": c_record_unsorted,
    "record-malformed-hash": c_record_bad_hash,
    "record-newer-schema": c_record_newer,
    "record-nested-150000-deep": c_record_deep,
    "record-duplicate-key": c_record_duplicate_key,
    "record-executable-not-boolean": c_record_executable_not_bool,
    "record-sizes-wrap-around": c_record_sizes_wrap,
    "windows-trailing-dot": c_windows_trailing_dot,
    "windows-device-name": c_windows_device,
    "windows-device-directory": c_windows_device_dir,
    "gzip-tar": c_gzip,
    "plain-tar": c_plain_tar,
    "random-bytes": c_random,
    "empty-file": c_empty_file,
    "truncated": c_truncated,
}


def _params():
    for name, case in CASES.items():
        if isinstance(case, tuple):
            yield pytest.param(case[0], id=name, marks=case[1])
        else:
            yield pytest.param(case, id=name)


def assert_mentions(err: str, expected):
    for e in expected:
        if isinstance(e, re.Pattern):
            assert e.search(err), f"{e.pattern!r} not in stderr:\n{err}"
        else:
            assert e in err, f"{e!r} not in stderr:\n{err}"


@pytest.mark.parametrize("case", _params())
def test_refused_and_prefix_unchanged(env, case):
    bad = env.root / "bad"
    bad.mkdir()
    archive, expected, must_not_exist = case(bad)
    before = env.snapshots()
    r = env.install(archive)
    assert r.code == 1, r
    assert "ireepkg: error: " in r.err and "Traceback" not in r.err
    assert_mentions(r.err, expected)
    env.assert_unchanged(before)
    for rel in must_not_exist:
        assert not (bad / rel).exists() and not (env.root / rel).exists()
    # The good package is still intact and in force.
    v = run("verify", "--prefix", env.prefix, env=env.env)
    assert v.code == 0 and v.out.rstrip().endswith(": ok"), v


def test_enough_cases():
    assert len(CASES) >= 30


# -- refusals that must not depend on where the package stands ---------------


def test_bad_upgrade_of_installed_package_keeps_the_old(env):
    """A malicious archive for the installed package's own name (upgrade and
    same-version reinstall) is refused; the installed version stays."""
    for version in ("9.0.0", "1.2.0"):
        doc = dict(MANIFEST, name="simple-mul", version=version)
        archive = forge(env.root / f"sm-{version}.ireepkg",
                        [OK_TXT, Member("data/l", type="symlink", linkname="../../..")],
                        manifest=doc)
        before = env.snapshots()
        r = env.install(archive)
        assert r.code == 1, r
        assert "member 'data/l': symbolic links are not allowed" in r.err
        env.assert_unchanged(before)


def test_good_and_bad_archive_in_one_command_installs_neither(env):
    good = forge(env.root / "fine.ireepkg", [OK_TXT], manifest=dict(MANIFEST, name="fine"))
    bad = forge(env.root / "bad.ireepkg", [Member("dev/zero", type="chr"),
                                            file("data/evil.txt", "evil\n")])
    before = env.snapshots(ignore_cache=True)
    for order in ((good, bad), (bad, good)):
        r = env.install(*order)
        assert r.code == 1, r
        assert "member 'dev/zero': device files are not allowed" in r.err
        # The good archive, fully verified, may be kept in the package cache;
        # nothing of the refused one may.
        env.assert_unchanged(before, ignore_cache=True)
        cached = [p.read_bytes() for p in env.cache.rglob("*") if p.is_file()]
        assert b"evil\n" not in cached


# -- how refusals are reported ------------------------------------------------


def test_control_characters_in_member_names_are_not_printed_raw(env):
    name = "x\x1b]0;pwned\x07\x1b[2J\x1b[31m"
    archive = forge(env.root / "a.ireepkg", [file(name, "x")], record=unlisted(name))
    r = env.install(archive)
    assert r.code == 1
    assert "is a path with a control character" in r.err
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", r.err), repr(r.err)


def test_truncation_names_the_member(env):
    archive = forge(env.root / "a.ireepkg", [OK_TXT, BIG], truncate_at=0.6)
    r = env.install(archive)
    assert r.code == 1
    assert "member 'data/big.bin'" in r.err, r.err


# -- positive controls ------------------------------------------------------


def installed(env, name="evil", version="1.0.0"):
    return env.prefix / "packages" / name / version


def test_forged_default_archive_installs_and_verifies(env):
    archive = forge(env.root / "ok.ireepkg", [OK_TXT, file("data/b.bin", bytes(range(256)))])
    r = env.install(archive)
    assert r.code == 0, r
    assert "installed evil 1.0.0" in r.out
    v = run("verify", "--prefix", env.prefix, env=env.env)
    assert v.code == 0, v
    assert v.out.rstrip().endswith(": ok"), v.out
    d = installed(env)
    assert (d / "data/a.txt").read_bytes() == OK_TXT.data
    assert (d / "data/b.bin").read_bytes() == bytes(range(256))
    assert (d / MANIFEST_NAME).read_bytes() == manifest_bytes()
    assert not (env.prefix / ".staging").exists() and not (env.prefix / ".trash").exists()


def test_directory_members_are_accepted(env):
    archive = forge(env.root / "ok.ireepkg", [
        Member("data", type="dir"), OK_TXT, Member("empty", type="dir"),
        Member("deep/er", type="dir"), file("deep/er/f", "f")])
    r = env.install(archive)
    assert r.code == 0, r
    d = installed(env)
    assert (d / "empty").is_dir() and not any((d / "empty").iterdir())
    assert (d / "deep/er/f").read_text() == "f"
    v = run("verify", "--prefix", env.prefix, env=env.env)
    assert v.code == 0, v


def test_explicit_metadata_directory_member_is_accepted(env):
    """Tools that write every directory (GNU tar, Python's tarfile) add a
    `.ireepkg/` member; it is the directory extraction makes anyway."""
    archive = forge(env.root / "ok.ireepkg", [Member(".ireepkg", type="dir"), OK_TXT])
    r = env.install(archive)
    assert r.code == 0, r
    assert (installed(env) / "data/a.txt").read_bytes() == OK_TXT.data
    assert run("verify", "--prefix", env.prefix, env=env.env).code == 0


def test_directory_members_before_the_metadata_are_accepted(env, tmp_path):
    """`tar -c` of a package directory writes each directory before the
    files in it: `./`, then `.ireepkg/` before `.ireepkg/RECORD.json`. Such
    an archive, made by tar itself, installs and verifies."""
    import subprocess
    man = manifest_member()
    rec = record_bytes(record_for([man, OK_TXT]))
    tree = tmp_path / "tree"
    (tree / ".ireepkg").mkdir(parents=True)
    (tree / "data").mkdir()
    (tree / "ireeplugin.json").write_bytes(man.data)
    (tree / RECORD_NAME).write_bytes(rec)
    (tree / OK_TXT.name).write_bytes(OK_TXT.data)
    archive = env.root / "tar.ireepkg"
    subprocess.run(["tar", "--zstd", "--no-recursion", "-C", tree, "-cf", archive,
                    "ireeplugin.json", ".ireepkg", RECORD_NAME, "data", OK_TXT.name],
                   check=True)
    listing = subprocess.run(["tar", "--zstd", "-tf", archive], check=True,
                             capture_output=True, text=True).stdout.split()
    assert listing[:3] == ["ireeplugin.json", ".ireepkg/", RECORD_NAME], listing
    r = env.install(archive)
    assert r.code == 0, r
    assert (installed(env) / "data/a.txt").read_bytes() == OK_TXT.data
    assert run("verify", "--prefix", env.prefix, env=env.env).code == 0
    # And a directory before the manifest too.
    archive = forge(env.root / "dirs-first.ireepkg", [OK_TXT], head=[
        Member("data", type="dir"), man, Member(".ireepkg", type="dir"),
        file(RECORD_NAME, rec)])
    r = run("info", archive, env=env.env)
    assert r.code == 0, r


def test_info_on_hostile_records_is_an_error_not_a_crash(env):
    """`info <archive>` reads the same head as install."""
    for case in (c_record_deep, c_record_sizes_wrap):
        d = env.root / case.__name__
        d.mkdir()
        archive, expected, _ = case(d)
        r = run("info", archive, env=env.env)
        assert r.code == 1, r
        assert_mentions(r.err, expected)


def test_executable_bit_is_kept_and_files_are_read_only(env):
    archive = forge(env.root / "ok.ireepkg", [file("bin/tool", "#!/bin/sh\n", mode=0o755),
                                              OK_TXT])
    r = env.install(archive)
    assert r.code == 0, r
    d = installed(env)
    assert (d / "bin/tool").stat().st_mode & 0o7777 == 0o555
    assert (d / "data/a.txt").stat().st_mode & 0o7777 == 0o444
    v = run("verify", "--prefix", env.prefix, env=env.env)
    assert v.code == 0, v
