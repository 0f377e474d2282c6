/*===- cpu_level.h - The CPU features of the host ------------------*- C -*-===*
 *
 * What the CPU this process runs on can execute, as the feature bits of
 * include/ireepkg/manifest_schema/cpu_level.h: libireepkg_runtime chooses a
 * runtime plugin's build with it (runtime.c), and ireepkg shows it (info,
 * doctor). Hidden, like prefix_flagfile.h: not part of the library's API.
 *
 *===----------------------------------------------------------------------===*/
#ifndef IREEPKG_RUNTIME_CPU_LEVEL_H
#define IREEPKG_RUNTIME_CPU_LEVEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The features of the host CPU that the operating system enables (x86:
 * cpuid, with AVX and AVX-512 only when xgetbv says the OS saves their
 * registers; aarch64 Linux: getauxval(AT_HWCAP, AT_HWCAP2)); 0 on other
 * hosts. Computed once. */
uint64_t ireepkg_cpu_host_features(void);

/** The host's features as text for people: "x86-64-v4 (avx512f avx512bw
 * ...)" or "aarch64 (sve ...)": at most `size` bytes with the NUL. */
void ireepkg_cpu_describe(uint64_t features, const char *arch, char *out,
                          unsigned size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* IREEPKG_RUNTIME_CPU_LEVEL_H */
