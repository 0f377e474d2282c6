/* Stand-in (see iree/base/api.h in this directory). */
#ifndef MOCK_IREE_PLUGIN_MANAGER_H
#define MOCK_IREE_PLUGIN_MANAGER_H
#include "iree/base/api.h"
typedef struct { char path[4096]; } iree_hal_executable_plugin_t;
typedef struct { iree_host_size_t capacity, count; } iree_hal_executable_plugin_manager_t;
static inline iree_status_t iree_hal_executable_plugin_manager_create(
    iree_host_size_t capacity, iree_allocator_t a,
    iree_hal_executable_plugin_manager_t **out) {
  (void)a;
  *out = (iree_hal_executable_plugin_manager_t *)calloc(1, sizeof(**out));
  (*out)->capacity = capacity;
  fprintf(mock_log, "create_manager capacity=%zu\n", capacity);
  return iree_ok_status();
}
static inline iree_status_t iree_hal_executable_plugin_manager_register_plugin(
    iree_hal_executable_plugin_manager_t *m, iree_hal_executable_plugin_t *p) {
  if (m->count == m->capacity)
    return iree_make_status(IREE_STATUS_RESOURCE_EXHAUSTED, "manager is full");
  m->count++;
  fprintf(mock_log, "register %s\n", p->path);
  return iree_ok_status();
}
static inline void iree_hal_executable_plugin_release(iree_hal_executable_plugin_t *p) {
  free(p);
}
static inline void iree_hal_executable_plugin_manager_release(
    iree_hal_executable_plugin_manager_t *m) {
  free(m);
}
static inline iree_status_t mock_load(const char *kind, const char *path,
                                      iree_host_size_t n,
                                      const iree_string_pair_t *params,
                                      iree_hal_executable_plugin_t **out) {
  fprintf(mock_log, "load %s %s params=%zu", kind, path, n);
  for (iree_host_size_t i = 0; i < n; ++i)
    fprintf(mock_log, " %.*s=%.*s", (int)params[i].key.size, params[i].key.data,
            (int)params[i].value.size, params[i].value.data);
  fprintf(mock_log, "\n");
  *out = (iree_hal_executable_plugin_t *)calloc(1, sizeof(**out));
  snprintf((*out)->path, sizeof (*out)->path, "%s", path);
  return iree_ok_status();
}
#endif
