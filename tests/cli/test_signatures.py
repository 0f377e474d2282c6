"""`ireepkg key generate`, `ireepkg sign` and `ireepkg signature verify`
against the real `minisign` tool, in both directions: signatures made by one
verify with the other, keys made by one sign with the other (with and without
a password), legacy and prehashed formats, and every kind of tampering
refused with its own message (by both tools).

minisign takes a secret key's password on stdin when stdin is not a
terminal: one line to sign, the same line twice for `minisign -G`."""
import base64
import json
import re
import shutil
import stat
import subprocess
import time

import pytest

from conftest import run

MINISIGN = shutil.which("minisign")
TIMEOUT = 60
PASSWORD = "correct horse battery staple"

pytestmark = pytest.mark.skipif(
    MINISIGN is None, reason="minisign is missing: run scripts/setup.sh")


def minisign(*args, password=None, repeat=1):
    """Runs minisign; `password` goes to stdin (`repeat` times, one line
    each)."""
    stdin = None if password is None else (password + "\n") * repeat
    return subprocess.run(
        [MINISIGN, *map(str, args)], input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True, text=True, timeout=TIMEOUT)


def ireepkg(*args):
    return run(*args, timeout=TIMEOUT)


def pub_line(pub):
    return pub.read_text().splitlines()[1]


def pub_key_id(pub):
    """The key id from a minisign .pub file's comment."""
    # minisign prints key ids without leading zeros.
    m = re.fullmatch(r"untrusted comment: minisign public key ([1-9A-F][0-9A-F]{0,15})",
                     pub.read_text().splitlines()[0])
    assert m, pub.read_text()
    return m.group(1)


def minisign_pair(tmp, name="ms", password=None):
    """A key pair made by `minisign -G` (-W without a password)."""
    pub, key = tmp / f"{name}.pub", tmp / f"{name}.key"
    if password is None:
        r = minisign("-G", "-W", "-p", pub, "-s", key)
    else:
        r = minisign("-G", "-p", pub, "-s", key, password=password, repeat=2)
    assert r.returncode == 0, r.stderr
    return pub, key


def ireepkg_pair(tmp, name="ip", password=None, *extra):
    base = tmp / name
    args = ["key", "generate", "-o", base, *extra]
    if password is not None:
        pw = tmp / f"{name}.password"
        pw.write_text(password + "\n")
        args += ["--password-file", pw]
    r = ireepkg(*args)
    assert r.code == 0, r.err
    return tmp / f"{name}.pub", tmp / f"{name}.key"


def payload(tmp, name="payload.bin", content=b"some package bytes\n" * 100):
    f = tmp / name
    f.write_bytes(content)
    return f


def assert_minisign_verifies(pub, f, *extra):
    r = minisign("-V", "-p", pub, "-m", f, *extra)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Signature and comment signature verified" in r.stdout + r.stderr
    return r


def verify_json(f, pub, *extra):
    r = ireepkg("signature", "verify", f, "-p", pub, "--json", *extra)
    assert r.code == 0, r.err
    assert r.err == ""
    return json.loads(r.out)


def refuse(f, pub, message, *extra):
    """ireepkg refuses with exactly `message` (after the location)."""
    r = ireepkg("signature", "verify", f, "-p", pub, *extra)
    assert r.code == 1, r
    assert r.out == ""
    first = r.err.splitlines()[0]
    assert first.startswith("ireepkg: error: "), r.err
    assert first.endswith(message), r.err
    return first


# -- ireepkg signs, minisign verifies ----------------------------------------

def test_ireepkg_signature_verifies_with_minisign(tmp_path):
    pub, key = ireepkg_pair(tmp_path)
    f = payload(tmp_path)
    before = int(time.time())
    r = ireepkg("sign", f, "--key", key)
    assert r.code == 0, r.err
    assert r.out == f"signed {f} -> {f}.minisig (key id {pub_key_id(pub)})\n"
    sig = (tmp_path / "payload.bin.minisig").read_text().splitlines()
    assert len(sig) == 4
    assert sig[0] == "untrusted comment: signature from ireepkg secret key"
    m = re.fullmatch(r"trusted comment: timestamp:(\d+)\tfile:payload.bin\thashed",
                     sig[2])
    assert m, sig[2]
    assert before <= int(m.group(1)) <= int(time.time())
    out = assert_minisign_verifies(pub, f).stdout
    assert f"Trusted comment: {sig[2][len('trusted comment: '):]}" in out
    # Prehashed (minisign -H requires it), and the key as base64 text.
    assert_minisign_verifies(pub, f, "-H")
    r = minisign("-V", "-P", pub_line(pub), "-m", f)
    assert r.returncode == 0, r.stderr
    # And ireepkg agrees with itself.
    j = verify_json(f, pub)
    assert j["ok"] is True and j["prehashed"] is True
    assert j["key_id"] == pub_key_id(pub)


def test_trusted_comment_option(tmp_path):
    pub, key = ireepkg_pair(tmp_path)
    f = payload(tmp_path)
    r = ireepkg("sign", f, "-k", key, "-t", "release 1.2.3\tchannel stable")
    assert r.code == 0, r.err
    out = assert_minisign_verifies(pub, f).stdout
    assert "Trusted comment: release 1.2.3\tchannel stable" in out
    assert verify_json(f, pub)["trusted_comment"] == "release 1.2.3\tchannel stable"


def test_sign_several_files_and_keep_going(tmp_path):
    pub, key = ireepkg_pair(tmp_path)
    a, b = payload(tmp_path, "a.txt", b"a\n"), payload(tmp_path, "b.txt", b"")
    missing = tmp_path / "missing.txt"
    r = ireepkg("sign", a, missing, b, "--key", key)
    assert r.code == 1
    assert r.err == f"ireepkg: error: {missing}: cannot open: No such file or directory\n"
    assert f"signed {a} -> {a}.minisig" in r.out
    assert f"signed {b} -> {b}.minisig" in r.out
    assert not (tmp_path / "missing.txt.minisig").exists()
    for f in (a, b):  # an empty file too
        assert_minisign_verifies(pub, f)
        assert verify_json(f, pub)["trusted_comment"].endswith(
            f"\tfile:{f.name}\thashed")


def test_large_file_streams_both_ways(tmp_path):
    f = tmp_path / "big.bin"
    with open(f, "wb") as out:
        chunk = bytes(range(256)) * 4096  # 1 MiB
        for i in range(24):
            out.write(chunk[i:] + chunk[:i])
        out.write(b"tail")
    pub, key = ireepkg_pair(tmp_path)
    assert ireepkg("sign", f, "--key", key).code == 0
    assert_minisign_verifies(pub, f, "-H")
    mpub, mkey = minisign_pair(tmp_path)
    sig = tmp_path / "big.ms.minisig"
    assert minisign("-S", "-s", mkey, "-m", f, "-x", sig).returncode == 0
    assert verify_json(f, mpub, "--signature", sig)["prehashed"] is True


# -- minisign signs, ireepkg verifies ----------------------------------------

def test_minisign_signature_verifies_with_ireepkg(tmp_path):
    pub, key = minisign_pair(tmp_path)
    f = payload(tmp_path)
    r = minisign("-S", "-s", key, "-m", f, "-t", "made by minisign")
    assert r.returncode == 0, r.stderr
    j = verify_json(f, pub)
    assert j == {"ok": True, "file": str(f), "signature": f"{f}.minisig",
                 "key_id": pub_key_id(pub), "prehashed": True,
                 "trusted_comment": "made by minisign"}
    r = ireepkg("signature", "verify", f, "-p", pub)
    assert r.code == 0, r.err
    assert r.out == (f"signature ok: {f} (key id {pub_key_id(pub)})\n"
                     "trusted comment: made by minisign\n")
    # The public key as its base64 text, as `minisign -P` takes it.
    r = ireepkg("signature", "verify", f, "--public-key", pub_line(pub))
    assert r.code == 0, r.err


def test_minisign_default_trusted_comment(tmp_path):
    pub, key = minisign_pair(tmp_path)
    f = payload(tmp_path)
    assert minisign("-S", "-s", key, "-m", f).returncode == 0
    tc = verify_json(f, pub)["trusted_comment"]
    assert re.fullmatch(r"timestamp:\d+\tfile:payload.bin\thashed", tc), tc


def test_minisign_legacy_signature(tmp_path):
    pub, key = minisign_pair(tmp_path)
    f = payload(tmp_path)
    sig = tmp_path / "legacy.minisig"
    r = minisign("-S", "-l", "-s", key, "-m", f, "-x", sig, "-t", "legacy")
    assert r.returncode == 0, r.stderr
    assert base64.b64decode(sig.read_text().splitlines()[1])[:2] == b"Ed"
    j = verify_json(f, pub, "--signature", sig)
    assert j["prehashed"] is False and j["trusted_comment"] == "legacy"
    r = ireepkg("signature", "verify", f, "-p", pub, "--signature", sig)
    assert r.out.startswith(f"signature ok: {f} (key id {pub_key_id(pub)}, legacy format)\n")
    # minisign -H refuses the legacy format; ireepkg signs prehashed only.
    assert minisign("-V", "-H", "-p", pub, "-m", f, "-x", sig).returncode != 0
    f.write_bytes(f.read_bytes() + b"!")
    refuse(f, pub, f"{f}: signature does not match the file", "--signature", sig)


# -- keys across tools -------------------------------------------------------

def test_ireepkg_key_files(tmp_path):
    pub, key = ireepkg_pair(tmp_path, "signing")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(pub.stat().st_mode) & 0o044 == 0o044
    kid = pub_key_id(pub)
    assert len(pub_line(pub)) == 56 and pub_line(pub).startswith("RW")
    lines = key.read_text().splitlines()
    assert lines[0] == "untrusted comment: minisign unencrypted secret key"
    assert len(lines) == 2
    # minisign recreates the same public key from the secret key.
    recreated = tmp_path / "recreated.pub"
    r = minisign("-R", "-s", key, "-p", recreated)
    assert r.returncode == 0, r.stderr
    assert pub_line(recreated) == pub_line(pub)
    assert pub_key_id(recreated) == kid


def test_key_generate_output_and_overwrite(tmp_path):
    base = tmp_path / "k"
    r = ireepkg("key", "generate", "-o", base)
    assert r.code == 0, r.err
    pub, key = tmp_path / "k.pub", tmp_path / "k.key"
    assert r.out == (f"wrote {pub}: public key {pub_line(pub)} (key id {pub_key_id(pub)})\n"
                     f"wrote {key}: secret key, unencrypted (keep it secret)\n")
    old_pub, old_key = pub.read_bytes(), key.read_bytes()
    r = ireepkg("key", "generate", "-o", base)
    assert r.code == 1
    assert r.err == (f"ireepkg: error: {key}: already exists\n"
                     "  hint: remove it, choose another name, or overwrite it with --force\n")
    assert pub.read_bytes() == old_pub and key.read_bytes() == old_key
    # Only the public key left: still refused, nothing written.
    key.unlink()
    r = ireepkg("key", "generate", "-o", base)
    assert r.code == 1 and f"{pub}: already exists" in r.err
    assert not key.exists() and pub.read_bytes() == old_pub
    r = ireepkg("key", "generate", "-o", base, "--force", "--comment", "registry 2025")
    assert r.code == 0, r.err
    assert pub.read_bytes() != old_pub
    assert pub.read_text().splitlines()[0] == "untrusted comment: registry 2025"
    assert key.read_text().splitlines()[0] == "untrusted comment: registry 2025"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.key", "k.pub"]


def test_ireepkg_unencrypted_key_signs_with_minisign(tmp_path):
    pub, key = ireepkg_pair(tmp_path)
    f = payload(tmp_path)
    r = minisign("-S", "-s", key, "-m", f, "-t", "minisign with ireepkg's key")
    assert r.returncode == 0, r.stderr
    assert verify_json(f, pub)["trusted_comment"] == "minisign with ireepkg's key"
    assert_minisign_verifies(pub, f)


def test_minisign_unencrypted_key_signs_with_ireepkg(tmp_path):
    pub, key = minisign_pair(tmp_path)
    f = payload(tmp_path)
    r = ireepkg("sign", f, "--key", key)
    assert r.code == 0, r.err
    assert_minisign_verifies(pub, f, "-H")
    assert verify_json(f, pub)["key_id"] == pub_key_id(pub)


def test_ireepkg_encrypted_key_works_with_minisign(tmp_path):
    pub, key = ireepkg_pair(tmp_path, "enc", password=PASSWORD)
    assert key.read_text().splitlines()[0] == "untrusted comment: minisign encrypted secret key"
    f = payload(tmp_path)
    # minisign decrypts it with the password on stdin...
    r = minisign("-S", "-s", key, "-m", f, "-t", "via minisign", password=PASSWORD)
    assert r.returncode == 0, r.stderr
    assert verify_json(f, pub)["trusted_comment"] == "via minisign"
    # ...and refuses a wrong one.
    r = minisign("-S", "-s", key, "-m", f, "-x", tmp_path / "x.sig", password="nope")
    assert r.returncode != 0
    assert not (tmp_path / "x.sig").exists()
    # ireepkg signs with it too.
    r = ireepkg("sign", f, "--key", key, "--password-file", tmp_path / "enc.password")
    assert r.code == 0, r.err
    assert_minisign_verifies(pub, f)


def test_minisign_encrypted_key_works_with_ireepkg(tmp_path):
    pub, key = minisign_pair(tmp_path, password=PASSWORD)
    f = payload(tmp_path)
    pw = tmp_path / "pw"
    pw.write_text(PASSWORD + "\n")
    r = ireepkg("sign", f, "--key", key, "--password-file", pw, "-t", "from ireepkg")
    assert r.code == 0, r.err
    out = assert_minisign_verifies(pub, f).stdout
    assert "Trusted comment: from ireepkg" in out

    before = (tmp_path / "payload.bin.minisig").read_bytes()
    wrong = tmp_path / "wrong"
    wrong.write_text("not the password\n")
    r = ireepkg("sign", f, "--key", key, "--password-file", wrong)
    assert r.code == 1
    assert r.err == (f"ireepkg: error: {key}: wrong password or corrupted secret "
                     "key (checksum mismatch)\n")
    r = ireepkg("sign", f, "--key", key)
    assert r.code == 2
    assert r.err == (f"ireepkg: error: {key}: the secret key is encrypted; its "
                     "password is needed\n  hint: give it with --password-file FILE\n")
    assert (tmp_path / "payload.bin.minisig").read_bytes() == before


# -- tampering ---------------------------------------------------------------

@pytest.fixture
def signed(tmp_path):
    """A file signed by minisign, and the key pair."""
    pub, key = minisign_pair(tmp_path)
    f = payload(tmp_path)
    r = minisign("-S", "-s", key, "-m", f, "-t", "release 1")
    assert r.returncode == 0, r.stderr
    sig = tmp_path / "payload.bin.minisig"
    assert verify_json(f, pub)["ok"] is True
    return f, sig, pub


def edit_line(sig, n, change):
    lines = sig.read_text().splitlines()
    lines[n - 1] = change(lines[n - 1])
    sig.write_text("\n".join(lines) + "\n")


def flip(line, at):
    return line[:at] + ("A" if line[at] != "A" else "B") + line[at + 1:]


def minisign_refuses(f, sig, pub):
    r = minisign("-V", "-p", pub, "-m", f, "-x", sig)
    assert r.returncode != 0, r.stdout


def test_tampered_file(signed):
    f, sig, pub = signed
    f.write_bytes(f.read_bytes().replace(b"some", b"same", 1))
    refuse(f, pub, f"{f}: signature does not match the file")
    minisign_refuses(f, sig, pub)


def test_tampered_signature_bytes(signed):
    f, sig, pub = signed
    edit_line(sig, 2, lambda l: flip(l, 50))
    refuse(f, pub, f"{sig}: signature is corrupted: it verifies against neither "
                   "the file nor its trusted comment")
    minisign_refuses(f, sig, pub)


def test_tampered_trusted_comment(signed):
    f, sig, pub = signed
    edit_line(sig, 3, lambda l: l.replace("release 1", "release 2"))
    refuse(f, pub, f"{sig}: trusted comment was altered")
    minisign_refuses(f, sig, pub)


def test_tampered_global_signature(signed):
    f, sig, pub = signed
    edit_line(sig, 4, lambda l: flip(l, 20))
    refuse(f, pub, f"{sig}: trusted comment was altered")
    minisign_refuses(f, sig, pub)


def test_untrusted_comment_may_change(signed):
    f, sig, pub = signed
    edit_line(sig, 1, lambda l: "untrusted comment: anything at all")
    assert verify_json(f, pub)["trusted_comment"] == "release 1"
    assert_minisign_verifies(pub, f)


def test_wrong_public_key(signed, tmp_path):
    f, sig, pub = signed
    other_pub, _ = ireepkg_pair(tmp_path, "other")
    refuse(f, other_pub, f"{sig}: signature was made with key {pub_key_id(pub)}, "
                         f"not {pub_key_id(other_pub)}")
    minisign_refuses(f, sig, other_pub)


def test_truncated_signature(signed):
    f, sig, pub = signed
    text = sig.read_text()
    sig.write_text("\n".join(text.splitlines()[:2]) + "\n")
    refuse(f, pub, f"{sig}: malformed signature file: truncated: expected 4 "
                   "lines, found 2")
    minisign_refuses(f, sig, pub)
    # Cut in the middle of the global signature.
    sig.write_text(text[:len(text) - 30])
    refuse(f, pub, f"{sig}:4: malformed signature file: line 4 (the global "
                   "signature) is not valid base64")
    minisign_refuses(f, sig, pub)
    sig.write_text("")
    refuse(f, pub, f"{sig}: malformed signature file: it is empty")


def test_garbage_base64(signed):
    f, sig, pub = signed
    edit_line(sig, 2, lambda l: l[:20] + "$%&" + l[23:])
    refuse(f, pub, f"{sig}:2: malformed signature file: line 2 (the signature) "
                   "is not valid base64")
    minisign_refuses(f, sig, pub)


def test_missing_signature(tmp_path):
    pub, _ = ireepkg_pair(tmp_path)
    f = payload(tmp_path)
    refuse(f, pub, f"{f}.minisig: signature file not found")
    refuse(f, pub, f"{tmp_path / 'nope.sig'}: signature file not found",
           "--signature", tmp_path / "nope.sig")


def test_failure_json(signed):
    f, sig, pub = signed
    f.write_bytes(b"changed")
    r = ireepkg("signature", "verify", f, "-p", pub, "--json")
    assert r.code == 1
    j = json.loads(r.out)
    assert j["ok"] is False
    assert j["error"]["code"] == "integrity"
    assert j["error"]["message"] == "signature does not match the file"
    assert "signature does not match the file" in r.err


# -- bad input and usage -----------------------------------------------------

def test_bad_public_keys(signed, tmp_path):
    f, sig, pub = signed
    r = ireepkg("signature", "verify", f, "-p", tmp_path / "absent.pub")
    assert r.code == 1
    assert r.err.startswith(f"ireepkg: error: {tmp_path / 'absent.pub'}: no such public key file\n")
    r = ireepkg("signature", "verify", f, "-p", pub_line(pub)[:40])
    assert r.code == 1
    assert "malformed public key: it decodes to 30 bytes, expected 42" in r.err
    bad = tmp_path / "bad.pub"
    bad.write_text("untrusted comment: x\nnot base64 at all\n")
    r = ireepkg("signature", "verify", f, "-p", bad)
    assert r.code == 1
    assert r.err.startswith(f"ireepkg: error: {bad}:2: malformed public key: not valid base64\n")


def test_bad_secret_keys(tmp_path):
    f = payload(tmp_path)
    pub, key = ireepkg_pair(tmp_path)
    lines = key.read_text().splitlines()
    # A flipped character inside the secret key: checksum mismatch.
    key.write_text(lines[0] + "\n" + flip(lines[1], 120) + "\n")
    r = ireepkg("sign", f, "--key", key)
    assert r.code == 1
    assert r.err == f"ireepkg: error: {key}: corrupted secret key (checksum mismatch)\n"
    key.write_text(pub.read_text())
    r = ireepkg("sign", f, "--key", key)
    assert r.code == 1
    assert "malformed secret key: it decodes to 42 bytes, expected 158" in r.err
    r = ireepkg("sign", f, "--key", tmp_path / "absent.key")
    assert r.code == 1 and "cannot open: No such file or directory" in r.err
    assert not (tmp_path / "payload.bin.minisig").exists()


def test_password_files(tmp_path):
    f = payload(tmp_path)
    empty = tmp_path / "empty"
    empty.write_text("\n")
    r = ireepkg("key", "generate", "-o", tmp_path / "k", "--password-file", empty)
    assert r.code == 1
    assert r.err == (f"ireepkg: error: {empty}: the password file is empty\n"
                     "  hint: put the password on the file's first line\n")
    assert not (tmp_path / "k.key").exists()
    # A password for an unencrypted key: ignored, with a warning.
    pub, key = ireepkg_pair(tmp_path)
    pw = tmp_path / "pw"
    pw.write_text("unused\n")
    r = ireepkg("sign", f, "--key", key, "--password-file", pw)
    assert r.code == 0, r.err
    assert r.err == f"ireepkg: warning: {key} is not encrypted; ignoring --password-file\n"
    assert_minisign_verifies(pub, f)


@pytest.mark.parametrize("args,message", [
    (["key", "generate"], "'key generate' needs -o <base>"),
    (["key", "generate", "-o", "x", "--comment", "a\nb"], "--comment must be a single line"),
    (["sign", "f"], "'sign' needs --key <secret key>"),
    (["sign"], "'sign' needs <file>..."),
    (["sign", "f", "--key", "k", "-t", "two\nlines"], "--trusted-comment must be a single line"),
    (["sign", "f", "--key", "k", "-t", "x" * 8001], "--trusted-comment is 8001 bytes; at most 8000"),
    (["signature", "verify", "f"], "'signature verify' needs --public-key <key|file>"),
    (["signature", "verify"], "'signature verify' needs <file>"),
    (["signature", "verify", "a", "b", "-p", "k"], "takes at most 1 argument(s)"),
])
def test_usage_errors(tmp_path, args, message):
    r = run(*args, cwd=tmp_path, timeout=TIMEOUT)
    assert r.code == 2, r
    assert r.err.startswith("ireepkg: error: ") and message in r.err, r.err
    assert list(tmp_path.iterdir()) == []


def test_help_lists_the_commands():
    for cmd in (["key", "generate"], ["sign"], ["signature", "verify"]):
        r = ireepkg(*cmd, "--help")
        assert r.code == 0 and r.out, r
