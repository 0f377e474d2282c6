/*===- iree/hal/local/executable_plugin.h - IREE's ABI names ---*- C -*-===*
 *
 * IREE's names for the executable-plugin ABI v0.1, so that a plugin written
 * against IREE's `iree/hal/local/executable_plugin.h` (IREE's own samples
 * among them) builds unchanged without an IREE checkout. Installed as
 * <prefix>/include/ireepkg/iree-compat/iree/hal/local/executable_plugin.h;
 * put <prefix>/include/ireepkg/iree-compat on the include path (the CMake
 * helpers do, after the author's own INCLUDE_DIRECTORIES, so a real IREE
 * runtime/src given there wins).
 *
 * Every name here is defined in terms of ireepkg's declarations in
 * <ireepkg/iree_executable_plugin.h> (types are typedefs of ireepkg's,
 * constants and helpers are ireepkg's under IREE's spelling), so the two
 * cannot drift apart. It shares IREE's include guard: including IREE's own
 * header as well defines each name once.
 *
 * What differs from IREE's header, none of it used by IREE's samples:
 *   - the struct and enum tags are ireepkg's (`struct
 *     iree_hal_executable_plugin_header_t` names no type here; the typedef
 *     names are IREE's);
 *   - a string pair has `key` and `value`, not also `first` and `second`;
 *   - the status helpers are functions, not macros, and
 *     iree_hal_executable_plugin_status_code() returns the code
 *     (an iree_hal_executable_plugin_status_code_t).
 *
 *===----------------------------------------------------------------------===*/
#ifndef IREE_HAL_LOCAL_EXECUTABLE_PLUGIN_H_
#define IREE_HAL_LOCAL_EXECUTABLE_PLUGIN_H_

/* Relative to this file, so that only iree-compat needs to be on the include
 * path: <prefix>/include/ireepkg/iree_executable_plugin.h. */
#include "../../../../iree_executable_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The host's size type; IREE lets a build choose it, the ABI is size_t. */
#if !defined(IREE_HOST_SIZE_T)
#define IREE_HOST_SIZE_T size_t
#endif
typedef IREE_HOST_SIZE_T iree_host_size_t;
IREEPKG_HAL_EXECUTABLE_PLUGIN_STATIC_ASSERT(
    sizeof(iree_host_size_t) == sizeof(size_t),
    "the plugin ABI passes sizes as size_t");

/* Versions and the entry point. */
typedef ireepkg_hal_executable_plugin_version_t
    iree_hal_executable_plugin_version_t;
#define IREE_HAL_EXECUTABLE_PLUGIN_VERSION_0_1                                 \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_VERSION_0_1
#define IREE_HAL_EXECUTABLE_PLUGIN_VERSION_LATEST                              \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_VERSION_LATEST
#define IREE_HAL_EXECUTABLE_PLUGIN_EXPORT_NAME                                 \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_EXPORT_NAME
#define IREE_HAL_EXECUTABLE_PLUGIN_EXPORT IREEPKG_HAL_EXECUTABLE_PLUGIN_EXPORT

/* Header: features and sanitizer. */
typedef ireepkg_hal_executable_plugin_features_t
    iree_hal_executable_plugin_features_t;
#define IREE_HAL_EXECUTABLE_PLUGIN_FEATURE_NONE                                \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_FEATURE_NONE
#define IREE_HAL_EXECUTABLE_PLUGIN_FEATURE_STANDALONE                          \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_FEATURE_STANDALONE
#define IREE_HAL_EXECUTABLE_PLUGIN_FEATURE_FULL_STATUS                         \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_FEATURE_FULL_STATUS

typedef ireepkg_hal_executable_plugin_sanitizer_kind_t
    iree_hal_executable_plugin_sanitizer_kind_t;
#define IREE_HAL_EXECUTABLE_PLUGIN_SANITIZER_NONE                              \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_NONE
#define IREE_HAL_EXECUTABLE_PLUGIN_SANITIZER_ADDRESS                           \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_ADDRESS
#define IREE_HAL_EXECUTABLE_PLUGIN_SANITIZER_MEMORY                            \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_MEMORY
#define IREE_HAL_EXECUTABLE_PLUGIN_SANITIZER_THREAD                            \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_THREAD
#define IREE_HAL_EXECUTABLE_PLUGIN_SANITIZER_UNDEFINED                         \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_UNDEFINED
#define IREE_HAL_EXECUTABLE_PLUGIN_SANITIZER_MAX_ENUM                          \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_MAX_ENUM
#if !defined(IREE_HAL_EXECUTABLE_PLUGIN_SANITIZER_KIND)
#define IREE_HAL_EXECUTABLE_PLUGIN_SANITIZER_KIND                              \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_KIND
#endif

typedef ireepkg_hal_executable_plugin_header_t
    iree_hal_executable_plugin_header_t;
typedef ireepkg_hal_executable_plugin_query_fn_t
    iree_hal_executable_plugin_query_fn_t;

/* Status. */
typedef ireepkg_hal_executable_plugin_status_code_t
    iree_hal_executable_plugin_status_code_t;
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_OK                                   \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OK
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_CANCELLED                            \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_CANCELLED
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_UNKNOWN                              \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_UNKNOWN
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_INVALID_ARGUMENT                     \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_INVALID_ARGUMENT
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_DEADLINE_EXCEEDED                    \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_DEADLINE_EXCEEDED
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_NOT_FOUND                            \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_NOT_FOUND
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_ALREADY_EXISTS                       \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_ALREADY_EXISTS
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_PERMISSION_DENIED                    \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_PERMISSION_DENIED
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_RESOURCE_EXHAUSTED                   \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_RESOURCE_EXHAUSTED
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_FAILED_PRECONDITION                  \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_FAILED_PRECONDITION
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_ABORTED                              \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_ABORTED
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_OUT_OF_RANGE                         \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OUT_OF_RANGE
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_UNIMPLEMENTED                        \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_UNIMPLEMENTED
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_INTERNAL                             \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_INTERNAL
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_UNAVAILABLE                          \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_UNAVAILABLE
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_DATA_LOSS                            \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_DATA_LOSS
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_UNAUTHENTICATED                      \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_UNAUTHENTICATED
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_DEFERRED                             \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_DEFERRED
#define IREE_HAL_EXECUTABLE_PLUGIN_STATUS_CODE_MASK                            \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_CODE_MASK

typedef ireepkg_hal_executable_plugin_status_t
    iree_hal_executable_plugin_status_t;
#define iree_hal_executable_plugin_status_from_code                            \
  ireepkg_hal_executable_plugin_status_from_code
#define iree_hal_executable_plugin_ok_status                                   \
  ireepkg_hal_executable_plugin_ok_status
#define iree_hal_executable_plugin_status_code                                 \
  ireepkg_hal_executable_plugin_status_code
#define iree_hal_executable_plugin_status_is_ok                                \
  ireepkg_hal_executable_plugin_status_is_ok

/* Host allocator. */
typedef ireepkg_hal_executable_plugin_allocator_command_t
    iree_hal_executable_plugin_allocator_command_t;
#define IREE_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_MALLOC                    \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_MALLOC
#define IREE_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_CALLOC                    \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_CALLOC
#define IREE_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_REALLOC                   \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_REALLOC
#define IREE_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_FREE                      \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_FREE
typedef ireepkg_hal_executable_plugin_allocator_alloc_params_t
    iree_hal_executable_plugin_allocator_alloc_params_t;
typedef ireepkg_hal_executable_plugin_allocator_ctl_fn_t
    iree_hal_executable_plugin_allocator_ctl_fn_t;
typedef ireepkg_hal_executable_plugin_allocator_t
    iree_hal_executable_plugin_allocator_t;
#define iree_hal_executable_plugin_allocator_malloc                            \
  ireepkg_hal_executable_plugin_allocator_malloc
#define iree_hal_executable_plugin_allocator_free                              \
  ireepkg_hal_executable_plugin_allocator_free

/* Strings. */
typedef ireepkg_hal_executable_plugin_string_view_t
    iree_hal_executable_plugin_string_view_t;
typedef ireepkg_hal_executable_plugin_string_pair_t
    iree_hal_executable_plugin_string_pair_t;

/* Import resolution. */
#define IREE_HAL_EXECUTABLE_PLUGIN_RESOLUTION_MISSING_OPTIONAL                 \
  IREEPKG_HAL_EXECUTABLE_PLUGIN_RESOLUTION_MISSING_OPTIONAL
typedef ireepkg_hal_executable_plugin_resolution_t
    iree_hal_executable_plugin_resolution_t;
#define iree_hal_executable_plugin_import_is_optional                          \
  ireepkg_hal_executable_plugin_import_is_optional
#define iree_hal_executable_plugin_strcmp ireepkg_hal_executable_plugin_strcmp

/* Version 0 interface. */
typedef ireepkg_hal_executable_plugin_environment_v0_t
    iree_hal_executable_plugin_environment_v0_t;
typedef ireepkg_hal_executable_plugin_resolve_params_v0_t
    iree_hal_executable_plugin_resolve_params_v0_t;
typedef ireepkg_hal_executable_plugin_resolve_fn_v0_t
    iree_hal_executable_plugin_resolve_fn_v0_t;
typedef ireepkg_hal_executable_plugin_v0_t iree_hal_executable_plugin_v0_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* IREE_HAL_LOCAL_EXECUTABLE_PLUGIN_H_ */
