//===- runtime_integration/src/runtime_state.cpp --------------------------===//
// runtime.index and runtime.flags.
#include "ireepkg/runtime_integration/runtime_state.h"

#include "ireepkg/runtime_integration/runtime_index.h"

#include "cpu_level.h"
#include "prefix_flagfile.h"

namespace ireepkg {

namespace {

class RuntimeStateWriter final : public StateWriter {
public:
  Status write(const StateContext &context,
               std::map<std::string, std::string> &files,
               nlohmann::ordered_json &activation,
               std::vector<Diagnostic> &) const override {
    std::string bytes = index(context);
    ireepkg_runtime_plugin_list_t *list = nullptr;
    auto flags = flagfile(context, bytes, &list);
    if (!flags)
      return Unexpected(flags.error());
    files[kRuntimeFlagsFile] = std::move(*flags);
    // activation.json names the builds runtime.flags activates: for a
    // plugin with builds per CPU level, the one chosen, not the plain one.
    for (auto &entry : activation["runtime"])
      for (size_t i = 0; list && i < list->count; ++i) {
        const ireepkg_runtime_plugin_t &p = list->plugins[i];
        if (p.path && entry["package"] == p.package &&
            entry["name"] == p.name) {
          entry["library_key"] = p.library_key;
          entry["path"] = p.path;
          entry["spec"] = p.spec;
        }
      }
    ireepkg_runtime_free_plugin_list(list);
    files[kRuntimeIndexBinary] = std::move(bytes);
    return ok();
  }

private:
  /// The prefix platform's plugins, in activation order, with those that
  /// cannot be activated named in comments: libireepkg_runtime's flagfile
  /// of the index about to be written (prefix_flagfile.h), so that the file
  /// is what ireepkg_runtime_write_flagfile gives applications for the same
  /// prefix.
  static Expected<std::string> flagfile(const StateContext &context,
                                        const std::string &index,
                                        ireepkg_runtime_plugin_list_t **list) {
    const std::string state = context.prefix + "/state/";
    const std::string indexPath = state + kRuntimeIndexBinary;
    // A prefix prepared for another machine's CPU level chooses its builds;
    // otherwise libireepkg_runtime reads this machine's CPU.
    const std::string target =
        context.cpuLevel.empty()
            ? context.platform.str()
            : std::string(osName(context.platform.os)) + "-" + context.cpuLevel;
    char *text = nullptr;
    size_t size = 0;
    ireepkg_runtime_error_t *error = nullptr;
    ireepkg_runtime_status_t status = ireepkg_runtime_flagfile_of_index(
        index.data(), index.size(), indexPath.c_str(), target.c_str(),
        (state + kRuntimeFlagsFile).c_str(), &text, &size, list, &error);
    if (status != IREEPKG_RUNTIME_OK) {
      std::string message = error ? ireepkg_runtime_error_message(error)
                                  : ireepkg_runtime_status_name(status);
      std::string hint = error ? ireepkg_runtime_error_hint(error) : "";
      ireepkg_runtime_free_error(error);
      return makeError(status == IREEPKG_RUNTIME_ERROR_INVALID_ARGUMENT
                           ? ErrorCode::Invalid
                           : ErrorCode::Internal,
                       message, Location::inFile(state + kRuntimeFlagsFile),
                       hint);
    }
    std::string out(text, size);
    ireepkg_runtime_free_string(text);
    return out;
  }

  /// The binary index discovery maps: every declared library (not only the
  /// prefix platform's), so that other targets can be listed too. A FatELF
  /// file is listed under each architecture it holds an image for that the
  /// plugin has no file of its own for (see runtime_index_format.h).
  static std::string index(const StateContext &context) {
    RuntimeIndexInput index;
    index.prefix = context.prefix;
    index.platform = context.platform.str();
    for (const ActivePackage &a : context.active)
      for (const RuntimePlugin &p : a.manifest->runtimePlugins) {
        RuntimeIndexPlugin e;
        e.name = p.name;
        e.package = a.manifest->name;
        e.packageVersion = a.package->version.str();
        e.format = std::string(runtimeFormatName(p.format));
        const std::string *fat = nullptr;
        for (const auto &[key, rel] : p.library) {
          if (p.format == RuntimeFormat::EmbeddedElf && key == "fat")
            fat = &rel;
          else
            e.libraries.emplace_back(key, a.dir + "/" + rel);
        }
        if (fat) {
          const std::string &filesDir = a.filesDir.empty() ? a.dir : a.filesDir;
          if (auto archs = fatElfArchitectures(filesDir + "/" + *fat))
            for (Arch arch : *archs)
              if (!p.library.count(std::string(archName(arch))))
                e.libraries.emplace_back(std::string(archName(arch)),
                                         a.dir + "/" + *fat);
        }
        e.imports = p.imports;
        e.parameters.assign(p.parameters.begin(), p.parameters.end());
        index.plugins.push_back(std::move(e));
      }
    return encodeRuntimeIndex(index);
  }
};

} // namespace

std::string hostCpuDescription() {
  char text[512];
  const std::string arch(archName(hostPlatform().arch));
  ireepkg_cpu_describe(ireepkg_cpu_host_features(), arch.c_str(), text,
                       sizeof(text));
  return text;
}

std::map<std::pair<std::string, std::string>, HostRuntimeBuild>
hostRuntimeBuilds(const std::string &prefix) {
  std::map<std::pair<std::string, std::string>, HostRuntimeBuild> out;
  ireepkg_runtime_index_t *index = nullptr;
  if (ireepkg_runtime_open(prefix.c_str(), 0, &index, nullptr) !=
      IREEPKG_RUNTIME_OK)
    return out;
  ireepkg_runtime_plugin_list_t *list = nullptr;
  if (ireepkg_runtime_list_plugins(index, "host", 0, &list, nullptr) ==
      IREEPKG_RUNTIME_OK) {
    for (size_t i = 0; i < list->count; ++i) {
      const ireepkg_runtime_plugin_t &p = list->plugins[i];
      out[{p.package, p.name}] = {p.library_key, p.path};
    }
    ireepkg_runtime_free_plugin_list(list);
  }
  ireepkg_runtime_close(index);
  return out;
}

const StateWriter &runtimeStateWriter() {
  static const RuntimeStateWriter writer;
  return writer;
}

} // namespace ireepkg
