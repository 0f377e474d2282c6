/*===- ireepkg/runtime.h - Finding a prefix's runtime plugins ------*- C -*-===*
 *
 * libireepkg_runtime: the C library that applications and launchers use to
 * find the IREE executable plugins installed in an ireepkg prefix, without
 * scanning directories, parsing JSON or loading anything. It maps the
 * prefix's precomputed index (<prefix>/state/runtime.index, written by every
 * ireepkg transaction) and hands out, in activation order, what to pass to
 * IREE's runtime: `--executable_plugin=<spec>` flags, or the path, parameters
 * and imports of each plugin for C callers that register plugins themselves.
 *
 *   ireepkg_runtime_index_t* index = NULL;
 *   ireepkg_runtime_error_t* error = NULL;
 *   if (ireepkg_runtime_locate_and_open(NULL, NULL, 0, &index, &error)) {
 *     fprintf(stderr, "%s\n", ireepkg_runtime_error_message(error));
 *     ireepkg_runtime_free_error(error);
 *     return 1;
 *   }
 *   ireepkg_runtime_plugin_list_t* list = NULL;
 *   if (ireepkg_runtime_list_plugins(index, NULL, 0, &list, &error) == 0) {
 *     for (size_t i = 0; i < list->count; ++i)
 *       printf("--executable_plugin=%s\n", list->plugins[i].spec);
 *     ireepkg_runtime_free_plugin_list(list);
 *   }
 *   ireepkg_runtime_close(index);
 *
 * Rules every function follows:
 *  - Fallible functions return an ireepkg_runtime_status_t (0 = OK) and, when
 *    `out_error` is not NULL, store an error object describing the failure
 *    (free it with ireepkg_runtime_free_error). Outputs are set to NULL/0 on
 *    failure.
 *  - Nothing is printed, nothing aborts, no global state is kept. Memory the
 *    library returns is released only by its own ireepkg_runtime_free_*
 *    functions (or ireepkg_runtime_close).
 *  - An index handle is immutable once opened: any number of threads may list
 *    plugins or format flags from one handle concurrently. A plugin list
 *    points into the index's mapping and keeps the index alive; lists and the
 *    index may be released in any order and from any thread.
 *  - Strings are NUL-terminated UTF-8; paths are absolute, and name the
 *    prefix's files where the prefix is now (a prefix may be moved or
 *    copied after ireepkg wrote it).
 *
 * C99 and C++; links neither LLVM, MLIR nor the C++ standard library.
 *
 *===----------------------------------------------------------------------===*/
#ifndef IREEPKG_RUNTIME_H
#define IREEPKG_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#if defined(IREEPKG_RUNTIME_BUILDING_SHARED)
#define IREEPKG_RUNTIME_API __declspec(dllexport)
#elif defined(IREEPKG_RUNTIME_STATIC)
#define IREEPKG_RUNTIME_API
#else
#define IREEPKG_RUNTIME_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define IREEPKG_RUNTIME_API __attribute__((visibility("default")))
#else
#define IREEPKG_RUNTIME_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Version
 *===----------------------------------------------------------------------===*/

#define IREEPKG_RUNTIME_VERSION_MAJOR 0
#define IREEPKG_RUNTIME_VERSION_MINOR 1
#define IREEPKG_RUNTIME_VERSION_PATCH 0
#define IREEPKG_RUNTIME_VERSION_STRING "0.1.0"
/** major << 16 | minor << 8 | patch, for #if comparisons. */
#define IREEPKG_RUNTIME_VERSION_NUMBER                                         \
  ((IREEPKG_RUNTIME_VERSION_MAJOR << 16) |                                     \
   (IREEPKG_RUNTIME_VERSION_MINOR << 8) | IREEPKG_RUNTIME_VERSION_PATCH)
/** The newest major version of runtime.index this library reads. */
#define IREEPKG_RUNTIME_INDEX_FORMAT_MAJOR 1

/** The library's version, e.g. "0.1.0" (may differ from the header's when
 * an application runs against a newer shared library). */
IREEPKG_RUNTIME_API const char *ireepkg_runtime_version(void);
/** The library's IREEPKG_RUNTIME_VERSION_NUMBER. */
IREEPKG_RUNTIME_API uint32_t ireepkg_runtime_version_number(void);

/*===----------------------------------------------------------------------===*
 * Status and errors
 *===----------------------------------------------------------------------===*/

typedef enum ireepkg_runtime_status_e {
  IREEPKG_RUNTIME_OK = 0,
  /** A NULL or malformed argument: unknown target, unknown flag bits, ... */
  IREEPKG_RUNTIME_ERROR_INVALID_ARGUMENT = 1,
  /** No prefix there: the directory or its state/ does not exist, or no
   * prefix could be chosen (HOME unset). */
  IREEPKG_RUNTIME_ERROR_NO_PREFIX = 2,
  /** The prefix has installed packages but no state/runtime.index (written
   * by an ireepkg older than the index, or the file was removed). */
  IREEPKG_RUNTIME_ERROR_MISSING_INDEX = 3,
  /** runtime.index is truncated, damaged or not an index at all. */
  IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX = 4,
  /** runtime.index was written in a newer major format version. */
  IREEPKG_RUNTIME_ERROR_NEWER_SCHEMA = 5,
  /** A plugin file listed by the index does not exist (with
   * IREEPKG_RUNTIME_LIST_CHECK_FILES). */
  IREEPKG_RUNTIME_ERROR_FILE_MISSING = 6,
  IREEPKG_RUNTIME_ERROR_OUT_OF_MEMORY = 7,
  /** Reading or writing a file failed for another reason (permissions, ...). */
  IREEPKG_RUNTIME_ERROR_IO = 8,
} ireepkg_runtime_status_t;

/** A short constant name: "ok", "invalid argument", "no prefix", "missing
 * index", "corrupt index", "newer schema", "file missing", "out of memory",
 * "I/O error"; "unknown status" for other values. */
IREEPKG_RUNTIME_API const char *
ireepkg_runtime_status_name(ireepkg_runtime_status_t status);

/** What failed, as returned through `out_error`. */
typedef struct ireepkg_runtime_error_t ireepkg_runtime_error_t;

IREEPKG_RUNTIME_API ireepkg_runtime_status_t
ireepkg_runtime_error_status(const ireepkg_runtime_error_t *error);
/** One sentence naming the file concerned, e.g. "the runtime index
 * '/p/state/runtime.index' is corrupted: checksum mismatch". Never NULL. */
IREEPKG_RUNTIME_API const char *
ireepkg_runtime_error_message(const ireepkg_runtime_error_t *error);
/** The file or directory concerned, unescaped; "" when none. */
IREEPKG_RUNTIME_API const char *
ireepkg_runtime_error_path(const ireepkg_runtime_error_t *error);
/** What to do about it; "" when there is nothing useful to say. */
IREEPKG_RUNTIME_API const char *
ireepkg_runtime_error_hint(const ireepkg_runtime_error_t *error);
/** Accepts NULL. */
IREEPKG_RUNTIME_API void
ireepkg_runtime_free_error(ireepkg_runtime_error_t *error);

/*===----------------------------------------------------------------------===*
 * Targets
 *===----------------------------------------------------------------------===*/

/** The platform this library was built for, e.g. "linux-x86_64". */
IREEPKG_RUNTIME_API const char *ireepkg_runtime_host_platform(void);

/*===----------------------------------------------------------------------===*
 * Finding the prefix (the same rules as the ireepkg CLI)
 *===----------------------------------------------------------------------===*/

typedef enum ireepkg_runtime_prefix_source_e {
  IREEPKG_RUNTIME_PREFIX_EXPLICIT = 0,      /**< the caller's path (--prefix) */
  IREEPKG_RUNTIME_PREFIX_ENVIRONMENT = 1,   /**< $IREEPKG_PREFIX */
  IREEPKG_RUNTIME_PREFIX_PROJECT = 2,       /**< <dir>/.iree-plugins */
  /** $XDG_DATA_HOME/ireepkg; on Windows %LOCALAPPDATA%\ireepkg */
  IREEPKG_RUNTIME_PREFIX_XDG_DATA_HOME = 3,
  /** ~/.local/share/ireepkg; on Windows
   * %USERPROFILE%\AppData\Local\ireepkg */
  IREEPKG_RUNTIME_PREFIX_HOME = 4,
} ireepkg_runtime_prefix_source_t;

typedef struct ireepkg_runtime_prefix_location_t {
  /** Absolute, lexically normalized, without a trailing separator (on
   * Windows with backslashes: "C:\\Users\\me\\prefix"). */
  const char *path;
  ireepkg_runtime_prefix_source_t source;
  /** The CLI's word for the source: "--prefix", "IREEPKG_PREFIX",
   * "project", "XDG_DATA_HOME" ("LOCALAPPDATA" on Windows), "default". */
  const char *source_name;
  /** The plugins.json found, for IREEPKG_RUNTIME_PREFIX_PROJECT; else NULL. */
  const char *project_file;
} ireepkg_runtime_prefix_location_t;

/** Chooses the prefix: `explicit_prefix` if not NULL; else $IREEPKG_PREFIX if
 * set and not empty; else `<dir>/.iree-plugins` for the nearest directory at
 * or above `start_dir` (NULL: the current directory) holding a plugins.json
 * file; else $XDG_DATA_HOME/ireepkg if XDG_DATA_HOME is an absolute path;
 * else $HOME/.local/share/ireepkg (on Windows: %LOCALAPPDATA%\ireepkg,
 * else %USERPROFILE%\AppData\Local\ireepkg). A privileged process (set-user-ID,
 * set-group-ID, or file capabilities) ignores every environment variable
 * and, when `start_dir` is NULL, the current directory's project.
 * Relative paths are taken relative to the current directory. Does not
 * check that the prefix exists. Errors: INVALID_ARGUMENT (empty explicit
 * prefix, a path with a line break), NO_PREFIX (HOME not usable), IO
 * (the current directory cannot be determined), OUT_OF_MEMORY. */
IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_locate_prefix(
    const char *explicit_prefix, const char *start_dir,
    ireepkg_runtime_prefix_location_t **out_location,
    ireepkg_runtime_error_t **out_error);
/** Accepts NULL. */
IREEPKG_RUNTIME_API void ireepkg_runtime_free_prefix_location(
    ireepkg_runtime_prefix_location_t *location);

/*===----------------------------------------------------------------------===*
 * Opening a prefix's index
 *===----------------------------------------------------------------------===*/

typedef struct ireepkg_runtime_index_t ireepkg_runtime_index_t;

/** Opens <prefix>/state/runtime.index (memory-mapped, read-only), checking
 * its size, checksum and every internal reference. A prefix whose state/
 * exists but which never had a package installed (no state/installed.json,
 * or one listing no package) and has no index opens as an empty index.
 * `flags` must be 0. Errors: INVALID_ARGUMENT, NO_PREFIX (no <prefix>/state
 * directory), MISSING_INDEX, CORRUPT_INDEX, NEWER_SCHEMA, IO,
 * OUT_OF_MEMORY. */
IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_open(
    const char *prefix, uint32_t flags, ireepkg_runtime_index_t **out_index,
    ireepkg_runtime_error_t **out_error);

/** Opens an index file by its own path (tools, tests). A missing file is
 * MISSING_INDEX. */
IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_open_file(
    const char *index_path, uint32_t flags, ireepkg_runtime_index_t **out_index,
    ireepkg_runtime_error_t **out_error);

/** ireepkg_runtime_locate_prefix followed by ireepkg_runtime_open; a
 * NO_PREFIX message says how the prefix was chosen. */
IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_locate_and_open(
    const char *explicit_prefix, const char *start_dir, uint32_t flags,
    ireepkg_runtime_index_t **out_index, ireepkg_runtime_error_t **out_error);

/** Releases the caller's reference; the mapping goes away when no plugin
 * list uses it any more. Accepts NULL. */
IREEPKG_RUNTIME_API void ireepkg_runtime_close(ireepkg_runtime_index_t *index);

/** Where the prefix is now: the path it was opened with (absolute,
 * lexically normalized) when the prefix has been moved or copied since
 * ireepkg wrote the index; else the path ireepkg wrote it for. */
IREEPKG_RUNTIME_API const char *
ireepkg_runtime_index_prefix(const ireepkg_runtime_index_t *index);
/** The path the index was written for, when the prefix has been moved,
 * copied, unpacked or mounted elsewhere since (and that path is not the
 * same directory); NULL when it has not. Plugin lists of a moved prefix
 * give the paths of its files where it is now; the prefix's flagfile
 * (state/runtime.flags), which IREE reads literally, still names the old
 * place until it is written again (ireepkg_runtime_write_flagfile, or any
 * ireepkg command on the prefix). */
IREEPKG_RUNTIME_API const char *
ireepkg_runtime_index_moved_from(const ireepkg_runtime_index_t *index);
/** The prefix's platform, e.g. "linux-x86_64" (the host's for an empty
 * prefix without an index). */
IREEPKG_RUNTIME_API const char *
ireepkg_runtime_index_platform(const ireepkg_runtime_index_t *index);
/** The file that was opened; "" for an empty prefix without an index. */
IREEPKG_RUNTIME_API const char *
ireepkg_runtime_index_path(const ireepkg_runtime_index_t *index);
/** Runtime plugins in the index, for any target. */
IREEPKG_RUNTIME_API size_t
ireepkg_runtime_index_plugin_count(const ireepkg_runtime_index_t *index);
/** The index file's format version (1.0 for an empty prefix). */
IREEPKG_RUNTIME_API void
ireepkg_runtime_index_format_version(const ireepkg_runtime_index_t *index,
                                     uint32_t *out_major, uint32_t *out_minor);

/*===----------------------------------------------------------------------===*
 * Listing plugins for a target
 *===----------------------------------------------------------------------===*/

typedef enum ireepkg_runtime_format_e {
  IREEPKG_RUNTIME_FORMAT_UNKNOWN = 0, /**< written by a newer ireepkg */
  IREEPKG_RUNTIME_FORMAT_EMBEDDED_ELF = 1,
  IREEPKG_RUNTIME_FORMAT_SYSTEM_LIBRARY = 2,
} ireepkg_runtime_format_t;

typedef enum ireepkg_runtime_skip_reason_e {
  IREEPKG_RUNTIME_SKIP_NONE = 0,           /**< listed in `plugins` */
  IREEPKG_RUNTIME_SKIP_NO_BUILD = 1,       /**< no library for the target */
  IREEPKG_RUNTIME_SKIP_UNKNOWN_FORMAT = 2, /**< a format this library does
                                              not know */
  /** A library for the target that IREE's runtime cannot call on the
   * target's operating system (embedded ELF on Windows: the facts in
   * ireepkg/manifest_schema/platform_facts.h). */
  IREEPKG_RUNTIME_SKIP_TARGET_CANNOT_CALL = 3,
} ireepkg_runtime_skip_reason_t;

typedef struct ireepkg_runtime_parameter_t {
  const char *key;
  const char *value;
} ireepkg_runtime_parameter_t;

typedef struct ireepkg_runtime_plugin_t {
  const char *name;            /**< the runtime plugin's name */
  const char *package;         /**< the package providing it */
  const char *package_version; /**< e.g. "1.2.0" */
  const char *format;          /**< "embedded-elf", "system-library", ... */
  ireepkg_runtime_format_t format_kind;
  ireepkg_runtime_skip_reason_t skip_reason;
  /** The library key chosen: an architecture (embedded-elf; a FatELF .sos
   * is listed under each architecture it holds an image for), a platform
   * (system-library), either possibly with the CPU level of the build
   * chosen ("x86_64_v3"). "fat" only from an index written by ireepkg before
   * index format 1.1. NULL for skipped plugins. */
  const char *library_key;
  /** The absolute path of the file to load. NULL for skipped plugins. */
  const char *path;
  /** What IREE's --executable_plugin takes: "embedded:<path>" for embedded
   * ELF (also for .sos FatELF files), the plain path for system libraries.
   * NULL for skipped plugins. */
  const char *spec;
  size_t import_count;
  const char *const *imports; /**< the symbols the plugin resolves */
  size_t parameter_count;
  /** key=value pairs for the plugin's load(); IREE's command-line tools
   * cannot pass them, C callers of IREE's runtime can. */
  const ireepkg_runtime_parameter_t *parameters;
} ireepkg_runtime_plugin_t;

typedef struct ireepkg_runtime_plugin_list_t {
  const char *prefix;          /**< as ireepkg_runtime_index_prefix */
  const char *target_platform; /**< e.g. "linux-x86_64" */
  const char *target_arch;     /**< e.g. "x86_64" */
  /** The plugins to load, in activation order (IREE resolves imports from
   * the last registered plugin backwards, so later ones override). */
  size_t count;
  const ireepkg_runtime_plugin_t *plugins;
  /** Plugins without a build for the target (or of an unknown format), in
   * activation order, with skip_reason set. */
  size_t skipped_count;
  const ireepkg_runtime_plugin_t *skipped;
} ireepkg_runtime_plugin_list_t;

/** Check that every listed file exists and is a regular file
 * (FILE_MISSING naming the first that does not). */
#define IREEPKG_RUNTIME_LIST_CHECK_FILES 0x1u

/** Lists the runtime plugins for `target`:
 *  - NULL or "host": this process's platform (ireepkg_runtime_host_platform);
 *  - an architecture such as "x86_64": on the prefix's operating system;
 *  - a platform such as "linux-aarch64";
 *  - either followed by a CPU level or features, "x86_64_v3",
 *    "linux-x86_64+avx512f" ("x86_64_v1": the baseline): builds are chosen
 *    for that CPU instead of this one.
 * embedded-elf plugins use the architecture's own file if the package has
 * one, else its FatELF file if that holds an image for the architecture
 * (the index records which it holds), except on an operating system whose
 * IREE runtime cannot call them (Windows; skipped with
 * IREEPKG_RUNTIME_SKIP_TARGET_CANNOT_CALL); system-library plugins use the
 * platform's file. Where the package also has builds for CPU levels
 * (keys such as "x86_64_v3", index format 1.2), the one with the most
 * required features that the CPU has is used instead: this process's CPU
 * (cpuid and xgetbv on x86, the kernel's hwcaps on aarch64 Linux, the
 * baseline elsewhere) when the target is the host's platform without a
 * level, the level named, or none for other platforms. Errors:
 * INVALID_ARGUMENT (unknown architecture or operating system, unknown flag
 * bits), FILE_MISSING, IO, OUT_OF_MEMORY, CORRUPT_INDEX (an embedded-elf
 * path the index stores without its "embedded:" spec, which only the list
 * computes). */
IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_list_plugins(
    const ireepkg_runtime_index_t *index, const char *target, uint32_t flags,
    ireepkg_runtime_plugin_list_t **out_list,
    ireepkg_runtime_error_t **out_error);
/** Accepts NULL. */
IREEPKG_RUNTIME_API void
ireepkg_runtime_free_plugin_list(ireepkg_runtime_plugin_list_t *list);

/*===----------------------------------------------------------------------===*
 * IREE flags
 *===----------------------------------------------------------------------===*/

typedef enum ireepkg_runtime_flag_style_e {
  /** "--executable_plugin=<spec>\n" per plugin, in activation order. */
  IREEPKG_RUNTIME_FLAGS_LINES = 0,
  /** The same lines behind a comment header (prefix, target, plugins that
   * were not activated): a file for IREE's --flagfile=. */
  IREEPKG_RUNTIME_FLAGS_FLAGFILE = 1,
  /** "--executable_plugin=<spec>" each followed by a NUL byte
   * (xargs -0 style); the size counts those NULs. */
  IREEPKG_RUNTIME_FLAGS_NUL = 2,
} ireepkg_runtime_flag_style_t;

/** The flags of `list` as one string (always NUL-terminated as well; free
 * with ireepkg_runtime_free_string); `out_size` (may be NULL) receives its
 * length in bytes. LINES and FLAGFILE refuse a spec containing a line break
 * (INVALID_ARGUMENT): use the NUL style or argv. */
IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_format_flags(
    const ireepkg_runtime_plugin_list_t *list,
    ireepkg_runtime_flag_style_t style, char **out_text, size_t *out_size,
    ireepkg_runtime_error_t **out_error);

/** The flags of `list` as an argv-style array: `*out_argc` strings
 * "--executable_plugin=<spec>" followed by a NULL pointer, in one
 * allocation (free with ireepkg_runtime_free_argv). */
IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_flag_argv(
    const ireepkg_runtime_plugin_list_t *list, char ***out_argv,
    size_t *out_argc, ireepkg_runtime_error_t **out_error);

/** Writes the FLAGFILE text to `path`, replacing it atomically (a temporary
 * file beside it, then rename). */
IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_write_flagfile(
    const ireepkg_runtime_plugin_list_t *list, const char *path,
    ireepkg_runtime_error_t **out_error);

/** Accept NULL. */
IREEPKG_RUNTIME_API void ireepkg_runtime_free_string(char *text);
IREEPKG_RUNTIME_API void ireepkg_runtime_free_argv(char **argv);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* IREEPKG_RUNTIME_H */
