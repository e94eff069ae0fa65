#include "build.h"

#include "overlay_layers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* mountinfo escapes space, tab, newline and backslash (and overlayfs also ',' and '=') as
 * \ooo. */
static char *unescape_octal(struct sr_arena *a, const char *s, size_t n)
{
  char *out = sr_arena_alloc(a, n + 1);
  if (out == NULL)
    return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
        s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out[o++] = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else
      out[o++] = s[i];
  }
  out[o] = '\0';
  return out;
}

/* path, or base/path for a relative one (what: "layer", "upperdir"); NULL with the error. */
static char *absolute(struct sr_overlay_layers *l, char *path, const char *base, const char *what,
                      sr_error_t *err)
{
  if (path[0] == '/')
    return path;
  if (base == NULL) {
    sr_error_make(err, 0, "overlay: %s `%s` is relative", what, path);
    return NULL;
  }
  char *abs = sr_arena_printf(&l->arena, "%s/%s", base, path);
  if (abs == NULL)
    sr_error_make(err, ENOMEM, "overlay layers");
  return abs;
}

static int add_layer(struct sr_overlay_layers *l, char *path, const char *base, sr_error_t *err)
{
  if (path[0] == '\0')
    return sr_error_make(err, 0, "overlay: an empty layer path");
  if ((path = absolute(l, path, base, "layer", err)) == NULL)
    return -1;
  if (l->n_lower == SR_OVERLAY_MAX_LAYERS)
    return sr_error_make(err, 0, "overlay: more than %d lower layers", SR_OVERLAY_MAX_LAYERS);
  if (l->lower == NULL) {
    l->lower = sr_arena_array(&l->arena, SR_OVERLAY_MAX_LAYERS, sizeof(char *));
    if (l->lower == NULL)
      return sr_error_make(err, ENOMEM, "overlay layers");
  }
  l->lower[l->n_lower++] = path;
  return 0;
}

/* "a:b\:c" -> "a", "b:c" (overlayfs's own escape for a colon in a name). */
static int add_lowerdir_list(struct sr_overlay_layers *l, const char *v, const char *base,
                             sr_error_t *err)
{
  size_t n = strlen(v);
  char *cur = sr_arena_alloc(&l->arena, n + 1);
  if (cur == NULL)
    return sr_error_make(err, ENOMEM, "overlay layers");
  size_t o = 0;
  for (size_t i = 0; i <= n; i++) {
    if (v[i] == '\\' && v[i + 1] != '\0') {
      cur[o++] = v[++i];
      continue;
    }
    if (v[i] == ':' || v[i] == '\0') {
      cur[o] = '\0';
      if (add_layer(l, cur, base, err) < 0)
        return -1;
      cur += o + 1;
      o = 0;
      continue;
    }
    cur[o++] = v[i];
  }
  return 0;
}

/* The options into out (zeroed by the caller); on failure the caller releases out. */
static int parse_superopts(const char *superopts, const char *base, struct sr_overlay_layers *out,
                           sr_error_t *err)
{
  const char *p = superopts;
  while (*p) {
    size_t len = strcspn(p, ",");
    char *opt = unescape_octal(&out->arena, p, len);
    if (opt == NULL)
      return sr_error_make(err, ENOMEM, "overlay layers");
    p += len + (p[len] == ',');
    /* value is in opt, in the arena: a layer path may stay pointing into it. */
    char *eq = strchr(opt, '='), *key = opt, *value = opt + strlen(opt);
    if (eq) {
      *eq = '\0';
      value = eq + 1;
    }
    int r = 0;
    if (strcmp(key, "lowerdir") == 0)
      r = add_lowerdir_list(out, value, base, err);
    else if (strcmp(key, "lowerdir+") == 0)
      r = add_layer(out, value, base, err);
    else if (strcmp(key, "datadir+") == 0)
      r = sr_error_make(err, 0, "overlay: data-only layers (datadir+) are not supported");
    else if (strcmp(key, "upperdir") == 0) {
      if ((out->upper = absolute(out, value, base, "upperdir", err)) == NULL)
        r = -1;
    } else if (strcmp(key, "metacopy") == 0)
      out->metacopy = strcmp(value, "on") == 0;
    else if (strcmp(key, "userxattr") == 0)
      out->userxattr = true;
    if (r < 0)
      return -1;
  }
  if (out->n_lower == 0)
    return sr_error_make(err, 0, "overlay: no lowerdir in its options");
  return 0;
}

int sr_overlay_layers_parse(const char *superopts, const char *base,
                            struct sr_overlay_layers *out, sr_error_t *err)
{
  *out = (struct sr_overlay_layers){0};
  if (parse_superopts(superopts, base, out, err) < 0) {
    sr_overlay_layers_release(out);
    return -1;
  }
  return 0;
}

void sr_overlay_layers_release(struct sr_overlay_layers *l)
{
  sr_arena_release(&l->arena);
  *l = (struct sr_overlay_layers){0};
}

const char *sr_overlay_layers_superopts(char *line, unsigned long long mnt_id)
{
  char *end;
  errno = 0;
  unsigned long long id = strtoull(line, &end, 10);
  if (errno || end == line || *end != ' ' || id != mnt_id)
    return NULL;
  line[strcspn(line, "\n")] = '\0';
  /* "... - fstype source superopts": the optional fields end at " - ". */
  char *fields = strstr(line, " - ");
  if (fields == NULL)
    return NULL;
  fields += 3;
  for (int skip = 0; skip < 2; skip++) {
    fields = strchr(fields, ' ');
    if (fields == NULL)
      return NULL;
    fields++;
  }
  return fields;
}
