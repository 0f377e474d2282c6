// @IDENT@.c - an IREE executable plugin (ABI v0.1) with one import,
// `@IDENT@_workgroup`: out[i] = a[i] * b[i] on f32, one tile of
// @IDENT_UPPER@_TILE_SIZE elements per call. tests/@IDENT@.mlir calls it.
//
// ireepkg_add_executable_plugin() builds this file twice: as a
// platform-independent embedded ELF per architecture (IREEPKG_EMBEDDED_ELF=1:
// freestanding, no libc, memory only from the host allocator) and, with
// SYSTEM_LIBRARY, as an ordinary shared library for the host.

#include "ireepkg/iree_executable_plugin.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(IREEPKG_EMBEDDED_ELF)
#define @IDENT_UPPER@_FEATURES IREEPKG_HAL_EXECUTABLE_PLUGIN_FEATURE_STANDALONE
#else
#define @IDENT_UPPER@_FEATURES IREEPKG_HAL_EXECUTABLE_PLUGIN_FEATURE_NONE
#endif

// Elements per workgroup; the workgroup count in tests/@IDENT@.mlir is
// ceildiv(dim, 64).
#define @IDENT_UPPER@_TILE_SIZE 64

typedef ireepkg_hal_executable_plugin_status_t status_t;

// The arguments of the MLIR call, packed in order: each memref<f32> is a bare
// pointer (llvm.bareptr) followed by its offset in elements; index operands
// are size_t.
typedef struct {
  const float *a;
  size_t a_offset;
  const float *b;
  size_t b_offset;
  float *out;
  size_t out_offset;
  size_t dim;
  size_t tile;
} @IDENT@_params_t;

// Returns 0 on success; anything else fails the dispatch.
static int @IDENT@_workgroup(void *params_ptr, void *context, void *reserved) {
  (void)context;
  (void)reserved;
  const @IDENT@_params_t *p = (const @IDENT@_params_t *)params_ptr;
  size_t begin = p->tile * @IDENT_UPPER@_TILE_SIZE;
  size_t end = begin + @IDENT_UPPER@_TILE_SIZE;
  if (end > p->dim)
    end = p->dim;
  const float *a = p->a + p->a_offset;
  const float *b = p->b + p->b_offset;
  float *out = p->out + p->out_offset;
  for (size_t i = begin; i < end; ++i)
    out[i] = a[i] * b[i];
  return 0;
}

static status_t
@IDENT@_load(const ireepkg_hal_executable_plugin_environment_v0_t *environment,
             size_t param_count,
             const ireepkg_hal_executable_plugin_string_pair_t *params,
             void **out_self) {
  (void)environment;
  (void)param_count;
  (void)params;
  *out_self = NULL; // no state
  return ireepkg_hal_executable_plugin_ok_status();
}

static void @IDENT@_unload(void *self) { (void)self; }

static status_t
@IDENT@_resolve(void *self,
                const ireepkg_hal_executable_plugin_resolve_params_v0_t *params,
                ireepkg_hal_executable_plugin_resolution_t *out_resolution) {
  *out_resolution = 0;
  bool missing = false;
  for (size_t i = 0; i < params->count; ++i) {
    if (params->out_fn_ptrs[i])
      continue; // resolved by a plugin registered later
    const char *name = params->symbol_names[i];
    bool optional = ireepkg_hal_executable_plugin_import_is_optional(name);
    if (optional)
      ++name;
    if (ireepkg_hal_executable_plugin_strcmp(name, "@IDENT@_workgroup") == 0) {
      params->out_fn_ptrs[i] = (void *)@IDENT@_workgroup;
      params->out_fn_contexts[i] = self;
    } else if (optional) {
      *out_resolution |=
          IREEPKG_HAL_EXECUTABLE_PLUGIN_RESOLUTION_MISSING_OPTIONAL;
    } else {
      missing = true;
    }
  }
  return ireepkg_hal_executable_plugin_status_from_code(
      missing ? IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_NOT_FOUND
              : IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OK);
}

static const ireepkg_hal_executable_plugin_header_t @IDENT@_header = {
    .version = IREEPKG_HAL_EXECUTABLE_PLUGIN_VERSION_0_1,
    .name = "@IDENT@",
    .description = "@NAME@: f32 element-wise multiply (@IDENT@_workgroup)",
    .features = @IDENT_UPPER@_FEATURES,
    .sanitizer = IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_KIND,
};

static const ireepkg_hal_executable_plugin_v0_t @IDENT@_plugin = {
    .header = &@IDENT@_header,
    .load = @IDENT@_load,
    .unload = @IDENT@_unload,
    .resolve = @IDENT@_resolve,
};

IREEPKG_HAL_EXECUTABLE_PLUGIN_EXPORT const
    ireepkg_hal_executable_plugin_header_t **
    iree_hal_executable_plugin_query(
        ireepkg_hal_executable_plugin_version_t max_version, void *reserved) {
  (void)reserved;
  if (max_version < IREEPKG_HAL_EXECUTABLE_PLUGIN_VERSION_0_1)
    return NULL;
  return (const ireepkg_hal_executable_plugin_header_t **)&@IDENT@_plugin;
}
