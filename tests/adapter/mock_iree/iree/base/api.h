/* A stand-in for the few declarations of IREE's runtime API that
 * ireepkg/iree_runtime_adapter.h uses, written for this test from IREE's
 * documented API shape. It records every call so the test can check what
 * the adapter asks IREE to do, in which order. Not IREE's code. */
#ifndef MOCK_IREE_BASE_API_H
#define MOCK_IREE_BASE_API_H
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef size_t iree_host_size_t;
typedef enum {
  IREE_STATUS_OK = 0, IREE_STATUS_UNKNOWN = 2, IREE_STATUS_INVALID_ARGUMENT = 3,
  IREE_STATUS_NOT_FOUND = 5, IREE_STATUS_RESOURCE_EXHAUSTED = 8,
  IREE_STATUS_UNIMPLEMENTED = 12, IREE_STATUS_DATA_LOSS = 15,
} iree_status_code_t;
typedef struct mock_status { iree_status_code_t code; char message[1024]; } *iree_status_t;

static inline iree_status_t iree_ok_status(void) { return NULL; }
static inline int iree_status_is_ok(iree_status_t s) { return s == NULL; }
#define iree_make_status(code, ...)                                            \
  mock_make_status((code), __VA_ARGS__)
static inline iree_status_t mock_make_status(iree_status_code_t code,
                                             const char *fmt, ...);
#include <stdarg.h>
static inline iree_status_t mock_make_status(iree_status_code_t code,
                                             const char *fmt, ...) {
  iree_status_t s = (iree_status_t)calloc(1, sizeof(*s));
  s->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->message, sizeof s->message, fmt, ap);
  va_end(ap);
  return s;
}
static inline iree_status_t iree_status_annotate_f(iree_status_t s,
                                                   const char *fmt, ...) {
  size_t n = strlen(s->message);
  va_list ap;
  va_start(ap, fmt);
  snprintf(s->message + n, sizeof s->message - n, "; ");
  vsnprintf(s->message + n + 2, sizeof s->message - n - 2, fmt, ap);
  va_end(ap);
  return s;
}
#define IREE_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    iree_status_t _s = (expr);                                                 \
    if (_s) return _s;                                                         \
  } while (0)

typedef struct { void *self; } iree_allocator_t;
static inline iree_status_t iree_allocator_malloc(iree_allocator_t a, size_t n,
                                                  void **out) {
  (void)a;
  *out = malloc(n);
  return iree_ok_status();
}
static inline void iree_allocator_free(iree_allocator_t a, void *p) {
  (void)a;
  free(p);
}
typedef struct { const char *data; size_t size; } iree_string_view_t;
typedef struct { iree_string_view_t key; iree_string_view_t value; } iree_string_pair_t;
static inline iree_string_view_t iree_make_cstring_view(const char *s) {
  iree_string_view_t v = {s, strlen(s)};
  return v;
}
static inline iree_string_pair_t iree_make_string_pair(iree_string_view_t k,
                                                       iree_string_view_t v) {
  iree_string_pair_t p = {k, v};
  return p;
}

/* The call log: one line per call. */
extern FILE *mock_log;
#endif
