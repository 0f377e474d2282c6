//===- registry/src/client/metadata_files.cpp -----------------------------===//
// The registry's metadata files.
#include "metadata_files.h"

#include <ctime>

namespace ireepkg::registry {

namespace detail {

std::string canonicalJson(const nlohmann::json &value) {
  // nlohmann::json keeps object members in a std::map: sorted keys.
  return value.dump(2) + "\n";
}

std::string formatRfc3339(int64_t unixTime) {
  std::time_t t = static_cast<std::time_t>(unixTime);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int64_t currentTime(int64_t now) {
  return now != 0 ? now : static_cast<int64_t>(std::time(nullptr));
}

} // namespace detail

} // namespace ireepkg::registry
