"""An OCI registry on loopback for ireepkg's tests: Debian's `docker-registry`
(the CNCF distribution registry, package docker-registry), with filesystem
storage in the test's directory, started and stopped by the test itself.

    with oci_registry(tmp) as reg:                      # no authentication
        reg.url("iree/plugins")   # oci+http://127.0.0.1:<port>/iree/plugins

    with oci_registry(tmp, auth="htpasswd", users={"alice": "pw"}) as reg:
    with oci_registry(tmp, auth="token", users={"alice": "pw"}) as reg:
        reg.token_log             # every token request: scope, user

With auth="token", a token server of the test's own (a thread in the test
process, on 127.0.0.1) issues RS256 JSON Web Tokens, signed with a key and
certificate made with openssl, that docker-registry's `auth: token:`
checks. Anonymous clients get `pull` only; users (HTTP Basic at the token
server, or an OAuth2 refresh token of `refresh_tokens`, {token: user},
POSTed with grant_type=refresh_token) get what they ask for.

With redirect=True, docker-registry answers blob GETs with a redirect to a
second loopback server on another port (its `redirect` storage
middleware): what blob storage behind a CDN does. That server serves the
registry's storage and records the headers of every request it gets
(`reg.redirect_log`).

With https=True, docker-registry serves TLS with a certificate for
127.0.0.1 from a throwaway CA (`reg.ca_file`), and `reg.url()` is oci://.

With proxy=True, the registry is reached through a forwarding proxy of
the test's own on another port (`reg.host` is the proxy's), which records
every request (`reg.proxy_log`, with the Authorization header it
carried) and answers chosen requests itself:
`reg.faults.append({"match": "/manifests/snapshot", "status": 429,
"retry_after": 1, "times": 1})`, or run a function before forwarding
one: `{"match": ..., "method": "PUT", "before": fn}`, or rewrite the
Location of its answer: `{"match": ..., "location": fn}`, or announce a
body it never sends: `{"match": ..., "content_length": 10**15, "hold": 5}`
(headers only, then the connection is held for `hold` seconds).

A missing docker-registry, openssl or htpasswd is an error, never a skip.

For the tests of tests/cli/test_oci_registry.py, pytest fixtures (import
them into the test module):

    isolated     (autouse there) no credentials of the machine's, a cache of
                 the test's own
    keys         a registry signing key pair: keys.key (file), keys.pub
    pk           three packed archives: pk["base-1.0.0"], pk["base-1.1.0"],
                 pk["fft-1.0.0"] (fft-kit depends on base-kernels ^1.0)
    published    a context manager that starts a registry, runs `registry
                 init` and publishes archives of `pk` into it:

        with published("base-1.0.0", "fft-1.0.0", proxy=True) as (reg, url):

                 (keyword arguments go to oci_registry; root= and ns= choose
                 its directory and namespace; login=(user, password) makes
                 that user and logs in: a config.json in $DOCKER_CONFIG)
"""
import base64
import contextlib
import hashlib
import http.client
import http.server
import json
import os
import pathlib
import shutil
import socketserver
import subprocess
import threading
import time
import urllib.parse
import urllib.request

import ssl

import pytest

from conftest import data_package, pack, run
from netfix import START_TIMEOUT, _stop, free_port, make_ca
from regfix import write_project

MANIFEST = "application/vnd.oci.image.manifest.v1+json"

DOCKER_REGISTRY = os.environ.get("IREEPKG_DOCKER_REGISTRY",
                                 "/usr/bin/docker-registry")
OPENSSL = os.environ.get("IREEPKG_OPENSSL", "openssl")


def need(program):
    path = shutil.which(program)
    if not path:
        raise RuntimeError(f"{program} is missing: run scripts/setup.sh "
                           "(Debian packages docker-registry, apache2-utils, "
                           "openssl)")
    return path


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class _Threaded(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


@contextlib.contextmanager
def _serve(handler_cls):
    server = _Threaded(("127.0.0.1", 0), handler_cls)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        t.join(timeout=10)


class Registry:
    def __init__(self, root, port):
        self.root = root
        self.port = port
        self.host = f"127.0.0.1:{port}"
        self.token_log = []
        self.redirect_log = []
        self.proxy_log = []
        self.faults = []
        self.proc = None

    https = False
    ca_file = None

    def url(self, ns="iree/plugins"):
        scheme = "oci" if self.https else "oci+http"
        return f"{scheme}://{self.host}/{ns}"

    def http(self, path):
        return f"{'https' if self.https else 'http'}://{self.host}{path}"

    def log(self):
        return (self.root / "registry.log").read_text(errors="replace")


def _token_handler(reg, key_pem, cert_der, service, issuer, users,
                   refresh_tokens):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            # OAuth2: grant_type=refresh_token with an identity token.
            n = int(self.headers.get("Content-Length") or 0)
            form = urllib.parse.parse_qs(self.rfile.read(n).decode())
            user = refresh_tokens.get(form.get("refresh_token", [""])[0])
            if form.get("grant_type") != ["refresh_token"] or user is None:
                reg.token_log.append({"scope": form.get("scope"),
                                      "user": None, "denied": True,
                                      "grant": "refresh_token"})
                self.send_response(401)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            scopes = form.get("scope", [""])[0].split(" ")
            self._issue(user, scopes, form.get("service"), "refresh_token",
                        "access_token")

        def do_GET(self):
            q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
            user = None
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Basic "):
                u, _, p = base64.b64decode(auth[6:]).decode().partition(":")
                if users.get(u) != p:
                    reg.token_log.append({"scope": q.get("scope"),
                                          "user": u, "denied": True})
                    self.send_response(401)
                    self.end_headers()
                    return
                user = u
            self._issue(user, q.get("scope", []), q.get("service"), "basic"
                        if user else "anonymous", "token")

        def _issue(self, user, scopes, service_param, grant, field):
            access = []
            for scope in scopes:
                kind, name, actions = scope.split(":")
                wanted = actions.split(",")
                granted = wanted if user else [a for a in wanted if a == "pull"]
                access.append({"type": kind, "name": name,
                               "actions": granted})
            reg.token_log.append({"scope": scopes, "user": user,
                                  "service": service_param, "grant": grant})
            now = int(time.time())
            header = {"typ": "JWT", "alg": "RS256",
                      "x5c": [base64.b64encode(cert_der).decode()]}
            claims = {"iss": issuer, "sub": user or "", "aud": service,
                      "exp": now + 300, "nbf": now - 10, "iat": now,
                      "jti": os.urandom(8).hex(), "access": access}
            signing_input = (b64url(json.dumps(header).encode()) + "." +
                             b64url(json.dumps(claims).encode()))
            sig = subprocess.run(
                [OPENSSL, "dgst", "-sha256", "-sign", str(key_pem)],
                input=signing_input.encode(), capture_output=True,
                check=True, timeout=30).stdout
            token = signing_input + "." + b64url(sig)
            body = json.dumps({field: token, "expires_in": 300}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    return Handler


def _redirect_handler(reg, storage):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            reg.redirect_log.append({"path": self.path,
                                     "headers": dict(self.headers)})
            path = urllib.parse.urlparse(self.path).path
            f = storage / path.lstrip("/")
            if ".." in path or not f.is_file():
                self.send_response(404)
                self.end_headers()
                return
            data = f.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
    return Handler


def _proxy_handler(reg, upstream_port):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def _any(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
            auth = self.headers.get("Authorization")
            rewrite = None
            for f in reg.faults:
                if f["match"] in self.path and f.get("times", 1) > 0 and \
                        f.get("method", self.command) == self.command:
                    f["times"] = f.get("times", 1) - 1
                    if "before" in f:
                        f["before"]()  # then forwarded as usual
                        continue
                    if "location" in f:
                        rewrite = f["location"]  # forwarded, then rewritten
                        continue
                    if "content_length" in f:
                        reg.proxy_log.append({"method": self.command,
                                              "path": self.path,
                                              "status": 200,
                                              "authorization": auth})
                        self.send_response(200)
                        self.send_header("Content-Length",
                                         str(f["content_length"]))
                        self.end_headers()
                        self.wfile.flush()
                        time.sleep(f.get("hold", 5))
                        self.close_connection = True
                        return
                    reg.proxy_log.append({"method": self.command,
                                          "path": self.path,
                                          "status": f["status"],
                                          "authorization": auth})
                    self.send_response(f["status"])
                    if "retry_after" in f:
                        self.send_header("Retry-After", str(f["retry_after"]))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
            conn = http.client.HTTPConnection("127.0.0.1", upstream_port,
                                              timeout=60)
            headers = {k: v for k, v in self.headers.items()
                       if k.lower() not in ("connection", "content-length")}
            conn.request(self.command, self.path, body=body or None,
                         headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            reg.proxy_log.append({"method": self.command, "path": self.path,
                                  "status": resp.status,
                                  "authorization": auth})
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() == "location" and rewrite:
                    v = rewrite(v)
                if k.lower() not in ("connection", "content-length",
                                     "transfer-encoding"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            conn.close()

        do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = _any
    return Handler


@contextlib.contextmanager
def oci_registry(root, auth=None, users=None, redirect=False, proxy=False,
                 https=False, refresh_tokens=None):
    root = pathlib.Path(root)
    root.mkdir(parents=True, exist_ok=True)
    exe = need(DOCKER_REGISTRY)
    users = users or {}
    port = free_port()
    reg = Registry(root, port)
    storage = root / "storage"
    storage.mkdir(exist_ok=True)
    config = [
        "version: 0.1",
        "log:",
        "  level: info",
        "  accesslog:",
        "    disabled: true",
        "storage:",
        "  filesystem:",
        f"    rootdirectory: {storage}",
        "  delete:",
        "    enabled: true",
        "http:",
        f"  addr: 127.0.0.1:{port}",
        f"  secret: {os.urandom(16).hex()}",
    ]
    with contextlib.ExitStack() as stack:
        if redirect:
            target = stack.enter_context(
                _serve(_redirect_handler(reg, storage)))
            config += ["middleware:", "  storage:", "    - name: redirect",
                       "      options:",
                       f"        baseurl: http://127.0.0.1:"
                       f"{target.server_address[1]}/"]
        if auth == "htpasswd":
            htpasswd = need("htpasswd")
            lines = []
            for u, p in users.items():
                out = subprocess.run([htpasswd, "-Bbn", u, p],
                                     capture_output=True, text=True,
                                     check=True, timeout=60).stdout
                lines.append(out.strip())
            (root / "htpasswd").write_text("\n".join(lines) + "\n")
            config += ["auth:", "  htpasswd:", "    realm: ireepkg-test",
                       f"    path: {root / 'htpasswd'}"]
        elif auth == "token":
            openssl = need(OPENSSL)
            key, cert = root / "token.key", root / "token.crt"
            subprocess.run(
                [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                 "-keyout", key, "-out", cert, "-days", "2",
                 "-subj", "/CN=ireepkg-test-token-issuer"],
                capture_output=True, check=True, timeout=120)
            der = subprocess.run(
                [openssl, "x509", "-in", cert, "-outform", "DER"],
                capture_output=True, check=True, timeout=60).stdout
            server = stack.enter_context(_serve(_token_handler(
                reg, key, der, "ireepkg-test", "ireepkg-test-issuer", users,
                refresh_tokens or {})))
            reg.realm = f"http://127.0.0.1:{server.server_address[1]}/token"
            config += ["auth:", "  token:", f"    realm: {reg.realm}",
                       "    service: ireepkg-test",
                       "    issuer: ireepkg-test-issuer",
                       f"    rootcertbundle: {cert}"]
        if https:
            certs = make_ca(root / "tls")
            reg.https = True
            reg.ca_file = certs.ca
            at = config.index("http:") + 1
            config[at:at] = ["  tls:", f"    certificate: {certs.cert}",
                             f"    key: {certs.key}"]
        (root / "config.yml").write_text("\n".join(config) + "\n")
        logf = open(root / "registry.log", "wb")
        stack.callback(logf.close)
        proc = subprocess.Popen([exe, "serve", str(root / "config.yml")],
                                stdout=logf, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        reg.proc = proc
        stack.callback(_stop, proc)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise RuntimeError("docker-registry exited at start:\n" +
                                   reg.log())
            try:
                ctx = (ssl.create_default_context(cafile=str(reg.ca_file))
                       if https else None)
                urllib.request.urlopen(reg.http("/v2/"), timeout=2,
                                       context=ctx)
                break
            except urllib.error.HTTPError:
                break  # 401: up, and asking for credentials
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("docker-registry did not answer in "
                                       f"{START_TIMEOUT} s:\n" + reg.log())
                time.sleep(0.05)
        if proxy:
            front = stack.enter_context(_serve(_proxy_handler(reg, port)))
            reg.host = f"127.0.0.1:{front.server_address[1]}"
        yield reg


@contextlib.contextmanager
def forwarder(root, port):
    """Another way to the registry on `port`, on another port of 127.0.0.1:
    a forwarding proxy that records every request (`.proxy_log`, `.host`)
    as the one of proxy=True does."""
    rec = Registry(pathlib.Path(root), port)
    with _serve(_proxy_handler(rec, port)) as server:
        rec.host = f"127.0.0.1:{server.server_address[1]}"
        yield rec


def docker_config(directory, host, user, password, helper=None,
                  store=False):
    """A ~/.docker/config.json for `host`, in `directory` (for
    DOCKER_CONFIG): with `auths`, or with a credHelpers entry (with store,
    credsStore) naming a helper script written beside it."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if helper:
        script = directory / "bin" / f"docker-credential-{helper}"
        script.parent.mkdir(exist_ok=True)
        script.write_text(
            "#!/bin/sh\n"
            "read host\n"
            f"if [ \"$1\" = get ] && [ \"$host\" = \"{host}\" ]; then\n"
            f"  printf '{{\"ServerURL\":\"%s\",\"Username\":\"{user}\","
            f"\"Secret\":\"{password}\"}}\\n' \"$host\"\n"
            "  exit 0\n"
            "fi\n"
            "echo 'credentials not found in native keychain'\n"
            "exit 1\n")
        script.chmod(0o755)
        cfg = ({"credsStore": helper} if store
               else {"credHelpers": {host: helper}})
    else:
        cfg = {"auths": {host: {"auth": base64.b64encode(
            f"{user}:{password}".encode()).decode()}}}
    (directory / "config.json").write_text(json.dumps(cfg, indent=2))
    return directory


def sha256_file(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


# --- helpers and fixtures of the OCI tests ----------------------------------

def ok(*args, **kw):
    r = run(*args, **kw)
    assert r.code == 0, r
    return r


def get(reg, path, accept=MANIFEST, token=None):
    req = urllib.request.Request(reg.http(path), headers={"Accept": accept})
    if token:
        req.add_header("Authorization", token)
    with urllib.request.urlopen(req, timeout=30) as f:
        return f.read()


def put_manifest(reg, repo, tag, body):
    req = urllib.request.Request(
        reg.http(f"/v2/{repo}/manifests/{tag}"), data=body, method="PUT",
        headers={"Content-Type": MANIFEST})
    with urllib.request.urlopen(req, timeout=30) as f:
        assert f.status == 201


def project(tmp, url, pub, plugins, mirrors=None, name="proj"):
    reg = {"name": "oci", "url": url, "public_key": pub}
    if mirrors:
        reg["mirrors"] = mirrors
    return write_project(tmp / name, reg, plugins)


class Keys:
    def __init__(self, tmp):
        base = tmp / "keys" / "registry"
        base.parent.mkdir(parents=True, exist_ok=True)
        r = run("key", "generate", "-o", base)
        assert r.code == 0, r
        self.key = pathlib.Path(str(base) + ".key")
        self.pub = pathlib.Path(str(base) + ".pub").read_text().splitlines()[1]


def packages(tmp):
    src, dist = tmp / "src", tmp / "dist"
    return {
        "base-1.0.0": pack(data_package(src, "base-kernels", "1.0.0"), dist),
        "base-1.1.0": pack(data_package(src, "base-kernels", "1.1.0"), dist),
        "fft-1.0.0": pack(data_package(src, "fft-kit", "1.0.0",
                                       {"base-kernels": "^1.0"}), dist),
    }


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No credentials of the machine's; a cache of the test's own."""
    monkeypatch.setenv("IREEPKG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "no-docker-config"))
    monkeypatch.delenv("REGISTRY_AUTH_FILE", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)


@pytest.fixture
def keys(tmp_path):
    return Keys(tmp_path)


@pytest.fixture
def pk(tmp_path):
    return packages(tmp_path)


@pytest.fixture
def published(tmp_path, monkeypatch, keys, pk):
    @contextlib.contextmanager
    def start(*archives, root=None, ns=None, login=None, **options):
        if login:
            options.setdefault("users", {})[login[0]] = login[1]
        with oci_registry(root or tmp_path / "oci", **options) as reg:
            url = reg.url(ns) if ns else reg.url()
            if login:
                monkeypatch.setenv("DOCKER_CONFIG", str(docker_config(
                    tmp_path / "docker", reg.host, *login)))
            ok("registry", "init", url, "--key", keys.key)
            if archives:
                ok("publish", *[pk[a] for a in archives], "--registry", url,
                   "--key", keys.key)
            yield reg, url
    return start
