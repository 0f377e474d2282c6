//===- ireepkg/pkg/checks/compiler_plugin_abi.h - Plugin info layouts -----===//
//
// What `iree_get_compiler_plugin_info` returns, per IREE version: the one
// table of the layouts of IreeCompilerPluginInfo that the compilers ireepkg
// knows read, and the plugin API header hash of each release whose hash was
// checked. Header only and without dependencies: ireepkg-plugin-probe (which
// reads the struct in a child process) and the library (which chooses the
// layout for a package or a compiler) share it.
//
// The loader of the 3.13 compiler wheel dlopens a library with
// RTLD_NOW|RTLD_LOCAL, calls the function and compares the struct's first
// field, a 64-bit hash, with its own before it reads anything else; IREE's
// newer sources put a 32-bit API version first and the hash as a string.
// Another IREE version is one more row of kCompilerPluginAbis.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_COMPILER_PLUGIN_ABI_H
#define IREEPKG_PKG_COMPILER_PLUGIN_ABI_H

#include <cstdint>
#include <string_view>

namespace ireepkg {

/// The symbol a dynamic compiler plugin exports.
inline constexpr const char *kCompilerPluginInfoSymbol =
    "iree_get_compiler_plugin_info";

enum class CompilerPluginLayout {
  /// {uint64_t abiHash; const char *pluginId; const char *pluginVersion;
  ///  bool (*registerPlugin)(void *);} (IREE 3.13)
  Hash64,
  /// {uint32_t apiVersion; const char *abiHash; const char *pluginId;
  ///  const char *pluginVersion; bool (*registerPlugin)(void *);}
  /// (IREE's newer sources)
  ApiVersionHashString,
};

/// The C structs, as the compilers read them.
struct CompilerPluginInfoHash64 {
  uint64_t abiHash;
  const char *pluginId;
  const char *pluginVersion;
  bool (*registerPlugin)(void *registrar);
};
struct CompilerPluginInfoApiVersion {
  uint32_t apiVersion;
  const char *abiHash;
  const char *pluginId;
  const char *pluginVersion;
  bool (*registerPlugin)(void *registrar);
};

/// The layout's name in the probe's command line and in messages.
inline constexpr std::string_view
compilerPluginLayoutName(CompilerPluginLayout layout) {
  return layout == CompilerPluginLayout::Hash64 ? "hash64"
                                                : "api-version-hash-string";
}

struct CompilerPluginAbi {
  /// The first IREE version (major.minor.patch) of this row: it holds for
  /// later versions up to the next row.
  const char *ireeVersion;
  CompilerPluginLayout layout;
  /// The plugin API header hash of exactly `ireeVersion`, in hex as its
  /// compiler prints it; "" where not known.
  const char *abiHash;
};

/// Oldest first. 3.13.0: checked against the iree-base-compiler 3.13.0
/// wheel (its refusal prints "this compiler has 27493ee2eddc0611").
inline constexpr CompilerPluginAbi kCompilerPluginAbis[] = {
    {"3.13.0", CompilerPluginLayout::Hash64, "27493ee2eddc0611"},
};

} // namespace ireepkg

#endif // IREEPKG_PKG_COMPILER_PLUGIN_ABI_H
