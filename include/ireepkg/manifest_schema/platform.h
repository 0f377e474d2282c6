//===- ireepkg/platform.h - Names, architectures, platforms ----*- C++ -*-===//
//
// The small vocabularies every format shares: package names, CPU
// architectures, operating systems and `<os>-<arch>` platforms, plus the
// "did you mean" suggestion used in diagnostics.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PLATFORM_H
#define IREEPKG_PLATFORM_H

#include <compare>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ireepkg {

enum class Arch { X86_64, AArch64, RiscV64, RiscV32, Arm };
enum class OS { Linux, Android, MacOS, Windows };

std::span<const std::string_view> archNames();
std::span<const std::string_view> osNames();
std::optional<Arch> parseArch(std::string_view name);
std::optional<OS> parseOS(std::string_view name);
std::string_view archName(Arch arch);
std::string_view osName(OS os);

/// An `<os>-<arch>` pair such as `linux-x86_64`.
struct Platform {
  OS os = OS::Linux;
  Arch arch = Arch::X86_64;

  static std::optional<Platform> parse(std::string_view text);
  std::string str() const;
  auto operator<=>(const Platform &) const = default;
};

/// Every `<os>-<arch>` spelling, for suggestions.
std::span<const std::string> platformNames();

/// The platform this binary runs on.
Platform hostPlatform();

/// `^[a-z0-9][a-z0-9._-]{0,63}$`
bool isValidPackageName(std::string_view name);
extern const char *const kPackageNameRule;

/// A C identifier: `^[A-Za-z_][A-Za-z0-9_]*$`.
bool isCIdentifier(std::string_view name);

/// The candidate closest to `word` if it is close enough to be a plausible
/// typo (edit distance, ignoring case and `-`/`_` differences), else "".
std::string suggestClosest(std::string_view word,
                           std::span<const std::string_view> candidates);
std::string suggestClosest(std::string_view word,
                           std::span<const std::string> candidates);

/// ` (did you mean "x"?)` or "" when there is no suggestion.
std::string didYouMean(std::string_view word,
                       std::span<const std::string_view> candidates);
std::string didYouMean(std::string_view word,
                       std::span<const std::string> candidates);

/// Why `path` cannot name a file inside a package ("" if it can): must be
/// relative, `/`-separated, without `.`/`..`/empty segments or backslashes.
std::string packagePathProblem(std::string_view path);

} // namespace ireepkg

#endif // IREEPKG_PLATFORM_H
