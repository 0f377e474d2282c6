/*===- test_runtime.c - Tests of libireepkg_runtime ------------------------===*
 *
 * C tests of ireepkg/runtime.h, compiled as C: fixture prefixes whose
 * runtime.index comes from the real encoder (index_fixture.h), then
 *  - listing for the host, an architecture and platforms, with every
 *    library-selection rule (own architecture, a FatELF file listed under
 *    the architectures it holds, platform, no build, a "fat" key only in
 *    1.0 indexes,
 *    unknown format) and the skipped list;
 *  - the flag text in every style, argv and a written flagfile;
 *  - every error: no prefix, missing index, truncated, bad magic, newer
 *    major version, checksum mismatch, trailing bytes, out-of-range
 *    references, missing plugin file, invalid arguments; and that a newer
 *    minor version with larger records still reads;
 *  - the prefix rules (explicit, IREEPKG_PREFIX, project, XDG_DATA_HOME,
 *    HOME);
 *  - 8 threads listing and formatting from one handle concurrently, and
 *    lists outliving their index.
 * Usage: ireepkg_runtime_tests <scratch directory> (wiped first).
 *
 * Why one file of this size: the C tests of the one-file C library, in C,
 * with their own small harness.
 *
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE 1

#include "ireepkg/runtime.h"

#include "index_fixture.h"
#include "ireepkg/manifest_schema/cpu_level.h"
#include "ireepkg/manifest_schema/runtime_index_format.h"

#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*===----------------------------------------------------------------------===*
 * A tiny harness
 *===----------------------------------------------------------------------===*/

static int gChecks, gFailures;

#define CHECK(cond)                                                            \
  do {                                                                         \
    ++gChecks;                                                                 \
    if (!(cond)) {                                                             \
      ++gFailures;                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define CHECK_STR(a, b)                                                        \
  do {                                                                         \
    const char *a_ = (a), *b_ = (b);                                           \
    ++gChecks;                                                                 \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                   \
      ++gFailures;                                                             \
      fprintf(stderr, "%s:%d: %s == %s failed:\n  \"%s\"\n  \"%s\"\n",         \
              __FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)",                  \
              b_ ? b_ : "(null)");                                             \
    }                                                                          \
  } while (0)

#define CHECK_CONTAINS(text, part)                                             \
  do {                                                                         \
    const char *t_ = (text), *p_ = (part);                                     \
    ++gChecks;                                                                 \
    if (!t_ || !strstr(t_, p_)) {                                              \
      ++gFailures;                                                             \
      fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__,     \
              __LINE__, t_ ? t_ : "(null)", p_);                               \
    }                                                                          \
  } while (0)

/* Checks that `status` and the error agree and the error names `path`;
 * frees the error. */
static void check_error(int line, ireepkg_runtime_status_t status,
                        ireepkg_runtime_error_t *error,
                        ireepkg_runtime_status_t expected, const char *path,
                        const char *fragment) {
  ++gChecks;
  bool ok =
      status == expected && error &&
      ireepkg_runtime_error_status(error) == expected &&
      *ireepkg_runtime_error_message(error) &&
      (!path || (strcmp(ireepkg_runtime_error_path(error), path) == 0 &&
                 strstr(ireepkg_runtime_error_message(error), path))) &&
      (!fragment || strstr(ireepkg_runtime_error_message(error), fragment));
  if (!ok) {
    ++gFailures;
    fprintf(stderr,
            "%s:%d: expected %s (path %s, \"%s\"), got %s: %s [path %s]\n",
            __FILE__, line, ireepkg_runtime_status_name(expected),
            path ? path : "-", fragment ? fragment : "",
            ireepkg_runtime_status_name(status),
            error ? ireepkg_runtime_error_message(error) : "(no error)",
            error ? ireepkg_runtime_error_path(error) : "-");
  }
  ireepkg_runtime_free_error(error);
}
#define CHECK_ERROR(status, error, expected, path, fragment)                   \
  check_error(__LINE__, status, error, expected, path, fragment)

/*===----------------------------------------------------------------------===*
 * Files
 *===----------------------------------------------------------------------===*/

static char gWork[4096];

static const char *at(char *out, size_t size, const char *rel) {
  snprintf(out, size, "%s/%s", gWork, rel);
  return out;
}
#define AT(rel) at((char[4096]){0}, 4096, rel)

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  chmod(path, 0755);
  return remove(path);
}

static void remove_tree(const char *path) {
  nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_dirs(const char *path) {
  char buf[4096];
  snprintf(buf, sizeof(buf), "%s", path);
  for (char *p = buf + 1; *p; ++p)
    if (*p == '/') {
      *p = '\0';
      mkdir(buf, 0755);
      *p = '/';
    }
  mkdir(buf, 0755);
}

static void write_file(const char *path, const void *data, size_t size) {
  char dir[4096];
  snprintf(dir, sizeof(dir), "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) {
    *slash = '\0';
    make_dirs(dir);
  }
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
  fwrite(data, 1, size, f);
  fclose(f);
}

static void write_text(const char *path, const char *text) {
  write_file(path, text, strlen(text));
}

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *data = (uint8_t *)malloc((size_t)n + 1);
  *size = fread(data, 1, (size_t)n, f);
  data[*size] = 0;
  fclose(f);
  return data;
}

static void copy_file(const char *from, const char *to) {
  size_t size = 0;
  uint8_t *data = read_file(from, &size);
  write_file(to, data, size);
  free(data);
}

/*===----------------------------------------------------------------------===*
 * The good fixture
 *
 *   common-ukernels 1.0.3  ukernels           embedded-elf  x86_64, aarch64
 *   simple-mul 1.2.0       simple_mul         embedded-elf  x86_64, aarch64
 *                                              (.sos holding x86_64, aarch64)
 *                          simple_mul_system  system-library linux-x86_64
 *   fat-only 0.1.0         fatty              embedded-elf  x86_64, aarch64,
 *                                              riscv64 (one .sos)
 *   future 2.0.0           wasm_thing         wasm-module (unknown)
 *===----------------------------------------------------------------------===*/

static char gPrefix[4096], gIndex[4096];
static char gUkX86[4096], gUkArm[4096], gMulX86[4096], gMulFat[4096],
    gMulSys[4096], gFat[4096], gWasm[4096];

static void write_good_index(const char *file) {
  const fixture_pair_t ukLibs[] = {{"x86_64", gUkX86}, {"aarch64", gUkArm}};
  const char *const ukImports[] = {"uk_a", "uk_b"};
  const fixture_pair_t ukParams[] = {{"verbose", "0"}, {"tile", "8"}};
  /* The writer's input as state.cpp makes it: a FatELF file under each
   * architecture it holds that has no file of its own. */
  const fixture_pair_t mulLibs[] = {{"x86_64", gMulX86}, {"aarch64", gMulFat}};
  const fixture_pair_t sysLibs[] = {{"linux-x86_64", gMulSys}};
  const char *const mulImports[] = {"simple_mul_workgroup"};
  const fixture_pair_t fatLibs[] = {
      {"x86_64", gFat}, {"aarch64", gFat}, {"riscv64", gFat}};
  const fixture_pair_t wasmLibs[] = {{"wasm32", gWasm}};
  const fixture_plugin_t plugins[] = {
      {"ukernels", "common-ukernels", "1.0.3", "embedded-elf", ukLibs, 2,
       ukImports, 2, ukParams, 2},
      {"simple_mul", "simple-mul", "1.2.0", "embedded-elf", mulLibs, 2,
       mulImports, 1, NULL, 0},
      {"simple_mul_system", "simple-mul", "1.2.0", "system-library", sysLibs, 1,
       mulImports, 1, NULL, 0},
      {"fatty", "fat-only", "0.1.0", "embedded-elf", fatLibs, 3, NULL, 0, NULL,
       0},
      {"wasm_thing", "future", "2.0.0", "wasm-module", wasmLibs, 1, NULL, 0,
       NULL, 0},
  };
  if (fixture_write_index(file, gPrefix, "linux-x86_64", plugins, 5) != 0) {
    fprintf(stderr, "cannot write %s\n", file);
    exit(2);
  }
}

static void make_good_prefix(void) {
  at(gPrefix, sizeof(gPrefix), "good");
  snprintf(gIndex, sizeof(gIndex), "%s/state/runtime.index", gPrefix);
#define PKG(var, rel)                                                          \
  snprintf(var, sizeof(var), "%s/packages/%s", gPrefix, rel);                  \
  write_text(var, "plugin bytes\n")
  PKG(gUkX86, "common-ukernels/1.0.3/runtime/ukernels.x86_64.so");
  PKG(gUkArm, "common-ukernels/1.0.3/runtime/ukernels.aarch64.so");
  PKG(gMulX86, "simple-mul/1.2.0/runtime/simple_mul.x86_64.so");
  PKG(gMulFat, "simple-mul/1.2.0/runtime/simple_mul.sos");
  PKG(gMulSys, "simple-mul/1.2.0/runtime/linux-x86_64/libsimple_mul.so");
  PKG(gFat, "fat-only/0.1.0/runtime/fatty.sos");
  PKG(gWasm, "future/2.0.0/runtime/thing.wasm");
#undef PKG
  make_dirs(AT("good/state"));
  write_text(AT("good/state/installed.json"),
             "{\"schema_version\": 1, \"packages\": [{\"name\": \"x\"}]}\n");
  write_good_index(gIndex);
}

static ireepkg_runtime_index_t *open_good(void) {
  ireepkg_runtime_index_t *index = NULL;
  ireepkg_runtime_error_t *error = NULL;
  ireepkg_runtime_status_t status =
      ireepkg_runtime_open(gPrefix, 0, &index, &error);
  if (status != IREEPKG_RUNTIME_OK) {
    fprintf(stderr, "open failed: %s\n", ireepkg_runtime_error_message(error));
    exit(2);
  }
  return index;
}

static ireepkg_runtime_plugin_list_t *
list_for(const ireepkg_runtime_index_t *index, const char *target) {
  ireepkg_runtime_plugin_list_t *list = NULL;
  ireepkg_runtime_error_t *error = NULL;
  ireepkg_runtime_status_t status =
      ireepkg_runtime_list_plugins(index, target, 0, &list, &error);
  CHECK(status == IREEPKG_RUNTIME_OK);
  CHECK(error == NULL);
  if (status != IREEPKG_RUNTIME_OK) {
    fprintf(stderr, "list %s failed: %s\n", target ? target : "(host)",
            ireepkg_runtime_error_message(error));
    exit(2);
  }
  return list;
}

/* "name=path" for each listed plugin and "name!reason" for each skipped,
 * joined with spaces: one string to compare. */
static void describe(const ireepkg_runtime_plugin_list_t *list, char *out,
                     size_t size) {
  size_t n = 0;
  out[0] = '\0';
  for (size_t i = 0; i < list->count; ++i)
    n += (size_t)snprintf(out + n, size - n, "%s%s=%s", n ? " " : "",
                          list->plugins[i].name, list->plugins[i].library_key);
  for (size_t i = 0; i < list->skipped_count; ++i)
    n += (size_t)snprintf(out + n, size - n, "%s%s!%d", n ? " " : "",
                          list->skipped[i].name,
                          (int)list->skipped[i].skip_reason);
}

/*===----------------------------------------------------------------------===*
 * Listing
 *===----------------------------------------------------------------------===*/

static void test_open_and_accessors(void) {
  ireepkg_runtime_index_t *index = open_good();
  CHECK(ireepkg_runtime_index_plugin_count(index) == 5);
  CHECK_STR(ireepkg_runtime_index_prefix(index), gPrefix);
  CHECK_STR(ireepkg_runtime_index_platform(index), "linux-x86_64");
  CHECK_STR(ireepkg_runtime_index_path(index), gIndex);
  uint32_t major = 9, minor = 9;
  ireepkg_runtime_index_format_version(index, &major, &minor);
  CHECK(major == 1 && minor == 2);
  ireepkg_runtime_close(index);

  /* The same index through its own path. */
  ireepkg_runtime_error_t *error = NULL;
  CHECK(ireepkg_runtime_open_file(gIndex, 0, &index, &error) ==
        IREEPKG_RUNTIME_OK);
  CHECK(ireepkg_runtime_index_plugin_count(index) == 5);
  ireepkg_runtime_close(index);
  ireepkg_runtime_close(NULL);
}

static void test_list_prefix_platform(void) {
  ireepkg_runtime_index_t *index = open_good();
  ireepkg_runtime_plugin_list_t *list = list_for(index, "linux-x86_64");
  CHECK_STR(list->target_platform, "linux-x86_64");
  CHECK_STR(list->target_arch, "x86_64");
  CHECK_STR(list->prefix, gPrefix);
  CHECK(list->count == 4);
  CHECK(list->skipped_count == 1);
  char text[1024];
  describe(list, text, sizeof(text));
  CHECK_STR(text, "ukernels=x86_64 simple_mul=x86_64 "
                  "simple_mul_system=linux-x86_64 fatty=x86_64 wasm_thing!2");

  const ireepkg_runtime_plugin_t *uk = &list->plugins[0];
  CHECK_STR(uk->name, "ukernels");
  CHECK_STR(uk->package, "common-ukernels");
  CHECK_STR(uk->package_version, "1.0.3");
  CHECK_STR(uk->format, "embedded-elf");
  CHECK(uk->format_kind == IREEPKG_RUNTIME_FORMAT_EMBEDDED_ELF);
  CHECK(uk->skip_reason == IREEPKG_RUNTIME_SKIP_NONE);
  CHECK_STR(uk->path, gUkX86);
  char spec[4200];
  snprintf(spec, sizeof(spec), "embedded:%s", gUkX86);
  CHECK_STR(uk->spec, spec);
  CHECK(uk->import_count == 2);
  CHECK_STR(uk->imports[0], "uk_a");
  CHECK_STR(uk->imports[1], "uk_b");
  CHECK(uk->parameter_count == 2);
  CHECK_STR(uk->parameters[0].key, "verbose");
  CHECK_STR(uk->parameters[0].value, "0");
  CHECK_STR(uk->parameters[1].key, "tile");
  CHECK_STR(uk->parameters[1].value, "8");

  const ireepkg_runtime_plugin_t *sys = &list->plugins[2];
  CHECK(sys->format_kind == IREEPKG_RUNTIME_FORMAT_SYSTEM_LIBRARY);
  CHECK_STR(sys->path, gMulSys);
  CHECK_STR(sys->spec, gMulSys); /* system libraries: the plain path */
  CHECK(sys->import_count == 1);
  CHECK_STR(sys->imports[0], "simple_mul_workgroup");
  CHECK(sys->parameter_count == 0);

  const ireepkg_runtime_plugin_t *fat = &list->plugins[3];
  snprintf(spec, sizeof(spec), "embedded:%s", gFat);
  CHECK_STR(fat->spec, spec);

  const ireepkg_runtime_plugin_t *wasm = &list->skipped[0];
  CHECK_STR(wasm->name, "wasm_thing");
  CHECK_STR(wasm->format, "wasm-module");
  CHECK(wasm->format_kind == IREEPKG_RUNTIME_FORMAT_UNKNOWN);
  CHECK(wasm->skip_reason == IREEPKG_RUNTIME_SKIP_UNKNOWN_FORMAT);
  CHECK(wasm->path == NULL && wasm->spec == NULL && wasm->library_key == NULL);
  ireepkg_runtime_free_plugin_list(list);

  /* A bare architecture is on the prefix's OS: the same result. */
  list = list_for(index, "x86_64");
  CHECK_STR(list->target_platform, "linux-x86_64");
  describe(list, text, sizeof(text));
  CHECK_STR(text, "ukernels=x86_64 simple_mul=x86_64 "
                  "simple_mul_system=linux-x86_64 fatty=x86_64 wasm_thing!2");
  ireepkg_runtime_free_plugin_list(list);
  ireepkg_runtime_close(index);
}

static void test_list_other_targets(void) {
  ireepkg_runtime_index_t *index = open_good();
  char text[1024];

  ireepkg_runtime_plugin_list_t *list = list_for(index, "linux-aarch64");
  describe(list, text, sizeof(text));
  CHECK_STR(text, "ukernels=aarch64 simple_mul=aarch64 fatty=aarch64 "
                  "simple_mul_system!1 wasm_thing!2");
  CHECK_STR(list->plugins[0].path, gUkArm);
  CHECK_STR(list->plugins[1].path, gMulFat);
  CHECK(list->skipped[0].skip_reason == IREEPKG_RUNTIME_SKIP_NO_BUILD);
  CHECK(list->skipped[0].import_count == 1);
  CHECK_STR(list->skipped[0].imports[0], "simple_mul_workgroup");
  ireepkg_runtime_free_plugin_list(list);

  /* Another OS on the same architecture: key comparison rather than the
   * writer's preselection; embedded ELF does not depend on the OS. */
  list = list_for(index, "android-x86_64");
  describe(list, text, sizeof(text));
  CHECK_STR(text, "ukernels=x86_64 simple_mul=x86_64 fatty=x86_64 "
                  "simple_mul_system!1 wasm_thing!2");
  ireepkg_runtime_free_plugin_list(list);

  /* Windows: IREE's runtime there cannot call embedded ELF
   * (platform_facts.h); the files are there, they are not listed. */
  list = list_for(index, "windows-x86_64");
  describe(list, text, sizeof(text));
  CHECK_STR(text, "ukernels!3 simple_mul!3 simple_mul_system!1 fatty!3 "
                  "wasm_thing!2");
  ireepkg_runtime_free_plugin_list(list);

  list = list_for(index, "riscv64");
  CHECK_STR(list->target_platform, "linux-riscv64");
  describe(list, text, sizeof(text));
  /* simple_mul's FatELF file holds no riscv64 image: not listed. */
  CHECK_STR(text, "fatty=riscv64 ukernels!1 simple_mul!1 simple_mul_system!1 "
                  "wasm_thing!2");
  ireepkg_runtime_free_plugin_list(list);

  /* The host. */
  list = list_for(index, NULL);
  CHECK_STR(list->target_platform, ireepkg_runtime_host_platform());
  ireepkg_runtime_plugin_list_t *host = list_for(index, "host");
  CHECK_STR(host->target_platform, ireepkg_runtime_host_platform());
  CHECK(host->count == list->count);
  ireepkg_runtime_free_plugin_list(host);
  ireepkg_runtime_free_plugin_list(list);

  /* Unknown targets. */
  const char *bad[] = {"",          "x86-64",       "linux-",
                       "-x86_64",   "plan9-x86_64", "linux-x86_64-extra",
                       "X86_64", /* CPU levels and features: */
                       "x86_64_v5", "aarch64_v3",   "x86_64+nope",
                       "x86_64+"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    ireepkg_runtime_error_t *error = NULL;
    list = (ireepkg_runtime_plugin_list_t *)1;
    ireepkg_runtime_status_t status =
        ireepkg_runtime_list_plugins(index, bad[i], 0, &list, &error);
    CHECK(list == NULL);
    CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_INVALID_ARGUMENT, NULL,
                "unknown target");
  }
  ireepkg_runtime_close(index);
}

static void test_selection_agrees_with_writer(void) {
  /* The writer's preselection (index platform linux-aarch64) and the
   * reader's key comparison (asked for android-aarch64) must agree on
   * embedded ELF. */
  char file[4096];
  at(file, sizeof(file), "aarch64.index");
  const fixture_pair_t mulLibs[] = {{"x86_64", gMulX86}, {"aarch64", gMulFat}};
  const fixture_pair_t ukLibs[] = {{"x86_64", gUkX86}, {"aarch64", gUkArm}};
  const fixture_plugin_t plugins[] = {
      {"simple_mul", "simple-mul", "1.2.0", "embedded-elf", mulLibs, 2, NULL, 0,
       NULL, 0},
      {"ukernels", "common-ukernels", "1.0.3", "embedded-elf", ukLibs, 2, NULL,
       0, NULL, 0},
  };
  CHECK(fixture_write_index(file, gPrefix, "linux-aarch64", plugins, 2) == 0);
  ireepkg_runtime_index_t *index = NULL;
  CHECK(ireepkg_runtime_open_file(file, 0, &index, NULL) == IREEPKG_RUNTIME_OK);
  char a[512], b[512];
  ireepkg_runtime_plugin_list_t *list = list_for(index, "aarch64");
  describe(list, a, sizeof(a));
  ireepkg_runtime_free_plugin_list(list);
  list = list_for(index, "android-aarch64");
  describe(list, b, sizeof(b));
  ireepkg_runtime_free_plugin_list(list);
  CHECK_STR(a, "simple_mul=aarch64 ukernels=aarch64");
  CHECK_STR(a, b);
  ireepkg_runtime_close(index);

  /* A windows prefix: the writer preselects nothing for embedded ELF, and
   * the reader says why for the prefix's platform as for any other. */
  at(file, sizeof(file), "windows.index");
  CHECK(fixture_write_index(file, gPrefix, "windows-x86_64", plugins, 2) == 0);
  CHECK(ireepkg_runtime_open_file(file, 0, &index, NULL) == IREEPKG_RUNTIME_OK);
  list = list_for(index, "x86_64");
  CHECK_STR(list->target_platform, "windows-x86_64");
  describe(list, a, sizeof(a));
  ireepkg_runtime_free_plugin_list(list);
  CHECK_STR(a, "simple_mul!3 ukernels!3");
  ireepkg_runtime_close(index);
}

static void set_minor(uint8_t **d, size_t *size) {
  (void)size;
  ireepkg_index_store16(*d + IREEPKG_INDEX_HEADER_FIELD(version_minor), 0);
}

static void test_fat_key(void) {
  /* Index format 1.0 stored a FatELF file under "fat", without knowing its
   * architectures; readers still fall back to it for such indexes, and only
   * for them. */
  char file[4096];
  at(file, sizeof(file), "fat_key.index");
  const fixture_pair_t fatLibs[] = {{"fat", gFat}};
  const fixture_plugin_t plugins[] = {
      {"fatty", "fat-only", "0.1.0", "embedded-elf", fatLibs, 1, NULL, 0, NULL,
       0},
  };
  CHECK(fixture_write_index(file, gPrefix, "linux-x86_64", plugins, 1) == 0);
  char text[512];
  ireepkg_runtime_index_t *index = NULL;
  CHECK(ireepkg_runtime_open_file(file, 0, &index, NULL) == IREEPKG_RUNTIME_OK);
  ireepkg_runtime_plugin_list_t *list = list_for(index, "linux-riscv64");
  describe(list, text, sizeof(text));
  CHECK_STR(text, "fatty!1");
  ireepkg_runtime_free_plugin_list(list);
  list = list_for(index, "linux-x86_64"); /* the writer's preselection */
  describe(list, text, sizeof(text));
  CHECK_STR(text, "fatty!1");
  ireepkg_runtime_free_plugin_list(list);
  ireepkg_runtime_close(index);

  size_t size = 0;
  uint8_t *data = read_file(file, &size);
  set_minor(&data, &size);
  ireepkg_index_store64(
      data + IREEPKG_INDEX_HEADER_FIELD(checksum),
      ireepkg_index_checksum(data + IREEPKG_INDEX_CHECKSUM_START,
                             size - IREEPKG_INDEX_CHECKSUM_START));
  write_file(file, data, size);
  free(data);
  index = NULL;
  CHECK(ireepkg_runtime_open_file(file, 0, &index, NULL) == IREEPKG_RUNTIME_OK);
  list = list_for(index, "linux-riscv64");
  describe(list, text, sizeof(text));
  CHECK_STR(text, "fatty=fat");
  ireepkg_runtime_free_plugin_list(list);
  ireepkg_runtime_close(index);
}

static void test_cpu_level_keys(void) {
  /* The spellings of cpu_level.h. */
  ireepkg_cpu_key_t k = ireepkg_cpu_parse_key("x86_64_v3", 9, false);
  CHECK(k.problem == IREEPKG_CPU_KEY_OK && k.base_size == 6 && k.level == 3);
  CHECK(k.required == IREEPKG_CPU_X86_64_V3);
  k = ireepkg_cpu_parse_key("linux-x86_64_v4+avx512vnni", 26, false);
  CHECK(k.problem == IREEPKG_CPU_KEY_OK && k.base_size == 12);
  CHECK(k.required == (IREEPKG_CPU_X86_64_V4 | IREEPKG_CPU_X86(21)));
  k = ireepkg_cpu_parse_key("aarch64+sve+i8mm", 16, false);
  CHECK(k.problem == IREEPKG_CPU_KEY_OK && k.base_size == 7 &&
        k.required == (IREEPKG_CPU_ARM(2) | IREEPKG_CPU_ARM(4)));
  k = ireepkg_cpu_parse_key("riscv64", 7, false);
  CHECK(k.problem == IREEPKG_CPU_KEY_OK && k.base_size == 7 && k.required == 0);
  k = ireepkg_cpu_parse_key("x86_64_v1", 9, false);
  CHECK(k.problem == IREEPKG_CPU_KEY_BAD_LEVEL);
  k = ireepkg_cpu_parse_key("x86_64_v1", 9, true);
  CHECK(k.problem == IREEPKG_CPU_KEY_OK && k.level == 1 && k.required == 0);
  k = ireepkg_cpu_parse_key("aarch64_v2", 10, false);
  CHECK(k.problem == IREEPKG_CPU_KEY_BAD_LEVEL && k.bad_size == 3);
  k = ireepkg_cpu_parse_key("aarch64+avx2", 12, false);
  CHECK(k.problem == IREEPKG_CPU_KEY_BAD_FEATURE && k.bad_size == 4);
  k = ireepkg_cpu_parse_key("x86_64++avx2", 12, false);
  CHECK(k.problem == IREEPKG_CPU_KEY_EMPTY_FEATURE);
  /* The levels nest, and a CPU's level is the highest it reaches. */
  CHECK((IREEPKG_CPU_X86_64_V4 & IREEPKG_CPU_X86_64_V3) ==
        IREEPKG_CPU_X86_64_V3);
  CHECK((IREEPKG_CPU_X86_64_V3 & IREEPKG_CPU_X86_64_V2) ==
        IREEPKG_CPU_X86_64_V2);
  CHECK(ireepkg_cpu_x86_64_level(IREEPKG_CPU_X86_64_V3 | IREEPKG_CPU_X86(16)) ==
        3);
  CHECK(ireepkg_cpu_x86_64_level(IREEPKG_CPU_X86_64_V2) == 2);
  CHECK(ireepkg_cpu_x86_64_level(0) == 1);
  CHECK(ireepkg_cpu_key_rank("x86_64_v3", "x86_64", IREEPKG_CPU_X86_64_V2) ==
        -1);
  CHECK(ireepkg_cpu_key_rank("x86_64_v3", "x86_64", IREEPKG_CPU_X86_64_V4) ==
        16);
  CHECK(ireepkg_cpu_key_rank("linux-x86_64_v3", "x86_64",
                             IREEPKG_CPU_X86_64_V4) == -1);
}

static void test_cpu_levels(void) {
  /* Builds per CPU level (index format 1.2): the target's level or
   * features choose among them; the plain build is the fallback. */
  char file[4096];
  at(file, sizeof(file), "cpu_levels.index");
  const fixture_pair_t elfLibs[] = {
      {"aarch64", "/p/k.aarch64.so"},
      {"aarch64+sve", "/p/k.aarch64_sve.so"},
      {"x86_64", "/p/k.x86_64.so"},
      {"x86_64+avx512f", "/p/k.x86_64_avx512f.so"},
      {"x86_64_v3", "/p/k.x86_64_v3.so"},
      {"x86_64_v4", "/p/k.x86_64_v4.so"}};
  const fixture_pair_t sysLibs[] = {
      {"linux-x86_64", "/p/linux-x86_64/libk.so"},
      {"linux-x86_64_v3", "/p/linux-x86_64_v3/libk.so"}};
  const fixture_plugin_t plugins[] = {
      {"k", "kernels", "1.0.0", "embedded-elf", elfLibs, 6, NULL, 0, NULL, 0},
      {"k_sys", "kernels", "1.0.0", "system-library", sysLibs, 2, NULL, 0, NULL,
       0},
  };
  CHECK(fixture_write_index(file, "/p", "linux-x86_64", plugins, 2) == 0);
  ireepkg_runtime_index_t *index = NULL;
  CHECK(ireepkg_runtime_open_file(file, 0, &index, NULL) == IREEPKG_RUNTIME_OK);
  const struct {
    const char *target, *expected;
  } cases[] = {
      {"linux-x86_64_v1", "k=x86_64 k_sys=linux-x86_64"},
      {"x86_64_v2", "k=x86_64 k_sys=linux-x86_64"},
      {"linux-x86_64_v3", "k=x86_64_v3 k_sys=linux-x86_64_v3"},
      {"x86_64_v4", "k=x86_64_v4 k_sys=linux-x86_64_v3"},
      {"x86_64+avx512f", "k=x86_64+avx512f k_sys=linux-x86_64"},
      {"x86_64_v3+avx512f", "k=x86_64_v3 k_sys=linux-x86_64_v3"},
      {"linux-aarch64+sve", "k=aarch64+sve k_sys!1"},
      /* Another machine's CPU is unknown: the baseline. */
      {"android-x86_64", "k=x86_64 k_sys!1"},
      {"linux-aarch64", "k=aarch64 k_sys!1"},
  };
  char text[512];
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    ireepkg_runtime_plugin_list_t *list = list_for(index, cases[i].target);
    describe(list, text, sizeof(text));
    if (strcmp(text, cases[i].expected) != 0)
      fprintf(stderr, "target %s\n", cases[i].target);
    CHECK_STR(text, cases[i].expected);
    if (strcmp(cases[i].target, "x86_64_v4") == 0)
      CHECK_STR(list->plugins[0].spec, "embedded:/p/k.x86_64_v4.so");
    ireepkg_runtime_free_plugin_list(list);
  }
  ireepkg_runtime_close(index);

  /* The writer lists the levels first, most features first, and keeps the
   * plain build as the platform's preselection, which readers before 1.2
   * use (they never match a key with a level). */
  size_t size = 0;
  uint8_t *data = read_file(file, &size);
  const uint8_t *e =
      data +
      ireepkg_index_load64(data + IREEPKG_INDEX_HEADER_FIELD(entries_offset));
  const uint8_t *refs =
      data +
      ireepkg_index_load64(data + IREEPKG_INDEX_HEADER_FIELD(refs_offset));
  const char *strings =
      (const char *)data +
      ireepkg_index_load64(data + IREEPKG_INDEX_HEADER_FIELD(strings_offset));
  const uint32_t first =
      ireepkg_index_load32(e + IREEPKG_INDEX_ENTRY_FIELD(libraries_first));
  const char *order[6];
  for (uint32_t l = 0; l < 6; ++l)
    order[l] = strings + ireepkg_index_load32(refs + 4 * (first + 2 * l));
  CHECK_STR(order[0], "x86_64_v4");
  CHECK_STR(order[1], "x86_64_v3");
  CHECK_STR(order[2], "aarch64+sve");
  CHECK_STR(order[3], "x86_64+avx512f");
  CHECK_STR(order[4], "aarch64");
  CHECK_STR(order[5], "x86_64");
  const uint32_t pre =
      ireepkg_index_load32(e + IREEPKG_INDEX_ENTRY_FIELD(platform_library));
  CHECK(pre == 5);
  free(data);
}

static void test_check_files(void) {
  ireepkg_runtime_index_t *index = open_good();
  ireepkg_runtime_plugin_list_t *list = NULL;
  ireepkg_runtime_error_t *error = NULL;
  CHECK(ireepkg_runtime_list_plugins(index, "linux-x86_64",
                                     IREEPKG_RUNTIME_LIST_CHECK_FILES, &list,
                                     &error) == IREEPKG_RUNTIME_OK);
  ireepkg_runtime_free_plugin_list(list);

  /* A listed file disappears. */
  char moved[4200];
  snprintf(moved, sizeof(moved), "%s.moved", gMulX86);
  CHECK(rename(gMulX86, moved) == 0);
  ireepkg_runtime_status_t status = ireepkg_runtime_list_plugins(
      index, "linux-x86_64", IREEPKG_RUNTIME_LIST_CHECK_FILES, &list, &error);
  CHECK(list == NULL);
  CHECK(error && strstr(ireepkg_runtime_error_message(error), "simple_mul"));
  CHECK(error && *ireepkg_runtime_error_hint(error));
  CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_FILE_MISSING, gMulX86,
              "does not exist");
  /* Without the check, or for a target that does not use the file: fine. */
  CHECK(ireepkg_runtime_list_plugins(index, "linux-x86_64", 0, &list, NULL) ==
        IREEPKG_RUNTIME_OK);
  ireepkg_runtime_free_plugin_list(list);
  CHECK(ireepkg_runtime_list_plugins(index, "linux-aarch64",
                                     IREEPKG_RUNTIME_LIST_CHECK_FILES, &list,
                                     NULL) == IREEPKG_RUNTIME_OK);
  ireepkg_runtime_free_plugin_list(list);
  CHECK(rename(moved, gMulX86) == 0);

  /* A directory where the file should be. */
  CHECK(rename(gFat, moved) == 0);
  make_dirs(gFat);
  status = ireepkg_runtime_list_plugins(
      index, "linux-x86_64", IREEPKG_RUNTIME_LIST_CHECK_FILES, &list, &error);
  CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_FILE_MISSING, gFat,
              "is not a regular file");
  rmdir(gFat);
  CHECK(rename(moved, gFat) == 0);
  ireepkg_runtime_close(index);
}

/*===----------------------------------------------------------------------===*
 * Flags
 *===----------------------------------------------------------------------===*/

static void test_flags(void) {
  ireepkg_runtime_index_t *index = open_good();
  ireepkg_runtime_plugin_list_t *list = list_for(index, "linux-aarch64");
  char expected[16384];
  snprintf(expected, sizeof(expected),
           "--executable_plugin=embedded:%s\n"
           "--executable_plugin=embedded:%s\n"
           "--executable_plugin=embedded:%s\n",
           gUkArm, gMulFat, gFat);

  char *text = NULL;
  size_t size = 0;
  ireepkg_runtime_error_t *error = NULL;
  CHECK(ireepkg_runtime_format_flags(list, IREEPKG_RUNTIME_FLAGS_LINES, &text,
                                     &size, &error) == IREEPKG_RUNTIME_OK);
  CHECK_STR(text, expected);
  CHECK(size == strlen(expected));
  ireepkg_runtime_free_string(text);

  /* NUL-separated: the same bytes with NUL for newline. */
  CHECK(ireepkg_runtime_format_flags(list, IREEPKG_RUNTIME_FLAGS_NUL, &text,
                                     &size, &error) == IREEPKG_RUNTIME_OK);
  CHECK(size == strlen(expected));
  for (char *p = expected; *p; ++p)
    if (*p == '\n')
      *p = '\0';
  CHECK(text && memcmp(text, expected, size) == 0);
  CHECK(text && text[size] == '\0');
  ireepkg_runtime_free_string(text);

  /* argv */
  char **argv = NULL;
  size_t argc = 0;
  CHECK(ireepkg_runtime_flag_argv(list, &argv, &argc, &error) ==
        IREEPKG_RUNTIME_OK);
  CHECK(argc == 3);
  char spec[4200];
  snprintf(spec, sizeof(spec), "--executable_plugin=embedded:%s", gMulFat);
  CHECK_STR(argv[1], spec);
  CHECK(argv[3] == NULL);
  ireepkg_runtime_free_argv(argv);

  /* The flagfile: a comment header naming what was not activated. */
  CHECK(ireepkg_runtime_format_flags(list, IREEPKG_RUNTIME_FLAGS_FLAGFILE,
                                     &text, &size,
                                     &error) == IREEPKG_RUNTIME_OK);
  char line[4400];
  snprintf(line, sizeof(line),
           "# IREE runtime flags for the ireepkg prefix %s, target "
           "linux-aarch64\n",
           gPrefix);
  CHECK(text && strncmp(text, line, strlen(line)) == 0);
  CHECK_CONTAINS(
      text, "# Generated by libireepkg_runtime " IREEPKG_RUNTIME_VERSION_STRING
            " in activation order; do not edit.\n");
  CHECK_CONTAINS(text, "# Not activated: simple-mul 1.2.0 plugin "
                       "simple_mul_system (no build for linux-aarch64)\n");
  CHECK_CONTAINS(text, "# Not activated: future 2.0.0 plugin wasm_thing "
                       "(format wasm-module is not supported");
  snprintf(line, sizeof(line), "\n--executable_plugin=embedded:%s\n", gUkArm);
  CHECK_CONTAINS(text, line);
  /* Every line is a comment or a flag. */
  for (char *p = text; p && *p;) {
    CHECK(*p == '#' || strncmp(p, "--executable_plugin=", 20) == 0);
    char *nl = strchr(p, '\n');
    p = nl ? nl + 1 : p + strlen(p);
  }
  CHECK(size == strlen(text));

  /* Written to a file: the same text with the file in the usage line. */
  char path[4096];
  at(path, sizeof(path), "out/runtime.flags");
  make_dirs(AT("out"));
  CHECK(ireepkg_runtime_write_flagfile(list, path, &error) ==
        IREEPKG_RUNTIME_OK);
  size_t fileSize = 0;
  char *written = (char *)read_file(path, &fileSize);
  snprintf(line, sizeof(line), "# Use: iree-run-module --flagfile=%s ...\n",
           path);
  CHECK_CONTAINS(written, line);
  CHECK(written && fileSize > 0 && strlen(written) == fileSize);
  CHECK_CONTAINS(written, "# Not activated: simple-mul 1.2.0");
  free(written);
  ireepkg_runtime_free_string(text);
  /* Nothing left behind but the file. */
  CHECK(access(AT("out/runtime.flags"), F_OK) == 0);
  char tmp[4200];
  snprintf(tmp, sizeof(tmp), "%s.tmp.%d.0", path, (int)getpid());
  CHECK(access(tmp, F_OK) != 0);
  /* A directory that does not exist. */
  ireepkg_runtime_status_t status = ireepkg_runtime_write_flagfile(
      list, AT("no/such/dir/runtime.flags"), &error);
  CHECK(status == IREEPKG_RUNTIME_ERROR_IO);
  CHECK(error && strstr(ireepkg_runtime_error_message(error), "no/such/dir"));
  ireepkg_runtime_free_error(error);

  /* Invalid arguments. */
  status = ireepkg_runtime_format_flags(NULL, IREEPKG_RUNTIME_FLAGS_LINES,
                                        &text, &size, &error);
  CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_INVALID_ARGUMENT, NULL,
              "list");
  status = ireepkg_runtime_format_flags(list, (ireepkg_runtime_flag_style_t)9,
                                        &text, &size, &error);
  CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_INVALID_ARGUMENT, NULL,
              "style");
  ireepkg_runtime_free_plugin_list(list);
  ireepkg_runtime_close(index);
}

static void test_flags_refuse_line_breaks(void) {
  char file[4096], prefix[4096], bad[4096];
  at(file, sizeof(file), "newline.index");
  at(prefix, sizeof(prefix), "newline");
  at(bad, sizeof(bad), "newline/a\nb.so");
  const fixture_pair_t libs[] = {{"linux-x86_64", bad}};
  const fixture_plugin_t plugins[] = {
      {"nl", "nl", "1.0.0", "system-library", libs, 1, NULL, 0, NULL, 0}};
  CHECK(fixture_write_index(file, prefix, "linux-x86_64", plugins, 1) == 0);
  ireepkg_runtime_index_t *index = NULL;
  CHECK(ireepkg_runtime_open_file(file, 0, &index, NULL) == IREEPKG_RUNTIME_OK);
  ireepkg_runtime_plugin_list_t *list = list_for(index, "linux-x86_64");
  char *text = NULL;
  ireepkg_runtime_error_t *error = NULL;
  ireepkg_runtime_status_t status = ireepkg_runtime_format_flags(
      list, IREEPKG_RUNTIME_FLAGS_LINES, &text, NULL, &error);
  CHECK(text == NULL);
  CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_INVALID_ARGUMENT, NULL,
              "line break");
  /* The NUL form carries it. */
  size_t size = 0;
  CHECK(ireepkg_runtime_format_flags(list, IREEPKG_RUNTIME_FLAGS_NUL, &text,
                                     &size, NULL) == IREEPKG_RUNTIME_OK);
  CHECK(text && strchr(text, '\n'));
  ireepkg_runtime_free_string(text);
  ireepkg_runtime_free_plugin_list(list);
  ireepkg_runtime_close(index);
}

/*===----------------------------------------------------------------------===*
 * Errors
 *===----------------------------------------------------------------------===*/

static ireepkg_runtime_status_t try_open(const char *prefix,
                                         ireepkg_runtime_error_t **error) {
  ireepkg_runtime_index_t *index = (ireepkg_runtime_index_t *)1;
  ireepkg_runtime_status_t status =
      ireepkg_runtime_open(prefix, 0, &index, error);
  if (status == IREEPKG_RUNTIME_OK)
    ireepkg_runtime_close(index);
  else
    CHECK(index == NULL);
  return status;
}

/* A copy of the good prefix's index at <work>/<name>/state/runtime.index,
 * changed by `edit`, with the checksum recomputed if `reseal`. */
typedef void (*edit_fn)(uint8_t **data, size_t *size);

static const char *broken_prefix(const char *name, edit_fn edit, bool reseal) {
  static char prefix[4096];
  char file[4200];
  at(prefix, sizeof(prefix), name);
  snprintf(file, sizeof(file), "%s/state/runtime.index", prefix);
  size_t size = 0;
  uint8_t *data = read_file(gIndex, &size);
  edit(&data, &size);
  if (reseal)
    ireepkg_index_store64(
        data + IREEPKG_INDEX_HEADER_FIELD(checksum),
        ireepkg_index_checksum(data + IREEPKG_INDEX_CHECKSUM_START,
                               size - IREEPKG_INDEX_CHECKSUM_START));
  write_file(file, data, size);
  free(data);
  return prefix;
}

static uint32_t header32(const uint8_t *data, size_t field) {
  return ireepkg_index_load32(data + field);
}
static uint64_t header64(const uint8_t *data, size_t field) {
  return ireepkg_index_load64(data + field);
}

static void truncate_half(uint8_t **d, size_t *size) {
  (void)d;
  *size /= 2;
}
static void truncate_tiny(uint8_t **d, size_t *size) {
  (void)d;
  *size = 10;
}
static void truncate_empty(uint8_t **d, size_t *size) {
  (void)d;
  *size = 0;
}
static void truncate_header(uint8_t **d, size_t *size) {
  (void)d;
  *size = 50;
}
static void bad_magic(uint8_t **d, size_t *size) {
  (void)size;
  (*d)[3] ^= 0x20;
}
static void newer_major(uint8_t **d, size_t *size) {
  (void)size;
  ireepkg_index_store16(*d + IREEPKG_INDEX_HEADER_FIELD(version_major), 2);
  ireepkg_index_store16(*d + IREEPKG_INDEX_HEADER_FIELD(version_minor), 0);
}
static void newer_major_short(uint8_t **d, size_t *size) {
  newer_major(d, size);
  *size = 40;
}
static void zero_major(uint8_t **d, size_t *size) {
  (void)size;
  ireepkg_index_store16(*d + IREEPKG_INDEX_HEADER_FIELD(version_major), 0);
  ireepkg_index_store16(*d + IREEPKG_INDEX_HEADER_FIELD(version_minor), 0);
}
static void flip_string_byte(uint8_t **d, size_t *size) {
  (*d)[*size - 3] ^= 0x01;
}
static void flip_header_byte(uint8_t **d, size_t *size) {
  (void)size;
  (*d)[IREEPKG_INDEX_HEADER_FIELD(plugin_count)] ^= 0x01;
}
static void append_junk(uint8_t **d, size_t *size) {
  *d = (uint8_t *)realloc(*d, *size + 7);
  memset(*d + *size, 'x', 7);
  *size += 7;
}
static void ref_out_of_range(uint8_t **d, size_t *size) {
  (void)size;
  uint64_t refs = header64(*d, IREEPKG_INDEX_HEADER_FIELD(refs_offset));
  ireepkg_index_store32(*d + refs + 4, 0x7fffffff);
}
static void count_too_large(uint8_t **d, size_t *size) {
  (void)size;
  ireepkg_index_store32(*d + IREEPKG_INDEX_HEADER_FIELD(plugin_count),
                        0xffffffffu);
}
static void selection_out_of_range(uint8_t **d, size_t *size) {
  (void)size;
  uint64_t entries = header64(*d, IREEPKG_INDEX_HEADER_FIELD(entries_offset));
  ireepkg_index_store32(
      *d + entries + IREEPKG_INDEX_ENTRY_FIELD(platform_library), 7);
}
static void library_range_too_long(uint8_t **d, size_t *size) {
  (void)size;
  uint64_t entries = header64(*d, IREEPKG_INDEX_HEADER_FIELD(entries_offset));
  ireepkg_index_store32(*d + entries + IREEPKG_INDEX_ENTRY_FIELD(library_count),
                        1u << 30);
}
static void embedded_without_prefix(uint8_t **d, size_t *size) {
  /* Point the first embedded library's path at the start of the string
   * table, where "embedded:" cannot precede it. */
  (void)size;
  uint64_t entries = header64(*d, IREEPKG_INDEX_HEADER_FIELD(entries_offset));
  uint64_t refs = header64(*d, IREEPKG_INDEX_HEADER_FIELD(refs_offset));
  uint32_t first = ireepkg_index_load32(
      *d + entries + IREEPKG_INDEX_ENTRY_FIELD(libraries_first));
  ireepkg_index_store32(*d + refs + 4 * (first + 1), 1);
}
static void unterminated_strings(uint8_t **d, size_t *size) {
  (*d)[*size - 1] = 'x';
}
static void small_entry_size(uint8_t **d, size_t *size) {
  (void)size;
  ireepkg_index_store32(*d + IREEPKG_INDEX_HEADER_FIELD(entry_size), 40);
}

/* Rewrites the index as a hypothetical newer minor version: a header and
 * entries with more fields, and a new section at the end. */
static void newer_minor(uint8_t **d, size_t *size) {
  const uint8_t *old = *d;
  const uint32_t count =
      header32(old, IREEPKG_INDEX_HEADER_FIELD(plugin_count));
  const uint32_t refCount =
      header32(old, IREEPKG_INDEX_HEADER_FIELD(ref_count));
  const uint64_t oldEntries =
      header64(old, IREEPKG_INDEX_HEADER_FIELD(entries_offset));
  const uint64_t oldRefs =
      header64(old, IREEPKG_INDEX_HEADER_FIELD(refs_offset));
  const uint64_t oldStrings =
      header64(old, IREEPKG_INDEX_HEADER_FIELD(strings_offset));
  const uint64_t stringsSize =
      header64(old, IREEPKG_INDEX_HEADER_FIELD(strings_size));
  const uint32_t headerSize = 128, entrySize = 72;
  const uint64_t entries = headerSize;
  const uint64_t refs = entries + (uint64_t)count * entrySize;
  const uint64_t strings = refs + 4ull * refCount;
  const uint64_t total = strings + stringsSize + 24; /* + a new section */
  uint8_t *out = (uint8_t *)calloc(1, total);
  memcpy(out, old, IREEPKG_INDEX_HEADER_SIZE_V1);
  memset(out + IREEPKG_INDEX_HEADER_SIZE_V1, 0xAB,
         headerSize - IREEPKG_INDEX_HEADER_SIZE_V1);
  for (uint32_t i = 0; i < count; ++i) {
    memcpy(out + entries + i * entrySize,
           old + oldEntries + i * IREEPKG_INDEX_ENTRY_SIZE_V1,
           IREEPKG_INDEX_ENTRY_SIZE_V1);
    memset(out + entries + i * entrySize + IREEPKG_INDEX_ENTRY_SIZE_V1, 0xCD,
           entrySize - IREEPKG_INDEX_ENTRY_SIZE_V1);
  }
  memcpy(out + refs, old + oldRefs, 4ull * refCount);
  memcpy(out + strings, old + oldStrings, stringsSize);
  memset(out + strings + stringsSize, 0xEF, 24);
  ireepkg_index_store16(out + IREEPKG_INDEX_HEADER_FIELD(version_minor),
                        IREEPKG_INDEX_VERSION_MINOR + 1);
  ireepkg_index_store32(out + IREEPKG_INDEX_HEADER_FIELD(header_size),
                        headerSize);
  ireepkg_index_store32(out + IREEPKG_INDEX_HEADER_FIELD(entry_size),
                        entrySize);
  ireepkg_index_store64(out + IREEPKG_INDEX_HEADER_FIELD(total_size), total);
  ireepkg_index_store64(out + IREEPKG_INDEX_HEADER_FIELD(entries_offset),
                        entries);
  ireepkg_index_store64(out + IREEPKG_INDEX_HEADER_FIELD(refs_offset), refs);
  ireepkg_index_store64(out + IREEPKG_INDEX_HEADER_FIELD(strings_offset),
                        strings);
  /* Unknown flag bits are ignored. */
  ireepkg_index_store32(out + IREEPKG_INDEX_HEADER_FIELD(flags), 0x80000000u);
  free(*d);
  *d = out;
  *size = (size_t)total;
}
static void fix_total_size(uint8_t **d, size_t *size) {
  ireepkg_index_store64(*d + IREEPKG_INDEX_HEADER_FIELD(total_size), *size);
}
static void truncate_and_fix_size(uint8_t **d, size_t *size) {
  /* Cut into the string table but keep total_size consistent: only the
   * structural checks can notice. */
  *size -= 40;
  fix_total_size(d, size);
}

static void test_corrupt_indexes(void) {
  ireepkg_runtime_error_t *error = NULL;
  char file[4200];
  struct {
    const char *name;
    edit_fn edit;
    bool reseal;
    ireepkg_runtime_status_t expected;
    const char *fragment;
  } cases[] = {
      {"bad_truncated", truncate_half, false,
       IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX, "truncated"},
      {"bad_truncated_tiny", truncate_tiny, false,
       IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX, "shorter than any index header"},
      {"bad_empty_file", truncate_empty, false,
       IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX, "0 bytes"},
      {"bad_truncated_header", truncate_header, false,
       IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX, "shorter than its 96-byte header"},
      {"bad_magic", bad_magic, false, IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX,
       "magic"},
      {"bad_newer_major", newer_major, false,
       IREEPKG_RUNTIME_ERROR_NEWER_SCHEMA, "newer ireepkg (format 2.0;"},
      {"bad_newer_major_short", newer_major_short, false,
       IREEPKG_RUNTIME_ERROR_NEWER_SCHEMA, "format 2.0"},
      {"bad_zero_major", zero_major, false, IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX,
       "version 0.0"},
      {"bad_checksum_strings", flip_string_byte, false,
       IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX, "checksum mismatch"},
      {"bad_checksum_header", flip_header_byte, false,
       IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX, "checksum mismatch"},
      {"bad_trailing_bytes", append_junk, false,
       IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX, "7 bytes after its end"},
      {"bad_ref_range", ref_out_of_range, true,
       IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX,
       "string reference 1 is out of range"},
      {"bad_count", count_too_large, true, IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX,
       "plugin entries run past the end"},
      {"bad_selection", selection_out_of_range, true,
       IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX, "selects library 7"},
      {"bad_library_range", library_range_too_long, true,
       IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX,
       "refers past the string references"},
      {"bad_unterminated", unterminated_strings, true,
       IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX, "does not end with NUL"},
      {"bad_entry_size", small_entry_size, true,
       IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX, "entry size 40"},
      {"bad_cut_strings", truncate_and_fix_size, true,
       IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX, "string table"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    const char *prefix =
        broken_prefix(cases[i].name, cases[i].edit, cases[i].reseal);
    snprintf(file, sizeof(file), "%s/state/runtime.index", prefix);
    ireepkg_runtime_status_t status = try_open(prefix, &error);
    if (status != cases[i].expected)
      fprintf(stderr, "case %s:\n", cases[i].name);
    if (error && cases[i].expected == IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX)
      CHECK(*ireepkg_runtime_error_hint(error));
    CHECK_ERROR(status, error, cases[i].expected, file, cases[i].fragment);
  }

  /* An embedded-elf path without "embedded:" before it: found when a list
   * selects it (the spec is computed there). */
  {
    const char *prefix =
        broken_prefix("bad_embedded_path", embedded_without_prefix, true);
    snprintf(file, sizeof(file), "%s/state/runtime.index", prefix);
    ireepkg_runtime_index_t *index = NULL;
    CHECK(ireepkg_runtime_open(prefix, 0, &index, NULL) == IREEPKG_RUNTIME_OK);
    ireepkg_runtime_plugin_list_t *list = (ireepkg_runtime_plugin_list_t *)1;
    ireepkg_runtime_status_t status =
        ireepkg_runtime_list_plugins(index, "linux-x86_64", 0, &list, &error);
    CHECK(list == NULL);
    CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX, file,
                "plugin entry 0 has an embedded-elf path without room for "
                "\"embedded:\"");
    ireepkg_runtime_close(index);
  }

  /* A newer minor version with bigger records still reads, identically. */
  const char *prefix = broken_prefix("good_newer_minor", newer_minor, true);
  ireepkg_runtime_index_t *index = NULL;
  ireepkg_runtime_status_t status =
      ireepkg_runtime_open(prefix, 0, &index, &error);
  CHECK(status == IREEPKG_RUNTIME_OK);
  if (status == IREEPKG_RUNTIME_OK) {
    uint32_t major = 0, minor = 0;
    ireepkg_runtime_index_format_version(index, &major, &minor);
    CHECK(major == 1 && minor == IREEPKG_INDEX_VERSION_MINOR + 1);
    char a[1024], b[1024];
    ireepkg_runtime_plugin_list_t *list = list_for(index, "linux-aarch64");
    describe(list, a, sizeof(a));
    ireepkg_runtime_free_plugin_list(list);
    ireepkg_runtime_index_t *good = open_good();
    list = list_for(good, "linux-aarch64");
    describe(list, b, sizeof(b));
    CHECK_STR(a, b);
    ireepkg_runtime_free_plugin_list(list);
    ireepkg_runtime_close(good);
    ireepkg_runtime_close(index);
  } else {
    fprintf(stderr, "newer minor: %s\n", ireepkg_runtime_error_message(error));
    ireepkg_runtime_free_error(error);
  }
}

static void test_prefix_states(void) {
  ireepkg_runtime_error_t *error = NULL;
  ireepkg_runtime_index_t *index = NULL;

  /* No directory at all; a directory without state/. */
  char state[4200];
  const char *missing = AT("no-such-prefix");
  snprintf(state, sizeof(state), "%s/state", missing);
  ireepkg_runtime_status_t status = try_open(missing, &error);
  CHECK(error && strstr(ireepkg_runtime_error_message(error), state));
  CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_NO_PREFIX, missing,
              "no ireepkg prefix");
  make_dirs(AT("stateless"));
  status = try_open(AT("stateless"), &error);
  CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_NO_PREFIX, AT("stateless"),
              "does not exist");
  write_text(AT("statefile/state"), "not a directory");
  status = try_open(AT("statefile"), &error);
  CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_NO_PREFIX, AT("statefile"),
              "is not a directory");
  /* The caller may not want the error. */
  CHECK(ireepkg_runtime_open(missing, 0, &index, NULL) ==
        IREEPKG_RUNTIME_ERROR_NO_PREFIX);

  /* state/ but nothing ever installed: an empty index. */
  make_dirs(AT("fresh/state"));
  status = ireepkg_runtime_open(AT("fresh/"), 0, &index, &error);
  CHECK(status == IREEPKG_RUNTIME_OK);
  CHECK(ireepkg_runtime_index_plugin_count(index) == 0);
  CHECK_STR(ireepkg_runtime_index_prefix(index), AT("fresh"));
  CHECK_STR(ireepkg_runtime_index_platform(index),
            ireepkg_runtime_host_platform());
  CHECK_STR(ireepkg_runtime_index_path(index), "");
  ireepkg_runtime_plugin_list_t *list = list_for(index, NULL);
  CHECK(list->count == 0 && list->skipped_count == 0);
  char *text = NULL;
  size_t size = 99;
  CHECK(ireepkg_runtime_format_flags(list, IREEPKG_RUNTIME_FLAGS_LINES, &text,
                                     &size, NULL) == IREEPKG_RUNTIME_OK);
  CHECK_STR(text, "");
  CHECK(size == 0);
  ireepkg_runtime_free_string(text);
  char **argv = NULL;
  size_t argc = 9;
  CHECK(ireepkg_runtime_flag_argv(list, &argv, &argc, NULL) ==
        IREEPKG_RUNTIME_OK);
  CHECK(argc == 0 && argv && argv[0] == NULL);
  ireepkg_runtime_free_argv(argv);
  ireepkg_runtime_free_plugin_list(list);
  ireepkg_runtime_close(index);

  /* Everything was removed again: installed.json lists no package. */
  write_text(AT("emptied/state/installed.json"),
             "{\n  \"schema_version\": 1,\n  \"platform\": \"linux-x86_64\",\n"
             "  \"packages\": [ ]\n}\n");
  CHECK(try_open(AT("emptied"), &error) == IREEPKG_RUNTIME_OK);

  /* Packages installed by an ireepkg that did not write the index. */
  write_text(AT("old/state/installed.json"),
             "{\"schema_version\": 1, \"packages\": [{\"name\": "
             "\"packages\", \"version\": \"1.0.0\"}]}");
  char file[4200];
  snprintf(file, sizeof(file), "%s/state/runtime.index", AT("old"));
  status = try_open(AT("old"), &error);
  CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_MISSING_INDEX, file,
              "has installed packages but no runtime index");

  /* An index path that is a directory. */
  make_dirs(AT("dirindex/state/runtime.index"));
  snprintf(file, sizeof(file), "%s/state/runtime.index", AT("dirindex"));
  status = try_open(AT("dirindex"), &error);
  CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX, file,
              "not a regular file");

  /* An unreadable index (unless we are root). */
  if (geteuid() != 0) {
    snprintf(file, sizeof(file), "%s/state/runtime.index", AT("unreadable"));
    copy_file(gIndex, file);
    chmod(file, 0);
    status = try_open(AT("unreadable"), &error);
    CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_IO, file,
                "Permission denied");
    chmod(file, 0644);
  }

  /* open_file: a missing file is a missing index. */
  status = ireepkg_runtime_open_file(AT("nothing.index"), 0, &index, &error);
  CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_MISSING_INDEX,
              AT("nothing.index"), "does not exist");
}

static void test_invalid_arguments(void) {
  ireepkg_runtime_error_t *error = NULL;
  ireepkg_runtime_index_t *index = NULL;
  ireepkg_runtime_status_t status;
#define EXPECT_INVALID(call, fragment)                                         \
  status = (call);                                                             \
  CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_INVALID_ARGUMENT, NULL,     \
              fragment)
  EXPECT_INVALID(ireepkg_runtime_open(NULL, 0, &index, &error), "prefix");
  EXPECT_INVALID(ireepkg_runtime_open("", 0, &index, &error), "prefix");
  EXPECT_INVALID(ireepkg_runtime_open(gPrefix, 4, &index, &error), "flags");
  EXPECT_INVALID(ireepkg_runtime_open(gPrefix, 0, NULL, &error), "out_index");
  EXPECT_INVALID(ireepkg_runtime_open_file(NULL, 0, &index, &error), "path");
  EXPECT_INVALID(
      ireepkg_runtime_locate_and_open(gPrefix, NULL, 1, &index, &error),
      "flags");
  ireepkg_runtime_plugin_list_t *list = NULL;
  EXPECT_INVALID(ireepkg_runtime_list_plugins(NULL, NULL, 0, &list, &error),
                 "index");
  index = open_good();
  EXPECT_INVALID(ireepkg_runtime_list_plugins(index, NULL, 0x80, &list, &error),
                 "flags");
  EXPECT_INVALID(ireepkg_runtime_list_plugins(index, NULL, 0, NULL, &error),
                 "out_list");
  char **argv = NULL;
  EXPECT_INVALID(ireepkg_runtime_flag_argv(NULL, &argv, NULL, &error), "list");
  list = list_for(index, NULL);
  EXPECT_INVALID(ireepkg_runtime_flag_argv(list, NULL, NULL, &error), "argv");
  EXPECT_INVALID(ireepkg_runtime_write_flagfile(list, "", &error), "path");
  EXPECT_INVALID(ireepkg_runtime_write_flagfile(NULL, "x", &error), "list");
  ireepkg_runtime_prefix_location_t *loc = NULL;
  EXPECT_INVALID(ireepkg_runtime_locate_prefix("", NULL, &loc, &error),
                 "empty");
  EXPECT_INVALID(ireepkg_runtime_locate_prefix(NULL, "", &loc, &error),
                 "empty");
  EXPECT_INVALID(ireepkg_runtime_locate_prefix(NULL, NULL, NULL, &error),
                 "out_location");
  EXPECT_INVALID(ireepkg_runtime_locate_prefix("/tmp/a\nb", NULL, &loc, &error),
                 "line break");
#undef EXPECT_INVALID
  ireepkg_runtime_free_plugin_list(list);
  ireepkg_runtime_close(index);
  /* Freeing NULL is fine everywhere. */
  ireepkg_runtime_free_error(NULL);
  ireepkg_runtime_free_plugin_list(NULL);
  ireepkg_runtime_free_string(NULL);
  ireepkg_runtime_free_argv(NULL);
  ireepkg_runtime_free_prefix_location(NULL);
  /* Accessors tolerate NULL. */
  CHECK_STR(ireepkg_runtime_index_prefix(NULL), "");
  CHECK(ireepkg_runtime_index_plugin_count(NULL) == 0);
  CHECK(ireepkg_runtime_error_status(NULL) == IREEPKG_RUNTIME_OK);
}

/*===----------------------------------------------------------------------===*
 * Finding the prefix
 *===----------------------------------------------------------------------===*/

static void check_location(int line, const char *explicit_prefix,
                           const char *start, const char *path,
                           ireepkg_runtime_prefix_source_t source,
                           const char *source_name, const char *project) {
  ireepkg_runtime_prefix_location_t *loc = NULL;
  ireepkg_runtime_error_t *error = NULL;
  ireepkg_runtime_status_t status =
      ireepkg_runtime_locate_prefix(explicit_prefix, start, &loc, &error);
  ++gChecks;
  bool ok =
      status == IREEPKG_RUNTIME_OK && loc && strcmp(loc->path, path) == 0 &&
      loc->source == source && strcmp(loc->source_name, source_name) == 0 &&
      (project ? loc->project_file && strcmp(loc->project_file, project) == 0
               : loc->project_file == NULL);
  if (!ok) {
    ++gFailures;
    fprintf(stderr, "%s:%d: locate: expected %s (%s), got %s (%s) %s\n",
            __FILE__, line, path, source_name, loc ? loc->path : "-",
            loc ? loc->source_name : "-",
            error ? ireepkg_runtime_error_message(error) : "");
  }
  ireepkg_runtime_free_prefix_location(loc);
  ireepkg_runtime_free_error(error);
}
#define CHECK_LOCATION(...) check_location(__LINE__, __VA_ARGS__)

static void test_locate_prefix(void) {
  unsetenv("IREEPKG_PREFIX");
  unsetenv("XDG_DATA_HOME");
  setenv("HOME", "/home/someone", 1);

  /* Explicit: normalized, relative to the current directory. */
  CHECK_LOCATION("/a/b/../c/./d//", NULL, "/a/c/d",
                 IREEPKG_RUNTIME_PREFIX_EXPLICIT, "--prefix", NULL);
  CHECK_LOCATION("/..", NULL, "/", IREEPKG_RUNTIME_PREFIX_EXPLICIT, "--prefix",
                 NULL);
  char cwd[4096], expected[4200];
  CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
  snprintf(expected, sizeof(expected), "%s/bar", cwd);
  CHECK_LOCATION("foo/../bar", NULL, expected, IREEPKG_RUNTIME_PREFIX_EXPLICIT,
                 "--prefix", NULL);

  /* The environment wins over projects, but not over the explicit path. */
  setenv("IREEPKG_PREFIX", "/env/prefix/", 1);
  CHECK_LOCATION(NULL, NULL, "/env/prefix", IREEPKG_RUNTIME_PREFIX_ENVIRONMENT,
                 "IREEPKG_PREFIX", NULL);
  CHECK_LOCATION("/x", NULL, "/x", IREEPKG_RUNTIME_PREFIX_EXPLICIT, "--prefix",
                 NULL);
  setenv("IREEPKG_PREFIX", "", 1); /* empty: ignored */

  /* The nearest plugins.json at or above the start directory. */
  write_text(AT("proj/plugins.json"), "{}");
  make_dirs(AT("proj/sub/deeper"));
  write_text(AT("proj/sub/inner/plugins.json"), "{}");
  make_dirs(AT("proj/sub/inner/x"));
  make_dirs(AT("proj/sub/dirproj/plugins.json")); /* a directory: ignored */
  char project[4200], prefix[4200];
  snprintf(project, sizeof(project), "%s", AT("proj/plugins.json"));
  snprintf(prefix, sizeof(prefix), "%s", AT("proj/.iree-plugins"));
  CHECK_LOCATION(NULL, AT("proj/sub/deeper"), prefix,
                 IREEPKG_RUNTIME_PREFIX_PROJECT, "project", project);
  CHECK_LOCATION(NULL, AT("proj"), prefix, IREEPKG_RUNTIME_PREFIX_PROJECT,
                 "project", project);
  CHECK_LOCATION(NULL, AT("proj/sub/dirproj"), prefix,
                 IREEPKG_RUNTIME_PREFIX_PROJECT, "project", project);
  snprintf(project, sizeof(project), "%s", AT("proj/sub/inner/plugins.json"));
  snprintf(prefix, sizeof(prefix), "%s", AT("proj/sub/inner/.iree-plugins"));
  CHECK_LOCATION(NULL, AT("proj/sub/inner/x/../x"), prefix,
                 IREEPKG_RUNTIME_PREFIX_PROJECT, "project", project);
  /* Relative start directories are taken from the current directory. */
  char saved[4096];
  CHECK(getcwd(saved, sizeof(saved)) != NULL);
  CHECK(chdir(AT("proj/sub")) == 0);
  snprintf(project, sizeof(project), "%s", AT("proj/plugins.json"));
  snprintf(prefix, sizeof(prefix), "%s", AT("proj/.iree-plugins"));
  CHECK_LOCATION(NULL, "deeper", prefix, IREEPKG_RUNTIME_PREFIX_PROJECT,
                 "project", project);
  CHECK_LOCATION(NULL, NULL, prefix, IREEPKG_RUNTIME_PREFIX_PROJECT, "project",
                 project);
  CHECK(chdir(saved) == 0);

  /* No project above "/" (unless this machine has /plugins.json). */
  if (access("/plugins.json", F_OK) != 0) {
    CHECK_LOCATION(NULL, "/", "/home/someone/.local/share/ireepkg",
                   IREEPKG_RUNTIME_PREFIX_HOME, "default", NULL);
    setenv("XDG_DATA_HOME", "/data/", 1);
    CHECK_LOCATION(NULL, "/", "/data/ireepkg",
                   IREEPKG_RUNTIME_PREFIX_XDG_DATA_HOME, "XDG_DATA_HOME", NULL);
    setenv("XDG_DATA_HOME", "relative/data", 1); /* not absolute: ignored */
    CHECK_LOCATION(NULL, "/", "/home/someone/.local/share/ireepkg",
                   IREEPKG_RUNTIME_PREFIX_HOME, "default", NULL);
    unsetenv("XDG_DATA_HOME");
    unsetenv("HOME");
    ireepkg_runtime_prefix_location_t *loc = NULL;
    ireepkg_runtime_error_t *error = NULL;
    ireepkg_runtime_status_t status =
        ireepkg_runtime_locate_prefix(NULL, "/", &loc, &error);
    CHECK(loc == NULL);
    CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_NO_PREFIX, NULL,
                "HOME is not set");
  }
  setenv("HOME", "/home/someone", 1);

  /* locate_and_open says how the prefix was chosen. */
  setenv("IREEPKG_PREFIX", AT("no-such-prefix"), 1);
  ireepkg_runtime_index_t *index = NULL;
  ireepkg_runtime_error_t *error = NULL;
  ireepkg_runtime_status_t status =
      ireepkg_runtime_locate_and_open(NULL, NULL, 0, &index, &error);
  CHECK_ERROR(status, error, IREEPKG_RUNTIME_ERROR_NO_PREFIX,
              AT("no-such-prefix"), "(chosen by IREEPKG_PREFIX)");
  setenv("IREEPKG_PREFIX", gPrefix, 1);
  CHECK(ireepkg_runtime_locate_and_open(NULL, NULL, 0, &index, &error) ==
        IREEPKG_RUNTIME_OK);
  CHECK(ireepkg_runtime_index_plugin_count(index) == 5);
  ireepkg_runtime_close(index);
  unsetenv("IREEPKG_PREFIX");
}

/*===----------------------------------------------------------------------===*
 * Threads and lifetimes
 *===----------------------------------------------------------------------===*/

typedef struct thread_args_t {
  const ireepkg_runtime_index_t *index;
  int seed;
  int failures;
} thread_args_t;

static const char *const kThreadTargets[] = {NULL, "linux-aarch64", "riscv64",
                                             "android-x86_64"};
static char gExpected[4][2048];

static void *list_many_times(void *p) {
  thread_args_t *args = (thread_args_t *)p;
  for (int i = 0; i < 3000; ++i) {
    int t = (i + args->seed) % 4;
    ireepkg_runtime_plugin_list_t *list = NULL;
    if (ireepkg_runtime_list_plugins(args->index, kThreadTargets[t], 0, &list,
                                     NULL) != IREEPKG_RUNTIME_OK) {
      ++args->failures;
      continue;
    }
    char got[2048];
    describe(list, got, sizeof(got));
    if (strcmp(got, gExpected[t]) != 0)
      ++args->failures;
    char *text = NULL;
    if (ireepkg_runtime_format_flags(list, IREEPKG_RUNTIME_FLAGS_FLAGFILE,
                                     &text, NULL, NULL) != IREEPKG_RUNTIME_OK)
      ++args->failures;
    ireepkg_runtime_free_string(text);
    ireepkg_runtime_free_plugin_list(list);
  }
  return NULL;
}

static void test_threads(void) {
  ireepkg_runtime_index_t *index = open_good();
  for (int t = 0; t < 4; ++t) {
    ireepkg_runtime_plugin_list_t *list = list_for(index, kThreadTargets[t]);
    describe(list, gExpected[t], sizeof(gExpected[t]));
    ireepkg_runtime_free_plugin_list(list);
  }
  pthread_t threads[8];
  thread_args_t args[8];
  for (int i = 0; i < 8; ++i) {
    args[i] = (thread_args_t){index, i, 0};
    CHECK(pthread_create(&threads[i], NULL, list_many_times, &args[i]) == 0);
  }
  int failures = 0;
  for (int i = 0; i < 8; ++i) {
    pthread_join(threads[i], NULL);
    failures += args[i].failures;
  }
  CHECK(failures == 0);
  ireepkg_runtime_close(index);
}

static void test_list_outlives_index(void) {
  ireepkg_runtime_index_t *index = open_good();
  ireepkg_runtime_plugin_list_t *a = list_for(index, "linux-x86_64");
  ireepkg_runtime_plugin_list_t *b = list_for(index, "linux-aarch64");
  ireepkg_runtime_close(index); /* the lists keep the mapping */
  CHECK_STR(a->plugins[0].path, gUkX86);
  CHECK_STR(b->plugins[0].path, gUkArm);
  ireepkg_runtime_free_plugin_list(a);
  char *text = NULL;
  CHECK(ireepkg_runtime_format_flags(b, IREEPKG_RUNTIME_FLAGS_FLAGFILE, &text,
                                     NULL, NULL) == IREEPKG_RUNTIME_OK);
  CHECK_CONTAINS(text, gPrefix);
  ireepkg_runtime_free_string(text);
  ireepkg_runtime_free_plugin_list(b);

  /* The index file replaced (as a transaction does) while open: the open
   * handle keeps reading the old one. */
  index = open_good();
  char next[4200];
  snprintf(next, sizeof(next), "%s.next", gIndex);
  const fixture_plugin_t none[1] = {{0}};
  CHECK(fixture_write_index(next, gPrefix, "linux-x86_64", none, 0) == 0);
  CHECK(rename(next, gIndex) == 0);
  ireepkg_runtime_plugin_list_t *list = list_for(index, "linux-x86_64");
  CHECK(list->count == 4);
  ireepkg_runtime_free_plugin_list(list);
  ireepkg_runtime_close(index);
  index = open_good();
  CHECK(ireepkg_runtime_index_plugin_count(index) == 0);
  ireepkg_runtime_close(index);
  write_good_index(gIndex);
}

/*===----------------------------------------------------------------------===*
 * Versions, names, determinism
 *===----------------------------------------------------------------------===*/

static void test_version_and_names(void) {
  CHECK_STR(ireepkg_runtime_version(), IREEPKG_RUNTIME_VERSION_STRING);
  CHECK(ireepkg_runtime_version_number() == IREEPKG_RUNTIME_VERSION_NUMBER);
  CHECK(IREEPKG_RUNTIME_VERSION_NUMBER ==
        ((IREEPKG_RUNTIME_VERSION_MAJOR << 16) |
         (IREEPKG_RUNTIME_VERSION_MINOR << 8) | IREEPKG_RUNTIME_VERSION_PATCH));
  CHECK(IREEPKG_RUNTIME_INDEX_FORMAT_MAJOR == IREEPKG_INDEX_VERSION_MAJOR);
  const char *host = ireepkg_runtime_host_platform();
  CHECK(strchr(host, '-') != NULL);
  CHECK_STR(ireepkg_runtime_status_name(IREEPKG_RUNTIME_OK), "ok");
  CHECK_STR(ireepkg_runtime_status_name(IREEPKG_RUNTIME_ERROR_NO_PREFIX),
            "no prefix");
  CHECK_STR(ireepkg_runtime_status_name(IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX),
            "corrupt index");
  CHECK_STR(ireepkg_runtime_status_name(IREEPKG_RUNTIME_ERROR_NEWER_SCHEMA),
            "newer schema");
  CHECK_STR(ireepkg_runtime_status_name(IREEPKG_RUNTIME_ERROR_FILE_MISSING),
            "file missing");
  CHECK_STR(ireepkg_runtime_status_name(IREEPKG_RUNTIME_ERROR_IO), "I/O error");
  CHECK_STR(ireepkg_runtime_status_name((ireepkg_runtime_status_t)99),
            "unknown status");
}

static void test_writer_is_deterministic(void) {
  char a[4096], b[4096];
  at(a, sizeof(a), "det-a.index");
  at(b, sizeof(b), "det-b.index");
  write_good_index(a);
  write_good_index(b);
  size_t sa = 0, sb = 0;
  uint8_t *da = read_file(a, &sa), *db = read_file(b, &sb);
  CHECK(sa == sb && sa > 0 && memcmp(da, db, sa) == 0);
  /* Shared strings are stored once: "simple_mul_workgroup" and
   * "embedded-elf" appear exactly once each. */
  int workgroups = 0, formats = 0;
  for (size_t i = 0; i + 20 <= sa; ++i) {
    workgroups += memcmp(da + i, "simple_mul_workgroup", 20) == 0;
    formats += i + 12 <= sa && memcmp(da + i, "embedded-elf", 12) == 0;
  }
  CHECK(workgroups == 1);
  CHECK(formats == 1);
  free(da);
  free(db);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <scratch directory>\n", argv[0]);
    return 2;
  }
  snprintf(gWork, sizeof(gWork), "%s", argv[1]);
  remove_tree(gWork);
  make_dirs(gWork);
  make_good_prefix();

  test_version_and_names();
  test_writer_is_deterministic();
  test_open_and_accessors();
  test_list_prefix_platform();
  test_list_other_targets();
  test_selection_agrees_with_writer();
  test_fat_key();
  test_cpu_level_keys();
  test_cpu_levels();
  test_check_files();
  test_flags();
  test_flags_refuse_line_breaks();
  test_corrupt_indexes();
  test_prefix_states();
  test_invalid_arguments();
  test_locate_prefix();
  test_threads();
  test_list_outlives_index();

  printf("%d checks, %d failed\n", gChecks, gFailures);
  return gFailures ? 1 : 0;
}
