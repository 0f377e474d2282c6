/*===- ireepkg/iree_executable_plugin.h - IREE plugin ABI ----------*- C -*-===*
 *
 * The C ABI between IREE's CPU runtime (`local-sync`, `local-task`) and an
 * executable plugin, version 0.1, written for ireepkg from the documented
 * interface (IREE's `iree/hal/local/executable_plugin.h` defines the same).
 *
 * Every type has the same layout and every constant the same value as IREE's
 * own declarations; only the names differ (`ireepkg_hal_` / `IREEPKG_HAL_`).
 * The one exception is the exported entry point, whose name IREE looks up and
 * which a plugin must therefore define with IREE's spelling,
 * `iree_hal_executable_plugin_query` (..._EXPORT_NAME below).
 *
 * Usable from C (C11 or later) and C++, hosted or freestanding: it includes
 * only <stdbool.h>, <stddef.h> and <stdint.h>, and everything it defines
 * besides types and constants is `static inline`. Plugins include it to
 * implement the ABI; `ireepkg doctor` includes it to load plugins.
 *
 * Lifecycle, as driven by the host:
 *   1. query(max_version) -> pointer to the v0 interface (NULL: unsupported);
 *   2. load(environment, params) -> self;
 *   3. resolve(self, names...) any number of times, possibly concurrently;
 *   4. unload(self).
 * Imports are then called as `int fn(void* params, void* context,
 * void* reserved)` with `context` as stored by resolve.
 *
 *===----------------------------------------------------------------------===*/
#ifndef IREEPKG_IREE_EXECUTABLE_PLUGIN_H
#define IREEPKG_IREE_EXECUTABLE_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Versions and the entry point
 *===----------------------------------------------------------------------===*/

/* Version of the plugin ABI; the header's first field. */
typedef uint32_t ireepkg_hal_executable_plugin_version_t;

/* ABI v0.1, the only version so far. */
#define IREEPKG_HAL_EXECUTABLE_PLUGIN_VERSION_0_1 0x00000001u
/* The newest version this header describes. */
#define IREEPKG_HAL_EXECUTABLE_PLUGIN_VERSION_LATEST                           \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_VERSION_0_1

/* Name of the function every plugin exports (for dlsym / ELF lookup). */
#define IREEPKG_HAL_EXECUTABLE_PLUGIN_EXPORT_NAME                              \
  "iree_hal_executable_plugin_query"

/* Marks the entry point as exported (default visibility). */
#if defined(_WIN32) || defined(__CYGWIN__)
#define IREEPKG_HAL_EXECUTABLE_PLUGIN_EXPORT __declspec(dllexport)
#else
#define IREEPKG_HAL_EXECUTABLE_PLUGIN_EXPORT                                   \
  __attribute__((visibility("default")))
#endif

/*===----------------------------------------------------------------------===*
 * Header: features and sanitizer
 *===----------------------------------------------------------------------===*/

/* Feature bits of ireepkg_hal_executable_plugin_header_t::features. */
enum ireepkg_hal_executable_plugin_feature_bits_t {
  IREEPKG_HAL_EXECUTABLE_PLUGIN_FEATURE_NONE = 0u,
  /* Needs nothing from the system beyond this ABI (no libc, TLS, threads,
   * syscalls; memory only from the host allocator). Required by the
   * embedded-ELF loader. */
  IREEPKG_HAL_EXECUTABLE_PLUGIN_FEATURE_STANDALONE = 1u << 0,
  /* Statuses are full iree_status_t objects rather than plain codes; only
   * hosts built with full status support accept such plugins. */
  IREEPKG_HAL_EXECUTABLE_PLUGIN_FEATURE_FULL_STATUS = 1u << 1,
};
typedef uint32_t ireepkg_hal_executable_plugin_features_t;

/* The sanitizer a plugin was built with (an int-sized enum). */
typedef enum ireepkg_hal_executable_plugin_sanitizer_kind_e {
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_NONE = 0,
  /* -fsanitize=address */
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_ADDRESS = 1,
  /* -fsanitize=memory */
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_MEMORY = 2,
  /* -fsanitize=thread */
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_THREAD = 3,
  /* -fsanitize=undefined */
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_UNDEFINED = 4,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_MAX_ENUM = INT32_MAX,
} ireepkg_hal_executable_plugin_sanitizer_kind_t;

/* The sanitizer of the including translation unit, for the header field. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_KIND                           \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_ADDRESS
#elif __has_feature(memory_sanitizer)
#define IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_KIND                           \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_MEMORY
#elif __has_feature(thread_sanitizer)
#define IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_KIND                           \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_THREAD
#endif
#endif
#if !defined(IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_KIND)
#if defined(__SANITIZE_ADDRESS__)
#define IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_KIND                           \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_ADDRESS
#elif defined(__SANITIZE_THREAD__)
#define IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_KIND                           \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_THREAD
#else
#define IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_KIND                           \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_NONE
#endif
#endif

/* Present at the start of every ABI version; the host reads it first. */
typedef struct ireepkg_hal_executable_plugin_header_t {
  /* ABI version the plugin was built for (usually ..._VERSION_LATEST). */
  ireepkg_hal_executable_plugin_version_t version;
  /* Short name for logs and diagnostics. */
  const char *name;
  /* Human-readable description (build, configuration, version...). */
  const char *description;
  /* Bitfield of ireepkg_hal_executable_plugin_feature_bits_t. */
  ireepkg_hal_executable_plugin_features_t features;
  /* The sanitizer the plugin was built with. */
  ireepkg_hal_executable_plugin_sanitizer_kind_t sanitizer;
  /* Reserved; must be zero. */
  uint64_t reserved[8];
} ireepkg_hal_executable_plugin_header_t;

/* The exported entry point. Returns a pointer to the interface struct of the
 * newest version <= |max_version| the plugin implements (for v0: a
 * ireepkg_hal_executable_plugin_v0_t, whose first field is the header
 * pointer), or NULL when the plugin cannot serve |max_version|. Must be pure:
 * it may be called many times. |reserved| is NULL. */
typedef const ireepkg_hal_executable_plugin_header_t **(
    *ireepkg_hal_executable_plugin_query_fn_t)(
    ireepkg_hal_executable_plugin_version_t max_version, void *reserved);

/*===----------------------------------------------------------------------===*
 * Status
 *===----------------------------------------------------------------------===*/

/* Status codes (the values of iree_status_code_t). Any value within
 * IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_CODE_MASK is a valid code. */
typedef enum ireepkg_hal_executable_plugin_status_code_e {
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OK = 0,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_CANCELLED = 1,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_UNKNOWN = 2,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_INVALID_ARGUMENT = 3,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_DEADLINE_EXCEEDED = 4,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_NOT_FOUND = 5,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_ALREADY_EXISTS = 6,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_PERMISSION_DENIED = 7,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_RESOURCE_EXHAUSTED = 8,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_FAILED_PRECONDITION = 9,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_ABORTED = 10,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OUT_OF_RANGE = 11,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_UNIMPLEMENTED = 12,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_INTERNAL = 13,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_UNAVAILABLE = 14,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_DATA_LOSS = 15,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_UNAUTHENTICATED = 16,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_DEFERRED = 17,
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_CODE_MASK = 0x1Fu,
} ireepkg_hal_executable_plugin_status_code_t;

/* An opaque, pointer-sized status. Without FULL_STATUS it is just a code
 * cast to a pointer (NULL = OK); with it, the low bits still hold the code. */
typedef struct ireepkg_hal_executable_plugin_status_handle_t
    *ireepkg_hal_executable_plugin_status_t;

static inline ireepkg_hal_executable_plugin_status_t
ireepkg_hal_executable_plugin_status_from_code(
    ireepkg_hal_executable_plugin_status_code_t code) {
  uintptr_t bits = (uintptr_t)code;
  bits &= (uintptr_t)IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_CODE_MASK;
  return (ireepkg_hal_executable_plugin_status_t)bits;
}

static inline ireepkg_hal_executable_plugin_status_t
ireepkg_hal_executable_plugin_ok_status(void) {
  return ireepkg_hal_executable_plugin_status_from_code(
      IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OK);
}

static inline ireepkg_hal_executable_plugin_status_code_t
ireepkg_hal_executable_plugin_status_code(
    ireepkg_hal_executable_plugin_status_t status) {
  uintptr_t bits = (uintptr_t)status;
  bits &= (uintptr_t)IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_CODE_MASK;
  return (ireepkg_hal_executable_plugin_status_code_t)bits;
}

static inline bool ireepkg_hal_executable_plugin_status_is_ok(
    ireepkg_hal_executable_plugin_status_t status) {
  return (uintptr_t)status ==
         (uintptr_t)IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OK;
}

/*===----------------------------------------------------------------------===*
 * Host allocator (layout-compatible with iree_allocator_t)
 *===----------------------------------------------------------------------===*/

typedef enum ireepkg_hal_executable_plugin_allocator_command_e {
  /* params: alloc_params; *inout_ptr receives the new block. */
  IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_MALLOC = 0,
  /* Like MALLOC, zero-filled. */
  IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_CALLOC = 1,
  /* params: alloc_params; *inout_ptr is the old block, then the new one. */
  IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_REALLOC = 2,
  /* params: NULL; *inout_ptr is the block to free. */
  IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_FREE = 3,
} ireepkg_hal_executable_plugin_allocator_command_t;

/* The params of MALLOC, CALLOC and REALLOC. */
typedef struct ireepkg_hal_executable_plugin_allocator_alloc_params_t {
  size_t byte_length;
} ireepkg_hal_executable_plugin_allocator_alloc_params_t;

typedef ireepkg_hal_executable_plugin_status_t (
    *ireepkg_hal_executable_plugin_allocator_ctl_fn_t)(
    void *self, ireepkg_hal_executable_plugin_allocator_command_t command,
    const void *params, void **inout_ptr);

typedef struct ireepkg_hal_executable_plugin_allocator_t {
  void *self;
  ireepkg_hal_executable_plugin_allocator_ctl_fn_t ctl;
} ireepkg_hal_executable_plugin_allocator_t;

static inline ireepkg_hal_executable_plugin_status_t
ireepkg_hal_executable_plugin_allocator_malloc(
    ireepkg_hal_executable_plugin_allocator_t allocator, size_t byte_length,
    void **out_ptr) {
  ireepkg_hal_executable_plugin_allocator_alloc_params_t params;
  params.byte_length = byte_length;
  *out_ptr = NULL;
  return allocator.ctl(allocator.self,
                       IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_MALLOC,
                       &params, out_ptr);
}

static inline ireepkg_hal_executable_plugin_status_t
ireepkg_hal_executable_plugin_allocator_calloc(
    ireepkg_hal_executable_plugin_allocator_t allocator, size_t byte_length,
    void **out_ptr) {
  ireepkg_hal_executable_plugin_allocator_alloc_params_t params;
  params.byte_length = byte_length;
  *out_ptr = NULL;
  return allocator.ctl(allocator.self,
                       IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_CALLOC,
                       &params, out_ptr);
}

static inline ireepkg_hal_executable_plugin_status_t
ireepkg_hal_executable_plugin_allocator_realloc(
    ireepkg_hal_executable_plugin_allocator_t allocator, size_t byte_length,
    void **inout_ptr) {
  ireepkg_hal_executable_plugin_allocator_alloc_params_t params;
  params.byte_length = byte_length;
  return allocator.ctl(allocator.self,
                       IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_REALLOC,
                       &params, inout_ptr);
}

static inline ireepkg_hal_executable_plugin_status_t
ireepkg_hal_executable_plugin_allocator_free(
    ireepkg_hal_executable_plugin_allocator_t allocator, void *ptr) {
  return allocator.ctl(allocator.self,
                       IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_FREE,
                       NULL, &ptr);
}

/*===----------------------------------------------------------------------===*
 * Strings
 *===----------------------------------------------------------------------===*/

/* A string that is not NUL-terminated: use |size|. */
typedef struct ireepkg_hal_executable_plugin_string_view_t {
  const char *data;
  size_t size;
} ireepkg_hal_executable_plugin_string_view_t;

/* A key=value load parameter (iree_string_pair_t). */
typedef struct ireepkg_hal_executable_plugin_string_pair_t {
  ireepkg_hal_executable_plugin_string_view_t key;
  ireepkg_hal_executable_plugin_string_view_t value;
} ireepkg_hal_executable_plugin_string_pair_t;

/* True when |view| equals the NUL-terminated |cstr|. */
static inline bool ireepkg_hal_executable_plugin_string_view_equal(
    ireepkg_hal_executable_plugin_string_view_t view, const char *cstr) {
  size_t i = 0;
  for (; i < view.size; ++i) {
    if (cstr[i] == '\0' || cstr[i] != view.data[i])
      return false;
  }
  return cstr[i] == '\0';
}

/*===----------------------------------------------------------------------===*
 * Import resolution
 *===----------------------------------------------------------------------===*/

/* Bits of the resolution result (*out_resolution of resolve). */
enum ireepkg_hal_executable_plugin_resolution_bits_e {
  /* At least one optional import was not found. */
  IREEPKG_HAL_EXECUTABLE_PLUGIN_RESOLUTION_MISSING_OPTIONAL = 1u << 0,
};
typedef uint32_t ireepkg_hal_executable_plugin_resolution_t;

/* The prefix marking an optional import name (it may resolve to NULL). */
#define IREEPKG_HAL_EXECUTABLE_PLUGIN_OPTIONAL_IMPORT_PREFIX '?'

/* True when the import |symbol_name| is optional (starts with `?`). */
static inline bool
ireepkg_hal_executable_plugin_import_is_optional(const char *symbol_name) {
  return symbol_name &&
         symbol_name[0] == IREEPKG_HAL_EXECUTABLE_PLUGIN_OPTIONAL_IMPORT_PREFIX;
}

/* strcmp() for freestanding code: <0, 0 or >0 like the libc function. */
static inline int ireepkg_hal_executable_plugin_strcmp(const char *lhs,
                                                       const char *rhs) {
  while (*lhs != '\0' && *lhs == *rhs) {
    ++lhs;
    ++rhs;
  }
  return (int)(unsigned char)*lhs - (int)(unsigned char)*rhs;
}

/*===----------------------------------------------------------------------===*
 * Version 0 interface
 *===----------------------------------------------------------------------===*/

/* What the host gives a plugin at load. */
typedef struct ireepkg_hal_executable_plugin_environment_v0_t {
  /* For every allocation of the plugin; valid until unload. */
  ireepkg_hal_executable_plugin_allocator_t host_allocator;
} ireepkg_hal_executable_plugin_environment_v0_t;

/* A batch of imports to resolve. The three arrays have |count| entries;
 * |symbol_names| is sorted and may carry the optional `?` prefix. Entries
 * whose out_fn_ptrs slot is already non-NULL were resolved by another plugin
 * and must be left alone. */
typedef struct ireepkg_hal_executable_plugin_resolve_params_v0_t {
  size_t count;
  const char *const *symbol_names;
  void **out_fn_ptrs;
  void **out_fn_contexts;
} ireepkg_hal_executable_plugin_resolve_params_v0_t;

/* Fills what it can. Returns NOT_FOUND when a required import stays
 * unresolved (the host then asks the next plugin); a missing optional import
 * sets ..._RESOLUTION_MISSING_OPTIONAL and is not an error. */
typedef ireepkg_hal_executable_plugin_status_t (
    *ireepkg_hal_executable_plugin_resolve_fn_v0_t)(
    void *self, const ireepkg_hal_executable_plugin_resolve_params_v0_t *params,
    ireepkg_hal_executable_plugin_resolution_t *out_resolution);

/* Loads one instance: |params| (key=value pairs) are valid only during the
 * call. *out_self is passed to unload and resolve; it may be NULL. */
typedef ireepkg_hal_executable_plugin_status_t (
    *ireepkg_hal_executable_plugin_load_fn_v0_t)(
    const ireepkg_hal_executable_plugin_environment_v0_t *environment,
    size_t param_count,
    const ireepkg_hal_executable_plugin_string_pair_t *params, void **out_self);

/* Frees everything load allocated; the library may be closed right after. */
typedef void (*ireepkg_hal_executable_plugin_unload_fn_v0_t)(void *self);

/* The interface the query function returns for version 0.x. Read-only; may
 * live in the plugin's .rodata. Load and resolve must be thread-safe. */
typedef struct ireepkg_hal_executable_plugin_v0_t {
  const ireepkg_hal_executable_plugin_header_t *header;
  ireepkg_hal_executable_plugin_load_fn_v0_t load;
  ireepkg_hal_executable_plugin_unload_fn_v0_t unload;
  ireepkg_hal_executable_plugin_resolve_fn_v0_t resolve;
} ireepkg_hal_executable_plugin_v0_t;

/* The call convention of an import resolved by a plugin: |params| points at
 * the packed arguments of the MLIR call, |context| is what resolve stored in
 * out_fn_contexts, |reserved| is NULL. Returns 0 on success. */
typedef int (*ireepkg_hal_executable_plugin_import_fn_t)(void *params,
                                                         void *context,
                                                         void *reserved);

/*===----------------------------------------------------------------------===*
 * Layout checks (64-bit targets)
 *===----------------------------------------------------------------------===*/

#if defined(__cplusplus)
#define IREEPKG_HAL_EXECUTABLE_PLUGIN_STATIC_ASSERT(cond, msg)                 \
  static_assert(cond, msg)
#else
#define IREEPKG_HAL_EXECUTABLE_PLUGIN_STATIC_ASSERT(cond, msg)                 \
  _Static_assert(cond, msg)
#endif

IREEPKG_HAL_EXECUTABLE_PLUGIN_STATIC_ASSERT(
    sizeof(ireepkg_hal_executable_plugin_sanitizer_kind_t) == 4,
    "the sanitizer field is int-sized");
IREEPKG_HAL_EXECUTABLE_PLUGIN_STATIC_ASSERT(
    sizeof(ireepkg_hal_executable_plugin_allocator_command_t) == 4,
    "allocator commands are int-sized");
#if UINTPTR_MAX == UINT64_MAX
IREEPKG_HAL_EXECUTABLE_PLUGIN_STATIC_ASSERT(
    offsetof(ireepkg_hal_executable_plugin_header_t, features) == 24 &&
        offsetof(ireepkg_hal_executable_plugin_header_t, sanitizer) == 28 &&
        offsetof(ireepkg_hal_executable_plugin_header_t, reserved) == 32 &&
        sizeof(ireepkg_hal_executable_plugin_header_t) == 96,
    "header layout of ABI v0.1");
IREEPKG_HAL_EXECUTABLE_PLUGIN_STATIC_ASSERT(
    sizeof(ireepkg_hal_executable_plugin_v0_t) == 32 &&
        sizeof(ireepkg_hal_executable_plugin_resolve_params_v0_t) == 32 &&
        sizeof(ireepkg_hal_executable_plugin_string_pair_t) == 32 &&
        sizeof(ireepkg_hal_executable_plugin_environment_v0_t) == 16,
    "v0 interface layout");
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* IREEPKG_IREE_EXECUTABLE_PLUGIN_H */
