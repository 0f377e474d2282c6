/*===- cpu_level.h - CPU levels and features of runtime builds -----*- C -*-===*
 *
 * A runtime plugin may ship several builds for one architecture, each for a
 * CPU level: its library key is the architecture (embedded-elf) or platform
 * (system-library) followed by what the build needs of the CPU:
 *
 *   <base>[_v2|_v3|_v4][+<feature>]...
 *
 * `_vN` are the x86-64 microarchitecture levels (x86_64 only; the names
 * archspec and glibc-hwcaps use: x86_64_v3 is -march=x86-64-v3); each
 * `+<feature>` is one CPU feature in LLVM's spelling (`+avx512f`, `+sve`),
 * known for its architecture. The plain key (`x86_64`, `linux-x86_64`) is
 * the baseline build every CPU of the architecture runs.
 *
 * Where code runs, the build chosen is the one with the most required
 * features that the CPU has, the baseline when none fits (ties: the first
 * in the index, which the writer orders by preference). This header is the
 * one definition of the spellings and of the levels for the manifest
 * checker (C++), the index writer and libireepkg_runtime (C99).
 *
 *===----------------------------------------------------------------------===*/
#ifndef IREEPKG_CPU_LEVEL_H
#define IREEPKG_CPU_LEVEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One bit per CPU feature ireepkg knows; bits 0..31 x86_64, 32..63
 * aarch64. */
#define IREEPKG_CPU_X86(bit) (UINT64_C(1) << (bit))
#define IREEPKG_CPU_ARM(bit) (UINT64_C(1) << (32 + (bit)))

typedef struct ireepkg_cpu_feature_t {
  const char *name; /* LLVM's spelling, as after '+' in a key */
  const char *arch; /* "x86_64" or "aarch64" */
  uint64_t bit;
} ireepkg_cpu_feature_t;

static const ireepkg_cpu_feature_t kIreepkgCpuFeatures[] = {
    {"sse3", "x86_64", IREEPKG_CPU_X86(0)},
    {"ssse3", "x86_64", IREEPKG_CPU_X86(1)},
    {"sse4.1", "x86_64", IREEPKG_CPU_X86(2)},
    {"sse4.2", "x86_64", IREEPKG_CPU_X86(3)},
    {"popcnt", "x86_64", IREEPKG_CPU_X86(4)},
    {"cx16", "x86_64", IREEPKG_CPU_X86(5)},
    {"sahf", "x86_64", IREEPKG_CPU_X86(6)},
    {"avx", "x86_64", IREEPKG_CPU_X86(7)},
    {"avx2", "x86_64", IREEPKG_CPU_X86(8)},
    {"bmi", "x86_64", IREEPKG_CPU_X86(9)},
    {"bmi2", "x86_64", IREEPKG_CPU_X86(10)},
    {"f16c", "x86_64", IREEPKG_CPU_X86(11)},
    {"fma", "x86_64", IREEPKG_CPU_X86(12)},
    {"lzcnt", "x86_64", IREEPKG_CPU_X86(13)},
    {"movbe", "x86_64", IREEPKG_CPU_X86(14)},
    {"xsave", "x86_64", IREEPKG_CPU_X86(15)},
    {"avx512f", "x86_64", IREEPKG_CPU_X86(16)},
    {"avx512bw", "x86_64", IREEPKG_CPU_X86(17)},
    {"avx512cd", "x86_64", IREEPKG_CPU_X86(18)},
    {"avx512dq", "x86_64", IREEPKG_CPU_X86(19)},
    {"avx512vl", "x86_64", IREEPKG_CPU_X86(20)},
    {"avx512vnni", "x86_64", IREEPKG_CPU_X86(21)},
    {"avx512bf16", "x86_64", IREEPKG_CPU_X86(22)},
    {"avx512fp16", "x86_64", IREEPKG_CPU_X86(23)},
    {"avxvnni", "x86_64", IREEPKG_CPU_X86(24)},
    {"fp16", "aarch64", IREEPKG_CPU_ARM(0)},
    {"dotprod", "aarch64", IREEPKG_CPU_ARM(1)},
    {"sve", "aarch64", IREEPKG_CPU_ARM(2)},
    {"sve2", "aarch64", IREEPKG_CPU_ARM(3)},
    {"i8mm", "aarch64", IREEPKG_CPU_ARM(4)},
    {"bf16", "aarch64", IREEPKG_CPU_ARM(5)},
};
#define IREEPKG_CPU_FEATURE_COUNT                                              \
  (sizeof(kIreepkgCpuFeatures) / sizeof(kIreepkgCpuFeatures[0]))

/** The x86-64 psABI levels, each including the one below. */
#define IREEPKG_CPU_X86_64_V2                                                  \
  (IREEPKG_CPU_X86(0) | IREEPKG_CPU_X86(1) | IREEPKG_CPU_X86(2) |              \
   IREEPKG_CPU_X86(3) | IREEPKG_CPU_X86(4) | IREEPKG_CPU_X86(5) |              \
   IREEPKG_CPU_X86(6))
#define IREEPKG_CPU_X86_64_V3                                                  \
  (IREEPKG_CPU_X86_64_V2 | IREEPKG_CPU_X86(7) | IREEPKG_CPU_X86(8) |           \
   IREEPKG_CPU_X86(9) | IREEPKG_CPU_X86(10) | IREEPKG_CPU_X86(11) |            \
   IREEPKG_CPU_X86(12) | IREEPKG_CPU_X86(13) | IREEPKG_CPU_X86(14) |           \
   IREEPKG_CPU_X86(15))
#define IREEPKG_CPU_X86_64_V4                                                  \
  (IREEPKG_CPU_X86_64_V3 | IREEPKG_CPU_X86(16) | IREEPKG_CPU_X86(17) |         \
   IREEPKG_CPU_X86(18) | IREEPKG_CPU_X86(19) | IREEPKG_CPU_X86(20))

/** What ireepkg_cpu_parse_key found wrong. */
typedef enum ireepkg_cpu_key_problem_e {
  IREEPKG_CPU_KEY_OK = 0,
  IREEPKG_CPU_KEY_BAD_LEVEL,    /* `_vN` other than 2..4, or not on x86_64 */
  IREEPKG_CPU_KEY_BAD_FEATURE,  /* `+name` unknown for the architecture */
  IREEPKG_CPU_KEY_EMPTY_FEATURE /* `+` with nothing after it */
} ireepkg_cpu_key_problem_t;

typedef struct ireepkg_cpu_key_t {
  size_t base_size;  /* bytes of the architecture or platform in front */
  uint64_t required; /* the features the build needs; 0: the baseline */
  int level;         /* the x86-64 level named (2..4), 0 if none */
  ireepkg_cpu_key_problem_t problem;
  const char *bad; /* the offending part of the key when problem != OK */
  size_t bad_size;
} ireepkg_cpu_key_t;

static inline bool ireepkg_cpu_ends_with(const char *s, size_t n,
                                         const char *tail) {
  const size_t t = strlen(tail);
  return n >= t && memcmp(s + n - t, tail, t) == 0 &&
         (n == t || s[n - t - 1] == '-');
}

/** Splits `key` (`size` bytes) into its base and CPU requirement. `_v1`
 * is accepted when `allow_v1` (a target such as `--cpu-level x86_64_v1`
 * naming the baseline; manifests spell the baseline without a suffix). The
 * caller checks the base itself (an architecture or a platform). */
static inline ireepkg_cpu_key_t
ireepkg_cpu_parse_key(const char *key, size_t size, bool allow_v1) {
  ireepkg_cpu_key_t out = {0, 0, 0, IREEPKG_CPU_KEY_OK, NULL, 0};
  size_t end = 0;
  while (end < size && key[end] != '+')
    ++end;
  size_t base = end;
  /* "<...>x86_64_vN": the level. */
  if (end >= 3 && key[end - 3] == '_' && key[end - 2] == 'v' &&
      key[end - 1] >= '0' && key[end - 1] <= '9') {
    const int level = key[end - 1] - '0';
    base = end - 3;
    if (!ireepkg_cpu_ends_with(key, base, "x86_64") || level > 4 ||
        level < (allow_v1 ? 1 : 2)) {
      out.problem = IREEPKG_CPU_KEY_BAD_LEVEL;
      out.bad = key + base;
      out.bad_size = end - base;
      out.base_size = base;
      return out;
    }
    out.level = level;
    out.required = level == 4   ? IREEPKG_CPU_X86_64_V4
                   : level == 3 ? IREEPKG_CPU_X86_64_V3
                   : level == 2 ? IREEPKG_CPU_X86_64_V2
                                : 0;
  }
  out.base_size = base;
  while (end < size) { /* at a '+' */
    size_t start = ++end;
    while (end < size && key[end] != '+')
      ++end;
    if (end == start) {
      out.problem = IREEPKG_CPU_KEY_EMPTY_FEATURE;
      out.bad = key + start - 1;
      out.bad_size = 1;
      return out;
    }
    bool found = false;
    for (size_t i = 0; i < IREEPKG_CPU_FEATURE_COUNT; ++i) {
      const ireepkg_cpu_feature_t *f = &kIreepkgCpuFeatures[i];
      if (strlen(f->name) == end - start &&
          memcmp(f->name, key + start, end - start) == 0 &&
          ireepkg_cpu_ends_with(key, base, f->arch)) {
        out.required |= f->bit;
        found = true;
        break;
      }
    }
    if (!found) {
      out.problem = IREEPKG_CPU_KEY_BAD_FEATURE;
      out.bad = key + start;
      out.bad_size = end - start;
      return out;
    }
  }
  return out;
}

/** How many features `mask` names: the preference of a build (more is
 * preferred). */
static inline int ireepkg_cpu_feature_count(uint64_t mask) {
  int n = 0;
  for (; mask; mask &= mask - 1)
    ++n;
  return n;
}

/** The highest x86-64 level (1..4) `features` reach. */
static inline int ireepkg_cpu_x86_64_level(uint64_t features) {
  if ((features & IREEPKG_CPU_X86_64_V4) == IREEPKG_CPU_X86_64_V4)
    return 4;
  if ((features & IREEPKG_CPU_X86_64_V3) == IREEPKG_CPU_X86_64_V3)
    return 3;
  if ((features & IREEPKG_CPU_X86_64_V2) == IREEPKG_CPU_X86_64_V2)
    return 2;
  return 1;
}

/** The rank of library key `key` for base `want` on a CPU with `features`:
 * -1 when the key is for another base, malformed, or needs a feature the
 * CPU lacks; otherwise the number of features it requires (0: the
 * baseline). */
static inline int ireepkg_cpu_key_rank(const char *key, const char *want,
                                       uint64_t features) {
  const size_t size = strlen(key);
  const ireepkg_cpu_key_t k = ireepkg_cpu_parse_key(key, size, false);
  if (k.problem != IREEPKG_CPU_KEY_OK || k.base_size != strlen(want) ||
      memcmp(key, want, k.base_size) != 0 || (k.required & ~features) != 0)
    return -1;
  return ireepkg_cpu_feature_count(k.required);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* IREEPKG_CPU_LEVEL_H */
