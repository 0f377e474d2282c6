"""`ireepkg registry site`: the static web site of a registry, tested in a
real browser (Debian's headless Chromium driven by Selenium through Debian's
chromedriver).

A registry holds the example packages (runtime plugins, compiler plugins
with options, hooks), a package with a yanked version, and a hostile one
whose summary, description, option descriptions and README carry HTML and
script. The tests search in the browser (from file:// and over HTTP),
filter, follow a result with the keyboard, read the options table and the
install snippet, check that nothing from the hostile package runs or is
parsed as markup, and take screenshots at phone and desktop widths.
Without the browser the tests fail (they do not skip): scripts/setup.sh
installs it.

IREEPKG_SITE_SCREENSHOTS=DIR copies the screenshots to DIR
(scripts/site-screenshots.sh uses it for docs/images/)."""
import http.server
import json
import os
import pathlib
import shutil
import threading
import time

import pytest

from conftest import EXAMPLES, data_package, pack, run

TIMEOUT = 120
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
URL = "https://plugins.example.org/iree"
PHONE = (390, 844)
DESKTOP = (1280, 900)


def ok(*args, **kw):
    r = run(*args, timeout=TIMEOUT, **kw)
    assert r.code == 0, r
    return r


# --- the hostile package ----------------------------------------------------

XSS_SUMMARY = 'A <script>window.__pwned = "summary"</script> <b>bold</b> summary'
XSS_DESCRIPTION = '<img src=x onerror="window.__pwned = \'description\'">'
XSS_OPTION = '<script>window.__pwned = "option"</script>Tile & size <i>x</i>'
XSS_README = """# Hostile README

Some *emphasis* and `code`.

<script>window.__pwned = "readme"</script>

<div onmouseover="window.__pwned = 'div'">raw block</div>

Inline <img src=x onerror="window.__pwned = 'img'"> html.

[a javascript link](javascript:window.__pwned='link')

[a fine link](https://example.org/docs)
"""


def hostile_package(root: pathlib.Path) -> pathlib.Path:
    d = root / "hostile"
    d.mkdir(parents=True)
    (d / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": "hostile", "version": "6.6.6",
        "summary": XSS_SUMMARY, "description": XSS_DESCRIPTION,
        "license": "<em>MIT</em>",
        "homepage": "javascript:window.__pwned='homepage'",
        "compiler": {"plugins": [{
            "id": "hal_target_llvm_cpu", "kind": "iree-static",
            "description": "<script>window.__pwned = 'plugin'</script>",
            "options": {"iree-evil-tile": {
                "type": "integer", "default": 4, "minimum": 1,
                "description": XSS_OPTION}}}]}}, indent=2))
    (d / "README.md").write_text(XSS_README)
    return d


# --- fixtures ---------------------------------------------------------------

@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    """A registry with the examples, a yanked version and the hostile
    package, and its site."""
    tmp = tmp_path_factory.mktemp("site")
    ok("key", "generate", "-o", tmp / "k")
    pub = (tmp / "k.pub").read_text().splitlines()[1]
    reg = tmp / "registry"
    ok("registry", "init", reg, "--key", tmp / "k.key", "--name", "examples",
       "--description", "Plugins <for> IREE & friends")
    dist = tmp / "dist"
    archives = [pack(EXAMPLES / "simple-mul", dist),
                pack(EXAMPLES / "mul-pipeline", dist),
                pack(data_package(tmp / "src", "data-only", "1.0.0"), dist),
                pack(data_package(tmp / "src", "data-only", "1.1.0"), dist),
                pack(hostile_package(tmp / "src"), dist)]
    ok("publish", *archives, "--registry", reg, "--key", tmp / "k.key")
    ok("yank", "data-only@1.1.0", "--registry", reg, "--key", tmp / "k.key")
    site = tmp / "site"
    r = ok("registry", "site", reg, "-o", site, "--url", URL, "--json")
    return {"tmp": tmp, "reg": reg, "site": site, "pub": pub,
            "key": tmp / "k.key", "result": json.loads(r.out)}


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium through Selenium. Missing pieces fail the tests."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as e:
        pytest.fail(f"selenium is missing from the test environment ({e}): "
                    "run scripts/setup.sh")
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            pytest.fail(f"{path} is missing: scripts/setup.sh installs Debian's "
                        "chromium and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    options.add_argument("--headless=new")
    options.add_argument("--disable-gpu")
    options.add_argument("--disable-dev-shm-usage")
    options.add_argument(f"--window-size={DESKTOP[0]},{DESKTOP[1]}")
    if os.geteuid() == 0:
        # Chromium refuses to start its sandbox as root; as an ordinary user
        # (the _unprivileged run) it runs sandboxed.
        options.add_argument("--no-sandbox")
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def wait(predicate, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting in the browser")


def open_index(driver, url):
    driver.get(url)
    wait(lambda: driver.execute_script(
        "return document.body.getAttribute('data-search-ready')") == "true")


def clear(element):
    """Empties a text field as a person does (clear() fires no input event)."""
    from selenium.webdriver.common.keys import Keys
    element.send_keys(Keys.CONTROL, "a")
    element.send_keys(Keys.DELETE)


def search(driver, text):
    from selenium.webdriver.common.by import By
    box = driver.find_element(By.ID, "q")
    clear(box)
    if text:
        box.send_keys(text)
    return result_names(driver)


def result_names(driver):
    from selenium.webdriver.common.by import By
    return [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#results a.name")]


def screenshot(driver, path: pathlib.Path, size):
    driver.set_window_size(*size)
    target = os.environ.get("IREEPKG_SITE_SCREENSHOTS")
    if target:
        # For the README: what fits on the screen.
        driver.save_screenshot(str(pathlib.Path(target) / path.name))
    # The whole page, not only what fits in the window.
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(size[0], min(max(height, size[1]), 4000))
    driver.save_screenshot(str(path))
    driver.set_window_size(*size)
    assert path.stat().st_size > 10000


# --- what the command writes -----------------------------------------------

def test_command_output_and_files(registry):
    r = registry["result"]
    assert r["ok"] is True
    assert r["registry_name"] == "examples"
    assert r["packages"] == 4
    assert r["versions"] == 5
    assert r["warnings"] == []
    site = registry["site"]
    files = sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.is_file())
    assert files == [".ireepkg-site", "all.html", "assets/search-index.js",
                     "assets/search.js", "assets/style.css", "index.html",
                     "packages/data-only.html", "packages/hostile.html",
                     "packages/mul-pipeline.html", "packages/simple-mul.html"]
    assert r["files"] == len(files) - 1  # the marker is not counted
    assert r["bytes"] == sum((site / f).stat().st_size for f in files[1:])
    snapshot = json.loads((registry["reg"] / "snapshot.json").read_text())
    assert r["snapshot_version"] == snapshot["version"]
    assert r["expires"] == snapshot["expires"]
    # Nothing is loaded from elsewhere: no URL but the registry's, the
    # packages' own, and the links the README has.
    for f in files[1:]:
        text = (site / f).read_text()
        assert "<script src=\"http" not in text and "<link rel=\"stylesheet\" href=\"http" not in text
        # Nothing from elsewhere, even if a page asked for it.
        if f.endswith(".html"):
            assert ('content="default-src \'none\'; script-src \'self\'; style-src \'self\'; '
                    'img-src \'self\' data:; base-uri \'none\'; form-action \'none\'"') in text, f
    index = (site / "index.html").read_text()
    assert "Plugins &lt;for&gt; IREE &amp; friends" in index
    assert f"ireepkg registry verify {URL} --registry-key {registry['pub']}" in index


def test_text_output_and_rewrite(registry, tmp_path):
    site = tmp_path / "s"
    r = ok("registry", "site", registry["reg"], "-o", site)
    snapshot = json.loads((registry["reg"] / "snapshot.json").read_text())
    first = r.out.splitlines()[0]
    assert first.startswith(f'wrote the site of registry "examples" to {site}: 4 packages, '
                            "5 versions, 9 files, "), first
    assert first.split(", ")[4] == "9 new or changed (snapshot version " + str(snapshot["version"]), first
    key_id = (registry["tmp"] / "k.pub").read_text().splitlines()[0].rsplit(" ", 1)[1]
    assert first.endswith(f"(snapshot version {snapshot['version']}, signed by {key_id}, "
                          f"expires {snapshot['expires']})"), first
    # Without --url the install snippets name the directory as a file:// URL.
    page = (site / "packages" / "simple-mul.html").read_text()
    assert f"ireepkg install simple-mul --registry file://{registry['reg']} " in page
    # Written again: updated in place, only what changed is written, and
    # files that are not part of the site go.
    (site / "stray.html").write_text("x")
    (site / "packages" / "gone.html").write_text("x")
    (site / "packages" / "simple-mul.html").write_text("stale")
    (site / "more").mkdir()
    (site / "more" / "x").write_text("x")
    before = {p: p.stat().st_mtime_ns for p in site.rglob("*.html")}
    r = ok("registry", "site", registry["reg"], "-o", site, "--json")
    assert json.loads(r.out)["written"] == 1
    assert sorted(str(p.relative_to(site)) for p in site.rglob("*")) == [
        ".ireepkg-site", "all.html", "assets", "assets/search-index.js", "assets/search.js",
        "assets/style.css", "index.html", "packages", "packages/data-only.html",
        "packages/hostile.html", "packages/mul-pipeline.html", "packages/simple-mul.html"]
    assert (site / "packages" / "simple-mul.html").read_text() == page
    assert (site / "index.html").stat().st_mtime_ns == before[site / "index.html"]


def test_refuses_to_replace_other_files(registry, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    r = run("registry", "site", registry["reg"], "-o", out)
    assert r.code == 1, r
    assert r.err == (f"ireepkg: error: {out}: is not empty and holds no site written by "
                     "ireepkg (no .ireepkg-site), so it is not replaced\n"
                     "  hint: choose a new or empty directory for the site: on every run, "
                     "whatever in it is not part of the site is removed\n"), r.err
    assert (out / "notes.txt").read_text() == "keep me"
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    r = run("registry", "site", registry["reg"])
    assert r.code == 2, r
    assert "'registry site' needs -o DIR" in r.err


def test_reads_only_through_the_verifying_client(registry, tmp_path):
    reg = tmp_path / "reg"
    shutil.copytree(registry["reg"], reg)
    # A key the registry is not signed with.
    ok("key", "generate", "-o", tmp_path / "other")
    other = (tmp_path / "other.pub").read_text().splitlines()[1]
    r = run("registry", "site", reg, "-o", tmp_path / "a", "--registry-key", other)
    assert r.code == 1, r
    assert "which is not a key you trust for this registry" in r.err, r.err
    assert not (tmp_path / "a").exists()
    # An index file changed behind the snapshot's back.
    idx = reg / "index" / "simple-mul.json"
    idx.write_text(idx.read_text().replace("Element-wise", "Evil-wise"))
    r = run("registry", "site", reg, "-o", tmp_path / "b")
    assert r.code == 1, r
    assert f"index/simple-mul.json of {reg} does not match snapshot.json" in r.err, r.err
    assert not (tmp_path / "b").exists()


def test_archive_missing_or_replaced(registry, tmp_path):
    reg = tmp_path / "reg"
    shutil.copytree(registry["reg"], reg)
    (reg / "archives" / "mul-pipeline" / "mul-pipeline-0.3.0.ireepkg").unlink()
    simple = reg / "archives" / "simple-mul" / "simple-mul-1.2.0.ireepkg"
    data = bytearray(simple.read_bytes())
    data[-1] ^= 1
    simple.write_bytes(bytes(data))
    site = tmp_path / "site"
    r = run("registry", "site", reg, "-o", site)
    assert r.code == 0, r
    assert "ireepkg: warning: package 'mul-pipeline': mul-pipeline 0.3.0: its page shows the index only" in r.err, r.err
    assert ("simple-mul 1.2.0: its page shows the index only: the archive is not the one "
            "its index entry declares") in r.err, r.err
    page = (site / "packages" / "simple-mul.html").read_text()
    assert "Only the index's details are shown" in page
    assert "Runtime plugins" not in page


def test_publish_and_yank_with_site(tmp_path):
    ok("key", "generate", "-o", tmp_path / "k")
    reg = tmp_path / "reg"
    site = reg / "site"
    ok("registry", "init", reg, "--key", tmp_path / "k.key")
    a = pack(data_package(tmp_path / "src", "alpha", "1.0.0"), tmp_path / "dist")
    r = ok("publish", a, "--registry", reg, "--key", tmp_path / "k.key",
           "--site", site, "--site-url", URL)
    assert "wrote the site of registry \"reg\" to " in r.out
    page = (site / "packages" / "alpha.html").read_text()
    assert f"ireepkg install alpha --registry {URL} --registry-key " in page
    assert "yanked" not in page
    ok("yank", "alpha@1.0.0", "--registry", reg, "--key", tmp_path / "k.key",
       "--site", site, "--site-url", URL)
    page = (site / "packages" / "alpha.html").read_text()
    assert '<span class="yanked">yanked</span>' in page
    # A second package: its page, the search index and the lists change;
    # alpha's page does not (pages do not name the snapshot's version).
    b = pack(data_package(tmp_path / "src", "beta", "1.0.0"), tmp_path / "dist")
    r = ok("publish", b, "--registry", reg, "--key", tmp_path / "k.key",
           "--site", site, "--site-url", URL)
    assert ", 4 new or changed (snapshot version 4," in r.out, r.out
    assert (site / "packages" / "alpha.html").read_text() == page
    # resign: the index page's snapshot version and expiry only.
    r = ok("registry", "resign", reg, "--key", tmp_path / "k.key",
           "--site", site, "--site-url", URL)
    assert ", 1 new or changed (snapshot version 5," in r.out, r.out
    assert "version 5, expires " in (site / "index.html").read_text()
    # The registry still verifies: the site inside it changes nothing.
    ok("registry", "verify", reg, "--registry-key", tmp_path / "k.pub")


# --- in the browser -----------------------------------------------------------

def test_search_filters_and_package_page(registry, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    site = registry["site"]
    open_index(browser, (site / "index.html").as_uri())
    assert browser.title == "examples — IREE plugins"
    status = browser.find_element(By.ID, "search-status")
    assert status.text == "4 packages"
    assert result_names(browser) == ["data-only", "hostile", "mul-pipeline", "simple-mul"]

    # Search: the name that starts with the text comes first.
    assert search(browser, "mul") == ["mul-pipeline", "simple-mul"]
    assert status.text == "2 of 4 packages match"
    assert search(browser, "transform-dialect") == ["mul-pipeline"]  # a keyword
    assert search(browser, "no such thing") == []
    assert status.text == "0 of 4 packages match"
    search(browser, "")
    # The yanked version is not the one shown.
    data_only = browser.find_element(By.CSS_SELECTOR, "#results li:first-child")
    assert "1.0.0" in data_only.text and "1.1.0" not in data_only.text

    # Filters: kind, platform, IREE version.
    from selenium.webdriver.support.ui import Select
    Select(browser.find_element(By.ID, "kind")).select_by_visible_text("compiler: iree-static")
    assert result_names(browser) == ["hostile", "mul-pipeline"]
    Select(browser.find_element(By.ID, "kind")).select_by_visible_text("runtime: embedded ELF")
    assert result_names(browser) == ["simple-mul"]
    Select(browser.find_element(By.ID, "kind")).select_by_index(0)
    Select(browser.find_element(By.ID, "platform")).select_by_visible_text("linux-aarch64")
    # Packages without native code run on every platform.
    assert result_names(browser) == ["data-only", "hostile", "mul-pipeline", "simple-mul"]
    Select(browser.find_element(By.ID, "platform")).select_by_index(0)
    iree = browser.find_element(By.ID, "iree")
    iree.send_keys("2.9.0")  # simple-mul and mul-pipeline need >=3.10.0, <4.0.0
    assert result_names(browser) == ["data-only", "hostile"]
    clear(iree)
    iree.send_keys("3.13.0")
    assert result_names(browser) == ["data-only", "hostile", "mul-pipeline", "simple-mul"]
    clear(iree)
    iree.send_keys("3.13")
    assert len(result_names(browser)) == 4
    # The search is in the address, so it can be shared.
    search(browser, "pipeline")
    assert browser.current_url.endswith("#q=pipeline&iree=3.13")
    clear(iree)

    # Keyboard: the first Tab reaches the skip link; the result opens with Enter.
    browser.get((site / "all.html").as_uri())
    browser.get((site / "index.html").as_uri() + "#q=mul-pipeline")
    wait(lambda: result_names(browser) == ["mul-pipeline"])
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    assert browser.switch_to.active_element.text == "Skip to the content"
    link = browser.find_element(By.CSS_SELECTOR, "#results a.name")
    link.send_keys(Keys.ENTER)
    wait(lambda: browser.current_url.endswith("/packages/mul-pipeline.html"))

    # The package page.
    assert browser.find_element(By.TAG_NAME, "h1").text == "mul-pipeline 0.3.0"
    rows = [[c.text for c in tr.find_elements(By.CSS_SELECTOR, "th, td")]
            for tr in browser.find_elements(By.CSS_SELECTOR, "table.options tbody tr")]
    # One table per plugin, in the manifest's order.
    assert rows == [
        ["iree-torch-decompose-complex-ops", "boolean", "true",
         "Decompose complex torch operations"],
        ["iree-llvmcpu-distribution-size", "integer, 1 to 1024", "none",
         "Default distribution tile size of the CPU backend (the compiler's own default when unset)"],
    ]
    snippets = [p.text for p in browser.find_elements(By.CSS_SELECTOR, "#main pre")]
    assert "ireepkg add mul-pipeline" in snippets
    assert f"ireepkg install mul-pipeline --registry {URL} --registry-key {registry['pub']}" in snippets
    entry = json.loads(next(s for s in snippets if s.startswith("{")))
    assert entry == {"registries": [{"name": "examples", "url": URL, "public_key": registry["pub"]}],
                     "plugins": [{"name": "mul-pipeline", "version": "^0.3.0", "registry": "examples"}]}
    text = browser.find_element(By.ID, "main").text
    assert "Requires IREE\n>=3.10.0, <4.0.0" in text
    hooks = [[c.text for c in tr.find_elements(By.TAG_NAME, "td")] for tr in browser.find_elements(
        By.XPATH, "//h2[@id='hooks']/following-sibling::div[1]//tbody/tr")]
    assert hooks == [["preprocessing", "pipeline func.func(canonicalize)", ""],
                     ["transform-spec", "file specs/mul_spec.mlir", ""]], hooks
    tags = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#main > .wrap > .tag")]
    assert tags == ["compiler: iree-static", "hook: preprocessing", "hook: transform-spec"], tags
    dep = browser.find_element(By.LINK_TEXT, "simple-mul")
    sha = json.loads((registry["reg"] / "index" / "mul-pipeline.json").read_text())["versions"][0]["sha256"]
    assert sha in text
    dep.click()
    wait(lambda: browser.current_url.endswith("/packages/simple-mul.html"))
    text = browser.find_element(By.ID, "main").text
    assert "Dependents\nmul-pipeline" in text
    rt = [[c.text for c in tr.find_elements(By.TAG_NAME, "td")]
          for tr in browser.find_elements(By.CSS_SELECTOR, "#main h2#runtime ~ div table tbody tr")]
    assert ["x86_64", "runtime/simple_mul.x86_64.so", "simple_mul_workgroup"] in rt, rt

    # Yanked versions are marked.
    browser.get((site / "packages" / "data-only.html").as_uri())
    versions = [tr.text for tr in browser.find_elements(
        By.XPATH, "//h2[@id='versions']/following-sibling::div[1]//tbody/tr")]
    assert versions[0].startswith("1.1.0 yanked"), versions
    assert versions[1].startswith("1.0.0 any"), versions


def test_screenshots_phone_and_desktop(registry, browser, tmp_path):
    site = registry["site"]
    for name, size in (("desktop", DESKTOP), ("phone", PHONE)):
        browser.set_window_size(*size)
        open_index(browser, (site / "index.html").as_uri() + "#q=mul")
        # Nothing wider than the screen.
        assert browser.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth"), name
        screenshot(browser, tmp_path / f"registry-site-{name}.png", size)
        browser.get((site / "packages" / "mul-pipeline.html").as_uri())
        assert browser.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth"), name
        screenshot(browser, tmp_path / f"registry-site-package-{name}.png", size)
    browser.set_window_size(*DESKTOP)


def test_hostile_package_is_shown_as_text(registry, browser):
    from selenium.webdriver.common.by import By
    site = registry["site"]
    open_index(browser, (site / "index.html").as_uri())
    assert search(browser, "hostile") == ["hostile"]
    li = browser.find_element(By.CSS_SELECTOR, "#results li")
    assert XSS_SUMMARY in li.text
    assert "<em>MIT</em>" in li.text

    browser.get((site / "packages" / "hostile.html").as_uri())
    assert browser.execute_script("return window.__pwned === undefined")
    # Our own scripts only (the package page has none), no element from the
    # package's text.
    assert browser.find_elements(By.TAG_NAME, "script") == []
    assert browser.find_elements(By.CSS_SELECTOR, "[onerror], [onmouseover], img, b, i") == []
    # (the README's own *emphasis* is the one <em>)
    assert browser.find_elements(By.XPATH, "//em[not(ancestor::article)]") == []
    main = browser.find_element(By.ID, "main").text
    assert XSS_SUMMARY in main
    assert XSS_DESCRIPTION in main
    assert "Licence\n<em>MIT</em>" in main
    assert "Homepage\njavascript:window.__pwned='homepage'" in main
    assert browser.find_elements(By.XPATH, "//a[starts-with(@href, 'javascript:')]") == []
    row = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "table.options tbody tr > *")]
    assert row == ["iree-evil-tile", "integer, at least 1", "4", XSS_OPTION]
    # The README is rendered, without its raw HTML and its javascript: link.
    readme = browser.find_element(By.CSS_SELECTOR, "article.readme")
    assert readme.find_element(By.TAG_NAME, "h1").text == "Hostile README"
    assert readme.find_element(By.TAG_NAME, "em").text == "emphasis"
    assert "raw block" not in readme.text and "__pwned" not in readme.text
    links = {a.text: a.get_attribute("href") for a in readme.find_elements(By.TAG_NAME, "a")}
    assert links == {"a javascript link": None, "a fine link": "https://example.org/docs"} or \
        links == {"a javascript link": "", "a fine link": "https://example.org/docs"}, links
    # Hovering and clicking everything changes nothing.
    for a in readme.find_elements(By.TAG_NAME, "a")[:1]:
        a.click()
    assert browser.execute_script("return window.__pwned === undefined")
    html = (site / "packages" / "hostile.html").read_text()
    assert "<script>" not in html and "onerror=" not in html.replace("onerror=&quot;", "")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_over_http(registry, browser):
    from functools import partial
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), partial(_Quiet, directory=str(registry["site"])))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        open_index(browser, base + "/index.html")
        # (mul-pipeline names simple-mul in its summary: a weaker match)
        assert search(browser, "simple") == ["simple-mul", "mul-pipeline"]
        from selenium.webdriver.common.by import By
        browser.find_element(By.LINK_TEXT, "simple-mul").click()
        wait(lambda: browser.current_url == base + "/packages/simple-mul.html")
        assert browser.find_element(By.TAG_NAME, "h1").text == "simple-mul 1.2.0"
        # The style sheet applied (a same-origin file the policy allows).
        assert browser.execute_script(
            "return getComputedStyle(document.querySelector('header.site')).borderBottomStyle") == "solid"
    finally:
        server.shutdown()
        server.server_close()


def serve(directory):
    from functools import partial
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), partial(_Quiet, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_from_a_remote_registry(registry, tmp_path):
    server = serve(registry["reg"])
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        # A URL needs a trusted key: config.json is not trusted by itself.
        r = run("registry", "site", url, "-o", tmp_path / "a", timeout=TIMEOUT)
        assert r.code == 1, r
        assert f"no trusted key is configured for registry {url}" in r.err, r.err
        assert not (tmp_path / "a").exists()
        cache = tmp_path / "cache"
        r = run("registry", "site", url, "-o", tmp_path / "b", "--registry-key", registry["pub"],
                "--json", env={"IREEPKG_CACHE_DIR": str(cache)}, timeout=TIMEOUT)
        assert r.code == 0, r
        assert json.loads(r.out)["warnings"] == []
        # The newest archives came through the download cache, verified.
        downloaded = sorted(p.name for p in (cache / "downloads").rglob("*.ireepkg"))
        assert len(downloaded) == 4, downloaded
        page = (tmp_path / "b" / "packages" / "mul-pipeline.html").read_text()
        assert "iree-torch-decompose-complex-ops" in page
        assert f"ireepkg install mul-pipeline --registry {url} --registry-key {registry['pub']}" in page
        # The same pages as from the directory, but for the URL they name.
        local = (registry["site"] / "packages" / "mul-pipeline.html").read_text()
        assert page.replace(url, URL) == local
    finally:
        server.shutdown()
        server.server_close()


def test_index_only(registry, tmp_path):
    r = ok("registry", "site", registry["reg"], "-o", tmp_path / "s", "--index-only", "--json")
    assert json.loads(r.out)["warnings"] == []
    page = (tmp_path / "s" / "packages" / "mul-pipeline.html").read_text()
    assert "Compiler side of the simple-mul example" in page  # from the index
    assert "iree-torch-decompose-complex-ops" not in page   # from the manifest
    assert "Only the index" not in page


def test_pages_are_semantic_and_accessible(registry, browser):
    """Every page: a language, one h1, landmarks, a skip link to main,
    labelled fields, headed tables, no image without alt text."""
    site = registry["site"]
    pages = ["index.html", "all.html"] + [f"packages/{p.name}" for p in sorted((site / "packages").iterdir())]
    assert len(pages) == 6
    for page in pages:
        browser.get((site / page).as_uri())
        facts = browser.execute_script("""
            const q = s => document.querySelectorAll(s);
            return {
              lang: document.documentElement.lang,
              h1: q('h1').length - q('article.readme h1').length,
              main: q('main#main').length, header: q('header').length,
              footer: q('footer').length, nav: q('nav[aria-label]').length,
              skip: document.querySelector('a.skip').getAttribute('href'),
              unlabelled: [...q('input, select')].filter(e => !e.labels.length).length,
              headless: [...q('table')].filter(t => !t.querySelector('thead th[scope=col]')).length,
              noalt: [...q('img')].filter(i => !i.hasAttribute('alt')).length,
              viewport: !!document.querySelector('meta[name=viewport]'),
            };""")
        assert facts == {"lang": "en", "h1": 1, "main": 1, "header": 1, "footer": 1, "nav": 1,
                         "skip": "#main", "unlabelled": 0, "headless": 0, "noalt": 0,
                         "viewport": True}, (page, facts)
