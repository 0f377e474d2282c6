//===- simple_mul.c - Element-wise multiply as an IREE executable plugin --===//
//
// An IREE executable plugin (ABI v0.1, see ireepkg/iree_executable_plugin.h)
// with one import, `simple_mul_workgroup`: out[i] = a[i] * b[i] * scale on
// f32, one tile of SIMPLE_MUL_TILE_SIZE elements per call. It is called from
// the dispatch of examples/programs/simple_mul.mlir.
//
// The same source builds two ways:
//  - with SIMPLE_MUL_STANDALONE=1 (or IREEPKG_EMBEDDED_ELF, as
//    ireepkg_add_executable_plugin compiles embedded ELF): a freestanding, platform-independent ELF
//    for IREE's embedded-ELF loader (no libc; memory only from the host
//    allocator; STANDALONE feature bit set);
//  - without it: an ordinary system shared library for dlopen.
//
// Load parameter (optional): `scale=<decimal integer>` multiplies every
// product (default 1). IREE's tools cannot pass plugin parameters; C hosts
// of the runtime API can.
//
//===----------------------------------------------------------------------===//

#include "ireepkg/iree_executable_plugin.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if !defined(SIMPLE_MUL_STANDALONE) && defined(IREEPKG_EMBEDDED_ELF)
// ireepkg_add_executable_plugin's embedded builds.
#define SIMPLE_MUL_STANDALONE 1
#endif
#if !defined(SIMPLE_MUL_STANDALONE)
#define SIMPLE_MUL_STANDALONE 0
#endif

#if SIMPLE_MUL_STANDALONE
#define SIMPLE_MUL_FEATURES IREEPKG_HAL_EXECUTABLE_PLUGIN_FEATURE_STANDALONE
#define SIMPLE_MUL_BUILD "embedded ELF"
#else
#define SIMPLE_MUL_FEATURES IREEPKG_HAL_EXECUTABLE_PLUGIN_FEATURE_NONE
#define SIMPLE_MUL_BUILD "system library"
#endif

// Elements per workgroup; must match the tile size in simple_mul.mlir, whose
// workgroup count is ceildiv(dim, SIMPLE_MUL_TILE_SIZE).
#define SIMPLE_MUL_TILE_SIZE 64

// The scale used when the host passes no `scale` parameter. Builds with
// another default are how the tests make two plugins that provide the same
// import with different results.
#if !defined(SIMPLE_MUL_DEFAULT_SCALE)
#define SIMPLE_MUL_DEFAULT_SCALE 1
#endif

typedef ireepkg_hal_executable_plugin_status_t status_t;

static status_t status_code(ireepkg_hal_executable_plugin_status_code_t code) {
  return ireepkg_hal_executable_plugin_status_from_code(code);
}

//===----------------------------------------------------------------------===//
// Plugin state
//===----------------------------------------------------------------------===//

// One per load; passed to every import call as its context.
typedef struct simple_mul_state_t {
  ireepkg_hal_executable_plugin_allocator_t host_allocator;
  float scale;
} simple_mul_state_t;

//===----------------------------------------------------------------------===//
// The import: simple_mul_workgroup
//===----------------------------------------------------------------------===//

// Arguments of the MLIR call, packed in order (every field is pointer-sized,
// so there is no padding). Each memref<f32> is a bare pointer (the function
// has `llvm.bareptr = true`) followed by its offset in elements; index
// operands arrive as size_t.
//
//   func.func private @simple_mul_workgroup(
//       %a: memref<f32>, %a_offset: index,
//       %b: memref<f32>, %b_offset: index,
//       %out: memref<f32>, %out_offset: index,
//       %dim: index, %tile: index) attributes {llvm.bareptr = true}
typedef struct simple_mul_params_t {
  const float *restrict a;
  size_t a_offset;
  const float *restrict b;
  size_t b_offset;
  float *restrict out;
  size_t out_offset;
  // Total number of elements.
  size_t dim;
  // Which tile this call computes: [tile * TILE_SIZE, min(dim, +TILE_SIZE)).
  size_t tile;
} simple_mul_params_t;

// int simple_mul_workgroup(void* params, void* context, void* reserved):
// returns 0 on success, non-zero to fail the dispatch.
static int simple_mul_workgroup(void *params_ptr, void *context,
                                void *reserved) {
  (void)reserved;
  const simple_mul_params_t *params = (const simple_mul_params_t *)params_ptr;
  const simple_mul_state_t *state = (const simple_mul_state_t *)context;
  if (!params || !state)
    return 1;
  size_t begin = params->tile * SIMPLE_MUL_TILE_SIZE;
  if (begin >= params->dim)
    return 0;
  size_t end = params->dim - begin < SIMPLE_MUL_TILE_SIZE
                   ? params->dim
                   : begin + SIMPLE_MUL_TILE_SIZE;
  const float *restrict a = params->a + params->a_offset;
  const float *restrict b = params->b + params->b_offset;
  float *restrict out = params->out + params->out_offset;
  const float scale = state->scale;
  if (scale == 1.0f) {
    for (size_t i = begin; i < end; ++i)
      out[i] = a[i] * b[i];
  } else {
    for (size_t i = begin; i < end; ++i)
      out[i] = a[i] * b[i] * scale;
  }
  return 0;
}

// Every import the plugin provides, sorted by name.
typedef struct simple_mul_export_t {
  const char *name;
  ireepkg_hal_executable_plugin_import_fn_t fn;
} simple_mul_export_t;

static const simple_mul_export_t simple_mul_exports[] = {
    {"simple_mul_workgroup", simple_mul_workgroup},
};

#define SIMPLE_MUL_EXPORT_COUNT                                                \
  (sizeof(simple_mul_exports) / sizeof(simple_mul_exports[0]))

// Binary search of the sorted export table; NULL when |name| is not there.
static ireepkg_hal_executable_plugin_import_fn_t
simple_mul_lookup(const char *name) {
  size_t low = 0;
  size_t high = SIMPLE_MUL_EXPORT_COUNT;
  while (low < high) {
    size_t mid = low + (high - low) / 2;
    int cmp = ireepkg_hal_executable_plugin_strcmp(
        name, simple_mul_exports[mid].name);
    if (cmp == 0)
      return simple_mul_exports[mid].fn;
    if (cmp < 0)
      high = mid;
    else
      low = mid + 1;
  }
  return NULL;
}

//===----------------------------------------------------------------------===//
// Plugin interface
//===----------------------------------------------------------------------===//

// Parses an optionally signed decimal integer into a float. No libc here.
static bool
simple_mul_parse_scale(ireepkg_hal_executable_plugin_string_view_t text,
                       float *out_scale) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size && (text.data[i] == '-' || text.data[i] == '+')) {
    negative = text.data[i] == '-';
    ++i;
  }
  if (i == text.size)
    return false;
  int32_t value = 0;
  for (; i < text.size; ++i) {
    char c = text.data[i];
    if (c < '0' || c > '9')
      return false;
    if (value > (INT32_MAX - (c - '0')) / 10)
      return false;
    value = value * 10 + (c - '0');
  }
  *out_scale = negative ? -(float)value : (float)value;
  return true;
}

static status_t simple_mul_load(
    const ireepkg_hal_executable_plugin_environment_v0_t *environment,
    size_t param_count,
    const ireepkg_hal_executable_plugin_string_pair_t *params,
    void **out_self) {
  *out_self = NULL;

  float scale = (float)SIMPLE_MUL_DEFAULT_SCALE;
  for (size_t i = 0; i < param_count; ++i) {
    if (!ireepkg_hal_executable_plugin_string_view_equal(params[i].key,
                                                         "scale"))
      continue; // Parameters meant for other plugins.
    if (!simple_mul_parse_scale(params[i].value, &scale))
      return status_code(IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_INVALID_ARGUMENT);
  }

  void *memory = NULL;
  status_t status = ireepkg_hal_executable_plugin_allocator_malloc(
      environment->host_allocator, sizeof(simple_mul_state_t), &memory);
  if (!ireepkg_hal_executable_plugin_status_is_ok(status))
    return status;
  simple_mul_state_t *state = (simple_mul_state_t *)memory;
  state->host_allocator = environment->host_allocator;
  state->scale = scale;
  *out_self = state;
  return ireepkg_hal_executable_plugin_ok_status();
}

static void simple_mul_unload(void *self) {
  simple_mul_state_t *state = (simple_mul_state_t *)self;
  if (!state)
    return;
  // Copy the allocator out of the block it is about to free.
  ireepkg_hal_executable_plugin_allocator_t allocator = state->host_allocator;
  ireepkg_hal_executable_plugin_allocator_free(allocator, state);
}

static status_t simple_mul_resolve(
    void *self, const ireepkg_hal_executable_plugin_resolve_params_v0_t *params,
    ireepkg_hal_executable_plugin_resolution_t *out_resolution) {
  *out_resolution = 0;
  bool missing_required = false;
  for (size_t i = 0; i < params->count; ++i) {
    // Filled by a plugin registered later: leave it.
    if (params->out_fn_ptrs[i])
      continue;
    const char *name = params->symbol_names[i];
    bool optional = ireepkg_hal_executable_plugin_import_is_optional(name);
    if (optional)
      ++name;
    ireepkg_hal_executable_plugin_import_fn_t fn = simple_mul_lookup(name);
    if (fn) {
      params->out_fn_ptrs[i] = (void *)fn;
      params->out_fn_contexts[i] = self;
    } else if (optional) {
      *out_resolution |=
          IREEPKG_HAL_EXECUTABLE_PLUGIN_RESOLUTION_MISSING_OPTIONAL;
    } else {
      missing_required = true;
    }
  }
  return status_code(missing_required
                         ? IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_NOT_FOUND
                         : IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OK);
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

static const ireepkg_hal_executable_plugin_header_t simple_mul_header = {
    .version = IREEPKG_HAL_EXECUTABLE_PLUGIN_VERSION_0_1,
    .name = "simple_mul",
    .description = "ireepkg example: f32 element-wise multiply "
                   "(simple_mul_workgroup), " SIMPLE_MUL_BUILD,
    .features = SIMPLE_MUL_FEATURES,
    .sanitizer = IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_KIND,
};

static const ireepkg_hal_executable_plugin_v0_t simple_mul_plugin = {
    .header = &simple_mul_header,
    .load = simple_mul_load,
    .unload = simple_mul_unload,
    .resolve = simple_mul_resolve,
};

IREEPKG_HAL_EXECUTABLE_PLUGIN_EXPORT const
    ireepkg_hal_executable_plugin_header_t **
    iree_hal_executable_plugin_query(
        ireepkg_hal_executable_plugin_version_t max_version, void *reserved) {
  (void)reserved;
  if (max_version < IREEPKG_HAL_EXECUTABLE_PLUGIN_VERSION_0_1)
    return NULL;
  // The v0 struct begins with the header pointer.
  return (const ireepkg_hal_executable_plugin_header_t **)&simple_mul_plugin;
}
