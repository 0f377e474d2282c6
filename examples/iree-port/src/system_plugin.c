// system_plugin.c - a system-library executable plugin written the way
// IREE's samples/custom_dispatch/cpu/plugin/system_plugin.c is: IREE's
// header path and names, libc (stdio) allowed, state allocated from the
// host allocator. It serves one import, system_mul_workgroup, which
// multiplies two f32 tiles and logs each element to stdout.
//
// It includes <iree/hal/local/executable_plugin.h>, which ireepkg installs
// (include/ireepkg/iree-compat) with IREE's names for the plugin ABI, so
// this file builds unchanged against IREE's own header or ireepkg's.

#include <inttypes.h>
#include <stdio.h>

#include "iree/hal/local/executable_plugin.h"

// What load allocates: the allocator to free it with, and the log stream.
typedef struct {
  iree_hal_executable_plugin_allocator_t host_allocator;
  FILE *log;
} system_plugin_t;

// The import's arguments as the compiled dispatch packs them (llvm.bareptr
// memrefs and index offsets), then the fields the program asks for with
// hal.import.fields.
typedef struct {
  const float *lhs;
  size_t lhs_offset;
  const float *rhs;
  size_t rhs_offset;
  float *out;
  size_t out_offset;
  size_t count;
  size_t tile;
  uint32_t processor_id;
  const uint64_t *processor_data;
} mul_args_t;

static int system_mul_workgroup(void *args_ptr, void *context, void *reserved) {
  (void)reserved;
  system_plugin_t *plugin = (system_plugin_t *)context;
  const mul_args_t *args = (const mul_args_t *)args_ptr;
  fprintf(plugin->log, "processor_id=%u\n", args->processor_id);
  if (args->processor_data) {
    fprintf(plugin->log, "processor_data[0]=%" PRIX64 "\n",
            args->processor_data[0]);
  }
  for (size_t i = 0; i < args->count; ++i) {
    float a = args->lhs[args->lhs_offset + i];
    float b = args->rhs[args->rhs_offset + i];
    args->out[args->out_offset + i] = a * b;
    fprintf(plugin->log, "mul[%zu:%zu](%g * %g = %g)\n", args->tile, i, a, b,
            a * b);
  }
  return 0;
}

static iree_hal_executable_plugin_status_t system_plugin_load(
    const iree_hal_executable_plugin_environment_v0_t *environment,
    size_t param_count, const iree_hal_executable_plugin_string_pair_t *params,
    void **out_self) {
  (void)param_count;
  (void)params;
  system_plugin_t *plugin = NULL;
  iree_hal_executable_plugin_status_t status =
      iree_hal_executable_plugin_allocator_malloc(
          environment->host_allocator, sizeof(*plugin), (void **)&plugin);
  if (!iree_hal_executable_plugin_status_is_ok(status))
    return status;
  plugin->host_allocator = environment->host_allocator;
  plugin->log = stdout;
  *out_self = plugin;
  return iree_hal_executable_plugin_ok_status();
}

static void system_plugin_unload(void *self) {
  system_plugin_t *plugin = (system_plugin_t *)self;
  fflush(plugin->log);
  iree_hal_executable_plugin_allocator_free(plugin->host_allocator, plugin);
}

static iree_hal_executable_plugin_status_t system_plugin_resolve(
    void *self, const iree_hal_executable_plugin_resolve_params_v0_t *params,
    iree_hal_executable_plugin_resolution_t *out_resolution) {
  *out_resolution = 0;
  bool missing_required = false;
  for (size_t i = 0; i < params->count; ++i) {
    if (params->out_fn_ptrs[i])
      continue; // another plugin resolved it
    const char *name = params->symbol_names[i];
    bool optional = iree_hal_executable_plugin_import_is_optional(name);
    if (optional)
      ++name;
    if (iree_hal_executable_plugin_strcmp(name, "system_mul_workgroup") == 0) {
      params->out_fn_ptrs[i] = (void *)system_mul_workgroup;
      params->out_fn_contexts[i] = self;
    } else if (optional) {
      *out_resolution |= IREE_HAL_EXECUTABLE_PLUGIN_RESOLUTION_MISSING_OPTIONAL;
    } else {
      missing_required = true;
    }
  }
  return missing_required ? iree_hal_executable_plugin_status_from_code(
                                IREE_HAL_EXECUTABLE_PLUGIN_STATUS_NOT_FOUND)
                          : iree_hal_executable_plugin_ok_status();
}

IREE_HAL_EXECUTABLE_PLUGIN_EXPORT const iree_hal_executable_plugin_header_t **
iree_hal_executable_plugin_query(
    iree_hal_executable_plugin_version_t max_version, void *reserved) {
  (void)reserved;
  static const iree_hal_executable_plugin_header_t header = {
      .version = IREE_HAL_EXECUTABLE_PLUGIN_VERSION_LATEST,
      .name = "system_plugin",
      .description = "f32 multiply that logs each element (libc)",
      .features = IREE_HAL_EXECUTABLE_PLUGIN_FEATURE_NONE,
      .sanitizer = IREE_HAL_EXECUTABLE_PLUGIN_SANITIZER_KIND,
  };
  static const iree_hal_executable_plugin_v0_t interface = {
      .header = &header,
      .load = system_plugin_load,
      .unload = system_plugin_unload,
      .resolve = system_plugin_resolve,
  };
  if (max_version > IREE_HAL_EXECUTABLE_PLUGIN_VERSION_LATEST)
    return NULL;
  return (const iree_hal_executable_plugin_header_t **)&interface;
}
