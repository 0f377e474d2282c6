//===- ireepkg/runtime_integration/runtime_state.h ------------------------===//
//
// The runtime side of a prefix's state.
//
// runtime_integration's StateWriter (ireepkg/pkg/prefix/state.h): in every
// transaction it writes state/runtime.index (the binary index
// libireepkg_runtime maps; runtime_index.h) and state/runtime.flags (the
// prefix platform's --executable_plugin= flags for IREE's --flagfile=).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_RUNTIME_INTEGRATION_RUNTIME_STATE_H
#define IREEPKG_RUNTIME_INTEGRATION_RUNTIME_STATE_H

#include "ireepkg/pkg/prefix/state.h"

#include <map>
#include <string>
#include <utility>

namespace ireepkg {

/// The writer (one per process); register it with registerStateWriter.
const StateWriter &runtimeStateWriter();

/// The CPU this process runs on as libireepkg_runtime sees it when it
/// chooses among builds for CPU levels, e.g. "x86-64-v3 (+sse3 ... +xsave)".
std::string hostCpuDescription();

/// A runtime plugin's build that libireepkg_runtime activates on this
/// machine: its library key ("x86_64_v3") and absolute path.
struct HostRuntimeBuild {
  std::string key, path;
};

/// The build of each runtime plugin of the prefix at `prefix` that this
/// machine activates, by (package, plugin name); empty when the prefix's
/// index cannot be read (other commands report that).
std::map<std::pair<std::string, std::string>, HostRuntimeBuild>
hostRuntimeBuilds(const std::string &prefix);

} // namespace ireepkg

#endif
