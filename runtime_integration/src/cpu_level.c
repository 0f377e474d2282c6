/*===- cpu_level.c - The CPU features of the host ------------------------===*
 *
 * Detection for cpu_level.h: x86 reads cpuid leaves 1, 7 (subleaves 0 and
 * 1) and 0x80000001, and xgetbv(0) for the register state the OS saves
 * (on every operating system: Linux, Windows, macOS); aarch64 Linux reads
 * the kernel's hwcaps. Everywhere else (aarch64 on macOS and Windows,
 * other architectures) nothing is read and the answer is the baseline: the
 * plain build, which every CPU of the architecture runs. (macOS could say
 * more through sysctlbyname("hw.optional.arm.FEAT_*"), Windows through
 * IsProcessorFeaturePresent; neither can be tested here, so neither is
 * used.) The bits are those of
 * include/ireepkg/manifest_schema/cpu_level.h, named as LLVM names them
 * (iree-cpuinfo reports the same CPU in the same spelling).
 *
 *===----------------------------------------------------------------------===*/
#include "cpu_level.h"

#include "ireepkg/manifest_schema/cpu_level.h"

#include <stdatomic.h>
#include <stdio.h>

#if defined(__x86_64__) || defined(_M_X64)
#if defined(_MSC_VER)
#include <immintrin.h>
#include <intrin.h>
static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
  int v[4];
  __cpuidex(v, (int)leaf, (int)sub);
  for (int i = 0; i < 4; ++i)
    r[i] = (uint32_t)v[i];
}
static uint64_t xgetbv0(void) { return _xgetbv(0); }
#else
#include <cpuid.h>
static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
  __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}
static uint64_t xgetbv0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}
#endif

static uint64_t detect(void) {
  uint32_t r[4];
  cpuid(0, 0, r);
  const uint32_t maxLeaf = r[0];
  uint64_t f = 0;
#define SET(cond, bit)                                                         \
  if (cond)                                                                    \
  f |= IREEPKG_CPU_X86(bit)
  cpuid(1, 0, r);
  const uint32_t ecx1 = r[2];
  SET(ecx1 & (1u << 0), 0);   /* sse3 */
  SET(ecx1 & (1u << 9), 1);   /* ssse3 */
  SET(ecx1 & (1u << 12), 12); /* fma */
  SET(ecx1 & (1u << 13), 5);  /* cx16 */
  SET(ecx1 & (1u << 19), 2);  /* sse4.1 */
  SET(ecx1 & (1u << 20), 3);  /* sse4.2 */
  SET(ecx1 & (1u << 22), 14); /* movbe */
  SET(ecx1 & (1u << 23), 4);  /* popcnt */
  SET(ecx1 & (1u << 26), 15); /* xsave */
  SET(ecx1 & (1u << 28), 7);  /* avx */
  SET(ecx1 & (1u << 29), 11); /* f16c */
  if (maxLeaf >= 7) {
    cpuid(7, 0, r);
    const uint32_t maxSub = r[0], ebx = r[1], ecx = r[2], edx = r[3];
    SET(ebx & (1u << 3), 9);   /* bmi */
    SET(ebx & (1u << 5), 8);   /* avx2 */
    SET(ebx & (1u << 8), 10);  /* bmi2 */
    SET(ebx & (1u << 16), 16); /* avx512f */
    SET(ebx & (1u << 17), 19); /* avx512dq */
    SET(ebx & (1u << 28), 18); /* avx512cd */
    SET(ebx & (1u << 30), 17); /* avx512bw */
    SET(ebx & (1u << 31), 20); /* avx512vl */
    SET(ecx & (1u << 11), 21); /* avx512vnni */
    SET(edx & (1u << 23), 23); /* avx512fp16 */
    if (maxSub >= 1) {
      cpuid(7, 1, r);
      SET(r[0] & (1u << 4), 24); /* avxvnni */
      SET(r[0] & (1u << 5), 22); /* avx512bf16 */
    }
  }
  cpuid(0x80000000u, 0, r);
  if (r[0] >= 0x80000001u) {
    cpuid(0x80000001u, 0, r);
    SET(r[2] & (1u << 0), 6);  /* sahf */
    SET(r[2] & (1u << 5), 13); /* lzcnt */
  }
#undef SET
  /* AVX needs the OS to save the YMM state (XCR0 bits 1, 2), AVX-512 the
   * opmask and ZMM state too (bits 5, 6, 7). */
  const uint64_t avx = IREEPKG_CPU_X86(7) | IREEPKG_CPU_X86(8) |
                       IREEPKG_CPU_X86(11) | IREEPKG_CPU_X86(12) |
                       IREEPKG_CPU_X86(24);
  const uint64_t avx512 = IREEPKG_CPU_X86(16) | IREEPKG_CPU_X86(17) |
                          IREEPKG_CPU_X86(18) | IREEPKG_CPU_X86(19) |
                          IREEPKG_CPU_X86(20) | IREEPKG_CPU_X86(21) |
                          IREEPKG_CPU_X86(22) | IREEPKG_CPU_X86(23);
  const uint64_t xcr0 = (ecx1 & (1u << 27)) ? xgetbv0() : 0;
  if ((xcr0 & 0x6) != 0x6)
    f &= ~(avx | avx512);
  if ((xcr0 & 0xE6) != 0xE6)
    f &= ~avx512;
  return f;
}
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
static uint64_t detect(void) {
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  uint64_t f = 0;
  if (hw & (1ul << 10)) /* HWCAP_ASIMDHP */
    f |= IREEPKG_CPU_ARM(0);
  if (hw & (1ul << 20)) /* HWCAP_ASIMDDP */
    f |= IREEPKG_CPU_ARM(1);
  if (hw & (1ul << 22)) /* HWCAP_SVE */
    f |= IREEPKG_CPU_ARM(2);
  if (hw2 & (1ul << 1)) /* HWCAP2_SVE2 */
    f |= IREEPKG_CPU_ARM(3);
  if (hw2 & (1ul << 13)) /* HWCAP2_I8MM */
    f |= IREEPKG_CPU_ARM(4);
  if (hw2 & (1ul << 14)) /* HWCAP2_BF16 */
    f |= IREEPKG_CPU_ARM(5);
  return f;
}
#else
/* The baseline (see the top of the file). */
static uint64_t detect(void) { return 0; }
#endif

uint64_t ireepkg_cpu_host_features(void) {
  /* Bit 63 is never a feature: it marks "computed". */
  static _Atomic uint64_t cached = 0;
  uint64_t f = atomic_load_explicit(&cached, memory_order_relaxed);
  if (f == 0) {
    f = detect() | (UINT64_C(1) << 63);
    atomic_store_explicit(&cached, f, memory_order_relaxed);
  }
  return f & ~(UINT64_C(1) << 63);
}

void ireepkg_cpu_describe(uint64_t features, const char *arch, char *out,
                          unsigned size) {
  if (size == 0)
    return;
  unsigned n = 0;
  int w = 0;
  if (strcmp(arch, "x86_64") == 0) {
    const int level = ireepkg_cpu_x86_64_level(features);
    w = level == 1 ? snprintf(out, size, "x86-64 baseline")
                   : snprintf(out, size, "x86-64-v%d", level);
  } else {
    w = snprintf(out, size, "%s", arch);
  }
  n = w < 0 ? 0 : (unsigned)w < size ? (unsigned)w : size - 1;
  const char *sep = " (";
  for (size_t i = 0; i < IREEPKG_CPU_FEATURE_COUNT && n + 1 < size; ++i) {
    const ireepkg_cpu_feature_t *f = &kIreepkgCpuFeatures[i];
    if (!(features & f->bit) || strcmp(f->arch, arch) != 0)
      continue;
    w = snprintf(out + n, size - n, "%s+%s", sep, f->name);
    n = w < 0 ? n : n + (unsigned)w < size ? n + (unsigned)w : size - 1;
    sep = " ";
  }
  if (strcmp(sep, " ") == 0 && n + 1 < size) {
    out[n++] = ')';
    out[n] = '\0';
  }
}
