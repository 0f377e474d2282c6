/*===- ireepkg_runtime_tool.c - The ireepkg-runtime program ----------------===*
 *
 * `ireepkg-runtime`: what a target without the ireepkg CLI (Windows, macOS,
 * a device) needs of a prefix, built from libireepkg_runtime alone:
 *
 *   ireepkg-runtime flags [--prefix DIR] [--platform P] [--cpu-level L]
 *                         [--format args|flagfile|json]
 *   ireepkg-runtime write-flagfile [--prefix DIR]
 *
 * `flags` prints what `ireepkg flags runtime` prints for the prefix where
 * it is now; `write-flagfile` writes DIR/state/runtime.flags again for
 * where the prefix is now (IREE reads the paths in it literally, so a moved
 * prefix needs it). Options and output follow the CLI's; a plugin that is
 * not activated is explained with what the index knows (the CLI also reads
 * the package's manifest for the reason).
 *
 *===----------------------------------------------------------------------===*/
#include "ireepkg/runtime.h"

#include "ireepkg/manifest_schema/cpu_level.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN 1
#include <fcntl.h>
#include <io.h>
#include <wchar.h>
#include <windows.h>
#define STATE_FLAGFILE "\\state\\runtime.flags"
#else
#define STATE_FLAGFILE "/state/runtime.flags"
#endif

enum { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

static const char kUsage[] =
    "usage: ireepkg-runtime flags [--prefix DIR] [--platform OS-ARCH] "
    "[--cpu-level LEVEL]\n"
    "                             [--format args|flagfile|json]\n"
    "       ireepkg-runtime write-flagfile [--prefix DIR]\n"
    "       ireepkg-runtime --version\n"
    "\n"
    "flags           print the IREE flags that activate the prefix's runtime\n"
    "                plugins, for the prefix's platform or --platform, and\n"
    "                this CPU or --cpu-level (x86_64_v1 to x86_64_v4, or\n"
    "                ARCH+FEATURE..., e.g. x86_64+avx512f)\n"
    "write-flagfile  write DIR/state/runtime.flags again for where the prefix\n"
    "                is now (after it was moved, copied or unpacked)\n"
    "\n"
    "The prefix is --prefix, else $IREEPKG_PREFIX, else the .iree-plugins of\n"
    "the nearest plugins.json, else the user's prefix, as ireepkg chooses "
    "it.\n";

static int usage_error(const char *message, const char *value) {
  fprintf(stderr, "ireepkg-runtime: error: %s%s\n", message,
          value ? value : "");
  fputs(kUsage, stderr);
  return kExitUsage;
}

static int library_error(ireepkg_runtime_error_t *error) {
  fprintf(stderr, "ireepkg-runtime: error: %s\n",
          ireepkg_runtime_error_message(error));
  const char *hint = ireepkg_runtime_error_hint(error);
  if (hint && *hint)
    fprintf(stderr, "  hint: %s\n", hint);
  ireepkg_runtime_free_error(error);
  return kExitFailure;
}

/*===----------------------------------------------------------------------===*
 * JSON, laid out as the CLI prints it (two-space indent, keys sorted)
 *===----------------------------------------------------------------------===*/

/* The characters of a JSON string, escaped as the CLI escapes them. */
static void json_chars(const char *s) {
  static const char hex[] = "0123456789abcdef";
  for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
    switch (*p) {
    case '"':
      fputs("\\\"", stdout);
      break;
    case '\\':
      fputs("\\\\", stdout);
      break;
    case '\b':
      fputs("\\b", stdout);
      break;
    case '\f':
      fputs("\\f", stdout);
      break;
    case '\n':
      fputs("\\n", stdout);
      break;
    case '\r':
      fputs("\\r", stdout);
      break;
    case '\t':
      fputs("\\t", stdout);
      break;
    default:
      if (*p < 0x20)
        printf("\\u00%c%c", hex[*p >> 4], hex[*p & 15]);
      else
        putchar(*p);
    }
  }
}

static void json_string(const char *s) {
  putchar('"');
  json_chars(s);
  putchar('"');
}

static void indent(int depth) {
  for (int i = 0; i < depth; ++i)
    fputs("  ", stdout);
}

/* `"key": ` on a new line at `depth`, after a comma unless `first`. */
static void json_key(const char *key, int depth, bool first) {
  fputs(first ? "\n" : ",\n", stdout);
  indent(depth);
  json_string(key);
  fputs(": ", stdout);
}

static int compare_parameters(const void *a, const void *b) {
  return strcmp(((const ireepkg_runtime_parameter_t *)a)->key,
                ((const ireepkg_runtime_parameter_t *)b)->key);
}

/* Why a plugin is not activated for the list's target, from the index. */
static void skip_reason(const ireepkg_runtime_plugin_list_t *list,
                        const ireepkg_runtime_plugin_t *p, char *out,
                        size_t size) {
  if (p->skip_reason == IREEPKG_RUNTIME_SKIP_UNKNOWN_FORMAT)
    snprintf(out, size,
             "its format \"%s\" is not supported by libireepkg_runtime %s",
             p->format, ireepkg_runtime_version());
  else
    snprintf(out, size, "no build for %s", list->target_platform);
}

static int print_plugin(const ireepkg_runtime_plugin_list_t *list,
                        const ireepkg_runtime_plugin_t *p, int depth,
                        bool skipped) {
  indent(depth);
  putchar('{');
  json_key("format", depth + 1, true);
  json_string(p->format);
  json_key("imports", depth + 1, false);
  if (p->import_count == 0) {
    fputs("[]", stdout);
  } else {
    putchar('[');
    for (size_t i = 0; i < p->import_count; ++i) {
      fputs(i ? ",\n" : "\n", stdout);
      indent(depth + 2);
      json_string(p->imports[i]);
    }
    putchar('\n');
    indent(depth + 1);
    putchar(']');
  }
  if (p->path) {
    json_key("library_key", depth + 1, false);
    json_string(p->library_key);
  }
  json_key("name", depth + 1, false);
  json_string(p->name);
  json_key("package", depth + 1, false);
  json_string(p->package);
  json_key("parameters", depth + 1, false);
  if (p->parameter_count == 0) {
    fputs("{}", stdout);
  } else {
    ireepkg_runtime_parameter_t *sorted = (ireepkg_runtime_parameter_t *)malloc(
        p->parameter_count * sizeof(*sorted));
    if (!sorted)
      return kExitFailure;
    memcpy(sorted, p->parameters, p->parameter_count * sizeof(*sorted));
    qsort(sorted, p->parameter_count, sizeof(*sorted), compare_parameters);
    putchar('{');
    for (size_t i = 0; i < p->parameter_count; ++i) {
      /* A key given twice keeps its last value, as in a JSON object. */
      if (i + 1 < p->parameter_count &&
          strcmp(sorted[i].key, sorted[i + 1].key) == 0)
        continue;
      json_key(sorted[i].key, depth + 2, i == 0);
      json_string(sorted[i].value);
    }
    free(sorted);
    putchar('\n');
    indent(depth + 1);
    putchar('}');
  }
  if (p->path) {
    json_key("path", depth + 1, false);
    json_string(p->path);
  }
  if (skipped) {
    char reason[512];
    skip_reason(list, p, reason, sizeof(reason));
    json_key("reason", depth + 1, false);
    json_string(reason);
  }
  if (p->path) {
    json_key("spec", depth + 1, false);
    json_string(p->spec);
  }
  json_key("version", depth + 1, false);
  json_string(p->package_version);
  putchar('\n');
  indent(depth);
  putchar('}');
  return kExitOk;
}

static int print_plugins(const ireepkg_runtime_plugin_list_t *list,
                         const ireepkg_runtime_plugin_t *plugins, size_t count,
                         bool skipped) {
  if (count == 0) {
    fputs("[]", stdout);
    return kExitOk;
  }
  putchar('[');
  for (size_t i = 0; i < count; ++i) {
    fputs(i ? ",\n" : "\n", stdout);
    if (print_plugin(list, &plugins[i], 2, skipped) != kExitOk)
      return kExitFailure;
  }
  fputs("\n  ]", stdout);
  return kExitOk;
}

static int print_json(const ireepkg_runtime_plugin_list_t *list) {
  putchar('{');
  json_key("flags", 1, true);
  if (list->count == 0) {
    fputs("[]", stdout);
  } else {
    putchar('[');
    for (size_t i = 0; i < list->count; ++i) {
      fputs(i ? ",\n    \"--executable_plugin="
              : "\n    \"--executable_plugin=",
            stdout);
      json_chars(list->plugins[i].spec);
      putchar('"');
    }
    fputs("\n  ]", stdout);
  }
  json_key("platform", 1, false);
  json_string(list->target_platform);
  json_key("plugins", 1, false);
  if (print_plugins(list, list->plugins, list->count, false) != kExitOk)
    return kExitFailure;
  json_key("prefix", 1, false);
  json_string(list->prefix);
  json_key("skipped", 1, false);
  if (print_plugins(list, list->skipped, list->skipped_count, true) != kExitOk)
    return kExitFailure;
  fputs("\n}\n", stdout);
  return kExitOk;
}

/*===----------------------------------------------------------------------===*
 * Commands
 *===----------------------------------------------------------------------===*/

typedef struct options_t {
  const char *command;
  const char *prefix;
  const char *platform;
  const char *cpu_level;
  const char *format;
} options_t;

/* The target that chooses builds for CPU `level` ("x86_64_v3",
 * "x86_64+avx512f", "x86_64_v1" for the baseline) on `target` ("host", a
 * platform or an architecture), in `out`, as `ireepkg flags runtime
 * --cpu-level` makes it; false (with the CLI's message and hint) when the
 * level is not one of the target's architecture. */
static bool cpu_level_target(const char *target, const char *level, char *out,
                             size_t size, int *rc) {
  const char *platform =
      strcmp(target, "host") == 0 ? ireepkg_runtime_host_platform() : target;
  const char *dash = strchr(platform, '-');
  const char *arch = dash ? dash + 1 : platform;
  const size_t archSize = strlen(arch), levelSize = strlen(level);
  const ireepkg_cpu_key_t k = ireepkg_cpu_parse_key(level, levelSize, true);
  if (k.problem == IREEPKG_CPU_KEY_OK && k.base_size == archSize &&
      memcmp(level, arch, archSize) == 0 && k.base_size < levelSize) {
    const int n =
        snprintf(out, size, "%.*s%s", dash ? (int)(dash - platform + 1) : 0,
                 platform, level);
    if (n >= 0 && (size_t)n < size)
      return true;
  }
  fprintf(stderr, "ireepkg-runtime: error: \"%s\" is not a CPU level of %s\n",
          level, platform);
  if (strcmp(arch, "x86_64") == 0)
    fputs("  hint: CPU levels are x86_64_v1 (the baseline) to x86_64_v4, or "
          "x86_64+<feature>..., e.g. x86_64+avx512f\n",
          stderr);
  else
    fprintf(stderr, "  hint: give %s+<feature>..., e.g. %s%s\n", arch, arch,
            strcmp(arch, "aarch64") == 0 ? "+sve" : "+<feature>");
  *rc = kExitUsage;
  return false;
}

static int run_flags(const options_t *o) {
  const char *format = o->format ? o->format : "args";
  if (strcmp(format, "args") != 0 && strcmp(format, "flagfile") != 0 &&
      strcmp(format, "json") != 0)
    return usage_error("unknown format ", format);
  ireepkg_runtime_error_t *error = NULL;
  ireepkg_runtime_index_t *index = NULL;
  if (ireepkg_runtime_locate_and_open(o->prefix, NULL, 0, &index, &error) !=
      IREEPKG_RUNTIME_OK)
    return library_error(error);
  const char *target =
      o->platform ? o->platform : ireepkg_runtime_index_platform(index);
  char leveled[128];
  int rc = kExitOk;
  if (o->cpu_level) {
    if (!cpu_level_target(target, o->cpu_level, leveled, sizeof(leveled),
                          &rc)) {
      ireepkg_runtime_close(index);
      return rc;
    }
    target = leveled;
  }
  ireepkg_runtime_plugin_list_t *list = NULL;
  if (ireepkg_runtime_list_plugins(index, target, 0, &list, &error) !=
      IREEPKG_RUNTIME_OK) {
    ireepkg_runtime_close(index);
    return library_error(error);
  }
  if (strcmp(format, "json") == 0) {
    rc = print_json(list);
  } else {
    for (size_t i = 0; i < list->skipped_count; ++i) {
      const ireepkg_runtime_plugin_t *p = &list->skipped[i];
      char reason[512];
      skip_reason(list, p, reason, sizeof(reason));
      fprintf(stderr,
              "ireepkg-runtime: note: %s %s: runtime plugin \"%s\" is not "
              "activated: %s\n",
              p->package, p->package_version, p->name, reason);
    }
    char *text = NULL;
    size_t size = 0;
    if (ireepkg_runtime_format_flags(
            list,
            strcmp(format, "flagfile") == 0 ? IREEPKG_RUNTIME_FLAGS_FLAGFILE
                                            : IREEPKG_RUNTIME_FLAGS_LINES,
            &text, &size, &error) != IREEPKG_RUNTIME_OK)
      rc = library_error(error);
    else
      fwrite(text, 1, size, stdout);
    ireepkg_runtime_free_string(text);
  }
  ireepkg_runtime_free_plugin_list(list);
  ireepkg_runtime_close(index);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "ireepkg-runtime: error: cannot write the output\n");
    rc = kExitFailure;
  }
  return rc;
}

/* IREE's Windows runtime opens a system-library plugin with
 * LoadLibraryA, which takes the path in the process's ANSI code page; the
 * flagfile's UTF-8 bytes are passed to it as they are, so a path with
 * letters beyond ASCII is not found (as of IREE 3.13). Says so. */
static void warn_non_ascii_paths(const ireepkg_runtime_plugin_list_t *list) {
  if (strncmp(list->target_platform, "windows-", 8) != 0)
    return;
  for (size_t i = 0; i < list->count; ++i) {
    const unsigned char *p = (const unsigned char *)list->plugins[i].path;
    while (*p && *p < 0x80)
      ++p;
    if (!*p)
      continue;
    fprintf(stderr,
            "ireepkg-runtime: warning: runtime plugin \"%s\" is at %s, a "
            "path with letters beyond ASCII: IREE's Windows runtime opens "
            "plugins with LoadLibraryA, which reads a flagfile's UTF-8 path "
            "in the ANSI code page and does not find it; put the prefix at "
            "a path of ASCII letters\n",
            list->plugins[i].name, list->plugins[i].path);
  }
}

static int run_write_flagfile(const options_t *o) {
  if (o->platform || o->cpu_level || o->format)
    return usage_error("write-flagfile writes the flags of the prefix's own "
                       "platform; it takes only --prefix",
                       NULL);
  ireepkg_runtime_error_t *error = NULL;
  ireepkg_runtime_index_t *index = NULL;
  if (ireepkg_runtime_locate_and_open(o->prefix, NULL, 0, &index, &error) !=
      IREEPKG_RUNTIME_OK)
    return library_error(error);
  ireepkg_runtime_plugin_list_t *list = NULL;
  if (ireepkg_runtime_list_plugins(index, ireepkg_runtime_index_platform(index),
                                   0, &list, &error) != IREEPKG_RUNTIME_OK) {
    ireepkg_runtime_close(index);
    return library_error(error);
  }
  const char *prefix = ireepkg_runtime_index_prefix(index);
  const char *moved = ireepkg_runtime_index_moved_from(index);
  size_t size = strlen(prefix) + sizeof(STATE_FLAGFILE);
  char *file = (char *)malloc(size);
  int rc = kExitOk;
  if (!file) {
    fprintf(stderr, "ireepkg-runtime: error: out of memory\n");
    rc = kExitFailure;
  } else {
    snprintf(file, size, "%s%s", prefix, STATE_FLAGFILE);
    if (ireepkg_runtime_write_flagfile(list, file, &error) !=
        IREEPKG_RUNTIME_OK) {
      rc = library_error(error);
    } else if (moved) {
      fprintf(stderr,
              "ireepkg-runtime: note: the prefix %s was moved or copied from "
              "%s: wrote %s for where it is now (%u runtime plugins for "
              "%s)\n",
              prefix, moved, file, (unsigned)list->count,
              list->target_platform);
    } else {
      fprintf(stderr,
              "ireepkg-runtime: note: wrote %s (%u runtime plugins for %s)\n",
              file, (unsigned)list->count, list->target_platform);
    }
    if (rc == kExitOk)
      warn_non_ascii_paths(list);
  }
  free(file);
  ireepkg_runtime_free_plugin_list(list);
  ireepkg_runtime_close(index);
  return rc;
}

/* `--name VALUE` or `--name=VALUE` at argv[*i]; NULL if argv[*i] is
 * another option. */
static const char *option_value(int argc, char **argv, int *i, const char *name,
                                bool *missing) {
  size_t n = strlen(name);
  const char *arg = argv[*i];
  if (strncmp(arg, name, n) != 0)
    return NULL;
  if (arg[n] == '=')
    return arg + n + 1;
  if (arg[n] != '\0')
    return NULL;
  if (*i + 1 >= argc) {
    *missing = true;
    return NULL;
  }
  return argv[++*i];
}

static int run(int argc, char **argv) {
  options_t o = {0};
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    bool missing = false;
    const char *value;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      fputs(kUsage, stdout);
      return kExitOk;
    }
    if (strcmp(arg, "--version") == 0) {
      printf("ireepkg-runtime %s\n", ireepkg_runtime_version());
      return kExitOk;
    }
    if ((value = option_value(argc, argv, &i, "--prefix", &missing)))
      o.prefix = value;
    else if ((value = option_value(argc, argv, &i, "--platform", &missing)))
      o.platform = value;
    else if ((value = option_value(argc, argv, &i, "--cpu-level", &missing)))
      o.cpu_level = value;
    else if ((value = option_value(argc, argv, &i, "--format", &missing)))
      o.format = value;
    else if (missing)
      return usage_error("missing value after ", arg);
    else if (arg[0] == '-')
      return usage_error("unknown option ", arg);
    else if (o.command)
      return usage_error("unexpected argument ", arg);
    else
      o.command = arg;
  }
  if (!o.command)
    return usage_error("no command given", NULL);
  if (strcmp(o.command, "flags") == 0)
    return run_flags(&o);
  if (strcmp(o.command, "write-flagfile") == 0)
    return run_write_flagfile(&o);
  return usage_error("unknown command ", o.command);
}

#if defined(_WIN32)
/* Windows hands programs their arguments in UTF-16: they become UTF-8, the
 * library's encoding, and output is written as bytes (no "\r\n"). */
int wmain(int argc, wchar_t **wargv) {
  char **argv = (char **)calloc((size_t)argc + 1, sizeof(char *));
  if (!argv)
    return kExitFailure;
  for (int i = 0; i < argc; ++i) {
    int n = WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, NULL, 0, NULL, NULL);
    argv[i] = n > 0 ? (char *)malloc((size_t)n) : NULL;
    if (!argv[i]) {
      fprintf(stderr, "ireepkg-runtime: error: cannot read argument %d\n", i);
      return kExitFailure;
    }
    WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, argv[i], n, NULL, NULL);
  }
  _setmode(_fileno(stdout), _O_BINARY);
  _setmode(_fileno(stderr), _O_BINARY);
  int rc = run(argc, argv);
  for (int i = 0; i < argc; ++i)
    free(argv[i]);
  free(argv);
  return rc;
}
#else
int main(int argc, char **argv) { return run(argc, argv); }
#endif
