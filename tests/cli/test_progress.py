"""Progress and Ctrl-C, as a person at a terminal sees them: `sync` and
`install` against a registry on a slow loopback server
(tests/net/fault_server.py, archives sent at a limited rate), run in a real
pseudo-terminal 60 columns wide, or piped.

- On a terminal the progress lines are redrawn in place: no line ever
  reaches past the terminal's width, and once the command is done the
  screen holds exactly what it printed and its summary.
- Piped, stderr holds the summary and nothing else.
- Ctrl-C (SIGINT to the process group, as a terminal sends it) during a
  download stops the command: it says that nothing was changed, exits 130,
  the prefix is as it was (`ireepkg verify` is clean) and no partial
  download is left in the cache."""
import fcntl
import json
import os
import pathlib
import re
import select
import signal
import struct
import subprocess
import termios
import time

import pytest

from conftest import ireepkg_path, run, snapshot
from netfix import fault_server
from regfix import http_project, installed, project

COLUMNS = 60
ROWS = 24
NAMES = [f"slow-package-with-a-long-name-{i:02d}" for i in range(4)]
SIZE = 160 << 10  # random bytes: the archive is about as large


# The `reg` fixture's (conftest.py), with a download cache of the test's
# own (`cache`): base and NAMES, each with SIZE random bytes.
REGISTRY = [("base", "1.0.0"),
            *((name, "1.0.0", None, {"data/blob.bin": SIZE}) for name in NAMES)]
pytestmark = pytest.mark.usefixtures("cache")


class Screen:
    """Just enough of a terminal: printable characters (wrapping onto the
    next row at the last column, as terminals do), CR, LF, cursor up
    (ESC [ n A), erase to end of line (ESC [ K) and of screen (ESC [ J);
    other escape sequences are ignored. A progress line that wrapped would
    leave a row behind that no redraw erases: it shows in `lines()`."""

    def __init__(self, columns):
        self.columns = columns
        self.rows = [[]]
        self.row = self.col = 0
        self.draws = 0  # cursor-up sequences: redraws in place

    def feed(self, text):
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == "\x1b":
                m = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])").match(text, i)
                assert m, repr(text[i:i + 10])
                self._escape(m.group(1), m.group(2))
                i = m.end()
                continue
            if ch == "\r":
                self.col = 0
            elif ch == "\n":
                self._down()
            elif ch >= " ":
                if self.col >= self.columns:
                    self._down()
                    self.col = 0
                line = self.rows[self.row]
                while len(line) < self.col:
                    line.append(" ")
                if self.col < len(line):
                    line[self.col] = ch
                else:
                    line.append(ch)
                self.col += 1
            i += 1

    def _down(self):
        self.row += 1
        if self.row == len(self.rows):
            self.rows.append([])

    def _escape(self, arg, final):
        n = int(arg) if arg.isdigit() else 1
        if final == "A":
            self.row = max(0, self.row - n)
            self.draws += 1
        elif final == "K":
            del self.rows[self.row][self.col:]
        elif final == "J":
            del self.rows[self.row][self.col:]
            del self.rows[self.row + 1:]

    def lines(self):
        out = ["".join(r).rstrip() for r in self.rows]
        while out and not out[-1]:
            out.pop()
        return out


def wrapped(text, columns):
    """The rows `text` (lines ending in \\n) fills on a terminal."""
    rows = []
    for line in text.splitlines():
        rows += [line[i:i + columns] for i in range(0, max(len(line), 1),
                                                      columns)]
    return rows


def progress_lines(shown):
    """Every progress line drawn: the text between a CR and the ESC [ K
    that ends it."""
    return re.findall(r"\r([^\r\n\x1b]*)\x1b\[K", shown)


def run_in_pty(args, cwd=None, interrupt_when=None, timeout=120,
               columns=COLUMNS, program=None, env=None):
    """Runs ireepkg with stdin, stdout and stderr on a new pseudo-terminal
    of `columns` x ROWS that is its controlling terminal. `interrupt_when`:
    a function that, once it returns true, has Ctrl-C typed (the terminal
    sends SIGINT to the foreground process group). Returns (exit code,
    everything the terminal received). With `program`, runs that with
    `args` as its argv instead; `env` replaces the environment."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ,
                struct.pack("HHHH", ROWS, columns, 0, 0))

    def make_controlling():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    if env is None:
        env = dict(os.environ)
        env.pop("COLUMNS", None)
    argv = [str(a) for a in args] if program else \
        [str(ireepkg_path()), *map(str, args)]
    proc = subprocess.Popen(argv, executable=program, cwd=cwd,
                            env=env, stdin=slave, stdout=slave, stderr=slave,
                            preexec_fn=make_controlling, close_fds=True)
    os.close(slave)
    data = b""
    deadline = time.monotonic() + timeout
    typed = False
    try:
        while time.monotonic() < deadline:
            if interrupt_when and not typed and interrupt_when():
                os.write(master, b"\x03")
                typed = True
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer closed the terminal
                    break
                if not chunk:
                    break
                data += chunk
            elif proc.poll() is not None:
                # Drain what is left, then stop.
                while select.select([master], [], [], 0.1)[0]:
                    try:
                        chunk = os.read(master, 65536)
                    except OSError:
                        chunk = b""
                    if not chunk:
                        break
                    data += chunk
                break
        code = proc.wait(timeout=max(1, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    if interrupt_when:
        assert typed, "the condition for Ctrl-C never came true"
    return code, data.decode()


SUMMARY = (r"Downloaded 4 packages \(\d+\.\d KiB\) in (\d+ms|\d+\.\d\ds)\n"
           r"Installed 4 packages in (\d+ms|\d+\.\d\ds)\n")


def expected_changes(project):
    return "".join(f"installed {n} 1.0.0\n" for n in NAMES) + \
        f"prefix: {project / '.iree-plugins'}\n"


def test_progress_on_a_narrow_terminal(tmp_path, reg):
    with fault_server(reg.dir) as url:
        d = http_project(tmp_path, url, reg, [{"name": n} for n in NAMES])
        assert run("lock", cwd=d).code == 0
        # About a second per archive, four at once.
        url.set_faults({"/archives/": ["rate-160"]})
        code, shown = run_in_pty(["sync"], cwd=d)
    assert code == 0, shown
    # The progress lines were drawn, redrawn in place many times, and
    # each fits in the terminal.
    drawn = progress_lines(shown)
    assert any(p.startswith("Downloading ") for p in drawn), drawn
    assert any("slow-package" in p for p in drawn), drawn
    assert max(len(p) for p in drawn) <= COLUMNS - 1, drawn
    screen = Screen(COLUMNS)
    screen.feed(shown)
    assert screen.draws >= 3, shown
    # Now the screen holds what sync printed and its summary, no more.
    lines = screen.lines()
    assert lines[:-2] == wrapped(expected_changes(d), COLUMNS), lines
    assert re.fullmatch(SUMMARY, "\n".join(lines[-2:]) + "\n"), lines
    assert set(installed(d / ".iree-plugins")) == set(NAMES)


def test_a_long_label_is_cut_to_the_width(tmp_path, reg):
    # A 30-column terminal: even the per-download lines are cut, with "…".
    with fault_server(reg.dir) as url:
        url.set_faults({"/archives/": ["rate-160"]})
        code, shown = run_in_pty(
            ["install", NAMES[0], "--registry", url, "--registry-key",
             reg.pub, "--prefix", tmp_path / "p", "--iree-version", "3.13.0"],
            columns=30)
    assert code == 0, shown
    drawn = progress_lines(shown)
    assert max(len(p) for p in drawn) <= 29, drawn
    assert any(p.endswith("\u2026") for p in drawn), drawn
    screen = Screen(30)
    screen.feed(shown)
    lines = screen.lines()
    printed = wrapped(f"installed {NAMES[0]} 1.0.0\nprefix: {tmp_path / 'p'}\n",
                      30)
    assert lines[:len(printed)] == printed, lines
    # The summary's two lines, wrapped (each row but the last full).
    rest = ["".join(r) for r in screen.rows[len(printed):]]
    assert re.fullmatch(
        r"Downloaded 1 package \(\d+\.\d KiB\) in (\d+ms|\d+\.\d\ds)"
        r"Installed 1 package in (\d+ms|\d+\.\d\ds)", "".join(rest)), lines


def test_piped_only_the_summary(tmp_path, reg):
    with fault_server(reg.dir) as url:
        d = http_project(tmp_path, url, reg, [{"name": n} for n in NAMES])
        assert run("lock", cwd=d).code == 0
        url.set_faults({"/archives/": ["rate-640"]})
        r = run("sync", cwd=d)
    assert r.code == 0, r
    assert r.out == expected_changes(d)
    assert re.fullmatch(SUMMARY, r.err), r.err
    # Nothing to do: nothing downloaded or installed, so no summary.
    r = run("sync", cwd=d)
    assert r.code == 0, r
    assert r.err == ""
    # --quiet: no summary either.
    (d / ".iree-plugins").rename(tmp_path / "old-prefix")
    r = run("sync", "--quiet", cwd=d)
    assert (r.code, r.out, r.err) == (0, "", "")


def parts_in(cache):
    return sorted(str(p) for p in cache.rglob("*.part-*"))


def prepared_project(tmp_path, url, reg):
    """A project whose prefix holds `base`; its plugins.json then asks for
    the slow packages too, locked, so that the next sync downloads them."""
    d = http_project(tmp_path, url, reg, [{"name": "base"}])
    r = run("sync", cwd=d)
    assert r.code == 0, r
    d = http_project(tmp_path, url, reg,
                     [{"name": "base"}] + [{"name": n} for n in NAMES])
    assert run("lock", cwd=d).code == 0
    return d


def assert_unchanged(prefix, before, cache):
    assert snapshot(prefix) == before
    r = run("verify", "--prefix", prefix)
    assert r.code == 0, r
    assert set(installed(prefix)) == {"base"}
    assert parts_in(cache) == []


def test_ctrl_c_in_a_terminal_stops_sync(tmp_path, reg):
    cache = tmp_path / "cache"
    with fault_server(reg.dir) as url:
        d = prepared_project(tmp_path, url, reg)
        prefix = d / ".iree-plugins"
        before = snapshot(prefix)
        # Slow enough never to finish: Ctrl-C once downloads are under way.
        url.set_faults({"/archives/": ["rate-4"]})
        started = time.monotonic()
        code, shown = run_in_pty(
            ["sync"], cwd=d,
            interrupt_when=lambda: len(parts_in(cache)) == len(NAMES))
        assert time.monotonic() - started < 30
    assert code == 130, shown
    screen = Screen(COLUMNS)
    screen.feed(shown)
    assert max(len(p) for p in progress_lines(shown)) <= COLUMNS - 1
    # The terminal's echo of ^C went with the progress lines: only the
    # message is left on the screen.
    message = f"ireepkg: interrupted: nothing was changed in {prefix}\n"
    assert screen.lines() == wrapped(message, COLUMNS), screen.lines()
    assert_unchanged(prefix, before, cache)


@pytest.mark.parametrize("command", ["sync", "install"])
def test_sigint_to_the_process_group_stops_the_command(tmp_path, reg,
                                                        command):
    cache = tmp_path / "cache"
    with fault_server(reg.dir) as url:
        d = prepared_project(tmp_path, url, reg)
        prefix = d / ".iree-plugins"
        before = snapshot(prefix)
        url.set_faults({"/archives/": ["rate-4"]})
        args = ["sync"] if command == "sync" else \
            ["install", *NAMES, "--iree-version", "3.13.0"]
        proc = subprocess.Popen([str(ireepkg_path()), *args], cwd=d,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            for _ in range(200):
                if len(parts_in(cache)) == len(NAMES):
                    break
                time.sleep(0.05)
            assert len(parts_in(cache)) == len(NAMES)
            os.killpg(proc.pid, signal.SIGINT)
            out, err = proc.communicate(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 130, (out, err)
        assert out == ""
        assert err == f"ireepkg: interrupted: nothing was changed in {prefix}\n"
        assert_unchanged(prefix, before, cache)
        # The next run downloads and installs everything.
        url.set_faults({})
        r = run(*args, cwd=d)
        assert r.code == 0, r
        assert set(installed(prefix)) == {"base", *NAMES}
        assert parts_in(cache) == []


def test_summary_of_a_directory_registry(tmp_path, reg):
    # Archives copied from a directory registry count as downloaded, with
    # their sizes.
    d = project(tmp_path, reg, [{"name": n} for n in NAMES[:2]])
    r = run("sync", "--iree-version", "3.13.0", cwd=d)
    assert r.code == 0, r
    m = re.fullmatch(r"Downloaded 2 packages \((\d+\.\d) KiB\) in \S+\n"
                     r"Installed 2 packages in \S+\n", r.err)
    assert m, r.err
    assert float(m.group(1)) > 2 * SIZE / 1024


def test_ctrl_c_while_installing_rolls_back(tmp_path, reg):
    """Ctrl-C after a package was staged, before the commit: the transaction
    is rolled back. (IREEPKG_FAULT=package-staged:stop stops the process
    there; SIGINT is delivered when it continues.)"""
    prefix = tmp_path / "prefix"
    r = run("install", reg.dist / "base-1.0.0.ireepkg", "--prefix", prefix,
            "--iree-version", "3.13.0")
    assert r.code == 0, r
    before = snapshot(prefix)
    archives = [reg.dist / f"{n}-1.0.0.ireepkg" for n in NAMES]
    env = dict(os.environ, IREEPKG_FAULT="package-staged:stop")
    proc = subprocess.Popen(
        [str(ireepkg_path()), "install", *archives, "--prefix", prefix,
         "--iree-version", "3.13.0"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(400):
            state = pathlib.Path(f"/proc/{proc.pid}/stat").read_text()
            if state.rsplit(")", 1)[1].split()[0] == "T":
                break
            time.sleep(0.05)
        else:
            pytest.fail("the install never reached package-staged")
        # Staged, not committed.
        assert list((prefix / ".staging").iterdir())
        os.kill(proc.pid, signal.SIGINT)
        os.kill(proc.pid, signal.SIGCONT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, out, err) == (
        130, "", f"ireepkg: interrupted: nothing was changed in {prefix}\n")
    assert snapshot(prefix) == before
    r = run("verify", "--prefix", prefix)
    assert r.code == 0, r


@pytest.mark.parametrize("command", ["sync", "add"])
def test_sigint_during_a_metadata_fetch_stops_at_once(tmp_path, reg,
                                                      monkeypatch, command):
    """Ctrl-C while the registry's snapshot is being fetched from a server
    that takes a minute to answer: the command stops within seconds, not
    when the answer comes; the project and its prefix are as they were."""
    with fault_server(reg.dir) as url:
        d = http_project(tmp_path, url, reg, [{"name": "base"}])
        assert run("sync", cwd=d).code == 0
        # An empty cache: the snapshot must be fetched again.
        monkeypatch.setenv("IREEPKG_CACHE_DIR", str(tmp_path / "cache2"))
        before = snapshot(d)
        url.reset()
        url.set_faults({"/snapshot.json": ["delay-60000"]})
        args = ["sync"] if command == "sync" else ["add", NAMES[0]]
        proc = subprocess.Popen([str(ireepkg_path()), *args], cwd=d,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            for _ in range(400):
                if any(r["path"].endswith("snapshot.json") and
                       r["status"] is None for r in url.log(settle=0)):
                    break
                time.sleep(0.05)
            else:
                pytest.fail("the snapshot was never asked for")
            started = time.monotonic()
            os.killpg(proc.pid, signal.SIGINT)
            out, err = proc.communicate(timeout=20)
            took = time.monotonic() - started
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 130, (out, err)
    assert took < 3, took
    where = d / ".iree-plugins" if command == "sync" else d
    assert err == f"ireepkg: interrupted: nothing was changed in {where}\n"
    assert snapshot(d) == before
    assert parts_in(tmp_path / "cache2") == []
