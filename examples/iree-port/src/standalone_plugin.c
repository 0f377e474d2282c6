// standalone_plugin.c - a standalone executable plugin written the way
// IREE's samples/custom_dispatch/cpu/plugin/standalone_plugin.c is: IREE's
// header path and names, no libc, no state; built as embedded ELF (one per
// architecture, joined into a FatELF .sos). It serves one import,
// standalone_mul_workgroup, which multiplies two f32 tiles.
//
// <iree/hal/local/executable_plugin.h> is ireepkg's (include/ireepkg/
// iree-compat): IREE's names for the plugin ABI, freestanding.

#include "iree/hal/local/executable_plugin.h"

// The import's arguments as the compiled dispatch packs them (llvm.bareptr
// memrefs and index offsets).
typedef struct {
  const float *lhs;
  size_t lhs_offset;
  const float *rhs;
  size_t rhs_offset;
  float *out;
  size_t out_offset;
  size_t count;
  size_t tile;
} mul_args_t;

static int standalone_mul_workgroup(void *args_ptr, void *context,
                                    void *reserved) {
  (void)context;
  (void)reserved;
  const mul_args_t *args = (const mul_args_t *)args_ptr;
  for (size_t i = 0; i < args->count; ++i) {
    args->out[args->out_offset + i] =
        args->lhs[args->lhs_offset + i] * args->rhs[args->rhs_offset + i];
  }
  return 0;
}

static iree_hal_executable_plugin_status_t standalone_plugin_load(
    const iree_hal_executable_plugin_environment_v0_t *environment,
    size_t param_count, const iree_hal_executable_plugin_string_pair_t *params,
    void **out_self) {
  (void)environment;
  (void)param_count;
  (void)params;
  *out_self = NULL; // stateless
  return iree_hal_executable_plugin_ok_status();
}

static void standalone_plugin_unload(void *self) { (void)self; }

static iree_hal_executable_plugin_status_t standalone_plugin_resolve(
    void *self, const iree_hal_executable_plugin_resolve_params_v0_t *params,
    iree_hal_executable_plugin_resolution_t *out_resolution) {
  (void)self;
  *out_resolution = 0;
  bool missing_required = false;
  for (size_t i = 0; i < params->count; ++i) {
    if (params->out_fn_ptrs[i])
      continue; // another plugin resolved it
    const char *name = params->symbol_names[i];
    bool optional = iree_hal_executable_plugin_import_is_optional(name);
    if (optional)
      ++name;
    if (iree_hal_executable_plugin_strcmp(name, "standalone_mul_workgroup") ==
        0) {
      params->out_fn_ptrs[i] = (void *)standalone_mul_workgroup;
      params->out_fn_contexts[i] = NULL;
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
      .name = "standalone_plugin",
      .description = "f32 multiply, freestanding",
      .features = IREE_HAL_EXECUTABLE_PLUGIN_FEATURE_STANDALONE,
      .sanitizer = IREE_HAL_EXECUTABLE_PLUGIN_SANITIZER_NONE,
  };
  static const iree_hal_executable_plugin_v0_t interface = {
      .header = &header,
      .load = standalone_plugin_load,
      .unload = standalone_plugin_unload,
      .resolve = standalone_plugin_resolve,
  };
  if (max_version > IREE_HAL_EXECUTABLE_PLUGIN_VERSION_LATEST)
    return NULL;
  return (const iree_hal_executable_plugin_header_t **)&interface;
}
