/*===- ireepkg/iree_runtime_adapter.h - Register plugins with IREE --------===*
 *
 * For applications that embed IREE's runtime: registers the runtime plugins
 * of an ireepkg prefix with an IREE executable plugin manager, in activation
 * order and with their parameters (which IREE's command-line tools cannot
 * pass). Include it in a C or C++ file that also compiles against IREE's
 * runtime headers and links IREE's runtime and libireepkg_runtime.
 *
 * Header-only: it is compiled with the application's IREE headers, so it
 * always matches the IREE the application builds with.
 *
 * Typical use, where the application creates its local-task or local-sync
 * device:
 *
 *   iree_hal_executable_plugin_manager_t* plugins = NULL;
 *   IREE_RETURN_IF_ERROR(ireepkg_iree_create_plugin_manager(
 *       NULL,   // the prefix: NULL finds it like the ireepkg CLI does
 *       NULL,   // the target: NULL is this host
 *       0,      // room for plugins the application registers itself
 *       host_allocator, &plugins));
 *   // ... iree_hal_executable_loader_create(..., plugins, ...) for each
 *   // loader, as iree/hal/local/loaders/registration does ...
 *   iree_hal_executable_plugin_manager_release(plugins);
 *
 * or, with a manager the application already made (with enough capacity:
 * ireepkg_iree_plugin_count()):
 *
 *   IREE_RETURN_IF_ERROR(ireepkg_iree_register_plugins(
 *       plugins, NULL, NULL, host_allocator));
 *
 * IREE resolves imports from the last registered plugin backwards, so a
 * package later in activation order overrides an earlier one — the same as
 * `--executable_plugin=` flags in the prefix's runtime.flags.
 *
 * Every ireepkg error becomes an iree_status_t carrying ireepkg's message
 * (which names the file or prefix), so the application reports it the way it
 * reports IREE's own errors.
 *===----------------------------------------------------------------------===*/
#ifndef IREEPKG_IREE_RUNTIME_ADAPTER_H
#define IREEPKG_IREE_RUNTIME_ADAPTER_H

#include "ireepkg/runtime.h"

#include "iree/base/api.h"
#include "iree/hal/local/executable_plugin_manager.h"
#include "iree/hal/local/plugins/embedded_elf_plugin.h"
#include "iree/hal/local/plugins/system_library_plugin.h"

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ireepkg's status as IREE's. */
static inline iree_status_code_t
ireepkg_iree_status_code(ireepkg_runtime_status_t status) {
  switch (status) {
  case IREEPKG_RUNTIME_OK:
    return IREE_STATUS_OK;
  case IREEPKG_RUNTIME_ERROR_INVALID_ARGUMENT:
    return IREE_STATUS_INVALID_ARGUMENT;
  case IREEPKG_RUNTIME_ERROR_NO_PREFIX:
  case IREEPKG_RUNTIME_ERROR_MISSING_INDEX:
  case IREEPKG_RUNTIME_ERROR_FILE_MISSING:
    return IREE_STATUS_NOT_FOUND;
  case IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX:
    return IREE_STATUS_DATA_LOSS;
  case IREEPKG_RUNTIME_ERROR_NEWER_SCHEMA:
    return IREE_STATUS_UNIMPLEMENTED;
  case IREEPKG_RUNTIME_ERROR_OUT_OF_MEMORY:
    return IREE_STATUS_RESOURCE_EXHAUSTED;
  default:
    return IREE_STATUS_UNKNOWN;
  }
}

/* Turns an ireepkg error into an iree_status_t and frees it. */
static inline iree_status_t
ireepkg_iree_make_status(ireepkg_runtime_status_t status,
                         ireepkg_runtime_error_t *error) {
  iree_status_t result = iree_make_status(
      ireepkg_iree_status_code(status), "ireepkg: %s",
      error ? ireepkg_runtime_error_message(error) : "unknown error");
  ireepkg_runtime_free_error(error);
  return result;
}

/* Lists the prefix's plugins for `target` (NULL: the host), checking that
 * every file exists. The caller frees the list. */
static inline iree_status_t
ireepkg_iree_list_plugins(const char *prefix, const char *target,
                          ireepkg_runtime_plugin_list_t **out_list) {
  ireepkg_runtime_error_t *error = NULL;
  ireepkg_runtime_index_t *index = NULL;
  ireepkg_runtime_status_t status =
      ireepkg_runtime_locate_and_open(prefix, NULL, 0, &index, &error);
  if (status != IREEPKG_RUNTIME_OK)
    return ireepkg_iree_make_status(status, error);
  status = ireepkg_runtime_list_plugins(
      index, target, IREEPKG_RUNTIME_LIST_CHECK_FILES, out_list, &error);
  /* The list keeps the mapping alive; the handle can go. */
  ireepkg_runtime_close(index);
  if (status != IREEPKG_RUNTIME_OK)
    return ireepkg_iree_make_status(status, error);
  return iree_ok_status();
}

/* How many plugins ireepkg_iree_register_plugins would register. */
static inline iree_status_t ireepkg_iree_plugin_count(const char *prefix,
                                                      const char *target,
                                                      iree_host_size_t *out) {
  ireepkg_runtime_plugin_list_t *list = NULL;
  IREE_RETURN_IF_ERROR(ireepkg_iree_list_plugins(prefix, target, &list));
  *out = list->count;
  ireepkg_runtime_free_plugin_list(list);
  return iree_ok_status();
}

/* Loads one listed plugin with IREE's loader for its format and registers
 * it. */
static inline iree_status_t
ireepkg_iree_register_plugin(iree_hal_executable_plugin_manager_t *manager,
                             const ireepkg_runtime_plugin_t *plugin,
                             iree_allocator_t host_allocator) {
  iree_string_pair_t *params = NULL;
  if (plugin->parameter_count) {
    IREE_RETURN_IF_ERROR(iree_allocator_malloc(
        host_allocator, plugin->parameter_count * sizeof(*params),
        (void **)&params));
    for (size_t i = 0; i < plugin->parameter_count; ++i)
      params[i] = iree_make_string_pair(
          iree_make_cstring_view(plugin->parameters[i].key),
          iree_make_cstring_view(plugin->parameters[i].value));
  }
  iree_hal_executable_plugin_t *loaded = NULL;
  iree_status_t status;
  if (plugin->format_kind == IREEPKG_RUNTIME_FORMAT_EMBEDDED_ELF) {
    status = iree_hal_embedded_elf_executable_plugin_load_from_file(
        plugin->path, plugin->parameter_count, params, host_allocator,
        &loaded);
  } else {
    status = iree_hal_system_library_executable_plugin_load_from_file(
        plugin->path, plugin->parameter_count, params, host_allocator,
        &loaded);
  }
  if (iree_status_is_ok(status))
    status = iree_hal_executable_plugin_manager_register_plugin(manager,
                                                                loaded);
  iree_hal_executable_plugin_release(loaded);
  iree_allocator_free(host_allocator, params);
  if (!iree_status_is_ok(status))
    status = iree_status_annotate_f(status,
                                    "loading runtime plugin '%s' of package "
                                    "'%s' %s from %s",
                                    plugin->name, plugin->package,
                                    plugin->package_version, plugin->path);
  return status;
}

/* Registers every runtime plugin of the prefix (NULL: found like the CLI
 * does) for `target` (NULL: the host) with `manager`, in activation order. */
static inline iree_status_t
ireepkg_iree_register_plugins(iree_hal_executable_plugin_manager_t *manager,
                              const char *prefix, const char *target,
                              iree_allocator_t host_allocator) {
  ireepkg_runtime_plugin_list_t *list = NULL;
  IREE_RETURN_IF_ERROR(ireepkg_iree_list_plugins(prefix, target, &list));
  iree_status_t status = iree_ok_status();
  for (size_t i = 0; i < list->count && iree_status_is_ok(status); ++i)
    status =
        ireepkg_iree_register_plugin(manager, &list->plugins[i], host_allocator);
  ireepkg_runtime_free_plugin_list(list);
  return status;
}

/* Creates a plugin manager holding the prefix's plugins, with room for
 * `extra_capacity` more that the application registers itself. */
static inline iree_status_t ireepkg_iree_create_plugin_manager(
    const char *prefix, const char *target, iree_host_size_t extra_capacity,
    iree_allocator_t host_allocator,
    iree_hal_executable_plugin_manager_t **out_manager) {
  *out_manager = NULL;
  ireepkg_runtime_plugin_list_t *list = NULL;
  IREE_RETURN_IF_ERROR(ireepkg_iree_list_plugins(prefix, target, &list));
  iree_hal_executable_plugin_manager_t *manager = NULL;
  iree_status_t status = iree_hal_executable_plugin_manager_create(
      list->count + extra_capacity, host_allocator, &manager);
  for (size_t i = 0; i < list->count && iree_status_is_ok(status); ++i)
    status =
        ireepkg_iree_register_plugin(manager, &list->plugins[i], host_allocator);
  ireepkg_runtime_free_plugin_list(list);
  if (iree_status_is_ok(status))
    *out_manager = manager;
  else
    iree_hal_executable_plugin_manager_release(manager);
  return status;
}

#ifdef __cplusplus
} // extern "C"
#endif

#endif /* IREEPKG_IREE_RUNTIME_ADAPTER_H */
