/*===- prefix_flagfile.h - A prefix's runtime.flags, from its index -*- C -*-===*
 *
 * The one writer of IREE flagfiles: the prefix's own state/runtime.flags
 * (written by runtime_state.cpp in a transaction, before the index is on
 * disk) is the text ireepkg_runtime_write_flagfile gives for the same index
 * and target. Not part of the library's API: the shared library does not
 * export it; ireepkg links the static library.
 *
 *===----------------------------------------------------------------------===*/
#ifndef IREEPKG_RUNTIME_PREFIX_FLAGFILE_H
#define IREEPKG_RUNTIME_PREFIX_FLAGFILE_H

#include "ireepkg/runtime.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The FLAGFILE text (see ireepkg_runtime_format_flags) of the plugins of
 * the runtime index held in `data` (`size` bytes, as encodeRuntimeIndex
 * returns it; `index_path` names it in errors) for `target`, naming `file`
 * in its usage line. Free `*out_text` with ireepkg_runtime_free_string.
 * When `out_list` is not NULL, it receives the plugins listed (the builds
 * the flags name), valid while `data` is; free it with
 * ireepkg_runtime_free_plugin_list.
 * Errors: those of validating the index, of ireepkg_runtime_list_plugins
 * and of ireepkg_runtime_format_flags. */
ireepkg_runtime_status_t ireepkg_runtime_flagfile_of_index(
    const void *data, size_t size, const char *index_path, const char *target,
    const char *file, char **out_text, size_t *out_size,
    ireepkg_runtime_plugin_list_t **out_list,
    ireepkg_runtime_error_t **out_error);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* IREEPKG_RUNTIME_PREFIX_FLAGFILE_H */
