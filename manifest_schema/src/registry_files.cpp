//===- manifest_schema/src/registry_files.cpp -----------------------------===//
//
// Registry config, snapshot and index.
//
// Parses and checks a registry's metadata files (formats.md §5), and detects
// which format a file is.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/suggest.h"
#include "checker.h"

#include <array>
#include <filesystem>
#include <set>

namespace ireepkg {

using namespace detail;

bool isSha256Hex(std::string_view s) {
  return s.size() == 64 &&
         s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool isMinisignPublicKey(std::string_view key) {
  // base64 of 42 bytes ("Ed" + 8-byte key id + 32-byte Ed25519 key).
  if (key.size() != 56 || key.substr(0, 2) != "RW")
    return false;
  return key.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv"
                               "wxyz0123456789+/") == std::string_view::npos;
}

std::optional<int64_t> parseRfc3339(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  auto digits = [&](size_t pos, size_t n) -> std::optional<int> {
    if (pos + n > t.size())
      return std::nullopt;
    int v = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (t[i] < '0' || t[i] > '9')
        return std::nullopt;
      v = v * 10 + (t[i] - '0');
    }
    return v;
  };
  if (t.size() < 20 || t[4] != '-' || t[7] != '-' ||
      (t[10] != 'T' && t[10] != 't') || t[13] != ':' || t[16] != ':')
    return std::nullopt;
  auto Y = digits(0, 4), M = digits(5, 2), D = digits(8, 2), h = digits(11, 2),
       m = digits(14, 2), s = digits(17, 2);
  if (!Y || !M || !D || !h || !m || !s)
    return std::nullopt;
  static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (*Y % 4 == 0 && *Y % 100 != 0) || *Y % 400 == 0;
  if (*M < 1 || *M > 12 || *D < 1 || *D > mdays[*M - 1] ||
      (*M == 2 && *D == 29 && !leap) || *h > 23 || *m > 59 || *s > 60)
    return std::nullopt;
  size_t pos = 19;
  if (pos < t.size() && t[pos] == '.') {
    ++pos;
    size_t start = pos;
    while (pos < t.size() && t[pos] >= '0' && t[pos] <= '9')
      ++pos;
    if (pos == start)
      return std::nullopt;
  }
  int offset = 0;
  if (pos < t.size() && (t[pos] == 'Z' || t[pos] == 'z')) {
    ++pos;
  } else if (pos < t.size() && (t[pos] == '+' || t[pos] == '-')) {
    auto oh = digits(pos + 1, 2), om = digits(pos + 4, 2);
    if (!oh || !om || pos + 3 >= t.size() || t[pos + 3] != ':' || *oh > 23 ||
        *om > 59)
      return std::nullopt;
    offset = (t[pos] == '+' ? 1 : -1) * (*oh * 3600 + *om * 60);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != t.size())
    return std::nullopt;
  // Days from civil (proleptic Gregorian).
  int y = *Y - (*M <= 2);
  int era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = static_cast<unsigned>(y - era * 400);
  unsigned mp = static_cast<unsigned>((*M + 9) % 12);
  unsigned doy = (153 * mp + 2) / 5 + static_cast<unsigned>(*D) - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  int64_t days = static_cast<int64_t>(era) * 146097 + doe - 719468;
  return days * 86400 + *h * 3600 + *m * 60 + std::min(*s, 59) - offset;
}

static void readKeys(Checker &checker, ObjectReader &r, Need need,
                     std::vector<std::string> &out) {
  auto keys = r.stringArray("keys", need);
  if (!keys)
    return;
  for (size_t i = 0; i < keys->size(); ++i) {
    if (isMinisignPublicKey((*keys)[i]))
      out.push_back((*keys)[i]);
    else
      checker.error(r.child("keys") + "/" + std::to_string(i),
                    "\"" + (*keys)[i] + "\" is not a minisign public key",
                    "a minisign public key is the 56-character base64 line "
                    "starting with \"RW\" in the .pub file");
  }
}

RegistryConfig parseRegistryConfig(const JsonDocument &doc,
                                   const ParseOptions &options,
                                   DiagnosticList &diags) {
  RegistryConfig c;
  Checker checker(doc, options, diags);
  ObjectReader r(checker, doc.root(), "");
  if (!r.valid())
    return c;
  if (const json *v = r.any("schema_version", Need::Required))
    checker.schemaVersion(*v, r.child("schema_version"), "schema_version");
  if (auto n = r.string("name", Need::Required);
      n && checker.packageName(*n, r.child("name")))
    c.name = *n;
  readKeys(checker, r, Need::Required, c.keys);
  if (auto m = r.stringArray("mirrors"))
    c.mirrors = *m;
  if (auto d = r.string("description", Need::Optional, false))
    c.description = *d;
  r.finish();
  return c;
}

RegistrySnapshot parseRegistrySnapshot(const JsonDocument &doc,
                                       const ParseOptions &options,
                                       DiagnosticList &diags) {
  RegistrySnapshot s;
  Checker checker(doc, options, diags);
  ObjectReader r(checker, doc.root(), "");
  if (!r.valid())
    return s;
  if (const json *v = r.any("schema_version", Need::Required))
    checker.schemaVersion(*v, r.child("schema_version"), "schema_version");
  if (auto v = r.integer("version", Need::Required)) {
    if (*v < 1)
      checker.error(r.child("version"), "must be 1 or more");
    s.version = *v;
  }
  if (auto e = r.string("expires", Need::Required)) {
    if (auto t = parseRfc3339(*e)) {
      s.expires = *e;
      s.expiresUnix = *t;
    } else {
      checker.error(r.child("expires"),
                    "\"" + *e + "\" is not an RFC 3339 date-time",
                    "write it like 2027-01-31T00:00:00Z");
    }
  }
  if (const json *idx = r.object("index", Need::Required)) {
    std::string mapPtr = r.child("index");
    for (auto it = idx->begin(); it != idx->end(); ++it) {
      std::string p = mapPtr + "/" + jsonPointerEscape(it.key());
      if (!checker.packageName(it.key(), mapPtr, p))
        continue;
      if (!it->is_string()) {
        checker.error(p, "must be a string, not " + describeType(*it));
        continue;
      }
      std::string h = it->get<std::string>();
      if (h.rfind("sha256:", 0) != 0 || !isSha256Hex(h.substr(7))) {
        checker.error(p, "\"" + h + "\" is not a sha256:<64 hex digits> hash");
        continue;
      }
      s.index.emplace(it.key(), h);
    }
  }
  r.finish();
  return s;
}

RegistryIndex parseRegistryIndex(const JsonDocument &doc,
                                 const ParseOptions &options,
                                 DiagnosticList &diags) {
  RegistryIndex idx;
  Checker checker(doc, options, diags);
  ObjectReader r(checker, doc.root(), "");
  if (!r.valid())
    return idx;
  if (const json *v = r.any("schema_version", Need::Required))
    checker.schemaVersion(*v, r.child("schema_version"), "schema_version");
  if (auto n = r.string("name", Need::Required);
      n && checker.packageName(*n, r.child("name")))
    idx.name = *n;
  if (const json *versions = r.array("versions", Need::Required)) {
    std::vector<Version> seen;
    for (size_t i = 0; i < versions->size(); ++i) {
      std::string p = r.child("versions") + "/" + std::to_string(i);
      ObjectReader vr(checker, (*versions)[i], p);
      if (!vr.valid())
        continue;
      IndexEntry e;
      if (const json *v = vr.any("version", Need::Required))
        if (auto ver = checker.version(*v, vr.child("version"))) {
          e.version = *ver;
          for (const Version &other : seen)
            if (other == *ver)
              checker.error(vr.child("version"),
                            "version " + ver->str() +
                                " is listed more than once");
          seen.push_back(*ver);
        }
      if (auto s = vr.string("summary", Need::Optional, false)) {
        e.summary = *s;
        checker.summary(*s, vr.child("summary"));
      }
      if (const json *deps = vr.object("dependencies")) {
        std::string mapPtr = vr.child("dependencies");
        for (auto it = deps->begin(); it != deps->end(); ++it) {
          std::string dp = mapPtr + "/" + jsonPointerEscape(it.key());
          if (!checker.packageName(it.key(), mapPtr, dp))
            continue;
          if (it.key() == idx.name) {
            checker.errorAtKey(dp, mapPtr,
                               "package \"" + idx.name + "\" depends on itself");
            continue;
          }
          if (auto c = checker.constraint(*it, dp))
            e.dependencies.emplace(it.key(), *c);
        }
      }
      if (const json *req = vr.object("requires")) {
        ObjectReader rr(checker, *req, vr.child("requires"));
        if (const json *v = rr.any("iree"))
          e.requiresIree = checker.constraint(*v, rr.child("iree"));
        rr.finish();
      }
      if (auto plats = vr.stringArray("platforms", Need::Required))
        for (size_t k = 0; k < plats->size(); ++k) {
          if (auto pl = Platform::parse((*plats)[k]))
            e.platforms.push_back(*pl);
          else
            checker.error(vr.child("platforms") + "/" + std::to_string(k),
                          "\"" + (*plats)[k] + "\" is not a platform" +
                              didYouMean((*plats)[k], platformNames()));
        }
      if (auto a = vr.string("archive", Need::Required);
          a && checker.packagePath(*a, vr.child("archive")))
        e.archive = *a;
      if (auto s = vr.string("sha256", Need::Required)) {
        if (isSha256Hex(*s))
          e.sha256 = *s;
        else
          checker.error(vr.child("sha256"),
                        "\"" + *s + "\" is not 64 lowercase hex digits");
      }
      if (auto sz = vr.integer("size", Need::Required)) {
        if (*sz < 0)
          checker.error(vr.child("size"), "must not be negative");
        else
          e.size = static_cast<uint64_t>(*sz);
      }
      if (auto y = vr.boolean("yanked"))
        e.yanked = *y;
      vr.finish();
      idx.versions.push_back(std::move(e));
    }
  }
  r.finish();
  return idx;
}

static constexpr std::array<std::string_view, 6> kKindNames = {
    "manifest", "project", "lock", "registry-config", "snapshot", "index"};

std::span<const std::string_view> fileKindNames() { return kKindNames; }
std::string_view fileKindName(FileKind kind) {
  return kKindNames[static_cast<size_t>(kind)];
}
std::optional<FileKind> parseFileKind(std::string_view name) {
  for (size_t i = 0; i < kKindNames.size(); ++i)
    if (kKindNames[i] == name)
      return static_cast<FileKind>(i);
  return std::nullopt;
}

std::optional<FileKind> detectFileKind(const std::string &path) {
  std::filesystem::path p(path);
  std::string name = p.filename().string();
  if (name == "ireeplugin.json")
    return FileKind::Manifest;
  if (name == "plugins.json")
    return FileKind::Project;
  if (name == "plugins.lock.json")
    return FileKind::Lock;
  if (name == "config.json")
    return FileKind::RegistryConfig;
  if (name == "snapshot.json")
    return FileKind::Snapshot;
  if (p.parent_path().filename() == "index" && p.extension() == ".json")
    return FileKind::Index;
  return std::nullopt;
}

namespace {

void checkDocument(Expected<JsonDocument> doc, const std::string &path,
                   FileKind kind, const ParseOptions &options,
                   DiagnosticList &diags) {
  if (!doc) {
    if (doc.error().diagnostics.empty())
      diags.error(doc.error().where, doc.error().message, doc.error().hint);
    else
      for (const Diagnostic &d : doc.error().diagnostics)
        diags.add(d);
    return;
  }
  DiagnosticList local;
  switch (kind) {
  case FileKind::Manifest:
    parseManifest(*doc, options, local);
    break;
  case FileKind::Project:
    parseProjectFile(*doc, options, local);
    break;
  case FileKind::Lock:
    parseLockfile(*doc, options, local);
    break;
  case FileKind::RegistryConfig:
    parseRegistryConfig(*doc, options, local);
    break;
  case FileKind::Snapshot:
    parseRegistrySnapshot(*doc, options, local);
    break;
  case FileKind::Index: {
    RegistryIndex idx = parseRegistryIndex(*doc, options, local);
    // Inside a registry (index/ beside snapshot.json or config.json), the
    // file name is the package name.
    std::filesystem::path p(path);
    std::filesystem::path root = p.parent_path().parent_path();
    std::error_code ec;
    bool inRegistry = p.parent_path().filename() == "index" &&
                      (std::filesystem::exists(root / "snapshot.json", ec) ||
                       std::filesystem::exists(root / "config.json", ec));
    if (!idx.name.empty() && inRegistry && p.stem().string() != idx.name)
      local.error(doc->locate("/name"),
                  "index file " + p.filename().string() +
                      " describes package \"" + idx.name + "\"",
                  "index/<name>.json must describe <name>");
    break;
  }
  }
  local.sort();
  diags.append(local);
}

} // namespace

void checkFile(const std::string &path, FileKind kind,
               const ParseOptions &options, DiagnosticList &diags) {
  checkDocument(JsonDocument::load(path), path, kind, options, diags);
}

void checkText(std::string_view text, const std::string &shownPath,
               FileKind kind, const ParseOptions &options,
               DiagnosticList &diags) {
  checkDocument(JsonDocument::parse(text, shownPath), shownPath, kind,
                options, diags);
}

} // namespace ireepkg
