//===- runtime_integration/src/index_writer.cpp - Writing runtime.index ---===//
//
// ireepkg::encodeRuntimeIndex: the bytes of <prefix>/state/runtime.index in
// the layout of index_format.h. Strings are interned in first-use order (so
// equal inputs give equal bytes), embedded-elf paths are stored behind
// "embedded:" so that readers hand out the IREE spec without copying, and
// each entry records the library that the prefix's own platform selects.
// Builds for CPU levels are written before the plain ones, in preference
// order (see runtime_index_format.h).
// Library keys are written as given: the caller (state.cpp) lists a FatELF
// file under each architecture it holds, never under "fat".
//
// Limits: counts and string offsets are 32-bit, so an index holds less than
// 4 GiB of strings; prefixes come nowhere near (manifests are read with a
// size limit far below that).
//
//===----------------------------------------------------------------------===//
#include "ireepkg/runtime_integration/runtime_index.h"

#include "ireepkg/manifest_schema/cpu_level.h"
#include "ireepkg/manifest_schema/platform_facts.h"
#include "ireepkg/manifest_schema/runtime_index_format.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_map>

namespace ireepkg {

namespace {

/// NUL-terminated strings, each stored once; offset 0 is "".
class StringTable {
public:
  StringTable() { bytes_.push_back('\0'); }

  uint32_t add(std::string_view s) {
    s = s.substr(0, s.find('\0')); // a C string ends at the first NUL
    if (s.empty())
      return 0;
    auto [it, fresh] = offsets_.try_emplace(std::string(s), 0);
    if (fresh) {
      it->second = static_cast<uint32_t>(bytes_.size());
      bytes_.append(s);
      bytes_.push_back('\0');
    }
    return it->second;
  }

  /// Stores "embedded:<path>" and returns the offset of <path> inside it.
  uint32_t addEmbeddedPath(std::string_view path) {
    path = path.substr(0, path.find('\0'));
    std::string spec(IREEPKG_INDEX_EMBEDDED_PREFIX);
    spec.append(path);
    auto [it, fresh] = specs_.try_emplace(spec, 0);
    if (fresh) {
      it->second = static_cast<uint32_t>(bytes_.size()) +
                   IREEPKG_INDEX_EMBEDDED_PREFIX_SIZE;
      bytes_.append(spec);
      bytes_.push_back('\0');
    }
    return it->second;
  }

  const std::string &bytes() const { return bytes_; }

private:
  std::string bytes_;
  std::unordered_map<std::string, uint32_t> offsets_;
  std::unordered_map<std::string, uint32_t> specs_;
};

uint32_t formatKind(std::string_view format) {
  if (format == "embedded-elf")
    return IREEPKG_INDEX_FORMAT_EMBEDDED_ELF;
  if (format == "system-library")
    return IREEPKG_INDEX_FORMAT_SYSTEM_LIBRARY;
  return IREEPKG_INDEX_FORMAT_UNKNOWN;
}

/// The library `platform` ("<os>-<arch>") selects, by the rule readers use
/// too: embedded-elf takes the architecture's key (the writer lists a FatELF
/// file under each architecture it holds) unless IREE's runtime cannot call
/// embedded plugins on the platform's OS (platform_facts.h), system-library
/// the platform's.
uint32_t
selectLibrary(const std::vector<std::pair<std::string, std::string>> &libraries,
              uint32_t kind, std::string_view platform) {
  auto find = [&](std::string_view key) {
    for (size_t i = 0; i < libraries.size(); ++i)
      if (libraries[i].first == key)
        return static_cast<uint32_t>(i);
    return IREEPKG_INDEX_NO_LIBRARY;
  };
  if (kind == IREEPKG_INDEX_FORMAT_EMBEDDED_ELF) {
    size_t dash = platform.find('-');
    if (dash != std::string_view::npos &&
        ireepkg_platform_fact_stopping(platform.data(), dash, "embedded-elf"))
      return IREEPKG_INDEX_NO_LIBRARY;
    std::string_view arch =
        dash == std::string_view::npos ? platform : platform.substr(dash + 1);
    return find(arch);
  }
  if (kind == IREEPKG_INDEX_FORMAT_SYSTEM_LIBRARY)
    return find(platform);
  return IREEPKG_INDEX_NO_LIBRARY;
}

/// The libraries with the builds for CPU levels first, most required
/// features first, then the plain keys; otherwise in the order given.
std::vector<std::pair<std::string, std::string>>
preferenceOrder(std::vector<std::pair<std::string, std::string>> libraries) {
  auto features = [](const std::string &key) {
    return ireepkg_cpu_feature_count(
        ireepkg_cpu_parse_key(key.data(), key.size(), false).required);
  };
  std::stable_sort(libraries.begin(), libraries.end(),
                   [&](const auto &a, const auto &b) {
                     return features(a.first) > features(b.first);
                   });
  return libraries;
}

size_t alignTo8(size_t n) { return (n + 7) & ~size_t(7); }

} // namespace

std::string encodeRuntimeIndex(const RuntimeIndexInput &input) {
  StringTable strings;
  const uint32_t prefix = strings.add(input.prefix);
  const uint32_t platform = strings.add(input.platform);

  std::string entries(input.plugins.size() * IREEPKG_INDEX_ENTRY_SIZE_V1, '\0');
  std::vector<uint32_t> refs;
  for (size_t i = 0; i < input.plugins.size(); ++i) {
    const RuntimeIndexPlugin &p = input.plugins[i];
    const uint32_t kind = formatKind(p.format);
    auto *e = reinterpret_cast<uint8_t *>(entries.data()) +
              i * IREEPKG_INDEX_ENTRY_SIZE_V1;
    auto put = [e](size_t field, uint32_t value) {
      ireepkg_index_store32(e + field, value);
    };
    put(IREEPKG_INDEX_ENTRY_FIELD(name), strings.add(p.name));
    put(IREEPKG_INDEX_ENTRY_FIELD(package), strings.add(p.package));
    put(IREEPKG_INDEX_ENTRY_FIELD(package_version),
        strings.add(p.packageVersion));
    put(IREEPKG_INDEX_ENTRY_FIELD(format), strings.add(p.format));
    put(IREEPKG_INDEX_ENTRY_FIELD(format_kind), kind);

    put(IREEPKG_INDEX_ENTRY_FIELD(libraries_first),
        static_cast<uint32_t>(refs.size()));
    put(IREEPKG_INDEX_ENTRY_FIELD(library_count),
        static_cast<uint32_t>(p.libraries.size()));
    const auto libraries = preferenceOrder(p.libraries);
    for (const auto &[key, path] : libraries) {
      refs.push_back(strings.add(key));
      refs.push_back(kind == IREEPKG_INDEX_FORMAT_EMBEDDED_ELF
                         ? strings.addEmbeddedPath(path)
                         : strings.add(path));
    }

    put(IREEPKG_INDEX_ENTRY_FIELD(imports_first),
        static_cast<uint32_t>(refs.size()));
    put(IREEPKG_INDEX_ENTRY_FIELD(import_count),
        static_cast<uint32_t>(p.imports.size()));
    for (const std::string &import : p.imports)
      refs.push_back(strings.add(import));

    put(IREEPKG_INDEX_ENTRY_FIELD(parameters_first),
        static_cast<uint32_t>(refs.size()));
    put(IREEPKG_INDEX_ENTRY_FIELD(parameter_count),
        static_cast<uint32_t>(p.parameters.size()));
    for (const auto &[key, value] : p.parameters) {
      refs.push_back(strings.add(key));
      refs.push_back(strings.add(value));
    }

    put(IREEPKG_INDEX_ENTRY_FIELD(platform_library),
        selectLibrary(libraries, kind, input.platform));
  }

  const size_t entriesOffset = alignTo8(IREEPKG_INDEX_HEADER_SIZE_V1);
  const size_t refsOffset = alignTo8(entriesOffset + entries.size());
  const size_t stringsOffset = alignTo8(refsOffset + refs.size() * 4);
  const size_t totalSize = stringsOffset + strings.bytes().size();

  std::string out(totalSize, '\0');
  auto *base = reinterpret_cast<uint8_t *>(out.data());
  std::memcpy(base, IREEPKG_INDEX_MAGIC, IREEPKG_INDEX_MAGIC_SIZE);
  ireepkg_index_store16(base + IREEPKG_INDEX_HEADER_FIELD(version_major),
                        IREEPKG_INDEX_VERSION_MAJOR);
  ireepkg_index_store16(base + IREEPKG_INDEX_HEADER_FIELD(version_minor),
                        IREEPKG_INDEX_VERSION_MINOR);
  ireepkg_index_store32(base + IREEPKG_INDEX_HEADER_FIELD(header_size),
                        IREEPKG_INDEX_HEADER_SIZE_V1);
  ireepkg_index_store64(base + IREEPKG_INDEX_HEADER_FIELD(total_size),
                        totalSize);
  ireepkg_index_store32(base + IREEPKG_INDEX_HEADER_FIELD(plugin_count),
                        static_cast<uint32_t>(input.plugins.size()));
  ireepkg_index_store32(base + IREEPKG_INDEX_HEADER_FIELD(entry_size),
                        IREEPKG_INDEX_ENTRY_SIZE_V1);
  ireepkg_index_store32(base + IREEPKG_INDEX_HEADER_FIELD(ref_count),
                        static_cast<uint32_t>(refs.size()));
  ireepkg_index_store64(base + IREEPKG_INDEX_HEADER_FIELD(entries_offset),
                        entriesOffset);
  ireepkg_index_store64(base + IREEPKG_INDEX_HEADER_FIELD(refs_offset),
                        refsOffset);
  ireepkg_index_store64(base + IREEPKG_INDEX_HEADER_FIELD(strings_offset),
                        stringsOffset);
  ireepkg_index_store64(base + IREEPKG_INDEX_HEADER_FIELD(strings_size),
                        strings.bytes().size());
  ireepkg_index_store32(base + IREEPKG_INDEX_HEADER_FIELD(prefix), prefix);
  ireepkg_index_store32(base + IREEPKG_INDEX_HEADER_FIELD(platform), platform);

  std::memcpy(base + entriesOffset, entries.data(), entries.size());
  for (size_t i = 0; i < refs.size(); ++i)
    ireepkg_index_store32(base + refsOffset + 4 * i, refs[i]);
  std::memcpy(base + stringsOffset, strings.bytes().data(),
              strings.bytes().size());

  ireepkg_index_store64(
      base + IREEPKG_INDEX_HEADER_FIELD(checksum),
      ireepkg_index_checksum(base + IREEPKG_INDEX_CHECKSUM_START,
                             totalSize - IREEPKG_INDEX_CHECKSUM_START));
  return out;
}

} // namespace ireepkg
