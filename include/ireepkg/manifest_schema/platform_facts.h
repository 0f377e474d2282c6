/*===- platform_facts.h - What IREE's runtime cannot call, per OS --*- C -*-===*
 *
 * The one table of facts about IREE's runtime on particular operating
 * systems that decide what ireepkg activates in a prefix for them. The
 * writer of a prefix's state (pkg's state.cpp and the runtime index writer),
 * libireepkg_runtime (which selects plugins for any target), and what
 * explains a plugin that is not activated (pack, install, info, flags,
 * doctor) all read this table and nothing else: a change upstream is a
 * change of one line here.
 *
 * Each fact says on which operating system it holds, which plugin format it
 * stops, what cannot be done and why, where upstream tracks it, and for
 * which IREE versions it holds. A prefix does not record the IREE its
 * target runs, so a fact stops activation while it is open upstream
 * (`fixed_in` NULL). When upstream fixes it, `fixed_in` becomes the first
 * IREE release with the fix: the format is activated again, and what
 * explains plugins still says which IREE they need there.
 *
 * C99 and C++ (libireepkg_runtime is C); no state, nothing to link.
 *
 *===----------------------------------------------------------------------===*/
#ifndef IREEPKG_PLATFORM_FACTS_H
#define IREEPKG_PLATFORM_FACTS_H

#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ireepkg_platform_fact_t {
  /** The operating system, as in platform names: "windows". */
  const char *os;
  /** The runtime plugin format it is about, as in manifests (a FatELF
   * file is an embedded-elf library too). */
  const char *format;
  /** What cannot be done, a clause: "embedded ELF (and FatELF) ...". */
  const char *fact;
  /** Why, in IREE's terms. */
  const char *cause;
  /** Where upstream tracks it: "iree-org/iree#12801". */
  const char *upstream;
  /** The IREE versions it holds for, as people read it. */
  const char *versions;
  /** The first IREE release without it; NULL while it is open upstream. */
  const char *fixed_in;
} ireepkg_platform_fact_t;

/** Every fact, and their number in `*out_count`. */
static inline const ireepkg_platform_fact_t *
ireepkg_platform_facts(size_t *out_count) {
  static const ireepkg_platform_fact_t facts[] = {
      {"windows", "embedded-elf",
       "embedded ELF (and FatELF) executable plugins cannot be called",
       "IREE's runtime calls the plugin's load and unload without the "
       "System V thunk it uses for query and resolve, so the plugin faults "
       "in load",
       "iree-org/iree#12801", "every IREE version up to at least 3.13.0", NULL},
  };
  *out_count = sizeof(facts) / sizeof(facts[0]);
  return facts;
}

/** The fact about plugins of `format` ("embedded-elf") on the operating
 * system named by the `os_size` bytes at `os` ("windows"), or NULL. */
static inline const ireepkg_platform_fact_t *
ireepkg_platform_fact_find(const char *os, size_t os_size, const char *format) {
  size_t count = 0;
  const ireepkg_platform_fact_t *facts = ireepkg_platform_facts(&count);
  for (size_t i = 0; i < count; ++i)
    if (strlen(facts[i].os) == os_size &&
        memcmp(facts[i].os, os, os_size) == 0 &&
        strcmp(facts[i].format, format) == 0)
      return &facts[i];
  return NULL;
}

/** The fact that stops plugins of `format` from being activated on `os`
 * (see ireepkg_platform_fact_find): one that is open upstream; else NULL. */
static inline const ireepkg_platform_fact_t *
ireepkg_platform_fact_stopping(const char *os, size_t os_size,
                               const char *format) {
  const ireepkg_platform_fact_t *fact =
      ireepkg_platform_fact_find(os, os_size, format);
  return fact && !fact->fixed_in ? fact : NULL;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#ifdef __cplusplus
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/manifest_schema/platform.h"

#include <string>

namespace ireepkg {

/// The fact about `format` plugins on `os` (open or fixed), or nullptr.
const ireepkg_platform_fact_t *platformFact(OS os, RuntimeFormat format);
/// The fact that stops `format` plugins from being activated on `os`: an
/// open one; else nullptr.
const ireepkg_platform_fact_t *stoppingPlatformFact(OS os,
                                                    RuntimeFormat format);

/// The fact as one clause for messages: "on windows, embedded ELF (and
/// FatELF) executable plugins cannot be called: IREE's runtime calls ...
/// (iree-org/iree#12801; every IREE version up to at least 3.13.0)"; a
/// fixed fact says from which IREE release it no longer holds.
std::string describePlatformFact(const ireepkg_platform_fact_t &fact);

} // namespace ireepkg
#endif

#endif /* IREEPKG_PLATFORM_FACTS_H */
