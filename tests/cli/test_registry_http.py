"""Registries over real HTTP servers on loopback: nginx over HTTP and HTTPS
(with a certificate authority made for the test), and the fault-injecting
server. Install by name, lock, sync, mirrors, ETag caching, parallel
downloads, faults and attacks, through the CLI."""
import json
import pathlib
import shutil
import time

import pytest

from conftest import run
from netfix import fault_server, nginx_server
from regfix import FFT_KIT, http_project, installed


# The `reg` fixture's (conftest.py), with a download cache of the test's
# own (`cache`): FFT_KIT and 12 packages of 64 KiB of random bytes each.
REGISTRY = [*FFT_KIT,
            *((f"extra-{i:02d}", "1.0.0", None, {"data/blob.bin": 64 << 10})
              for i in range(12))]
pytestmark = pytest.mark.usefixtures("cache")


def test_https_install_lock_and_sync_through_nginx(tmp_path, reg, monkeypatch):
    with nginx_server(reg.dir, https=True) as (url, ca_file):
        # Without the test's CA the certificate is refused.
        r = run("install", "fft-kit", "--registry", url, "--registry-key",
                reg.pub, "--prefix", tmp_path / "p0")
        assert r.code == 1, r
        assert "certificate" in r.err.lower()
        monkeypatch.setenv("IREEPKG_CA_FILE", str(ca_file))
        r = run("install", "fft-kit", "--registry", url, "--registry-key",
                reg.pub, "--prefix", tmp_path / "p1")
        assert r.code == 0, r
        assert set(installed(tmp_path / "p1")) == {"base-kernels", "fft-kit"}
        d = http_project(tmp_path, url, reg,
                         [{"name": "fft-kit"}, {"name": "extra-00"}])
        r = run("lock", cwd=d)
        assert r.code == 0, r
        lock = json.loads((d / "plugins.lock.json").read_text())
        assert {p["source"]["registry"] for p in lock["packages"]} == {url}
        r = run("sync", "--locked", cwd=d)
        assert r.code == 0, r
        assert set(installed(d / ".iree-plugins")) == {
            "base-kernels", "fft-kit", "extra-00"}


def test_conditional_requests_and_offline_metadata(tmp_path, reg):
    with fault_server(reg.dir) as url:
        d = http_project(tmp_path, url, reg, [{"name": "fft-kit"}])
        assert run("lock", cwd=d).code == 0
        first = url.requests_for("/snapshot.json")
        assert first and first[0]["status"] == 200
        (d / "plugins.lock.json").unlink()
        url.reset()
        assert run("lock", cwd=d).code == 0
        again = url.requests_for("/snapshot.json")
        assert again and again[0]["if_none_match"], again
        assert again[0]["status"] == 304
        # Index files the snapshot still pins are not downloaded again:
        # the client keeps what it verified by hash (index.pack), and so
        # the metadata cache keeps no copy of them.
        assert url.requests_for("/index/fft-kit.json") == []
        labels = [f.read_text(errors="replace").split("\n\n", 1)[0]
                  for f in (tmp_path / "cache" / "registries").glob("*/http/*")
                  if f.is_file()]
        assert any("snapshot.json" in h for h in labels), labels
        assert not any("index/" in h for h in labels), labels
        # Offline: metadata from the cache, no request at all.
        (d / "plugins.lock.json").unlink()
        url.reset()
        r = run("lock", "--offline", cwd=d)
        assert r.code == 0, r
        assert url.log() == []
    # Offline with nothing cached says what is missing.
    d2 = http_project(tmp_path / "other", "http://127.0.0.1:9/", reg,
                      [{"name": "fft-kit"}])
    r = run("lock", "--offline", cwd=d2)
    assert r.code == 1, r
    assert "offline" in r.err.lower()


def test_mirror_fallback(tmp_path, reg):
    with fault_server(reg.dir) as url:
        d = http_project(tmp_path, url + "/status-500", reg,
                         [{"name": "fft-kit"}], mirrors=[str(url)])
        r = run("sync", cwd=d)
        assert r.code == 0, r
        assert set(installed(d / ".iree-plugins")) == {"base-kernels",
                                                      "fft-kit"}
        assert any(e["status"] == 500 for e in url.log())


def test_parallel_downloads(tmp_path, reg):
    with fault_server(reg.dir) as url:
        url.set_faults({"/archives/": ["delay-300"]})
        names = [{"name": f"extra-{i:02d}"} for i in range(12)]
        d = http_project(tmp_path, url, reg, names)
        r = run("sync", cwd=d)
        assert r.code == 0, r
        assert len(installed(d / ".iree-plugins")) == 12
        assert url.max_in_flight() >= 6
        # The server logs a request's end just after the client may have
        # read its last byte: wait (bounded) until every end is logged.
        for _ in range(100):
            archive_requests = [e for e in url.log()
                                if e["path"].startswith("/archives/")]
            if all(e["end"] is not None for e in archive_requests):
                break
            time.sleep(0.05)
        starts = sorted(e["start"] for e in archive_requests)
        ends = sorted(e["end"] for e in archive_requests)
        # 12 downloads of 300 ms each overlapped: well under the 3.6 s sum.
        assert ends[-1] - starts[0] < 2.0


def test_cold_lock_reads_index_files_ahead_in_parallel(tmp_path, reg):
    """A cold lock of 12 packages from a server that answers each index
    file after 300 ms: the files the resolver will ask for are fetched
    ahead, several at once, and the lockfile is the one a lock from the
    registry's directory writes."""
    names = [{"name": f"extra-{i:02d}"} for i in range(12)] + \
        [{"name": "fft-kit"}]
    local = tmp_path / "local"
    local.mkdir()
    (local / "plugins.json").write_text(json.dumps(
        {"schema_version": 1,
         "registries": [{"name": "web", "url": str(reg.dir),
                         "public_key": reg.pub}],
         "plugins": names}, indent=2) + "\n")
    r = run("lock", cwd=local)
    assert r.code == 0, r
    with fault_server(reg.dir) as url:
        url.set_faults({"/index/": ["delay-300"]})
        d = http_project(tmp_path, url, reg, names)
        r = run("lock", "-vv", cwd=d)
        assert r.code == 0, r
        index = [e for e in url.log() if e["path"].startswith("/index/")]
        # Each index file once, most of them several at a time.
        assert sorted(e["path"] for e in index) == sorted(
            [f"/index/{p['name']}.json" for p in names] +
            ["/index/base-kernels.json"]), index
        assert url.max_in_flight() >= 6
        # Reported as ever, one line per index file read.
        assert r.err.count(": read from http://") == len(index), r.err
    def packages(lock):
        return [{k: v for k, v in p.items() if k != "source"}
                for p in json.loads(lock.read_text())["packages"]]
    assert packages(d / "plugins.lock.json") == \
        packages(local / "plugins.lock.json")


def test_registry_mirror_over_http_fetches_only_what_changed(tmp_path, reg):
    """`registry mirror` from an HTTP registry fetches the index files
    several at once, and an update fetches only those whose hash the new
    snapshot changed: the others come from the copy."""
    copy = tmp_path / "static"
    with fault_server(reg.dir) as url:
        url.set_faults({"/index/": ["delay-200"]})
        r = run("registry", "mirror", url, copy, "--registry-key", reg.pub)
        assert r.code == 0, r
        index = {e["path"] for e in url.log() if e["path"].startswith("/index/")}
        assert len(index) == 14 and url.max_in_flight() >= 6, index
        reg.publish("fft-kit", "1.1.0", {"base-kernels": "^1.0"})
        url.reset()
        url.set_faults({"/index/": ["delay-200"]})
        r = run("registry", "mirror", url, copy, "--registry-key", reg.pub)
        assert r.code == 0, r
        # fft-kit's, read by the client that checks the source and copied;
        # the other 13 come from the copy (and the client's cache).
        assert {e["path"] for e in url.log()
                if e["path"].startswith("/index/")} == {"/index/fft-kit.json"}
    assert run("registry", "verify", copy, "--registry-key", reg.pub,
               "--archives").code == 0
    assert (copy / "index" / "fft-kit.json").read_bytes() == \
        (reg.dir / "index" / "fft-kit.json").read_bytes()


@pytest.mark.parametrize("fault", ["truncate", "corrupt", "reset",
                                   "oversize", "endless"])
def test_archive_faults_install_nothing(tmp_path, reg, fault):
    with fault_server(reg.dir) as url:
        url.set_faults({"/archives/fft-kit/": [fault]})
        d = http_project(tmp_path, url, reg, [{"name": "fft-kit"}])
        assert run("lock", cwd=d).code == 0
        r = run("sync", cwd=d, timeout=120)
        assert r.code == 1, r
        assert "fft-kit" in r.err
        assert not (d / ".iree-plugins" / "packages").exists()
        # Nothing half-downloaded is left in the cache either.
        parts = [p for p in (tmp_path / "cache").rglob("*.part-*")]
        assert parts == []


def test_archive_retries_then_succeeds(tmp_path, reg):
    with fault_server(reg.dir) as url:
        url.set_faults({"/archives/fft-kit/": ["fail-2"]})
        d = http_project(tmp_path, url, reg, [{"name": "fft-kit"}])
        r = run("sync", cwd=d)
        assert r.code == 0, r
        statuses = [e["status"] for e in url.log()
                    if e["path"].startswith("/archives/fft-kit/")]
        assert statuses == [500, 500, 200]


def test_rollback_over_http_is_refused(tmp_path, reg):
    old = tmp_path / "old-registry"
    shutil.copytree(reg.dir, old)
    reg.publish("fft-kit", "1.1.0", {"base-kernels": "^1.0"})
    same = tmp_path / "same"
    shutil.copytree(reg.dir, same)
    with fault_server(same) as url3:
        d3 = http_project(tmp_path / "c", url3, reg, [{"name": "fft-kit"}])
        assert run("lock", cwd=d3).code == 0
        # Swap the served files for the older registry, keep the URL.
        shutil.rmtree(same)
        shutil.copytree(old, same)
        (d3 / "plugins.lock.json").unlink()
        r = run("lock", cwd=d3)
        assert r.code == 1, r
        assert "rollback" in r.err.lower() or "older" in r.err.lower()


def test_nginx_mirror_etag_and_parallel_sync(tmp_path, reg):
    """Against nginx itself: the first URL refuses connections, the mirror
    (nginx) serves; a second lock revalidates with If-None-Match and gets
    304s; a sync of 13 packages downloads them in parallel."""
    from netfix import free_port
    dead = f"http://127.0.0.1:{free_port()}"
    with nginx_server(reg.dir, limit_rate=64 << 10) as server:
        url = server.url
        names = [{"name": "fft-kit"}] + [{"name": f"extra-{i:02d}"}
                                         for i in range(12)]
        d = http_project(tmp_path, dead, reg, names, mirrors=[url])
        r = run("lock", cwd=d)
        assert r.code == 0, r
        (d / "plugins.lock.json").unlink()
        r = run("lock", cwd=d)
        assert r.code == 0, r
        snap = [e for e in server.access_log() if e["uri"] == "/snapshot.json"]
        assert [e["status"] for e in snap] == [200, 304]
        assert snap[1]["if_none_match"]
        # 12 archives of 64 KiB at 64 KiB/s each: a second apiece, 12 s in
        # sequence.
        import time
        start = time.monotonic()
        r = run("sync", cwd=d)
        took = time.monotonic() - start
        assert r.code == 0, r
        assert len(installed(d / ".iree-plugins")) == 14
        assert took < 6, took
        for _ in range(100):  # nginx logs a request once it has ended
            archives = [e for e in server.access_log()
                        if e["uri"].startswith("/archives/")]
            if len(archives) >= 14:
                break
            time.sleep(0.05)
        assert len(archives) == 14 and all(e["status"] == 200
                                           for e in archives)
