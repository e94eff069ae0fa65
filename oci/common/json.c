#include "build.h"

#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
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
          return sr_error_config(err, NULL, NULL, "invalid JSON: a string contains \\u0000");
        /* A lone UTF-16 surrogate names no character: yajl would turn it into other bytes
         * than the text says (and Go's encoding/json into U+FFFD). */
        long u = c == 'u' ? hex4(buf + i + 1, len - i - 1) : -1;
        if (u >= 0xDC00 && u <= 0xDFFF)
          return sr_error_config(err, NULL, NULL, "invalid JSON: a string contains a lone "
                                       "UTF-16 surrogate \\u%04lx", (unsigned long)u);
        if (u >= 0xD800 && u <= 0xDBFF) {
          long lo = len - i > 6 && buf[i + 5] == '\\' && buf[i + 6] == 'u'
                        ? hex4(buf + i + 7, len - i - 7)
                        : -1;
          if (lo < 0xDC00 || lo > 0xDFFF)
            return sr_error_config(err, NULL, NULL, "invalid JSON: a string contains a lone "
                                         "UTF-16 surrogate \\u%04lx", (unsigned long)u);
          i += 10; /* the pair, checked: "uXXXX\\uXXXX" */
        }
      } else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '/')
      return sr_error_config(err, NULL, NULL, "invalid JSON: comments are not allowed");
    if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > SR_JSON_MAX_DEPTH)
        return sr_error_config(err, NULL, NULL, "invalid JSON: nested more than %d levels deep",
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
/* Where check_unique_keys is: a chain on the stack, rendered only for the error (the path of
 * every node printed on the way cost more than parsing the document). */
struct key_frame {
  const struct key_frame *up;
  const char *key; /* NULL: an array element */
  size_t index;
};

static void render_path(const struct key_frame *f, char *buf, size_t size)
{
  const struct key_frame *chain[64];
  size_t n = 0;
  for (; f != NULL && n < sizeof(chain) / sizeof(chain[0]); f = f->up)
    chain[n++] = f;
  size_t len = 0;
  buf[0] = '\0';
  while (n-- > 0 && len < size) {
    int w = chain[n]->key ? snprintf(buf + len, size - len, "%s%s", len ? "." : "", chain[n]->key)
                          : snprintf(buf + len, size - len, "[%zu]", chain[n]->index);
    if (w < 0)
      break;
    len += (size_t)w;
  }
}

static int check_unique_keys(yajl_val v, const struct key_frame *at, sr_error_t *err)
{
  if (YAJL_IS_ARRAY(v)) {
    for (size_t i = 0; i < v->u.array.len; i++) {
      struct key_frame f = {at, NULL, i};
      if (check_unique_keys(v->u.array.values[i], &f, err) < 0)
        return -1;
    }
    return 0;
  }
  if (!YAJL_IS_OBJECT(v))
    return 0;
  size_t n = v->u.object.len;
  if (n > 1) {
    const char *small[16];
    const char **keys = n <= 16 ? small : malloc(n * sizeof(*keys));
    if (keys == NULL)
      return sr_error_make(err, ENOMEM, "parse JSON");
    memcpy(keys, v->u.object.keys, n * sizeof(*keys));
    qsort(keys, n, sizeof(*keys), cmp_key);
    const char *dup = NULL;
    for (size_t i = 1; i < n && dup == NULL; i++)
      if (strcmp(keys[i - 1], keys[i]) == 0)
        dup = keys[i];
    if (keys != small)
      free(keys);
    if (dup != NULL) {
      char path[256];
      render_path(at, path, sizeof(path));
      return sr_error_config(err, path, dup, "invalid JSON: %s%sduplicate key \"%s\"", path,
                             path[0] ? ": " : "", dup);
    }
  }
  for (size_t i = 0; i < n; i++) {
    struct key_frame f = {at, v->u.object.keys[i], 0};
    if (check_unique_keys(v->u.object.values[i], &f, err) < 0)
      return -1;
  }
  return 0;
}

int sr_json_parse(const char *buf, size_t len, yajl_val *out, sr_error_t *err)
{
  if (memchr(buf, '\0', len) != NULL)
    return sr_error_config(err, NULL, NULL, "invalid JSON: contains a NUL byte");
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
    return sr_error_config(err, NULL, NULL, "invalid JSON: %s", errbuf[0] ? errbuf : "parse error");
  }
  if (check_unique_keys(*out, NULL, err) < 0) {
    yajl_tree_free(*out);
    *out = NULL;
    return -1;
  }
  return 0;
}

/* The field paths are made for every field parsed, most never shown: copied, not printed
 * (vsnprintf was a fifth of a `run`'s instructions). */
char *sr_json_path(struct sr_arena *a, const char *parent, const char *key)
{
  if (parent == NULL || parent[0] == '\0')
    return sr_arena_strdup(a, key);
  size_t pl = strlen(parent), kl = strlen(key);
  char *s = sr_arena_alloc(a, pl + 1 + kl + 1);
  if (s == NULL)
    return NULL;
  memcpy(s, parent, pl);
  s[pl] = '.';
  memcpy(s + pl + 1, key, kl + 1);
  return s;
}

char *sr_json_index_path(struct sr_arena *a, const char *parent, size_t index)
{
  char digits[24];
  size_t nd = 0;
  do {
    digits[nd++] = (char)('0' + index % 10);
    index /= 10;
  } while (index > 0);
  size_t pl = parent ? strlen(parent) : 0;
  char *s = sr_arena_alloc(a, pl + nd + 3);
  if (s == NULL)
    return NULL;
  if (pl)
    memcpy(s, parent, pl);
  char *p = s + pl;
  *p++ = '[';
  while (nd > 0)
    *p++ = digits[--nd];
  *p++ = ']';
  *p = '\0';
  return s;
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
  return sr_error_config_at(err, path, key, "required");
}

/* path.key + sub ("[3]", ".name"): the field of an element, and its error. */
__attribute__((format(printf, 5, 6))) static int element_error(sr_error_t *err, const char *path,
                                                               const char *key, const char *what,
                                                               const char *sub, ...)
{
  char *s = NULL, *field = NULL;
  va_list ap;
  va_start(ap, sub);
  int r = vasprintf(&s, sub, ap);
  va_end(ap);
  if (r < 0 || asprintf(&field, FIELD_FMT "%s", FIELD_ARGS(path, key), s) < 0)
    field = NULL;
  sr_error_config_at(err, field, NULL, "%s", what);
  free(field);
  free(r < 0 ? NULL : s);
  return -1;
}

int sr_json_want_object(yajl_val v, const char *path, sr_error_t *err)
{
  if (v == NULL || !YAJL_IS_OBJECT(v)) {
    if (path == NULL || path[0] == '\0')
      return sr_error_config(err, NULL, NULL, "document: must be an object");
    return sr_error_config_at(err, path, NULL, "must be an object");
  }
  return 0;
}

/* The object or array under key (type), NULL when absent. */
static int get_typed(yajl_val obj, const char *path, const char *key, bool required,
                     yajl_type type, const char *what, yajl_val *out, sr_error_t *err)
{
  yajl_val v = sr_json_field(obj, key);
  *out = NULL;
  if (v == NULL)
    return required ? missing(path, key, err) : 0;
  if (v->type != type)
    return sr_error_config_at(err, path, key, "must be %s", what);
  *out = v;
  return 0;
}

int sr_json_get_object(yajl_val obj, const char *path, const char *key, bool required,
                       yajl_val *out, sr_error_t *err)
{
  return get_typed(obj, path, key, required, yajl_t_object, "an object", out, err);
}

int sr_json_get_array(yajl_val obj, const char *path, const char *key, bool required,
                      yajl_val *out, sr_error_t *err)
{
  return get_typed(obj, path, key, required, yajl_t_array, "an array", out, err);
}

static int walk(struct sr_arena *a, yajl_val obj, const char *path, const char *key, size_t size,
                bool objects, void **items, size_t *n, sr_json_item_fn item, void *ctx,
                sr_error_t *err)
{
  yajl_val arr;
  *items = NULL;
  *n = 0;
  if (sr_json_get_array(obj, path, key, false, &arr, err) < 0)
    return -1;
  if (arr == NULL)
    return 0;
  size_t len = arr->u.array.len;
  char *kp = sr_json_path(a, path, key);
  void *storage = sr_arena_array(a, len ? len : 1, size);
  if (kp == NULL || storage == NULL)
    return sr_error_make(err, ENOMEM, "%s", path);
  for (size_t i = 0; i < len; i++) {
    yajl_val v = arr->u.array.values[i];
    char *ip = sr_json_index_path(a, kp, i);
    if (ip == NULL)
      return sr_error_make(err, ENOMEM, "%s", path);
    if ((objects && sr_json_want_object(v, ip, err) < 0) ||
        item(a, v, ip, storage, i, ctx, err) < 0)
      return -1;
  }
  *items = storage;
  *n = len;
  return 0;
}

int sr_json_walk_objects(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                         size_t size, void **items, size_t *n, sr_json_item_fn item, void *ctx,
                         sr_error_t *err)
{
  return walk(a, obj, path, key, size, true, items, n, item, ctx, err);
}

int sr_json_walk_array(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                       size_t size, void **items, size_t *n, sr_json_item_fn item, void *ctx,
                       sr_error_t *err)
{
  return walk(a, obj, path, key, size, false, items, n, item, ctx, err);
}

int sr_json_get_string(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                       bool required, char **out, sr_error_t *err)
{
  yajl_val v = sr_json_field(obj, key);
  *out = NULL;
  if (v == NULL)
    return required ? missing(path, key, err) : 0;
  if (!YAJL_IS_STRING(v))
    return sr_error_config_at(err, path, key, "must be a string");
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
    return sr_error_config_at(err, path, key, "must be a boolean");
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
    return sr_error_config_at(err, path, NULL, "must be an integer");
  errno = 0;
  char *end;
  long long n = strtoll(raw, &end, 10);
  if (errno == ERANGE || *end != '\0' || n < min || n > max)
    return sr_error_config_at(err, path, NULL, "%s is out of range [%" PRId64 ", %" PRId64 "]", raw,
                              min, max);
  *out = n;
  return 0;
}

int sr_json_as_u64(yajl_val v, const char *path, uint64_t max, uint64_t *out, sr_error_t *err)
{
  const char *raw;
  if (raw_integer(v, &raw) < 0)
    return sr_error_config_at(err, path, NULL, "must be an integer");
  if (raw[0] == '-')
    return sr_error_config_at(err, path, NULL, "%s is out of range [0, %" PRIu64 "]", raw, max);
  errno = 0;
  char *end;
  unsigned long long n = strtoull(raw, &end, 10);
  if (errno == ERANGE || *end != '\0' || n > max)
    return sr_error_config_at(err, path, NULL, "%s is out of range [0, %" PRIu64 "]", raw, max);
  *out = n;
  return 0;
}

/* The number under key for the getters below: 1 with it and its full path, 0 when absent and
 * not required, -1 with err when required. */
static int number_field(yajl_val obj, const char *path, const char *key, bool required,
                        bool *present, yajl_val *v, char full[static 512], sr_error_t *err)
{
  *v = sr_json_field(obj, key);
  if (present)
    *present = *v != NULL;
  if (*v == NULL)
    return required ? missing(path, key, err) : 0;
  snprintf(full, 512, FIELD_FMT, FIELD_ARGS(path, key));
  return 1;
}

int sr_json_get_i64(yajl_val obj, const char *path, const char *key, int64_t min, int64_t max,
                    bool required, int64_t *out, bool *present, sr_error_t *err)
{
  yajl_val v;
  char full[512];
  int r = number_field(obj, path, key, required, present, &v, full, err);
  return r <= 0 ? r : sr_json_as_i64(v, full, min, max, out, err);
}

int sr_json_get_u64(yajl_val obj, const char *path, const char *key, uint64_t max, bool required,
                    uint64_t *out, bool *present, sr_error_t *err)
{
  yajl_val v;
  char full[512];
  int r = number_field(obj, path, key, required, present, &v, full, err);
  return r <= 0 ? r : sr_json_as_u64(v, full, max, out, err);
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
      return element_error(err, path, key, "must be a string", "[%zu]", i);
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
      return element_error(err, path, key, "must be a string", ".%s", m->u.object.keys[i]);
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

struct sr_json_gen {
  yajl_gen g;
  unsigned depth;
  char open[YAJL_MAX_DEPTH]; /* '{' or '[' for each level */
  bool started;
  /* The first failure: the call and why; NULL while every call succeeded. */
  const char *failed;
  const char *why;
};

int sr_json_gen_new(sr_json_gen_t *out, bool pretty, sr_error_t *err)
{
  *out = NULL;
  sr_json_gen_t w = calloc(1, sizeof(*w));
  if (w == NULL)
    return sr_error_make(err, ENOMEM, "allocate JSON generator");
  w->g = yajl_gen_alloc(NULL);
  if (w->g == NULL) {
    free(w);
    return sr_error_make(err, ENOMEM, "allocate JSON generator");
  }
  yajl_gen_config(w->g, yajl_gen_beautify, pretty ? 1 : 0);
  if (pretty)
    yajl_gen_config(w->g, yajl_gen_indent_string, "  ");
  /* "/" stays as is: paths are common and engines compare them as text. */
  yajl_gen_config(w->g, yajl_gen_validate_utf8, 0);
  *out = w;
  return 0;
}

void sr_json_gen_freep(sr_json_gen_t *g)
{
  if (*g == NULL)
    return;
  yajl_gen_free((*g)->g);
  free(*g);
  *g = NULL;
}

static const char *status_text(yajl_gen_status s)
{
  switch (s) {
  case yajl_gen_keys_must_be_strings:
    return "a key must be a string";
  case yajl_max_depth_exceeded:
    return "nested too deep";
  case yajl_gen_in_error_state:
    return "the generator is in an error state";
  case yajl_gen_generation_complete:
    return "the document is already complete";
  case yajl_gen_invalid_number:
    return "invalid number";
  case yajl_gen_invalid_string:
    return "invalid string";
  default:
    return "failed";
  }
}

/* Records the first failure. */
static void fail(sr_json_gen_t w, const char *call, const char *why)
{
  if (w->failed == NULL) {
    w->failed = call;
    w->why = why;
  }
}

static bool usable(sr_json_gen_t w)
{
  return w->failed == NULL;
}

static void check(sr_json_gen_t w, const char *call, yajl_gen_status s)
{
  if (s != yajl_gen_status_ok)
    fail(w, call, status_text(s));
  else
    w->started = true;
}

/* yajl neither checks that a close matches its open nor survives one too many (its depth
 * wraps around), nor nesting past YAJL_MAX_DEPTH: the levels are counted here. */
static void open_level(sr_json_gen_t w, char kind)
{
  const char *call = kind == '{' ? "map open" : "array open";
  if (!usable(w))
    return;
  if (w->depth + 1 >= YAJL_MAX_DEPTH) {
    fail(w, call, status_text(yajl_max_depth_exceeded));
    return;
  }
  yajl_gen_status s = kind == '{' ? yajl_gen_map_open(w->g) : yajl_gen_array_open(w->g);
  check(w, call, s);
  if (s == yajl_gen_status_ok)
    w->open[w->depth++] = kind;
}

static void close_level(sr_json_gen_t w, char kind)
{
  const char *call = kind == '{' ? "map close" : "array close";
  if (!usable(w))
    return;
  if (w->depth == 0 || w->open[w->depth - 1] != kind) {
    fail(w, call, w->depth == 0 ? "nothing is open" : "it closes another kind of value");
    return;
  }
  check(w, call, kind == '{' ? yajl_gen_map_close(w->g) : yajl_gen_array_close(w->g));
  if (usable(w))
    w->depth--;
}

void sr_json_map_open(sr_json_gen_t g)
{
  open_level(g, '{');
}

void sr_json_map_close(sr_json_gen_t g)
{
  close_level(g, '{');
}

void sr_json_array_open(sr_json_gen_t g)
{
  open_level(g, '[');
}

void sr_json_array_close(sr_json_gen_t g)
{
  close_level(g, '[');
}

int sr_json_gen_buf(sr_json_gen_t g, const unsigned char **buf, size_t *len, sr_error_t *err)
{
  if (g->failed)
    return sr_error_make(err, 0, "generate JSON: %s: %s", g->failed, g->why);
  if (!g->started)
    return sr_error_make(err, 0, "generate JSON: the document is empty");
  if (g->depth > 0)
    return sr_error_make(err, 0, "generate JSON: the document is not complete (%u %s open)",
                         g->depth, g->depth == 1 ? "value is" : "values are");
  if (yajl_gen_get_buf(g->g, buf, len) != yajl_gen_status_ok)
    return sr_error_make(err, 0, "generate JSON: no buffer");
  return 0;
}

void sr_json_put_null(sr_json_gen_t g)
{
  if (usable(g))
    check(g, "null", yajl_gen_null(g->g));
}

void sr_json_put_bool(sr_json_gen_t g, bool value)
{
  if (usable(g))
    check(g, "boolean", yajl_gen_bool(g->g, value));
}

void sr_json_put_i64(sr_json_gen_t g, int64_t value)
{
  if (usable(g))
    check(g, "integer", yajl_gen_integer(g->g, value));
}

void sr_json_put_raw(sr_json_gen_t g, const char *text, size_t len)
{
  if (usable(g))
    check(g, "number", yajl_gen_number(g->g, text, len));
}

void sr_json_put_string(sr_json_gen_t g, const char *s)
{
  if (usable(g))
    check(g, "string", yajl_gen_string(g->g, (const unsigned char *)s, strlen(s)));
}

void sr_json_put_key(sr_json_gen_t g, const char *key)
{
  sr_json_put_string(g, key);
}

void sr_json_put_kv_string(sr_json_gen_t g, const char *key, const char *value)
{
  sr_json_put_string(g, key);
  sr_json_put_string(g, value ? value : "");
}

void sr_json_put_kv_i64(sr_json_gen_t g, const char *key, int64_t value)
{
  sr_json_put_string(g, key);
  sr_json_put_i64(g, value);
}

void sr_json_put_u64(sr_json_gen_t g, uint64_t value)
{
  char buf[32];
  int n = snprintf(buf, sizeof(buf), "%" PRIu64, value);
  sr_json_put_raw(g, buf, (size_t)n);
}

void sr_json_put_kv_u64(sr_json_gen_t g, const char *key, uint64_t value)
{
  sr_json_put_string(g, key);
  sr_json_put_u64(g, value);
}

void sr_json_put_kv_bool(sr_json_gen_t g, const char *key, bool value)
{
  sr_json_put_string(g, key);
  sr_json_put_bool(g, value);
}
