/*===- runtime.c - libireepkg_runtime --------------------------------------===*
 *
 * The implementation of ireepkg/runtime.h: choosing a prefix with the CLI's
 * rules, mapping and validating <prefix>/state/runtime.index (layout in
 * runtime_index_format.h), selecting each plugin's library for a target, and
 * writing IREE flags. Written in C11 so that neither the shared nor the
 * static library needs the C++ runtime; every function outside the API is
 * static but one (ireepkg_runtime_flagfile_of_index, hidden, which ireepkg
 * writes its prefixes' runtime.flags with: prefix_flagfile.h), and the
 * shared library exports only ireepkg_runtime_* symbols of the API.
 *
 * Everything is validated once, in open; listing then only follows offsets
 * that are known to be in bounds. Handles are immutable after open except
 * for an atomic reference count shared with the plugin lists.
 *
 * Every difference between operating systems (POSIX, Windows) is in its
 * first section, "The operating system" (cpu_level.c, the CPU detection,
 * keeps its own differences between architectures and systems).
 *
 * Why one file of this size: the library is one translation unit on purpose
 * (with cpu_level.c beside it); every function outside the API is static or
 * hidden, so the shared library exports nothing else and an application can
 * also compile the two files into itself.
 *
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE 1

#include "ireepkg/runtime.h"

#include "ireepkg/manifest_schema/cpu_level.h"
#include "ireepkg/manifest_schema/platform_facts.h"
#include "ireepkg/manifest_schema/runtime_index_format.h"

#include "cpu_level.h"
#include "prefix_flagfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN 1
#include <windows.h>
#else
#include <fcntl.h>
#if defined(__linux__)
#include <sys/auxv.h>
#endif
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#endif

_Static_assert(IREEPKG_RUNTIME_INDEX_FORMAT_MAJOR ==
                   IREEPKG_INDEX_VERSION_MAJOR,
               "runtime.h and runtime_index_format.h disagree on the format version");

/*===----------------------------------------------------------------------===*
 * The operating system
 *
 * Every difference between Windows and POSIX systems is in this section;
 * the rest of the file calls only these functions (and the C library).
 * Paths are UTF-8 at the API on every system: on Windows they are
 * converted to UTF-16 for the wide-character file functions, and the
 * environment is read the same way. Errors are errno values (Windows error
 * codes are mapped to the nearest one).
 *===----------------------------------------------------------------------===*/

#if defined(_WIN32)
#define SEP '\\'
#define SEP_S "\\"
#else
#define SEP '/'
#define SEP_S "/"
#endif

/* The user's own prefix: $XDG_DATA_HOME/ireepkg, else
 * $HOME/.local/share/ireepkg; on Windows %LOCALAPPDATA%\ireepkg, else
 * %USERPROFILE%\AppData\Local\ireepkg. */
#if defined(_WIN32)
#define DATA_HOME_VARIABLE "LOCALAPPDATA"
#define HOME_VARIABLE "USERPROFILE"
#define HOME_DATA_DIRECTORY "\\AppData\\Local\\ireepkg"
#else
#define DATA_HOME_VARIABLE "XDG_DATA_HOME"
#define HOME_VARIABLE "HOME"
#define HOME_DATA_DIRECTORY "/.local/share/ireepkg"
#endif

static bool is_sep(char c) {
#if defined(_WIN32)
  return c == '\\' || c == '/';
#else
  return c == '/';
#endif
}

/* The length of the root of an absolute path ("/"; on Windows "C:\" or
 * "\\server\share\"), or 0 for a relative one. */
static size_t root_length(const char *p) {
#if defined(_WIN32)
  if (((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) &&
      p[1] == ':' && is_sep(p[2]))
    return 3;
  if (is_sep(p[0]) && is_sep(p[1]) && p[2] && !is_sep(p[2])) {
    size_t n = 2, parts = 0;
    while (p[n] && parts < 2) {
      while (p[n] && !is_sep(p[n]))
        ++n;
      ++parts;
      if (p[n])
        ++n;
    }
    return n;
  }
  return 0;
#else
  return p[0] == '/' ? 1 : 0;
#endif
}

/* What a path names. */
typedef enum file_kind_e {
  KIND_NONE,
  KIND_FILE,
  KIND_DIRECTORY,
  KIND_OTHER
} file_kind_t;

#if defined(_WIN32)

typedef HANDLE os_file_t;
#define OS_NO_FILE INVALID_HANDLE_VALUE

static int errno_of(DWORD code) {
  switch (code) {
  case ERROR_FILE_NOT_FOUND:
  case ERROR_PATH_NOT_FOUND:
  case ERROR_INVALID_DRIVE:
  case ERROR_BAD_NETPATH:
  case ERROR_BAD_NET_NAME:
  case ERROR_INVALID_NAME:
    return ENOENT;
  case ERROR_DIRECTORY:
    return ENOTDIR;
  case ERROR_ACCESS_DENIED:
  case ERROR_SHARING_VIOLATION:
  case ERROR_LOCK_VIOLATION:
  case ERROR_WRITE_PROTECT:
    return EACCES;
  case ERROR_FILE_EXISTS:
  case ERROR_ALREADY_EXISTS:
    return EEXIST;
  case ERROR_NOT_ENOUGH_MEMORY:
  case ERROR_OUTOFMEMORY:
    return ENOMEM;
  case ERROR_DISK_FULL:
  case ERROR_HANDLE_DISK_FULL:
    return ENOSPC;
  case ERROR_FILENAME_EXCED_RANGE:
    return ENAMETOOLONG;
  default:
    return EIO;
  }
}

/* `utf8` as a malloc'ed UTF-16 string; NULL with errno set (EINVAL for
 * text that is not UTF-8). */
static wchar_t *os_wide(const char *utf8) {
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, NULL, 0);
  if (n <= 0) {
    errno = EINVAL;
    return NULL;
  }
  wchar_t *wide = (wchar_t *)malloc((size_t)n * sizeof(wchar_t));
  if (!wide) {
    errno = ENOMEM;
    return NULL;
  }
  MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, wide, n);
  return wide;
}

/* `wide` as a malloc'ed UTF-8 string; NULL with errno set. */
static char *os_narrow(const wchar_t *wide) {
  int n = WideCharToMultiByte(CP_UTF8, 0, wide, -1, NULL, 0, NULL, NULL);
  if (n <= 0) {
    errno = EINVAL;
    return NULL;
  }
  char *utf8 = (char *)malloc((size_t)n);
  if (!utf8) {
    errno = ENOMEM;
    return NULL;
  }
  WideCharToMultiByte(CP_UTF8, 0, wide, -1, utf8, n, NULL, NULL);
  return utf8;
}

/* No set-user-ID programs on Windows. */
static bool os_privileged(void) { return false; }

static char *os_getenv(const char *name) {
  wchar_t *wname = os_wide(name);
  if (!wname)
    return NULL;
  char *value = NULL;
  DWORD n = GetEnvironmentVariableW(wname, NULL, 0);
  wchar_t *wvalue = n ? (wchar_t *)malloc((size_t)n * sizeof(wchar_t)) : NULL;
  if (wvalue && GetEnvironmentVariableW(wname, wvalue, n) == n - 1)
    value = os_narrow(wvalue);
  free(wvalue);
  free(wname);
  return value;
}

static char *os_getcwd(void) {
  DWORD n = GetCurrentDirectoryW(0, NULL);
  wchar_t *wide = n ? (wchar_t *)malloc((size_t)n * sizeof(wchar_t)) : NULL;
  if (!wide || GetCurrentDirectoryW(n, wide) == 0) {
    errno = wide ? errno_of(GetLastError()) : ENOMEM;
    free(wide);
    return NULL;
  }
  char *cwd = os_narrow(wide);
  free(wide);
  return cwd;
}

static file_kind_t os_file_kind(const char *path, int *out_errno) {
  wchar_t *wide = os_wide(path);
  if (!wide) {
    *out_errno = errno;
    return KIND_NONE;
  }
  DWORD attributes = GetFileAttributesW(wide);
  DWORD code = GetLastError();
  free(wide);
  if (attributes == INVALID_FILE_ATTRIBUTES) {
    *out_errno = errno_of(code);
    return KIND_NONE;
  }
  if (attributes & FILE_ATTRIBUTE_DIRECTORY)
    return KIND_DIRECTORY;
  return (attributes & FILE_ATTRIBUTE_DEVICE) ? KIND_OTHER : KIND_FILE;
}

/* Opens an existing file (or, with `directory`, a directory) to read. */
static os_file_t os_open_existing(const char *path, bool directory) {
  wchar_t *wide = os_wide(path);
  if (!wide)
    return OS_NO_FILE;
  HANDLE h = CreateFileW(
      wide, directory ? 0 : GENERIC_READ,
      FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
      OPEN_EXISTING,
      directory ? FILE_FLAG_BACKUP_SEMANTICS : FILE_ATTRIBUTE_NORMAL, NULL);
  if (h == INVALID_HANDLE_VALUE)
    errno = errno_of(GetLastError());
  free(wide);
  return h;
}

static os_file_t os_open_read(const char *path) {
  return os_open_existing(path, false);
}

static bool os_same_file(const char *a, const char *b) {
  BY_HANDLE_FILE_INFORMATION ia, ib;
  HANDLE ha = os_open_existing(a, true);
  if (ha == INVALID_HANDLE_VALUE)
    return false;
  HANDLE hb = os_open_existing(b, true);
  bool same = hb != INVALID_HANDLE_VALUE &&
              GetFileInformationByHandle(ha, &ia) &&
              GetFileInformationByHandle(hb, &ib) &&
              ia.dwVolumeSerialNumber == ib.dwVolumeSerialNumber &&
              ia.nFileIndexHigh == ib.nFileIndexHigh &&
              ia.nFileIndexLow == ib.nFileIndexLow;
  if (hb != INVALID_HANDLE_VALUE)
    CloseHandle(hb);
  CloseHandle(ha);
  return same;
}

/* The size of an open file, and whether it is a regular file. */
static int os_file_size(os_file_t f, uint64_t *size, bool *regular) {
  LARGE_INTEGER n;
  *regular = GetFileType(f) == FILE_TYPE_DISK;
  if (!*regular) {
    *size = 0;
    return 0;
  }
  if (!GetFileSizeEx(f, &n))
    return errno_of(GetLastError());
  *size = (uint64_t)n.QuadPart;
  return 0;
}

/* Reads up to `size` bytes; the count, or -1 with errno set. */
static long long os_read(os_file_t f, void *data, size_t size) {
  DWORD got = 0;
  if (!ReadFile(f, data, size > 0x40000000u ? 0x40000000u : (DWORD)size, &got,
                NULL)) {
    errno = errno_of(GetLastError());
    return -1;
  }
  return got;
}

/* A read-only view of the whole file; NULL with errno set. The file may
 * be closed afterwards. */
static void *os_map(os_file_t f, size_t size) {
  HANDLE mapping = CreateFileMappingW(f, NULL, PAGE_READONLY, 0, 0, NULL);
  if (!mapping) {
    errno = errno_of(GetLastError());
    return NULL;
  }
  void *view = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, size);
  if (!view)
    errno = errno_of(GetLastError());
  CloseHandle(mapping); /* the view keeps the mapping */
  return view;
}

static void os_unmap(void *data, size_t size) {
  (void)size;
  UnmapViewOfFile(data);
}

static void os_close(os_file_t f) { CloseHandle(f); }

/* Creates a new file to write (failing with EEXIST if it exists). */
static os_file_t os_create_new(const char *path) {
  wchar_t *wide = os_wide(path);
  if (!wide)
    return OS_NO_FILE;
  HANDLE h = CreateFileW(wide, GENERIC_WRITE, 0, NULL, CREATE_NEW,
                         FILE_ATTRIBUTE_NORMAL, NULL);
  if (h == INVALID_HANDLE_VALUE)
    errno = errno_of(GetLastError());
  free(wide);
  return h;
}

static bool os_write_all(os_file_t f, const char *data, size_t size) {
  while (size > 0) {
    DWORD chunk = size > 0x40000000u ? 0x40000000u : (DWORD)size, put = 0;
    if (!WriteFile(f, data, chunk, &put, NULL) || put == 0) {
      errno = errno_of(GetLastError());
      return false;
    }
    data += put;
    size -= put;
  }
  return true;
}

static int os_sync_and_close(os_file_t f) {
  int e = FlushFileBuffers(f) ? 0 : errno_of(GetLastError());
  if (!CloseHandle(f) && e == 0)
    e = errno_of(GetLastError());
  return e;
}

/* Puts `from` in place of `to` in one step. */
static int os_replace(const char *from, const char *to) {
  wchar_t *wfrom = os_wide(from), *wto = wfrom ? os_wide(to) : NULL;
  int e = 0;
  if (!wfrom || !wto)
    e = errno;
  else if (!MoveFileExW(wfrom, wto,
                        MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
    e = errno_of(GetLastError());
  free(wfrom);
  free(wto);
  return e;
}

static void os_remove(const char *path) {
  wchar_t *wide = os_wide(path);
  if (wide)
    DeleteFileW(wide);
  free(wide);
}

static uint64_t os_process_id(void) { return GetCurrentProcessId(); }

/* The CRT's strerror keeps its buffer per thread. */
static const char *error_text(int e, char *scratch, size_t size) {
  (void)scratch;
  (void)size;
  return strerror(e);
}

#else /* POSIX */

typedef int os_file_t;
#define OS_NO_FILE (-1)

/* True in a process that runs with privileges its caller does not have:
 * set-user-ID or set-group-ID, or file capabilities (AT_SECURE). */
static bool os_privileged(void) {
  if (getuid() != geteuid() || getgid() != getegid())
    return true;
#if defined(__linux__)
  return getauxval(AT_SECURE) != 0;
#else
  return false;
#endif
}

static char *os_getenv(const char *name) {
  const char *value = getenv(name);
  return value ? strdup(value) : NULL;
}

static char *os_getcwd(void) { return getcwd(NULL, 0); }

static file_kind_t os_file_kind(const char *path, int *out_errno) {
  struct stat st;
  if (stat(path, &st) != 0) {
    *out_errno = errno;
    return KIND_NONE;
  }
  return S_ISREG(st.st_mode) ? KIND_FILE
         : S_ISDIR(st.st_mode) ? KIND_DIRECTORY
                               : KIND_OTHER;
}

static bool os_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

static os_file_t os_open_read(const char *path) {
  return open(path, O_RDONLY | O_CLOEXEC);
}

static int os_file_size(os_file_t f, uint64_t *size, bool *regular) {
  struct stat st;
  if (fstat(f, &st) != 0)
    return errno;
  *regular = S_ISREG(st.st_mode);
  *size = (uint64_t)st.st_size;
  return 0;
}

static long long os_read(os_file_t f, void *data, size_t size) {
  for (;;) {
    ssize_t got = read(f, data, size);
    if (got < 0 && errno == EINTR)
      continue;
    return got;
  }
}

static void *os_map(os_file_t f, size_t size) {
  /* Not MAP_POPULATE: measured slower than letting the checksum fault the
   * pages in (the kernel maps neighbouring cached pages on each fault). */
  void *mapping = mmap(NULL, size, PROT_READ, MAP_PRIVATE, f, 0);
  return mapping == MAP_FAILED ? NULL : mapping;
}

static void os_unmap(void *data, size_t size) { munmap(data, size); }

static void os_close(os_file_t f) { close(f); }

static os_file_t os_create_new(const char *path) {
  /* O_EXCL, so that concurrent writers never share one; the umask
   * applies. */
  return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
}

static bool os_write_all(os_file_t f, const char *data, size_t size) {
  while (size > 0) {
    ssize_t n = write(f, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      return false;
    }
    data += n;
    size -= (size_t)n;
  }
  return true;
}

static int os_sync_and_close(os_file_t f) {
  int e = fsync(f) == 0 ? 0 : errno;
  if (close(f) != 0 && e == 0)
    e = errno;
  return e;
}

static int os_replace(const char *from, const char *to) {
  return rename(from, to) == 0 ? 0 : errno;
}

static void os_remove(const char *path) { unlink(path); }

static uint64_t os_process_id(void) { return (uint64_t)getpid(); }

/* strerror without the shared buffer. */
static const char *error_text(int e, char *scratch, size_t size) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return strerror_r(e, scratch, size);
#else
  if (strerror_r(e, scratch, size) != 0)
    snprintf(scratch, size, "error %d", e);
  return scratch;
#endif
}

#endif /* POSIX */

/*===----------------------------------------------------------------------===*
 * Growing strings
 *===----------------------------------------------------------------------===*/

typedef struct buf_t {
  char *data;
  size_t size;
  size_t capacity;
  bool failed; /* an allocation failed; the contents are incomplete */
} buf_t;

static bool buf_reserve(buf_t *b, size_t extra) {
  if (b->failed)
    return false;
  if (b->size + extra + 1 <= b->capacity)
    return true;
  size_t capacity = b->capacity ? b->capacity : 128;
  while (capacity < b->size + extra + 1) {
    if (capacity > SIZE_MAX / 2) {
      b->failed = true;
      return false;
    }
    capacity *= 2;
  }
  char *data = (char *)realloc(b->data, capacity);
  if (!data) {
    b->failed = true;
    return false;
  }
  b->data = data;
  b->capacity = capacity;
  return true;
}

static void buf_add(buf_t *b, const char *s, size_t n) {
  if (!buf_reserve(b, n))
    return;
  memcpy(b->data + b->size, s, n);
  b->size += n;
  b->data[b->size] = '\0';
}

static void buf_str(buf_t *b, const char *s) { buf_add(b, s, strlen(s)); }

static void buf_char(buf_t *b, char c) { buf_add(b, &c, 1); }

static void buf_u64(buf_t *b, uint64_t v) {
  char digits[24];
  size_t n = 0;
  do {
    digits[sizeof(digits) - 1 - n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  buf_add(b, digits + sizeof(digits) - n, n);
}

/* 's' with control characters, quote and backslash escaped, so that a
 * hostile file name cannot forge lines in a message. On Windows the
 * backslash is the path separator and stays as it is. */
static void buf_quoted(buf_t *b, const char *s) {
  static const char hex[] = "0123456789abcdef";
  buf_char(b, '\'');
  for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
    if (*p < 0x20 || *p == 0x7f) {
      char esc[4] = {'\\', 'x', hex[*p >> 4], hex[*p & 15]};
      buf_add(b, esc, 4);
    } else if (*p == '\'' || (*p == '\\' && SEP != '\\')) {
      char esc[2] = {'\\', (char)*p};
      buf_add(b, esc, 2);
    } else {
      buf_char(b, (char)*p);
    }
  }
  buf_char(b, '\'');
}

/* For comment lines: control characters become '?'. */
static void buf_sanitized(buf_t *b, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; ++p)
    buf_char(b, (*p < 0x20 || *p == 0x7f) ? '?' : (char)*p);
}

static void buf_free(buf_t *b) {
  free(b->data);
  b->data = NULL;
  b->size = b->capacity = 0;
}

/*===----------------------------------------------------------------------===*
 * Errors
 *===----------------------------------------------------------------------===*/

struct ireepkg_runtime_error_t {
  ireepkg_runtime_status_t status;
  const char *message;
  const char *path;
  const char *hint;
};

/* Returned when not even an error can be allocated; never freed. */
static const ireepkg_runtime_error_t kOutOfMemoryError = {
    IREEPKG_RUNTIME_ERROR_OUT_OF_MEMORY, "out of memory", "", ""};

/* Reports a failure: formats the message (%s plain, %q quoted and escaped,
 * %u unsigned, %U uint64_t, %% percent) and stores an error object in
 * *out_error if the caller asked for one. Returns `status`, or
 * OUT_OF_MEMORY if the message could not be built. */
static ireepkg_runtime_status_t fail(ireepkg_runtime_error_t **out_error,
                                     ireepkg_runtime_status_t status,
                                     const char *path, const char *hint,
                                     const char *format, ...) {
  if (!out_error)
    return status;
  buf_t message = {0};
  va_list args;
  va_start(args, format);
  for (const char *f = format; *f; ++f) {
    if (*f != '%' || !f[1]) {
      buf_char(&message, *f);
      continue;
    }
    switch (*++f) {
    case 's':
      buf_str(&message, va_arg(args, const char *));
      break;
    case 'q':
      buf_quoted(&message, va_arg(args, const char *));
      break;
    case 'u':
      buf_u64(&message, va_arg(args, unsigned));
      break;
    case 'U':
      buf_u64(&message, va_arg(args, uint64_t));
      break;
    default:
      buf_char(&message, *f);
      break;
    }
  }
  va_end(args);
  if (!path)
    path = "";
  if (!hint)
    hint = "";
  size_t pathSize = strlen(path) + 1, hintSize = strlen(hint) + 1;
  ireepkg_runtime_error_t *error =
      message.failed
          ? NULL
          : (ireepkg_runtime_error_t *)malloc(sizeof(*error) + message.size +
                                              1 + pathSize + hintSize);
  if (!error) {
    buf_free(&message);
    *out_error = (ireepkg_runtime_error_t *)&kOutOfMemoryError;
    return IREEPKG_RUNTIME_ERROR_OUT_OF_MEMORY;
  }
  char *text = (char *)(error + 1);
  memcpy(text, message.data, message.size + 1);
  memcpy(text + message.size + 1, path, pathSize);
  memcpy(text + message.size + 1 + pathSize, hint, hintSize);
  error->status = status;
  error->message = text;
  error->path = text + message.size + 1;
  error->hint = text + message.size + 1 + pathSize;
  buf_free(&message);
  *out_error = error;
  return status;
}

static ireepkg_runtime_status_t out_of_memory(ireepkg_runtime_error_t **err) {
  if (err)
    *err = (ireepkg_runtime_error_t *)&kOutOfMemoryError;
  return IREEPKG_RUNTIME_ERROR_OUT_OF_MEMORY;
}

static ireepkg_runtime_status_t io_error(ireepkg_runtime_error_t **err,
                                         const char *what, const char *path,
                                         int e) {
  char scratch[128];
  return fail(err, IREEPKG_RUNTIME_ERROR_IO, path, NULL, "cannot %s %q: %s",
              what, path, error_text(e, scratch, sizeof(scratch)));
}

static ireepkg_runtime_status_t invalid(ireepkg_runtime_error_t **err,
                                        const char *what) {
  return fail(err, IREEPKG_RUNTIME_ERROR_INVALID_ARGUMENT, NULL, NULL,
              "invalid argument: %s", what);
}

IREEPKG_RUNTIME_API const char *
ireepkg_runtime_status_name(ireepkg_runtime_status_t status) {
  switch (status) {
  case IREEPKG_RUNTIME_OK:
    return "ok";
  case IREEPKG_RUNTIME_ERROR_INVALID_ARGUMENT:
    return "invalid argument";
  case IREEPKG_RUNTIME_ERROR_NO_PREFIX:
    return "no prefix";
  case IREEPKG_RUNTIME_ERROR_MISSING_INDEX:
    return "missing index";
  case IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX:
    return "corrupt index";
  case IREEPKG_RUNTIME_ERROR_NEWER_SCHEMA:
    return "newer schema";
  case IREEPKG_RUNTIME_ERROR_FILE_MISSING:
    return "file missing";
  case IREEPKG_RUNTIME_ERROR_OUT_OF_MEMORY:
    return "out of memory";
  case IREEPKG_RUNTIME_ERROR_IO:
    return "I/O error";
  }
  return "unknown status";
}

IREEPKG_RUNTIME_API ireepkg_runtime_status_t
ireepkg_runtime_error_status(const ireepkg_runtime_error_t *error) {
  return error ? error->status : IREEPKG_RUNTIME_OK;
}

IREEPKG_RUNTIME_API const char *
ireepkg_runtime_error_message(const ireepkg_runtime_error_t *error) {
  return error ? error->message : "";
}

IREEPKG_RUNTIME_API const char *
ireepkg_runtime_error_path(const ireepkg_runtime_error_t *error) {
  return error ? error->path : "";
}

IREEPKG_RUNTIME_API const char *
ireepkg_runtime_error_hint(const ireepkg_runtime_error_t *error) {
  return error ? error->hint : "";
}

IREEPKG_RUNTIME_API void
ireepkg_runtime_free_error(ireepkg_runtime_error_t *error) {
  if (error != &kOutOfMemoryError)
    free(error);
}

/*===----------------------------------------------------------------------===*
 * Version and platforms
 *===----------------------------------------------------------------------===*/

IREEPKG_RUNTIME_API const char *ireepkg_runtime_version(void) {
  return IREEPKG_RUNTIME_VERSION_STRING;
}

IREEPKG_RUNTIME_API uint32_t ireepkg_runtime_version_number(void) {
  return IREEPKG_RUNTIME_VERSION_NUMBER;
}

static const char *const kArchNames[] = {"x86_64", "aarch64", "riscv64",
                                         "riscv32", "arm"};
static const char *const kOsNames[] = {"linux", "android", "macos", "windows"};
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__ANDROID__)
#define HOST_OS "android"
#elif defined(__APPLE__)
#define HOST_OS "macos"
#elif defined(_WIN32)
#define HOST_OS "windows"
#else
#define HOST_OS "linux"
#endif
#if defined(__x86_64__) || defined(_M_X64)
#define HOST_ARCH "x86_64"
#elif defined(__aarch64__) || defined(_M_ARM64)
#define HOST_ARCH "aarch64"
#elif defined(__riscv) && __riscv_xlen == 64
#define HOST_ARCH "riscv64"
#elif defined(__riscv)
#define HOST_ARCH "riscv32"
#elif defined(__arm__)
#define HOST_ARCH "arm"
#else
#error "unsupported host architecture"
#endif

IREEPKG_RUNTIME_API const char *ireepkg_runtime_host_platform(void) {
  return HOST_OS "-" HOST_ARCH;
}

/* The table entry equal to the first `n` bytes of `s`, or NULL. */
static const char *lookup_name(const char *const *names, size_t count,
                               const char *s, size_t n) {
  for (size_t i = 0; i < count; ++i)
    if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
      return names[i];
  return NULL;
}

/*===----------------------------------------------------------------------===*
 * Paths and the environment
 *===----------------------------------------------------------------------===*/

/* A malloc'ed copy of an environment variable, or NULL; the environment
 * is ignored in privileged processes (as the Vulkan loader does). This is
 * the C++ libraries' environment policy (ireepkg/base/environment.h,
 * environmentOverride) written again: this library is C, stands alone and
 * links none of them. */
static char *trusted_getenv(const char *name) {
  if (os_privileged())
    return NULL;
  return os_getenv(name);
}

/* The absolute, lexically normal form of `path` (like the CLI's
 * std::filesystem::absolute(...).lexically_normal(), without a trailing
 * separator): relative paths are taken from the current directory, "." and
 * empty components are dropped, ".." removes the previous component, and
 * separators are the system's own (on Windows "C:/a/./b" is "C:\\a\\b").
 * Returns a malloc'ed string, or NULL with *err set. */
static char *normal_path(const char *path, ireepkg_runtime_status_t *status,
                         ireepkg_runtime_error_t **err) {
  buf_t joined = {0};
  if (root_length(path) == 0) {
    char *cwd = os_getcwd();
    if (!cwd) {
      int e = errno;
      *status = e == ENOMEM
                    ? out_of_memory(err)
                    : io_error(err, "determine", "the current directory", e);
      return NULL;
    }
    if (is_sep(path[0])) {
      /* "\\a" on Windows: the root of the current drive. */
      size_t root = root_length(cwd);
      buf_add(&joined, cwd, root > 0 ? root - 1 : 0);
    } else {
      buf_str(&joined, cwd);
      buf_char(&joined, SEP);
    }
    free(cwd);
  }
  buf_str(&joined, path);
  if (joined.failed) {
    buf_free(&joined);
    *status = out_of_memory(err);
    return NULL;
  }
  /* Normalize in place: the result is never longer than the input. */
  char *out = joined.data;
  const size_t root = root_length(joined.data);
  for (size_t i = 0; i < root; ++i)
    if (is_sep(out[i]))
      out[i] = SEP;
  size_t n = root;
  const char *p = joined.data + root;
  while (*p) {
    while (is_sep(*p))
      ++p;
    const char *start = p;
    while (*p && !is_sep(*p))
      ++p;
    size_t len = (size_t)(p - start);
    if (len == 0 || (len == 1 && start[0] == '.'))
      continue;
    if (len == 2 && start[0] == '.' && start[1] == '.') {
      while (n > root && out[n - 1] != SEP)
        --n;
      if (n > root)
        --n; /* the separator before the removed component */
      continue;
    }
    if (n > root || (n > 0 && out[n - 1] != SEP))
      out[n++] = SEP;
    memmove(out + n, start, len);
    n += len;
  }
  out[n] = '\0';
  return out;
}

static bool is_regular_file(const char *path) {
  int e;
  return os_file_kind(path, &e) == KIND_FILE;
}

/*===----------------------------------------------------------------------===*
 * Finding the prefix
 *===----------------------------------------------------------------------===*/

static const char *const kSourceNames[] = {
    "--prefix", "IREEPKG_PREFIX", "project", DATA_HOME_VARIABLE, "default"};

/* Builds the location object from malloc'ed strings (consumed). */
static ireepkg_runtime_status_t make_location(
    char *path, char *project_file, ireepkg_runtime_prefix_source_t source,
    ireepkg_runtime_prefix_location_t **out, ireepkg_runtime_error_t **err) {
  ireepkg_runtime_status_t status = IREEPKG_RUNTIME_OK;
  if (strchr(path, '\n') || strchr(path, '\r')) {
    status = fail(err, IREEPKG_RUNTIME_ERROR_INVALID_ARGUMENT, path, NULL,
                  "prefix paths may not contain a line break: %q", path);
  } else {
    size_t pathSize = strlen(path) + 1;
    size_t projectSize = project_file ? strlen(project_file) + 1 : 0;
    ireepkg_runtime_prefix_location_t *loc =
        (ireepkg_runtime_prefix_location_t *)malloc(sizeof(*loc) + pathSize +
                                                    projectSize);
    if (!loc) {
      status = out_of_memory(err);
    } else {
      char *text = (char *)(loc + 1);
      memcpy(text, path, pathSize);
      loc->path = text;
      loc->source = source;
      loc->source_name = kSourceNames[source];
      loc->project_file = NULL;
      if (project_file) {
        memcpy(text + pathSize, project_file, projectSize);
        loc->project_file = text + pathSize;
      }
      *out = loc;
    }
  }
  free(path);
  free(project_file);
  return status;
}

/* "<a><b>" normalized; NULL with *status set on failure. */
static char *normal_concat(const char *a, const char *b,
                           ireepkg_runtime_status_t *status,
                           ireepkg_runtime_error_t **err) {
  buf_t joined = {0};
  buf_str(&joined, a);
  buf_str(&joined, b);
  if (joined.failed) {
    buf_free(&joined);
    *status = out_of_memory(err);
    return NULL;
  }
  char *out = normal_path(joined.data, status, err);
  buf_free(&joined);
  return out;
}

IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_locate_prefix(
    const char *explicit_prefix, const char *start_dir,
    ireepkg_runtime_prefix_location_t **out_location,
    ireepkg_runtime_error_t **out_error) {
  if (out_error)
    *out_error = NULL;
  if (!out_location)
    return invalid(out_error, "out_location is NULL");
  *out_location = NULL;
  ireepkg_runtime_status_t status = IREEPKG_RUNTIME_OK;

  if (explicit_prefix) {
    if (!*explicit_prefix)
      return invalid(out_error, "the prefix is empty");
    char *path = normal_path(explicit_prefix, &status, out_error);
    if (!path)
      return status;
    return make_location(path, NULL, IREEPKG_RUNTIME_PREFIX_EXPLICIT,
                         out_location, out_error);
  }

  char *env = trusted_getenv("IREEPKG_PREFIX");
  if (env && *env) {
    char *path = normal_path(env, &status, out_error);
    free(env);
    if (!path)
      return status;
    return make_location(path, NULL, IREEPKG_RUNTIME_PREFIX_ENVIRONMENT,
                         out_location, out_error);
  }
  free(env);

  /* The nearest plugins.json at or above the start directory. A privileged
   * process does not take a project from the current directory its caller
   * chose (an application may still name a start directory itself). */
  if (start_dir && !*start_dir)
    return invalid(out_error, "the start directory is empty");
  if (!start_dir && os_privileged())
    goto user_prefix;
  char *dir = normal_path(start_dir ? start_dir : ".", &status, out_error);
  if (!dir)
    return status;
  buf_t candidate = {0};
  const size_t root = root_length(dir);
  for (size_t n = strlen(dir);;) {
    candidate.size = 0;
    buf_add(&candidate, dir, n);
    buf_str(&candidate, n == root ? "plugins.json" : SEP_S "plugins.json");
    if (candidate.failed)
      break;
    if (is_regular_file(candidate.data)) {
      buf_t prefix = {0};
      buf_add(&prefix, dir, n);
      buf_str(&prefix, n == root ? ".iree-plugins" : SEP_S ".iree-plugins");
      char *project = candidate.data;
      free(dir);
      if (prefix.failed) {
        buf_free(&prefix);
        buf_free(&candidate);
        return out_of_memory(out_error);
      }
      return make_location(prefix.data, project, IREEPKG_RUNTIME_PREFIX_PROJECT,
                           out_location, out_error);
    }
    if (n == root)
      break;
    while (n > root && dir[n - 1] != SEP)
      --n;
    if (n > root)
      --n; /* "/a/b" -> "/a"; "/a" -> "/" */
  }
  free(dir);
  bool failed = candidate.failed;
  buf_free(&candidate);
  if (failed)
    return out_of_memory(out_error);

user_prefix:;
  char *data = trusted_getenv(DATA_HOME_VARIABLE);
  if (data && root_length(data) > 0) {
    char *path = normal_concat(data, SEP_S "ireepkg", &status, out_error);
    free(data);
    if (!path)
      return status;
    return make_location(path, NULL, IREEPKG_RUNTIME_PREFIX_XDG_DATA_HOME,
                         out_location, out_error);
  }
  free(data);
  char *home = trusted_getenv(HOME_VARIABLE);
  if (!home || !*home) {
    free(home);
    return fail(out_error, IREEPKG_RUNTIME_ERROR_NO_PREFIX, NULL,
                "pass a prefix or set IREEPKG_PREFIX",
                "cannot choose a prefix: %s is not set (or is ignored "
                "because the process runs set-user-ID or set-group-ID)",
                HOME_VARIABLE);
  }
  char *path = normal_concat(home, HOME_DATA_DIRECTORY, &status, out_error);
  free(home);
  if (!path)
    return status;
  return make_location(path, NULL, IREEPKG_RUNTIME_PREFIX_HOME, out_location,
                       out_error);
}

IREEPKG_RUNTIME_API void ireepkg_runtime_free_prefix_location(
    ireepkg_runtime_prefix_location_t *location) {
  free(location);
}

/*===----------------------------------------------------------------------===*
 * The index handle
 *===----------------------------------------------------------------------===*/

struct ireepkg_runtime_index_t {
  _Atomic size_t references; /* the caller's, plus one per plugin list */
  void *mapping;             /* NULL for an empty prefix without an index */
  size_t mapping_size;
  const char *strings;
  uint64_t strings_size;
  const uint8_t *entries;
  uint32_t entry_size;
  uint32_t plugin_count;
  const uint8_t *refs;
  size_t total_imports; /* over all entries, to size plugin lists */
  size_t total_parameters;
  const char *prefix; /* where the prefix is now */
  const char *platform;
  const char *path;
  /* The prefix the index was written for, when the prefix has been moved
   * or copied since (prefix then differs); NULL when it has not. Library
   * paths under it are rebased onto `prefix` when listed. */
  const char *moved_from;
  char *owned_prefix; /* malloc'ed `prefix` of a moved index */
  uint16_t version_major;
  uint16_t version_minor;
  /* followed by the strings path (and prefix, platform when empty) */
};

static void index_release(ireepkg_runtime_index_t *index) {
  if (atomic_fetch_sub_explicit(&index->references, 1, memory_order_acq_rel) !=
      1)
    return;
  if (index->mapping)
    os_unmap(index->mapping, index->mapping_size);
  free(index->owned_prefix);
  free(index);
}

IREEPKG_RUNTIME_API void ireepkg_runtime_close(ireepkg_runtime_index_t *index) {
  if (index)
    index_release(index);
}

IREEPKG_RUNTIME_API const char *
ireepkg_runtime_index_prefix(const ireepkg_runtime_index_t *index) {
  return index ? index->prefix : "";
}

IREEPKG_RUNTIME_API const char *
ireepkg_runtime_index_moved_from(const ireepkg_runtime_index_t *index) {
  return index ? index->moved_from : NULL;
}

IREEPKG_RUNTIME_API const char *
ireepkg_runtime_index_platform(const ireepkg_runtime_index_t *index) {
  return index ? index->platform : "";
}

IREEPKG_RUNTIME_API const char *
ireepkg_runtime_index_path(const ireepkg_runtime_index_t *index) {
  return index ? index->path : "";
}

IREEPKG_RUNTIME_API size_t
ireepkg_runtime_index_plugin_count(const ireepkg_runtime_index_t *index) {
  return index ? index->plugin_count : 0;
}

IREEPKG_RUNTIME_API void
ireepkg_runtime_index_format_version(const ireepkg_runtime_index_t *index,
                                     uint32_t *out_major, uint32_t *out_minor) {
  if (out_major)
    *out_major = index ? index->version_major : 0;
  if (out_minor)
    *out_minor = index ? index->version_minor : 0;
}

/* A handle with room for `extra` bytes of strings after it. */
static ireepkg_runtime_index_t *index_alloc(size_t extra) {
  ireepkg_runtime_index_t *index =
      (ireepkg_runtime_index_t *)calloc(1, sizeof(*index) + extra);
  if (index)
    atomic_init(&index->references, 1);
  return index;
}

/*===----------------------------------------------------------------------===*
 * Validating a mapped index
 *===----------------------------------------------------------------------===*/

static inline uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

static ireepkg_runtime_status_t corrupt(ireepkg_runtime_error_t **err,
                                        const char *file, const char *why,
                                        uint64_t a, uint64_t b) {
  /* `why` may use %U twice, for a and b. */
  if (!err)
    return IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX;
  buf_t reason = {0};
  const uint64_t values[2] = {a, b};
  int next = 0;
  for (const char *p = why; *p; ++p) {
    if (p[0] == '%' && p[1] == 'U' && next < 2) {
      buf_u64(&reason, values[next++]);
      ++p;
    } else {
      buf_char(&reason, *p);
    }
  }
  if (reason.failed) {
    buf_free(&reason);
    return out_of_memory(err);
  }
  ireepkg_runtime_status_t status =
      fail(err, IREEPKG_RUNTIME_ERROR_CORRUPT_INDEX, file,
           "the file was damaged or cut short; reinstalling or removing a "
           "package rewrites it (`ireepkg verify` checks the whole prefix)",
           "the runtime index %q is corrupted: %s", file, reason.data);
  buf_free(&reason);
  return status;
}

/* Checks the header, size, checksum and every reference of the mapped file
 * and fills in `index`. */
static ireepkg_runtime_status_t validate_index(const uint8_t *base,
                                               uint64_t size, const char *file,
                                               ireepkg_runtime_index_t *index,
                                               ireepkg_runtime_error_t **err) {
  if (size < 12)
    return corrupt(err, file,
                   "it is %U bytes long, shorter than any index header", size,
                   0);
  if (memcmp(base, IREEPKG_INDEX_MAGIC, IREEPKG_INDEX_MAGIC_SIZE) != 0)
    return corrupt(err, file,
                   "it does not start with the runtime index magic "
                   "\"IRPKGRT\\0\"",
                   0, 0);
  const uint16_t major =
      ireepkg_index_load16(base + IREEPKG_INDEX_HEADER_FIELD(version_major));
  const uint16_t minor =
      ireepkg_index_load16(base + IREEPKG_INDEX_HEADER_FIELD(version_minor));
  if (major > IREEPKG_INDEX_VERSION_MAJOR)
    return fail(err, IREEPKG_RUNTIME_ERROR_NEWER_SCHEMA, file,
                "upgrade libireepkg_runtime (or the application that "
                "bundles it) to read this prefix",
                "the runtime index %q was written by a newer ireepkg (format "
                "%u.%u; libireepkg_runtime %s reads format %u)",
                file, (unsigned)major, (unsigned)minor,
                IREEPKG_RUNTIME_VERSION_STRING,
                (unsigned)IREEPKG_INDEX_VERSION_MAJOR);
  if (major == 0)
    return corrupt(err, file, "format version 0.%U does not exist", minor, 0);
  if (size < IREEPKG_INDEX_HEADER_SIZE_V1)
    return corrupt(err, file,
                   "it is %U bytes long, shorter than its %U-byte header", size,
                   IREEPKG_INDEX_HEADER_SIZE_V1);
#define H32(field)                                                             \
  ireepkg_index_load32(base + IREEPKG_INDEX_HEADER_FIELD(field))
#define H64(field)                                                             \
  ireepkg_index_load64(base + IREEPKG_INDEX_HEADER_FIELD(field))
  const uint32_t headerSize = H32(header_size);
  const uint64_t totalSize = H64(total_size);
  if (totalSize > size)
    return corrupt(err, file, "it is truncated: %U of %U bytes", size,
                   totalSize);
  if (totalSize < size)
    return corrupt(err, file, "it has %U bytes after its end at byte %U",
                   size - totalSize, totalSize);
  if (headerSize < IREEPKG_INDEX_HEADER_SIZE_V1 || headerSize > totalSize)
    return corrupt(err, file, "its header size %U is out of range", headerSize,
                   0);
  if (ireepkg_index_checksum(base + IREEPKG_INDEX_CHECKSUM_START,
                             totalSize - IREEPKG_INDEX_CHECKSUM_START) !=
      H64(checksum))
    return corrupt(err, file, "checksum mismatch", 0, 0);

  const uint32_t count = H32(plugin_count);
  const uint32_t entrySize = H32(entry_size);
  const uint32_t refCount = H32(ref_count);
  const uint64_t entriesOffset = H64(entries_offset);
  const uint64_t refsOffset = H64(refs_offset);
  const uint64_t stringsOffset = H64(strings_offset);
  const uint64_t stringsSize = H64(strings_size);
  if (entrySize < IREEPKG_INDEX_ENTRY_SIZE_V1)
    return corrupt(err, file, "its entry size %U is below version 1's %U",
                   entrySize, IREEPKG_INDEX_ENTRY_SIZE_V1);
  if (entriesOffset < headerSize || refsOffset < headerSize ||
      stringsOffset < headerSize)
    return corrupt(err, file, "a section starts inside the header", 0, 0);
  if (entriesOffset > totalSize ||
      (uint64_t)count * entrySize > totalSize - entriesOffset)
    return corrupt(err, file, "its %U plugin entries run past the end", count,
                   0);
  if (refsOffset > totalSize || (uint64_t)refCount * 4 > totalSize - refsOffset)
    return corrupt(err, file, "its %U string references run past the end",
                   refCount, 0);
  if (stringsOffset > totalSize || stringsSize > totalSize - stringsOffset ||
      stringsSize == 0 || stringsSize > UINT32_MAX)
    return corrupt(err, file, "its string table (%U bytes) is out of range",
                   stringsSize, 0);
  const char *strings = (const char *)base + stringsOffset;
  if (strings[stringsSize - 1] != '\0')
    return corrupt(err, file, "its string table does not end with NUL", 0, 0);
  const uint32_t prefix = H32(prefix), platform = H32(platform);
  if (prefix >= stringsSize || platform >= stringsSize)
    return corrupt(err, file, "its prefix or platform string is out of range",
                   0, 0);
#undef H32
#undef H64

  /* Every string reference: one branch-free pass (the compiler vectorizes
   * it), and a second one only to name the culprit. */
  const uint8_t *refs = base + refsOffset;
  uint32_t largestRef = 0;
  for (uint32_t i = 0; i < refCount; ++i) {
    uint32_t ref = ireepkg_index_load32(refs + 4 * (size_t)i);
    largestRef = ref > largestRef ? ref : largestRef;
  }
  if (refCount > 0 && largestRef >= stringsSize)
    for (uint32_t i = 0; i < refCount; ++i)
      if (ireepkg_index_load32(refs + 4 * (size_t)i) >= stringsSize)
        return corrupt(err, file, "string reference %U is out of range", i, 0);

  /* Every entry: its strings, its runs of references, its preselected
   * library. (That an embedded-elf path has "embedded:" before it is
   * checked when a list selects it.) */
  size_t totalImports = 0, totalParameters = 0;
  const uint8_t *entries = base + entriesOffset;
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t *e = entries + (size_t)i * entrySize;
#define E32(field) ireepkg_index_load32(e + IREEPKG_INDEX_ENTRY_FIELD(field))
    const uint64_t libFirst = E32(libraries_first),
                   libCount = E32(library_count);
    const uint64_t impFirst = E32(imports_first), impCount = E32(import_count);
    const uint64_t parFirst = E32(parameters_first),
                   parCount = E32(parameter_count);
    const uint32_t selected = E32(platform_library);
    const uint64_t largestName =
        max64(max64(E32(name), E32(package)),
              max64(E32(package_version), E32(format)));
    const uint64_t largestEnd =
        max64(max64(libFirst + libCount * IREEPKG_INDEX_LIBRARY_REFS,
                    impFirst + impCount),
              parFirst + parCount * IREEPKG_INDEX_PARAMETER_REFS);
    if (largestName >= stringsSize)
      return corrupt(err, file, "plugin entry %U names a string out of range",
                     i, 0);
    if (largestEnd > refCount)
      return corrupt(err, file,
                     "plugin entry %U refers past the string references", i, 0);
    if (selected != IREEPKG_INDEX_NO_LIBRARY && selected >= libCount)
      return corrupt(err, file,
                     "plugin entry %U selects library %U, which it does not "
                     "have",
                     i, selected);
    totalImports += impCount;
    totalParameters += parCount;
#undef E32
  }

  index->strings = strings;
  index->strings_size = stringsSize;
  index->entries = entries;
  index->entry_size = entrySize;
  index->plugin_count = count;
  index->refs = refs;
  index->total_imports = totalImports;
  index->total_parameters = totalParameters;
  index->prefix = strings + prefix;
  index->platform = strings + platform;
  index->version_major = major;
  index->version_minor = minor;
  return IREEPKG_RUNTIME_OK;
}

/*===----------------------------------------------------------------------===*
 * Opening
 *===----------------------------------------------------------------------===*/

/* Maps and validates `file`; ENOENT is reported through *missing (and
 * nothing else is done) when `missing` is not NULL. */
static ireepkg_runtime_status_t map_index(const char *file, bool *missing,
                                          ireepkg_runtime_index_t **out,
                                          ireepkg_runtime_error_t **err) {
  os_file_t fd = os_open_read(file);
  if (fd == OS_NO_FILE) {
    int e = errno;
    if ((e == ENOENT || e == ENOTDIR) && missing) {
      *missing = true;
      return IREEPKG_RUNTIME_OK;
    }
    if (e == ENOENT || e == ENOTDIR)
      return fail(err, IREEPKG_RUNTIME_ERROR_MISSING_INDEX, file, NULL,
                  "the runtime index %q does not exist", file);
    return io_error(err, "open", file, e);
  }
  uint64_t size = 0;
  bool regular = false;
  int e = os_file_size(fd, &size, &regular);
  if (e != 0) {
    os_close(fd);
    return io_error(err, "read", file, e);
  }
  if (!regular) {
    os_close(fd);
    return corrupt(err, file, "it is not a regular file", 0, 0);
  }
  if (size < IREEPKG_INDEX_HEADER_SIZE_V1 || size > SIZE_MAX) {
    /* Too short to map usefully: still say exactly what is wrong. */
    uint8_t head[IREEPKG_INDEX_HEADER_SIZE_V1];
    long long got = size <= sizeof(head) ? os_read(fd, head, (size_t)size) : -1;
    os_close(fd);
    if (got < 0 || (uint64_t)got != size)
      return corrupt(err, file, "it is %U bytes long and cannot be read", size,
                     0);
    ireepkg_runtime_index_t scratch;
    return validate_index(head, size, file, &scratch, err);
  }
  void *mapping = os_map(fd, (size_t)size);
  e = errno;
  os_close(fd);
  if (!mapping)
    return e == ENOMEM ? out_of_memory(err) : io_error(err, "map", file, e);
  size_t fileSize = strlen(file) + 1;
  ireepkg_runtime_index_t *index = index_alloc(fileSize);
  if (!index) {
    os_unmap(mapping, (size_t)size);
    return out_of_memory(err);
  }
  char *text = (char *)(index + 1);
  memcpy(text, file, fileSize);
  index->path = text;
  index->mapping = mapping;
  index->mapping_size = (size_t)size;
  ireepkg_runtime_status_t status =
      validate_index((const uint8_t *)mapping, size, file, index, err);
  if (status != IREEPKG_RUNTIME_OK) {
    index_release(index);
    return status;
  }
  *out = index;
  return IREEPKG_RUNTIME_OK;
}

/* Whether installed.json may list packages: false only when its "packages"
 * array is visibly empty. */
static bool installed_lists_packages(const char *text) {
  for (const char *p = strstr(text, "\"packages\""); p;
       p = strstr(p + 1, "\"packages\"")) {
    const char *q = p + strlen("\"packages\"");
    while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
      ++q;
    if (*q != ':')
      continue;
    ++q;
    while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
      ++q;
    if (*q != '[')
      continue;
    ++q;
    while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
      ++q;
    return *q != ']';
  }
  return true;
}

/* Reads a whole small file; NULL with errno set on failure. */
static char *read_small_file(const char *path, size_t limit) {
  os_file_t fd = os_open_read(path);
  if (fd == OS_NO_FILE)
    return NULL;
  buf_t text = {0};
  char chunk[4096];
  for (;;) {
    long long got = os_read(fd, chunk, sizeof(chunk));
    if (got < 0) {
      int e = errno;
      os_close(fd);
      buf_free(&text);
      errno = e;
      return NULL;
    }
    if (got == 0)
      break;
    buf_add(&text, chunk, (size_t)got);
    if (text.failed || text.size > limit) {
      os_close(fd);
      buf_free(&text);
      errno = text.failed ? ENOMEM : EFBIG;
      return NULL;
    }
  }
  os_close(fd);
  if (!text.data)
    buf_add(&text, "", 0);
  if (text.failed) {
    errno = ENOMEM;
    return NULL;
  }
  return text.data;
}

/* An index with no plugins for a prefix that has none installed. */
static ireepkg_runtime_status_t empty_index(const char *prefix,
                                            ireepkg_runtime_index_t **out,
                                            ireepkg_runtime_error_t **err) {
  size_t prefixSize = strlen(prefix) + 1;
  const char *host = ireepkg_runtime_host_platform();
  size_t platformSize = strlen(host) + 1;
  ireepkg_runtime_index_t *index = index_alloc(prefixSize + platformSize + 1);
  if (!index)
    return out_of_memory(err);
  char *text = (char *)(index + 1);
  memcpy(text, prefix, prefixSize);
  memcpy(text + prefixSize, host, platformSize);
  text[prefixSize + platformSize] = '\0';
  index->prefix = text;
  index->platform = text + prefixSize;
  index->path = text + prefixSize + platformSize;
  index->strings = index->path;
  index->strings_size = 1;
  index->entry_size = IREEPKG_INDEX_ENTRY_SIZE_V1;
  index->version_major = IREEPKG_INDEX_VERSION_MAJOR;
  index->version_minor = IREEPKG_INDEX_VERSION_MINOR;
  *out = index;
  return IREEPKG_RUNTIME_OK;
}

/* Whether two paths name the same existing directory (a symbolic link, a
 * bind mount): then a prefix reached through either has not moved. */
static bool same_directory(const char *a, const char *b) {
  return os_same_file(a, b);
}

/* Records where the prefix of a just mapped index is now: the first `n`
 * bytes of `location` (as opened, maybe relative). When that is not where
 * the index was written (the prefix was moved, copied, unpacked elsewhere
 * or mounted at another path), the index's paths are rebased onto it. */
static ireepkg_runtime_status_t note_location(ireepkg_runtime_index_t *index,
                                              const char *location, size_t n,
                                              ireepkg_runtime_error_t **err) {
  buf_t opened = {0};
  buf_add(&opened, location, n);
  if (n == 0)
    buf_char(&opened, SEP);
  if (opened.failed)
    return out_of_memory(err);
  ireepkg_runtime_status_t status = IREEPKG_RUNTIME_OK;
  char *now = normal_path(opened.data, &status, err);
  buf_free(&opened);
  if (!now)
    return status;
  if (strcmp(now, index->prefix) == 0 || same_directory(now, index->prefix)) {
    free(now);
    return IREEPKG_RUNTIME_OK;
  }
  index->moved_from = index->prefix;
  index->owned_prefix = now;
  index->prefix = now;
  return IREEPKG_RUNTIME_OK;
}

/* Opens <prefix>/state/runtime.index; `how` (may be NULL) says how the
 * prefix was chosen, for the NO_PREFIX message. */
static ireepkg_runtime_status_t open_prefix(const char *prefix, const char *how,
                                            ireepkg_runtime_index_t **out,
                                            ireepkg_runtime_error_t **err) {
  size_t n = strlen(prefix);
  const size_t root = root_length(prefix);
  while (n > 1 && n > root && is_sep(prefix[n - 1]))
    --n;
  buf_t state = {0}, file = {0};
  buf_add(&state, prefix, n);
  buf_str(&state, n == root && root > 0 && is_sep(prefix[n - 1]) ? "state"
                                                                 : SEP_S
                      "state");
  buf_add(&file, state.data ? state.data : "", state.size);
  buf_str(&file, SEP_S "runtime.index");
  ireepkg_runtime_status_t status = IREEPKG_RUNTIME_OK;
  if (state.failed || file.failed) {
    status = out_of_memory(err);
    goto done;
  }
  bool missing = false;
  status = map_index(file.data, &missing, out, err);
  if (status == IREEPKG_RUNTIME_OK && !missing) {
    status =
        note_location(*out, state.data, state.size - strlen("/state"), err);
    if (status != IREEPKG_RUNTIME_OK) {
      index_release(*out);
      *out = NULL;
    }
  }
  if (status != IREEPKG_RUNTIME_OK || !missing)
    goto done;

  /* No index: an empty prefix, no prefix at all, or an old one. */
  int e = 0;
  const file_kind_t kind = os_file_kind(state.data, &e);
  const int rc = kind == KIND_NONE ? -1 : 0;
  if (kind != KIND_DIRECTORY) {
    if (rc == 0)
      e = ENOTDIR;
    if (e == ENOENT || e == ENOTDIR)
      status =
          fail(err, IREEPKG_RUNTIME_ERROR_NO_PREFIX, prefix,
               "install a package into it first (ireepkg install "
               "--prefix ...), or choose another prefix",
               "no ireepkg prefix at %q%s%s%s: %q %s", prefix,
               how ? " (chosen by " : "", how ? how : "", how ? ")" : "",
               state.data, rc == 0 ? "is not a directory" : "does not exist");
    else
      status = io_error(err, "examine", state.data, e);
    goto done;
  }
  buf_t installed = {0};
  buf_add(&installed, state.data, state.size);
  buf_str(&installed, SEP_S "installed.json");
  if (installed.failed) {
    buf_free(&installed);
    status = out_of_memory(err);
    goto done;
  }
  char *text = read_small_file(installed.data, 64u << 20);
  e = errno;
  if (!text && e != ENOENT) {
    status = e == ENOMEM ? out_of_memory(err)
                         : io_error(err, "read", installed.data, e);
  } else if (!text || !installed_lists_packages(text)) {
    buf_t normal = {0};
    buf_add(&normal, prefix, n);
    status =
        normal.failed ? out_of_memory(err) : empty_index(normal.data, out, err);
    buf_free(&normal);
  } else {
    status = fail(err, IREEPKG_RUNTIME_ERROR_MISSING_INDEX, file.data,
                  "it was written by an ireepkg that predates the runtime "
                  "index, or the file was removed; installing or removing a "
                  "package rewrites it",
                  "the prefix %q has installed packages but no runtime index "
                  "%q",
                  prefix, file.data);
  }
  free(text);
  buf_free(&installed);
done:
  buf_free(&state);
  buf_free(&file);
  return status;
}

IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_open(
    const char *prefix, uint32_t flags, ireepkg_runtime_index_t **out_index,
    ireepkg_runtime_error_t **out_error) {
  if (out_error)
    *out_error = NULL;
  if (!out_index)
    return invalid(out_error, "out_index is NULL");
  *out_index = NULL;
  if (!prefix || !*prefix)
    return invalid(out_error, "the prefix is NULL or empty");
  if (flags != 0)
    return invalid(out_error, "unknown open flags");
  return open_prefix(prefix, NULL, out_index, out_error);
}

IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_open_file(
    const char *index_path, uint32_t flags, ireepkg_runtime_index_t **out_index,
    ireepkg_runtime_error_t **out_error) {
  if (out_error)
    *out_error = NULL;
  if (!out_index)
    return invalid(out_error, "out_index is NULL");
  *out_index = NULL;
  if (!index_path || !*index_path)
    return invalid(out_error, "the index path is NULL or empty");
  if (flags != 0)
    return invalid(out_error, "unknown open flags");
  ireepkg_runtime_status_t status =
      map_index(index_path, NULL, out_index, out_error);
  /* At <prefix>/state/runtime.index: that prefix is where it is now. */
  static const char kTail[] = "/state/runtime.index";
  size_t n = strlen(index_path), tail = sizeof(kTail) - 1;
  bool atPrefix = n > tail;
  for (size_t i = 0; atPrefix && i < tail; ++i)
    atPrefix = kTail[i] == '/' ? is_sep(index_path[n - tail + i])
                               : index_path[n - tail + i] == kTail[i];
  if (status == IREEPKG_RUNTIME_OK && atPrefix) {
    status = note_location(*out_index, index_path, n - tail, out_error);
    if (status != IREEPKG_RUNTIME_OK) {
      index_release(*out_index);
      *out_index = NULL;
    }
  }
  return status;
}

IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_locate_and_open(
    const char *explicit_prefix, const char *start_dir, uint32_t flags,
    ireepkg_runtime_index_t **out_index, ireepkg_runtime_error_t **out_error) {
  if (out_error)
    *out_error = NULL;
  if (!out_index)
    return invalid(out_error, "out_index is NULL");
  *out_index = NULL;
  if (flags != 0)
    return invalid(out_error, "unknown open flags");
  ireepkg_runtime_prefix_location_t *location = NULL;
  ireepkg_runtime_status_t status = ireepkg_runtime_locate_prefix(
      explicit_prefix, start_dir, &location, out_error);
  if (status != IREEPKG_RUNTIME_OK)
    return status;
  status =
      open_prefix(location->path, location->source_name, out_index, out_error);
  free(location);
  return status;
}

/*===----------------------------------------------------------------------===*
 * Listing plugins
 *===----------------------------------------------------------------------===*/

typedef struct target_t {
  const char *os;
  const char *arch;
  char platform[32];
  /* The CPU features builds are chosen for (cpu_level.h): the level or
   * features the target names (`x86_64_v3`, `linux-aarch64+sve`), else
   * the host's for the host's platform; cpu_known false: baseline only. */
  uint64_t cpu;
  bool cpu_known;
} target_t;

static ireepkg_runtime_status_t
resolve_target_base(const ireepkg_runtime_index_t *index, const char *target,
                    target_t *out, ireepkg_runtime_error_t **err);

/* A target may end in a CPU level or features (`linux-x86_64_v3`,
 * `x86_64+avx512f`, `x86_64_v1` for the baseline): the runtime builds are
 * then chosen for that CPU instead of the host's. */
static ireepkg_runtime_status_t
resolve_target(const ireepkg_runtime_index_t *index, const char *target,
               target_t *out, ireepkg_runtime_error_t **err) {
  char base[64];
  ireepkg_cpu_key_t level = {0, 0, 0, IREEPKG_CPU_KEY_OK, NULL, 0};
  if (target && strcmp(target, "host") != 0) {
    level = ireepkg_cpu_parse_key(target, strlen(target), true);
    if (level.problem == IREEPKG_CPU_KEY_OK && level.base_size < sizeof(base)) {
      memcpy(base, target, level.base_size);
      base[level.base_size] = '\0';
      target = base;
    }
  }
  ireepkg_runtime_status_t status =
      resolve_target_base(index, target, out, err);
  if (status != IREEPKG_RUNTIME_OK)
    return status;
  if (target == base) {
    out->cpu = level.required;
    out->cpu_known = level.level != 0 || level.required != 0;
  }
  if (!out->cpu_known && strcmp(out->arch, HOST_ARCH) == 0 &&
      strcmp(out->os, HOST_OS) == 0) {
    out->cpu = ireepkg_cpu_host_features();
    out->cpu_known = true;
  }
  return IREEPKG_RUNTIME_OK;
}

static ireepkg_runtime_status_t
resolve_target_base(const ireepkg_runtime_index_t *index, const char *target,
                    target_t *out, ireepkg_runtime_error_t **err) {
  out->cpu = 0;
  out->cpu_known = false;
  if (!target || strcmp(target, "host") == 0) {
    out->os = HOST_OS;
    out->arch = HOST_ARCH;
  } else {
    const char *dash = strchr(target, '-');
    if (dash) {
      out->os = lookup_name(kOsNames, COUNT_OF(kOsNames), target,
                            (size_t)(dash - target));
      out->arch = lookup_name(kArchNames, COUNT_OF(kArchNames), dash + 1,
                              strlen(dash + 1));
    } else {
      out->arch =
          lookup_name(kArchNames, COUNT_OF(kArchNames), target, strlen(target));
      /* A bare architecture is on the prefix's operating system. */
      const char *p = index->platform;
      const char *pdash = strchr(p, '-');
      out->os = pdash ? lookup_name(kOsNames, COUNT_OF(kOsNames), p,
                                    (size_t)(pdash - p))
                      : NULL;
      if (!out->os)
        out->os = HOST_OS;
    }
    if (!out->os || !out->arch)
      return fail(err, IREEPKG_RUNTIME_ERROR_INVALID_ARGUMENT, NULL,
                  "architectures: x86_64, aarch64, riscv64, riscv32, arm; "
                  "operating systems: linux, android, macos, windows",
                  "invalid argument: unknown target %q (expected \"host\", "
                  "an architecture such as \"x86_64\" or a platform such as "
                  "\"linux-aarch64\")",
                  target);
  }
  snprintf(out->platform, sizeof(out->platform), "%s-%s", out->os, out->arch);
  return IREEPKG_RUNTIME_OK;
}

typedef struct list_block_t {
  ireepkg_runtime_plugin_list_t list; /* first: the pointer handed out */
  ireepkg_runtime_index_t *index;
  char *rebased; /* the paths and specs of a moved prefix, or NULL */
} list_block_t;

/* The paths of a moved prefix's plugins, which the index stores under the
 * prefix it was written for, rebased onto where it is now: one allocation
 * for all of them, owned by the list. */
static ireepkg_runtime_status_t rebase_paths(list_block_t *block,
                                             ireepkg_runtime_plugin_t *plugins,
                                             size_t count,
                                             ireepkg_runtime_error_t **err) {
  const ireepkg_runtime_index_t *index = block->index;
  const size_t oldSize = strlen(index->moved_from);
  const size_t newSize = strlen(index->prefix);
  size_t bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    const char *path = plugins[i].path;
    if (strncmp(path, index->moved_from, oldSize) == 0 && path[oldSize] == '/')
      bytes += IREEPKG_INDEX_EMBEDDED_PREFIX_SIZE + newSize +
               strlen(path + oldSize) + 1;
  }
  if (bytes == 0)
    return IREEPKG_RUNTIME_OK;
  char *out = (char *)malloc(bytes);
  if (!out)
    return out_of_memory(err);
  block->rebased = out;
  for (size_t i = 0; i < count; ++i) {
    ireepkg_runtime_plugin_t *p = &plugins[i];
    if (!(strncmp(p->path, index->moved_from, oldSize) == 0 &&
          p->path[oldSize] == '/'))
      continue;
    const bool embedded = p->spec != p->path;
    char *spec = out;
    if (embedded) {
      memcpy(out, IREEPKG_INDEX_EMBEDDED_PREFIX,
             IREEPKG_INDEX_EMBEDDED_PREFIX_SIZE);
      out += IREEPKG_INDEX_EMBEDDED_PREFIX_SIZE;
    }
    const char *rest = p->path + oldSize;
    size_t restSize = strlen(rest) + 1;
    memcpy(out, index->prefix, newSize);
    memcpy(out + newSize, rest, restSize);
    /* The index's separators are those of the system that wrote it. */
    for (char *c = out + newSize; *c; ++c)
      if (is_sep(*c))
        *c = SEP;
    p->path = out;
    p->spec = spec;
    out += newSize + restSize;
  }
  return IREEPKG_RUNTIME_OK;
}

static inline const char *str_at(const ireepkg_runtime_index_t *index,
                                 uint32_t offset) {
  return index->strings + offset;
}

static inline uint32_t ref_at(const ireepkg_runtime_index_t *index,
                              uint64_t i) {
  return ireepkg_index_load32(index->refs + 4 * i);
}

/* The build of a plugin for the target's CPU: the library whose key is
 * `want` with the most required features the CPU has (cpu_level.h; ties:
 * the first, which the writer orders by preference), else `selected` (the
 * plain key's). */
static uint32_t choose_cpu_build(const ireepkg_runtime_index_t *index,
                                 uint32_t first, uint32_t count,
                                 const char *want, const target_t *t,
                                 uint32_t selected) {
  if (!t->cpu_known)
    return selected;
  int best = 0;
  for (uint32_t l = 0; l < count; ++l) {
    const int rank = ireepkg_cpu_key_rank(
        str_at(index,
               ref_at(index, first + (uint64_t)l * IREEPKG_INDEX_LIBRARY_REFS)),
        want, t->cpu);
    if (rank > best) {
      best = rank;
      selected = l;
    }
  }
  return selected;
}

static ireepkg_runtime_status_t
check_files(const ireepkg_runtime_plugin_list_t *list,
            ireepkg_runtime_error_t **err) {
  for (size_t i = 0; i < list->count; ++i) {
    const ireepkg_runtime_plugin_t *p = &list->plugins[i];
    int e = 0;
    const file_kind_t kind = os_file_kind(p->path, &e);
    if (kind == KIND_FILE)
      continue;
    bool exists = kind != KIND_NONE;
    if (!exists && e != ENOENT && e != ENOTDIR)
      return io_error(err, "examine", p->path, e);
    return fail(err, IREEPKG_RUNTIME_ERROR_FILE_MISSING, p->path,
                "the prefix was damaged or moved after the index was "
                "written; `ireepkg verify` checks it",
                "runtime plugin %q of %s %s: %q %s", p->name, p->package,
                p->package_version, p->path,
                exists ? "is not a regular file" : "does not exist");
  }
  return IREEPKG_RUNTIME_OK;
}

IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_list_plugins(
    const ireepkg_runtime_index_t *index, const char *target, uint32_t flags,
    ireepkg_runtime_plugin_list_t **out_list,
    ireepkg_runtime_error_t **out_error) {
  if (out_error)
    *out_error = NULL;
  if (!out_list)
    return invalid(out_error, "out_list is NULL");
  *out_list = NULL;
  if (!index)
    return invalid(out_error, "index is NULL");
  if (flags & ~IREEPKG_RUNTIME_LIST_CHECK_FILES)
    return invalid(out_error, "unknown list flags");
  target_t t;
  ireepkg_runtime_status_t status =
      resolve_target(index, target, &t, out_error);
  if (status != IREEPKG_RUNTIME_OK)
    return status;

  /* One allocation: the list, its plugins, their import pointers and
   * parameters, and the target names. */
  const size_t count = index->plugin_count;
  const size_t platformSize = strlen(t.platform) + 1;
  const size_t archSize = strlen(t.arch) + 1;
  const size_t bytes =
      sizeof(list_block_t) + count * sizeof(ireepkg_runtime_plugin_t) +
      index->total_imports * sizeof(const char *) +
      index->total_parameters * sizeof(ireepkg_runtime_parameter_t) +
      platformSize + archSize;
  list_block_t *block = (list_block_t *)malloc(bytes);
  if (!block)
    return out_of_memory(out_error);
  ireepkg_runtime_plugin_t *slots = (ireepkg_runtime_plugin_t *)(block + 1);
  const char **imports = (const char **)(slots + count);
  ireepkg_runtime_parameter_t *parameters =
      (ireepkg_runtime_parameter_t *)(imports + index->total_imports);
  char *names = (char *)(parameters + index->total_parameters);
  memcpy(names, t.platform, platformSize);
  memcpy(names + platformSize, t.arch, archSize);

  /* The writer already selected the library for the index's own platform;
   * other targets compare library keys. */
  const bool preselected = strcmp(t.platform, index->platform) == 0;
  size_t front = 0, back = count; /* plugins grow up, skipped grow down */
  for (size_t i = 0; i < count; ++i) {
    const uint8_t *e = index->entries + i * index->entry_size;
#define E32(field) ireepkg_index_load32(e + IREEPKG_INDEX_ENTRY_FIELD(field))
    const uint32_t kind = E32(format_kind);
    const uint32_t libFirst = E32(libraries_first);
    const uint32_t libCount = E32(library_count);
    uint32_t selected = IREEPKG_INDEX_NO_LIBRARY;
    ireepkg_runtime_skip_reason_t skip = IREEPKG_RUNTIME_SKIP_NONE;
    if (kind != IREEPKG_INDEX_FORMAT_EMBEDDED_ELF &&
        kind != IREEPKG_INDEX_FORMAT_SYSTEM_LIBRARY) {
      skip = IREEPKG_RUNTIME_SKIP_UNKNOWN_FORMAT;
    } else if (preselected) {
      selected = E32(platform_library);
    } else {
      const char *want =
          kind == IREEPKG_INDEX_FORMAT_EMBEDDED_ELF ? t.arch : t.platform;
      uint32_t fat = IREEPKG_INDEX_NO_LIBRARY;
      for (uint32_t l = 0; l < libCount; ++l) {
        const char *key = str_at(
            index,
            ref_at(index, libFirst + (uint64_t)l * IREEPKG_INDEX_LIBRARY_REFS));
        if (strcmp(key, want) == 0) {
          selected = l;
          break;
        }
        /* Only 1.0 writers stored "fat" (not knowing the file's
         * architectures); later ones list it under each architecture. */
        if (fat == IREEPKG_INDEX_NO_LIBRARY && index->version_minor == 0 &&
            index->version_major == 1 &&
            kind == IREEPKG_INDEX_FORMAT_EMBEDDED_ELF &&
            strcmp(key, "fat") == 0)
          fat = l;
      }
      if (selected == IREEPKG_INDEX_NO_LIBRARY)
        selected = fat;
    }
    if (skip == IREEPKG_RUNTIME_SKIP_NONE &&
        kind == IREEPKG_INDEX_FORMAT_EMBEDDED_ELF &&
        ireepkg_platform_fact_stopping(t.os, strlen(t.os), "embedded-elf"))
      skip = IREEPKG_RUNTIME_SKIP_TARGET_CANNOT_CALL;
    if (skip == IREEPKG_RUNTIME_SKIP_NONE)
      selected = choose_cpu_build(
          index, libFirst, libCount,
          kind == IREEPKG_INDEX_FORMAT_EMBEDDED_ELF ? t.arch : t.platform, &t,
          selected);
    if (skip == IREEPKG_RUNTIME_SKIP_NONE &&
        selected == IREEPKG_INDEX_NO_LIBRARY)
      skip = IREEPKG_RUNTIME_SKIP_NO_BUILD;

    ireepkg_runtime_plugin_t *p =
        skip == IREEPKG_RUNTIME_SKIP_NONE ? &slots[front++] : &slots[--back];
    p->name = str_at(index, E32(name));
    p->package = str_at(index, E32(package));
    p->package_version = str_at(index, E32(package_version));
    p->format = str_at(index, E32(format));
    p->format_kind =
        (ireepkg_runtime_format_t)(skip == IREEPKG_RUNTIME_SKIP_UNKNOWN_FORMAT
                                       ? 0
                                       : kind);
    p->skip_reason = skip;
    if (skip == IREEPKG_RUNTIME_SKIP_NONE) {
      const uint64_t rec =
          libFirst + (uint64_t)selected * IREEPKG_INDEX_LIBRARY_REFS;
      const uint32_t path = ref_at(index, rec + 1);
      p->library_key = str_at(index, ref_at(index, rec));
      p->path = str_at(index, path);
      p->spec = p->path;
      if (kind == IREEPKG_INDEX_FORMAT_EMBEDDED_ELF) {
        if (path < IREEPKG_INDEX_EMBEDDED_PREFIX_SIZE) {
          free(block);
          return corrupt(out_error, index->path,
                         "plugin entry %U has an embedded-elf path without "
                         "room for \"embedded:\" before it",
                         i, 0);
        }
        p->spec -= IREEPKG_INDEX_EMBEDDED_PREFIX_SIZE;
      }
    } else {
      p->library_key = p->path = p->spec = NULL;
    }
    const uint32_t impFirst = E32(imports_first);
    p->import_count = E32(import_count);
    p->imports = imports;
    for (size_t k = 0; k < p->import_count; ++k)
      *imports++ = str_at(index, ref_at(index, impFirst + (uint64_t)k));
    const uint32_t parFirst = E32(parameters_first);
    p->parameter_count = E32(parameter_count);
    p->parameters = parameters;
    for (size_t k = 0; k < p->parameter_count; ++k, ++parameters) {
      const uint64_t rec =
          parFirst + (uint64_t)k * IREEPKG_INDEX_PARAMETER_REFS;
      parameters->key = str_at(index, ref_at(index, rec));
      parameters->value = str_at(index, ref_at(index, rec + 1));
    }
#undef E32
  }
  /* Skipped plugins were placed from the end: restore activation order. */
  for (size_t a = back, b = count; a + 1 < b; ++a, --b) {
    ireepkg_runtime_plugin_t tmp = slots[a];
    slots[a] = slots[b - 1];
    slots[b - 1] = tmp;
  }

  block->index = (ireepkg_runtime_index_t *)index;
  block->rebased = NULL;
  if (index->moved_from) {
    status = rebase_paths(block, slots, front, out_error);
    if (status != IREEPKG_RUNTIME_OK) {
      free(block);
      return status;
    }
  }
  block->list.prefix = index->prefix;
  block->list.target_platform = names;
  block->list.target_arch = names + platformSize;
  block->list.count = front;
  block->list.plugins = slots;
  block->list.skipped_count = count - back;
  block->list.skipped = slots + back;

  if (flags & IREEPKG_RUNTIME_LIST_CHECK_FILES) {
    status = check_files(&block->list, out_error);
    if (status != IREEPKG_RUNTIME_OK) {
      free(block->rebased);
      free(block);
      return status;
    }
  }
  atomic_fetch_add_explicit(&block->index->references, 1, memory_order_relaxed);
  *out_list = &block->list;
  return IREEPKG_RUNTIME_OK;
}

IREEPKG_RUNTIME_API void
ireepkg_runtime_free_plugin_list(ireepkg_runtime_plugin_list_t *list) {
  if (!list)
    return;
  list_block_t *block = (list_block_t *)list;
  ireepkg_runtime_index_t *index = block->index;
  free(block->rebased);
  free(block);
  index_release(index);
}

/*===----------------------------------------------------------------------===*
 * IREE flags
 *===----------------------------------------------------------------------===*/

#define FLAG_PREFIX "--executable_plugin="

static ireepkg_runtime_status_t
check_list(const ireepkg_runtime_plugin_list_t *list,
           ireepkg_runtime_error_t **err) {
  if (!list)
    return invalid(err, "list is NULL");
  return IREEPKG_RUNTIME_OK;
}

/* The FLAGFILE text; `file` (may be NULL) is named in the usage line. */
static ireepkg_runtime_status_t
build_flags(const ireepkg_runtime_plugin_list_t *list,
            ireepkg_runtime_flag_style_t style, const char *file, buf_t *out,
            ireepkg_runtime_error_t **err) {
  if (style == IREEPKG_RUNTIME_FLAGS_FLAGFILE) {
    buf_str(out, "# IREE runtime flags for the ireepkg prefix ");
    buf_sanitized(out, list->prefix);
    buf_str(out, ", target ");
    buf_str(out, list->target_platform);
    buf_str(
        out,
        "\n# Generated by libireepkg_runtime " IREEPKG_RUNTIME_VERSION_STRING
        " in activation order; do not edit.\n# Use: iree-run-module "
        "--flagfile=");
    buf_sanitized(out, file ? file : "<this file>");
    buf_str(out, " ...\n");
    for (size_t i = 0; i < list->skipped_count; ++i) {
      const ireepkg_runtime_plugin_t *p = &list->skipped[i];
      buf_str(out, "# Not activated: ");
      buf_sanitized(out, p->package);
      buf_char(out, ' ');
      buf_sanitized(out, p->package_version);
      buf_str(out, " plugin ");
      buf_sanitized(out, p->name);
      const ireepkg_platform_fact_t *fact =
          p->skip_reason == IREEPKG_RUNTIME_SKIP_TARGET_CANNOT_CALL
              ? ireepkg_platform_fact_stopping(
                    list->target_platform, strcspn(list->target_platform, "-"),
                    p->format)
              : NULL;
      if (p->skip_reason == IREEPKG_RUNTIME_SKIP_NO_BUILD) {
        buf_str(out, " (no build for ");
        buf_str(out, list->target_platform);
      } else if (fact) {
        buf_str(out, " (on ");
        buf_str(out, fact->os);
        buf_str(out, ", ");
        buf_str(out, fact->fact);
        buf_str(out, ": ");
        buf_str(out, fact->upstream);
      } else {
        buf_str(out, " (format ");
        buf_sanitized(out, p->format);
        buf_str(out, " is not supported by "
                     "libireepkg_runtime " IREEPKG_RUNTIME_VERSION_STRING);
      }
      buf_str(out, ")\n");
    }
  }
  for (size_t i = 0; i < list->count; ++i) {
    const ireepkg_runtime_plugin_t *p = &list->plugins[i];
    if (style != IREEPKG_RUNTIME_FLAGS_NUL &&
        (strchr(p->spec, '\n') || strchr(p->spec, '\r')))
      return fail(err, IREEPKG_RUNTIME_ERROR_INVALID_ARGUMENT, p->path,
                  "use the NUL-separated or argv form",
                  "invalid argument: the path %q of runtime plugin %q "
                  "contains a line break, which a flag line cannot hold",
                  p->path, p->name);
    buf_str(out, FLAG_PREFIX);
    buf_str(out, p->spec);
    if (style == IREEPKG_RUNTIME_FLAGS_NUL)
      buf_add(out, "", 1);
    else
      buf_char(out, '\n');
  }
  if (!out->data)
    buf_add(out, "", 0);
  return out->failed ? out_of_memory(err) : IREEPKG_RUNTIME_OK;
}

IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_format_flags(
    const ireepkg_runtime_plugin_list_t *list,
    ireepkg_runtime_flag_style_t style, char **out_text, size_t *out_size,
    ireepkg_runtime_error_t **out_error) {
  if (out_error)
    *out_error = NULL;
  if (out_size)
    *out_size = 0;
  if (!out_text)
    return invalid(out_error, "out_text is NULL");
  *out_text = NULL;
  ireepkg_runtime_status_t status = check_list(list, out_error);
  if (status != IREEPKG_RUNTIME_OK)
    return status;
  if (style != IREEPKG_RUNTIME_FLAGS_LINES &&
      style != IREEPKG_RUNTIME_FLAGS_FLAGFILE &&
      style != IREEPKG_RUNTIME_FLAGS_NUL)
    return invalid(out_error, "unknown flag style");
  buf_t text = {0};
  status = build_flags(list, style, NULL, &text, out_error);
  if (status != IREEPKG_RUNTIME_OK) {
    buf_free(&text);
    return status;
  }
  *out_text = text.data;
  if (out_size)
    *out_size = text.size;
  return IREEPKG_RUNTIME_OK;
}

IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_flag_argv(
    const ireepkg_runtime_plugin_list_t *list, char ***out_argv,
    size_t *out_argc, ireepkg_runtime_error_t **out_error) {
  if (out_error)
    *out_error = NULL;
  if (out_argc)
    *out_argc = 0;
  if (!out_argv)
    return invalid(out_error, "out_argv is NULL");
  *out_argv = NULL;
  ireepkg_runtime_status_t status = check_list(list, out_error);
  if (status != IREEPKG_RUNTIME_OK)
    return status;
  size_t bytes = (list->count + 1) * sizeof(char *);
  for (size_t i = 0; i < list->count; ++i)
    bytes += strlen(FLAG_PREFIX) + strlen(list->plugins[i].spec) + 1;
  char **argv = (char **)malloc(bytes);
  if (!argv)
    return out_of_memory(out_error);
  char *text = (char *)(argv + list->count + 1);
  for (size_t i = 0; i < list->count; ++i) {
    argv[i] = text;
    size_t n = strlen(FLAG_PREFIX);
    memcpy(text, FLAG_PREFIX, n);
    text += n;
    n = strlen(list->plugins[i].spec) + 1;
    memcpy(text, list->plugins[i].spec, n);
    text += n;
  }
  argv[list->count] = NULL;
  *out_argv = argv;
  if (out_argc)
    *out_argc = list->count;
  return IREEPKG_RUNTIME_OK;
}

IREEPKG_RUNTIME_API ireepkg_runtime_status_t ireepkg_runtime_write_flagfile(
    const ireepkg_runtime_plugin_list_t *list, const char *path,
    ireepkg_runtime_error_t **out_error) {
  if (out_error)
    *out_error = NULL;
  ireepkg_runtime_status_t status = check_list(list, out_error);
  if (status != IREEPKG_RUNTIME_OK)
    return status;
  if (!path || !*path)
    return invalid(out_error, "the flagfile path is NULL or empty");
  buf_t text = {0}, temp = {0};
  status =
      build_flags(list, IREEPKG_RUNTIME_FLAGS_FLAGFILE, path, &text, out_error);
  if (status != IREEPKG_RUNTIME_OK)
    goto done;
  /* A new temporary name beside the target, so that concurrent writers
   * never share one, then put in its place in one step. */
  os_file_t fd = OS_NO_FILE;
  for (unsigned attempt = 0; fd == OS_NO_FILE; ++attempt) {
    temp.size = 0;
    buf_str(&temp, path);
    buf_str(&temp, ".tmp.");
    buf_u64(&temp, os_process_id());
    buf_char(&temp, '.');
    buf_u64(&temp, attempt);
    if (temp.failed) {
      status = out_of_memory(out_error);
      goto done;
    }
    fd = os_create_new(temp.data);
    if (fd == OS_NO_FILE && (errno != EEXIST || attempt > 1000)) {
      status = io_error(out_error, "create", temp.data, errno);
      goto done;
    }
  }
  bool written = os_write_all(fd, text.data, text.size);
  int e = errno;
  if (!written)
    os_close(fd);
  else if ((e = os_sync_and_close(fd)) != 0)
    written = false;
  if (!written) {
    os_remove(temp.data);
    status = io_error(out_error, "write", temp.data, e);
    goto done;
  }
  if ((e = os_replace(temp.data, path)) != 0) {
    os_remove(temp.data);
    status = io_error(out_error, "replace", path, e);
    goto done;
  }
done:
  buf_free(&text);
  buf_free(&temp);
  return status;
}

/* Not exported (see prefix_flagfile.h): the index is the caller's bytes,
 * validated as a mapped file is, and never unmapped. */
ireepkg_runtime_status_t ireepkg_runtime_flagfile_of_index(
    const void *data, size_t size, const char *index_path, const char *target,
    const char *file, char **out_text, size_t *out_size,
    ireepkg_runtime_plugin_list_t **out_list,
    ireepkg_runtime_error_t **out_error) {
  if (out_error)
    *out_error = NULL;
  if (out_size)
    *out_size = 0;
  if (out_list)
    *out_list = NULL;
  if (!out_text)
    return invalid(out_error, "out_text is NULL");
  *out_text = NULL;
  if (!data || !index_path || !file)
    return invalid(out_error, "the index, its path or the file is NULL");
  size_t pathSize = strlen(index_path) + 1;
  ireepkg_runtime_index_t *index = index_alloc(pathSize);
  if (!index)
    return out_of_memory(out_error);
  char *text = (char *)(index + 1);
  memcpy(text, index_path, pathSize);
  index->path = text;
  ireepkg_runtime_status_t status = validate_index(
      (const uint8_t *)data, (uint64_t)size, index_path, index, out_error);
  ireepkg_runtime_plugin_list_t *list = NULL;
  if (status == IREEPKG_RUNTIME_OK)
    status = ireepkg_runtime_list_plugins(index, target, 0, &list, out_error);
  buf_t flags = {0};
  if (status == IREEPKG_RUNTIME_OK)
    status = build_flags(list, IREEPKG_RUNTIME_FLAGS_FLAGFILE, file, &flags,
                         out_error);
  if (status == IREEPKG_RUNTIME_OK && out_list) {
    *out_list = list; /* holds its own reference to the index */
    list = NULL;
  }
  ireepkg_runtime_free_plugin_list(list);
  index_release(index);
  if (status != IREEPKG_RUNTIME_OK) {
    buf_free(&flags);
    return status;
  }
  *out_text = flags.data;
  if (out_size)
    *out_size = flags.size;
  return IREEPKG_RUNTIME_OK;
}

IREEPKG_RUNTIME_API void ireepkg_runtime_free_string(char *text) { free(text); }

IREEPKG_RUNTIME_API void ireepkg_runtime_free_argv(char **argv) { free(argv); }
