/* Drives ireepkg/iree_runtime_adapter.h against the recording stand-in of
 * IREE's API: `adapter_test <prefix> [extra_capacity]` creates a plugin
 * manager from the prefix and prints the calls (or the error) on stdout. */
#include "ireepkg/iree_runtime_adapter.h"

FILE *mock_log;

int main(int argc, char **argv) {
  mock_log = stdout;
  iree_allocator_t allocator = {NULL};
  iree_hal_executable_plugin_manager_t *manager = NULL;
  iree_status_t status = ireepkg_iree_create_plugin_manager(
      argv[1], NULL, argc > 2 ? (iree_host_size_t)atoi(argv[2]) : 0, allocator,
      &manager);
  if (!iree_status_is_ok(status)) {
    printf("error %d: %s\n", (int)status->code, status->message);
    free(status);
    return 1;
  }
  iree_host_size_t count = 0;
  status = ireepkg_iree_plugin_count(argv[1], NULL, &count);
  printf("count %zu\n", count);
  iree_hal_executable_plugin_manager_release(manager);
  return 0;
}
