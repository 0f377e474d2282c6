/*===- index_fixture.h - Writing runtime.index files for C tests ---*- C -*-===*
 *
 * A C interface to ireepkg::encodeRuntimeIndex (the encoder the CLI uses),
 * so that the C tests of libireepkg_runtime build their fixture indexes with
 * the real writer rather than a copy of it.
 *
 *===----------------------------------------------------------------------===*/
#ifndef IREEPKG_RUNTIME_TESTS_INDEX_FIXTURE_H
#define IREEPKG_RUNTIME_TESTS_INDEX_FIXTURE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fixture_pair_t {
  const char *key;
  const char *value;
} fixture_pair_t;

typedef struct fixture_plugin_t {
  const char *name;
  const char *package;
  const char *version;
  const char *format;
  const fixture_pair_t *libraries; /* key -> absolute path */
  size_t library_count;
  const char *const *imports;
  size_t import_count;
  const fixture_pair_t *parameters;
  size_t parameter_count;
} fixture_plugin_t;

/* Writes encodeRuntimeIndex(prefix, platform, plugins) to `file`. Returns 0
 * on success, -1 if the file cannot be written. */
int fixture_write_index(const char *file, const char *prefix,
                        const char *platform, const fixture_plugin_t *plugins,
                        size_t count);

#ifdef __cplusplus
}
#endif

#endif
