/*===- runtime_index_format.h - The byte layout of runtime.index ---*- C -*-===*
 *
 * <prefix>/state/runtime.index holds a prefix's runtime plugins in activation
 * order, every library each plugin declares (so that any target can be
 * selected, not only the prefix's own platform), their imports and
 * parameters. ireepkg writes it in every transaction
 * (ireepkg::encodeRuntimeIndex, index_writer.cpp); libireepkg_runtime maps it
 * read-only and walks it without parsing or copying strings (runtime.c).
 * This header is the one definition of the layout for both, usable from C99
 * and C++.
 *
 * All integers are little-endian and unaligned-safe readers use the load
 * helpers below (the writer still aligns sections to 8 bytes). Layout:
 *
 *   header        header_size bytes (96 in version 1.0)
 *   entries       plugin_count records of entry_size bytes (56 in 1.0),
 *                 in activation order
 *   refs          ref_count little-endian u32 string offsets; each entry owns
 *                 three runs of it:
 *                   libraries:  2 refs per library: key, path
 *                   imports:    1 ref per import
 *                   parameters: 2 refs per parameter: key, value
 *   strings       strings_size bytes of NUL-terminated UTF-8 strings; offset
 *                 0 is the empty string and the last byte is NUL, so every
 *                 offset below strings_size starts a C string that ends
 *                 inside the table (the reader hands out pointers into the
 *                 mapping).
 *
 * Library keys are an architecture (`x86_64`) for embedded-elf plugins and
 * a platform (`linux-x86_64`) for system-library plugins. Since version 1.1
 * a FatELF file (the manifest's `fat` key) is listed once per architecture
 * that it holds an image for and that the plugin has no file of its own for
 * (the writer reads the FatELF table), so that selecting a target is a key
 * comparison and a FatELF file is never selected for an architecture it
 * lacks. Version 1.0 writers stored the key `fat` instead, without knowing
 * the file's architectures; readers fall back to it for any architecture,
 * as before, only in 1.0 indexes. Since version 1.2 a key may end in a CPU
 * level or features (`x86_64_v3`, `linux-x86_64+avx512f`; spellings in
 * cpu_level.h): those builds are listed before the plain key's, most
 * required features first (the order of preference), and a reader running
 * on a CPU that has them takes the first one it supports instead of the
 * plain build (platform_library stays the plain build). Older readers never
 * match such a key, so they keep taking the plain build. Paths are absolute. The path of an
 *embedded-elf library is stored preceded by the 9 bytes `embedded:`, so that
 *the IREE spec (`--executable_plugin=embedded:<path>`) is the string that
 *starts 9 bytes before the path. (Readers check that those 9 bytes lie inside
 *the string table; their content is covered by the checksum.) Sections start
 * after the header and end inside the file.
 *
 * Versioning. Bytes 0..11 (magic, major, minor) keep their meaning in every
 * version. A reader refuses a major version it does not know (the layout
 * may have changed) with "written by a newer ireepkg". Minor versions only
 * add: fields at the end of the header (header_size grows), fields at the
 * end of each entry (entry_size grows), new sections after the ones above
 * (found through new header fields), new format kinds (which older readers
 * report as skipped with an unsupported format). A reader reads the fields
 * it knows and ignores the rest.
 *
 * Integrity. total_size is the file's size (catches truncation and appended
 * junk); checksum covers every byte from offset 32 (just after the checksum
 * field) to total_size, with ireepkg_index_checksum() below: FNV-1a 64 run
 * over little-endian 64-bit words in four interleaved lanes. Plain FNV-1a
 * needs one multiply per byte, which alone would exceed the discovery budget
 * (open + enumerate + close of 1,000 plugins in under 50 us); four lanes of
 * words need one multiply per 8 bytes and overlap their latencies. A change
 * confined to one lane is always detected (each step is a bijection of the
 * lane state); other corruption is missed with probability about 2^-64.
 * Beyond the checksum, the reader bounds-checks every offset, count and
 * string reference before it hands anything out, so a hostile file cannot
 * make it read outside the mapping.
 *
 *===----------------------------------------------------------------------===*/
#ifndef IREEPKG_RUNTIME_INDEX_FORMAT_H
#define IREEPKG_RUNTIME_INDEX_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Constants
 *===----------------------------------------------------------------------===*/

/** The first 8 bytes of every runtime index. */
#define IREEPKG_INDEX_MAGIC "IRPKGRT\0"
#define IREEPKG_INDEX_MAGIC_SIZE 8

/** The version this header describes; readers accept any minor. */
#define IREEPKG_INDEX_VERSION_MAJOR 1
#define IREEPKG_INDEX_VERSION_MINOR 2

/** Sizes of the version 1.0 records: the least a reader accepts. */
#define IREEPKG_INDEX_HEADER_SIZE_V1 96u
#define IREEPKG_INDEX_ENTRY_SIZE_V1 56u

/** Bytes from here to total_size are covered by the checksum. */
#define IREEPKG_INDEX_CHECKSUM_START 32u

/** entry.platform_library when the index's platform has no build. */
#define IREEPKG_INDEX_NO_LIBRARY 0xFFFFFFFFu

/** Refs per library record (key, path) and per parameter (key, value). */
#define IREEPKG_INDEX_LIBRARY_REFS 2u
#define IREEPKG_INDEX_PARAMETER_REFS 2u

/** Stored in front of every embedded-elf library path. */
#define IREEPKG_INDEX_EMBEDDED_PREFIX "embedded:"
#define IREEPKG_INDEX_EMBEDDED_PREFIX_SIZE 9u

/** entry.format_kind. Unknown kinds are skipped by readers. */
enum ireepkg_index_format_kind_e {
  IREEPKG_INDEX_FORMAT_UNKNOWN = 0,
  IREEPKG_INDEX_FORMAT_EMBEDDED_ELF = 1,   /* "embedded-elf" */
  IREEPKG_INDEX_FORMAT_SYSTEM_LIBRARY = 2, /* "system-library" */
};

/*===----------------------------------------------------------------------===*
 * Records (documentation of the layout; access them through the byte
 * offsets, e.g. offsetof(ireepkg_index_header_v1_t, plugin_count), and the
 * load/store helpers, never by casting the mapping)
 *===----------------------------------------------------------------------===*/

typedef struct ireepkg_index_header_v1_t {
  char magic[8];           /*  0: IREEPKG_INDEX_MAGIC */
  uint16_t version_major;  /*  8: IREEPKG_INDEX_VERSION_MAJOR */
  uint16_t version_minor;  /* 10 */
  uint32_t header_size;    /* 12: bytes of this header as written */
  uint64_t total_size;     /* 16: bytes of the whole file */
  uint64_t checksum;       /* 24: of bytes [32, total_size) */
  uint32_t flags;          /* 32: none defined; readers ignore unknown bits */
  uint32_t plugin_count;   /* 36 */
  uint32_t entry_size;     /* 40: bytes of each entry as written */
  uint32_t ref_count;      /* 44 */
  uint64_t entries_offset; /* 48 */
  uint64_t refs_offset;    /* 56 */
  uint64_t strings_offset; /* 64 */
  uint64_t strings_size;   /* 72: < 2^32 */
  uint32_t prefix;   /* 80: string: the prefix's absolute path when written */
  uint32_t platform; /* 84: string: the prefix's platform, "linux-x86_64" */
  uint32_t reserved[2]; /* 88: zero */
} ireepkg_index_header_v1_t;

typedef struct ireepkg_index_entry_v1_t {
  uint32_t name;             /*  0: string: the runtime plugin's name */
  uint32_t package;          /*  4: string: the package providing it */
  uint32_t package_version;  /*  8: string: "1.2.0" */
  uint32_t format;           /* 12: string: "embedded-elf", ... */
  uint32_t format_kind;      /* 16: ireepkg_index_format_kind_e */
  uint32_t flags;            /* 20: none defined */
  uint32_t libraries_first;  /* 24: first ref of the library records */
  uint32_t library_count;    /* 28: records of IREEPKG_INDEX_LIBRARY_REFS */
  uint32_t imports_first;    /* 32 */
  uint32_t import_count;     /* 36 */
  uint32_t parameters_first; /* 40 */
  uint32_t parameter_count;  /* 44: records of IREEPKG_INDEX_PARAMETER_REFS */
  /* 48: the library the writer selected for header.platform (the same rule
   * as the reader's: embedded-elf takes the platform's architecture (in 1.0
   * indexes, else "fat") unless IREE cannot call embedded plugins on the
   * platform's OS (platform_facts.h); system-library takes the platform),
   * or IREEPKG_INDEX_NO_LIBRARY.
   * Lets the reader skip key comparisons for the common target. */
  uint32_t platform_library;
  uint32_t reserved; /* 52: zero */
} ireepkg_index_entry_v1_t;

#if defined(__cplusplus)
#define IREEPKG_INDEX_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define IREEPKG_INDEX_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
IREEPKG_INDEX_STATIC_ASSERT(sizeof(ireepkg_index_header_v1_t) ==
                                IREEPKG_INDEX_HEADER_SIZE_V1,
                            "header layout");
IREEPKG_INDEX_STATIC_ASSERT(offsetof(ireepkg_index_header_v1_t, flags) ==
                                IREEPKG_INDEX_CHECKSUM_START,
                            "checksum start");
IREEPKG_INDEX_STATIC_ASSERT(offsetof(ireepkg_index_header_v1_t, prefix) == 80,
                            "header layout");
IREEPKG_INDEX_STATIC_ASSERT(sizeof(ireepkg_index_entry_v1_t) ==
                                IREEPKG_INDEX_ENTRY_SIZE_V1,
                            "entry layout");
IREEPKG_INDEX_STATIC_ASSERT(offsetof(ireepkg_index_entry_v1_t,
                                     platform_library) == 48,
                            "entry layout");

#define IREEPKG_INDEX_HEADER_FIELD(field)                                      \
  offsetof(ireepkg_index_header_v1_t, field)
#define IREEPKG_INDEX_ENTRY_FIELD(field)                                       \
  offsetof(ireepkg_index_entry_v1_t, field)

/*===----------------------------------------------------------------------===*
 * Little-endian access
 *===----------------------------------------------------------------------===*/

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define IREEPKG_INDEX_BIG_ENDIAN 1
#else
#define IREEPKG_INDEX_BIG_ENDIAN 0
#endif

static inline uint16_t ireepkg_index_load16(const uint8_t *p) {
  return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t ireepkg_index_load32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, sizeof(v));
#if IREEPKG_INDEX_BIG_ENDIAN
  v = __builtin_bswap32(v);
#endif
  return v;
}

static inline uint64_t ireepkg_index_load64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, sizeof(v));
#if IREEPKG_INDEX_BIG_ENDIAN
  v = __builtin_bswap64(v);
#endif
  return v;
}

static inline void ireepkg_index_store16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

static inline void ireepkg_index_store32(uint8_t *p, uint32_t v) {
#if IREEPKG_INDEX_BIG_ENDIAN
  v = __builtin_bswap32(v);
#endif
  memcpy(p, &v, sizeof(v));
}

static inline void ireepkg_index_store64(uint8_t *p, uint64_t v) {
#if IREEPKG_INDEX_BIG_ENDIAN
  v = __builtin_bswap64(v);
#endif
  memcpy(p, &v, sizeof(v));
}

/*===----------------------------------------------------------------------===*
 * Checksum
 *===----------------------------------------------------------------------===*/

#define IREEPKG_INDEX_FNV_OFFSET 0xcbf29ce484222325ull
#define IREEPKG_INDEX_FNV_PRIME 0x00000100000001b3ull

/** The checksum of `size` bytes: 64-bit little-endian words are folded into
 * four FNV-1a lanes in turn (word i into lane i % 4, lane j seeded with the
 * FNV offset basis xor j) while at least 32 bytes remain; the 0..31 bytes
 * left go through byte-wise FNV-1a into a fifth state; the five states and
 * the size are then folded FNV-1a style and finished with the MurmurHash3
 * 64-bit finalizer. */
static inline uint64_t ireepkg_index_checksum(const uint8_t *data,
                                              uint64_t size) {
  uint64_t l0 = IREEPKG_INDEX_FNV_OFFSET, l1 = IREEPKG_INDEX_FNV_OFFSET ^ 1u,
           l2 = IREEPKG_INDEX_FNV_OFFSET ^ 2u,
           l3 = IREEPKG_INDEX_FNV_OFFSET ^ 3u;
  const uint8_t *p = data;
  uint64_t left = size;
  for (; left >= 32; p += 32, left -= 32) {
    l0 = (l0 ^ ireepkg_index_load64(p)) * IREEPKG_INDEX_FNV_PRIME;
    l1 = (l1 ^ ireepkg_index_load64(p + 8)) * IREEPKG_INDEX_FNV_PRIME;
    l2 = (l2 ^ ireepkg_index_load64(p + 16)) * IREEPKG_INDEX_FNV_PRIME;
    l3 = (l3 ^ ireepkg_index_load64(p + 24)) * IREEPKG_INDEX_FNV_PRIME;
  }
  uint64_t tail = IREEPKG_INDEX_FNV_OFFSET;
  for (; left > 0; ++p, --left)
    tail = (tail ^ *p) * IREEPKG_INDEX_FNV_PRIME;
  uint64_t h = IREEPKG_INDEX_FNV_OFFSET;
  h = (h ^ l0) * IREEPKG_INDEX_FNV_PRIME;
  h = (h ^ l1) * IREEPKG_INDEX_FNV_PRIME;
  h = (h ^ l2) * IREEPKG_INDEX_FNV_PRIME;
  h = (h ^ l3) * IREEPKG_INDEX_FNV_PRIME;
  h = (h ^ tail) * IREEPKG_INDEX_FNV_PRIME;
  h = (h ^ size) * IREEPKG_INDEX_FNV_PRIME;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* IREEPKG_RUNTIME_INDEX_FORMAT_H */
