/* Typed access to parsed JSON (yajl trees) with errors that name the field.
 *
 * Every getter takes the path of the object it reads from ("linux.seccomp") and the key, so an
 * error reads "linux.seccomp.defaultAction: must be a string".  JSON null counts as absent, as
 * in the Go runtimes.  Unknown keys are ignored (the OCI spec requires it); wrong types never are.
 */
#ifndef SEERUN_JSON_H
#define SEERUN_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "arena.h"
#include "error.h"

/* Documents nest far less than this; the cap keeps yajl's recursive tree free off a
 * deep-nesting bomb. */
#define SR_JSON_MAX_DEPTH 64

int sr_json_parse(const char *buf, size_t len, yajl_val *out, sr_error_t *err);

/* "parent.key" (or "key" at the top), in the arena. */
char *sr_json_path(struct sr_arena *a, const char *parent, const char *key);
char *sr_json_index_path(struct sr_arena *a, const char *parent, size_t index);

/* The value under key, NULL when absent or null. */
yajl_val sr_json_field(yajl_val obj, const char *key);

int sr_json_want_object(yajl_val v, const char *path, sr_error_t *err);

int sr_json_get_object(yajl_val obj, const char *path, const char *key, bool required,
                       yajl_val *out, sr_error_t *err);
int sr_json_get_array(yajl_val obj, const char *path, const char *key, bool required,
                      yajl_val *out, sr_error_t *err);
int sr_json_get_string(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                       bool required, char **out, sr_error_t *err);
int sr_json_get_bool(yajl_val obj, const char *path, const char *key, bool *out, bool *present,
                     sr_error_t *err);
int sr_json_get_i64(yajl_val obj, const char *path, const char *key, int64_t min, int64_t max,
                    bool required, int64_t *out, bool *present, sr_error_t *err);
int sr_json_get_u64(yajl_val obj, const char *path, const char *key, uint64_t max, bool required,
                    uint64_t *out, bool *present, sr_error_t *err);
/* A NULL-terminated array of strings (NULL and n = 0 when absent). */
int sr_json_get_strv(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                     bool required, char ***out, size_t *n, sr_error_t *err);
/* An object whose values are all strings, as parallel key and value arrays. */
int sr_json_get_string_map(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                           char ***keys, char ***values, size_t *n, sr_error_t *err);

/* An optional array of objects under key, walked in order: *items gets arena storage for its
 * *n elements of `size` bytes each (NULL and 0 when the array is absent), and each element,
 * checked to be an object, goes to item() with its path ("path.key[i]", "key[i]" at the top),
 * the storage and its index. */
typedef int (*sr_json_item_fn)(struct sr_arena *a, yajl_val v, const char *path, void *items,
                               size_t i, void *ctx, sr_error_t *err);
int sr_json_walk_objects(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                         size_t size, void **items, size_t *n, sr_json_item_fn item, void *ctx,
                         sr_error_t *err);
/* The same for an array whose elements item() checks itself (a name or an object, say). */
int sr_json_walk_array(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                       size_t size, void **items, size_t *n, sr_json_item_fn item, void *ctx,
                       sr_error_t *err);

/* Conversions of one value (used for array elements). */
int sr_json_as_i64(yajl_val v, const char *path, int64_t min, int64_t max, int64_t *out,
                   sr_error_t *err);
int sr_json_as_u64(yajl_val v, const char *path, uint64_t max, uint64_t *out, sr_error_t *err);

/* Output: a yajl generator whose status is sticky.  The first call that fails (a key that is
 * not a string, a value after the end of the document, a close without its open, nesting too
 * deep) is recorded and every later call does nothing; sr_json_gen_buf, where the text is
 * taken, fails with it, and also when the document is not complete.  So the writers need not
 * check each call, and a generator in a bad state never passes for a whole document. */
typedef struct sr_json_gen *sr_json_gen_t;
int sr_json_gen_new(sr_json_gen_t *g, bool pretty, sr_error_t *err);
void sr_json_gen_freep(sr_json_gen_t *g);
#define _cleanup_gen_ __attribute__((cleanup(sr_json_gen_freep)))
/* The document (owned by g): -1 with an error when a call failed or it is not complete. */
int sr_json_gen_buf(sr_json_gen_t g, const unsigned char **buf, size_t *len, sr_error_t *err);
void sr_json_map_open(sr_json_gen_t g);
void sr_json_map_close(sr_json_gen_t g);
void sr_json_array_open(sr_json_gen_t g);
void sr_json_array_close(sr_json_gen_t g);
void sr_json_put_null(sr_json_gen_t g);
void sr_json_put_bool(sr_json_gen_t g, bool value);
void sr_json_put_i64(sr_json_gen_t g, int64_t value);
/* A number given as text, or a JSON text the caller made, inserted verbatim. */
void sr_json_put_raw(sr_json_gen_t g, const char *text, size_t len);
void sr_json_put_string(sr_json_gen_t g, const char *s);
void sr_json_put_kv_string(sr_json_gen_t g, const char *key, const char *value);
void sr_json_put_kv_i64(sr_json_gen_t g, const char *key, int64_t value);
void sr_json_put_kv_u64(sr_json_gen_t g, const char *key, uint64_t value);
void sr_json_put_kv_bool(sr_json_gen_t g, const char *key, bool value);
void sr_json_put_key(sr_json_gen_t g, const char *key);
void sr_json_put_u64(sr_json_gen_t g, uint64_t value);

static inline void sr_json_yajl_tree_freep(yajl_val *v)
{
  if (*v)
    yajl_tree_free(*v);
}
#define _cleanup_yajl_ __attribute__((cleanup(sr_json_yajl_tree_freep)))

#endif
