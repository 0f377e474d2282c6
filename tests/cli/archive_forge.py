"""Builds package archives by hand, including ones `ireepkg pack` would never
write, for the archive-safety tests.

An ireepkg archive is a zstd-compressed tar whose first member is
`ireeplugin.json` and whose second is `.ireepkg/RECORD.json`:

    {"schema_version": 1,
     "files": [{"path": ..., "sha256": ..., "size": ... [, "executable": true]}]}

sorted by path, listing every regular file except RECORD itself (the manifest
included). `forge()` writes such an archive from a list of `Member`s, computing
a correct RECORD unless told otherwise, so that a test can break exactly one
rule at a time.
"""
from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import os
import pathlib
import subprocess
import tarfile
from typing import Callable, Iterable

MANIFEST_NAME = "ireeplugin.json"
RECORD_NAME = ".ireepkg/RECORD.json"

# The smallest valid manifest: no native code, so it installs on any platform.
MANIFEST = {"schema_version": 1, "name": "evil", "version": "1.0.0",
            "runtime": {"plugins": []}}


def manifest_bytes(doc: dict | None = None) -> bytes:
    return (json.dumps(MANIFEST if doc is None else doc, indent=1) + "\n").encode()


_TYPES = {
    "file": tarfile.REGTYPE,
    "dir": tarfile.DIRTYPE,
    "symlink": tarfile.SYMTYPE,
    "hardlink": tarfile.LNKTYPE,
    "chr": tarfile.CHRTYPE,
    "blk": tarfile.BLKTYPE,
    "fifo": tarfile.FIFOTYPE,
}


@dataclasses.dataclass
class Member:
    """One tar member. `data` is only written for regular files; `size`
    overrides the size in the header (the data is then padded or cut)."""
    name: str
    data: bytes = b""
    type: str = "file"
    mode: int | None = None  # default 0644 (0755 for directories)
    linkname: str = ""
    size: int | None = None
    pax: dict | None = None  # extra PAX header records

    @property
    def is_file(self) -> bool:
        return self.type == "file"

    def tarinfo(self) -> tarfile.TarInfo:
        ti = tarfile.TarInfo(self.name)
        ti.type = _TYPES[self.type]
        ti.mode = self.mode if self.mode is not None else (
            0o755 if self.type == "dir" else 0o644)
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        ti.mtime = 0
        ti.linkname = self.linkname
        if self.type in ("chr", "blk"):
            ti.devmajor, ti.devminor = 1, 3
        ti.size = len(self.data) if self.is_file else 0
        if self.pax:
            ti.pax_headers = dict(self.pax)
        return ti


def file(name: str, data: bytes | str = b"", mode: int = 0o644) -> Member:
    return Member(name, data.encode() if isinstance(data, str) else data, "file", mode)


def manifest_member(doc: dict | None = None, raw: bytes | None = None) -> Member:
    return file(MANIFEST_NAME, raw if raw is not None else manifest_bytes(doc))


def record_entry(m: Member) -> dict:
    e = {"path": m.name, "sha256": hashlib.sha256(m.data).hexdigest(), "size": len(m.data)}
    if m.mode is not None and m.mode & 0o111:
        e["executable"] = True
    return e


def record_for(members: Iterable[Member]) -> dict:
    """The correct RECORD for `members`: every regular file, sorted by path."""
    entries = [record_entry(m) for m in members if m.is_file and m.name != RECORD_NAME]
    entries.sort(key=lambda e: e["path"].encode())
    return {"schema_version": 1, "files": entries}


def record_bytes(doc) -> bytes:
    return (json.dumps(doc, indent=1) + "\n").encode()


def tar_bytes(members: list[Member]) -> bytes:
    """A PAX tar of `members`, in order."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for m in members:
            ti = m.tarinfo()
            if m.is_file:
                data = m.data
                if m.size is not None:
                    ti.size = m.size
                    data = (data + b"\0" * m.size)[:m.size]
                tf.addfile(ti, io.BytesIO(data))
            else:
                tf.addfile(ti)
    return buf.getvalue()


def zstd(data: bytes, level: int = 3) -> bytes:
    return subprocess.run(["zstd", "-q", "-c", f"-{level}"], input=data,
                          capture_output=True, check=True).stdout


def forge(path: pathlib.Path, files: list[Member] | None = None, *,
          manifest: dict | None = None, manifest_raw: bytes | None = None,
          record: dict | Callable[[dict], dict | bytes] | bytes | None = None,
          head: list[Member] | None = None, compress: str = "zstd",
          truncate_at: float | None = None) -> pathlib.Path:
    """Writes an archive to `path`.

    files:        the members after the two metadata members.
    manifest:     the manifest document (default MANIFEST); manifest_raw: its bytes.
    record:       None for the correct RECORD; a dict or bytes to use instead;
                  or a function given the correct RECORD that returns the one
                  to write.
    head:         replaces the first two members entirely (RECORD is then
                  still computed from `head + files` unless given).
    compress:     "zstd", "gzip" or "none".
    truncate_at:  keep only this fraction of the (compressed) file.
    """
    files = list(files or [])
    man = manifest_member(manifest, manifest_raw)
    correct = record_for([man] + files if head is None else head + files)
    if record is None:
        rec = record_bytes(correct)
    elif callable(record):
        r = record(correct)
        rec = r if isinstance(r, bytes) else record_bytes(r)
    elif isinstance(record, bytes):
        rec = record
    else:
        rec = record_bytes(record)
    members = ([man, file(RECORD_NAME, rec)] if head is None else head) + files
    raw = tar_bytes(members)
    if compress == "zstd":
        out = zstd(raw)
    elif compress == "gzip":
        out = gzip.compress(raw, mtime=0)
    elif compress == "none":
        out = raw
    else:
        raise ValueError(compress)
    if truncate_at is not None:
        out = out[:int(len(out) * truncate_at)]
    path = pathlib.Path(path)
    path.write_bytes(out)
    return path


def random_bytes(path: pathlib.Path, n: int = 4096, seed: int = 1) -> pathlib.Path:
    import random
    path = pathlib.Path(path)
    path.write_bytes(random.Random(seed).randbytes(n))
    return path


def snapshot(root: pathlib.Path, exclude: Iterable[pathlib.Path] = ()) -> dict:
    """Every path under `root`: relative path -> (type, mode bits, content or
    link target). Two equal snapshots mean the tree is byte-for-byte the same."""
    root = pathlib.Path(root)
    skip = {pathlib.Path(e) for e in exclude}
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        d = pathlib.Path(dirpath)
        dirnames[:] = sorted(n for n in dirnames if d / n not in skip)
        for n in sorted(dirnames + filenames):
            p = d / n
            if p in skip:
                continue
            st = p.lstat()
            rel = str(p.relative_to(root))
            mode = st.st_mode & 0o7777
            if p.is_symlink():
                out[rel] = ("link", mode, os.readlink(p))
            elif p.is_dir():
                out[rel] = ("dir", mode)
            elif p.is_file():
                out[rel] = ("file", mode, p.read_bytes())
            else:
                out[rel] = ("other", st.st_mode)
    return out
