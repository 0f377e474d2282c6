/*===- main.c - A program using the installed libireepkg_runtime -----------===*
 *
 * Built against an installed ireepkg (find_package or pkg-config) by
 * runtime_integration/tests/install_consumer.cmake: checks that the header
 * is usable from strict C99, that the library links and reports its
 * version, and that opening a prefix that does not exist fails cleanly.
 * Usage: consumer <prefix that does not exist>
 *
 *===----------------------------------------------------------------------===*/
#include <ireepkg/runtime.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  if (strcmp(ireepkg_runtime_version(), IREEPKG_RUNTIME_VERSION_STRING) != 0) {
    fprintf(stderr, "header %s, library %s\n", IREEPKG_RUNTIME_VERSION_STRING,
            ireepkg_runtime_version());
    return 1;
  }
  ireepkg_runtime_index_t *index = NULL;
  ireepkg_runtime_error_t *error = NULL;
  ireepkg_runtime_status_t status =
      ireepkg_runtime_open(argv[1], 0, &index, &error);
  if (status != IREEPKG_RUNTIME_ERROR_NO_PREFIX || index != NULL) {
    fprintf(stderr, "expected NO_PREFIX, got %s\n",
            ireepkg_runtime_status_name(status));
    return 1;
  }
  printf("libireepkg_runtime %s on %s: %s\n", ireepkg_runtime_version(),
         ireepkg_runtime_host_platform(), ireepkg_runtime_error_message(error));
  ireepkg_runtime_free_error(error);
  return 0;
}
