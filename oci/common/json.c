#include "build.h"

#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What yajl would let through but JSON does not allow, checked before yajl builds a tree:
 * nesting deeper than SR_JSON_MAX_DEPTH (a bomb that overflows the stack in yajl_tree_free),
 * comments (yajl_tree_parse accepts them; runc does not), and \u0000 in a string (yajl's tree
 * keeps C strings, so "/bin/sh\u0000x" would silently become "/bin/sh"). */
/* The value of 4 hex digits at p, or -1. */
static long hex4(const char *p, size_t avail)
{
  if (avail < 4)
    return -1;
  long v = 0;
  for (int k = 0; k < 4; k++) {
    char h = p[k];
    int d = h >= '0' && h <= '9' ? h - '0'
            : h >= 'a' && h <= 'f' ? h - 'a' + 10
            : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                   : -1;
    if (d < 0)
      return -1;
    v = v * 16 + d;
  }
  return v;
}

static int check_text(const char *buf, size_t len, sr_error_t *err)
{
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < len; i++) {
    char c = buf[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
        if (c == 'u' && len - i > 4 && memcmp(buf + i + 1, "0000", 4) == 0)
          return sr_error_make(err, 0, "invalid JSON: a string contains \\u0000");
        /* A lone UTF-16 surrogate names no character: yajl would turn it into other bytes
         * than the text says (and Go's encoding/json into U+FFFD). */
        long u = c == 'u' ? hex4(buf + i + 1, len - i - 1) : -1;
        if (u >= 0xDC00 && u <= 0xDFFF)
          return sr_error_make(err, 0, "invalid JSON: a string contains a lone UTF-16 "
                                       "surrogate \\u%04lx", (unsigned long)u);
        if (u >= 0xD800 && u <= 0xDBFF) {
          long lo = len - i > 6 && buf[i + 5] == '\\' && buf[i + 6] == 'u'
                        ? hex4(buf + i + 7, len - i - 7)
                        : -1;
          if (lo < 0xDC00 || lo > 0xDFFF)
            return sr_error_make(err, 0, "invalid JSON: a string contains a lone UTF-16 "
                                         "surrogate \\u%04lx", (unsigned long)u);
          i += 10; /* the pair, checked: "uXXXX\\uXXXX" */
        }
      } else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '/')
      return sr_error_make(err, 0, "invalid JSON: comments are not allowed");
    if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > SR_JSON_MAX_DEPTH)
        return sr_error_make(err, 0, "invalid JSON: nested more than %d levels deep",
                             SR_JSON_MAX_DEPTH);
    } else if (c == '}' || c == ']')
      depth--;
  }
  return 0;
}

static int cmp_key(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A key given twice is refused: which of the two counts is up to the reader (yajl's tree and
 * our lookup take the first, Go's encoding/json the last), so a config checked by one tool
 * could run as another.  path names where, for the message ("" at the top). */
static int check_unique_keys(yajl_val v, char *path, size_t size, sr_error_t *err)
{
  size_t plen = strlen(path);
  if (YAJL_IS_ARRAY(v)) {
    for (size_t i = 0; i < v->u.array.len; i++) {
      snprintf(path + plen, size - plen, "[%zu]", i);
      if (check_unique_keys(v->u.array.values[i], path, size, err) < 0)
        return -1;
    }
    path[plen] = '\0';
    return 0;
  }
  if (!YAJL_IS_OBJECT(v))
    return 0;
  size_t n = v->u.object.len;
  if (n > 1) {
    const char **keys = malloc(n * sizeof(*keys));
    if (keys == NULL)
      return sr_error_make(err, ENOMEM, "parse JSON");
    memcpy(keys, v->u.object.keys, n * sizeof(*keys));
    qsort(keys, n, sizeof(*keys), cmp_key);
    for (size_t i = 1; i < n; i++)
      if (strcmp(keys[i - 1], keys[i]) == 0) {
        int r = sr_error_make(err, 0, "invalid JSON: %s%sduplicate key \"%s\"", path,
                              plen ? ": " : "", keys[i]);
        free(keys);
        return r;
      }
    free(keys);
  }
  for (size_t i = 0; i < n; i++) {
    snprintf(path + plen, size - plen, "%s%s", plen ? "." : "", v->u.object.keys[i]);
    if (check_unique_keys(v->u.object.values[i], path, size, err) < 0)
      return -1;
  }
  path[plen] = '\0';
  return 0;
}

int sr_json_parse(const char *buf, size_t len, yajl_val *out, sr_error_t *err)
{
  if (memchr(buf, '\0', len) != NULL)
    return sr_error_make(err, 0, "invalid JSON: contains a NUL byte");
  if (check_text(buf, len, err) < 0)
    return -1;
  char *copy = strndup(buf, len);
  if (copy == NULL)
    return sr_error_make(err, ENOMEM, "parse JSON");
  char errbuf[256] = "";
  *out = yajl_tree_parse(copy, errbuf, sizeof(errbuf));
  free(copy);
  if (*out == NULL) {
    /* yajl's message spans lines (it quotes the input); keep the first line. */
    char *nl = strchr(errbuf, '\n');
    if (nl)
      *nl = '\0';
    return sr_error_make(err, 0, "invalid JSON: %s", errbuf[0] ? errbuf : "parse error");
  }
  char path[256] = "";
  if (check_unique_keys(*out, path, sizeof(path), err) < 0) {
    yajl_tree_free(*out);
    *out = NULL;
    return -1;
  }
  return 0;
}

char *sr_json_path(struct sr_arena *a, const char *parent, const char *key)
{
  if (parent == NULL || parent[0] == '\0')
    return sr_arena_strdup(a, key);
  return sr_arena_printf(a, "%s.%s", parent, key);
}

char *sr_json_index_path(struct sr_arena *a, const char *parent, size_t index)
{
  return sr_arena_printf(a, "%s[%zu]", parent, index);
}

yajl_val sr_json_field(yajl_val obj, const char *key)
{
  if (obj == NULL || !YAJL_IS_OBJECT(obj))
    return NULL;
  for (size_t i = 0; i < obj->u.object.len; i++) {
    if (strcmp(obj->u.object.keys[i], key) == 0) {
      yajl_val v = obj->u.object.values[i];
      return (v == NULL || YAJL_IS_NULL(v)) ? NULL : v;
    }
  }
  return NULL;
}

/* Builds "path.key" for an error message without needing an arena. */
#define FIELD_FMT "%s%s%s"
#define FIELD_ARGS(path, key) (path), ((path) && (path)[0] ? "." : ""), (key)

static int missing(const char *path, const char *key, sr_error_t *err)
{
  return sr_error_make(err, 0, FIELD_FMT ": required", FIELD_ARGS(path, key));
}

int sr_json_want_object(yajl_val v, const char *path, sr_error_t *err)
{
  if (v == NULL || !YAJL_IS_OBJECT(v))
    return sr_error_make(err, 0, "%s: must be an object", path && path[0] ? path : "document");
  return 0;
}

int sr_json_get_object(yajl_val obj, const char *path, const char *key, bool required,
                       yajl_val *out, sr_error_t *err)
{
  yajl_val v = sr_json_field(obj, key);
  *out = NULL;
  if (v == NULL)
    return required ? missing(path, key, err) : 0;
  if (!YAJL_IS_OBJECT(v))
    return sr_error_make(err, 0, FIELD_FMT ": must be an object", FIELD_ARGS(path, key));
  *out = v;
  return 0;
}

int sr_json_get_array(yajl_val obj, const char *path, const char *key, bool required,
                      yajl_val *out, sr_error_t *err)
{
  yajl_val v = sr_json_field(obj, key);
  *out = NULL;
  if (v == NULL)
    return required ? missing(path, key, err) : 0;
  if (!YAJL_IS_ARRAY(v))
    return sr_error_make(err, 0, FIELD_FMT ": must be an array", FIELD_ARGS(path, key));
  *out = v;
  return 0;
}

int sr_json_as_string(struct sr_arena *a, yajl_val v, const char *path, char **out,
                      sr_error_t *err)
{
  if (v == NULL || !YAJL_IS_STRING(v))
    return sr_error_make(err, 0, "%s: must be a string", path);
  *out = sr_arena_strdup(a, v->u.string);
  if (*out == NULL)
    return sr_error_make(err, ENOMEM, "%s", path);
  return 0;
}

int sr_json_get_string(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                       bool required, char **out, sr_error_t *err)
{
  yajl_val v = sr_json_field(obj, key);
  *out = NULL;
  if (v == NULL)
    return required ? missing(path, key, err) : 0;
  if (!YAJL_IS_STRING(v))
    return sr_error_make(err, 0, FIELD_FMT ": must be a string", FIELD_ARGS(path, key));
  *out = sr_arena_strdup(a, v->u.string);
  if (*out == NULL)
    return sr_error_make(err, ENOMEM, FIELD_FMT, FIELD_ARGS(path, key));
  return 0;
}

int sr_json_get_bool(yajl_val obj, const char *path, const char *key, bool *out, bool *present,
                     sr_error_t *err)
{
  yajl_val v = sr_json_field(obj, key);
  if (present)
    *present = v != NULL;
  if (v == NULL)
    return 0;
  if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
    return sr_error_make(err, 0, FIELD_FMT ": must be a boolean", FIELD_ARGS(path, key));
  *out = YAJL_IS_TRUE(v);
  return 0;
}

/* Integers are read from yajl's raw text, so that values beyond INT64_MAX (uint64 fields) and
 * fractions ("1.5" where an integer is required) are told apart exactly. */
static int raw_integer(yajl_val v, const char **raw)
{
  if (v == NULL || !YAJL_IS_NUMBER(v) || v->u.number.r == NULL)
    return -1;
  const char *r = v->u.number.r;
  const char *p = (*r == '-') ? r + 1 : r;
  if (*p == '\0')
    return -1;
  for (; *p; p++)
    if (*p < '0' || *p > '9')
      return -1;
  *raw = r;
  return 0;
}

int sr_json_as_i64(yajl_val v, const char *path, int64_t min, int64_t max, int64_t *out,
                   sr_error_t *err)
{
  const char *raw;
  if (raw_integer(v, &raw) < 0)
    return sr_error_make(err, 0, "%s: must be an integer", path);
  errno = 0;
  char *end;
  long long n = strtoll(raw, &end, 10);
  if (errno == ERANGE || *end != '\0' || n < min || n > max)
    return sr_error_make(err, 0, "%s: %s is out of range [%" PRId64 ", %" PRId64 "]", path, raw,
                         min, max);
  *out = n;
  return 0;
}

int sr_json_as_u64(yajl_val v, const char *path, uint64_t max, uint64_t *out, sr_error_t *err)
{
  const char *raw;
  if (raw_integer(v, &raw) < 0)
    return sr_error_make(err, 0, "%s: must be an integer", path);
  if (raw[0] == '-')
    return sr_error_make(err, 0, "%s: %s is out of range [0, %" PRIu64 "]", path, raw, max);
  errno = 0;
  char *end;
  unsigned long long n = strtoull(raw, &end, 10);
  if (errno == ERANGE || *end != '\0' || n > max)
    return sr_error_make(err, 0, "%s: %s is out of range [0, %" PRIu64 "]", path, raw, max);
  *out = n;
  return 0;
}

int sr_json_get_i64(yajl_val obj, const char *path, const char *key, int64_t min, int64_t max,
                    bool required, int64_t *out, bool *present, sr_error_t *err)
{
  yajl_val v = sr_json_field(obj, key);
  if (present)
    *present = v != NULL;
  if (v == NULL)
    return required ? missing(path, key, err) : 0;
  char full[512];
  snprintf(full, sizeof(full), FIELD_FMT, FIELD_ARGS(path, key));
  return sr_json_as_i64(v, full, min, max, out, err);
}

int sr_json_get_u64(yajl_val obj, const char *path, const char *key, uint64_t max, bool required,
                    uint64_t *out, bool *present, sr_error_t *err)
{
  yajl_val v = sr_json_field(obj, key);
  if (present)
    *present = v != NULL;
  if (v == NULL)
    return required ? missing(path, key, err) : 0;
  char full[512];
  snprintf(full, sizeof(full), FIELD_FMT, FIELD_ARGS(path, key));
  return sr_json_as_u64(v, full, max, out, err);
}

int sr_json_get_strv(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                     bool required, char ***out, size_t *n, sr_error_t *err)
{
  yajl_val arr;
  *out = NULL;
  *n = 0;
  if (sr_json_get_array(obj, path, key, required, &arr, err) < 0)
    return -1;
  if (arr == NULL)
    return 0;
  size_t len = arr->u.array.len;
  char **v = sr_arena_array(a, len + 1, sizeof(char *));
  if (v == NULL)
    return sr_error_make(err, ENOMEM, FIELD_FMT, FIELD_ARGS(path, key));
  for (size_t i = 0; i < len; i++) {
    yajl_val e = arr->u.array.values[i];
    if (e == NULL || !YAJL_IS_STRING(e))
      return sr_error_make(err, 0, FIELD_FMT "[%zu]: must be a string", FIELD_ARGS(path, key), i);
    v[i] = sr_arena_strdup(a, e->u.string);
    if (v[i] == NULL)
      return sr_error_make(err, ENOMEM, FIELD_FMT, FIELD_ARGS(path, key));
  }
  *out = v;
  *n = len;
  return 0;
}

int sr_json_get_string_map(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                           char ***keys, char ***values, size_t *n, sr_error_t *err)
{
  yajl_val m;
  *keys = *values = NULL;
  *n = 0;
  if (sr_json_get_object(obj, path, key, false, &m, err) < 0)
    return -1;
  if (m == NULL)
    return 0;
  size_t len = m->u.object.len;
  char **k = sr_arena_array(a, len + 1, sizeof(char *));
  char **v = sr_arena_array(a, len + 1, sizeof(char *));
  if (k == NULL || v == NULL)
    return sr_error_make(err, ENOMEM, FIELD_FMT, FIELD_ARGS(path, key));
  for (size_t i = 0; i < len; i++) {
    yajl_val e = m->u.object.values[i];
    if (e == NULL || !YAJL_IS_STRING(e))
      return sr_error_make(err, 0, FIELD_FMT ".%s: must be a string", FIELD_ARGS(path, key),
                           m->u.object.keys[i]);
    k[i] = sr_arena_strdup(a, m->u.object.keys[i]);
    v[i] = sr_arena_strdup(a, e->u.string);
    if (k[i] == NULL || v[i] == NULL)
      return sr_error_make(err, ENOMEM, FIELD_FMT, FIELD_ARGS(path, key));
  }
  *keys = k;
  *values = v;
  *n = len;
  return 0;
}

int sr_json_gen_new(yajl_gen *g, bool pretty, sr_error_t *err)
{
  *g = yajl_gen_alloc(NULL);
  if (*g == NULL)
    return sr_error_make(err, ENOMEM, "allocate JSON generator");
  yajl_gen_config(*g, yajl_gen_beautify, pretty ? 1 : 0);
  if (pretty)
    yajl_gen_config(*g, yajl_gen_indent_string, "  ");
  /* "/" stays as is: paths are common and engines compare them as text. */
  yajl_gen_config(*g, yajl_gen_validate_utf8, 0);
  return 0;
}

void sr_json_gen_freep(yajl_gen *g)
{
  if (*g)
    yajl_gen_free(*g);
}

void sr_json_put_string(yajl_gen g, const char *s)
{
  yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

void sr_json_put_key(yajl_gen g, const char *key)
{
  sr_json_put_string(g, key);
}

void sr_json_put_kv_string(yajl_gen g, const char *key, const char *value)
{
  sr_json_put_string(g, key);
  sr_json_put_string(g, value ? value : "");
}

void sr_json_put_kv_i64(yajl_gen g, const char *key, int64_t value)
{
  sr_json_put_string(g, key);
  yajl_gen_integer(g, value);
}

void sr_json_put_u64(yajl_gen g, uint64_t value)
{
  char buf[32];
  int n = snprintf(buf, sizeof(buf), "%" PRIu64, value);
  yajl_gen_number(g, buf, (size_t)n);
}

void sr_json_put_kv_u64(yajl_gen g, const char *key, uint64_t value)
{
  sr_json_put_string(g, key);
  sr_json_put_u64(g, value);
}

void sr_json_put_kv_bool(yajl_gen g, const char *key, bool value)
{
  sr_json_put_string(g, key);
  yajl_gen_bool(g, value);
}
