//===- ireepkg/runtime_integration/runtime_index.h ------------------------===//
//
// Writing the runtime index.
//
// <prefix>/state/runtime.index: the runtime plugins of a prefix in
// activation order, in a compact binary form that libireepkg_runtime maps
// into memory and walks without parsing (discovery reads this one file;
// nothing is scanned or loaded). Written by every transaction beside
// activation.json, which says the same for people and tools.
//
// The byte layout is defined in include/ireepkg/manifest_schema/runtime_index_format.h.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_RUNTIME_INDEX_H
#define IREEPKG_RUNTIME_INDEX_H

#include <string>
#include <utility>
#include <vector>

namespace ireepkg {

inline constexpr const char *kRuntimeIndexFile = "runtime.index";

struct RuntimeIndexPlugin {
  std::string name;           ///< the runtime plugin's name
  std::string package;        ///< the package that provides it
  std::string packageVersion; ///< e.g. "1.2.0"
  std::string format;         ///< "embedded-elf" or "system-library"
  /// Every library the manifest declares, key -> absolute path. Keys are
  /// architectures (embedded-elf) or platforms (system-library); a FatELF
  /// ("fat") file is given once per architecture it holds an image for and
  /// the plugin has no file of its own for (state.cpp reads its table).
  std::vector<std::pair<std::string, std::string>> libraries;
  std::vector<std::string> imports;
  std::vector<std::pair<std::string, std::string>> parameters;
};

struct RuntimeIndexInput {
  std::string prefix;   ///< absolute
  std::string platform; ///< the prefix's platform, e.g. "linux-x86_64"
  std::vector<RuntimeIndexPlugin> plugins; ///< activation order
};

/// The bytes of runtime.index. Deterministic for equal inputs.
std::string encodeRuntimeIndex(const RuntimeIndexInput &input);

} // namespace ireepkg

#endif
