//===- ireepkg/manifest_schema/platform.h - Platforms -----------*- C++ -*-===//
//
// The CPU architectures, operating systems and `<os>-<arch>` platforms every
// format shares (names of packages and files: names.h; suggestions:
// suggest.h).
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

} // namespace ireepkg

#endif // IREEPKG_PLATFORM_H
