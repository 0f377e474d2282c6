//===- manifest_schema/src/platform.cpp -----------------------------------===//
// Architectures, operating systems, platforms.
#include "ireepkg/manifest_schema/platform.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <vector>

namespace ireepkg {

static constexpr std::array<std::string_view, 5> kArchNames = {
    "x86_64", "aarch64", "riscv64", "riscv32", "arm"};
static constexpr std::array<std::string_view, 4> kOSNames = {
    "linux", "android", "macos", "windows"};

std::span<const std::string_view> archNames() { return kArchNames; }
std::span<const std::string_view> osNames() { return kOSNames; }

std::optional<Arch> parseArch(std::string_view name) {
  for (size_t i = 0; i < kArchNames.size(); ++i)
    if (kArchNames[i] == name)
      return static_cast<Arch>(i);
  return std::nullopt;
}

std::optional<OS> parseOS(std::string_view name) {
  for (size_t i = 0; i < kOSNames.size(); ++i)
    if (kOSNames[i] == name)
      return static_cast<OS>(i);
  return std::nullopt;
}

std::string_view archName(Arch arch) {
  return kArchNames[static_cast<size_t>(arch)];
}
std::string_view osName(OS os) { return kOSNames[static_cast<size_t>(os)]; }

std::optional<Platform> Platform::parse(std::string_view text) {
  size_t dash = text.find('-');
  if (dash == std::string_view::npos)
    return std::nullopt;
  auto os = parseOS(text.substr(0, dash));
  auto arch = parseArch(text.substr(dash + 1));
  if (!os || !arch)
    return std::nullopt;
  return Platform{*os, *arch};
}

std::string Platform::str() const {
  return std::string(osName(os)) + "-" + std::string(archName(arch));
}

std::span<const std::string> platformNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (auto os : kOSNames)
      for (auto arch : kArchNames)
        v.push_back(std::string(os) + "-" + std::string(arch));
    return v;
  }();
  return names;
}

Platform hostPlatform() {
  Platform p;
#if defined(__ANDROID__)
  p.os = OS::Android;
#elif defined(__APPLE__)
  p.os = OS::MacOS;
#elif defined(_WIN32)
  p.os = OS::Windows;
#else
  p.os = OS::Linux;
#endif
#if defined(__x86_64__) || defined(_M_X64)
  p.arch = Arch::X86_64;
#elif defined(__aarch64__) || defined(_M_ARM64)
  p.arch = Arch::AArch64;
#elif defined(__riscv) && __riscv_xlen == 64
  p.arch = Arch::RiscV64;
#elif defined(__riscv)
  p.arch = Arch::RiscV32;
#elif defined(__arm__)
  p.arch = Arch::Arm;
#else
#error "unsupported host architecture"
#endif
  return p;
}

} // namespace ireepkg
