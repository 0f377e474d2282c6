"""The HTTP client (registry/http/http_client.cpp, loaded from
libireepkg_http.so) against real servers on 127.0.0.1:
tests/net/fault_server.py for every way a server can misbehave, and nginx
for HTTPS and conditional requests. The client is driven through
build/bin/ireepkg-fetch-driver (tests/net/fetch_driver.cpp), which loads the
module exactly as ireepkg does and prints what the client returned.

Every failure must end in a clear error, a successful retry or a fallback to
the next mirror, and never leave a partial file at the destination."""
import hashlib
import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import BUILD
from netfix import (fault_server, fault_server_url, free_port,  # noqa: F401
                    nginx_https, nginx_server)

DRIVER = BUILD / "bin" / "ireepkg-fetch-driver"
MODULE = BUILD / "lib" / "libireepkg_http.so"

# Quick retries, so that failing URLs cost little time.
FAST = {"retries": 2, "backoff": 0.02, "connect_timeout": 5,
        "read_timeout": 1}


def drive(request, env=None, timeout=60) -> dict:
    """Runs one request through the driver; returns its JSON result."""
    full_env = dict(os.environ)
    full_env.pop("IREEPKG_CA_FILE", None)
    full_env.update(env or {})
    r = subprocess.run([str(DRIVER), "-"], input=json.dumps(request),
                       capture_output=True, text=True, timeout=timeout,
                       env=full_env)
    assert r.returncode in (0, 1), r
    out = json.loads(r.stdout)
    assert out["ok"] == (r.returncode == 0), out
    return out


def files(tmp):
    return {"a.bin": os.urandom(300 * 1024),
            "b.bin": os.urandom(200 * 1024),
            "snapshot.json": json.dumps({"version": 7}).encode(),
            "big.json": json.dumps({"pad": "x" * 10000}).encode()}


@pytest.fixture(scope="module")
def www(tmp_path_factory):
    """A served directory: {name: bytes}, and its path as `.root`."""
    root = tmp_path_factory.mktemp("www")
    content = files(root)
    for name, data in content.items():
        (root / name).write_bytes(data)
    return root, content


@pytest.fixture(scope="module")
def module_server(www):
    with fault_server(www[0]) as url:
        yield url


@pytest.fixture
def server(module_server):
    """The fault server, with an empty log and no fail counters."""
    module_server.reset()
    return module_server


@pytest.fixture
def dest(tmp_path):
    d = tmp_path / "dest"
    d.mkdir()
    return d


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def download_request(www, urls, dest, name="a.bin", **options):
    data = www[1][name]
    return {"options": {**FAST, **options},
            "downloads": [{"urls": urls, "dest": str(dest / name),
                           "size": len(data), "sha256": sha(data),
                           "label": f"{name} 1.0.0"}]}


def listing(d):
    return sorted(os.listdir(d))


# --- the fault modes, alone and with a good mirror behind them --------------

# fault segment, error code, words of the message, attempts on that URL
FAULTS = [
    ("truncate", "io", ["truncated", "after 153600 of 307200 bytes"], 3),
    ("corrupt", "integrity", ["wrong SHA-256"], 1),
    ("reset", "io", ["reset"], 3),
    ("status-500", "io", ["HTTP 500"], 3),
    ("status-503", "io", ["HTTP 503"], 3),
    ("status-429", "io", ["HTTP 429"], 3),
    ("status-404", "not-found", ["HTTP 404 (not found)"], 1),
    ("status-403", "io", ["HTTP 403 (forbidden)"], 1),
    # (tried once: retries=0 keeps this one short)
    ("drip-3000", "io", ["read timeout", "for 1 s after 0 of 307200 bytes"], 1),
    ("oversize", "integrity", ["more than the 307200 bytes", "cut off"], 1),
    ("endless", "integrity", ["more than the 307200 bytes", "cut off"], 1),
    ("redirect-loop", "io", ["more than 5 redirects", "redirect loop"], 1),
]


def options_for(fault):
    return {"retries": 0} if fault.startswith("drip") else {}


def first_attempts(server, fault):
    """Requests that reached the faulty URL (a redirect loop's later hops
    carry ?hop=N and are not new attempts). Requests are logged as they
    arrive; a dripping answer may still be in flight, so no settling."""
    return [r for r in server.log(settle=0) if r["path"] == f"/{fault}/a.bin"]


@pytest.mark.parametrize("fault,code,words,attempts", FAULTS,
                         ids=[f[0] for f in FAULTS])
def test_fault_alone_is_a_clear_error(www, server, dest, fault, code, words,
                                      attempts):
    url = f"{server}/{fault}/a.bin"
    out = drive(download_request(www, [url], dest, **options_for(fault)))
    assert out["stage"] == "downloads"
    err = out["error"]
    assert err["code"] == code, err
    assert err["message"].startswith(f"cannot download a.bin 1.0.0 from {url}: ")
    for w in words:
        assert w in err["message"], err
    assert len(first_attempts(server, fault)) == attempts
    assert ("attempts)" in err["message"]) == (attempts > 1)
    assert err["hint"]
    assert listing(dest) == []


@pytest.mark.parametrize("fault,code,words,attempts", FAULTS,
                         ids=[f[0] for f in FAULTS])
def test_fault_then_good_mirror(www, server, dest, fault, code, words,
                                attempts):
    urls = [f"{server}/{fault}/a.bin", f"{server}/a.bin"]
    out = drive(download_request(www, urls, dest, **options_for(fault)))
    assert out["ok"], out
    assert listing(dest) == ["a.bin"]
    assert (dest / "a.bin").read_bytes() == www[1]["a.bin"]
    assert len(first_attempts(server, fault)) == attempts
    assert len(server.requests_for("/a.bin")) == 1


def test_every_mirror_listed_in_the_final_error(www, server, dest):
    refused = f"http://127.0.0.1:{free_port()}/a.bin"
    urls = [refused, f"{server}/status-404/a.bin", f"{server}/corrupt/a.bin"]
    out = drive(download_request(www, urls, dest, retries=1))
    err = out["error"]
    # A wrong hash anywhere makes it an integrity error.
    assert err["code"] == "integrity"
    lines = err["message"].split("\n")
    assert lines[0] == "cannot download a.bin 1.0.0 from any of its 3 URLs:"
    assert lines[1].startswith(f"  {refused}: ")
    assert "onnect" in lines[1] and lines[1].endswith("(2 attempts)")
    assert lines[2] == f"  {server}/status-404/a.bin: HTTP 404 (not found)"
    assert lines[3].startswith(f"  {server}/corrupt/a.bin: wrong SHA-256: got ")
    assert listing(dest) == []


def test_refused_connection_then_mirror(www, server, dest):
    refused = f"http://127.0.0.1:{free_port()}/a.bin"
    out = drive(download_request(www, [refused, f"{server}/a.bin"], dest))
    assert out["ok"], out
    assert (dest / "a.bin").read_bytes() == www[1]["a.bin"]


def test_500s_then_success_with_exponential_backoff(www, server, dest):
    out = drive(download_request(www, [f"{server}/fail-2/a.bin"], dest,
                                 retries=2, backoff=0.2))
    assert out["ok"], out
    log = server.requests_for("/fail-2/a.bin")
    assert [r["status"] for r in log] == [500, 500, 200]
    # Waited 0.2 s, then 0.4 s.
    assert log[1]["start"] - log[0]["end"] >= 0.18
    assert log[2]["start"] - log[1]["end"] >= 0.38
    assert (dest / "a.bin").read_bytes() == www[1]["a.bin"]


def test_retries_used_up(www, server, dest):
    out = drive(download_request(www, [f"{server}/fail-3/a.bin"], dest,
                                 retries=2))
    assert out["error"]["message"].endswith("HTTP 500 (internal server error) "
                                            "(3 attempts)")
    assert listing(dest) == []


def test_plain_download_and_single_redirect(www, server, dest):
    out = drive(download_request(www, [f"{server}/redirect/a.bin"], dest))
    assert out["ok"], out
    assert listing(dest) == ["a.bin"]
    assert (dest / "a.bin").read_bytes() == www[1]["a.bin"]
    size = len(www[1]["a.bin"])
    assert out["progress"]["labels"] == ["downloading"]
    assert out["progress"]["last_done"] == out["progress"]["last_total"] == size
    log = server.log()
    assert [r["status"] for r in log] == [302, 200]
    assert log[1]["user_agent"].startswith("ireepkg/")


def test_missing_destination_directory(www, server, tmp_path):
    out = drive(download_request(www, [f"{server}/a.bin"],
                                 tmp_path / "no" / "such"))
    assert out["error"]["code"] == "io"
    assert "cannot create a temporary file beside" in out["error"]["message"]
    assert server.log() == []


# --- parallel downloads -----------------------------------------------------------

def settled(server, path, timeout=5.0):
    """The log entries for `path`, once the server has finished answering
    every one of them (it logs the end of a request just after the client
    may already have read the last byte)."""
    deadline = time.monotonic() + timeout
    while True:
        entries = server.requests_for(path)
        if all(e["end"] is not None for e in entries) or \
                time.monotonic() > deadline:
            return entries
        time.sleep(0.05)


def max_overlap(entries):
    """The most of these requests the server was answering at once."""
    events = sorted([(e["start"], 1) for e in entries] +
                    [(e["end"], -1) for e in entries])
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def test_parallel_downloads_overlap(www, server, dest):
    data = www[1]["b.bin"]
    delay, n = 800, 6
    request = {"options": {**FAST, "parallel": 8}, "downloads": [
        {"urls": [f"{server}/delay-{delay}/b.bin"], "dest": str(dest / f"{i}.bin"),
         "size": len(data), "sha256": sha(data), "label": f"p{i}"}
        for i in range(n)]}
    out = drive(request)
    assert out["ok"], out
    assert listing(dest) == sorted(f"{i}.bin" for i in range(n))
    assert all((dest / f"{i}.bin").read_bytes() == data for i in range(n))
    serial = n * delay
    assert out["downloads_ms"] < 0.6 * serial, out
    assert max_overlap(settled(server, f"/delay-{delay}/b.bin")) == n
    # Progress is reported over all of them, at most about 10 times a second.
    p = out["progress"]
    assert p["last_done"] == p["last_total"] == n * len(data)
    assert p["calls"] <= out["downloads_ms"] / 100 + 3


def test_parallel_limit(www, server, dest):
    data = www[1]["b.bin"]
    request = {"options": {**FAST, "parallel": 2}, "downloads": [
        {"urls": [f"{server}/delay-400/b.bin"], "dest": str(dest / f"{i}.bin"),
         "size": len(data), "sha256": sha(data)} for i in range(4)]}
    out = drive(request)
    assert out["ok"], out
    assert max_overlap(settled(server, "/delay-400/b.bin")) == 2
    assert out["downloads_ms"] >= 2 * 400
    assert len(listing(dest)) == 4


def test_one_failure_abandons_the_others(www, server, dest):
    data = www[1]["a.bin"]
    request = {"options": {**FAST, "parallel": 4}, "downloads": [
        {"urls": [f"{server}/drip-200/a.bin"], "dest": str(dest / "slow.bin"),
         "size": len(data), "sha256": sha(data), "label": "slow 1.0"},
        {"urls": [f"{server}/status-404/a.bin"], "dest": str(dest / "gone.bin"),
         "size": len(data), "sha256": sha(data), "label": "gone 2.0"}]}
    started = time.monotonic()
    out = drive(request)
    assert time.monotonic() - started < 5
    assert out["error"]["code"] == "not-found"
    assert out["error"]["message"].startswith("cannot download gone 2.0 from ")
    # The slow one was cut short, and its temporary file removed.
    assert listing(dest) == []


def test_wrong_size_or_hash_declared_never_lands(www, server, dest):
    data = www[1]["a.bin"]
    request = {"options": FAST, "downloads": [
        {"urls": [f"{server}/a.bin"], "dest": str(dest / "short.bin"),
         "size": len(data) + 10, "sha256": sha(data)}]}
    out = drive(request)
    assert "truncated: the body ended after 307200 of 307210 bytes" in \
        out["error"]["message"]
    request["downloads"][0]["size"] = len(data)
    request["downloads"][0]["sha256"] = "0" * 64
    out = drive(request)
    assert out["error"]["code"] == "integrity"
    request["downloads"][0]["sha256"] = "not-hex"
    out = drive(request)
    assert out["error"]["code"] == "invalid"
    assert "64 lower-case hex digits" in out["error"]["message"]
    assert listing(dest) == []


# --- metadata: ETag cache, size cap, offline ---------------------------------

def metadata_request(urls, cache=None, **options):
    return {"options": {**FAST, **({"metadata_cache_dir": str(cache)}
                                   if cache else {}), **options},
            "metadata": {"urls": urls, "label": "snapshot.json"}}


def test_etag_cache_answers_304(www, server, tmp_path):
    root = www[0]
    (root / "changing.json").write_text('{"v": 1}')
    cache = tmp_path / "cache"
    url = f"{server}/changing.json"
    first = drive(metadata_request([url], cache))
    assert first["metadata"] == {"body": '{"v": 1}', "url": url,
                                 "from_cache": False, "size": 8}
    second = drive(metadata_request([url], cache))
    assert second["metadata"]["from_cache"] is True
    assert second["metadata"]["body"] == '{"v": 1}'
    log = server.log()
    assert [r["status"] for r in log] == [200, 304]
    assert log[0]["if_none_match"] is None
    assert log[1]["if_none_match"] == '"' + sha(b'{"v": 1}')[:20] + '"'

    (root / "changing.json").write_text('{"v": 2}')
    third = drive(metadata_request([url], cache))
    assert third["metadata"]["from_cache"] is False
    assert third["metadata"]["body"] == '{"v": 2}'
    assert [r["status"] for r in server.log()] == [200, 304, 200]
    # One entry per URL, nothing half-written left beside it.
    entries = os.listdir(cache)
    assert entries == [sha(url.encode())]
    assert (cache / entries[0]).read_bytes().endswith(b'\n\n{"v": 2}')


def test_no_cache_no_conditional_request(server):
    url = f"{server}/snapshot.json"
    drive(metadata_request([url]))
    out = drive(metadata_request([url]))
    assert out["metadata"]["from_cache"] is False
    assert [r["if_none_match"] for r in server.log()] == [None, None]


def test_offline_answers_from_the_cache(www, server, tmp_path):
    cache = tmp_path / "cache"
    good = f"{server}/snapshot.json"
    drive(metadata_request([good], cache))
    before = len(server.log())
    # The first mirror is not cached; the second is.
    other = f"{server}/status-500/snapshot.json"
    out = drive(metadata_request([other, good], cache, offline=True))
    assert out["metadata"] == {"body": www[1]["snapshot.json"].decode(),
                               "url": good, "from_cache": True,
                               "size": len(www[1]["snapshot.json"])}
    assert len(server.log()) == before


def test_offline_miss_says_what_is_missing(server, tmp_path):
    cache = tmp_path / "cache"
    url = f"{server}/snapshot.json"
    out = drive(metadata_request([url], cache, offline=True))
    err = out["error"]
    assert err["code"] == "not-found"
    assert err["message"] == (f"offline, and snapshot.json is not in the "
                              f"metadata cache ({cache}); looked for {url}")
    assert "once online" in err["hint"]
    assert server.log() == []


def test_offline_downloads_name_the_files(www, server, dest):
    data = www[1]["a.bin"]
    request = {"options": {"offline": True}, "downloads": [
        {"urls": [f"{server}/a.bin"], "dest": str(dest / "a.bin"),
         "size": len(data), "sha256": sha(data), "label": "simple-mul 1.2.0"},
        {"urls": [f"{server}/b.bin"], "dest": str(dest / "b.bin"),
         "size": len(data), "sha256": sha(data), "label": "fft-kit 3.0.1"}]}
    out = drive(request)
    err = out["error"]
    assert err["code"] == "not-found"
    assert err["message"] == (
        "offline, and 2 files need downloading:\n"
        f"  simple-mul 1.2.0 ({server}/a.bin)\n"
        f"  fft-kit 3.0.1 ({server}/b.bin)")
    assert "once online" in err["hint"]
    assert server.log() == []
    assert listing(dest) == []


def test_metadata_size_cap(www, server):
    big = www[1]["big.json"]
    url = f"{server}/big.json"
    request = metadata_request([url])
    request["metadata"]["max_bytes"] = 1000
    out = drive(request)
    assert out["error"]["code"] == "integrity"
    assert out["error"]["message"] == (
        f"cannot fetch snapshot.json from {url}: larger than the limit of "
        "1000 bytes for snapshot.json; cut off")
    # An endless body is cut off at the limit too.
    request["metadata"]["urls"] = [f"{server}/endless/big.json"]
    request["metadata"]["max_bytes"] = 100000
    out = drive(request, timeout=20)
    assert "larger than the limit of 100000 bytes (97.7 KiB)" in \
        out["error"]["message"]
    # Exactly the limit is fine.
    request["metadata"]["urls"] = [url]
    request["metadata"]["max_bytes"] = len(big)
    assert drive(request)["metadata"]["size"] == len(big)


def test_metadata_mirrors_and_redirect_loop(server):
    good = f"{server}/snapshot.json"
    out = drive(metadata_request([f"{server}/status-404/snapshot.json", good]))
    assert out["metadata"]["url"] == good
    out = drive(metadata_request([f"{server}/redirect-loop/snapshot.json"],
                                 max_redirects=3))
    assert out["error"]["message"].endswith(
        "more than 3 redirects (a redirect loop?)")
    assert len([r for r in server.log() if r["file"] == "/snapshot.json" and
                "redirect-loop" in r["faults"]]) == 4


# --- several metadata files in one call (fetchMetadataMany) -----------------

@pytest.fixture
def index_files(www):
    """index/f0.json .. index/f7.json in the served directory: {name: text}."""
    (www[0] / "index").mkdir(exist_ok=True)
    out = {}
    for i in range(8):
        text = json.dumps({"name": f"f{i}", "pad": "y" * (100 * i)})
        (www[0] / "index" / f"f{i}.json").write_text(text)
        out[f"f{i}.json"] = text
    return out


def many_request(requests, cache=None, **options):
    """One fetchMetadataMany of `requests` ([urls, ...] or {"urls", ...})."""
    return {"options": {**FAST, **({"metadata_cache_dir": str(cache)}
                                   if cache else {}), **options},
            "metadata_many": [r if isinstance(r, dict) else {"urls": r}
                              for r in requests]}


def alone(request, options):
    """What fetchMetadata says of one of those requests on its own."""
    out = drive({"options": options, "metadata": request})
    return ({"ok": True, **out["metadata"]} if out["ok"]
            else {"ok": False, "error": out["error"]})


def test_many_files_in_one_call(server, index_files):
    names = sorted(index_files)
    out = drive(many_request([[f"{server}/index/{n}"] for n in names]))
    assert out["ok"], out
    assert [r["body"] for r in out["metadata_many"]] == \
        [index_files[n] for n in names]
    assert [r["url"] for r in out["metadata_many"]] == \
        [f"{server}/index/{n}" for n in names]
    assert not any(r["from_cache"] for r in out["metadata_many"])
    # Each file asked for once.
    assert sorted(r["path"] for r in server.log()) == \
        [f"/index/{n}" for n in names]
    # No request, no result.
    assert drive(many_request([]))["metadata_many"] == []


def test_many_one_failure_leaves_the_others(server, index_files, www):
    """A 404 and a file over the size limit among good ones: those two get
    exactly the error fetchMetadata gives them alone, the others their
    bodies."""
    requests = [
        {"urls": [f"{server}/index/f0.json"], "label": "index/f0.json"},
        {"urls": [f"{server}/status-404/index/f1.json"],
         "label": "index/f1.json"},
        {"urls": [f"{server}/big.json"], "label": "big.json",
         "max_bytes": 1000},
        {"urls": [f"{server}/index/f3.json"], "label": "index/f3.json"},
        {"urls": [], "label": "nowhere.json"},
    ]
    out = drive(many_request(requests, parallel=8))
    assert out["ok"], out
    got = out["metadata_many"]
    assert [r["ok"] for r in got] == [True, False, False, True, False]
    assert got[0]["body"] == index_files["f0.json"]
    assert got[3]["body"] == index_files["f3.json"]
    assert got[1]["error"]["code"] == "not-found"
    assert got[1]["error"]["message"] == (
        f"cannot fetch index/f1.json from {server}/status-404/index/f1.json: "
        "HTTP 404 (not found)")
    assert got[2]["error"]["code"] == "integrity"
    assert got[2]["error"]["message"] == (
        f"cannot fetch big.json from {server}/big.json: larger than the limit "
        "of 1000 bytes for big.json; cut off")
    assert got[4]["error"] == {"code": "invalid", "hint": "",
                               "message": "no URL to fetch nowhere.json from"}
    # Each one is what fetchMetadata returns for it alone.
    for request, result in zip(requests, got):
        assert alone(request, FAST) == result


def test_many_run_in_parallel(server, index_files):
    """Six files the server delays by 800 ms each: it was answering all six
    at once. With parallel 2, never more than two."""
    names = sorted(index_files)[:6]
    urls = [[f"{server}/delay-800/index/{n}"] for n in names]
    out = drive(many_request(urls, parallel=8, read_timeout=10))
    assert [r["body"] for r in out["metadata_many"]] == \
        [index_files[n] for n in names]
    entries = [e for e in server.log() if e["path"].startswith("/delay-800/")]
    assert len(entries) == 6
    assert max_overlap(entries) == 6
    server.reset()
    out = drive(many_request(urls[:4], parallel=2, read_timeout=10))
    assert all(r["ok"] for r in out["metadata_many"]), out
    entries = server.log()
    assert len(entries) == 4
    assert max_overlap(entries) == 2


def test_many_cache_conditional_and_offline(server, index_files, tmp_path):
    cache = tmp_path / "cache"
    urls = [[f"{server}/index/f{i}.json"] for i in range(3)]
    first = drive(many_request(urls, cache))
    assert [r["from_cache"] for r in first["metadata_many"]] == [False] * 3
    # Again: conditional requests, answered 304 from the cache.
    second = drive(many_request(urls, cache))
    assert [r["from_cache"] for r in second["metadata_many"]] == [True] * 3
    assert [r["body"] for r in second["metadata_many"]] == \
        [index_files[f"f{i}.json"] for i in range(3)]
    log = server.log()
    assert sorted(r["status"] for r in log) == [200] * 3 + [304] * 3
    assert all(r["if_none_match"] for r in log if r["status"] == 304)
    before = len(log)
    # Offline: from the cache (through a second mirror for one of them),
    # or an error naming what is missing; the server hears nothing.
    offline = drive(many_request(
        [urls[0], [f"{server}/status-500/index/f1.json", urls[1][0]],
         {"urls": [f"{server}/index/f5.json"], "label": "index/f5.json"}],
        cache, offline=True))
    got = offline["metadata_many"]
    assert got[0] == {"ok": True, "body": index_files["f0.json"],
                      "url": urls[0][0], "from_cache": True,
                      "size": len(index_files["f0.json"])}
    assert got[1]["url"] == urls[1][0] and got[1]["from_cache"] is True
    assert got[2]["error"]["code"] == "not-found"
    assert got[2]["error"]["message"] == (
        f"offline, and index/f5.json is not in the metadata cache ({cache}); "
        f"looked for {server}/index/f5.json")
    assert len(server.log()) == before


def test_many_mirror_fallback_for_one_file(server, index_files):
    refused = f"http://127.0.0.1:{free_port()}"
    urls = [[f"{server}/index/f0.json"],
            [f"{server}/status-500/index/f1.json", f"{server}/index/f1.json"],
            [f"{refused}/index/f2.json", f"{server}/index/f2.json"],
            [f"{server}/index/f3.json"]]
    out = drive(many_request(urls, parallel=8, retries=2))
    got = out["metadata_many"]
    assert [r["body"] for r in got] == \
        [index_files[f"f{i}.json"] for i in range(4)]
    assert [r["url"] for r in got] == [u[-1] for u in urls]
    # The failing mirror was retried as for a single file, then left.
    assert [r["status"] for r in
            server.requests_for("/status-500/index/f1.json")] == [500] * 3
    assert len(server.requests_for("/index/f1.json")) == 1


def test_many_interrupted(server, index_files):
    """Ctrl-C ends what is still under way with the interrupted error;
    what was already answered keeps its answer."""
    out = drive(many_request(
        [[f"{server}/index/f0.json"],
         {"urls": [f"{server}/delay-4000/index/f1.json"],
          "label": "index/f1.json"}],
        interrupt_after=1.0, read_timeout=10))
    got = out["metadata_many"]
    assert got[0]["ok"] and got[0]["body"] == index_files["f0.json"]
    assert got[1]["error"]["code"] == "interrupted"
    assert got[1]["error"]["message"] == \
        "interrupted while fetching index/f1.json"
    assert out["metadata_many_ms"] < 3000


def test_transport_concurrent_copies(server, index_files, tmp_path):
    """The registry's HTTP transport and two concurrentCopy()s, each
    fetching the same files with one fetchMany on a thread of its own: all
    get every file, from the mirror when the registry's URL fails, and all
    fifteen requests were answered at once."""
    paths = [f"index/f{i}.json" for i in range(4)] + ["index/none.json"]
    request = {"options": {**FAST, "parallel": 8, "read_timeout": 10},
               "transport": {"url": f"{server}/status-404",
                             "mirrors": [f"{server}/delay-1000"],
                             "paths": paths, "copies": 3,
                             "cache_root": str(tmp_path / "cache")}}
    out = drive(request)
    assert out["ok"], out
    assert len(out["transport"]) == 3
    for results in out["transport"]:
        assert all(r["ok"] for r in results[:4]), results
        assert [r["body"] for r in results[:4]] == \
            [index_files[f"f{i}.json"] for i in range(4)]
        assert [r["url"] for r in results[:4]] == \
            [f"{server}/delay-1000/{p}" for p in paths[:4]]
        assert results[4]["error"]["code"] == "not-found"
        assert results[4]["error"]["message"].startswith(
            "cannot fetch index/none.json from any of its 2 URLs:")
    delayed = [e for e in server.log() if e["path"].startswith("/delay-1000/")]
    assert len(delayed) == 15
    assert max_overlap(delayed) == 15
    # Index files are kept by the client by their hash, never in the
    # metadata cache: asked for again, they are fetched again, without a
    # conditional request.
    server.reset()
    again = drive(request)
    assert all(r["ok"] and not r["from_cache"]
               for results in again["transport"] for r in results[:4])
    delayed = [e for e in server.log() if e["path"].startswith("/delay-1000/")]
    assert len(delayed) == 15
    assert not any(e.get("if_none_match") for e in delayed)
    assert not (tmp_path / "cache").exists() or not any(
        p.is_file() for p in (tmp_path / "cache").rglob("*"))


# --- HTTPS through nginx ---------------------------------------------------------

@pytest.fixture(scope="module")
def https(www):
    with nginx_server(www[0], https=True) as server:
        yield server


def test_https_with_the_test_ca(www, https, dest, tmp_path):
    url, ca_file = https
    assert url.startswith("https://127.0.0.1:")
    out = drive(download_request(www, [f"{url}/a.bin"], dest,
                                 ca_file=ca_file))
    assert out["ok"], out
    assert (dest / "a.bin").read_bytes() == www[1]["a.bin"]
    # The same CA through the environment.
    (dest / "a.bin").unlink()
    out = drive(download_request(www, [f"{url}/a.bin"], dest),
                env={"IREEPKG_CA_FILE": ca_file})
    assert out["ok"], out


def test_https_conditional_requests_with_nginx(https, tmp_path):
    url, ca_file = https
    cache = tmp_path / "cache"
    for expected in (False, True):
        out = drive(metadata_request([f"{url}/snapshot.json"], cache,
                                     ca_file=ca_file))
        assert out["metadata"]["from_cache"] is expected
    last = [r for r in https.access_log() if r["uri"] == "/snapshot.json"][-2:]
    assert [r["status"] for r in last] == [200, 304]
    assert last[1]["if_none_match"] is not None


def test_https_certificate_names_localhost_too(nginx_https, dest):
    (url, ca_file), root = nginx_https
    (root / "d.bin").write_bytes(b"d" * 1000)
    named = url.replace("127.0.0.1", "localhost")
    out = drive({"options": {**FAST, "ca_file": ca_file}, "downloads": [
        {"urls": [f"{named}/d.bin"], "dest": str(dest / "d.bin"),
         "size": 1000, "sha256": sha(b"d" * 1000)}]})
    assert out["ok"], out
    assert listing(dest) == ["d.bin"]


def test_https_without_the_ca_fails_on_the_certificate(www, https, dest):
    url, _ = https
    out = drive(download_request(www, [f"{url}/a.bin"], dest))
    err = out["error"]
    assert err["code"] == "io"
    assert "TLS: " in err["message"] and "certificate" in err["message"]
    assert "attempts" not in err["message"]  # not retried: it cannot help
    assert "IREEPKG_CA_FILE" in err["hint"]
    assert listing(dest) == []


def test_unreadable_ca_file(tmp_path):
    out = drive({"options": {"ca_file": str(tmp_path / "none.pem")},
                 "metadata": {"urls": ["https://127.0.0.1:1/x"]}})
    assert out["stage"] == "open"
    assert out["error"]["code"] == "not-found"
    assert out["error"]["message"].startswith(
        f"the CA file {tmp_path / 'none.pem'} cannot be read: ")
    out = drive({"metadata": {"urls": ["https://127.0.0.1:1/x"]}},
                env={"IREEPKG_CA_FILE": str(tmp_path / "none.pem")})
    assert out["error"]["message"].startswith("IREEPKG_CA_FILE ")


# --- finding the module ------------------------------------------------------------

def test_module_from_the_environment_or_an_installed_layout(tmp_path):
    request = {"options": {"offline": True},
               "metadata": {"urls": ["http://127.0.0.1:1/x"]}}
    out = drive(request, env={"IREEPKG_HTTP_MODULE": str(tmp_path / "no.so")})
    assert out["stage"] == "open"
    assert out["error"]["code"] == "unsupported"
    assert out["error"]["message"] == (
        "cannot load the HTTP module libireepkg_http.so; IREEPKG_HTTP_MODULE "
        f"names {tmp_path / 'no.so'} (not found)")

    # A copy of the program with no module beside it says where it looked.
    (tmp_path / "bin").mkdir()
    driver = tmp_path / "bin" / DRIVER.name
    shutil.copy2(DRIVER, driver)
    env = {k: v for k, v in os.environ.items() if k != "IREEPKG_HTTP_MODULE"}
    r = subprocess.run([str(driver), json.dumps(request)], capture_output=True,
                       text=True, timeout=30, env=env)
    err = json.loads(r.stdout)["error"]
    assert err["message"] == (
        "cannot load the HTTP module libireepkg_http.so; looked at "
        f"{tmp_path}/bin/../lib/libireepkg_http.so (not found), "
        f"{tmp_path}/bin/../lib/ireepkg/libireepkg_http.so (not found)")

    # The installed layout: lib/ireepkg/.
    (tmp_path / "lib" / "ireepkg").mkdir(parents=True)
    shutil.copy2(MODULE, tmp_path / "lib" / "ireepkg" / MODULE.name)
    r = subprocess.run([str(driver), json.dumps(request)], capture_output=True,
                       text=True, timeout=30, env=env)
    assert json.loads(r.stdout)["stage"] == "metadata"  # loaded; offline miss


def test_faults_attached_through_the_control_url(fault_server_url, dest):
    # For clients that build their own URLs: the plain URL misbehaves.
    server, root = fault_server_url
    data = os.urandom(5000)
    (root / "c.bin").write_bytes(data)
    request = {"options": FAST, "downloads": [
        {"urls": [f"{server}/c.bin"], "dest": str(dest / "c.bin"),
         "size": len(data), "sha256": sha(data)}]}
    server.set_faults({"/c.bin": ["fail-1"]})
    out = drive(request)
    assert out["ok"], out
    assert [r["status"] for r in server.requests_for("/c.bin")] == [500, 200]
    server.set_faults({"/c.": ["corrupt"]})
    (dest / "c.bin").unlink()
    out = drive(request)
    assert out["error"]["code"] == "integrity"
    assert listing(dest) == []
    server.reset()
    assert drive(request)["ok"]
    assert [r["status"] for r in server.log()] == [200]


# --- downloads that never end, servers that ask to wait -------------------------

def test_slow_drip_is_cut_off_by_the_low_speed_limit(www, server, dest):
    """A server sending a byte every 0.5 s once kept a download going for
    as long as it liked: the read timeout only fired below 1 byte/s. The
    low-speed limit is 1 KiB/s by default."""
    url = f"{server}/drip-500/a.bin"
    request = download_request(www, [url], dest, retries=0, read_timeout=2)
    assert "low_speed" not in request["options"]  # the default applies
    start = time.monotonic()
    out = drive(request)
    took = time.monotonic() - start
    err = out["error"]
    assert err["message"].startswith(f"cannot download a.bin 1.0.0 from {url}: "
                                      "read timeout: less than 1024 bytes/s for 2 s"), err
    assert took < 10, took
    assert listing(dest) == []


def test_deadline_per_file(www, server, dest):
    """However fast a transfer moves, one attempt ends at its deadline."""
    url = f"{server}/rate-64/a.bin"  # 300 KiB at 64 KiB/s: about 5 s
    out = drive(download_request(www, [url], dest, retries=0, deadline=1))
    assert out["error"]["message"].startswith(
        f"cannot download a.bin 1.0.0 from {url}: took longer than 1 s after "), out
    assert listing(dest) == []


def test_retry_after_is_honoured_and_reported(www, server, dest):
    url = f"{server}/busy-2/a.bin"
    out = drive(download_request(www, [url], dest, retries=2, backoff=0.01))
    assert out["ok"], out
    assert out["warnings"] == [f"{url}: HTTP 503: waiting 2 s before retrying, "
                               "as the server asks (Retry-After)"]
    log = server.requests_for("/busy-2/a.bin")
    assert [r["status"] for r in log] == [503, 200]
    assert log[1]["start"] - log[0]["end"] >= 1.9
    assert (dest / "a.bin").read_bytes() == www[1]["a.bin"]


def test_retry_after_past_the_limit_moves_to_the_next_mirror(www, server, dest):
    """Retry-After: 3600 once meant 4 attempts in 1.8 s; now the wait is
    not made (it is over the limit) and the next mirror is tried."""
    busy, good = f"{server}/busy-3600/a.bin", f"{server}/a.bin"
    out = drive(download_request(www, [busy, good], dest, retries=3,
                                 retry_after_max=60))
    assert out["ok"], out
    assert out["warnings"] == [f"{busy}: HTTP 503: the server asks to retry after "
                               "3600 s, longer than ireepkg waits (60 s); not retried"]
    assert len(server.requests_for("/busy-3600/a.bin")) == 1
    # Alone, the error says what the server asked for.
    server.reset()
    out = drive(download_request(www, [busy], dest, retries=3, retry_after_max=60))
    assert out["error"]["message"] == (
        f"cannot download a.bin 1.0.0 from {busy}: HTTP 503 (service unavailable); "
        "it asked to retry after 3600 s, more than the 60 s ireepkg waits")


def test_partial_files_of_killed_downloads_are_removed(www, server, dest):
    """A download killed with SIGKILL cannot clean up; the next download of
    the same file removes what a process that is gone left behind, and
    keeps what a live one is still writing."""
    gone = subprocess.Popen(["true"])  # its process id is soon free
    gone.wait()
    stale = dest / f"a.bin.part-{gone.pid}-deadbeef"
    stale.write_bytes(b"partial")
    live = dest / f"a.bin.part-{os.getpid()}-cafecafe"
    live.write_bytes(b"someone else's")
    out = drive(download_request(www, [f"{server}/a.bin"], dest))
    assert out["ok"], out
    assert listing(dest) == sorted(["a.bin", live.name])
