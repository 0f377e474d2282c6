"""Loopback servers for ireepkg's network tests and benchmarks.

Context managers (each starts its own server process on 127.0.0.1, waits,
bounded, until it answers, and stops it by its process id on exit):

    with fault_server(root) as url:        # http://127.0.0.1:<port>
        ...                                # url.log(), url.set_faults(...)

    with nginx_server(root, https=True) as (url, ca_file):
        ...                                # https://127.0.0.1:<port>

`fault_server` is tests/net/fault_server.py: it serves `root` and misbehaves
on request (see the fault segments in its docstring: /truncate/a.bin,
/fail-2/a.bin, /delay-300/a.bin, ...). The URL it yields is a `str` with
helpers to read its request log and attach faults to paths.

`nginx_server` runs the Debian nginx (package nginx-light) with the
configuration tests/net/nginx.conf.in; with https=True it also makes a
throwaway certificate authority and a certificate for 127.0.0.1 and
localhost, and yields the CA's PEM file to trust. A missing nginx or
openssl is an error, never a skip.

Also: `make_ca(dir)` (the certificates alone), `free_port()`, and the
pytest fixtures `fault_server_url` and `nginx_https` (each serving a fresh
`tmp_path / "www"`).
"""
import contextlib
import json
import os
import pathlib
import selectors
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import NamedTuple

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
NET = REPO / "tests" / "net"
FAULT_SERVER = NET / "fault_server.py"
NGINX_CONF_IN = NET / "nginx.conf.in"
NGINX = os.environ.get("IREEPKG_NGINX", "/usr/sbin/nginx")
OPENSSL = os.environ.get("IREEPKG_OPENSSL", "openssl")

# Bounds on waiting for a server to come up and to go away.
START_TIMEOUT = 15.0
STOP_TIMEOUT = 10.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen):
    """Stops one process we started, by its pid: SIGTERM, then SIGKILL."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=STOP_TIMEOUT)
    for f in (proc.stdin, proc.stdout, proc.stderr):
        if f:
            f.close()


# --- the fault server ---------------------------------------------------------

class FaultServerURL(str):
    """The fault server's base URL, plus access to its control URLs."""

    pid: int
    port: int

    def _control(self, path, payload=None):
        data = None if payload is None else json.dumps(payload).encode()
        req = urllib.request.Request(str(self) + path, data=data,
                                     method="GET" if data is None else "POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def log(self, settle: float = 5.0, path: str | None = None) -> list:
        """Every request answered so far (see fault_server.py), or those
        whose request path is `path`. The server logs a request's end just
        after the client may have read its last byte, so this waits (up to
        `settle` seconds) until none of them is still in flight; 0 reads the
        log as it is."""
        deadline = time.monotonic() + settle
        while True:
            entries = [e for e in self._control("/_control/log")["requests"]
                       if path is None or e["path"] == path]
            if all(e["end"] is not None for e in entries) or \
                    time.monotonic() >= deadline:
                return entries
            time.sleep(0.02)

    def requests_for(self, path: str) -> list:
        """The log entries whose request path (with any fault segments and
        query) is exactly `path`, once they are answered."""
        return self.log(path=path)

    def max_in_flight(self) -> int:
        """The most requests it was answering at once."""
        return self._control("/_control/log")["max_in_flight"]

    def set_faults(self, table: dict):
        """{"/path/prefix": ["truncate", ...]}: faults for requests to files
        under these paths, whatever URL they came through."""
        self._control("/_control/faults", table)

    def reset(self):
        """Forgets the log, the fail-N counters and the fault table."""
        self._control("/_control/reset", {})


@contextlib.contextmanager
def fault_server(root, verbose=False):
    """Serves directory `root` with tests/net/fault_server.py; yields its
    base URL (a FaultServerURL)."""
    cmd = [sys.executable, str(FAULT_SERVER), "--root", str(root),
           "--watch-stdin"]
    if verbose:
        cmd.append("--verbose")
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        port = None
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + START_TIMEOUT
        while port is None and time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            if sel.select(timeout=0.2):
                line = proc.stdout.readline().decode().strip()
                if line.isdigit():
                    port = int(line)
                elif not line:
                    break
        sel.close()
        if port is None:
            raise RuntimeError(
                f"the fault server ({FAULT_SERVER}) did not report its port "
                f"within {START_TIMEOUT} s (exit status {proc.poll()})")
        url = FaultServerURL(f"http://127.0.0.1:{port}")
        url.pid = proc.pid
        url.port = port
        yield url
    finally:
        _stop(proc)


# --- certificates ---------------------------------------------------------------

class Certificates(NamedTuple):
    ca: pathlib.Path       # the CA's certificate (PEM), to trust
    cert: pathlib.Path     # the server's certificate, signed by the CA
    key: pathlib.Path      # the server's private key


def make_ca(directory) -> Certificates:
    """A throwaway certificate authority and a server certificate for
    127.0.0.1 and localhost (subjectAltName), made with the openssl tool."""
    d = pathlib.Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    if not shutil.which(OPENSSL):
        raise RuntimeError(f"'{OPENSSL}' not found; install the Debian "
                           "package openssl (scripts/setup.sh does)")

    def openssl(*args):
        r = subprocess.run([OPENSSL, *map(str, args)], cwd=d,
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"openssl {' '.join(map(str, args))} failed:\n"
                               f"{r.stderr}")

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
          "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem",
            "-days", "2", "-subj", "/CN=ireepkg test CA",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr",
            "-subj", "/CN=127.0.0.1")
    (d / "server.ext").write_text(
        "subjectAltName = IP:127.0.0.1, DNS:localhost\n"
        "basicConstraints = CA:FALSE\n"
        "keyUsage = critical, digitalSignature\n"
        "extendedKeyUsage = serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem",
            "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
            "-out", "server.pem", "-extfile", "server.ext")
    return Certificates(d / "ca.pem", d / "server.pem", d / "server.key")


# --- nginx --------------------------------------------------------------------

class NginxServer(tuple):
    """Unpacks as (url, ca_file); also knows where nginx keeps its files
    (`dir`: configuration, logs, certificates)."""

    def __new__(cls, url: str, ca_file: str | None, dir: pathlib.Path):
        self = super().__new__(cls, (url, ca_file))
        self.dir = dir
        return self

    @property
    def url(self) -> str:
        return self[0]

    @property
    def ca_file(self) -> str | None:
        return self[1]

    def access_log(self) -> list:
        """Requests so far: [{"method", "uri", "status", "bytes",
        "if_none_match"}] (nginx writes a line when a request ends)."""
        out = []
        log = self.dir / "access.log"
        if not log.exists():
            return out
        for line in log.read_text().splitlines():
            head, _, inm = line.partition(' "')
            method, uri, status, size = head.split(" ")
            inm = inm.rstrip('"')
            out.append({"method": method, "uri": uri, "status": int(status),
                        "bytes": int(size),
                        "if_none_match": None if inm in ("", "-") else inm})
        return out


def _user_directive() -> str:
    # Run as root, nginx would switch its worker to 'nobody', which cannot
    # read the test's private temporary directories.
    if os.geteuid() != 0:
        return ""
    import grp
    import pwd
    return (f"user {pwd.getpwuid(os.geteuid()).pw_name} "
            f"{grp.getgrgid(os.getegid()).gr_name};")


def _answers(url: str, ca_file) -> bool:
    ctx = None
    if url.startswith("https:"):
        ctx = ssl.create_default_context(cafile=str(ca_file))
    try:
        urllib.request.urlopen(url + "/", timeout=1, context=ctx).close()
        return True
    except urllib.error.HTTPError:
        return True  # it answered (403 or 404 for the directory)
    except (OSError, urllib.error.URLError):
        return False


@contextlib.contextmanager
def nginx_server(root, https=False, limit_rate=0):
    """Serves directory `root` with nginx on 127.0.0.1; yields an
    NginxServer (url, ca_file): an http:// URL and None, or with https=True
    an https:// URL and the PEM file of the CA that signed its certificate.
    `limit_rate`: bytes per second per connection (0: unlimited)."""
    if not (os.path.isfile(NGINX) and os.access(NGINX, os.X_OK)):
        raise RuntimeError(f"nginx not found at {NGINX}; install the Debian "
                           "package nginx-light (scripts/setup.sh does), or "
                           "set IREEPKG_NGINX")
    d = pathlib.Path(tempfile.mkdtemp(prefix="ireepkg-nginx-"))
    proc = None
    try:
        certs = make_ca(d / "certs") if https else None
        for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (d / "tmp" / sub).mkdir(parents=True)
        template = NGINX_CONF_IN.read_text()
        if https:
            template = template.replace("#https# ", "")
        errors = []
        for _ in range(3):  # a port taken in between: try other ones
            http_port, https_port = free_port(), free_port()
            conf = (template
                    .replace("@USER_DIRECTIVE@", _user_directive())
                    .replace("@DIR@", str(d))
                    .replace("@ROOT@", str(pathlib.Path(root).resolve()))
                    .replace("@HTTP_PORT@", str(http_port))
                    .replace("@HTTPS_PORT@", str(https_port))
                    .replace("@CERT@", str(certs.cert) if certs else "")
                    .replace("@KEY@", str(certs.key) if certs else "")
                    .replace("@LIMIT_RATE@", str(int(limit_rate))))
            (d / "nginx.conf").write_text(conf)
            url = (f"https://127.0.0.1:{https_port}" if https
                   else f"http://127.0.0.1:{http_port}")
            proc = subprocess.Popen(
                [NGINX, "-e", str(d / "error.log"), "-c", str(d / "nginx.conf"),
                 "-p", str(d) + "/"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE)
            deadline = time.monotonic() + START_TIMEOUT
            while proc.poll() is None and time.monotonic() < deadline:
                if _answers(url, certs.ca if certs else None):
                    yield NginxServer(url, str(certs.ca) if certs else None, d)
                    return
                time.sleep(0.05)
            _stop(proc)
            log = d / "error.log"
            errors.append(log.read_text() if log.exists() else
                          f"exit status {proc.returncode}")
            proc = None
        raise RuntimeError("nginx did not start on 127.0.0.1:\n" +
                           "\n".join(errors))
    finally:
        if proc is not None:
            _stop(proc)
        shutil.rmtree(d, ignore_errors=True)


# --- pytest fixtures ------------------------------------------------------------

@pytest.fixture
def fault_server_url(tmp_path):
    """A fault server over a fresh tmp_path / "www"; yields (url, www)."""
    www = tmp_path / "www"
    www.mkdir()
    with fault_server(www) as url:
        yield url, www


@pytest.fixture
def nginx_https(tmp_path):
    """nginx over HTTPS over a fresh tmp_path / "www"; yields
    (NginxServer, www)."""
    www = tmp_path / "www"
    www.mkdir()
    with nginx_server(www, https=True) as server:
        yield server, www
