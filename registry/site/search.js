// The registry site's search: filters the prebuilt index
// (search-index.js, window.IREEPKG_SEARCH) in the browser. Text from
// packages is only ever put into the page with textContent, never as HTML.
(function () {
  "use strict";
  var data = window.IREEPKG_SEARCH;
  var form = document.getElementById("search-form");
  if (!data || !form) return;
  var q = document.getElementById("q");
  var platform = document.getElementById("platform");
  var kind = document.getElementById("kind");
  var iree = document.getElementById("iree");
  var status = document.getElementById("search-status");
  var list = document.getElementById("results");
  var more = document.getElementById("more");
  var PAGE = 50;
  var limit = PAGE;
  var pk = data.packages;

  // Lower-cased text to search, computed once.
  var hay = new Array(pk.length);
  var names = new Array(pk.length);
  for (var i = 0; i < pk.length; i++) {
    names[i] = pk[i].n.toLowerCase();
    hay[i] = names[i] + "\n" + (pk[i].s || "").toLowerCase() + "\n" +
             (pk[i].w || "").toLowerCase();
  }

  function addOptions(select, values) {
    for (var j = 0; j < values.length; j++) {
      var o = document.createElement("option");
      o.value = String(j);
      o.textContent = values[j];
      select.appendChild(o);
    }
  }
  addOptions(platform, data.platforms);
  addOptions(kind, data.kinds);

  // A release version "3.13.0" (or "3.13", "3") as [3, 13, 0]; null if not.
  function parseVersion(text) {
    var m = /^\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$/.exec(text);
    if (!m) return null;
    return [+m[1], +(m[2] || 0), +(m[3] || 0)];
  }
  function core(text) {
    var m = /^(\d+)\.(\d+)\.(\d+)/.exec(text);
    return m ? [+m[1], +m[2], +m[3]] : null;
  }
  function cmp(a, b) {
    for (var j = 0; j < 3; j++) if (a[j] !== b[j]) return a[j] < b[j] ? -1 : 1;
    return 0;
  }
  // requires.iree in its canonical form (">=3.10.0, <4.0.0 || 5.0.0"),
  // checked for a release version.
  var parsedIree = {};
  function ireeAllows(text, v) {
    if (!text || text === "*") return true;
    var alts = parsedIree[text];
    if (!alts) {
      alts = text.split("||").map(function (alt) {
        return alt.split(",").map(function (c) {
          c = c.trim();
          var m = /^(>=|<=|>|<|=)?\s*(.*)$/.exec(c);
          return { op: m[1] || "=", v: core(m[2]) };
        });
      });
      parsedIree[text] = alts;
    }
    return alts.some(function (alt) {
      return alt.every(function (c) {
        if (!c.v) return true;
        var r = cmp(v, c.v);
        switch (c.op) {
          case ">=": return r >= 0;
          case ">": return r > 0;
          case "<=": return r <= 0;
          case "<": return r < 0;
          default: return r === 0;
        }
      });
    });
  }

  function search() {
    var t0 = performance.now();
    var terms = q.value.toLowerCase().split(/\s+/).filter(Boolean);
    var whole = terms.join(" ");
    var p = platform.value === "" ? -1 : +platform.value;
    var k = kind.value === "" ? -1 : +kind.value;
    var iv = iree.value.trim() === "" ? null : parseVersion(iree.value);
    iree.setAttribute("aria-invalid", iree.value.trim() !== "" && !iv ? "true" : "false");
    var hits = [];
    for (var i = 0; i < pk.length; i++) {
      var e = pk[i];
      // A package without native code runs on every platform.
      if (p >= 0 && e.p.length && e.p.indexOf(p) < 0) continue;
      if (k >= 0 && e.k.indexOf(k) < 0) continue;
      if (iv && !ireeAllows(e.i, iv)) continue;
      var h = hay[i], ok = true;
      for (var t = 0; t < terms.length && ok; t++) ok = h.indexOf(terms[t]) >= 0;
      if (!ok) continue;
      var n = names[i];
      var score = !terms.length ? 3 : n === whole ? 0 : n.indexOf(whole) === 0 ? 1 :
                  n.indexOf(terms[0]) >= 0 ? 2 : 3;
      hits.push(score * 1e7 + i);
    }
    hits.sort(function (a, b) { return a - b; });
    render(hits);
    var ms = performance.now() - t0;
    document.body.setAttribute("data-search-ms", ms.toFixed(2));
    document.body.setAttribute("data-search-count", String(hits.length));
  }

  function render(hits) {
    var frag = document.createDocumentFragment();
    var shown = Math.min(hits.length, limit);
    for (var j = 0; j < shown; j++) {
      var e = pk[hits[j] % 1e7];
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.className = "name";
      a.href = "packages/" + encodeURIComponent(e.n) + ".html";
      a.textContent = e.n;
      var ver = document.createElement("span");
      ver.className = "ver";
      ver.textContent = e.v + (e.y ? " (yanked)" : "");
      var s = document.createElement("p");
      s.textContent = e.s || "";
      var meta = document.createElement("p");
      meta.className = "muted";
      var bits = [];
      if (e.l) bits.push(e.l);
      bits.push(e.p.length ? e.p.map(function (x) { return data.platforms[x]; }).join(", ")
                           : "any platform");
      if (e.k.length) bits.push(e.k.map(function (x) { return data.kinds[x]; }).join(", "));
      if (e.i) bits.push("IREE " + e.i);
      meta.textContent = bits.join(" \u00b7 ");
      li.appendChild(a);
      li.appendChild(ver);
      li.appendChild(s);
      li.appendChild(meta);
      frag.appendChild(li);
    }
    list.replaceChildren(frag);
    status.textContent = hits.length === pk.length && !q.value.trim() ?
        pk.length + " package" + (pk.length === 1 ? "" : "s") +
            (shown < hits.length ? ", showing the first " + shown : "") :
        hits.length + " of " + pk.length + " packages match" +
            (shown < hits.length ? ", showing the first " + shown : "");
    more.hidden = shown >= hits.length;
  }

  // The search is part of the address (#q=...), so it can be shared.
  function fromHash() {
    var params = new URLSearchParams(location.hash.slice(1));
    q.value = params.get("q") || "";
    platform.value = params.get("platform") || "";
    kind.value = params.get("kind") || "";
    iree.value = params.get("iree") || "";
  }
  function toHash() {
    var params = new URLSearchParams();
    if (q.value) params.set("q", q.value);
    if (platform.value) params.set("platform", platform.value);
    if (kind.value) params.set("kind", kind.value);
    if (iree.value) params.set("iree", iree.value);
    var h = params.toString();
    history.replaceState(null, "", h ? "#" + h : location.pathname + location.search);
  }
  function update() { limit = PAGE; search(); toHash(); }
  form.addEventListener("submit", function (ev) { ev.preventDefault(); update(); });
  [q, iree].forEach(function (el) { el.addEventListener("input", update); });
  [platform, kind].forEach(function (el) { el.addEventListener("change", update); });
  more.addEventListener("click", function () { limit += PAGE * 4; search(); });
  window.addEventListener("hashchange", function () { fromHash(); limit = PAGE; search(); });
  fromHash();
  document.getElementById("search-js").hidden = false;
  search();
  document.body.setAttribute("data-search-ready", "true");
})();
