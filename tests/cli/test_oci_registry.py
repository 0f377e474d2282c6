"""Registries kept in an OCI registry (oci:// and oci+http:// URLs), against
Debian's docker-registry (the CNCF distribution registry) on loopback,
through the CLI: registry init, publish, yank and resign straight into it;
install by name, lock, sync, search, outdated and registry verify from it;
the layout and media types docs/registries.md promises; the same refusals
as any registry (a wrong key, rollback, an archive changed in storage);
Bearer-token and Basic authentication with credentials from
~/.docker/config.json, $REGISTRY_AUTH_FILE and credential helpers; blob
redirects that must not carry the registry's Authorization header; and
interoperability with a general OCI client (the `oras` Python SDK) both
ways; `registry mirror` (a static copy that bundles the same as the OCI
registry); Docker Hub's legacy credential key; the snapshot's signature as
an OCI 1.1 referrer (the fallback tag scheme: docker-registry 2.8 has no
referrers API). The repeated set-up is ocifix.py's fixtures."""
import base64
import hashlib
import json
import os
import pathlib
import time
import urllib.error
import urllib.request

import pytest

from conftest import data_package, pack, run
from netfix import free_port
from ocifix import (MANIFEST, Keys, docker_config, forwarder, get, isolated,
                    keys, ok, oci_registry, pk, project, published,
                    put_manifest, sha256_file)
from regfix import installed

pytestmark = pytest.mark.usefixtures("isolated")


def test_publish_install_lock_sync_yank(tmp_path, keys, pk):
    with oci_registry(tmp_path / "oci") as reg:
        url = reg.url()
        r = ok("registry", "init", url, "--key", keys.key)
        assert r.out.startswith(f'created registry "plugins" in {url}\n'), r
        assert "snapshot version 1, expires " in r.out
        # A second init is refused: it would throw the registry away.
        r = run("registry", "init", url, "--key", keys.key)
        assert r.code != 0 and "is already a registry" in r.err, r

        # The three archives go in with one snapshot, version 2.
        r = ok("publish", pk["base-1.0.0"], pk["base-1.1.0"], pk["fft-1.0.0"],
               "--registry", url, "--key", keys.key)
        assert "published fft-kit 1.0.0: archives/fft-kit/fft-kit-1.0.0." \
               "ireepkg" in r.out and "snapshot version 2" in r.out, r
        # The same bytes again change nothing.
        r = ok("publish", pk["fft-1.0.0"], "--registry", url, "--key", keys.key)
        assert "fft-kit 1.0.0 is already published with the same contents; " \
               "nothing changed" in r.out, r

        ok("install", "fft-kit", "--registry", url, "--registry-key",
           keys.pub, "--prefix", tmp_path / "p1")
        got = installed(tmp_path / "p1")
        assert {n: p["version"] for n, p in got.items()} == {
            "base-kernels": "1.1.0", "fft-kit": "1.0.0"}

        d = project(tmp_path, url, keys.pub, [{"name": "fft-kit"}])
        ok("lock", cwd=d)
        lock = json.loads((d / "plugins.lock.json").read_text())
        shas = {p["name"]: p["sha256"] for p in lock["packages"]}
        assert shas == {"base-kernels": sha256_file(pk["base-1.1.0"]),
                        "fft-kit": sha256_file(pk["fft-1.0.0"])}
        assert {p["source"]["registry"] for p in lock["packages"]} == {url}
        ok("sync", "--locked", cwd=d)
        assert set(installed(d / ".iree-plugins")) == {"base-kernels",
                                                      "fft-kit"}
        # Offline, from what was fetched.
        ok("sync", "--locked", "--offline", cwd=d)

        r = ok("registry", "verify", url, "--registry-key", keys.pub,
               "--archives")
        assert "snapshot version 2" in r.out, r
        r = ok("search", "fft", "--registry", url, "--registry-key", keys.pub)
        assert "fft-kit" in r.out, r

        r = ok("yank", "base-kernels@1.1.0", "--registry", url, "--key",
               keys.key)
        assert r.out == "yanked base-kernels 1.1.0, snapshot version 3\n", r
        r = ok("yank", "base-kernels@1.1.0", "--registry", url, "--key",
               keys.key)
        assert "already yanked; nothing changed" in r.out, r
        (d / "plugins.lock.json").unlink()
        ok("lock", cwd=d)
        lock = json.loads((d / "plugins.lock.json").read_text())
        assert {p["name"]: p["version"] for p in lock["packages"]} == {
            "base-kernels": "1.0.0", "fft-kit": "1.0.0"}
        r = ok("registry", "resign", url, "--key", keys.key)
        assert r.out.startswith(f"re-signed {url}: snapshot version 4"), r

        # outdated sees a newer version; a bundle made from the OCI registry
        # installs with the registry gone.
        newer = pack(data_package(tmp_path / "src", "fft-kit", "1.1.0",
                                  {"base-kernels": "^1.0"}), tmp_path / "dist")
        ok("publish", newer, "--registry", url, "--key", keys.key)
        out = json.loads(ok("outdated", "--json", cwd=d).out)
        by = {p["name"]: p for p in out["packages"]}
        assert by["fft-kit"]["locked"] == "1.0.0"
        assert by["fft-kit"]["latest"] == "1.1.0"
        bundle = tmp_path / "vendor.ireebundle"
        assert json.loads(ok("bundle", "create", "-o", bundle, "--json",
                             cwd=d).out)["packages"] == 2
    r = run("sync", "--offline", "--bundle", bundle, cwd=d,
            env={"IREEPKG_CACHE_DIR": str(tmp_path / "cache-other")})
    assert r.code == 0, r


def test_layout_and_media_types(pk, published):
    with published("base-1.0.0", ns="acme/iree") as (reg, url):
        tags = json.loads(get(reg, "/v2/acme/iree/base-kernels/tags/list"))
        assert sorted(tags["tags"]) == ["1.0.0", "index"]
        m = json.loads(get(reg, "/v2/acme/iree/base-kernels/manifests/1.0.0"))
        assert m["mediaType"] == MANIFEST and m["schemaVersion"] == 2
        assert m["artifactType"] == "application/vnd.ireepkg.package.v1"
        assert m["annotations"]["org.opencontainers.image.version"] == "1.0.0"
        assert m["annotations"]["vnd.ireepkg.archive.minisig"].startswith(
            "untrusted comment:")
        [layer] = m["layers"]
        assert layer["mediaType"] == "application/vnd.ireepkg.archive.v1"
        assert layer["digest"] == "sha256:" + sha256_file(pk["base-1.0.0"])
        assert layer["size"] == pk["base-1.0.0"].stat().st_size
        assert layer["annotations"] == {
            "org.opencontainers.image.title": "base-kernels-1.0.0.ireepkg"}
        # ireeplugin.json without downloading the archive: the config blob.
        cfg = m["config"]
        assert cfg["mediaType"] == \
            "application/vnd.ireepkg.plugin-manifest.v1+json"
        plugin = json.loads(get(reg, "/v2/acme/iree/base-kernels/blobs/" +
                                cfg["digest"], accept="*/*"))
        assert plugin["name"] == "base-kernels" and plugin["version"] == "1.0.0"

        s = json.loads(get(reg, "/v2/acme/iree/manifests/snapshot"))
        assert s["artifactType"] == \
            "application/vnd.ireepkg.registry.snapshot.v1+json"
        assert s["config"] == {
            "mediaType": "application/vnd.oci.empty.v1+json",
            "digest": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e"
                      "8310c060f61caaff8a", "size": 2}
        assert [(l["mediaType"], l["annotations"]["org.opencontainers.image."
                                                  "title"])
                for l in s["layers"]] == [
            ("application/vnd.ireepkg.registry.snapshot.v1+json",
             "snapshot.json"),
            ("application/vnd.ireepkg.minisign.v1", "snapshot.json.minisig")]
        snapshot = json.loads(get(reg, "/v2/acme/iree/blobs/" +
                                  s["layers"][0]["digest"], accept="*/*"))
        assert snapshot["version"] == 2
        # The snapshot pins the index by the digest of its blob.
        idx_digest = snapshot["index"]["base-kernels"]
        idx = json.loads(get(reg, "/v2/acme/iree/base-kernels/blobs/" +
                             idx_digest, accept="*/*"))
        assert idx["versions"][0]["sha256"] == sha256_file(pk["base-1.0.0"])
        im = json.loads(get(reg, "/v2/acme/iree/base-kernels/manifests/index"))
        assert im["artifactType"] == \
            "application/vnd.ireepkg.registry.index.v1+json"
        assert im["layers"][0]["digest"] == idx_digest
        c = json.loads(get(reg, "/v2/acme/iree/manifests/config"))
        assert c["artifactType"] == \
            "application/vnd.ireepkg.registry.config.v1+json"


def test_the_client_checks_as_for_any_registry(tmp_path, keys, pk,
                                                published):
    other = Keys(tmp_path / "other")
    with published("base-1.0.0") as (reg, url):
        old = get(reg, "/v2/iree/plugins/manifests/snapshot")
        ok("publish", pk["base-1.1.0"], "--registry", url, "--key", keys.key)

        r = run("install", "base-kernels", "--registry", url,
                "--registry-key", other.pub, "--prefix", tmp_path / "p0")
        assert r.code == 1 and "which is not a key you trust" in r.err, r
        ok("install", "base-kernels", "--registry", url, "--registry-key",
           keys.pub, "--prefix", tmp_path / "p1")
        # An older snapshot put back under the tag: rollback.
        put_manifest(reg, "iree/plugins", "snapshot", old)
        r = run("install", "base-kernels", "--registry", url,
                "--registry-key", keys.pub, "--prefix", tmp_path / "p2")
        assert r.code == 1, r
        assert "rollback: snapshot.json of " + url + " is version 2, older " \
               "than version 3" in r.err, r

    # An archive changed in the registry's storage after publishing.
    with published("fft-1.0.0", "base-1.0.0", root=tmp_path / "oci2") as (
            reg, url):
        sha = sha256_file(pk["base-1.0.0"])
        data = (tmp_path / "oci2" / "storage" / "docker" / "registry" / "v2" /
                "blobs" / "sha256" / sha[:2] / sha / "data")
        raw = bytearray(data.read_bytes())
        raw[-1] ^= 1
        data.write_bytes(bytes(raw))
        r = run("install", "fft-kit", "--registry", url, "--registry-key",
                keys.pub, "--prefix", tmp_path / "p3",
                env={"IREEPKG_CACHE_DIR": str(tmp_path / "cache2")})
        assert r.code == 1, r
        assert "wrong SHA-256" in r.err, r
        assert not (tmp_path / "p3" / "packages" / "base-kernels").exists()


def test_bearer_tokens_anonymous_pull_and_credentials_to_push(
        tmp_path, monkeypatch, keys, pk):
    with oci_registry(tmp_path / "oci", auth="token",
                      users={"ci-bot": "s3cret"}) as reg:
        url = reg.url()
        # No credentials: the token server grants pull only, and pushing is
        # refused with what to do.
        r = run("registry", "init", url, "--key", keys.key)
        assert r.code == 1, r
        assert f"cannot upload sha256:" in r.err and "HTTP 401" in r.err, r
        assert f"no credentials are configured for {reg.host}: log in " \
               f"(`docker login {reg.host}`" in r.err, r
        assert reg.token_log and all(t["user"] is None for t in reg.token_log)

        # ~/.docker/config.json auths (through DOCKER_CONFIG).
        cfg = docker_config(tmp_path / "docker", reg.host, "ci-bot", "s3cret")
        monkeypatch.setenv("DOCKER_CONFIG", str(cfg))
        ok("registry", "init", url, "--key", keys.key)
        ok("publish", pk["base-1.0.0"], "--registry", url, "--key", keys.key)
        assert any(t["user"] == "ci-bot" and t["scope"] ==
                   ["repository:iree/plugins/base-kernels:pull,push"]
                   and t["service"] == ["ireepkg-test"]
                   for t in reg.token_log), reg.token_log

        # Wrong credentials: the token server says no.
        bad = docker_config(tmp_path / "bad", reg.host, "ci-bot", "nope")
        monkeypatch.setenv("DOCKER_CONFIG", str(bad))
        r = run("publish", pk["base-1.1.0"], "--registry", url, "--key",
                keys.key)
        assert r.code == 1, r
        assert "cannot get a token for repository:iree/plugins:pull from " \
               f"{reg.realm}: HTTP 401" in r.err, r
        assert "are not accepted for this" in r.err, r

        # A credential helper named by credHelpers, found on PATH.
        helper = docker_config(tmp_path / "helper", reg.host, "ci-bot",
                               "s3cret", helper="ireepkg-test")
        monkeypatch.setenv("DOCKER_CONFIG", str(helper))
        monkeypatch.setenv("PATH",
                           f"{helper / 'bin'}{os.pathsep}{os.environ['PATH']}")
        ok("publish", pk["base-1.1.0"], "--registry", url, "--key", keys.key)

        # $REGISTRY_AUTH_FILE (podman, skopeo) comes before the docker one.
        monkeypatch.setenv("DOCKER_CONFIG", str(bad))
        auth = docker_config(tmp_path / "containers", reg.host, "ci-bot",
                             "s3cret")
        monkeypatch.setenv("REGISTRY_AUTH_FILE", str(auth / "config.json"))
        ok("publish", pk["fft-1.0.0"], "--registry", url, "--key", keys.key)

        # Anonymous pull: install with no credentials at all.
        monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "none"))
        monkeypatch.delenv("REGISTRY_AUTH_FILE")
        reg.token_log.clear()
        ok("install", "fft-kit", "--registry", url, "--registry-key", keys.pub,
           "--prefix", tmp_path / "p1")
        assert set(installed(tmp_path / "p1")) == {"base-kernels", "fft-kit"}
        scopes = {s for t in reg.token_log for s in t["scope"]}
        assert scopes == {"repository:iree/plugins:pull",
                          "repository:iree/plugins/base-kernels:pull",
                          "repository:iree/plugins/fft-kit:pull"}, scopes
        assert all(t["user"] is None for t in reg.token_log)


def test_basic_auth_with_htpasswd(tmp_path, monkeypatch, keys, pk):
    with oci_registry(tmp_path / "oci", auth="htpasswd",
                      users={"alice": "wonder-land"}) as reg:
        url = reg.url()
        r = run("install", "base-kernels", "--registry", url,
                "--registry-key", keys.pub, "--prefix", tmp_path / "p0")
        assert r.code == 1, r
        assert "HTTP 401" in r.err and "no credentials are configured for " \
               f"{reg.host}" in r.err, r
        cfg = docker_config(tmp_path / "docker", reg.host, "alice",
                            "wonder-land")
        monkeypatch.setenv("DOCKER_CONFIG", str(cfg))
        ok("registry", "init", url, "--key", keys.key)
        ok("publish", pk["base-1.0.0"], "--registry", url, "--key", keys.key)
        ok("install", "base-kernels", "--registry", url, "--registry-key",
           keys.pub, "--prefix", tmp_path / "p1")
        assert set(installed(tmp_path / "p1")) == {"base-kernels"}

        # $XDG_RUNTIME_DIR/containers/auth.json (podman login).
        monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "none"))
        run_dir = tmp_path / "run"
        docker_config(run_dir / "containers", reg.host, "alice", "wonder-land")
        (run_dir / "containers" / "config.json").rename(
            run_dir / "containers" / "auth.json")
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(run_dir))
        ok("install", "base-kernels", "--registry", url, "--registry-key",
           keys.pub, "--prefix", tmp_path / "p2")
        monkeypatch.delenv("XDG_RUNTIME_DIR")

        # credsStore: the default helper for every host.
        store = docker_config(tmp_path / "store", reg.host, "alice",
                              "wonder-land", helper="ireepkg-store",
                              store=True)
        monkeypatch.setenv("DOCKER_CONFIG", str(store))
        monkeypatch.setenv("PATH",
                           f"{store / 'bin'}{os.pathsep}{os.environ['PATH']}")
        ok("install", "base-kernels", "--registry", url, "--registry-key",
           keys.pub, "--prefix", tmp_path / "p3",
           env={"IREEPKG_CACHE_DIR": str(tmp_path / "cache3")})
        # A helper that fails says so.
        (store / "bin" / "docker-credential-ireepkg-store").write_text(
            "#!/bin/sh\necho 'keychain locked' >&2\nexit 3\n")
        r = run("install", "base-kernels", "--registry", url,
                "--registry-key", keys.pub, "--prefix", tmp_path / "p4",
                env={"IREEPKG_CACHE_DIR": str(tmp_path / "cache4")})
        assert r.code == 1, r
        assert f"docker-credential-ireepkg-store get failed for {reg.host}: " \
               "keychain locked" in r.err, r


def test_blob_redirects_do_not_carry_the_registry_token(tmp_path, keys, pk,
                                                         published):
    with published("base-1.0.0", "fft-1.0.0", auth="token", redirect=True,
                   login=("ci-bot", "s3cret")) as (reg, url):
        reg.redirect_log.clear()
        ok("install", "fft-kit", "--registry", url, "--registry-key",
           keys.pub, "--prefix", tmp_path / "p1")
        assert set(installed(tmp_path / "p1")) == {"base-kernels", "fft-kit"}
        # Metadata blobs and both archives came from the other server...
        paths = [e["path"] for e in reg.redirect_log]
        for archive in (pk["base-1.0.0"], pk["fft-1.0.0"]):
            sha = sha256_file(archive)
            assert any(f"/blobs/sha256/{sha[:2]}/{sha}/data" in p
                       for p in paths), paths
        # ... which never saw the registry's Authorization header.
        assert reg.redirect_log
        for e in reg.redirect_log:
            assert not any(k.lower() == "authorization" for k in e["headers"]), e


def test_oras_pulls_what_publish_pushed_and_pushes_what_installs(
        tmp_path, keys, pk, published):
    import oras.client as oras_client  # scripts/requirements.txt
    with published("base-1.0.0") as (reg, url):
        d = project(tmp_path, url, keys.pub, [{"name": "base-kernels"}])
        ok("lock", cwd=d)
        [locked] = json.loads((d / "plugins.lock.json").read_text())["packages"]

        # A general OCI client pulls the version ireepkg published: the
        # file (named by its title) has the digest the lock pins.
        client = oras_client.OrasClient(hostname=reg.host, insecure=True)
        out = tmp_path / "pulled"
        files = client.pull(target=f"{reg.host}/iree/plugins/base-kernels:1.0.0",
                            outdir=str(out))
        assert [pathlib.Path(f).name for f in files] == [
            "base-kernels-1.0.0.ireepkg"]
        assert sha256_file(files[0]) == locked["sha256"]

        # The other way: oras pushes an archive under ireepkg's media types,
        # `registry add-existing` signs it into the metadata, and it installs.
        work = tmp_path / "oras-push"
        work.mkdir()
        archive = work / pk["fft-1.0.0"].name
        archive.write_bytes(pk["fft-1.0.0"].read_bytes())
        manifest_json = work / "ireeplugin.json"
        manifest_json.write_text(
            (tmp_path / "src" / "fft-kit-1.0.0" / "ireeplugin.json").read_text())
        cwd = os.getcwd()
        os.chdir(work)
        try:
            client.push(
                target=f"{reg.host}/iree/plugins/fft-kit:1.0.0",
                files=[f"{archive.name}:application/vnd.ireepkg.archive.v1"],
                manifest_config="ireeplugin.json:application/vnd.ireepkg."
                                "plugin-manifest.v1+json",
                quiet=True)
        finally:
            os.chdir(cwd)
        pushed = json.loads(get(reg, "/v2/iree/plugins/fft-kit/manifests/1.0.0"))
        r = run("install", "fft-kit", "--registry", url, "--registry-key",
                keys.pub, "--prefix", tmp_path / "p0")
        assert r.code != 0, r  # not in the signed metadata yet
        r = ok("registry", "add-existing", "fft-kit@1.0.0", "--registry", url,
               "--key", keys.key)
        assert r.out == ("added fft-kit 1.0.0 (sha256 " +
                         sha256_file(archive)[:12] +
                         "...), snapshot version 3\n"), r
        # The artifact oras pushed is left as it was.
        assert json.loads(get(
            reg, "/v2/iree/plugins/fft-kit/manifests/1.0.0")) == pushed
        ok("install", "fft-kit", "--registry", url, "--registry-key",
           keys.pub, "--prefix", tmp_path / "p1")
        assert set(installed(tmp_path / "p1")) == {"base-kernels", "fft-kit"}
        assert installed(tmp_path / "p1")["fft-kit"]["archive_sha256"] == \
            sha256_file(archive)

        # Something else under the tag: refused, nothing signed.
        r = run("registry", "add-existing", "base-kernels@9.9.9", "--registry",
                url, "--key", keys.key)
        assert r.code == 1, r
        assert f"{reg.host}/iree/plugins/base-kernels:9.9.9 does not exist" \
               in r.err, r


def test_retry_after_on_429_is_honoured(tmp_path, keys, pk, published):
    with published("base-1.0.0", proxy=True) as (reg, url):
        sha = sha256_file(pk["base-1.0.0"])
        reg.faults += [
            {"match": "/manifests/snapshot", "status": 429, "retry_after": 1},
            {"match": f"/blobs/sha256:{sha}", "status": 429, "retry_after": 1,
             "method": "GET"},
        ]
        reg.proxy_log.clear()
        start = time.monotonic()
        r = ok("install", "base-kernels", "--registry", url, "--registry-key",
               keys.pub, "--prefix", tmp_path / "p1")
        assert time.monotonic() - start >= 2.0
        assert "HTTP 429: waiting 1 s before retrying, as the server asks " \
               "(Retry-After)" in r.err, r
        # Said for the manifest too, not only for the archive's download.
        assert reg.http("/v2/iree/plugins/manifests/snapshot") + \
            ": HTTP 429: waiting 1 s before retrying" in r.err, r
        statuses = [(e["path"].split("/")[-1], e["status"])
                    for e in reg.proxy_log if e["method"] == "GET"]
        assert statuses.count(("snapshot", 429)) == 1
        assert statuses.count(("snapshot", 200)) == 1
        assert statuses.count((f"sha256:{sha}", 429)) == 1
        assert statuses.count((f"sha256:{sha}", 200)) == 1
        assert set(installed(tmp_path / "p1")) == {"base-kernels"}


def test_chunked_upload(keys, pk, published):
    with published(proxy=True) as (reg, url):
        reg.proxy_log.clear()
        size = pk["fft-1.0.0"].stat().st_size
        ok("publish", pk["fft-1.0.0"], "--registry", url, "--key", keys.key,
           env={"IREEPKG_OCI_CHUNK_SIZE": "100"})
        patches = [e for e in reg.proxy_log if e["method"] == "PATCH"]
        assert len(patches) == (size + 99) // 100, reg.proxy_log
        assert all(e["status"] == 202 for e in patches)
        m = json.loads(get(reg, "/v2/iree/plugins/fft-kit/manifests/1.0.0"))
        assert m["layers"][0]["digest"] == \
            "sha256:" + sha256_file(pk["fft-1.0.0"])
        sha = sha256_file(pk["fft-1.0.0"])
        blob = get(reg, f"/v2/iree/plugins/fft-kit/blobs/sha256:{sha}",
                   accept="*/*")
        assert blob == pk["fft-1.0.0"].read_bytes()


@pytest.mark.parametrize("url, why", [
    ("oci://127.0.0.1:9", "it names no namespace"),
    ("oci://127.0.0.1:9/Iree/Plugins", '"Iree/Plugins" is not a repository '
                                       'name (lower case letters'),
    ("oci://127.0.0.1:9/iree//plugins", '"iree//plugins" is not a '
                                        'repository name'),
    ("oci://127.0.0.1:9/iree:latest", '"iree:latest" is not a repository '
                                      'name'),
])
def test_malformed_oci_urls(tmp_path, keys, url, why):
    r = run("install", "x", "--registry", url, "--registry-key", keys.pub,
            "--prefix", tmp_path / "p")
    assert r.code == 1, r
    assert f'"{url}" is not a registry in an OCI registry: {why}' in r.err, r
    assert "oci://HOST[:PORT]/NAMESPACE" in r.err, r


def test_a_mirror_answers_when_the_registry_does_not(tmp_path, keys,
                                                     published):
    with published("fft-1.0.0", "base-1.0.0") as (reg, url):
        dead = f"oci+http://127.0.0.1:{free_port()}/iree/plugins"
        d = project(tmp_path, dead, keys.pub, [{"name": "fft-kit"}],
                    mirrors=[url])
        ok("sync", cwd=d)
        assert set(installed(d / ".iree-plugins")) == {"base-kernels",
                                                      "fft-kit"}
        lock = json.loads((d / "plugins.lock.json").read_text())
        assert {p["source"]["registry"] for p in lock["packages"]} == {dead}


def test_publish_never_replaces_another_artifact_under_the_version_tag(
        tmp_path, keys, pk, published):
    import oras.client as oras_client
    other = pack(data_package(tmp_path / "other", "fft-kit", "1.0.0",
                              {"base-kernels": "^1.0"},
                              files={"data/x.txt": "other bytes\n"}),
                 tmp_path / "other-dist")
    with published("base-1.0.0") as (reg, url):
        client = oras_client.OrasClient(hostname=reg.host, insecure=True)
        cwd = os.getcwd()
        os.chdir(other.parent)
        try:
            client.push(target=f"{reg.host}/iree/plugins/fft-kit:1.0.0",
                        files=[f"{other.name}:application/vnd.ireepkg."
                               "archive.v1"], quiet=True)
        finally:
            os.chdir(cwd)
        before = get(reg, "/v2/iree/plugins/manifests/snapshot")
        r = run("publish", pk["fft-1.0.0"], "--registry", url, "--key",
                keys.key)
        assert r.code == 1, r
        assert f"{reg.host}/iree/plugins/fft-kit:1.0.0 already holds another " \
               f"archive (sha256:{sha256_file(other)}); this archive's " \
               f"digest is sha256:{sha256_file(pk['fft-1.0.0'])}" in r.err, r
        assert get(reg, "/v2/iree/plugins/manifests/snapshot") == before
        m = json.loads(get(reg, "/v2/iree/plugins/fft-kit/manifests/1.0.0"))
        assert m["layers"][0]["digest"] == "sha256:" + sha256_file(other)


def test_oci_over_https_with_a_private_ca(tmp_path, monkeypatch, keys, pk):
    with oci_registry(tmp_path / "oci", https=True) as reg:
        url = reg.url()
        assert url.startswith("oci://127.0.0.1:")
        r = run("registry", "init", url, "--key", keys.key)
        assert r.code == 1 and "certificate" in r.err.lower(), r
        monkeypatch.setenv("IREEPKG_CA_FILE", str(reg.ca_file))
        ok("registry", "init", url, "--key", keys.key)
        ok("publish", pk["base-1.0.0"], pk["fft-1.0.0"], "--registry", url,
           "--key", keys.key)
        ok("install", "fft-kit", "--registry", url, "--registry-key",
           keys.pub, "--prefix", tmp_path / "p1")
        assert set(installed(tmp_path / "p1")) == {"base-kernels", "fft-kit"}


def test_identity_token_is_exchanged_for_an_access_token(tmp_path,
                                                         monkeypatch, keys,
                                                         pk):
    with oci_registry(tmp_path / "oci", auth="token",
                      refresh_tokens={"refresh-abc": "ci-bot"}) as reg:
        url = reg.url()
        cfg = tmp_path / "docker"
        cfg.mkdir()
        (cfg / "config.json").write_text(json.dumps({"auths": {reg.host: {
            "auth": base64.b64encode(b"<token>:").decode(),
            "identitytoken": "refresh-abc"}}}))
        monkeypatch.setenv("DOCKER_CONFIG", str(cfg))
        ok("registry", "init", url, "--key", keys.key)
        ok("publish", pk["base-1.0.0"], "--registry", url, "--key", keys.key)
        grants = {(t["grant"], t["user"]) for t in reg.token_log}
        assert ("refresh_token", "ci-bot") in grants, reg.token_log
        assert not any(t.get("denied") for t in reg.token_log)
        assert any(t["grant"] == "refresh_token" and t["scope"] == [
            "repository:iree/plugins/base-kernels:pull,push"]
            for t in reg.token_log), reg.token_log
        # A refresh token the server does not know.
        (cfg / "config.json").write_text(json.dumps({"auths": {reg.host: {
            "identitytoken": "stale"}}}))
        r = run("publish", pk["base-1.1.0"], "--registry", url, "--key",
                keys.key)
        assert r.code == 1 and "HTTP 401" in r.err, r


def test_an_expired_token_during_downloads_is_renewed(tmp_path, keys, pk,
                                                       published):
    with published("base-1.0.0", "fft-1.0.0", auth="token", proxy=True,
                   login=("ci-bot", "s3cret")) as (reg, url):
        sha = sha256_file(pk["base-1.0.0"])
        # The registry refuses the archive once, as it does a token that
        # expired since it was issued.
        reg.faults.append({"match": f"/blobs/sha256:{sha}", "status": 401,
                           "method": "GET"})
        reg.token_log.clear()
        ok("install", "fft-kit", "--registry", url, "--registry-key",
           keys.pub, "--prefix", tmp_path / "p1")
        assert set(installed(tmp_path / "p1")) == {"base-kernels", "fft-kit"}
        asked = [t["scope"] for t in reg.token_log]
        assert asked.count(["repository:iree/plugins/base-kernels:pull"]) == 2
        got = [e["status"] for e in reg.proxy_log
               if e["path"].endswith(f"/blobs/sha256:{sha}")]
        assert got[-2:] == [401, 200], reg.proxy_log


def test_a_publisher_that_lost_a_race_overwrites_nothing(keys, pk,
                                                          published):
    with published("base-1.0.0", proxy=True) as (reg, url):
        first = get(reg, "/v2/iree/plugins/manifests/snapshot")
        ok("publish", pk["base-1.1.0"], "--registry", url, "--key", keys.key)
        second = get(reg, "/v2/iree/plugins/manifests/snapshot")
        # While the next publish pushes its index, another publisher moves
        # the snapshot tag (here: to an earlier snapshot it still has).
        reg.faults.append({"match": "/fft-kit/manifests/index",
                           "method": "PUT",
                           "before": lambda: put_manifest(
                               reg, "iree/plugins", "snapshot", first)})
        r = run("publish", pk["fft-1.0.0"], "--registry", url, "--key",
                keys.key)
        assert r.code == 1, r
        digest = "sha256:" + hashlib.sha256(first).hexdigest()
        assert f"{url} changed while this command ran (its snapshot is now " \
               f"{digest}): another publisher was at work; nothing of the " \
               "snapshot was overwritten" in r.err, r
        assert "run the command again" in r.err, r
        assert get(reg, "/v2/iree/plugins/manifests/snapshot") == first
        # Put back, the same publish goes through.
        put_manifest(reg, "iree/plugins", "snapshot", second)
        r = ok("publish", pk["fft-1.0.0"], "--registry", url, "--key",
               keys.key)
        assert "snapshot version 4" in r.out, r


def test_a_static_copy_verifies_and_bundles_the_same(tmp_path, keys, pk,
                                                     published):
    """`registry mirror` copies an OCI registry into a directory registry
    that verifies with the same key, and a project's bundle made from that
    copy is byte for byte the bundle made from the OCI registry."""
    copy = tmp_path / "static"
    with published("base-1.0.0", "base-1.1.0", "fft-1.0.0") as (reg, url):
        ok("yank", "base-kernels@1.0.0", "--registry", url, "--key", keys.key)
        out = json.loads(ok("registry", "mirror", url, copy, "--registry-key",
                            keys.pub, "--json").out)
        assert out["snapshot_version"] == 3, out
        assert out["previous_snapshot_version"] == 0, out
        assert (out["packages"], out["versions"], out["archives_copied"]) == \
            (2, 3, 3), out
        # The signed files byte for byte: the snapshot is the blob the
        # snapshot manifest holds.
        m = json.loads(get(reg, "/v2/iree/plugins/manifests/snapshot"))
        for layer, name in zip(m["layers"], ["snapshot.json",
                                             "snapshot.json.minisig"]):
            assert (copy / name).read_bytes() == get(
                reg, "/v2/iree/plugins/blobs/" + layer["digest"],
                accept="*/*"), name
        for key, rel in [("base-1.0.0", "base-kernels/base-kernels-1.0.0"),
                         ("base-1.1.0", "base-kernels/base-kernels-1.1.0"),
                         ("fft-1.0.0", "fft-kit/fft-kit-1.0.0")]:
            archive = copy / "archives" / (rel + ".ireepkg")
            assert archive.read_bytes() == pk[key].read_bytes()
            # The archive's signature, from its manifest's annotation.
            name, _, version = rel.split("/")[1].rpartition("-")
            pm = json.loads(get(reg, f"/v2/iree/plugins/{name}/manifests/"
                                     f"{version}"))
            assert pathlib.Path(str(archive) + ".minisig").read_text() == \
                pm["annotations"]["vnd.ireepkg.archive.minisig"]
        # The copy is a registry: it verifies with the same key (yanked
        # version and all), archives included.
        r = ok("registry", "verify", copy, "--registry-key", keys.pub,
               "--archives")
        assert "snapshot version 3" in r.out, r
        assert "base-kernels: 1.0.0 (yanked), 1.1.0" in r.out, r
        # Again: nothing to do.
        r = ok("registry", "mirror", url, copy, "--registry-key", keys.pub)
        assert r.out == f"{copy} is up to date: snapshot version 3\n", r

        # A project that names the OCI registry, with the copy as a mirror.
        d = project(tmp_path, url, keys.pub, [{"name": "fft-kit"}],
                    mirrors=[str(copy)])
        ok("lock", cwd=d)
        from_oci = tmp_path / "from-oci.ireebundle"
        ok("bundle", "create", "-o", from_oci, cwd=d)

    # The OCI registry is gone: the copy answers, from an empty cache.
    from_copy = tmp_path / "from-copy.ireebundle"
    ok("bundle", "create", "-o", from_copy, cwd=d,
       env={"IREEPKG_CACHE_DIR": str(tmp_path / "cache-copy")})
    assert from_copy.read_bytes() == from_oci.read_bytes()
    r = run("sync", "--offline", "--bundle", from_copy, cwd=d,
            env={"IREEPKG_CACHE_DIR": str(tmp_path / "cache-bundle")})
    assert r.code == 0, r
    assert set(installed(d / ".iree-plugins")) == {"base-kernels", "fft-kit"}


def test_registry_mirror_updates_a_copy_and_refuses_what_it_must(
        tmp_path, keys, pk, published):
    copy = tmp_path / "static"
    with published("base-1.0.0") as (reg, url):
        r = ok("registry", "mirror", url, copy, "--registry-key", keys.pub)
        assert r.out.startswith(f"copied into {copy}: snapshot version 2 "
                                "signed by "), r
        assert "1 package, 1 version; 1 archive copied" in r.out, r
        old = get(reg, "/v2/iree/plugins/manifests/snapshot")
        ok("publish", pk["base-1.1.0"], pk["fft-1.0.0"], "--registry", url,
           "--key", keys.key)
        first = (copy / "archives" / "base-kernels" /
                 "base-kernels-1.0.0.ireepkg").stat().st_ino
        r = ok("registry", "mirror", url, copy, "--registry-key", keys.pub)
        assert r.out.startswith(f"updated {copy}: snapshot version 3 "), r
        assert "2 packages, 3 versions; 2 archives copied" in r.out, r
        # What the copy held stays as it was.
        assert (copy / "archives" / "base-kernels" /
                "base-kernels-1.0.0.ireepkg").stat().st_ino == first
        ok("registry", "verify", copy, "--registry-key", keys.pub,
           "--archives")

        # An older snapshot put back at the source: the newer copy is kept
        # (the client itself refuses the rollback first).
        put_manifest(reg, "iree/plugins", "snapshot", old)
        before = (copy / "snapshot.json").read_bytes()
        r = run("registry", "mirror", url, copy, "--registry-key", keys.pub,
                env={"IREEPKG_CACHE_DIR": str(tmp_path / "fresh-cache")})
        assert r.code == 1, r
        assert "the copy holds snapshot version 3, newer than version 2 " \
               f"that {url} serves now" in r.err, r
        assert (copy / "snapshot.json").read_bytes() == before

        # A key the registry is not signed with: nothing written.
        other = Keys(tmp_path / "other")
        r = run("registry", "mirror", url, tmp_path / "c2", "--registry-key",
                other.pub)
        assert r.code == 1 and "which is not a key you trust" in r.err, r
        assert not (tmp_path / "c2").exists()

        # A directory that holds something else.
        junk = tmp_path / "junk"
        junk.mkdir()
        (junk / "notes.txt").write_text("mine\n")
        r = run("registry", "mirror", url, junk, "--registry-key", keys.pub)
        assert r.code == 1, r
        assert "the directory is not empty and holds no registry" in r.err, r
        assert sorted(p.name for p in junk.iterdir()) == ["notes.txt"]
        # Only a directory can be written.
        r = run("registry", "mirror", url, "https://example.invalid/x",
                "--registry-key", keys.pub)
        assert r.code == 2, r
        assert "a static copy is written into a directory, not " \
               "https://example.invalid/x" in r.err, r
    # No staging directory is left behind.
    assert not [p for p in tmp_path.iterdir() if ".mirror-" in p.name]


def test_docker_hub_credentials_under_their_legacy_key(tmp_path, monkeypatch,
                                                       keys, pk):
    """docker stores Docker Hub's credentials under
    "https://index.docker.io/v1/" (auths, credHelpers, and what a helper is
    asked for), while the registry is oci://docker.io/... and its API
    registry-1.docker.io. Here "Docker Hub" is the loopback registry reached
    through an HTTP proxy (http_proxy), which is where the requests for
    registry-1.docker.io go."""
    hub = "https://index.docker.io/v1/"
    with oci_registry(tmp_path / "oci", auth="htpasswd", proxy=True,
                      users={"hubuser": "hub-pass"}) as reg:
        monkeypatch.setenv("http_proxy", f"http://{reg.host}")
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        url = "oci+http://docker.io/acme/plugins"
        # No credentials: refused, saying for which host.
        r = run("registry", "init", url, "--key", keys.key)
        assert r.code == 1 and "HTTP 401" in r.err, r
        assert "no credentials are configured for docker.io" in r.err, r
        # auths under the legacy key, as `docker login` writes it.
        cfg = docker_config(tmp_path / "docker", hub, "hubuser", "hub-pass")
        monkeypatch.setenv("DOCKER_CONFIG", str(cfg))
        reg.proxy_log.clear()
        ok("registry", "init", url, "--key", keys.key)
        # The API is registry-1.docker.io's.
        assert reg.proxy_log and all(
            e["path"].startswith("http://registry-1.docker.io/v2/")
            for e in reg.proxy_log), reg.proxy_log
        # A credential helper named for the legacy key is asked for it (the
        # script answers only that).
        helper = docker_config(tmp_path / "helper", hub, "hubuser",
                               "hub-pass", helper="hubtest")
        monkeypatch.setenv("DOCKER_CONFIG", str(helper))
        monkeypatch.setenv("PATH",
                           f"{helper / 'bin'}{os.pathsep}{os.environ['PATH']}")
        ok("publish", pk["base-1.0.0"], "--registry", url, "--key", keys.key)
        # credsStore: the same question.
        store = docker_config(tmp_path / "store", hub, "hubuser", "hub-pass",
                              helper="hubstore", store=True)
        monkeypatch.setenv("DOCKER_CONFIG", str(store))
        monkeypatch.setenv("PATH",
                           f"{store / 'bin'}{os.pathsep}{os.environ['PATH']}")
        ok("publish", pk["base-1.1.0"], "--registry", url, "--key", keys.key)
        # podman's key for it (docker.io) works too; and the key docker
        # writes wins over another spelling of the same registry.
        (cfg / "config.json").write_text(json.dumps({"auths": {
            "docker.io": {"auth": base64.b64encode(
                b"hubuser:hub-pass").decode()}}}))
        monkeypatch.setenv("DOCKER_CONFIG", str(cfg))
        ok("install", "base-kernels", "--registry", url, "--registry-key",
           keys.pub, "--prefix", tmp_path / "p1")
        (cfg / "config.json").write_text(json.dumps({"auths": {
            "docker.io": {"auth": base64.b64encode(b"hubuser:old").decode()},
            hub: {"auth": base64.b64encode(b"hubuser:hub-pass").decode()}}}))
        ok("publish", pk["fft-1.0.0"], "--registry", url, "--key", keys.key)


def test_the_snapshot_signature_is_also_an_oci_referrer(tmp_path, keys, pk,
                                                        published):
    """The snapshot's signature is pushed a second time as an OCI 1.1
    referrer of the snapshot manifest. docker-registry 2.8 has no referrers
    API (404), so it is listed in an image index under the fallback tag
    sha256-<hex>; a snapshot manifest without its signature layer is read
    through that."""
    idx_type = "application/vnd.oci.image.index.v1+json"
    sig_type = "application/vnd.ireepkg.snapshot.signature.v1"

    def sha(data):
        return "sha256:" + hashlib.sha256(data).hexdigest()

    def put(reg, ref, body, media):
        req = urllib.request.Request(
            reg.http(f"/v2/iree/plugins/manifests/{ref}"), data=body,
            method="PUT", headers={"Content-Type": media})
        with urllib.request.urlopen(req, timeout=30) as f:
            assert f.status == 201

    with published("base-1.0.0", proxy=True) as (reg, url):
        snap = get(reg, "/v2/iree/plugins/manifests/snapshot")
        with pytest.raises(urllib.error.HTTPError) as e:
            get(reg, f"/v2/iree/plugins/referrers/{sha(snap)}",
                accept=idx_type)
        assert e.value.code == 404  # no referrers API: the fallback tag
        index = json.loads(get(
            reg, f"/v2/iree/plugins/manifests/sha256-{sha(snap)[7:]}",
            accept=idx_type))
        assert index["mediaType"] == idx_type
        [ref] = index["manifests"]
        assert ref["artifactType"] == sig_type
        sig_manifest = get(reg, f"/v2/iree/plugins/manifests/{ref['digest']}")
        assert sha(sig_manifest) == ref["digest"]
        m = json.loads(sig_manifest)
        assert m["artifactType"] == sig_type
        assert m["subject"] == {"mediaType": MANIFEST, "digest": sha(snap),
                                "size": len(snap)}
        s = json.loads(snap)
        assert m["layers"] == [s["layers"][1]]  # the same signature blob

        # A snapshot manifest without the signature layer, and no referrer
        # for it: unsigned.
        s["layers"] = s["layers"][:1]
        bare = (json.dumps(s, indent=2) + "\n").encode()
        put(reg, "snapshot", bare, MANIFEST)
        r = run("install", "base-kernels", "--registry", url,
                "--registry-key", keys.pub, "--prefix", tmp_path / "p0",
                env={"IREEPKG_CACHE_DIR": str(tmp_path / "c0")})
        assert r.code == 1, r
        assert f"snapshot.json of {url} is not signed: " \
               "snapshot.json.minisig is missing" in r.err, r
        # The signature as its referrer, as another OCI 1.1 tool pushes
        # it: installs, and the next publish (which checks the signature
        # it starts from) reads it too.
        m["subject"] = {"mediaType": MANIFEST, "digest": sha(bare),
                        "size": len(bare)}
        referrer = (json.dumps(m, indent=2) + "\n").encode()
        put(reg, sha(referrer), referrer, MANIFEST)
        put(reg, f"sha256-{sha(bare)[7:]}", json.dumps(
            {"schemaVersion": 2, "mediaType": idx_type, "manifests": [
                {"mediaType": MANIFEST, "digest": sha(referrer),
                 "size": len(referrer), "artifactType": sig_type}]}).encode(),
            idx_type)
        ok("install", "base-kernels", "--registry", url, "--registry-key",
           keys.pub, "--prefix", tmp_path / "p1",
           env={"IREEPKG_CACHE_DIR": str(tmp_path / "c1")})
        assert set(installed(tmp_path / "p1")) == {"base-kernels"}
        r = ok("publish", pk["base-1.1.0"], "--registry", url, "--key",
               keys.key)
        assert "snapshot version 3" in r.out, r
        ok("registry", "verify", url, "--registry-key", keys.pub)
        # A registry that takes no index under the fallback tag: the
        # publish, whose snapshot is in place, still succeeds.
        reg.faults.append({"match": "/manifests/sha256-", "method": "PUT",
                           "status": 400})
        r = ok("publish", pk["fft-1.0.0"], "--registry", url, "--key",
               keys.key)
        assert "snapshot version 4" in r.out, r
        assert any(e["status"] == 400 for e in reg.proxy_log), reg.proxy_log
        ok("install", "fft-kit", "--registry", url, "--registry-key",
           keys.pub, "--prefix", tmp_path / "p2",
           env={"IREEPKG_CACHE_DIR": str(tmp_path / "c2")})


def test_an_https_registry_with_a_plain_http_token_realm_gets_no_credentials(
        tmp_path, monkeypatch, keys):
    """An oci:// registry whose Bearer realm is plain http would have the
    docker credentials (Basic, at the realm) and its tokens travel in
    clear: the realm is refused, and nothing reaches it."""
    with oci_registry(tmp_path / "oci", https=True, auth="token",
                      users={"alice": "s3cret"}) as reg:
        assert reg.realm.startswith("http://")
        monkeypatch.setenv("IREEPKG_CA_FILE", str(reg.ca_file))
        monkeypatch.setenv("DOCKER_CONFIG", str(docker_config(
            tmp_path / "docker", reg.host, "alice", "s3cret")))
        url = reg.url()
        r = run("registry", "init", url, "--key", keys.key)
        assert r.code != 0, r
        assert f"{url}: the registry is served over HTTPS but sends for its " \
               f"tokens to {reg.realm}, which is not HTTPS; no credentials " \
               "or tokens are sent there" in r.err, r
        assert "oci+http://" in r.err, r
        r = run("install", "base-kernels", "--registry", url,
                "--registry-key", keys.pub, "--prefix", tmp_path / "p1")
        assert r.code != 0 and "which is not HTTPS" in r.err, r
        assert reg.token_log == []


def test_credentials_never_go_to_an_upload_location_on_another_port(
        tmp_path, keys, pk, published):
    """publish sends the credentials to the registry's own scheme, host and
    port only: an upload Location elsewhere gets none, and its 401 is not
    answered with them."""
    with published("base-1.0.0", auth="htpasswd", proxy=True,
                   login=("alice", "s3cret")) as (reg, url):
        with forwarder(tmp_path / "other", reg.port) as other:
            elsewhere = other.host
            reg.faults.append({"match": "/blobs/uploads/", "method": "POST",
                               "times": 100,
                               "location": lambda l: l.replace(reg.host,
                                                               elsewhere)})
            r = run("publish", pk["fft-1.0.0"], "--registry", url, "--key",
                    keys.key)
        assert r.code != 0, r
        assert f"HTTP 401 from http://{elsewhere}/v2/iree/plugins/fft-kit/" \
               f"blobs/uploads/" in r.err, r
        assert f"which is not the registry's own http://{reg.host}; the " \
               f"credentials for {reg.host} are not sent there" in r.err, r
        assert other.proxy_log, "the upload never went to the other port"
        assert all(e["authorization"] is None for e in other.proxy_log), \
            other.proxy_log
        # The registry's own origin still gets them.
        assert any(e["authorization"] for e in reg.proxy_log), reg.proxy_log


def test_an_announced_huge_answer_is_refused_at_once(tmp_path, keys, pk,
                                                     published):
    with published("base-1.0.0", proxy=True) as (reg, url):
        reg.faults.append({"match": "/manifests/config", "method": "GET",
                           "content_length": 10**15, "hold": 20})
        start = time.monotonic()
        r = run("install", "base-kernels", "--registry", url,
                "--registry-key", keys.pub, "--prefix", tmp_path / "p1")
        assert time.monotonic() - start < 15, r
        assert r.code != 0, r
        assert "the answer is larger than the limit of 4194304 bytes; " \
               "cut off" in r.err, r


def test_publish_and_yank_say_what_they_wait_for(tmp_path, keys, pk,
                                               published):
    """The writing commands wait out a Retry-After as the readers do, and
    say so: a publish or yank that seems to hang for a minute is not."""
    with published("base-1.0.0", proxy=True) as (reg, url):
        for args in (("publish", pk["base-1.1.0"]),
                     ("yank", "base-kernels@1.0.0")):
            reg.faults.append({"match": "/manifests/snapshot", "method": "GET",
                               "status": 503, "retry_after": 1})
            start = time.monotonic()
            r = ok(*args, "--registry", url, "--key", keys.key)
            assert time.monotonic() - start >= 1.0, r
            assert reg.http("/v2/iree/plugins/manifests/snapshot") + \
                ": HTTP 503: waiting 1 s before retrying, as the server " \
                "asks (Retry-After)" in r.err, (args, r)


def test_retry_after_beyond_the_cap_is_said_and_not_waited(tmp_path, keys,
                                                           pk, published):
    with published("base-1.0.0", proxy=True) as (reg, url):
        reg.faults.append({"match": "/manifests/snapshot", "status": 503,
                           "retry_after": 30})
        start = time.monotonic()
        r = run("install", "base-kernels", "--registry", url,
                "--registry-key", keys.pub, "--prefix", tmp_path / "p1",
                env={"IREEPKG_RETRY_AFTER_MAX": "2"})
        assert time.monotonic() - start < 15, r
        assert r.code != 0, r
        assert reg.http("/v2/iree/plugins/manifests/snapshot") + \
            ": HTTP 503: the server asks to retry after 30 s, longer than " \
            "ireepkg waits (2 s); not retried" in r.err, r


def test_a_bogus_signature_referrer_does_not_hide_a_valid_one(tmp_path, keys,
                                                              published, pk):
    """Anyone who may push to the repository may add referrers to the
    snapshot: each is tried, and the snapshot is refused only when none
    verifies, with each one's reason; a publish builds on the first that
    verifies."""
    idx_type = "application/vnd.oci.image.index.v1+json"
    sig_type = "application/vnd.ireepkg.snapshot.signature.v1"

    def sha(data):
        return "sha256:" + hashlib.sha256(data).hexdigest()

    def put(reg, ref, body, media=MANIFEST):
        req = urllib.request.Request(
            reg.http(f"/v2/iree/plugins/manifests/{ref}"), data=body,
            method="PUT", headers={"Content-Type": media})
        with urllib.request.urlopen(req, timeout=30) as f:
            assert f.status == 201

    with published("base-1.0.0") as (reg, url):
        snap = get(reg, "/v2/iree/plugins/manifests/snapshot")
        s = json.loads(snap)
        snapshot_layer, signature_layer = s["layers"]
        s["layers"] = [snapshot_layer]
        bare = (json.dumps(s, indent=2) + "\n").encode()
        put(reg, "snapshot", bare)
        subject = {"mediaType": MANIFEST, "digest": sha(bare),
                   "size": len(bare)}

        def referrer(layer):
            m = {"schemaVersion": 2, "mediaType": MANIFEST,
                 "artifactType": sig_type, "config": s["config"],
                 "layers": [layer], "subject": subject}
            body = (json.dumps(m, indent=2) + "\n").encode()
            put(reg, sha(body), body)
            return {"mediaType": MANIFEST, "digest": sha(body),
                    "size": len(body), "artifactType": sig_type}

        no_signature_layer = referrer(snapshot_layer)
        not_a_signature = referrer(dict(snapshot_layer,
                                        mediaType=signature_layer["mediaType"]))
        valid = referrer(signature_layer)

        def listed(*refs):
            put(reg, f"sha256-{sha(bare)[7:]}", json.dumps(
                {"schemaVersion": 2, "mediaType": idx_type,
                 "manifests": list(refs)}).encode(), idx_type)

        listed(no_signature_layer, not_a_signature)
        r = run("install", "base-kernels", "--registry", url,
                "--registry-key", keys.pub, "--prefix", tmp_path / "p0",
                env={"IREEPKG_CACHE_DIR": str(tmp_path / "c0")})
        assert r.code == 1, r
        assert f"none of the 2 signatures of snapshot.json of {url} " \
               "verifies with a key you trust" in r.err, r
        assert f"signature 1: {reg.host}/iree/plugins@" \
               f"{no_signature_layer['digest']} (a signature referrer of the " \
               "snapshot) has no layer of media type " \
               f"{signature_layer['mediaType']}" in r.err, r
        assert "signature 2: " in r.err, r

        listed(no_signature_layer, not_a_signature, valid)
        ok("install", "base-kernels", "--registry", url, "--registry-key",
           keys.pub, "--prefix", tmp_path / "p1",
           env={"IREEPKG_CACHE_DIR": str(tmp_path / "c1")})
        assert set(installed(tmp_path / "p1")) == {"base-kernels"}

        # A publish builds on the same state: the bogus readable referrer
        # listed first must not make it refuse the registry as tampered.
        listed(not_a_signature, valid)
        ok("publish", pk["base-1.1.0"], "--registry", url, "--key", keys.key)
        ok("install", "base-kernels@1.1.0", "--registry", url,
           "--registry-key", keys.pub, "--prefix", tmp_path / "p2",
           env={"IREEPKG_CACHE_DIR": str(tmp_path / "c2")})
