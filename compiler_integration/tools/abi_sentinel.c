//===- compiler_integration/tools/abi_sentinel.c --------------------------===//
//
// A compiler plugin every compiler refuses.
//
// libireepkg_compiler_abi_sentinel.so: ireepkg asks an IREE compiler for
// its plugin API header hash by giving it this library with
// --iree-load-plugin. The library's info carries the hash 0, which no
// compiler has, so the compiler refuses it and names its own hash
// ("... was built against plugin API headers 0000000000000000, this
// compiler has <hash>; ..."). It registers nothing and is never activated.
// Layout: IREE 3.13's (include/ireepkg/pkg/checks/compiler_plugin_abi.h).
//
//===----------------------------------------------------------------------===//
#include <stdbool.h>
#include <stdint.h>

struct SentinelInfo {
  uint64_t abiHash;
  const char *pluginId;
  const char *pluginVersion;
  bool (*registerPlugin)(void *registrar);
};

static bool registerNothing(void *registrar) {
  (void)registrar;
  return false;
}

static const struct SentinelInfo kInfo = {0, "ireepkg_abi_sentinel", "0",
                                          registerNothing};

__attribute__((visibility("default"))) const struct SentinelInfo *
iree_get_compiler_plugin_info(void) {
  return &kInfo;
}
