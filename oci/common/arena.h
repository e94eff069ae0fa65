/* A bump allocator: the parsed config and everything derived from it (the policy's output
 * included) live in one arena and are released together. */
#ifndef SEERUN_ARENA_H
#define SEERUN_ARENA_H

#include <stddef.h>

struct sr_arena_chunk;
struct sr_arena {
  struct sr_arena_chunk *head;
};

/* Zeroed memory, or NULL when out of memory. */
void *sr_arena_alloc(struct sr_arena *a, size_t size);
/* n elements of size bytes each; NULL on overflow or out of memory. */
void *sr_arena_array(struct sr_arena *a, size_t n, size_t size);
char *sr_arena_strdup(struct sr_arena *a, const char *s);
char *sr_arena_strndup(struct sr_arena *a, const char *s, size_t n);
char *sr_arena_printf(struct sr_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sr_arena_release(struct sr_arena *a);

#endif
