#include "build.h"

#include "arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Chunks grow from small to ARENA_CHUNK: a state record needs well under 1 KiB, and `list`
 * holds hundreds of them, while a config takes a few of the largest. */
#define ARENA_FIRST_CHUNK 512
#define ARENA_CHUNK (16 * 1024)

struct sr_arena_chunk {
  struct sr_arena_chunk *next;
  size_t used, size;
  max_align_t data[];
};

void *sr_arena_alloc(struct sr_arena *a, size_t size)
{
  size_t align = _Alignof(max_align_t);
  size = (size + align - 1) & ~(align - 1);
  if (size == 0)
    size = align;
  struct sr_arena_chunk *c = a->head;
  if (c == NULL || c->size - c->used < size) {
    size_t cap = c == NULL ? ARENA_FIRST_CHUNK : c->size < ARENA_CHUNK ? 2 * c->size : ARENA_CHUNK;
    if (cap < size)
      cap = size;
    if (cap > SIZE_MAX - sizeof(*c))
      return NULL;
    c = malloc(sizeof(*c) + cap);
    if (c == NULL)
      return NULL;
    c->used = 0;
    c->size = cap;
    c->next = a->head;
    a->head = c;
  }
  void *p = (char *)c->data + c->used;
  c->used += size;
  memset(p, 0, size);
  return p;
}

void *sr_arena_array(struct sr_arena *a, size_t n, size_t size)
{
  if (size != 0 && n > SIZE_MAX / size)
    return NULL;
  return sr_arena_alloc(a, n * size);
}

char *sr_arena_strndup(struct sr_arena *a, const char *s, size_t n)
{
  char *p = sr_arena_alloc(a, n + 1);
  if (p) {
    memcpy(p, s, n);
    p[n] = '\0';
  }
  return p;
}

char *sr_arena_strdup(struct sr_arena *a, const char *s)
{
  return s ? sr_arena_strndup(a, s, strlen(s)) : NULL;
}

char *sr_arena_printf(struct sr_arena *a, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    return NULL;
  char *p = sr_arena_alloc(a, (size_t)n + 1);
  if (p == NULL)
    return NULL;
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

void sr_arena_release(struct sr_arena *a)
{
  struct sr_arena_chunk *c = a->head;
  while (c) {
    struct sr_arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  a->head = NULL;
}
