//===- fuzz_runtime_index.cpp - Fuzzes the runtime index reader ===//
//
// The bytes as <prefix>/state/runtime.index, read by libireepkg_runtime
// (runtime.c: memory-mapped, checked, then walked without parsing): open,
// list the plugins for several targets, and produce the IREE flags in every
// style.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/runtime.h"

using namespace ireepkg;

namespace {

void useList(const ireepkg_runtime_plugin_list_t *list) {
  for (ireepkg_runtime_flag_style_t style :
       {IREEPKG_RUNTIME_FLAGS_LINES, IREEPKG_RUNTIME_FLAGS_FLAGFILE,
        IREEPKG_RUNTIME_FLAGS_NUL}) {
    char *text = nullptr;
    size_t length = 0;
    ireepkg_runtime_error_t *error = nullptr;
    if (ireepkg_runtime_format_flags(list, style, &text, &length, &error) ==
        IREEPKG_RUNTIME_OK)
      ireepkg_runtime_free_string(text);
    ireepkg_runtime_free_error(error);
  }
  char **argv = nullptr;
  size_t argc = 0;
  ireepkg_runtime_error_t *error = nullptr;
  if (ireepkg_runtime_flag_argv(list, &argv, &argc, &error) ==
      IREEPKG_RUNTIME_OK)
    ireepkg_runtime_free_argv(argv);
  ireepkg_runtime_free_error(error);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path =
      fuzz::writeScratchFile("runtime.index", fuzz::bytes(data, size));
  ireepkg_runtime_index_t *index = nullptr;
  ireepkg_runtime_error_t *error = nullptr;
  if (ireepkg_runtime_open_file(path.c_str(), 0, &index, &error) !=
      IREEPKG_RUNTIME_OK) {
    (void)ireepkg_runtime_error_message(error);
    ireepkg_runtime_free_error(error);
    return 0;
  }
  (void)ireepkg_runtime_index_prefix(index);
  (void)ireepkg_runtime_index_platform(index);
  (void)ireepkg_runtime_index_plugin_count(index);
  uint32_t major = 0, minor = 0;
  ireepkg_runtime_index_format_version(index, &major, &minor);
  for (const char *target :
       {static_cast<const char *>(nullptr), "x86_64", "aarch64",
        "linux-riscv64", "macos-arm64", "windows-x86_64"}) {
    ireepkg_runtime_plugin_list_t *list = nullptr;
    error = nullptr;
    if (ireepkg_runtime_list_plugins(index, target, 0, &list, &error) ==
        IREEPKG_RUNTIME_OK) {
      useList(list);
      ireepkg_runtime_free_plugin_list(list);
    }
    ireepkg_runtime_free_error(error);
  }
  ireepkg_runtime_close(index);
  return 0;
}
