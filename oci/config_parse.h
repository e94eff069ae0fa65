/* Internal to oci/: the parsers of the sections of config.json. */
#ifndef SEERUN_CONFIG_PARSE_H
#define SEERUN_CONFIG_PARSE_H

#include "config.h"
#include "json.h"

int sr_parse_process(struct sr_arena *a, yajl_val obj, const char *path, struct sr_process *out,
                     sr_error_t *err);
int sr_parse_linux(struct sr_arena *a, yajl_val obj, const char *path, struct sr_linux *out,
                   sr_error_t *err);
int sr_parse_resources(struct sr_arena *a, yajl_val obj, const char *path,
                       struct sr_resources *out, sr_error_t *err);
int sr_parse_seccomp(struct sr_arena *a, yajl_val obj, const char *path, struct sr_seccomp *out,
                     sr_error_t *err);
int sr_parse_id_maps(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                     struct sr_id_map **out, size_t *n, sr_error_t *err);

#define SR_OOM(err, path) sr_error_make((err), ENOMEM, "%s", (path))

#endif
