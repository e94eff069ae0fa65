#include "build.h"

#include "config.h"
#include "config_parse.h"

#include <errno.h>

/* The linux.resources document `update --resources FILE|-` takes. */
int sr_config_update_parse_resources(const char *buf, size_t len, const char *what,
                                     struct sr_arena *a, struct sr_resources **out, sr_error_t *err)
{
  _cleanup_yajl_ yajl_val root = NULL;
  if (sr_json_parse(buf, len, &root, err) < 0 || sr_json_want_object(root, "", err) < 0)
    return sr_config_parse_failed(err, what);
  struct sr_resources *r = sr_arena_alloc(a, sizeof(*r));
  if (r == NULL)
    return sr_error_make(err, ENOMEM, "%s", what);
  if (sr_config_resources_parse(a, root, "", r, err) < 0)
    return sr_config_parse_failed(err, what);
  *out = r;
  return 0;
}
