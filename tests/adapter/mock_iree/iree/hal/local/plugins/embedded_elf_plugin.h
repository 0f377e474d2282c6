/* Stand-in (see iree/base/api.h). */
#ifndef MOCK_IREE_EMBEDDED_ELF_PLUGIN_H
#define MOCK_IREE_EMBEDDED_ELF_PLUGIN_H
#include "iree/hal/local/executable_plugin_manager.h"
static inline iree_status_t iree_hal_embedded_elf_executable_plugin_load_from_file(
    const char *path, iree_host_size_t n, const iree_string_pair_t *params,
    iree_allocator_t a, iree_hal_executable_plugin_t **out) {
  (void)a;
  return mock_load("embedded-elf", path, n, params, out);
}
#endif
