//===- pkg/src/package/record.cpp - .ireepkg/RECORD.json ------------------===//
//
// The list of an archive's members with their SHA-256 and size. Written
// sorted and canonical so that packing is reproducible.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/manifest_schema/names.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/manifest_schema/platform.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace ireepkg {

uint64_t Record::totalSize() const {
  // parseRecord refuses a RECORD whose sizes overflow; a Record built
  // another way saturates rather than wraps, so it can never look small.
  uint64_t total = 0;
  for (const RecordEntry &e : files)
    if (__builtin_add_overflow(total, e.size, &total))
      return UINT64_MAX;
  return total;
}

std::string packageLimitProblem(const Record &record, size_t recordBytes,
                                const ArchiveLimits &limits) {
  // The archive's members: RECORD itself and every file it lists.
  if (record.files.size() + 1 > limits.maxMembers)
    return "it has " + std::to_string(record.files.size() + 1) +
           " members, more than the limit of " +
           std::to_string(limits.maxMembers);
  if (recordBytes > kMaxRecordBytes)
    return ".ireepkg/RECORD.json would be " + std::to_string(recordBytes) +
           " bytes, more than the limit of " +
           std::to_string(kMaxRecordBytes);
  uint64_t total = record.totalSize();
  if (total > limits.maxUnpackedBytes)
    return "it unpacks to " + std::to_string(total) +
           " bytes, more than the limit of " +
           std::to_string(limits.maxUnpackedBytes);
  for (const RecordEntry &e : record.files)
    if (e.path == kManifestName && e.size > kMaxManifestBytes)
      return std::string(kManifestName) + " is " + std::to_string(e.size) +
             " bytes, more than the limit of " +
             std::to_string(kMaxManifestBytes);
  return {};
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
  if (record.testsSkipped)
    j["tests_skipped"] = true;
  return j.dump(1) + "\n";
}

Expected<Record> parseRecord(std::string_view text, const std::string &where) {
  auto fail = [&](const std::string &msg, const std::string &pointer = "") {
    return makeError(ErrorCode::Integrity, msg,
                     Location{"", 0, 0, pointer, "", where},
                     "the archive is corrupted or was not made by `ireepkg "
                     "pack`");
  };
  // RECORD is an object holding an array of flat objects: nothing in it
  // nests deeper than 3 levels.
  JsonParseOptions limits;
  limits.maxDepth = 8;
  limits.maxBytes = kMaxRecordBytes;
  auto parsed = parseJson(text, where, limits);
  if (!parsed) {
    const Error &e = parsed.error();
    std::string why = e.message;
    if (!e.diagnostics.empty())
      why = e.diagnostics.front().message;
    return fail("is not valid JSON: " + why);
  }
  const nlohmann::json &j = *parsed;
  if (!j.is_object())
    return fail("is not a JSON object");
  auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer())
    return fail("has no schema_version", "/schema_version");
  if (version->get<int64_t>() != 1)
    return makeError(ErrorCode::Unsupported,
                     "schema_version " +
                         std::to_string(version->get<int64_t>()) +
                         " is newer than this ireepkg understands",
                     Location{"", 0, 0, "/schema_version", "", where},
                     "upgrade ireepkg to install this package");
  auto list = j.find("files");
  if (list == j.end() || !list->is_array())
    return fail("has no files list", "/files");
  Record r;
  r.files.reserve(list->size());
  uint64_t total = 0;
  for (size_t i = 0; i < list->size(); ++i) {
    const nlohmann::json &f = (*list)[i];
    const std::string at = "/files/" + std::to_string(i);
    // Messages name the entry by its pointer and quote nothing of it whole.
    if (!f.is_object())
      return fail("has a malformed entry (" + describeJsonType(f) +
                      ", not an object)",
                  at);
    for (const char *key : {"path", "sha256"}) {
      auto v = f.find(key);
      if (v == f.end() || !v->is_string())
        return fail(std::string("has an entry without a string \"") + key +
                        "\"",
                    at + "/" + key);
    }
    auto size = f.find("size");
    if (size == f.end() || !size->is_number_unsigned())
      return fail("has an entry without a non-negative integer \"size\"",
                  at + "/size");
    RecordEntry e;
    e.path = f["path"].get<std::string>();
    e.sha256 = f["sha256"].get<std::string>();
    e.size = size->get<uint64_t>();
    if (auto x = f.find("executable"); x != f.end()) {
      if (!x->is_boolean())
        return fail("has an \"executable\" that is " + describeJsonType(*x) +
                        ", not true or false",
                    at + "/executable");
      e.executable = x->get<bool>();
    }
    std::string problem = packagePathProblem(e.path);
    if (!problem.empty())
      return fail("lists \"" + printableExcerpt(e.path) + "\", " + problem,
                  at + "/path");
    if (e.sha256.size() != 64 ||
        e.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
      return fail("has a malformed hash for \"" + e.path + "\"",
                  at + "/sha256");
    // Sizes are summed here once, so that no later sum can wrap around and
    // make a huge package look small to the size and ratio limits.
    if (__builtin_add_overflow(total, e.size, &total))
      return fail("lists sizes that add up to more than 2^64 bytes",
                  at + "/size");
    if (!r.files.empty() && r.files.back().path >= e.path)
      return fail(r.files.back().path == e.path
                      ? "lists \"" + e.path + "\" twice"
                      : "is not sorted by path",
                  at + "/path");
    r.files.push_back(std::move(e));
  }
  if (auto x = j.find("tests_skipped"); x != j.end()) {
    if (!x->is_boolean())
      return fail("has a \"tests_skipped\" that is " + describeJsonType(*x) +
                      ", not true or false",
                  "/tests_skipped");
    r.testsSkipped = x->get<bool>();
  }
  return r;
}

} // namespace ireepkg
