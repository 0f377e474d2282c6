//===- record.cpp - .ireepkg/RECORD.json ---------------------------------===//
//
// The list of an archive's members with their SHA-256 and size. Written
// sorted and canonical so that packing is reproducible.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/package.h"

#include "ireepkg/platform.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace ireepkg {

uint64_t Record::totalSize() const {
  uint64_t total = 0;
  for (const RecordEntry &e : files)
    total += e.size;
  return total;
}

const RecordEntry *Record::find(std::string_view path) const {
  auto it = std::lower_bound(
      files.begin(), files.end(), path,
      [](const RecordEntry &e, std::string_view p) { return e.path < p; });
  return it != files.end() && it->path == path ? &*it : nullptr;
}

std::string serializeRecord(const Record &record) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["files"] = nlohmann::ordered_json::array();
  for (const RecordEntry &e : record.files) {
    nlohmann::ordered_json f;
    f["path"] = e.path;
    f["sha256"] = e.sha256;
    f["size"] = e.size;
    if (e.executable)
      f["executable"] = true;
    j["files"].push_back(std::move(f));
  }
  return j.dump(1) + "\n";
}

Expected<Record> parseRecord(std::string_view text, const std::string &where) {
  auto fail = [&](const std::string &msg) {
    return makeError(ErrorCode::Integrity, msg,
                     Location{"", 0, 0, "", "", where},
                     "the archive is corrupted or was not made by `ireepkg "
                     "pack`");
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return fail("is not valid JSON");
  if (!j.contains("schema_version") || !j["schema_version"].is_number_integer())
    return fail("has no schema_version");
  if (j["schema_version"].get<int64_t>() != 1)
    return makeError(ErrorCode::Unsupported,
                     "schema_version " + j["schema_version"].dump() +
                         " is newer than this ireepkg understands",
                     Location{"", 0, 0, "", "", where},
                     "upgrade ireepkg to install this package");
  if (!j.contains("files") || !j["files"].is_array())
    return fail("has no files list");
  Record r;
  for (const auto &f : j["files"]) {
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string() ||
        !f.contains("sha256") || !f["sha256"].is_string() ||
        !f.contains("size") || !f["size"].is_number_unsigned())
      return fail("has a malformed entry: " + f.dump().substr(0, 200));
    RecordEntry e;
    e.path = f["path"].get<std::string>();
    e.sha256 = f["sha256"].get<std::string>();
    e.size = f["size"].get<uint64_t>();
    if (f.contains("executable"))
      e.executable = f["executable"].is_boolean() && f["executable"].get<bool>();
    std::string problem = packagePathProblem(e.path);
    if (!problem.empty())
      return fail("lists \"" + e.path + "\", " + problem);
    if (e.sha256.size() != 64 ||
        e.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
      return fail("has a malformed hash for \"" + e.path + "\"");
    if (!r.files.empty() && r.files.back().path >= e.path)
      return fail(r.files.back().path == e.path
                      ? "lists \"" + e.path + "\" twice"
                      : "is not sorted by path");
    r.files.push_back(std::move(e));
  }
  return r;
}

} // namespace ireepkg
