/*===- cpu_choice.c - Which runtime builds this CPU gets -------------------===*
 *
 * A test program linked against libireepkg_runtime (static, for the hidden
 * CPU detection of cpu_level.h): prints the features this process's CPU
 * has as ireepkg names them, then, for a prefix, each runtime plugin's
 * chosen library key and path, and writes the prefix's flags for this host
 * to a flagfile for IREE's tools. Run under `qemu-x86_64 -cpu <model>` to
 * see what another CPU gets.
 *
 *   cpu_choice features
 *   cpu_choice choose <prefix> [<flagfile>]
 *
 *===----------------------------------------------------------------------===*/
#include "ireepkg/manifest_schema/cpu_level.h"
#include "ireepkg/runtime.h"

#include "cpu_level.h"

#include <stdio.h>
#include <string.h>

static int fail(ireepkg_runtime_error_t *error) {
  fprintf(stderr, "cpu_choice: %s\n", ireepkg_runtime_error_message(error));
  ireepkg_runtime_free_error(error);
  return 1;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "features") == 0) {
    const uint64_t f = ireepkg_cpu_host_features();
    for (size_t i = 0; i < IREEPKG_CPU_FEATURE_COUNT; ++i)
      if (f & kIreepkgCpuFeatures[i].bit)
        printf("%s\n", kIreepkgCpuFeatures[i].name);
    return 0;
  }
  if (argc < 3 || strcmp(argv[1], "choose") != 0) {
    fprintf(stderr, "usage: cpu_choice features | choose <prefix> "
                    "[<flagfile>]\n");
    return 2;
  }
  ireepkg_runtime_error_t *error = NULL;
  ireepkg_runtime_index_t *index = NULL;
  if (ireepkg_runtime_open(argv[2], 0, &index, &error) != IREEPKG_RUNTIME_OK)
    return fail(error);
  ireepkg_runtime_plugin_list_t *list = NULL;
  if (ireepkg_runtime_list_plugins(index, "host", 0, &list, &error) !=
      IREEPKG_RUNTIME_OK) {
    ireepkg_runtime_close(index);
    return fail(error);
  }
  for (size_t i = 0; i < list->count; ++i)
    printf("%s %s %s\n", list->plugins[i].name, list->plugins[i].library_key,
           list->plugins[i].path);
  int rc = 0;
  if (argc > 3 && ireepkg_runtime_write_flagfile(list, argv[3], &error) !=
                      IREEPKG_RUNTIME_OK)
    rc = fail(error);
  ireepkg_runtime_free_plugin_list(list);
  ireepkg_runtime_close(index);
  return rc;
}
