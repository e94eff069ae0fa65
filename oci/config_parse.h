/* Internal to oci/: the parsers of the sections of config.json. */
#ifndef SEERUN_CONFIG_PARSE_H
#define SEERUN_CONFIG_PARSE_H

#include <stdio.h>

#include "config.h"
#include "json.h"

int sr_config_process_parse(struct sr_arena *a, yajl_val obj, const char *path,
                            struct sr_process *out, sr_error_t *err);
int sr_config_linux_parse(struct sr_arena *a, yajl_val obj, const char *path, struct sr_linux *out,
                          sr_error_t *err);
int sr_config_resources_parse(struct sr_arena *a, yajl_val obj, const char *path,
                              struct sr_resources *out, sr_error_t *err);
int sr_config_seccomp_parse(struct sr_arena *a, yajl_val obj, const char *path,
                            struct sr_seccomp *out, sr_error_t *err);
int sr_config_linux_parse_id_maps(struct sr_arena *a, yajl_val obj, const char *path,
                                  const char *key, struct sr_id_map **out, size_t *n,
                                  sr_error_t *err);

/* Returns -1 with err, which a parser of the document `what` made: err is SR_ERR_CONFIG
 * unless a call failed, and its text starts with what. */
int sr_config_parse_failed(sr_error_t *err, const char *what);

#define SR_OOM(err, path) sr_error_make((err), ENOMEM, "%s", (path))

/* "name[i]", the key of an array's element for sr_error_config_at: name is one of seerun's
 * own short names (or ""), so the buffer always holds it. */
#define SR_ELEM_KEY_MAX 64
static inline const char *sr_config_elem_key(char *buf, const char *name, size_t i)
{
  snprintf(buf, SR_ELEM_KEY_MAX, "%s[%zu]", name, i);
  return buf;
}

#endif
